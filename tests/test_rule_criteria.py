"""Evidence rules that say what a document is (docs/authoring.md "Evidence types by rule"):
list membership (``contains``), path globs (``paths``), the document's own front matter
(``front_matter``, ``front_matter_keys``) and RE2 patterns over a named field (``regex``) —
each seen as a user sees it, in the ``supports`` of ``ctx sources preview`` and in ``ctx check``."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from ctxcli.load.preview import preview

from .conftest import run_cli

BASE = {"tenant_id": "t1", "source_type": "wiki", "owner_team": "ops", "classification": "internal",
        "trust_level": "operational", "required_scopes": [], "allowed_purposes": ["incident_review"],
        "refresh_sla": "24h", "deletion_mode": "none", "parser_version": "1", "schema_version": 1,
        "enabled": True}
WIKI = {**BASE, "source_id": "wiki", "parser": "markdown", "snapshot": "sources/wiki",
        "mapping": {"object_id": "{id}", "title": "name", "version": "r{rev}", "observed_at": "at", "valid_from": "at", "subject_id": "service:{service}",
                    "facts": {"tags": {"from": "tags", "type": "list"}, "rev": {"from": "rev", "type": "int"}},
                    "set": {"object_type": "runbook"}}}
TABLE = {**BASE, "source_id": "deploys", "parser": "table", "snapshot": "sources/deploys",
         "table": {"file": "deploys.csv"},
         "mapping": {"object_id": "DEP-{id}", "title": "Release {id}", "body": "{notes}", "version": "r{id}",
                     "observed_at": "at", "valid_from": "at",
                     "facts": {"tags": {"from": "tags", "type": "list"}}, "set": {"object_type": "release"}}}


def doc(id_, name, tags, **front):
    fm = {"id": id_, "name": name, "service": "checkout", "tags": tags, "rev": 2, "at": "2026-03-01T00:00:00Z", **front}
    return "---\n" + yaml.safe_dump(fm, sort_keys=False) + "---\n## Steps\nDo it.\n"


DOCS = {
    "rollback.md": doc("RB-TOP", "Top rollback", ["rollback"]),
    "ops/rollback.md": doc("RB-OPS", "Checkout rollback", ["gateway", "rollback"], kind="runbook",
                           reviewed_by="ana"),
    "ops/a/b/rollback.md": doc("RB-DEEP", "Deep rollback", ["rollbacks"], kind=["runbook", "howto"]),
    "ops/old-rollback.md": doc("RB-OLD", "Roll back (old)", ["old"], kind="note", draft=True),
    "ops/restart.md": doc("RB-RST", "Restart", ["gateway"], codes=[502, 504]),
}


def project(tmp_path, match: dict[str, list[dict]]):
    """A markdown folder ``wiki`` (DOCS), a CSV ``deploys`` and a playbook whose evidence types
    (one per entry of ``match``) carry those rules."""
    for rel, text in DOCS.items():
        p = tmp_path / "sources" / "wiki" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    (tmp_path / "sources" / "deploys").mkdir(parents=True)
    (tmp_path / "sources" / "deploys" / "deploys.csv").write_text(
        "id,tags,notes,at\nR1,rollback;gateway,rollback of ops/rollback.md,2026-03-01T00:00:00Z\n")
    src = tmp_path / "manifests" / "sources"
    src.mkdir(parents=True)
    (src / "wiki.yaml").write_text(yaml.safe_dump(WIKI))
    (src / "deploys.yaml").write_text(yaml.safe_dump(TABLE))
    pb = {"playbook_id": "rules", "version": "1", "purposes": ["incident_review"], "instructions": "Cite.",
          "max_hops": 1, "max_rounds": 1, "candidate_limit": 10,
          "budget": {"total_tokens": 3000, "response_reserve": 600, "instructions": 300, "goal_state": 400},
          "evidence_types": [{"type": t, "judgment": t, "required": False, "match": rules,
                              "retrieve": {"structured": {"object_types": ["runbook"]}}}
                             for t, rules in match.items()],
          "decision": {"rules": [], "default_action": "act", "on_insufficient": "ask",
                       "on_conflict": "escalate"}}
    (tmp_path / "manifests" / "playbooks").mkdir()
    (tmp_path / "manifests" / "playbooks" / "rules.yaml").write_text(yaml.safe_dump(pb, sort_keys=False))
    return tmp_path


def supports(root) -> dict[str, list[str]]:
    """object id -> supports, over both sources, as ``ctx sources preview`` shows them."""
    out = {}
    for sid in ("wiki", "deploys"):
        for o in preview(root / "manifests", root, sid, limit=50)["objects"]:
            out[o["object_id"]] = o["supports"]
    return out


def typed(root, t: str) -> list[str]:
    return sorted(k.split("#")[0] for k, v in supports(root).items() if t in v)


@pytest.mark.parametrize("rules, expected", [
    # contains: the list fact holds the value, exactly ("rollbacks" is not "rollback"); the
    # table's list fact too
    ([{"contains": {"tags": "rollback"}}], ["DEP-R1", "RB-OPS", "RB-TOP"]),
    # a fact that is not a list holds nothing
    ([{"contains": {"rev": 2}}], []),
    # paths: '**/' is any folders, none too; '*' stays within one name; objects without a
    # path (the CSV's) never match
    ([{"paths": ["**/rollback.md"]}], ["RB-DEEP", "RB-OPS", "RB-TOP"]),
    ([{"paths": ["ops/*.md"]}], ["RB-OLD", "RB-OPS", "RB-RST"]),
    ([{"paths": ["ops/?estart.md", "rollback.md"]}], ["RB-RST", "RB-TOP"]),
    ([{"paths": ["ops/rollback"]}], []),
    # front matter as written, before the mapping: equal, or held by a list
    ([{"front_matter": {"kind": "runbook"}}], ["RB-DEEP", "RB-OPS"]),
    ([{"front_matter": {"kind": "howto", "rev": 2}}], ["RB-DEEP"]),
    ([{"front_matter": {"rev": "2"}}], []),
    # a number is a number: 502 matches it, "502" does not
    ([{"front_matter": {"codes": 502}}], ["RB-RST"]),
    ([{"front_matter": {"codes": "502"}}], []),
    ([{"front_matter": {"draft": True}}], ["RB-OLD"]),
    ([{"front_matter": {"draft": 1}}], []),
    ([{"front_matter_keys": ["reviewed_by"]}], ["RB-OPS"]),
    ([{"front_matter_keys": ["reviewed_by", "kind"]}], ["RB-OPS"]),
    # regex: an RE2 search in the named field's text (a list: any item; a number: its text)
    ([{"regex": {"title": "(?i)roll ?back"}}], ["RB-DEEP", "RB-OLD", "RB-OPS", "RB-TOP"]),
    ([{"regex": {"title": "^Checkout"}}], ["RB-OPS"]),
    ([{"regex": {"path": "^ops/[a-z]+\\.md$"}}], ["RB-OPS", "RB-RST"]),
    ([{"regex": {"facts.tags": "^gate"}}], ["DEP-R1", "RB-OPS", "RB-RST"]),
    ([{"regex": {"front_matter.codes": "^50[0-3]$"}}], ["RB-RST"]),
    ([{"regex": {"front_matter.rev": "^2$"}}], ["RB-DEEP", "RB-OLD", "RB-OPS", "RB-RST", "RB-TOP"]),
    ([{"regex": {"front_matter.kind": "^how"}}], ["RB-DEEP"]),
    ([{"regex": {"content": "rollback of"}}], ["DEP-R1"]),
    ([{"regex": {"subject_id": "^service:check"}}], ["RB-DEEP", "RB-OLD", "RB-OPS", "RB-RST", "RB-TOP"]),
    # every criterion of a rule must hold; any rule of a type gives it
    ([{"paths": ["**/rollback.md"], "contains": {"tags": "gateway"}}], ["RB-OPS"]),
    ([{"paths": ["rollback.md"]}, {"front_matter": {"kind": "note"}}], ["RB-OLD", "RB-TOP"]),
])
def test_a_rule_types_exactly_the_documents_it_describes(tmp_path, rules, expected):
    root = project(tmp_path, {"rollback_runbook": rules})
    assert typed(root, "rollback_runbook") == expected


@pytest.mark.parametrize("rule, message", [
    ({"regex": {"title": "(a)\\1"}},
     "19:5: evidence_types.0.match.0.regex: regex.title: not an RE2 pattern (invalid escape sequence: \\1); "
     "RE2 runs in linear time and has no back-references or look-around"),
    ({"regex": {"title": "(?=roll)r"}},
     "19:5: evidence_types.0.match.0.regex: regex.title: not an RE2 pattern (invalid perl operator: (?=); "
     "RE2 runs in linear time and has no back-references or look-around"),
    ({"regex": {"title": "x*"}},
     "19:5: evidence_types.0.match.0.regex: regex.title: the pattern matches the empty text, so it would "
     "match every text"),
    ({"regex": {"title": "a" * 256}}, None),
    ({"regex": {"title": "a" * 257}}, "20:7: evidence_types.0.match.0.regex.title: String should have at most "
                                      "256 characters"),
    ({"regex": {"owner": "x"}},
     "19:5: evidence_types.0.match.0.regex: regex: unknown field 'owner' (one of title, content, path, "
     "subject_id, facts.NAME, front_matter.KEY)"),
    ({"paths": ["/ops/rollback.md"]},
     "19:5: evidence_types.0.match.0.paths: paths: '/ops/rollback.md': a glob is a path relative to the "
     "repository or snapshot folder, with '/' between names (no leading '/', no backslash)"),
])
def test_a_rule_that_cannot_run_is_refused_at_its_line(tmp_path, rule, message):
    root = project(tmp_path, {"rollback_runbook": [rule]})
    r = run_cli(["check", str(root / "manifests" / "playbooks")])
    if message is None:
        assert r.exit_code == 0, r.output
        return
    assert r.exit_code == 1, r.output
    assert r.stdout == f"{root / 'manifests' / 'playbooks' / 'rules.yaml'}:{message}\n"


def test_the_new_criteria_leave_the_digests_of_rules_without_them_as_they_were():
    from ctxcli.load.evidence_rules import Rule, rules_digest
    from ctxcli.models.playbook import EvidenceRule

    r = Rule("t", EvidenceRule(sources=["s"], facts={"k": "v"}), "f", 1, 1, 1)
    assert rules_digest([r], "s") == (b'[["t",{"facts":{"k":"v"},"object_types":[],"sources":["s"],'
                                      b'"terms":[]}]]')
    r2 = Rule("t", EvidenceRule(sources=["s"], contains={"k": "v"}), "f", 1, 1, 1)
    assert b'"contains":{"k":"v"}' in rules_digest([r2], "s")


def check_project(root, monkeypatch):
    monkeypatch.setenv("CTX_ROOT", str(root))
    return run_cli(["check", "--json"])


def test_check_warns_when_two_types_rules_match_one_document(tmp_path, monkeypatch):
    root = project(tmp_path, {
        "rollback_runbook": [{"paths": ["**/rollback.md"]}, {"front_matter": {"kind": "note"}}],
        "gateway_runbook": [{"contains": {"tags": "gateway"}}],
        # two rules of one type overlapping (RB-OPS) are no news: the type is the same
        "howto": [{"front_matter": {"kind": "howto"}}, {"front_matter_keys": ["kind"], "paths": ["ops/a/**"]}],
    })
    r = check_project(root, monkeypatch)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["problems"] == []
    lines = (root / "manifests" / "playbooks" / "rules.yaml").read_text().splitlines()
    at = [i for i, ln in enumerate(lines, 1) if ln.startswith("  - ")]       # the rules' lines
    assert [(w["line"], w["message"]) for w in doc["warnings"]] == [
        (at[2], f"evidence type gateway_runbook: match rule 1 and evidence type rollback_runbook: match rule 1 "
                f"(line {at[0]}) both match 1 object(s), e.g. RB-OPS#steps (sources/wiki/ops/rollback.md:13): "
                f"each gets both types"),
        (at[3], f"evidence type howto: match rule 1 and evidence type rollback_runbook: match rule 1 "
                f"(line {at[0]}) both match 1 object(s), e.g. RB-DEEP#steps "
                f"(sources/wiki/ops/a/b/rollback.md:13): each gets both types"),
    ]
    r = run_cli(["check"])
    assert r.exit_code == 0 and r.stdout.count("warning: ") == 2, r.output


def test_check_gives_no_overlap_warning_for_disjoint_rules(tmp_path, monkeypatch):
    root = project(tmp_path, {"rollback_runbook": [{"paths": ["**/rollback.md"]}],
                              "restart_runbook": [{"paths": ["**/restart.md"]}]})
    r = check_project(root, monkeypatch)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["warnings"] == []


def test_a_git_sources_documents_are_typed_by_their_path_in_the_repository(tmp_path):
    """Loaded into a store: every version of a file under any folder named by the glob gets the
    type, a file elsewhere does not."""
    from ctxcli.load.build import build_store
    from ctxcli.store.db import open_reader

    from .gitrepo import make_repo

    root = project(tmp_path, {"rollback_runbook": [{"paths": ["runbooks/**/rollback.md"],
                                                    "front_matter_keys": ["kind"]}]})
    (root / "manifests" / "sources" / "wiki.yaml").unlink()
    (root / "manifests" / "sources" / "deploys.yaml").unlink()
    git = {**WIKI, "source_id": "repo", "parser": "git", "snapshot": "sources/repo",
           "git": {"path": "rb.bundle", "include": ["**/*.md"]}}
    (root / "manifests" / "sources" / "repo.yaml").write_text(yaml.safe_dump(git))
    (root / "sources" / "repo").mkdir()
    ids = make_repo(tmp_path / "work", [
        (1_772_400_000, {"runbooks/pay/rollback.md": DOCS["ops/rollback.md"],
                         "rollback.md": DOCS["rollback.md"], "runbooks/restart.md": DOCS["ops/restart.md"]}),
        (1_772_486_400, {"runbooks/pay/rollback.md": DOCS["ops/rollback.md"].replace("Do it.", "Do it twice.")}),
    ], bundle=root / "sources" / "repo" / "rb.bundle")
    db = tmp_path / "s.duckdb"
    build_store(root / "manifests", db, root=root)
    con = open_reader(db)
    try:
        got = con.execute("SELECT object_id, supports FROM objects ORDER BY object_id").fetchall()
    finally:
        con.close()
    s0, s1 = ids[0][:12], ids[1][:12]
    assert got == [(f"RB-OPS@{s0}#steps", ["rollback_runbook"]), (f"RB-OPS@{s1}#steps", ["rollback_runbook"]),
                   (f"RB-RST@{s0}#steps", []), (f"RB-TOP@{s0}#steps", [])]


def test_the_guides_example_rules_type_the_documents_it_says(tmp_path):
    from .conftest import REPO

    guide = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    block = guide.split("### Evidence types by rule", 1)[1].split("### ", 1)[0]
    text = re.findall(r"```yaml\n(.*?)\n```", block, re.S)[1]
    (et,) = yaml.safe_load(text)["evidence_types"]
    root = project(tmp_path, {et["type"]: et["match"]})
    assert typed(root, "rollback_runbook") == ["RB-OPS"]
    (et["match"][0]["sources"]) = ["wiki"]
    root = project(tmp_path / "again", {et["type"]: et["match"]})
    assert typed(root, "rollback_runbook") == ["RB-DEEP", "RB-OPS", "RB-TOP"]


@pytest.mark.parametrize("first, term, selected, tags", [
    # RB-B is found by the word and selected for runbook (it covers both types); RB-A came in
    # for runbook only (an extra of its query)
    ("runbook", "rollback", {"RB-A": "extra", "RB-B": "runbook"}, ["b"]),
    # no page says the word: the best rollback_doc the runbook query found is selected for it
    ("rollback_doc", "zzz", {"RB-A": "rollback_doc", "RB-B": "extra"}, ["a"]),
])
def test_collect_takes_only_the_items_admitted_for_its_type(tmp_path, monkeypatch, first, term, selected, tags):
    """Two overlapping types (issue 48 item 7): every wiki page is a ``runbook``, a page at
    ``**/rollback.md`` is also a ``rollback_doc``, found by a word. The runbook query brings in
    ops/rollback.md (it never says "rollback"): the ``collect`` over rollback_doc lists only the
    items selected for rollback_doc or found by its query, as its count does."""
    from ctxcli import api

    docs = {"ops/rollback.md": ("RB-A", "Checkout revert", ["a"], "Revert the release."),
            "pay/rollback.md": ("RB-B", "Payment rollback", ["b"], "Rollback the release."),
            "ops/restart.md": ("RB-C", "Restart", ["c"], "Restart the pods.")}
    root = project(tmp_path, {"runbook": [{"sources": ["wiki"]}],
                              "rollback_doc": [{"paths": ["**/rollback.md"]}]})
    (root / "manifests" / "sources" / "deploys.yaml").unlink()
    for sub in ("rollback.md", "ops", "pay"):
        p = root / "sources" / "wiki" / sub
        if p.is_file():
            p.unlink()
    for rel, (id_, name, doc_tags, body) in docs.items():
        p = root / "sources" / "wiki" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(doc(id_, name, doc_tags).replace("Do it.", body))
    for stale in ("ops/old-rollback.md", "ops/a/b/rollback.md"):
        (root / "sources" / "wiki" / stale).unlink()
    pbf = root / "manifests" / "playbooks" / "rules.yaml"
    pb = yaml.safe_load(pbf.read_text())
    pb["evidence_types"][1]["retrieve"] = {"fulltext": {"terms": [term]}}
    pb["evidence_types"].sort(key=lambda et: et["type"] != first)
    pb["facts"] = [{"name": "rollback_tags", "op": "collect", "from": "rollback_doc", "fact": "tags"},
                   {"name": "rollback_count", "op": "expr", "expr": "len(rollback_tags)"}]
    pb["claims"] = [{"id": "rollbacks", "text": "{rollback_count} rollback runbook(s), tagged {rollback_tags}.",
                     "status": "fact", "uses": ["rollback_tags", "rollback_count"]}]
    pbf.write_text(yaml.safe_dump(pb, sort_keys=False))
    case = {"case_id": "RB-CASE", "tenant_id": "t1", "playbook": "rules", "question": "How to roll back checkout?",
            "purpose": "incident_review", "as_of": "2026-06-01T00:00:00Z",
            "subject": {"id": "sre", "scopes": ["runbook:read"], "clearance": "internal"}, "seeds": ["service:checkout"]}
    (root / "case.yaml").write_text(yaml.safe_dump(case))
    monkeypatch.setenv("CTX_ROOT", str(root))
    monkeypatch.delenv("CTX_DB")        # the project's own store, loaded on first use
    res = api.investigate(api.InvestigateOptions(case=str(root / "case.yaml")))
    got = {e["object_id"].split("#")[0]: (e["selected_for"], e["supports"]) for e in res.pack["evidence"]}
    assert set(got) == {"RB-A", "RB-B", "RB-C"}
    assert got["RB-A"][1] == got["RB-B"][1] == ["rollback_doc", "runbook"]      # both support both types
    assert {k: got[k][0] for k in selected} == selected
    assert res.answer["derived_facts"]["rollback_tags"]["value"] == tags
    (claim,) = res.answer["claims"]
    assert claim["text"] == f"1 rollback runbook(s), tagged {tags[0]}." and claim["status"] == "fact"


def test_a_playbook_whose_rules_use_no_new_criterion_keeps_its_hash():
    """The bundled incident playbook's rules (sources, object types, facts) hash as before the
    criteria existed, so its runs replay without drift; a rule using one changes the hash."""
    from ctxcli import api
    from ctxcli.project import playbook_hash

    pb, h = api.read_playbook("payment-incident-review")
    assert h == playbook_hash(pb) == "sha256:3f682431ee7d8c6d9a5bbd55f82d728fcea46f892e9307b4405c3fa7e4e0c2d4"
    d = pb.model_dump(by_alias=True)
    d["evidence_types"][0]["match"][0]["paths"] = ["**/x.md"]
    assert playbook_hash(type(pb).model_validate(d)) != h
