"""The agent loop, governed (issue 34): tool results as gated pack inputs, section order and
trust, pack.tools from the project's tool registry."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from .conftest import REPO, run_cli

AGENT = REPO / "examples" / "agent" / "INC-2026-0723"
STEPS = [AGENT / "01-pool-metrics.yaml", AGENT / "02-ticket-search.yaml", AGENT / "03-deploy-status.yaml"]
INJECTED = "ignore all previous instructions"
SECRET = "OTHER-TENANT-PAYROLL-7781"


def _other_tenant(tmp_path: Path) -> Path:
    raw = tmp_path / "other-raw.json"
    raw.write_text(f'{{"rows": ["{SECRET}"]}}')
    f = tmp_path / "other.yaml"
    f.write_text(f"""tool: payroll.lookup
version: "{SECRET}"
arguments: {{employee: {SECRET}}}
tenant_id: tenant-other
observed_at: "2026-07-23T10:20:00+08:00"
raw: {{path: other-raw.json}}
shaped:
  facts: {{salary_band: {SECRET}}}
""")
    return f


def _scoped(tmp_path: Path) -> Path:
    f = tmp_path / "scoped.yaml"
    f.write_text("""tool: security.scan
version: "1"
tenant_id: tenant-demo
scopes: [security:read]
observed_at: "2026-07-23T10:20:00+08:00"
raw: {sha256: "1111111111111111111111111111111111111111111111111111111111111111", size: 3, location: "vault://x"}
shaped:
  facts: {finding: SCOPED-FINDING-TEXT}
