"""The second domain (payment incident INC-2026-0723): the failure cases every context
builder must survive, each asserted on the bundled data. No code in src/ctxcli knows this
domain: see test_no_domain_names_in_engine."""

from __future__ import annotations

import json
import re

import pytest

from ctxcli import api

from .conftest import REPO

CASE = "INC-2026-0723"


@pytest.fixture(scope="module")
def runs(bundled_store):
    with pytest.MonkeyPatch.context() as mp:      # restores CTX_DB and CTX_ROOT afterwards
        mp.setenv("CTX_DB", str(bundled_store))
        mp.setenv("CTX_ROOT", str(REPO))
        return {v: api.investigate(api.InvestigateOptions(case=CASE, variant=v))
                for v in (None, "drafts-conflict", "tiny-budget", "raw-reader")}


def ids(res):
    return {e["object_id"] for e in res.pack["evidence"]}


def omitted(res):
    return {o["ref"]: o for o in res.pack["omissions"]}


def claim(res, cid):
    return {c["claim_id"]: c for c in res.answer["claims"]}[cid]


def test_main_answer_separates_facts_from_hypothesis(runs):
    res = runs[None]
    a = res.answer
    assert a["verdict"] == "partial"
    timing = claim(res, "release_timing")
    assert timing["status"] == "fact"
    assert timing["facts"]["gap_minutes"] == 8
    assert claim(res, "owner_at_incident")["facts"]["owner_team"] == "payments-core"
    assert claim(res, "runbook_at_incident")["facts"]["runbook_version"] == "v4"
    hyp = claim(res, "release_caused_errors")
    assert hyp["status"] == "hypothesis"
    assert [c["value"] for c in hyp["competing"]] == [["RR-2026-0723-01"]]
    missing = {m["type"] for m in a["missing_evidence"]}
    assert {"rollback_comparison", "connection_config_diff"} <= missing
    assert a["side_effect"] == "none"


def test_git_author_e_mails_reach_no_output_unmasked(runs):
    """The runbooks' authors and committers (git provenance) are shown with their e-mail
    addresses masked: no subject of these runs holds a scope that lifts the mask."""
    from ctxcli.api import output_files

    for res in runs.values():
        files = output_files(res)
        assert not any(b"payments-core@example.invalid" in data for data in files.values())
    facts = [e["facts"] for e in runs[None].pack["evidence"] if e["object_id"].startswith("RB-PAY-RECOVERY-v4#")]
    assert facts and {f["git_author"] for f in facts} == {"payments-core <[email redacted]>"}


def test_semantic_differently_titled_runbook_is_found(runs):
    res = runs[None]
    v4 = [e for e in res.pack["evidence"] if e["object_id"].startswith("RB-PAY-RECOVERY-v4#")]
    assert v4 and all("restoration" in e["title"].lower() for e in v4)


def test_exact_identifier_found_by_full_text(runs):
    res = runs[None]
    ft = [e for e in res.pack["evidence"] if "fulltext" in e["channels"]]
    assert any("PAY-4097" in e["text"] for e in ft)


def test_multi_hop_owner_through_graph(runs):
    res = runs[None]
    own = [e for e in res.pack["evidence"] if e["object_id"] == "OWN-PAYAPI-2025"]
    assert own and "graph" in own[0]["channels"]
    assert "incident_service_owner" in own[0]["graph_templates"]


def test_temporal_owner_at_incident_time_not_today(runs):
    om = omitted(runs[None])
    assert om["OWN-PAYAPI-2026-08"]["gate"] == "validity"
    assert om["OWN-PAYAPI-2026-08"]["reason"] == "not_yet_valid"


def test_versioning_old_and_future_runbooks_excluded_with_reasons(runs):
    om = omitted(runs[None])
    old, new = om["RB-PAY-RECOVERY-v3#rollback"], om["RB-PAY-RECOVERY-v5#rollback"]
    assert (old["gate"], old["reason"]) == ("validity", "expired")
    assert old["detail"]["replacement"]["object_id"] == "RB-PAY-RECOVERY-v4#rollback"
    assert (new["gate"], new["reason"]) == ("validity", "not_yet_valid")
    assert new["detail"]["replacement"]["object_id"] == "RB-PAY-RECOVERY-v4#rollback"


