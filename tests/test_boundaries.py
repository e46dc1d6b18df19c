"""Edges where an off-by-one or a dropped clause changes what a user gets: validity and
freshness at exactly as_of / max_age, Reciprocal Rank Fusion with hand-computed scores,
redaction of every string field, an evidence item that fits the remaining budget exactly,
and the tenant predicate of the full-text statement. Each test here fails when the bug it
names is planted (see tests/mutants.py)."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ctxcli import api
from ctxcli.engine.gates import GateContext, Obj, g_freshness, g_validity, run_gates
from ctxcli.engine.plan import Query
from ctxcli.engine.retrieve import QueryRun, fuse
from ctxcli.util.canon import content_hash

TZ = timezone(timedelta(hours=8))
AS_OF = datetime(2026, 7, 23, 12, 0, tzinfo=TZ)
AS_OF_US = int(AS_OF.timestamp()) * 1_000_000


def obj(**kw) -> Obj:
    content = kw.pop("content", "Case C-1 is open.")
    base = dict(doc_id=1, object_id="OBJ-1", tenant_id="t", source_id="s", source_version="v1",
                object_type="case_snapshot", subject_id="case:C-1", title="Case C-1", content=content,
                locator="test://OBJ-1", valid_from_us=None, valid_to_us=None, observed_us=AS_OF_US - 1_000_000,
                required_scopes=[], allowed_purposes=["review"], supports=["case_status"], facts={}, keys=[],
                content_hash=content_hash(content), dedup_hash="d1", supersedes=None, tokens=5, section=None,
                doc_ref=None, trust_level="authoritative", classification="internal", max_age_s=None,
                redaction=None, owner_team="team")
    base.update(kw)
    return Obj(**base)


CTX = GateContext(tenant="t", scopes=frozenset(), purpose="review", as_of=AS_OF, as_of_us=AS_OF_US,
                  known_at_us=None, replacement=lambda o: None)


# ------------------------------------------------------------------------------ validity
def test_valid_to_is_an_exclusive_end():
    """An object whose validity ends exactly at as_of is no longer valid; one microsecond
    later it still was."""
    rej = g_validity(obj(valid_to_us=AS_OF_US), CTX)
    assert rej is not None and (rej.gate, rej.reason) == ("validity", "expired")
    assert rej.detail["valid_to"] == AS_OF.isoformat() and rej.detail["as_of"] == AS_OF.isoformat()
    assert g_validity(obj(valid_to_us=AS_OF_US + 1), CTX) is None


def test_valid_from_is_an_inclusive_start():
    """An object that becomes valid exactly at as_of is valid; one microsecond later it is not yet."""
    assert g_validity(obj(valid_from_us=AS_OF_US), CTX) is None
    rej = g_validity(obj(valid_from_us=AS_OF_US + 1), CTX)
    assert rej is not None and rej.reason == "not_yet_valid"
    # Both ends at once: [as_of, as_of + 1µs) holds as_of.
    assert run_gates(obj(valid_from_us=AS_OF_US, valid_to_us=AS_OF_US + 1), CTX)[0] is None


def test_freshness_at_exactly_max_age_is_fresh():
    day = 86_400
    o = obj(max_age_s=day, observed_us=AS_OF_US - day * 1_000_000)
    assert g_freshness(o, CTX) is None
    rej = g_freshness(dataclasses.replace(o, observed_us=o.observed_us - 1), CTX)
    assert rej is not None and (rej.gate, rej.reason) == ("freshness", "stale")
    assert rej.detail["max_age"] and rej.detail["age_days"] == 1.0


def test_the_access_gates_still_reject_what_the_statements_should_have_withheld():
    """The access rules run inside every channel's statement (docs/gates.md); the gates after
    retrieval are the second line: a record that reaches them without the subject's scope, of
    another tenant, or for another purpose is rejected all the same."""
    rej = run_gates(obj(required_scopes=["fraud:read"]), CTX)[0]
    assert (rej.gate, rej.reason, rej.detail["needs"]) == ("scope", "missing_scope", ["fraud:read"])
    assert run_gates(obj(tenant_id="other"), CTX)[0].gate == "tenant"
    assert run_gates(obj(allowed_purposes=["audit"]), CTX)[0].gate == "purpose"
    assert run_gates(obj(required_scopes=["fraud:read"]), dataclasses.replace(CTX, scopes=frozenset({"fraud:read"}))
                     )[0] is None


# ------------------------------------------------------------------------------ RRF
def _run(qid: str, channel: str, hits: list[int]) -> QueryRun:
    return QueryRun(Query(qid, channel, "t", 10), list(hits))


def test_rrf_fuses_disagreeing_channels_with_k_60():
    """Structured ranks A(1) first, full text ranks C(1) first; B is 4th in both. With k = 60,
    B's two 4th places (2/64) beat one 1st place (1/61); with a small k they would not."""
    A, B, C, X, Y, P, Q = 1, 2, 3, 10, 11, 12, 13
    runs = [_run("q1", "structured", [A, X, Y, B]), _run("q2", "fulltext", [C, P, Q, B])]
    cands = fuse(runs)
    by = {c.doc_id: c for c in cands}
    assert by[B].ranks == {"fulltext": 4, "structured": 4}
    assert by[B].rrf == round(1 / 64 + 1 / 64, 12) == 0.03125
    assert by[A].rrf == by[C].rrf == round(1 / 61, 12)
    assert by[X].rrf == round(1 / 62, 12) and by[Q].rrf == round(1 / 63, 12)
    assert [c.doc_id for c in cands] == [B, A, C, X, P, Y, Q]      # ties by doc id


