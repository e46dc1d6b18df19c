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
    # Titles and text of objects the intern may not see (risk, documents, rules, audit, mailbox).
    for secret in ("SIU referral note", "Special investigations unit", "SIU-NOTE-C102", "Audit extract",
                   "道路交通事故认定书", "128000", "MAIL-7781", "own-damage claim is complete", "DOC-C102-003",
                   "RULE-MCS-2026.1"):
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


def test_as_of_2025_selects_the_old_rule_version(store):
    res = _run(variant="as-of-2025")
    claims = {c["claim_id"]: c for c in res.answer["claims"]}
    assert claims["applicable_rule_version"]["facts"]["rule_version"] == "2025.4"
    om = {o["ref"]: o for o in res.pack["omissions"]}
    assert om["RULE-MCS-2026.1"]["gate"] == "validity"
    assert om["RULE-MCS-2026.1"]["reason"] == "not_yet_valid"


def test_known_at_excludes_objects_observed_later(store):
    from ctxcli.util.timeutil import parse_ts

    res = _run(known_at=parse_ts("2025-12-01T00:00:00+08:00"))
    om = {o["ref"]: o for o in res.pack["omissions"]}
    assert om["RULE-MCS-2026.1"]["gate"] == "knowledge_time"
    assert "RULE-MCS-2026.1" not in _ids(res.pack)


def test_below_threshold_case_continues_read_only_review(store):
    res = _run("C-104")
    assert res.answer["verdict"] == "complete"
    assert res.answer["recommended_action"]["action"] == "continue_read_only_review"
    claims = {c["claim_id"]: c for c in res.answer["claims"]}
    assert claims["manual_review_required"]["condition"]["holds"] is False


def test_conflicting_signals_give_conflicting_evidence_with_both_cited(store):
    res = _run("C-105")
    a = res.answer
    assert a["verdict"] == "conflicting_evidence"
    (conflict,) = a["conflicts"]
    assert conflict["fact"] == "claim_amount"
    assert sorted(v["value"] for v in conflict["values"]) == [98000, 156000]
    cited = {e for v in conflict["values"] for e in v["evidence"]}
    assert cited <= {e["evidence_id"] for e in res.pack["evidence"]} and len(cited) == 2


def test_tight_budget_admits_one_item_per_required_type_before_extras(store):
    full = _run()
    per_type = {e["selected_for"]: e["tokens"] for e in full.pack["evidence"] if e["selected_for"] != "extra"}
    # Room for the coverage items and little more: no extra may displace a required type.
    budget_total = full.pack["budget"]["total"] - full.pack["budget"]["evidence"] + \
        full.pack["slots"]["evidence_tokens_by_items"] - sum(e["tokens"] for e in full.pack["evidence"]
                                                             if e["selected_for"] == "extra") + 50
    res = _run(budget=budget_total)
    p = res.pack
    got = {e["selected_for"] for e in p["evidence"]}
    assert set(per_type) <= got
    assert p["slots"]["used"]["evidence"] <= p["slots"]["allocation"]["evidence"]
    assert res.answer["verdict"] == "complete"
    # every received document is needed (coverage: all), so all of them are packed
    docs = {e["object_id"] for e in p["evidence"] if "document_status" in e["supports"]}
    assert {"DOC-C102-001", "DOC-C102-002", "DOC-C102-003", "ALIAS-DOC-RTAD"} <= docs


def test_very_tight_budget_reports_types_missing_over_budget(store):
    res = _run(budget=1500)
    p = res.pack
    assert p["slots"]["used"]["evidence"] <= p["slots"]["allocation"]["evidence"]
    over = [m for m in p["missing"] if m["reason"] == "over_budget"]
    assert over, p["missing"]
    assert res.answer["verdict"] == "insufficient_evidence"
    assert p["state"]["stop_reason"] == "budget_exhausted"
    for m in over:
        assert any(o["gate"] == "budget" and o["detail"]["for_type"] == m["type"] for o in p["omissions"])