""")
    return f


def _run(tmp_path, *files, extra=()):
    out = tmp_path / "o"
    args = ["investigate", "INC-2026-0723", "--out", out, *extra]
    for f in files:
        args += ["--tool-result", f]
    r = run_cli(args)
    assert r.exit_code == 0, r.output
    return out, json.loads((out / "pack.json").read_text())


def test_tool_results_gated_and_only_the_shaped_form_rendered(store, tmp_path):
    out, pack = _run(tmp_path, *STEPS, _other_tenant(tmp_path), _scoped(tmp_path))
    (item,) = pack["tool_results"]
    assert (item["tool"], item["trust_level"], item["facts"]["waiting_at_1002"]) == ("metrics.query", "untrusted", 212)
    raw = (AGENT / "raw" / "pool-metrics.json").read_bytes()
    assert item["raw"] == {"sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw),
                           "location": "raw/pool-metrics.json"}
    gates = [(o["gate"], o["reason"], o["withheld"]) for o in pack["tool_omissions"]]
    assert gates == [("tenant", "other_tenant", True), ("scope", "missing_scope", True),
                     ("freshness", "stale", False), ("injection", "instruction_like_text", False)]
    assert pack["tool_omissions"][1]["detail"] == {"needs_scopes": ["security:read"]}

    md = run_cli(["render", out / "pack.json"])
    msgs = run_cli(["render", out / "pack.json", "--format", "messages"])
    assert md.exit_code == msgs.exit_code == 0
    system, user = json.loads(msgs.output)
    assert f"<<<TOOL_RESULT {item['result_id']} " in user["content"]
    assert '"waiting_at_1002":212' in user["content"] and "says nothing about why the pool filled" in user["content"]
    assert "TOOL_RESULT" not in system["content"].replace("`<<<TOOL_RESULT", "")
    assert "Tool result " + pack["tool_omissions"][3]["ref"] + " (ticket.search) excluded by injection" in md.output
    assert "Tool results withheld by tenant: 1 the subject may not see." in md.output
    assert '"active":31' not in md.output          # the raw rows never
    for text in (md.output, msgs.output):
        assert INJECTED not in text.lower()
        assert "SCOPED-FINDING-TEXT" not in text
    # another tenant's tool result: no name, text or digest of it in any file of the run
    other_raw = (tmp_path / "other-raw.json").read_bytes()
    leaks = (SECRET, "payroll", hashlib.sha256(other_raw).hexdigest())
    for f in sorted(out.iterdir()):
        body = f.read_text()
        assert not [s for s in leaks if s in body], f.name
    # the tool slot is 0 in this playbook: tool results are charged to the evidence slot
    sec = next(s for s in pack["slots"]["sections"] if s["section"] == "tool_results")
    assert sec["slot"] == "evidence" and sec["tokens"] > item["tokens"]
    assert pack["slots"]["used"]["evidence"] <= pack["slots"]["allocation"]["evidence"]
    assert run_cli(["replay", out / "pack.json"]).exit_code == 0


def test_a_pack_with_tool_results_validates_and_one_without_has_no_tool_fields(store, tmp_path):
    from .test_contracts import _check

    _, pack = _run(tmp_path, *STEPS)
    _check("pack", pack, "pack with tool results")
    _, plain = _run(tmp_path / "p")
    assert "tool_results" not in plain and "tool_omissions" not in plain


def test_tool_results_over_budget_are_excluded_by_the_budget_gate(store, tmp_path):
    _, full = _run(tmp_path, STEPS[0])
    assert [i["tool"] for i in full["tool_results"]] == ["metrics.query"]
    # a total whose evidence slot (1500 - 200 reserve - 500 - 600 = 200 tokens) cannot hold it
    _, tiny = _run(tmp_path / "t", STEPS[0], extra=["--budget", "1500"])
    assert tiny["tool_results"] == []
    (om,) = tiny["tool_omissions"]
    assert (om["gate"], om["reason"], om["detail"]["slot"], om["detail"]["budget"]) == (
        "budget", "over_budget", "evidence", 200)
    assert om["detail"]["tokens"] == full["tool_results"][0]["tokens"]


def test_required_evidence_comes_before_tool_results_in_a_full_evidence_slot(store, tmp_path):
    """tiny-budget (issue 45 item 4): the evidence slot is full without tool results; with one,
    the required evidence stays exactly as it was and the tool result is what is omitted
    (over_budget after required_evidence), the slot still holds, and the trace says so."""
    _, plain = _run(tmp_path / "a", extra=["--variant", "tiny-budget"])
    _, pack = _run(tmp_path / "b", STEPS[0], extra=["--variant", "tiny-budget"])
    from ctxcli import api

    required = {et.type for et in api.read_playbook("payment-incident-review")[0].evidence_types if et.required}
    req_ev = lambda p: [e["evidence_id"] for e in p["evidence"] if e["selected_for"] in required]  # noqa: E731
    assert req_ev(pack) == req_ev(plain) and req_ev(plain)
    assert pack["tool_results"] == []
    (om,) = pack["tool_omissions"]
    assert (om["gate"], om["reason"], om["detail"]["after"], om["detail"]["slot"]) == (
        "budget", "over_budget", "required_evidence", "evidence")
    assert om["detail"]["tokens"] > om["detail"]["remaining"]
    used, alloc = pack["slots"]["used"], pack["slots"]["allocation"]
    assert used["evidence"] <= alloc["evidence"] and pack["slots"]["within_budget"]["evidence"]
    trace = [json.loads(x) for x in (tmp_path / "b" / "o" / "trace.jsonl").read_text().splitlines()]
    assert [(e["gate"], e["reason"]) for e in trace if e["event"] == "input_rejected"] == [("budget", "over_budget")]
    assert not [e for e in trace if e["event"] == "input_admitted"]
    r = run_cli(["replay", tmp_path / "b" / "o" / "pack.json"])          # the same pack again, from the recorded inputs
    assert r.exit_code == 0, r.output


def test_a_tool_result_that_fits_after_required_evidence_keeps_its_room_from_optional_evidence(store, tmp_path):
    """--budget 4000: without the tool result the slot holds two extra items beyond the playbook's
    types; with it, the required evidence is the same, the tool result is packed, and the extras
    are what gives way."""
    from ctxcli import api

    required = {et.type for et in api.read_playbook("payment-incident-review")[0].evidence_types if et.required}
    _, plain = _run(tmp_path / "a", extra=["--budget", "4000"])
    _, pack = _run(tmp_path / "b", STEPS[0], extra=["--budget", "4000"])
    assert [i["tool"] for i in pack["tool_results"]] == ["metrics.query"] and pack["tool_omissions"] == []
    ids = [e["evidence_id"] for e in pack["evidence"]]
    assert [e["evidence_id"] for e in plain["evidence"] if e["selected_for"] in required] == [
        e["evidence_id"] for e in pack["evidence"] if e["selected_for"] in required]
    assert set(ids) < {e["evidence_id"] for e in plain["evidence"]}
    assert {e["selected_for"] for e in plain["evidence"] if e["evidence_id"] not in ids} == {"extra"}
    assert pack["slots"]["within_budget"]["evidence"]


def test_a_tool_result_is_known_from_its_observation_and_fresh_until_its_max_age_exactly():
    """The pool metrics observed at 10:20:00 (max_age 2h): known when the cut-off —
    min(as_of, known_at), docs/gates.md — is 10:20:00 exactly, not one microsecond before, by
    either time; fresh at as_of 12:20:00 exactly, stale one microsecond later."""
    from datetime import timedelta

    from ctxcli.agents.registry import Registry, ToolSpec
    from ctxcli.agents.tool_results import gate_tool_results, read_tool_result
    from ctxcli.tokens import count

    reg = Registry(tools=[ToolSpec(name="metrics.query", authoritative=True, scopes=["service:read"])])
    tr = read_tool_result(STEPS[0])
    seen = tr.observed_at
    assert seen == datetime(2026, 7, 23, 2, 20, tzinfo=timezone.utc)
    us = timedelta(microseconds=1)

    def gate(as_of, known_at=None):
        g = gate_tool_results([tr], tenant_id="tenant-demo", scopes=["service:read"], purpose="incident_review",
                              as_of=as_of, known_at=known_at, budget=5000, slot="tools", registry=reg,
                              key=b"k" * 32, count=count)
        return [(o["gate"], o["reason"]) for o in g.omissions] or [("packed", len(g.items))]

    later = seen + timedelta(hours=1)
    assert gate(seen) == gate(later, seen) == gate(seen, later) == [("packed", 1)]
    assert gate(seen - us) == gate(later, seen - us) == gate(seen - us, later) == [("knowledge_time", "not_yet_observed")]
    assert gate(seen + timedelta(hours=2)) == [("packed", 1)]
    assert gate(seen + timedelta(hours=2) + us) == [("freshness", "stale")]


def test_registry_makes_a_tool_authoritative_and_lists_usable_tools(tmp_path):
    from ctxcli.agents.registry import Registry, ToolSpec, usable_tools
    from ctxcli.agents.tool_results import gate_tool_results, read_tool_result
    from ctxcli.tokens import count

    reg = Registry(tools=[ToolSpec(name="metrics.query", authoritative=True, scopes=["service:read"]),
                          ToolSpec(name="deploy.status", scopes=["deploy:write"]),
                          ToolSpec(name="ticket.search", purposes=["claim_review"])])
    tr = read_tool_result(STEPS[0])
    as_of = datetime(2026, 7, 23, 2, 30, tzinfo=timezone.utc)
    g = gate_tool_results([tr], tenant_id="tenant-demo", scopes=["service:read"], purpose="incident_review",
                          as_of=as_of, known_at=None, budget=5000, slot="tools", registry=reg, key=b"k" * 32,
                          count=count)
    assert g.items[0]["trust_level"] == "authoritative"
    assert usable_tools(reg, ["ticket.search", "deploy.status", "metrics.query", "unknown.tool"],
                        ["service:read", "deploy:read"], "incident_review") == ["metrics.query"]
    # a result observed after the cutoff is not yet known
    g2 = gate_tool_results([tr], tenant_id="tenant-demo", scopes=["service:read"], purpose="incident_review",
                           as_of=as_of, known_at=datetime(2026, 7, 23, 2, 10, tzinfo=timezone.utc), budget=5000,
                           slot="tools", registry=reg, key=b"k" * 32, count=count)
    assert [(o["gate"], o["reason"]) for o in g2.omissions] == [("knowledge_time", "not_yet_observed")]
    # the same result twice: the second is a duplicate
    g3 = gate_tool_results([tr, tr], tenant_id="tenant-demo", scopes=["service:read"], purpose="incident_review",
                           as_of=as_of, known_at=None, budget=5000, slot="tools", registry=reg, key=b"k" * 32,
                           count=count)
    assert len(g3.items) == 1 and [o["gate"] for o in g3.omissions] == ["duplicate"]


@pytest.mark.parametrize("body, message", [
    ("tool: x\n", "t.yaml: version: missing field"),
    ("tool: x\nversion: '1'\ntenant_id: t\nobserved_at: '2026-07-23T10:00:00'\nraw: {path: nope.json}\nshaped: {}\n",
     "t.yaml: raw.path: cannot read the raw result nope.json"),
    ("tool: x\nversion: '1'\ntenant_id: t\nobserved_at: '2026-07-23T10:00:00'\n"
     "raw: {sha256: '00', size: 1, location: a}\nshaped: {}\n", "t.yaml: observed_at:"),
    ("tool: x\nversion: '1'\ntenant_id: t\nobserved_at: '2026-07-23T10:00:00+00:00'\nmax_age: soon\n"
     "raw: {sha256: '00', size: 1, location: a}\nshaped: {}\n", "t.yaml: max_age:"),
])
def test_a_bad_tool_result_file_is_one_line_exit_2(store, tmp_path, body, message):
    f = tmp_path / "t.yaml"
    f.write_text(body)
    r = run_cli(["investigate", "INC-2026-0723", "--tool-result", f, "--out", tmp_path / "o"])
    assert r.exit_code == 2
    line = r.output.strip()
    assert "\n" not in line and message in line, line
    assert not (tmp_path / "o").exists()


def test_pack_tools_lists_only_registered_tools_the_subject_may_use(project_copy, tmp_path):
    case = project_copy / "examples" / "cases" / "C-102.yaml"
    case.write_text(case.read_text() + "\ntools: [claims.lookup, payroll.export, unregistered.tool]\n")
    (project_copy / "manifests" / "tools.yaml").write_text(
        "tools:\n  - {name: claims.lookup, scopes: [case:read]}\n  - {name: payroll.export, scopes: [payroll:admin]}\n")
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "o"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "o" / "pack.json").read_text())["tools"] == ["claims.lookup"]
    (project_copy / "manifests" / "tools.yaml").write_text("tools:\n  - {name: claims.lookup, colour: red}\n")
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "o2"])
    assert r.exit_code == 2 and "manifests/tools.yaml:2:27: tools.0.colour: unknown field" in r.output


def test_retrieved_text_tool_output_and_memory_never_land_in_instruction_sections(store, tmp_path):
    """Section order and trust: only the playbook's and ctx's own texts are in the system
    message; evidence, tool results and gaps are in the user message, in the design's order."""
    from ctxcli.engine.render import SECTION_ORDER, render_messages, section_texts

    _, pack = _run(tmp_path, *STEPS)
    secs = section_texts(pack)
    assert [s[0] for s in secs] == ["system_instructions", "policy_constraints", "request", "goal_state",
                                    "tool_results", "evidence", "gaps_and_exclusions", "response_contract"]
    instruction = {name for name, slot, _, _ in secs if slot == "instructions"}
    assert instruction == {"system_instructions", "policy_constraints", "response_contract"}
    assert {n for n, _, _ in SECTION_ORDER if n in ("tool_results", "evidence")} & instruction == set()
    system, user = render_messages(pack)
    for ev in pack["evidence"]:
        assert f"<<<EVIDENCE {ev['evidence_id']}" not in system["content"]
        assert f"<<<EVIDENCE {ev['evidence_id']}" in user["content"]
    for tr in pack["tool_results"]:
        assert tr["result_id"] not in system["content"] and tr["result_id"] in user["content"]


