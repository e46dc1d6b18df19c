"""ctx eval --repeat (issue 52 item 5): stability across repeated runs, the model's spread, and
tool results and model calls counted per run."""

from __future__ import annotations

import copy
import json

from ctxcli import api
from ctxcli.evaluate.metrics import model_spread, signature, stability

from .conftest import REPO, run_cli

INC_AGENT = REPO / "examples" / "agent" / "INC-2026-0723"


def test_a_deterministic_case_is_stable_across_repeats_and_counts_its_calls(store, tmp_path):
    out = tmp_path / "rep.json"
    r = run_cli(["eval", "--repeat", "3", "--case", "C-102", "--variant", "base", "--out", out])
    assert r.exit_code == 0, r.output
    doc = json.loads(out.read_text())
    assert doc["repeat"] == 3
    (run,) = doc["runs"]
    assert run["stability"] == {"repeats": 3, "distinct": {"verdict": 1, "action": 1, "claims": 1, "pack": 1},
                                "stable": True}
    assert run["calls"] == {"tool_results": 0, "model": 0}
    assert {k: doc["summary"]["dynamic"][k] for k in ("tool_calls", "model_calls", "unstable_runs")} == {
        "tool_calls": 0, "model_calls": 0, "unstable_runs": 0}
    assert "unstable across 3 runs: 0/1" in run_cli(["eval", "--repeat", "3", "--case", "C-102",
                                                     "--variant", "base"]).stdout.replace("\n", " ")
    one = json.loads(run_cli(["eval", "--case", "C-102", "--variant", "base", "--json"]).stdout)
    assert "stability" not in one["runs"][0] and one["repeat"] == 1


def test_a_run_that_changes_when_repeated_fails_and_says_what_changed(store, monkeypatch):
    """A gated run whose pack differs on the second run is unstable: it fails, the diagnosis names
    the check, and the exit code is 1; an ungated (topk) one is reported, not failed for it."""
    real = api.investigate
    calls = {"n": 0}

    def flaky(opts):
        res = real(opts)
        calls["n"] += 1
        if calls["n"] % 2 == 0:
            res.pack = copy.deepcopy(res.pack)
            res.pack["evidence"][0]["rrf"] += 1e-9
        return res

    monkeypatch.setattr(api, "investigate", flaky)
    from ctxcli import evaluate as E

    rep = E.run(E.EvalOptions(strategies=("dynamic", "topk"), cases=("C-102",), variants=("base",), repeat=2))
    dyn, topk = rep.runs
    assert dyn["stability"]["distinct"] == {"verdict": 1, "action": 1, "claims": 1, "pack": 2}
    assert dyn["passed"] is False and rep.exit_code == 1
    check = dyn["failed_checks"][-1]
    assert (check["check"], check["ids"], check["message"]) == ("stable_across_repeats", ["pack"],
                                                                "pack differed across 2 runs")
    assert dyn["diagnosis"]["layer"] == "builder"
    assert any("stable_across_repeats" in x for x in dyn["diagnosis"]["reasons"])
    assert topk["stability"]["stable"] is False and "stable_across_repeats" not in json.dumps(topk["failed_checks"])
    assert rep.summary()["dynamic"]["unstable_runs"] == 1


def test_signature_and_spread():
    pack, ans = {"a": 1}, {"verdict": "partial", "recommended_action": {"action": "x"}, "claims": [{"c": 1}]}
    s = signature(pack, ans)
    assert stability([s, dict(s)])["stable"] is True
    moved = signature(pack, dict(ans, claims=[{"c": 2}]))
    assert stability([s, moved])["distinct"] == {"verdict": 1, "action": 1, "claims": 2, "pack": 1}
    assert signature({"a": 2}, ans)["pack"] != s["pack"]
    rows = [{"status": "accepted", "verdict_agrees": True, "action_agrees": True},
            {"status": "rejected", "verdict_agrees": False, "action_agrees": True},
            {"status": "accepted", "verdict_agrees": True, "action_agrees": False}]
    assert model_spread(rows) == {"asks": 3, "status": {"accepted": 2, "rejected": 1},
                                  "verdict_agrees": 0.6667, "action_agrees": 0.6667}


def test_tool_results_of_a_case_are_counted(project_copy):
    """A case given two tool results (its ``inputs``) counts two, whatever the gates made of them."""
    from ctxcli import evaluate as E

    case = project_copy / "examples" / "cases" / "INC-2026-0723.yaml"
    case.write_text(case.read_text(encoding="utf-8").replace("\nvariants:\n", "\ninputs:\n  tool_results:\n"
                    "    - examples/agent/INC-2026-0723/01-pool-metrics.yaml\n"
                    "    - examples/agent/INC-2026-0723/02-ticket-search.yaml\nvariants:\n", 1), encoding="utf-8")
    rep = E.run(E.EvalOptions(cases=("INC-2026-0723",), variants=("base",)))
    (run,) = rep.runs
    assert run["calls"] == {"tool_results": 2, "model": 0}
    assert rep.summary()["dynamic"]["tool_calls"] == 2