def test_rrf_interleaves_queries_of_one_channel_before_fusing():
    """Two full-text queries: rank 1 of each, then rank 2 of each … an object keeps its first
    position in the channel; its per-query ranks are all kept."""
    runs = [_run("q1", "fulltext", [5, 6]), _run("q2", "fulltext", [7, 5]), _run("q3", "graph", [6])]
    by = {c.doc_id: c for c in fuse(runs)}
    assert by[5].ranks == {"fulltext": 1} and by[5].queries == {"q1": 1, "q2": 2}
    assert by[7].ranks == {"fulltext": 2} and by[6].ranks == {"fulltext": 3, "graph": 1}
    assert by[6].rrf == round(1 / 63 + 1 / 61, 12)
    assert [c.doc_id for c in fuse(runs)] == [6, 5, 7]


# ------------------------------------------------------------------------------ redaction
PHONE = "13812345678"
POLICY = {"unless_scopes": ["pii:read"], "policy_object": "POL-1",
          "patterns": [{"name": "phone", "regex": r"(?<![0-9])1[3-9][0-9]{9}(?![0-9])",
                        "replacement": "[PHONE REDACTED]"}]}


def _redacted_item(scopes=frozenset()):
    from ctxcli.engine.disclose import Disclosure
    from ctxcli.engine.pack import make_item
    from ctxcli.engine.retrieve import Candidate
    from ctxcli.tokens import count

    content = f"Call {PHONE} or {PHONE} again; the office line is 13987654321."
    o = obj(content=content, title=f"Call-back {PHONE}", redaction=POLICY,
            facts={"phone": PHONE, "contacts": [f"home {PHONE}", 7, "none"], "amount": 128000})
    return make_item(o, tz=TZ, disclosure=Disclosure(key=b"test-secret", scopes=frozenset(scopes)), round_no=1,
                     cand=Candidate(1, {"fulltext": 1}, {"q1": 1}, 0.1), count=count)


def test_redaction_masks_title_facts_and_every_repeated_match():
    item = _redacted_item()
    assert PHONE not in item["text"] and PHONE not in item["title"]
    assert item["text"] == "Call [PHONE REDACTED] or [PHONE REDACTED] again; the office line is [PHONE REDACTED]."
    assert item["title"] == "Call-back [PHONE REDACTED]"
    assert item["facts"] == {"phone": "[PHONE REDACTED]", "contacts": ["home [PHONE REDACTED]", 7, "none"],
                             "amount": 128000}
    tr = item["transformations"][0]
    # 3 in the content, 1 in the title, 2 in the facts.
    assert tr["kind"] == "redaction" and tr["masked"] == {"phone": 6}
    assert item["text_hash"] == content_hash(item["text"]) == tr["after_hash"]


