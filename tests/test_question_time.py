"""The time a question is about (issue 47): validity and supersession at the question's time
(``as_of``), knowledge time and freshness at ``known_at`` (default: ``as_of``), and the
relations that link evidence to the case by when they were known — each boundary on both
sides (docs/gates.md, "Which time each gate uses")."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta, timezone

from ctxcli.engine.gates import g_freshness, g_knowledge_time

from .conftest import run_cli
from .test_boundaries import AS_OF_US, CTX, obj

TZ = timezone(timedelta(hours=8))


def _us(s: str) -> int:
    return int(datetime.fromisoformat(s).timestamp()) * 1_000_000


INCIDENT = _us("2026-07-23T10:02:00+08:00")        # first PAY-4097 error
DECLARED = _us("2026-07-23T10:06:00+08:00")        # the incident's edges (AFFECTS, GOVERNED_BY)
INVESTIGATION = _us("2026-07-23T10:30:00+08:00")
OWNER_ENDS = _us("2026-08-01T00:00:00+08:00")      # payments-core's OWNED_BY edge ends


# ------------------------------------------------------------------------------ gates
def test_knowledge_time_defaults_to_the_question_time_and_its_end_is_inclusive():
    """Without known_at the knowledge time is as_of: an object observed exactly then is known,
    one microsecond later it is not; with known_at the cut-off moves to it."""
    assert g_knowledge_time(obj(observed_us=AS_OF_US), CTX) is None
    rej = g_knowledge_time(obj(observed_us=AS_OF_US + 1), CTX)
    assert rej is not None and (rej.gate, rej.reason) == ("knowledge_time", "not_yet_known")
    later = dataclasses.replace(CTX, known_at_us=AS_OF_US + 10)
    assert g_knowledge_time(obj(observed_us=AS_OF_US + 10), later) is None
    assert g_knowledge_time(obj(observed_us=AS_OF_US + 11), later).reason == "not_yet_known"


def test_freshness_is_measured_at_the_knowledge_time():
    """An observation's age is taken at known_at (here a day after as_of), not at as_of."""
    day = 86_400
    later = dataclasses.replace(CTX, known_at_us=AS_OF_US + day * 1_000_000)
    o = obj(max_age_s=day, observed_us=AS_OF_US)          # exactly max_age old at known_at: fresh
    assert g_freshness(o, later) is None
    rej = g_freshness(dataclasses.replace(o, observed_us=AS_OF_US - 1), later)
    assert rej is not None and rej.reason == "stale" and rej.detail["age_days"] == 1.0
    assert g_freshness(dataclasses.replace(o, observed_us=AS_OF_US - 1), CTX) is None   # at as_of: fresh


# ------------------------------------------------------------------------------ relations
def _walk(st, as_of_us: int, known_us: int | None) -> set[str]:
    """The entity keys the incident's templates reach on the bundled store for oncall-03."""
    from ctxcli import api
    from ctxcli.engine.gates import Access
    from ctxcli.engine.retrieve import walk_access

    pb, _ = api.read_playbook("payment-incident-review")
    tmpl = {t.id: t for t in pb.path_templates}
    steps = [(tid, i, s.edge, s.to, 0.0, False) for tid in tmpl for i, s in enumerate(tmpl[tid].steps, 1)]
    a = Access(frozenset({"incident:read", "service:read", "deploy:read", "runbook:read", "org:read",
                          "policy:read", "wiki:read"}), "incident_review", "confidential")
    rows = st.walk(steps=steps, starts=[(tid, tmpl[tid].start) for tid in tmpl], seeds=["incident:INC-2026-0723"],
                   tenant="tenant-demo", max_hops=2, as_of_us=as_of_us, fanout=50, known_us=known_us,
                   **walk_access(st, a))
    return {r[4] for r in rows}