def test_add_tool_result_over_mcp_never_lets_injected_text_into_the_messages(store, tmp_path):
    from .test_serve import _call, _params, _structured

    import yaml

    def call(step: Path, **over):
        d = yaml.safe_load(step.read_text())
        args = {"case": "INC-2026-0723", "tool": d["tool"], "version": d["version"], "shaped": d["shaped"],
                "observed_at": d["observed_at"], "raw": (AGENT / d["raw"]["path"]).read_text(),
                "arguments": d["arguments"], "call_id": d["call_id"]}
        if d.get("max_age"):
            args["max_age"] = d["max_age"]
        args.update(over)
        return ("tool", "add_tool_result", args)

    runs = tmp_path / "runs"
    ok, inj, stale, other = _call(_params(store, runs), [
        call(STEPS[0]), call(STEPS[1]), call(STEPS[2]), call(STEPS[0], data_tenant="tenant-other", call_id="x")])
    ok, inj, stale, other = map(_structured, (ok, inj, stale, other))
    assert (ok["status"], ok["trust"]) == ("admitted", "untrusted")
    assert (inj["status"], inj["gate"], inj["reason"]) == ("excluded", "injection", "instruction_like_text")
    assert (stale["status"], stale["gate"]) == ("excluded", "freshness")
    assert (other["status"], other["gate"]) == ("withheld", "tenant")
    raw = runs / "tool-results" / "raw" / ok["raw"]["sha256"]
    assert raw.read_bytes() == (AGENT / "raw" / "pool-metrics.json").read_bytes()

    ids = [r["result_id"] for r in (ok, inj, stale, other)]
    inv, bad = _call(_params(store, runs), [
        ("tool", "investigate", {"case": "INC-2026-0723", "tool_results": ids, "include_messages": True}),
        ("tool", "investigate", {"case": "INC-2026-0723", "tool_results": ["tr-000000000000"]})])
    res = _structured(inv)
    assert [t["result_id"] for t in res["tool_results"]] == [ok["result_id"]]
    assert sorted(o["gate"] for o in res["tool_omissions"]) == ["freshness", "injection", "tenant"]
    text = json.dumps(res["messages"])
    assert f"<<<TOOL_RESULT {ok['result_id']}" in res["messages"][1]["content"]
    assert INJECTED not in text.lower() and "roll forward" not in text
    assert other["result_id"][3:] not in json.dumps(res)   # a withheld one only by keyed reference
    assert bad.is_error and "unknown tool result tr-000000000000" in bad.content[0].text
    pack = json.loads((runs / res["pack_id"] / "pack.json").read_text())
    assert INJECTED not in (runs / res["pack_id"] / "pack.json").read_text().lower()
    assert pack["tool_results"][0]["raw"]["location"] == f"tool-results/raw/{ok['raw']['sha256']}"


