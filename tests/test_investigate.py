from __future__ import annotations

import json

from ctxcli import api

from .conftest import run_cli


def _run(case="C-102", **kw):
    return api.investigate(api.InvestigateOptions(case=case, **kw))


def _ids(pack):
    return {e["object_id"] for e in pack["evidence"]}


def test_c102_default_subject(store):
    res = _run()
    a, p = res.answer, res.pack
    assert a["verdict"] == "complete"
    assert a["recommended_action"]["action"] == "route_to_human_reviewer"
    claims = {c["claim_id"]: c for c in a["claims"]}
    assert claims["applicable_rule_version"]["facts"]["rule_version"] == "2026.1"
    assert claims["documents_satisfied"]["condition"]["holds"] is True
    assert claims["manual_review_required"]["condition"]["holds"] is True
    assert {"RULE-MCS-2026.1", "DOC-C102-003", "ALIAS-DOC-RTAD", "SIG-C102-AMOUNT", "SIG-C102-TENURE",
            "RULE-MANUAL-REVIEW"} <= _ids(p)
    om = {o["ref"]: o for o in p["omissions"]}
    assert om["RULE-MCS-2025.4"]["gate"] == "validity"
    assert om["RULE-MCS-2025.4"]["detail"]["replacement"]["object_id"] == "RULE-MCS-2026.1"
    assert om["MAIL-7781"]["gate"] == "injection"
    ev_ids = {e["evidence_id"] for e in p["evidence"]}
    assert all(set(c["evidence"]) <= ev_ids for c in a["claims"])
    assert p["slots"]["used"]["evidence"] <= p["slots"]["allocation"]["evidence"]
    assert a["side_effect"] == "none"


def test_other_tenant_never_a_candidate(store):
    res = _run()
    blob = json.dumps(res.pack) + json.dumps(res.trace) + json.dumps(res.answer)
    assert "OTHER-" not in blob
    assert all(c["object_id"].startswith("OTHER-") is False for c in res.candidates)


def test_restricted_subject_is_insufficient_and_leaks_nothing(store, tmp_path):
    r = run_cli(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "o"])
    assert r.exit_code == 0
    ans = json.loads((tmp_path / "o" / "answer.json").read_text())
    assert ans["verdict"] == "insufficient_evidence"
    assert {m["type"] for m in ans["missing_evidence"]} >= {"policy_version", "document_status"}
    blob = "".join((tmp_path / "o" / f).read_text() for f in ("pack.json", "trace.jsonl", "answer.json", "answer.md"))
    blob += r.stdout
    for secret in ("SIU referral note", "Special investigations unit", "SIU-NOTE-C102", "Audit extract",
                   "road traffic accident", "128000", "MAIL-7781"):
        assert secret not in blob


def test_two_runs_are_byte_identical(store, tmp_path):
    for d in ("a", "b"):
        assert run_cli(["investigate", "C-102", "--out", tmp_path / d]).exit_code == 0
    for f in ("pack.json", "trace.jsonl", "answer.json", "answer.md"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_naive_time_is_a_usage_error(store):
    r = run_cli(["investigate", "C-102", "--as-of", "2026-07-23T12:00:00"])
    assert r.exit_code == 2
    assert "no timezone offset" in r.stderr
    assert r.stderr.count("\n") == 1


def test_unknown_case(store):
    r = run_cli(["investigate", "C-999"])
    assert r.exit_code == 2
    assert "unknown case 'C-999'" in r.stderr