def test_purpose_not_served_by_playbook_is_usage_error(store):
    r = run_cli(["investigate", "C-102", "--purpose", "marketing"])
    assert r.exit_code == 2
    assert "purpose 'marketing' is not served by playbook motor-claim-review" in r.stderr


def test_json_output_names_pack_and_answer(store, tmp_path):
    r = run_cli(["investigate", "C-102", "--json", "--out", tmp_path / "o"])
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["pack"] == str(tmp_path / "o" / "pack.json")
    assert doc["answer"]["verdict"] == "complete"
    assert doc["pack_id"] == json.loads((tmp_path / "o" / "pack.json").read_text())["pack_id"]


def test_human_output_lists_verdict_claims_gates_and_paths(store, tmp_path):
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "o"])
    assert r.exit_code == 0
    assert "C-102 verdict complete · action route_to_human_reviewer" in r.stdout
    assert "rejected by gate: scope 1, purpose 1, validity 2, injection 1, duplicate 1" in r.stdout
    assert f"wrote {tmp_path / 'o' / 'pack.json'}" in r.stdout


def test_fresh_checkout_loads_bundled_data_first(project_copy, tmp_path):
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "o"])
    assert r.exit_code == 0
    assert "no store found: loaded the project's sources first" in r.stderr
    assert (project_copy / ".ctx" / "ctx.duckdb").exists()


def test_a_mistyped_ctx_db_is_an_error_like_a_mistyped_db_and_creates_nothing(project_copy, tmp_path, monkeypatch):
    """$CTX_DB naming no store is what --db naming none is: exit 2, one line, no second store
    (issue 49 item 3); `ctx load` builds the store $CTX_DB names."""
    typo = project_copy / ".ctx" / "ctx.duckbd"
    monkeypatch.setenv("CTX_DB", str(typo))
    for args in (["investigate", "C-102", "--out", tmp_path / "o"], ["sources"], ["eval", "--json"]):
        r = run_cli(args)
        assert (r.exit_code, r.stdout, r.stderr) == (
            2, "", "ctx: error: no store at .ctx/ctx.duckbd (named by $CTX_DB): build it with `ctx load`, or unset "
                   "CTX_DB to use the project's store\n"), args
    assert not (project_copy / ".ctx").exists() and not (tmp_path / "o").exists()
    r = run_cli(["investigate", "C-102", "--db", typo, "--out", tmp_path / "o"])
    assert r.exit_code == 2 and r.stderr.startswith("ctx: error: no store at .ctx/ctx.duckbd: build it with")
    assert run_cli(["load"]).exit_code == 0 and typo.is_file()
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "o"]).exit_code == 0


def test_pack_records_plan_slots_and_hash(store):
    from ctxcli.util.canon import obj_hash

    p = _run().pack
    body = {k: v for k, v in p.items() if k not in ("pack_id", "content_hash")}
    # the store generation the pack was built on is outside the hash (store/generations.py)
    body["store"] = {k: v for k, v in body["store"].items() if k != "generation"}
    assert p["store"]["generation"] == 1
    assert p["content_hash"] == obj_hash(body)
    assert p["pack_id"] == "pk-" + p["content_hash"][7:23]
    q = p["rounds"][0]["queries"]
    assert {x["channel"] for x in q} == {"structured", "fulltext", "graph"}
    assert p["slots"]["total_tokens"] == sum(s["tokens"] for s in p["slots"]["sections"])
    assert p["slots"]["used"]["evidence"] == p["slots"]["evidence_tokens_by_items"]
    for e in p["evidence"]:
        # keyed with the store secret where the source masks text for this subject (issue 12)
        scheme = "hmac-sha256:" if e["source_id"] == "claims-documents" else "sha256:"
        assert e["content_hash"].startswith(scheme) and e["locator"] and e["source_version"]