def test_state_version_is_recorded_and_an_older_pack_is_stale(store, tmp_path):
    out, pack = _run(tmp_path, extra=["--state-version", "3"])
    assert pack["state_version"] == "3"
    same = run_cli(["replay", out / "pack.json", "--state-version", "3"])
    assert same.exit_code == 0 and "current: built for state_version 3; the current state is 3" in same.output
    newer = run_cli(["replay", out / "pack.json", "--state-version", "4", "--json"])
    assert newer.exit_code == 1
    doc = json.loads(newer.stdout)
    assert doc["status"] == "identical" and doc["state"] == {
        "recorded": "3", "current": "4", "stale": True,
        "sentence": "stale: the pack was built for state_version 3; the current state is 4"}
    _, none = _run(tmp_path / "n")
    r = run_cli(["replay", tmp_path / "n" / "o" / "pack.json", "--state-version", "1"])
    assert r.exit_code == 1 and "stale: the pack records no state_version" in r.output


def test_replay_over_mcp_says_when_a_pack_is_stale_for_the_agents_state(store, tmp_path):
    from .test_serve import _call, _params, _structured

    runs = tmp_path / "runs"
    (inv,) = _call(_params(store, runs), [("tool", "investigate", {"case": "INC-2026-0723"})])
    pid = _structured(inv)["pack_id"]
    (rep,) = _call(_params(store, runs), [("tool", "replay", {"pack_id": pid, "state_version": "2"})])
    res = _structured(rep)
    assert res["status"] == "identical" and res["state"]["stale"] is True
    assert res["state"]["sentence"] == "stale: the pack records no state_version"


