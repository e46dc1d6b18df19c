"""Every name a mapping uses is checked against the source's columns, record keys or front-matter
keys (at ctx check, ctx sources preview and ctx load: manifest file:line:column, a did-you-mean);
optional and default template fields; front-matter numbers as written in text fields; list facts
of mixed scalars."""

from __future__ import annotations

import json

import orjson
import pytest

from .conftest import run_cli
from .gitrepo import make_repo

HEAD = """source_id: {sid}
tenant_id: t1
source_type: {sid}_log
owner_team: ops
classification: internal
trust_level: operational
required_scopes: []
allowed_purposes: [incident_review]
refresh_sla: 24h
deletion_mode: none
parser: {parser}
parser_version: "1"
schema_version: 1
enabled: true
snapshot: sources/{sid}
"""
# lines 16-: the table's block and mapping (facts.service is line 26, column 5)
TABLE = HEAD.format(sid="deploys", parser="table") + """table:
  file: deployments.csv
mapping:
  object_id: "DEP-{change_id}"
  title: "Release {change_id} of {service}"
  body: "{change_id} of {service}.\\nTicket: {ticket?}\\nSeverity: {severity|unknown}\\nDone."
  observed_at: started
  valid_from: started
  set: {object_type: release}
  facts:
    service: service
    severity: "{severity|unknown}"
"""
CSV = """change_id,service,started,ticket,severity
CHG-1,checkout,2026-03-01T09:00:00+00:00,T-9,high
CHG-2,ledger,2026-03-02T09:00:00+00:00,,
"""


def _write(tmp_path, sid: str, manifest: str, files: dict[str, str]) -> None:
    snap = tmp_path / "sources" / sid
    snap.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (snap / name).write_text(text)
    (tmp_path / "manifests" / "sources").mkdir(parents=True, exist_ok=True)
    (tmp_path / "manifests" / "sources" / f"{sid}.yaml").write_text(manifest)