def test_an_edge_links_once_declared_by_the_knowledge_time(store):
    """The incident's AFFECTS edge is declared at 10:06: asked about 10:02, it links the incident
    to payment-api (and on to its owner and changes) when known at 10:06 exactly, not at
    10:05:59.999999, and not without a known_at (the knowledge time is then 10:02)."""
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        assert "service:payment-api" in _walk(st, INCIDENT, DECLARED)
        assert {"team:payments-core", "change:release-2026.07.23.1"} <= _walk(st, INCIDENT, DECLARED)
        assert _walk(st, INCIDENT, DECLARED - 1) == {"incident:INC-2026-0723"}
        assert _walk(st, INCIDENT, None) == {"incident:INC-2026-0723"}
    finally:
        st.close()


def test_an_edge_ending_at_the_question_time_no_longer_links(store):
    """payments-core's OWNED_BY edge ends at 2026-08-01T00:00: asked about one microsecond
    before, payments-core is reached; asked about that instant, only the next owner is, however
    late the knowledge time."""
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        before = _walk(st, OWNER_ENDS - 1, OWNER_ENDS + 10**12)
        assert {"team:payments-core", "team:payments-platform"} <= before
        at = _walk(st, OWNER_ENDS, OWNER_ENDS + 10**12)
        assert "team:payments-core" not in at and "team:payments-platform" in at
        # known before the next owner's edge began: it is not reached
        assert "team:payments-platform" not in _walk(st, OWNER_ENDS - 1, OWNER_ENDS - 1)
    finally:
        st.close()


# ------------------------------------------------------------------------------ the investigation
def _investigate(tmp_path, *flags) -> tuple[dict, dict]:
    out = tmp_path / "run"
    r = run_cli(["investigate", "INC-2026-0723", *flags, "--out", out])
    assert r.exit_code == 0, r.output
    return json.loads((out / "pack.json").read_text()), json.loads((out / "answer.json").read_text())


def test_asked_at_the_incident_known_at_the_investigation(store, tmp_path):
    """--as-of 10:02 --known-at 10:30: the owner payments-core, runbook v4 and the release are
    found (the incident's edges, declared at 10:06, were known at 10:30); the graph walk is
    what links them."""
    pack, answer = _investigate(tmp_path, "--as-of", "2026-07-23T10:02:00+08:00",
                                "--known-at", "2026-07-23T10:30:00+08:00")
    facts = {c["claim_id"]: (c["status"], c["facts"]) for c in answer["claims"]}
    assert facts["owner_at_incident"] == ("fact", {"owner_team": "payments-core"})
    assert facts["runbook_at_incident"] == ("fact", {"runbook_version": "v4"})
    assert facts["release_timing"][1]["release_id"] == "release-2026.07.23.1"
    assert facts["release_caused_errors"][0] == "hypothesis"
    assert answer["verdict"] == "partial"
    by_id = {e["object_id"]: e for e in pack["evidence"]}
    assert "graph" in by_id["OWN-PAYAPI-2025"]["channels"] and "graph" in by_id["DEP-release-2026.07.23.1"]["channels"]
    assert pack["request"]["as_of"] == "2026-07-23T10:02:00+08:00"
    assert pack["request"]["known_at"] == "2026-07-23T10:30:00+08:00"
    # the incident record itself (declared 10:06) is not valid yet at the question's time
    om = {o["ref"]: o for o in pack["omissions"]}
    assert (om["INC-2026-0723"]["gate"], om["INC-2026-0723"]["reason"]) == ("validity", "not_yet_valid")


def test_asked_at_the_incident_without_a_knowledge_time_the_edges_are_not_known(store, tmp_path):
    """The other side: without --known-at the knowledge time is 10:02, the edges are unknown,
    and the release and owner stay unlinked to the case."""
    pack, answer = _investigate(tmp_path, "--as-of", "2026-07-23T10:02:00+08:00")
    assert answer["verdict"] == "insufficient_evidence"
    om = {o["ref"]: (o["gate"], o["reason"]) for o in pack["omissions"]}
    assert om["OWN-PAYAPI-2025"] == ("relevance", "not_linked_to_case")
    assert om["DEP-release-2026.07.23.1"] == ("relevance", "not_linked_to_case")