# ------------------------------------------------------------------------------ issue 45 item 2
def test_a_tool_result_naming_an_object_the_subject_may_not_see_is_withheld(store, tmp_path):
    """No scopes, the run's own tenant, but its record ids name another tenant's incident: ctx
    knows that object, so the result is withheld like it — labels narrow, never widen."""
    raw = tmp_path / "r.json"
    raw.write_text('{"rows": ["STORE_002 333777000"]}')

    def result(name, rid, fact, records=True):
        f = tmp_path / f"{name}.yaml"
        f.write_text(f"""tool: sales.query
version: "1"
arguments: {{store: {rid}}}
tenant_id: tenant-demo
observed_at: "2026-07-23T10:20:00+08:00"
raw: {{path: r.json}}
shaped:
  facts: {{revenue: "{fact}"}}
  record_ids: [{rid if records else ""}]
""")
        return f

    out, pack = _run(tmp_path, result("mine", "INC-2026-0723-TL-01", "STORE_001 420"),
                     result("theirs", "OTH-INC-2026-0723", "STORE_002 333777000"),
                     result("scoped", "INC-2026-0723-SEC-01", "STORE_002 333777000"),
                     result("args", "OTH-INC-2026-0723", "STORE_002 333777000", records=False))
    assert [i["record_ids"] for i in pack["tool_results"]] == [["INC-2026-0723-TL-01"]]
    assert [(o["gate"], o["reason"], o["withheld"], o["detail"]) for o in pack["tool_omissions"]] == [
        ("tenant", "names_withheld_object", True, {})] * 2 + [("scope", "names_withheld_object", True, {})]
    assert all(o["ref"].startswith("wh-") and len(o["ref"]) == 19 for o in pack["tool_omissions"])
    for f in sorted(out.iterdir()):
        body = f.read_text()
        assert "STORE_002" not in body and "333777000" not in body and "OTH-INC" not in body, f.name
        assert "SEC-01" not in body, f.name