def test_redaction_is_skipped_for_a_subject_with_the_raw_scope():
    item = _redacted_item(frozenset({"pii:read"}))
    assert PHONE in item["text"] and PHONE in item["title"] and item["facts"]["phone"] == PHONE
    assert item["transformations"] == []


# ------------------------------------------------------------------------------ exact budget fit
def _evidence_total_for(pb, evidence: int) -> int:
    from ctxcli.engine.builder import budget_for

    for total in range(pb.budget.total_tokens, 0, -1):
        if budget_for(pb, total)["evidence"] == evidence:
            return total
    raise AssertionError(f"no total gives an evidence slot of {evidence}")


def test_an_item_that_fits_the_remaining_budget_exactly_is_admitted(store):
    base = api.investigate(api.InvestigateOptions(case="C-102"))
    pb, _ = api.read_playbook("motor-claim-review")
    used = base.pack["slots"]["evidence_tokens_by_items"]
    assert used == base.pack["slots"]["used"]["evidence"]
    total = _evidence_total_for(pb, used)
    exact = api.investigate(api.InvestigateOptions(case="C-102", budget=total))
    assert exact.pack["budget"]["evidence"] == used
    # The same items, none compressed: the last one admitted filled the slot to the token.
    assert [e["evidence_id"] for e in exact.pack["evidence"]] == [e["evidence_id"] for e in base.pack["evidence"]]
    assert not any(t["kind"] == "compression" for e in exact.pack["evidence"] for t in e["transformations"])
    assert exact.pack["slots"]["used"]["evidence"] == exact.pack["budget"]["evidence"]
    # One token less, and some item no longer fits as it is.
    smaller = api.investigate(api.InvestigateOptions(case="C-102", budget=_evidence_total_for(pb, used - 1)))
    assert [(e["evidence_id"], e["tokens"]) for e in smaller.pack["evidence"]] != \
        [(e["evidence_id"], e["tokens"]) for e in base.pack["evidence"]]


# ------------------------------------------------------------------------------ duplicate gate
def test_a_re_export_of_an_admitted_document_is_rejected_as_duplicate(store):
    res = api.investigate(api.InvestigateOptions(case="C-102"))
    ev = {e["object_id"]: e["evidence_id"] for e in res.pack["evidence"]}
    assert "DOC-C102-001" in ev and "DOC-C102-001-REEXPORT" not in ev
    om = {o["ref"]: o for o in res.pack["omissions"]}["DOC-C102-001-REEXPORT"]
    assert (om["gate"], om["reason"]) == ("duplicate", "same_content_as_admitted")
    assert om["detail"] == {"duplicate_of": ev["DOC-C102-001"]}


# ------------------------------------------------------------------------------ tenant predicate
def test_full_text_never_returns_another_tenants_matching_object(tmp_path):
    """A second tenant holds objects whose text matches the case's full-text queries better
    than the case's own: they are never candidates (not even rejected by the tenant gate)."""
    from .test_hostile import SCOPES, Corpus, Denied, load_and_run

    denied = [Denied("tenant", t, f"SECRETMKTEN{i}AA", ["content"]) for i, t in
              enumerate(["case_status", "document_status", "rule"])]
    c = Corpus(case_no=321, amount=5, threshold=10, doc_types=["INVOICE"], filler=[0, 0, 0, 0], denied=denied,
               budget=8000)
    run = load_and_run(Path(tmp_path), c)
    from ctxcli.engine.plan import make_plan
    from ctxcli.engine.gates import Access
    from ctxcli.engine.retrieve import run_plan
    from ctxcli.store.db import open_reader
    from ctxcli.store.duckdb_store import DuckDBStore

    pb, _ = api.read_playbook("hostile-review", tmp_path / "manifests" / "playbooks")
    con = open_reader(run.db)
    try:
        tenant_of = dict(con.execute("SELECT doc_id, tenant_id FROM objects").fetchall())
        assert "t-beta" in tenant_of.values()
        plan = make_plan(pb, round_no=1, target_types=[et.type for et in pb.evidence_types], seeds=["case:H-321"],
                         business_keys=["H-321"], channels=("fulltext",))
        runs = run_plan(DuckDBStore(con), plan, pb, tenant="t-alpha", as_of_us=AS_OF_US,
                        access=Access(scopes=frozenset(SCOPES), purpose="review"))   # the case subject
    finally:
        con.close()
    hits = [d for r in runs for d in r.hits]
    assert hits and {tenant_of[d] for d in hits} == {"t-alpha"}
    assert not any(o["gate"] == "tenant" for o in run.res.pack["omissions"])
    assert not any(cand["withheld"] for cand in run.res.candidates)


