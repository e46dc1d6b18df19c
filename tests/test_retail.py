"""The retail loop of issue 45 (examples/agent/retail/, a project of its own): recalled memory
that contradicts admitted evidence is packed only as a conflict; a tool result too big for its
room is shaped further when the registry allows it; the whole loop through the CLI and MCP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run_cli

TENANT = ["--tenant", "tenant-retail", "--subject", "manager-store-001"]
AT = "2026-09-01T09:00:00+07:00"
CAUSE = "Advertising caused the August profit fall at STORE_001."
WRONG = "STORE_001 profit in 2026-08 was 350,000,000 VND."
RIGHT = "STORE_001 profit in 2026-08 was 300,000,000 VND."
HEDGED = "Advertising may have caused the August profit fall at STORE_001."


def _remember(mem: Path, text: str) -> str:
    r = run_cli(["remember", text, *TENANT, "--ttl", "30d", "--reviewed-by", "finance-lead", "--at", AT,
                 "--memories", mem, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["memory_id"]


def _investigate(out: Path, *extra) -> dict:
    r = run_cli(["investigate", "RETAIL-0902", "--out", out, *extra])
    assert r.exit_code == 0, r.output
    return json.loads((out / "pack.json").read_text())


def _ev(pack: dict, object_id: str) -> str:
    return next(i["evidence_id"] for i in pack["evidence"] if i["object_id"] == object_id)


def test_a_memory_that_contradicts_the_evidence_is_packed_only_as_a_conflict(retail, tmp_path):
    mem = tmp_path / "mem"
    cause, wrong, right, hedged = (_remember(mem, t) for t in (CAUSE, WRONG, RIGHT, HEDGED))
    out = tmp_path / "o"
    pack = _investigate(out, "--recall", "--memories", mem)
    analysis, jul, aug = (_ev(pack, o) for o in ("AN-STORE_001-2026-08-ADS", "LEDGER-STORE_001-2026-07",
                                                 "LEDGER-STORE_001-2026-08"))
    # what agrees with the evidence (or keeps its hedge) stays a memory
    assert sorted(r["memory_id"] for r in pack["episodic_memory"]) == sorted([right, hedged])
    assert {c["memory_id"]: c["conflict"] for c in pack["memory_conflicts"]} == {
        cause: {"code": "status_upgraded", "status": "fact", "evidence": [analysis]},
        wrong: {"code": "value_differs", "field": "profit", "given": "350000000",
                "admitted": ["300000000", "400000000"], "evidence": sorted([jul, aug])}}
    assert {c["trust_level"] for c in pack["memory_conflicts"]} == {"contradicted_memory"}
    names = [s["section"] for s in pack["slots"]["sections"]]
    assert names.index("episodic_memory") + 1 == names.index("conflicts") < names.index("gaps_and_exclusions")
    # the reason is in the trace, one event per record
    events = [json.loads(x) for x in (out / "trace.jsonl").read_text().splitlines()]
    assert sorted((e["ref"], e["reason"]) for e in events if e["event"] == "input_conflict") == sorted(
        [(cause, "status_upgraded"), (wrong, "value_differs")])
    assert {e["ref"] for e in events if e["event"] == "input_admitted"
            and e["section"] == "episodic_memory"} == {right, hedged}
    # rendered only under the conflict rule, never among the memories
    r = run_cli(["render", out / "pack.json", "--format", "markdown"])
    memories, conflicts = r.output.split("## Memories", 1)[1].split("## Conflicts", 1)
    assert CAUSE not in memories and WRONG not in memories and RIGHT in memories
    conflicts = conflicts.split("## Known gaps", 1)[0]
    assert CAUSE in conflicts and WRONG in conflicts and RIGHT not in conflicts
    assert f"conflict: value_differs: profit 350000000 given; {', '.join(sorted([jul, aug]))} hold(s) " \
           "300000000, 400000000" in conflicts
    assert f"conflict: status_upgraded: states as fact a cause that {analysis} hold(s) unverified" in conflicts
    assert run_cli(["replay", out / "pack.json"]).exit_code == 0


def test_a_memory_is_read_only_against_evidence_the_subject_may_see(retail, tmp_path):
    """STORE_002's ledger is not admitted for this subject: a memory naming STORE_002's profit has
    nothing to contradict and stays a memory (nothing of STORE_002's ledger is compared or shown)."""
    mem = tmp_path / "mem"
    other = _remember(mem, "STORE_002 profit in 2026-08 was 1 VND.")
    exact = _remember(mem, "STORE_001 profit in 2026-08 was 300000000.0 VND.")
    pack = _investigate(tmp_path / "o", "--recall", "--memories", mem)
    assert sorted(r["memory_id"] for r in pack["episodic_memory"]) == sorted([other, exact])
    assert "memory_conflicts" not in pack
    assert "450000000" not in (tmp_path / "o" / "pack.json").read_text()


LEDGER = {"evidence_id": "ev-l", "object_id": "LEDGER-ST1-08", "subject_id": "store:ST1",
          "facts": {"profit": 300, "owner_team": "team-red"}, "text": "Ledger of ST1."}
NOTE = {"evidence_id": "ev-n", "object_id": "AN-ST1", "subject_id": "store:ST1", "facts": {"verified": False},
        "text": "Advertising spend may have caused the profit fall at ST1."}
VISITS = {"evidence_id": "ev-v", "object_id": "VISITS-ST1", "subject_id": "store:ST1", "facts": {},
          "text": "Footfall possibly fell in August at ST1."}


@pytest.mark.parametrize("text,code", [
    ("ST1 profit was 300.", None),
    ("ST1 profit was 301.", "value_differs"),
    ("ST2 profit was 301.", None),                                  # another entity: nothing to contradict
    ("ST1 profit fell 25 %.", None),                                # no value bound to the field
    ("ST1 is owned by team-red.", None),
    ("ST1 is owned by team-blue.", "misbound_entity"),
    ("Advertising caused the profit fall at ST1.", "status_upgraded"),
    ("Advertising may have caused the profit fall at ST1.", None),
    ("Footfall fell in August at ST1.", "hedge_dropped"),
    ("Footfall possibly fell in August at ST1.", None),
])
def test_each_conflict_check_on_both_sides(text, code):
    from ctxcli.agents.conflicts import conflict

    got = conflict(text, [LEDGER, NOTE, VISITS])
    assert (got or {}).get("code") == code


OBSERVED = "2026-09-02T09:00:00+07:00"
COMPARE = [f"{a}.{c}[month=2026-08 vs 2026-07]" for a in ("cost", "profit", "revenue") for c in ("change", "pct_change")]
NO_ROWS = sorted(COMPARE + [f"{a}[month=2026-0{m}]" for a in ("cost", "profit", "revenue") for m in (7, 8)])


def _shaped(retail: Path, tmp_path: Path) -> Path:
    """The sales tool's 5,000 rows shaped by ctx, beside a copy of the rows (so the raw location,
    and the tokens, are the same in every test folder)."""
    import shutil

    out = tmp_path / "sales-shaped.json"
    raw = shutil.copy(retail / "sales-store_001-2026-07-08.csv", tmp_path)
    r = run_cli(["tool-result", "shape", raw, "--tool", "sales.query",
                 "--tenant", "tenant-retail", "--observed-at", OBSERVED, "--out", out])
    assert r.exit_code == 0, r.output
    return out


@pytest.mark.parametrize("budget,facts,steps", [
    (2300, 16, None),               # fits as shaped
    (2200, NO_ROWS, 1),             # the registry's first fit: the row counts go
    (2100, COMPARE, 2),             # its second: only August vs July
    (1900, None, 684),              # no fit step makes it fit after required evidence: omitted over_budget
    (1700, None, 440),              # the gate already shaped it to fit the slot; required evidence left less
])
def test_a_tool_result_too_big_for_its_room_is_shaped_further_as_the_registry_allows(
        retail, tmp_path, budget, facts, steps):
    shaped = _shaped(retail, tmp_path)
    out = tmp_path / "o"
    pack = _investigate(out, "--tool-result", shaped, "--budget", budget)
    # required evidence first, whatever becomes of the tool result
    assert [i["object_id"] for i in pack["evidence"]][:1] == ["LEDGER-STORE_001-2026-07"]
    if facts is None:
        assert pack["tool_results"] == []
        assert [(o["reason"], o["detail"]["after"], o["detail"]["tokens"]) for o in pack["tool_omissions"]] == [
            ("over_budget", "required_evidence", steps)]
        return
    [t] = pack["tool_results"]
    assert pack["tool_omissions"] == []
    if steps is None:
        assert len(t["facts"]) == facts and "shaped_further" not in t
        return
    assert sorted(t["facts"]) == facts and t["verified_facts"] == sorted(facts)
    assert t["shaped_further"] == {"steps": steps, "facts_given": 16, "facts_kept": len(facts), "tokens_before": 684}
    assert t["limitations"][-1] == f"shaped further by ctx to fit its room: {len(facts)} of 16 facts kept"
    assert t["facts"]["profit.pct_change[month=2026-08 vs 2026-07]"] == -25
    events = [json.loads(x) for x in (out / "trace.jsonl").read_text().splitlines()]
    assert [e["shaped_further"] for e in events if e["event"] == "input_admitted"
            and e["section"] == "tool_results"] == [t["shaped_further"]]
    r = run_cli(["render", out / "pack.json", "--format", "markdown"])
    assert f"- shaped further by ctx to fit its room: {len(facts)} of 16 facts kept" in r.output
    assert run_cli(["replay", out / "pack.json"]).exit_code == 0


def test_without_fit_steps_a_result_too_big_is_omitted_over_budget(retail, tmp_path, monkeypatch):
    from ctxcli.agents import registry as reg

    read = reg.read_registry

    def no_fit(*a, **kw):
        r = read(*a, **kw)
        return r.model_copy(update={"tools": [t.model_copy(update={"fit": []}) for t in r.tools]})

    monkeypatch.setattr(reg, "read_registry", no_fit)
    pack = _investigate(tmp_path / "o", "--tool-result", _shaped(retail, tmp_path), "--budget", 2200)
    assert pack["tool_results"] == []
    assert [(o["reason"], o["detail"]["after"]) for o in pack["tool_omissions"]] == [
        ("over_budget", "required_evidence")]


@pytest.mark.parametrize("fit", ["[{facts: [revenue], only: compare}]", "[{}]", "[{only: rows}]", "[{rows: -1}]"])
def test_a_bad_fit_step_is_one_line_exit_2_naming_it(tmp_path, fit):
    reg = tmp_path / "tools.yaml"
    reg.write_text("tools:\n  - name: t.q\n    shape: {aggregates: [{name: n, op: count}]}\n    fit: " + fit + "\n")
    (tmp_path / "raw.json").write_text("[]")
    r = run_cli(["tool-result", "shape", tmp_path / "raw.json", "--tool", "t.q", "--registry", reg,
                 "--tenant", "t", "--observed-at", OBSERVED])
    line = r.output.strip()
    assert r.exit_code == 2 and "\n" not in line and line.startswith(f"ctx: error: {reg}:4:") and ": tools.0.fit.0" in line, line


# ------------------------------------------------------------------------------ the whole loop
SECRET = ("STORE_002", "450000000", "1870000000", "HR-STORE_001", "payroll", "515000000",
          "HR-CONFIDENTIAL", "overtime")


def _never_secret(folder: Path) -> None:
    for f in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix != ".csv"):
        body = f.read_text(encoding="utf-8", errors="replace")
        for s in SECRET:
            assert s not in body, (f, s)