@pytest.mark.parametrize("make, says", [
    (lambda d: "/etc/passwd", "the raw result /etc/passwd is outside the tool result's folder and the project"),
    (lambda d: "../outside.json", "the raw result ../outside.json is outside the tool result's folder and the "
                                  "project"),
    (lambda d: "/dev/zero", "the raw result /dev/zero is outside the tool result's folder and the project"),
    (lambda d: (os.mkfifo(d / "pipe.json"), "pipe.json")[1], "cannot read the raw result pipe.json: not a regular "
                                                             "file (a FIFO)"),
    (lambda d: ((d / "sub").mkdir(), "sub")[1], "cannot read the raw result sub: not a regular file (a folder)"),
    (lambda d: ((d / "link.json").symlink_to("/etc/hostname"), "link.json")[1],
     "cannot read the raw result link.json: a symbolic link (not followed)"),
])
def test_a_raw_path_reads_only_a_regular_file_beside_the_tool_result(store, tmp_path, make, says):
    """Item 7 of issue 46: raw.path never hangs on a FIFO, never reads /dev/zero, and records
    nothing (path, size, digest) of a host file outside the tool result's folder and the project."""
    d = tmp_path / "calls"
    d.mkdir()
    (tmp_path / "outside.json").write_text("{}")
    given = make(d)
    f = d / "t.yaml"
    f.write_text("tool: x\nversion: '1'\ntenant_id: tenant-demo\nobserved_at: '2026-07-23T10:00:00+08:00'\n"
                 f"raw: {{path: {given}}}\nshaped: {{}}\n")
    r = run_cli(["investigate", "INC-2026-0723", "--tool-result", f, "--out", tmp_path / "o"])
    assert r.exit_code == 2, r.output
    assert r.output.strip() == f"ctx: error: {f}: raw.path: {says}", r.output
    assert not (tmp_path / "o").exists()
    # the same file beside the tool result is read, hashed and recorded by the path given
    (d / "rows.json").write_text('[{"a": 1}]')
    f.write_text(f.read_text().replace(f"path: {given}", "path: rows.json"))
    r = run_cli(["investigate", "INC-2026-0723", "--tool-result", f, "--out", tmp_path / "ok"])
    assert r.exit_code == 0, r.output
    (tr,) = json.loads((tmp_path / "ok" / "pack.json").read_text())["tool_results"]
    assert tr["raw"]["location"] == "rows.json" and tr["raw"]["size"] == 10