def _preview(tmp_path, monkeypatch, sid: str):
    monkeypatch.setenv("CTX_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return run_cli(["sources", "preview", sid, "--manifests", tmp_path / "manifests", "--json", "--limit", "5"])


def _err(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1, r.stderr
    return r.stderr.removeprefix("ctx: error: ").rstrip("\n")


SERVCE = ("manifests/sources/deploys.yaml:26:5: mapping.facts.service: no column 'servce' in "
          "sources/deploys/deployments.csv (did you mean 'service'?)")


def test_a_misspelt_column_is_one_error_at_the_manifest_line_in_check_preview_and_load(tmp_path, monkeypatch):
    _write(tmp_path, "deploys", TABLE.replace("service: service", "service: servce"), {"deployments.csv": CSV})
    monkeypatch.setenv("CTX_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    r = run_cli(["check"])
    assert (r.exit_code, r.stdout.splitlines()[0]) == (1, SERVCE), r.stdout
    assert _err(_preview(tmp_path, monkeypatch, "deploys")) == SERVCE
    r = run_cli(["load", "--manifests", tmp_path / "manifests", "--db", tmp_path / "s.duckdb"])
    assert _err(r) == SERVCE
    assert not (tmp_path / "s.duckdb").exists()
    # spelt right: all three pass, and the load has no warning
    (tmp_path / "manifests" / "sources" / "deploys.yaml").write_text(TABLE)
    assert run_cli(["check"]).exit_code == 0
    assert _preview(tmp_path, monkeypatch, "deploys").exit_code == 0
    r = run_cli(["load", "--manifests", tmp_path / "manifests", "--db", tmp_path / "s.duckdb"])
    assert (r.exit_code, r.stderr) == (0, "")


@pytest.mark.parametrize("old, new, where", [
    ("  valid_from: started\n", "  valid_from: started_at\n", "23:3: mapping.valid_from: no column 'started_at'"),
    ("Release {change_id} of {service}", "Release {change_id} of {servce?}",
     "20:3: mapping.title: no column 'servce'"),
    ("Severity: {severity|unknown}", "Severity: {severty|unknown}", "21:3: mapping.body: no column 'severty'"),
    ("    service: service\n", "    service: {from: servce, type: str}\n",
     "26:15: mapping.facts.service.from: no column 'servce'"),
    ("  set: {object_type: release}\n", "  set: {object_type: release}\n  keys: [change_id, chg]\n",
     "25:21: mapping.keys.1: no column 'chg'"),
    ("  set: {object_type: release}\n",
     "  set: {object_type: release}\n  entity: {key: \"change:{change_id}\", type: change, name: \"{chnge_id}\"}\n",
     "25:53: mapping.entity.name: no column 'chnge_id'"),
    ("  set: {object_type: release}\n",
     "  set: {object_type: release}\n  relations:\n    - {type: TOUCHES, from: \"change:{change_id}\", "
     "to: \"service:{svc}\"}\n", "26:51: mapping.relations.0.to: no column 'svc'"),
    ("  set: {object_type: release}\n", "  set: {object_type: release}\n  tenant_id: tenant\n",
     "25:3: mapping.tenant_id: no column 'tenant'"),       # (else every row would be another tenant's)
    ("  file: deployments.csv\n", "  file: deployments.csv\n  row_groups: {by: [service], columns: [started, tiket]}\n",
     "18:50: table.row_groups.columns.1: no column 'tiket'"),
])
def test_every_kind_of_mapped_name_is_checked(tmp_path, monkeypatch, old, new, where):
    assert TABLE.count(old) == 1
    _write(tmp_path, "deploys", TABLE.replace(old, new), {"deployments.csv": CSV})
    got = _err(_preview(tmp_path, monkeypatch, "deploys"))
    assert got.startswith(f"manifests/sources/deploys.yaml:{where} in sources/deploys/deployments.csv"), got


def test_optional_and_default_template_fields(tmp_path, monkeypatch):
    _write(tmp_path, "deploys", TABLE, {"deployments.csv": CSV})
    r = _preview(tmp_path, monkeypatch, "deploys")
    assert r.exit_code == 0, r.stderr
    from ctxcli.load.build import collect

    objs = [o for ls in collect(tmp_path / "manifests", tmp_path, None)[0] for o in ls.iter_objects()]
    assert [o["content"] for o in objs] == [
        "CHG-1 of checkout.\nTicket: T-9\nSeverity: high\nDone.",
        "CHG-2 of ledger.\nSeverity: unknown\nDone."]      # the ticket's line left out, the default given
    assert [orjson.loads(o["facts"]) for o in objs] == [{"service": "checkout", "severity": "high"},
                                                        {"service": "ledger", "severity": "unknown"}]
    # a required field that is empty still refuses the row, and says the two ways out
    _write(tmp_path, "deploys", TABLE.replace("{ticket?}", "{ticket}"), {"deployments.csv": CSV})
    assert _err(_preview(tmp_path, monkeypatch, "deploys")) == (
        "sources/deploys/deployments.csv:3: body: row 2: column 'ticket' (in the body template '{change_id} of "
        "{service}.\\nTicket: {ticket}\\nSeverity: {severity|unknown}\\nDone.') is missing or empty (write "
        "{ticket?} if it may be, or {ticket|default})")


def test_a_line_with_text_and_a_required_field_keeps_its_empty_optional_field_as_empty_text():
    from ctxcli.load.parsers.mapping import Where, resolve

    rec = {"a": "A", "b": "", "c": None}
    assert resolve("{a} {b?}!\n{b?} {c?}\n{c|-}", rec, Where("f"), "body") == "A !\n-"
    assert resolve("{b|}x\n{b?}", rec, Where("f"), "body") == "x"
    assert resolve("{b?} {c|-}\nend", rec, Where("f"), "body") == " -\nend"    # a default keeps its line


EXPORT = {"tickets": [{"id": "INC-1", "summary": "first", "opened": "2026-03-01T09:00:00+00:00",
                       "timeline": [{"at": "2026-03-01T09:01:00+00:00", "text": "paged"}]},
                      {"id": "INC-2", "summary": "second", "opened": "2026-03-02T09:00:00+00:00",
                       "resolved_at": "2026-03-02T10:00:00+00:00", "timeline": []}]}
JSON = HEAD.format(sid="tickets", parser="json-export") + """json_export:
  file: tickets.json
  records: tickets
  nested:
    - path: timeline
      mapping:
        object_id: "{parent_id}-{index}"
        body: "{text} ({parent.summary})"
        observed_at: at
        set: {object_type: timeline_event}
mapping:
  object_id: "{id}"
  body: "{summary}"
  observed_at: opened
  valid_to: resolved_at
  set: {object_type: incident}
"""


def test_a_key_of_one_export_record_is_fine_a_key_of_none_is_an_error(tmp_path, monkeypatch):
    _write(tmp_path, "tickets", JSON, {"tickets.json": json.dumps(EXPORT)})
    r = _preview(tmp_path, monkeypatch, "tickets")
    assert r.exit_code == 0, r.stderr              # resolved_at: in the second record only
    assert [o["object_id"] for o in json.loads(r.stdout)["objects"]] == ["INC-1", "INC-1-1", "INC-2"]
    _write(tmp_path, "tickets", JSON.replace("valid_to: resolved_at", "valid_to: resolved"),
           {"tickets.json": json.dumps(EXPORT)})
    assert _err(_preview(tmp_path, monkeypatch, "tickets")) == (
        "manifests/sources/tickets.yaml:30:3: mapping.valid_to: no record of sources/tickets/tickets.json has the "
        "key 'resolved' (did you mean 'resolved_at'?)")
    _write(tmp_path, "tickets", JSON.replace("{parent.summary}", "{parent.sumary}"),
           {"tickets.json": json.dumps(EXPORT)})
    assert _err(_preview(tmp_path, monkeypatch, "tickets")) == (
        "manifests/sources/tickets.yaml:23:9: json_export.nested.0.mapping.body: no timeline item of "
        "sources/tickets/tickets.json has the key 'parent.sumary' (nor its record as parent.<key>) (did you mean "
        "'parent.summary'?)")


WIKI = HEAD.format(sid="wiki", parser="markdown") + """mapping:
  object_id: "{id}"
  title: name
  version: rev
  facts: {owner: owner, ticket: ticket}
  set: {object_type: runbook}
"""
DOC_A = """---
id: RB-1
name: Restart
rev: 1.10
owner: team-a
ticket: T-4
observed_at: "2026-03-01T09:00:00+00:00"
facts: {tags: [troubleshooting, 502, gateway], ratio: 0.9}
---
## Steps
Restart it.
"""
DOC_B = DOC_A.replace("RB-1", "RB-2").replace("ticket: T-4\n", "").replace("rev: 1.10", "rev: 1")


def test_front_matter_keys_of_one_document_are_fine_of_none_an_error(tmp_path, monkeypatch):
    _write(tmp_path, "wiki", WIKI, {"a.md": DOC_A, "b.md": DOC_B})
    r = _preview(tmp_path, monkeypatch, "wiki")
    assert r.exit_code == 0, r.stderr
    got = [(o["object_id"], o["source_version"], o["facts"]) for o in json.loads(r.stdout)["objects"]]
    assert got == [("RB-1#steps", "1.10", {"owner": "team-a", "ratio": 0.9, "tags": ["troubleshooting", "502",
                                                                                        "gateway"], "ticket": "T-4"}),
                   ("RB-2#steps", "1", {"owner": "team-a", "ratio": 0.9, "tags": ["troubleshooting", "502",
                                                                                   "gateway"]})]
    _write(tmp_path, "wiki", WIKI.replace("ticket: ticket}", "ticket: tiket}"), {"a.md": DOC_A, "b.md": DOC_B})
    assert _err(_preview(tmp_path, monkeypatch, "wiki")) == (
        "manifests/sources/wiki.yaml:20:25: mapping.facts.ticket: no document of sources/wiki has the front-matter "
        "key 'tiket' (did you mean 'ticket'?)")


@pytest.mark.parametrize("written, text", [("1", "1"), ("0.9", "0.9"), ("1.0", "1.0"), ("1.10", "1.10"),
                                           ("007", "007"), ("true", "true")])
def test_a_number_in_a_front_matter_text_field_is_its_text_as_written(tmp_path, written, text):
    from ctxcli.load.build import collect

    doc = (f"---\ndoc_id: RB-1\ntitle: T\nversion: {written}\nobject_type: runbook\n"
           "observed_at: \"2026-03-01T09:00:00+00:00\"\nfacts: {ratio: 0.9}\n---\n## Steps\nRestart it.\n")
    _write(tmp_path, "wiki", HEAD.format(sid="wiki", parser="markdown"), {"a.md": doc})
    (o,) = [o for ls in collect(tmp_path / "manifests", tmp_path, None)[0] for o in ls.iter_objects()]
    assert o["source_version"] == text
    assert orjson.loads(o["facts"])["ratio"] == 0.9      # a fact keeps its number


def test_a_fact_that_is_a_mapping_is_refused_with_the_fix(tmp_path, monkeypatch):
    _write(tmp_path, "wiki", WIKI, {"a.md": DOC_A.replace("ratio: 0.9}", "ratio: {p50: 0.9}}")})
    assert _err(_preview(tmp_path, monkeypatch, "wiki")) == (
        "sources/wiki/a.md:8:1: facts.ratio: a fact is a text, a number, true/false or a list of them, not a "
        "mapping (make each part a fact of its own, or write it as text)")


GIT = HEAD.format(sid="runbooks", parser="git") + """mapping:
  set: {object_type: runbook}
  facts: {ticket: ticket}
"""


def test_a_key_of_an_old_git_version_is_fine_of_no_version_an_error(tmp_path, monkeypatch):
    snap = tmp_path / "sources" / "runbooks"
    snap.mkdir(parents=True)
    make_repo(snap, [(1_767_225_600, {"a.md": "---\nticket: T-1\n---\n## S\none\n"}),
                     (1_767_312_000, {"a.md": "---\nowner: x\n---\n## S\ntwo\n"})])
    _write(tmp_path, "runbooks", GIT, {})
    r = _preview(tmp_path, monkeypatch, "runbooks")
    assert r.exit_code == 0, r.stderr
    assert [o["facts"].get("ticket") for o in json.loads(r.stdout)["objects"]] == ["T-1", None]
    _write(tmp_path, "runbooks", GIT.replace("ticket: ticket}", "ticket: tickt}"), {})
    assert _err(_preview(tmp_path, monkeypatch, "runbooks")) == (
        "manifests/sources/runbooks.yaml:18:11: mapping.facts.ticket: no version of a matched file in "
        "sources/runbooks has the front-matter key 'tickt' (did you mean 'ticket'?)")


def test_a_load_refused_for_a_name_reads_none_of_the_sources_rows(tmp_path, monkeypatch):
    # every row would also fail its object_id template: the load says the one cause, once
    _write(tmp_path, "deploys", TABLE.replace('"DEP-{change_id}"', '"DEP-{chang_id}"'), {"deployments.csv": CSV})
    r = run_cli(["load", "--manifests", tmp_path / "manifests", "--db", tmp_path / "s.duckdb"])
    assert _err(r) == ("manifests/sources/deploys.yaml:19:3: mapping.object_id: no column 'chang_id' in "
                       "sources/deploys/deployments.csv (did you mean 'change_id'?)")


def test_the_guides_misspelt_column_says_what_the_guide_shows(tmp_path, monkeypatch):
    import re

    from .conftest import REPO

    guide = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    manifest = re.search(r"<!-- byo: deployments -->\n```yaml\n(.*?)\n```", guide, re.S).group(1)
    shown = re.search(r"```console\n\$ ctx check\n(manifests/sources/deployments.yaml:.*)\n```", guide).group(1)
    assert manifest.count("    service: service\n") == 1
    _write(tmp_path, "deployments", manifest.replace("    service: service\n", "    service: servce\n"),
           {"deployments.csv": "change_id,tenant,service,kind,commit,completed_at,replicas,notes\n"})
    monkeypatch.setenv("CTX_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    r = run_cli(["check", "manifests/sources/deployments.yaml"])
    assert (r.exit_code, r.stdout.splitlines()[0]) == (1, shown)


@pytest.mark.parametrize("value, said", [("[1, 2]", "got a list: write one text"),
                                         ("{a: 1}", "got a mapping: write one text")])
def test_a_text_field_that_is_no_text_says_the_fix(tmp_path, monkeypatch, value, said):
    _write(tmp_path, "wiki", WIKI, {"a.md": DOC_A.replace("name: Restart", f"name: {value}")})
    assert _err(_preview(tmp_path, monkeypatch, "wiki")) == (
        f"sources/wiki/a.md:3:1: title: Input should be a valid string ({said})")


def test_every_misspelt_name_is_one_line_in_manifest_order(tmp_path):
    text = TABLE.replace("service: service", "service: servce").replace("mapping:\n", "mapping:\n  keys: [chg]\n")
    _write(tmp_path, "deploys", text.replace("Release {change_id} of {service}", "Release {change_id} of {svc}"),
           {"deployments.csv": CSV})
    r = run_cli(["load", "--manifests", tmp_path / "manifests", "--db", tmp_path / "s.duckdb"])
    assert r.exit_code == 2
    assert r.stderr.splitlines() == [      # keys are checked after facts, but come first in the file
        "ctx: error: manifests/sources/deploys.yaml:19:10: mapping.keys.0: no column 'chg' in "
        "sources/deploys/deployments.csv",
        "ctx: error: manifests/sources/deploys.yaml:21:3: mapping.title: no column 'svc' in "
        "sources/deploys/deployments.csv (did you mean 'service'?)",
        "ctx: error: manifests/sources/deploys.yaml:27:5: mapping.facts.service: no column 'servce' in "
        "sources/deploys/deployments.csv (did you mean 'service'?)"]
