"""Handoffs between agents (issue 34 item 4): ctx handoff writes findings bound to evidence,
open uncertainties and the next step; another agent's build_context re-gates it for its own
subject and never carries what that subject may not see."""

from __future__ import annotations

import json

from .conftest import run_cli


def _handoff(tmp_path):
    assert run_cli(["investigate", "INC-2026-0723", "--out", tmp_path / "run"]).exit_code == 0
    r = run_cli(["handoff", tmp_path / "run", "--out", tmp_path / "handoff.json"])
    assert r.exit_code == 0, r.output
    assert "4 finding(s), 2 open claim(s), next step request_connection_config_diff" in r.output
    return json.loads((tmp_path / "handoff.json").read_text())


def test_handoff_binds_findings_to_evidence_and_says_whom_it_is_for(store, tmp_path):
    doc = _handoff(tmp_path)
    pack = json.loads((tmp_path / "run" / "pack.json").read_text())
    ev = {e["evidence_id"]: e["object_id"] for e in pack["evidence"]}
    assert [f["claim_id"] for f in doc["findings"]] == ["release_timing", "competing_change_timing",
                                                          "owner_at_incident", "runbook_at_incident"]
    for f in doc["findings"]:
        assert f["status"] in ("fact", "inference") and f["evidence"]
        assert f["objects"] == sorted({ev[e] for e in f["evidence"]})
    assert [c["status"] for c in doc["uncertainties"]["claims"]] == ["hypothesis", "unknown"]
    assert [m["type"] for m in doc["uncertainties"]["missing_types"]] == [
        "root_cause_analysis", "rollback_comparison", "connection_config_diff"]
    assert doc["valid_for"]["subject"] == "oncall-03" and doc["valid_for"]["purpose"] == "incident_review"
    assert doc["next_step"] == {"action": "request_connection_config_diff", "side_effect": "none"}
    # --out replaces only an earlier handoff; stdout gives the same document
    assert run_cli(["handoff", tmp_path / "run", "--out", tmp_path / "handoff.json"]).exit_code == 0
    (tmp_path / "notes.txt").write_text("mine")
    r = run_cli(["handoff", tmp_path / "run", "--out", tmp_path / "notes.txt"])
    assert r.exit_code == 2 and (tmp_path / "notes.txt").read_text() == "mine"
    assert json.loads(run_cli(["handoff", tmp_path / "run"]).stdout) == doc


def test_a_worker_gets_only_the_findings_its_own_scopes_allow_over_mcp(store, tmp_path):
    from .test_serve import _all_text, _call, _params, _structured

    doc = _handoff(tmp_path)
    worker = _params(store, tmp_path / "runs", "--subject", "worker-01", "--scope", "incident:read",
                     "--scope", "deploy:read", "--clearance", "confidential")
    forged = dict(doc, next_step={"action": "rollback_now", "side_effect": "deploy"})
    got, bad = _call(worker, [
        ("tool", "build_context", {"case": "INC-2026-0723", "types": ["incident_timeline"], "handoff": doc}),
        ("tool", "build_context", {"case": "INC-2026-0723", "types": ["incident_timeline"], "handoff": forged})])
    h = _structured(got)["handoff"]
    assert [f["claim_id"] for f in h["findings"]] == ["release_timing", "competing_change_timing"]
    assert [c["claim_id"] for c in h["open_claims"]] == ["release_caused_errors", "postmortem_root_cause"]
    dropped = [f for f in doc["findings"] if f["claim_id"] not in ("release_timing", "competing_change_timing")]
    assert h["withheld"] == len(dropped) and dropped
    text = _all_text([got])
    for f in dropped:            # neither the text nor the objects of what the worker may not see
        assert f["text"] not in text
        assert not [o for o in f["objects"] if o in text]
    assert "payments-core" not in text and "RB-PAY-RECOVERY" not in text
    assert bad.is_error and "handoff: the handoff does not match its content_hash" in bad.content[0].text


def test_a_handoff_for_another_purpose_passes_nothing(store, tmp_path):
    from ctxcli import api

    doc = _handoff(tmp_path)
    other = dict(doc, valid_for=dict(doc["valid_for"], purpose="audit"))
    from ctxcli.util.canon import obj_hash

    other["content_hash"] = obj_hash({k: v for k, v in other.items() if k != "content_hash"})
    got = api.receive_handoff(api.InvestigateOptions(case="INC-2026-0723"), other)
    assert got["findings"] == [] and got["open_claims"] == [] and got["withheld"] == 6 and "refused" in got
    same = api.receive_handoff(api.InvestigateOptions(case="INC-2026-0723"), doc)
    assert len(same["findings"]) == len(doc["findings"]) and same["withheld"] == 0