def _retail(tmp_path, bundled_store, monkeypatch):
    """The issue's retail loop in a private store: STORE_001 and STORE_002 of the run's tenant,
    STORE_002's sales needing a scope the STORE_001 manager lacks; MRT (3 characters, withheld) and
    KIOSK_9 with one visible and one withheld object."""
    import duckdb

    db = tmp_path / "retail.duckdb"
    shutil.copy(bundled_store, db)
    con = duckdb.connect(str(db))
    rows = [("STORE_001", "SALES-STORE_001-2026-08", ["incident:read"]),
            ("STORE_002", "SALES-STORE_002-2026-08", ["incident:read", "security:read"]),
            ("MRT", "SALES-MRT-2026-08", ["incident:read", "security:read"]),
            ("KIOSK_9", "SALES-KIOSK_9-A", ["incident:read"]),
            ("KIOSK_9", "SALES-KIOSK_9-B", ["incident:read", "security:read"])]
    for i, (key, oid, scopes) in enumerate(rows):
        con.execute("INSERT INTO entities VALUES (?, 'tenant-demo', ?, 'store', ?, [], 'retail')",
                    [900000 + i, key, key])
        con.execute("INSERT INTO objects SELECT * REPLACE (? AS object_id, ? AS subject_id, ? AS required_scopes,"
                    " ? AS content, ? AS doc_id) FROM objects WHERE object_id = 'INC-2026-0723-TL-01'",
                    [oid, key, scopes, f"revenue {333777000 if key == 'STORE_002' else 420} VND", 900000 + i])
    con.close()
    monkeypatch.setenv("CTX_DB", str(db))


def _retail_result(tmp_path, name, args="", fact="420"):
    (tmp_path / "r.json").write_text('{"rows": []}')
    f = tmp_path / f"{name}.yaml"
    f.write_text(f"""tool: sales.query
version: "1"
arguments: {{{args}}}
tenant_id: tenant-demo
observed_at: "2026-07-23T10:20:00+08:00"
raw: {{path: r.json}}
shaped:
  facts: {{revenue: "{fact}", notes: ["{fact}"]}}
""")
    return f


def test_a_tool_result_naming_an_entity_the_subject_may_not_see_is_withheld(bundled_store, tmp_path, monkeypatch):
    """Issue 45 item 2: a result naming STORE_002 (in its arguments or a shaped fact) is
    withheld like STORE_002's objects; STORE_001, a 3-character name, a name inside a longer
    token and an entity with one visible object are admitted; an entity only of another tenant
    withholds by tenant."""
    _retail(tmp_path, bundled_store, monkeypatch)
    out, pack = _run(tmp_path, _retail_result(tmp_path, "args", "store: STORE_002"),
                     _retail_result(tmp_path, "fact", fact="store_002 revenue 333777000 VND"),
                     _retail_result(tmp_path, "mine", "store: STORE_001", "STORE_001 revenue 420"),
                     _retail_result(tmp_path, "short", "store: MRT", "MRT 1"),
                     _retail_result(tmp_path, "longer", "store: XSTORE_002", "STORE_0021 2"),
                     _retail_result(tmp_path, "kiosk", "store: KIOSK_9", "KIOSK_9 3"),
                     _retail_result(tmp_path, "gateway", fact="ledger-api 5"))    # only tenant-gateway's
    assert [i["facts"]["revenue"] for i in pack["tool_results"]] == ["STORE_001 revenue 420", "MRT 1",
                                                                     "STORE_0021 2", "KIOSK_9 3"]
    assert sorted((o["gate"], o["reason"], o["withheld"], o["detail"]) for o in pack["tool_omissions"]) == [
        ("scope", "names_withheld_object", True, {})] * 2 + [("tenant", "names_withheld_object", True, {})]
    assert all(o["ref"].startswith("wh-") and len(o["ref"]) == 19 for o in pack["tool_omissions"])
    for f in sorted(out.rglob("*")):
        if f.is_file():
            body = f.read_text()
            assert "333777000" not in body and not re.search(r"(?<!\w)store_002(?!\w)", body, re.I), f.name