def _project(retail_project: Path, dst: Path, monkeypatch) -> Path:
    """A private copy of the loaded retail project (the loop writes runs and a ledger into it)."""
    import shutil

    shutil.copytree(retail_project, dst)
    monkeypatch.setenv("CTX_ROOT", str(dst))
    monkeypatch.setenv("CTX_DB", str(dst / ".ctx" / "ctx.duckdb"))
    return dst


def test_the_retail_loop_through_the_cli(retail_project, tmp_path, monkeypatch):
    """The article's loop through the CLI (the investigation in a real `ctx` process): 5,000 raw
    rows shaped into verified aggregates, the hypothesis kept a hypothesis (the memory that
    hardens it is a conflict only), a model answer checked, a handoff with provenance — and
    nothing of STORE_002 or the HR data in any file."""
    import os
    import subprocess
    import sys

    from .test_ask import KEY, Server, reply

    proj = _project(retail_project, tmp_path / "proj", monkeypatch)
    agent = proj / "agent"
    agent.mkdir()
    shaped = _shaped(proj, agent)
    _remember(agent / "mem", CAUSE)
    env = {**os.environ, "CTX_ROOT": str(proj), "CTX_DB": str(proj / ".ctx" / "ctx.duckdb"), "NO_COLOR": "1"}
    r = subprocess.run([sys.executable, "-m", "ctxcli.cli.main", "investigate", "RETAIL-0902", "--tool-result",
                        str(shaped), "--recall", "--memories", str(agent / "mem"), "--out", str(proj / "runs" / "cli"),
                        "--json"], cwd=proj, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    run = proj / "runs" / "cli"
    pack = json.loads((run / "pack.json").read_text())
    answer = json.loads((run / "answer.json").read_text())
    [t] = pack["tool_results"]
    assert t["raw"]["rows"] == 5000 and t["trust_level"] == "authoritative"
    assert t["verified_facts"] == sorted(t["facts"]) and t["unverified_facts"] == []
    assert {k: t["facts"][k] for k in ("revenue.pct_change[month=2026-08 vs 2026-07]",
                                       "cost.pct_change[month=2026-08 vs 2026-07]",
                                       "profit.pct_change[month=2026-08 vs 2026-07]")} == {
        "revenue.pct_change[month=2026-08 vs 2026-07]": 15, "cost.pct_change[month=2026-08 vs 2026-07]": 25,
        "profit.pct_change[month=2026-08 vs 2026-07]": -25}
    assert "cost breakdown not available" in t["limitations"]
    assert {c["claim_id"]: c["status"] for c in answer["claims"]} == {"august_profit": "fact",
                                                                     "suspected_cause": "hypothesis"}
    assert pack["episodic_memory"] == [] and [c["conflict"]["code"] for c in pack["memory_conflicts"]] == [
        "status_upgraded"]
    assert [(m["type"], m["reason"]) for m in pack["missing"]] == [("cost_breakdown", "not_found"),
                                                                  ("staff_costs", "withheld_for_access")]
    # the model restates the answer, the hypothesis as a hypothesis: accepted
    ans = {"verdict": answer["verdict"], "recommended_action": answer["recommended_action"]["action"],
           "summary": "Profit fell although revenue rose; the cause is not established.",
           "claims": [{"text": c["text"], "status": c["status"], "evidence": c["evidence"]} for c in answer["claims"]]}
    (tmp_path / "model").mkdir()
    srv = Server(tmp_path / "model", {"responses": [reply(ans)], "key": KEY})
    try:
        monkeypatch.setenv("CTX_MODEL_API_KEY", KEY)
        r = run_cli(["ask", run, "--endpoint", srv.url, "--model", "test-model", "--out", proj / "runs" / "asked"])
        assert r.exit_code == 0, r.output
    finally:
        srv.stop()
    assert json.loads((proj / "runs" / "asked" / "model_answer.json").read_text())["status"] == "accepted"
    # the handoff: findings with their evidence and objects; the hypothesis only as an uncertainty
    r = run_cli(["handoff", run, "--out", agent / "handoff.json"])
    assert r.exit_code == 0, r.output
    doc = json.loads((agent / "handoff.json").read_text())
    [f] = doc["findings"]
    aug = _ev(pack, "LEDGER-STORE_001-2026-08")
    assert (f["claim_id"], f["evidence"], f["objects"]) == ("august_profit", [aug], ["LEDGER-STORE_001-2026-08"])
    assert [(u["claim_id"], u["status"]) for u in doc["uncertainties"]["claims"]] == [("suspected_cause", "hypothesis")]
    r = run_cli(["receive-handoff", agent / "handoff.json", "--case", "RETAIL-0902"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    assert [x["claim_id"] for x in got["findings"]] == ["august_profit"] and got["dropped"] == []
    (agent / "received.json").write_text(r.stdout)
    _never_secret(proj / "runs")
    _never_secret(agent)


IDENTITY = ["--tenant", "tenant-retail", "--subject", "manager-store-001", "--scope", "finance:read", "--scope",
            "store:STORE_001", "--purpose", "store_review"]


def test_the_retail_loop_through_mcp(retail_project, tmp_path, monkeypatch):
    """The same loop as an agent drives it over MCP with the SDK's own client: ctx shapes the
    raw rows it is handed, each step gets its own context, the memory that hardens the
    hypothesis stays a conflict, the handoff passes on its finding — nothing of STORE_002 or the
    HR data in any result or file."""
    pytest.importorskip("mcp")
    import os
    import sys

    import anyio

    from .test_serve import _all_text, _structured

    from mcp.client.stdio import StdioServerParameters

    proj = _project(retail_project, tmp_path / "proj", monkeypatch)
    runs = proj / "runs" / "serve"
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "ctxcli.cli.main", "serve", "--runs", str(runs), *IDENTITY],
        cwd=str(proj),
        env={"CTX_ROOT": str(proj), "CTX_DB": str(proj / ".ctx" / "ctx.duckdb"), "NO_COLOR": "1",
             "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    case = "RETAIL-0902"
    raw = (proj / "sales-store_001-2026-07-08.csv").read_text()
    seen: list = []

    async def loop():
        from mcp import Client

        async with Client(server, read_timeout_seconds=120) as c:
            async def call(name: str, args: dict) -> dict:
                res = await c.call_tool(name, args)
                seen.append(res)
                return _structured(res)

            added = await call("add_tool_result", {"case": case, "tool": "sales.query", "observed_at": OBSERVED,
                                                   "raw": raw})
            await call("remember", {"case": case, "text": CAUSE, "ttl": "30d", "reviewed_by": "finance-lead",
                                    "at": AT})
            one = await call("build_context", {"case": case, "types": ["monthly_ledger"]})
            two = await call("build_context", {"case": case, "types": ["prior_analysis", "cost_breakdown",
                                                                       "staff_costs"],
                                               "held": [i["evidence_id"] for i in one["items"]],
                                               "tool_results": [added["result_id"]], "recall": True})
            inv = await call("investigate", {"case": case, "tool_results": [added["result_id"]], "recall": True})
            doc = await call("handoff", {"pack_id": inv["pack_id"]})
            got = await call("build_context", {"case": case, "types": ["cost_breakdown"], "handoff": doc})
            adhoc = await call("build_context", {"playbook": "store-margin-review", "seeds": ["store:STORE_001"],
                                                 "as_of": "2026-09-02T10:00:00+07:00",
                                                 "types": ["staff_costs", "cost_breakdown"]})
            return added, one, two, inv, doc, got, adhoc

    added, one, two, inv, doc, got, adhoc = anyio.run(loop)
    rid = added["result_id"]
    # ctx shaped the raw rows it was handed: verified aggregates, the rows kept by reference
    assert added["raw"]["rows"] == 5000 and (added["status"], added["trust"]) == ("admitted", "authoritative")
    assert added["shaped"]["facts"]["profit.pct_change[month=2026-08 vs 2026-07]"] == -25
    assert added["shaped"]["verified"] is True
    # each step sees its own context
    assert [i["object_id"] for i in one["items"]] == ["LEDGER-STORE_001-2026-07", "LEDGER-STORE_001-2026-08"]
    assert [i["object_id"] for i in two["items"]] == ["AN-STORE_001-2026-08-ADS"]
    assert (one["covered_types"], two["covered_types"]) == (["monthly_ledger"], ["prior_analysis"])
    assert two["missing_types"] == ["cost_breakdown", "staff_costs"]
    assert [t["result_id"] for t in two["tool_results"]] == [rid] and "tool_results" not in one
    assert two["memory"]["episodic_memory"] == [] and [c["reason"] for c in two["memory"]["conflicts"]] == [
        "status_upgraded"]
    steps = {s: json.loads((runs / s / "step.json").read_text()) for s in (one["step_id"], two["step_id"])}
    assert steps[one["step_id"]]["evidence"] != steps[two["step_id"]]["evidence"]
    # the whole case: the hypothesis stays a hypothesis; the handoff carries the ledger finding
    assert {c["claim_id"]: c["status"] for c in inv["claims"]} == {"august_profit": "fact",
                                                                  "suspected_cause": "hypothesis"}
    assert [(f["claim_id"], f["objects"]) for f in doc["findings"]] == [("august_profit", ["LEDGER-STORE_001-2026-08"])]
    received = got["handoff"]
    assert [f["claim_id"] for f in received["findings"]] == ["august_profit"] and received["dropped"] == []
    # a step, ad hoc or not, says why each type it needs is missing, as investigate does
    assert [(m["type"], m["reason"]) for m in inv["missing_types"]] == [("cost_breakdown", "not_found"),
                                                                       ("staff_costs", "withheld_for_access")]
    assert adhoc["case_id"].startswith("adhoc-") and adhoc["missing_types"] == ["cost_breakdown", "staff_costs"]
    assert adhoc["gaps"] == [
        {"type": "cost_breakdown", "required": True, "reason": "not_found"},
        {"type": "staff_costs", "required": False, "reason": "withheld_for_access",
         "withheld": {"count": 1, "needs_scopes": ["hr:read"], "allowed_purposes": [], "by_gate": {"scope": 1}}}]
    assert two["gaps"] == adhoc["gaps"]
    text = _all_text(seen)
    for s in SECRET:
        assert s not in text, s
    _never_secret(runs)


def test_the_retail_projects_registry_is_the_examples_tools_yaml():
    from .conftest import REPO

    here = REPO / "examples" / "agent" / "retail"
    assert (here / "manifests" / "tools.yaml").read_bytes() == (here / "tools.yaml").read_bytes()