def test_acl_same_named_service_of_other_tenant_never_enters(runs):
    for res in runs.values():
        blob = json.dumps(res.pack) + json.dumps(res.trace) + json.dumps(res.answer)
        assert "OTH-" not in blob
        assert "checkout-squad" not in blob


def test_injection_wiki_page_rejected_and_changes_nothing(runs):
    res = runs[None]
    om = omitted(res)
    assert om["WIKI-PAYAPI-OPS-NOTES"]["gate"] == "injection"
    assert res.answer["recommended_action"]["action"] != "perform_rollback"
    assert "WIKI-PAYAPI-OPS-NOTES" not in ids(res)


def test_conflicting_drafts_weaken_conclusion(runs):
    res = runs["drafts-conflict"]
    assert res.answer["verdict"] == "conflicting_evidence"
    (c,) = [c for c in res.answer["conflicts"] if c["fact"] == "root_cause"]
    assert len(c["values"]) == 2
    assert {"PM-DRAFT-A", "PM-DRAFT-B"} <= ids(res)


def test_missing_rollback_evidence_is_listed(runs):
    a = runs[None].answer
    gaps = {m["type"]: m for m in a["missing_evidence"]}
    assert gaps["rollback_comparison"]["reason"] == "not_found"
    assert "rollback_comparison" in a["summary"]


def test_deleted_document_never_returns(runs):
    for res in runs.values():
        blob = json.dumps(res.pack) + json.dumps(res.trace)
        assert "PM-NOTE-0723-EARLY" not in blob


def test_tiny_budget_gives_partial_answer_that_says_what_did_not_fit(runs):
    res = runs["tiny-budget"]
    p = res.pack
    assert res.answer["verdict"] == "insufficient_evidence"
    assert p["state"]["stop_reason"] == "budget_exhausted"
    over = {m["type"] for m in p["missing"] if m["reason"] == "over_budget"}
    assert over
    assert p["slots"]["used"]["evidence"] <= p["slots"]["allocation"]["evidence"]
    md = api.output_files(res)["answer.md"].decode()
    for t in over:
        assert f"{t} (required): " in md or f"{t} (optional): " in md


def test_redacted_read_masks_customer_data_and_records_hashes(runs):
    res = runs[None]
    note = [e for e in res.pack["evidence"] if e["object_id"] == "INC-2026-0723-NOTE-01"][0]
    assert not re.search(r"[\w.]+@[\w.]+", note["text"])
    assert not re.search(r"CUST-\d+", note["text"])
    (tr,) = [t for t in note["transformations"] if t["kind"] == "redaction"]
    assert tr["before_hash"] != tr["after_hash"] and tr["policy_object"] == "POL-INCIDENT-READ-01"
    raw = [e for e in runs["raw-reader"].pack["evidence"] if e["object_id"] == "INC-2026-0723-NOTE-01"][0]
    assert re.search(r"CUST-\d+", raw["text"]) and raw["transformations"] == []


# Identifiers of the two bundled domains. Help examples ("Example: ctx …") may name the
# bundled example case; nothing else in the package may.
DOMAIN_WORDS = ["C-102", "C-104", "C-105", "ACCIDENT_CERTIFICATE", "motor-claim", "payment-api", "PAY-4097",
                "INC-2026", "tenant-demo", "claim_amount", "RULE-MCS", "incident_review", "claim_review"]


def test_no_domain_names_in_engine():
    hits = []
    for p in sorted((REPO / "src" / "ctxcli").rglob("*.py")):
        in_example = False      # a --help example (to the end of its docstring) names the bundled data
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if "Example: ctx " in line:
                in_example = '"""' not in line
                continue
            if in_example:
                in_example = '"""' not in line
                continue
            for w in DOMAIN_WORDS:
                if w.lower() in line.lower():
                    hits.append(f"{p.relative_to(REPO)}:{i}: {w}")
    assert hits == []