# ------------------------------------------------------------------------------ stages
def test_trace_events_are_the_stage_results(store):
    """The trace is emitted from what each stage kept and dropped: every admitted item has one
    evidence_selected event, every omission one candidate_rejected event, every candidate one
    candidate_retrieved event, and the stop reason of the last assessment is the pack's."""
    res = api.investigate(api.InvestigateOptions(case="C-102"))
    ev = lambda kind: [e for e in res.trace if e["event"] == kind]   # noqa: E731
    assert [e["seq"] for e in res.trace] == list(range(1, len(res.trace) + 1))
    assert sorted(e["evidence_id"] for e in ev("evidence_selected")) == \
        sorted(i["evidence_id"] for i in res.pack["evidence"])
    assert sorted((e["ref"], e["gate"], e["round"]) for e in ev("candidate_rejected")) == \
        sorted((o["ref"], o["gate"], o["round"]) for o in res.pack["omissions"])
    assert [e["ref"] for e in ev("candidate_retrieved")] == [c["ref"] for c in res.candidates]
    settled = {i["object_id"] for i in res.pack["evidence"]} | {o["ref"] for o in res.pack["omissions"]}
    assert settled <= {c["ref"] for c in res.candidates}
    assert len(ev("plan_created")) == len(ev("sufficiency_assessed")) == res.pack["state"]["rounds"]
    assert ev("pack_built")[0]["stop_reason"] == res.pack["state"]["stop_reason"]
    last = ev("sufficiency_assessed")[-1]
    assert last["missing"] == [m["type"] for m in res.pack["missing"]]
    assert last["evidence_tokens"] == res.pack["slots"]["evidence_tokens_by_items"]


def test_one_agent_step_is_the_first_round_of_the_same_stages(store):
    """A step for every type with nothing held and the governed evidence slot admits exactly
    what the governed (one-round) build admits; holding those ids, a second step admits none
    of them again and says why."""
    opts = api.InvestigateOptions(case="C-102", strategy="governed")
    gov = api.investigate(opts)
    header = gov.pack["slots"]["evidence_tokens_by_items"] - sum(e["tokens"] for e in gov.pack["evidence"])
    types = [et.type for et in api.read_playbook("motor-claim-review")[0].evidence_types]
    step = api.build_step(opts, goal_types=types, held=[],
                          step_budget=gov.pack["budget"]["evidence"] - header)
    assert step.evidence == gov.pack["evidence"]
    assert step.omissions == gov.pack["omissions"]
    assert step.tokens == sum(e["tokens"] for e in gov.pack["evidence"])
    assert [e["event"] for e in step.trace] == [e["event"] for e in gov.trace][:len(step.trace)]
    held = [e["evidence_id"] for e in gov.pack["evidence"]]
    again = api.build_step(opts, goal_types=types[:2], held=held, step_budget=2000)
    assert not {e["evidence_id"] for e in again.evidence} & set(held)
    dup = {o["detail"]["evidence_id"] for o in again.omissions if o["reason"] == "already_held"}
    assert dup and dup <= set(held)
    assert all(t in types[:2] for t in again.covered + again.missing)


def test_agent_step_rejects_unknown_types_and_empty_budgets(store):
    from ctxcli.errors import UsageError

    opts = api.InvestigateOptions(case="C-102")
    with pytest.raises(UsageError, match="evidence type 'nope' is not in playbook motor-claim-review"):
        api.build_step(opts, goal_types=["nope"], held=[], step_budget=100)
    with pytest.raises(UsageError, match="step budget 0"):
        api.build_step(opts, goal_types=[], held=[], step_budget=0)
