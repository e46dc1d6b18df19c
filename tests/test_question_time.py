"""The time a question is about (issue 47): validity and supersession at the question's time
(``as_of``), knowledge time and freshness at ``known_at`` (default: ``as_of``), and the
relations that link evidence to the case by when they were known — each boundary on both
sides (docs/gates.md, "Which time each gate uses")."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import datetime, timedelta, timezone

from ctxcli.engine.gates import Access, g_freshness, g_knowledge_time
from ctxcli.engine.retrieve import readable_for

from .conftest import run_cli
from .test_boundaries import AS_OF_US, CTX, obj

TZ = timezone(timedelta(hours=8))


def _us(s: str) -> int:
    return int(datetime.fromisoformat(s).timestamp()) * 1_000_000


INCIDENT = _us("2026-07-23T10:02:00+08:00")        # first PAY-4097 error
DECLARED = _us("2026-07-23T10:06:00+08:00")        # the incident's edges (AFFECTS, GOVERNED_BY)
INVESTIGATION = _us("2026-07-23T10:30:00+08:00")
OWNER_ENDS = _us("2026-08-01T00:00:00+08:00")      # payments-core's OWNED_BY edge ends
ATTESTER_ENDS = _us("2026-07-16T15:05:00+08:00")   # DEP-release-2026.07.09.1 ends (its CHANGED_BY edge does not)
LATER = _us("2027-01-01T00:00:00+08:00")


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


# ------------------------------------------------------------------------------ a source's snapshot (stale_sources)
DOCS_NEWEST = _us("2026-07-18T02:00:00+08:00")     # claims-documents' newest observation (SLA 24h)
DAY = 86_400 * 1_000_000
# knowledge time -> claims-documents' (snapshot, age in s, stale): the newest observation counts
# from its instant on; the SLA's end is inclusive (to the second)
SNAPSHOT_EDGES = {
    DOCS_NEWEST - 1: ("2026-07-15T16:40:00+08:00", 206_399, True),
    DOCS_NEWEST: ("2026-07-18T02:00:00+08:00", 0, False),
    DOCS_NEWEST + DAY: ("2026-07-18T02:00:00+08:00", 86_400, False),
    DOCS_NEWEST + DAY + 1_000_000: ("2026-07-18T02:00:00+08:00", 86_401, True),
}


def snapshot_edges(st) -> dict[int, tuple]:
    """claims-documents' snapshot at each knowledge time of SNAPSHOT_EDGES (as_of a year earlier:
    the snapshot is taken at the knowledge time), the same for the tenant's sources and for all."""
    from ctxcli.engine.freshness import source_ages

    out = {}
    for known in SNAPSHOT_EDGES:
        seen = set()
        for tenant in ("tenant-demo", None):        # a pack's sources, and every source (ctx sources)
            s = {x["source_id"]: x for x in source_ages(st, tenant, known - 365 * DAY, TZ, known)}
            d = s["claims-documents"]
            seen.add((d["snapshot_observed_at"], d["age_s"], d["stale"]))
        out[known] = seen.pop() if len(seen) == 1 else seen
    return out


def test_a_sources_snapshot_holds_what_was_observed_by_the_knowledge_time(store):
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        assert snapshot_edges(st) == SNAPSHOT_EDGES
    finally:
        st.close()


def test_a_shared_sources_snapshot_counts_only_the_tenants_own_observations():
    """A source whose records name their tenant (no tenant in the registry) is as fresh, for one
    tenant, as that tenant's newest record by the knowledge time: another tenant's newer record
    neither makes it fresh nor shows; another tenant's own source is not listed at all. Every
    source is listed when no tenant is given (``ctx sources``)."""
    import duckdb

    from ctxcli.engine.freshness import source_ages
    from ctxcli.store.duckdb_store import DuckDBStore
    from ctxcli.store.schema import STEPS

    con = duckdb.connect()
    for _, sql in STEPS:
        con.execute(sql)
    con.execute("INSERT INTO sources (source_id, tenant_id, refresh_sla) VALUES "
                "('shared', NULL, '1d'), ('a-own', 'tenant-a', '1d'), ('b-own', 'tenant-b', '1d')")
    now = 1_000 * DAY
    con.execute("INSERT INTO objects (doc_id, object_id, tenant_id, source_id, observed_us) VALUES "
                f"(1, 'S-A', 'tenant-a', 'shared', {now - 3 * DAY}), (2, 'S-B', 'tenant-b', 'shared', {now - 1}), "
                f"(3, 'A-1', 'tenant-a', 'a-own', {now - DAY}), (4, 'B-1', 'tenant-b', 'b-own', {now})")
    st = DuckDBStore(con)
    try:
        ages = {x["source_id"]: (x["age_s"], x["stale"]) for x in source_ages(st, "tenant-a", now, TZ)}
        assert ages == {"shared": (3 * 86400, True), "a-own": (86400, False)}
        ages = {x["source_id"]: (x["age_s"], x["stale"]) for x in source_ages(st, "tenant-b", now, TZ)}
        assert ages == {"shared": (0, False), "b-own": (0, False)}
        assert [x["source_id"] for x in source_ages(st, None, now, TZ)] == ["a-own", "b-own", "shared"]
    finally:
        con.close()


# ------------------------------------------------------------------------------ relations
ACCESS = Access(frozenset({"incident:read", "service:read", "deploy:read", "runbook:read", "org:read", "policy:read",
                           "wiki:read"}), "incident_review", "confidential")      # the incident's on-call


def _walk(st, as_of_us: int, known_us: int | None) -> set[str]:
    """The entity keys the incident's templates reach on the bundled store for oncall-03."""
    from ctxcli import api
    from ctxcli.engine.retrieve import walk_access

    pb, _ = api.read_playbook("payment-incident-review")
    tmpl = {t.id: t for t in pb.path_templates}
    steps = [(tid, i, s.edge, s.to, 0.0, False) for tid in tmpl for i, s in enumerate(tmpl[tid].steps, 1)]
    a = ACCESS
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


# (name, as_of, known_at): each relation edge of the bundled data, at it and one µs away
RELATION_EDGES = (
    ("declared", INCIDENT, DECLARED), ("declared-1us", INCIDENT, DECLARED - 1),     # AFFECTS: valid_from 10:06
    ("attester-ends-1us", ATTESTER_ENDS - 1, LATER), ("attester-ends", ATTESTER_ENDS, LATER),
    ("owner-ends-1us", OWNER_ENDS - 1, LATER), ("owner-ends", OWNER_ENDS, LATER))
# what of WATCHED links at each: (walk: entity keys reached; window: object ids found through
# one relation; relations_among: relation ids) — the same on both backends. Each pair differs
# by exactly the relation at its edge.
_AT_INCIDENT = ({"service:payment-api", "team:payments-core", "change:release-2026.07.23.1"},
                {"OWN-PAYAPI-2025", "RB-PAY-RECOVERY-v4#steps"}, {"REL-INC-0723-AFFECTS-PAYAPI", "REL-ORG-PAYAPI-OWNER-CORE"})
RELATION_LINKS = {
    "declared": _AT_INCIDENT,
    "declared-1us": (set(), {"OWN-PAYAPI-2025"}, {"REL-ORG-PAYAPI-OWNER-CORE"}),
    "attester-ends-1us": (_AT_INCIDENT[0] | {"change:release-2026.07.09.1"}, _AT_INCIDENT[1] | {"DEP-release-2026.07.09.1"},
                          _AT_INCIDENT[2] | {"REL-DEP-PAYAPI-R0709"}),
    "attester-ends": _AT_INCIDENT,
    "owner-ends-1us": _AT_INCIDENT,
    "owner-ends": ({"service:payment-api", "change:release-2026.07.23.1"}, {"RB-PAY-RECOVERY-v4#steps"},
                   {"REL-INC-0723-AFFECTS-PAYAPI"}),
}
WATCHED = ({"service:payment-api", "team:payments-core", "change:release-2026.07.23.1", "change:release-2026.07.09.1"},
           {"RB-PAY-RECOVERY-v4#steps", "DEP-release-2026.07.09.1", "OWN-PAYAPI-2025"},
           {"REL-INC-0723-AFFECTS-PAYAPI", "REL-DEP-PAYAPI-R0709", "REL-ORG-PAYAPI-OWNER-CORE"})


def relation_links(st) -> dict[str, tuple[set, set, set]]:
    """At each of RELATION_EDGES: what of WATCHED the graph walk reaches, the window channel
    finds (objects about the entities one AFFECTS, CHANGED_BY or OWNED_BY relation away from
    the incident or payment-api) and relations_among returns (the contradictions' statement)."""
    from ctxcli.engine.retrieve import walk_access

    acc = walk_access(st, ACCESS)
    ends = {"incident:INC-2026-0723": ("AFFECTS", "runbook"), "service:payment-api#c": ("CHANGED_BY", "release_event"),
            "service:payment-api#o": ("OWNED_BY", "service_owner")}
    keys = sorted(WATCHED[0] | {"incident:INC-2026-0723", "team:payments-platform"})
    out = {}
    for name, at, known in RELATION_EDGES:
        gated = {"tenant": "tenant-demo", "readable": readable_for(st, "tenant-demo", ACCESS), "as_of_us": at}
        qs = [(k, etype, [], {"entity": k.split("#")[0], "entity_type": None, "via": [rel], "time": "valid_from",
                              "from_us": -(2 ** 62), "to_us": 2 ** 62, "anchor_us": at}, 100)
              for k, (rel, etype) in ends.items()]
        docs = [d for _, d, _ in st.window(qs, access_ok=acc["access_ok"], entity_sources=acc["readable"],
                                           known_us=known, **gated).hits]
        found = {r[1] for r in st.object_metadata(docs)}
        among = {r[0] for r in st.relations_among(keys, rel_types=["AFFECTS", "CHANGED_BY", "OWNED_BY"],
                                                  tenant="tenant-demo", as_of_us=at, access_ok=acc["access_ok"],
                                                  known_us=known)}
        out[name] = (_walk(st, at, known) & WATCHED[0], found & WATCHED[1], among & WATCHED[2])
    return out


def test_a_relation_links_from_its_declaration_by_the_knowledge_time_until_its_end_at_the_question_time(store):
    """Walk, window channel and contradictions alike, at each relation edge of the bundled data
    and one microsecond away: declared exactly at the knowledge time links, a µs later not;
    ending (the relation, or the record attesting it) exactly at the question's time does not
    link, a µs before it does."""
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        assert relation_links(st) == RELATION_LINKS
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


# ------------------------------------------------------------------------------ validity before the limit
def add_expired_amount_signals(root, n: int = 45) -> None:
    """``n`` expired versions of C-102's CLAIM_AMOUNT signal (2025, one day each), in the
    risk-signals export of the project copy ``root``; their ids sort before SIG-C102-AMOUNT, so
    the structured channel ranks them first."""
    from ctxcli.util.canon import content_hash

    path = root / "sources" / "risk-signals" / "objects.jsonl"
    lines = []
    for i in range(n):
        text = f"Risk signal CLAIM_AMOUNT for claim C-102, computed on 2025-01-{i % 28 + 1:02d} (run {i}): superseded."
        lines.append(json.dumps({
            "object_id": f"SIG-C102-AMNT-{i:02d}", "tenant_id": "tenant-demo", "source_version": f"risk-2025.{i:02d}",
            "object_type": "risk_signal", "subject_id": "case:C-102", "title": "Risk signal CLAIM_AMOUNT — claim C-102",
            "content": text, "locator": f"risk://tenant-demo/signals/C-102/SIG-C102-AMNT-{i:02d}",
            "valid_from": f"2025-{i // 28 + 1:02d}-{i % 28 + 1:02d}T00:00:00+08:00",
            "valid_to": f"2025-{i // 28 + 1:02d}-{i % 28 + 1:02d}T12:00:00+08:00",
            "observed_at": f"2025-{i // 28 + 1:02d}-{i % 28 + 1:02d}T03:00:00+08:00", "required_scopes": [],
            "supports": ["claim_amount_signal"], "facts": {"signal": "CLAIM_AMOUNT", "claim_amount": 1000 + i,
                                                           "currency": "CNY"},
            "keys": ["C-102"], "content_hash": content_hash(text)}, ensure_ascii=False))
    with path.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _amount(pack: dict, answer: dict) -> tuple:
    ev = {e["object_id"] for e in pack["evidence"]}
    gap = {m["type"]: m for m in pack["missing"]}.get("claim_amount_signal")
    return "SIG-C102-AMOUNT" in ev, gap


def test_expired_versions_do_not_crowd_out_the_valid_one_on_duckdb(project_copy, tmp_path):
    """45 expired versions of C-102's amount signal rank before the one in force in the
    structured channel (limit 20): governed (one round) still finds the valid one in round 1, and
    the expired ones that came along are rejected by validity, never reported withheld."""
    add_expired_amount_signals(project_copy)
    assert run_cli(["load"]).exit_code == 0
    out = tmp_path / "run"
    r = run_cli(["investigate", "C-102", "--strategy", "governed", "--out", out])
    assert r.exit_code == 0, r.output
    pack = json.loads((out / "pack.json").read_text())
    found, gap = _amount(pack, None)
    assert found and gap is None
    item = next(e for e in pack["evidence"] if e["object_id"] == "SIG-C102-AMOUNT")
    assert item["round"] == 1 and "structured" in item["channels"]
    expired = [o for o in pack["omissions"] if o["ref"].startswith("SIG-C102-AMNT-")]
    assert expired and all((o["gate"], o["reason"]) == ("validity", "expired") for o in expired)
    assert not any(o["withheld"] for o in pack["omissions"] if o.get("supports") == ["claim_amount_signal"])


def test_every_ranked_statement_keeps_the_valid_record_behind_expired_ones(project_copy):
    """On the crowded copy, each ranked statement with a small limit holds exactly the head the
    rule gives (the first ``limit`` valid records, the invalid ones before them within
    limit × WIDEN_CAP places), and so holds SIG-C102-AMOUNT however many expired versions rank
    above it: BM25 from the term lists and in SQL, and the time-window channel."""
    from ctxcli.engine.retrieve import readable_for, walk_access
    from ctxcli.store import open_store

    from .test_access_rules import SUBJECTS, expected_head

    add_expired_amount_signals(project_copy)
    assert run_cli(["load"]).exit_code == 0
    st = open_store(project_copy / ".ctx" / "ctx.duckdb")
    try:
        at = _us("2026-07-23T12:00:00+08:00")
        a = SUBJECTS["investigator"]
        readable = readable_for(st, "tenant-demo", a)
        docs = dict(st.con.execute("SELECT object_id, doc_id FROM objects").fetchall())
        span = {d: (lo, hi) for d, lo, hi in st.con.execute("SELECT doc_id, valid_from_us, valid_to_us FROM objects")
                .fetchall()}

        def valid(d: int) -> bool:
            lo, hi = span[d]
            return (lo is None or lo <= at) and (hi is None or hi > at)

        target = docs["SIG-C102-AMOUNT"]
        q = [("claim_amount_signal", ["risk", "signal", "claim_amount", "claim", "c", "102"])]
        gated = {"tenant": "tenant-demo", "readable": readable, "as_of_us": at}
        for fn in (st.bm25, st.bm25_sql):
            full = [d for _, d, _ in fn(q, limit=100_000, **gated).hits]
            assert full.index(target) >= 6        # 45 expired versions rank above it
            for limit in (1, 3):
                got = [d for _, d, _ in fn(q, limit=limit, **gated).hits]
                assert got == expected_head(full, limit, valid) and target in got, (fn.__name__, limit)
        walk = walk_access(st, a)
        w = {"entity": "case:C-102", "entity_type": "case", "via": [], "time": "observed_at",
             "from_us": -(2 ** 62), "to_us": 2 ** 62, "anchor_us": _us("2025-01-01T00:00:00+08:00")}

        def window(limit: int) -> list[int]:
            found = st.window([("w", "claim_amount_signal", [], w, limit)], access_ok=walk["access_ok"],
                              entity_sources=walk["readable"], **gated)
            return [d for _, d, _ in found.hits]
        full = window(100_000)
        assert not valid(full[0]) and not valid(full[1]) and not valid(full[2])   # expired ones nearest
        for limit in (1, 3):
            got = window(limit)
            assert got == expected_head(full, limit, valid) and sum(map(valid, got)) == limit, limit
    finally:
        st.close()


# ------------------------------------------------------------------------------ supersession at the question's time
HOTFIX = ("release-2026.07.23.2,release,release,payment-api,,2026-07-23T10:05:00+08:00,f00d5e1,production,,"
          "2026-07-23T10:05:00+08:00,,2026-07-23T10:05:30+08:00,DEP-release-2026.07.23.1,cd-export-2026-07-23T10:20,"
          "Production hotfix release-2026.07.23.2 of payment-api,\"Hotfix release-2026.07.23.2 of payment-api "
          "completed in production at 2026-07-23 10:05:00+08:00. Commit f00d5e1, pipeline cd-prod-payments run 5531. "
          "Changes: connection pool limit raised back; replaces release-2026.07.23.1.\"\n")


def add_hotfix(root) -> None:
    """The hotfix release-2026.07.23.2 at 10:05, replacing release-2026.07.23.1, as one more row
    of the deployments export of the project copy ``root``."""
    path = root / "sources" / "pay-deployments" / "deployments.csv"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + ("" if text.endswith("\n") else "\n") + HOTFIX, encoding="utf-8")


def test_a_hotfix_after_the_incident_does_not_replace_the_release_in_force_at_it(project_copy, tmp_path):
    """With the hotfix row, `ctx investigate INC-2026-0723` (as_of 10:30) still names
    release-2026.07.23.1 as the release in force when the errors began (10:02: the playbook
    anchors release_event's validity at the incident's first_error_at) with the same
    hypothesis; the hotfix is named as a later change — not yet valid at the incident — and
    the trace says which time each decision used."""
    add_hotfix(project_copy)
    assert run_cli(["load"]).exit_code == 0
    pack, answer = _investigate(tmp_path, "--strategy", "dynamic")
    assert answer["verdict"] != "insufficient_evidence"
    facts = {c["claim_id"]: (c["status"], c["facts"]) for c in answer["claims"]}
    assert facts["release_timing"][1]["release_id"] == "release-2026.07.23.1"
    assert facts["release_timing"][1]["gap_minutes"] == 8
    assert facts["release_caused_errors"][0] == "hypothesis"
    om = {o["ref"]: o for o in pack["omissions"]}
    hot = om["DEP-release-2026.07.23.2"]
    assert (hot["gate"], hot["reason"]) == ("validity", "not_yet_valid")
    assert hot["detail"]["valid_at"] == {"anchor": "incident_timeline.first_error_at", "at": "2026-07-23T10:02:00+08:00"}
    assert hot["detail"]["valid_from"] == "2026-07-23T10:05:00+08:00"
    trace = [json.loads(x) for x in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()]
    from ctxcli.models.contracts import TRACE_EVENTS

    for e in trace:
        TRACE_EVENTS[e["event"]].model_validate(e)
    sel = [e for e in trace if e["event"] == "evidence_selected" and e["object_id"] == "DEP-release-2026.07.23.1"]
    assert sel and sel[-1]["valid_at"] == {"anchor": "incident_timeline.first_error_at",
                                           "at": "2026-07-23T10:02:00+08:00"}
    # judged at the anchor in round 1 already (the incident timeline is packed first), never at
    # as_of (10:30), where the hotfix had replaced it
    assert sel[-1]["round"] == 1
    assert not [e for e in trace if e["event"] == "candidate_rejected" and e["ref"] == "DEP-release-2026.07.23.1"]


def test_valid_at_must_name_another_declared_evidence_type():
    """A playbook whose valid_at names an unknown type, or the type itself, is refused."""
    import pytest

    from ctxcli import api
    from ctxcli.models.playbook import Playbook

    pb, _ = api.read_playbook("payment-incident-review")
    d = pb.model_dump(mode="json", by_alias=True)
    et = next(e for e in d["evidence_types"] if e["type"] == "release_event")
    assert et["valid_at"] == {"anchor_from": "incident_timeline", "anchor_fact": "first_error_at"}
    Playbook.model_validate(d)
    for bad in ("no_such_type", "release_event"):
        et["valid_at"]["anchor_from"] = bad
        with pytest.raises(ValueError, match="valid_at anchor_from"):
            Playbook.model_validate(d)


def test_a_playbook_without_valid_at_keeps_its_hash():
    """valid_at counts in a playbook's hash only when used: the motor-claim playbook (none)
    hashes as before the field existed; the incident playbook's hash covers its anchors."""
    from ctxcli import api
    from ctxcli.project import playbook_hash

    pb, h = api.read_playbook("motor-claim-review")
    assert h == playbook_hash(pb) == "sha256:6e8edc81c2885c5229cb822199ce7a89536cb7c1d26bc658e89453e00d021e76"  # as before issue 47
    inc, _ = api.read_playbook("payment-incident-review")
    d = inc.model_dump()
    for et in d["evidence_types"]:
        et["valid_at"] = None
    assert playbook_hash(type(inc).model_validate(d)) != playbook_hash(inc)


def test_an_anchor_moves_the_question_time_not_the_knowledge_time(project_copy, tmp_path):
    """The release row exported at 10:20 (after the 10:02 anchor, before the 10:30 as_of): judged
    at the anchor it is still known — the knowledge time stays the request's (known_at, else
    as_of) — so release-2026.07.23.1 is the release in force at the incident."""
    add_hotfix(project_copy)
    path = project_copy / "sources" / "pay-deployments" / "deployments.csv"
    rows = path.read_text(encoding="utf-8").splitlines(keepends=True)
    i = next(n for n, r in enumerate(rows) if r.startswith("release-2026.07.23.1,"))
    assert ",2026-07-23T09:54:30+08:00," in rows[i]
    rows[i] = rows[i].replace(",2026-07-23T09:54:30+08:00,", ",2026-07-23T10:20:00+08:00,")
    path.write_text("".join(rows), encoding="utf-8")
    assert run_cli(["load"]).exit_code == 0
    pack, answer = _investigate(tmp_path)
    facts = {c["claim_id"]: c["facts"] for c in answer["claims"]}
    assert facts["release_timing"]["release_id"] == "release-2026.07.23.1"
    assert "DEP-release-2026.07.23.1" in {e["object_id"] for e in pack["evidence"]}


# ------------------------------------------------------------------------------ anchored types judged only at the anchor
def add_linked_hotfix(root, at: str = "2026-07-23T10:05:00+08:00") -> None:
    """The hotfix row (completed at ``at``), linked to payment-api the way release-2026.07.23.1
    is: its change entity and a CHANGED_BY relation from the service, attested by the row."""
    path = root / "sources" / "pay-deployments" / "deployments.csv"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + ("" if text.endswith("\n") else "\n") + HOTFIX.replace("2026-07-23T10:05:00+08:00", at),
                    encoding="utf-8")
    d = root / "sources" / "pay-deployments"
    with (d / "entities.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps({"entity_key": "change:release-2026.07.23.2", "tenant_id": "tenant-demo",
                            "entity_type": "change", "name": "release-2026.07.23.2", "aliases": ["f00d5e1"]}) + "\n")
    with (d / "relations.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps({"relation_id": "REL-DEP-PAYAPI-R07232", "tenant_id": "tenant-demo",
                            "from": "service:payment-api", "type": "CHANGED_BY", "to": "change:release-2026.07.23.2",
                            "valid_from": at, "valid_to": None, "evidence_object_id": "DEP-release-2026.07.23.2",
                            "source_version": "cd-export-2026-07-23T10:20", "confidence": 1.0}) + "\n")


AT_INCIDENT = {"anchor": "incident_timeline.first_error_at", "at": "2026-07-23T10:02:00+08:00"}
ASK_AT_INCIDENT = ("--as-of", "2026-07-23T10:02:00+08:00", "--known-at", "2026-07-23T10:30:00+08:00")


def _claims(answer: dict) -> dict:
    return {c["claim_id"]: (c["status"], c["facts"]) for c in answer["claims"]}


def _in_force_at_incident(pack: dict, answer: dict) -> None:
    """release-2026.07.23.1 (gap 8, a hypothesis), payments-core and runbook v4, as at 10:02; the
    linked hotfix is a later change, not valid at the anchor, never the release at the incident."""
    facts = _claims(answer)
    assert facts["release_timing"] == ("fact", {"release_id": "release-2026.07.23.1", "gap_minutes": 8.0,
                                                "release_completed_at": "2026-07-23T09:54:00+08:00",
                                                "first_error_at": "2026-07-23T10:02:00+08:00"})
    assert facts["release_caused_errors"] == ("hypothesis", {"release_id": "release-2026.07.23.1", "gap_minutes": 8.0})
    assert facts["owner_at_incident"] == ("fact", {"owner_team": "payments-core"})
    assert facts["runbook_at_incident"] == ("fact", {"runbook_version": "v4"})
    assert answer["verdict"] == "partial"          # as on the bundled data without the hotfix
    ev = {e["object_id"] for e in pack["evidence"]}
    assert "DEP-release-2026.07.23.1" in ev and "DEP-release-2026.07.23.2" not in ev
    hot = [o for o in pack["omissions"] if o["ref"] == "DEP-release-2026.07.23.2"]
    assert [(o["gate"], o["reason"], o["detail"]["valid_at"]) for o in hot] == [
        ("validity", "not_yet_valid", AT_INCIDENT)]
    assert hot[0]["detail"]["replacement"]["object_id"] == "DEP-release-2026.07.23.1"
    assert not [o for o in pack["omissions"] if o["ref"] == "DEP-release-2026.07.23.1"]


def test_a_linked_hotfix_is_never_admitted_before_the_anchor_is_known(project_copy, tmp_path):
    """The hotfix linked to payment-api like release .1 (so relevance no longer drops it): round 1
    used to admit it, judged at as_of (10:30) before the incident timeline was packed, and named
    it the release with a gap of -3 minutes. The anchor type is packed first; the hotfix is judged
    at 10:02 (not yet valid there) and release .1 is the release in force."""
    add_linked_hotfix(project_copy)
    assert run_cli(["load"]).exit_code == 0
    for strategy in ("dynamic", "governed"):        # governed: one round, judged at the anchor too
        pack, answer = _investigate(tmp_path / strategy, "--strategy", strategy)
        _in_force_at_incident(pack, answer)
        sel = {e["object_id"]: e for e in pack["evidence"]}
        assert sel["DEP-release-2026.07.23.1"]["round"] == 1 and sel["INC-2026-0723-TL-01"]["round"] == 1
    # the anchor type's item holding first_error_at is packed first, then the rest in the usual
    # order (coverage first, then extras): the evidence of the bundled data without the hotfix
    assert [e["object_id"] for e in pack["evidence"]] == [
        "INC-2026-0723-TL-01", "DEP-release-2026.07.23.1", "DEP-RR-2026-0723-01", "OWN-PAYAPI-2025",
        "RB-PAY-RECOVERY-v4#overview", "POL-INCIDENT-READ-01", "RB-PAY-RECOVERY-v4#prerequisites",
        "RB-PAY-RECOVERY-v4#rollback", "RB-PAY-RECOVERY-v4#validation", "RB-PAY-RECOVERY-v4#steps",
        "INC-2026-0723-F-01", "INC-2026-0723", "INC-2026-0723-NOTE-01", "INC-2026-0723-TL-02"]
    trace = [json.loads(x) for x in (tmp_path / "dynamic" / "run" / "trace.jsonl").read_text().splitlines()]
    chosen = {e["object_id"]: e.get("valid_at") for e in trace if e["event"] == "evidence_selected"}
    assert chosen["DEP-release-2026.07.23.1"] == chosen["OWN-PAYAPI-2025"] == AT_INCIDENT
    assert chosen["RB-PAY-RECOVERY-v4#overview"] == AT_INCIDENT and chosen["INC-2026-0723-TL-01"] is None


def test_a_linked_hotfix_asked_at_the_incident_known_at_the_investigation(project_copy, tmp_path):
    """--as-of 10:02 --known-at 10:30 on the copy with the linked hotfix: the same answer."""
    add_linked_hotfix(project_copy)
    assert run_cli(["load"]).exit_code == 0
    _in_force_at_incident(*_investigate(tmp_path, *ASK_AT_INCIDENT))


def test_a_hotfix_at_the_first_error_instant_is_in_force_there(project_copy, tmp_path):
    """The edge at the anchor: a hotfix completed at 10:02:00 exactly is valid at the anchor
    (valid_from ≤ at) and replaces release .1 there (superseded, judged at the anchor); gap 0."""
    add_linked_hotfix(project_copy, "2026-07-23T10:02:00+08:00")
    assert run_cli(["load"]).exit_code == 0
    pack, answer = _investigate(tmp_path)
    facts = _claims(answer)
    assert facts["release_timing"][1]["release_id"] == "release-2026.07.23.2"
    assert facts["release_timing"][1]["gap_minutes"] == 0
    old = [o for o in pack["omissions"] if o["ref"] == "DEP-release-2026.07.23.1"]
    assert [(o["gate"], o["reason"], o["detail"]["valid_at"]) for o in old] == [
        ("validity", "superseded_before_as_of", AT_INCIDENT)]


def test_a_hotfix_one_microsecond_after_the_first_error_is_not(project_copy, tmp_path):
    """The other side: completed at 10:02:00.000001, the hotfix is not yet valid at the anchor."""
    add_linked_hotfix(project_copy, "2026-07-23T10:02:00.000001+08:00")
    assert run_cli(["load"]).exit_code == 0
    pack, answer = _investigate(tmp_path)
    assert _claims(answer)["release_timing"][1]["release_id"] == "release-2026.07.23.1"
    hot = next(o for o in pack["omissions"] if o["ref"] == "DEP-release-2026.07.23.2")
    assert (hot["gate"], hot["reason"], hot["detail"]["valid_at"]) == ("validity", "not_yet_valid", AT_INCIDENT)
    assert hot["detail"]["valid_from"] == "2026-07-23T10:02:00.000001+08:00"


def test_without_its_anchor_an_anchored_type_is_judged_at_as_of_and_says_so(project_copy):
    """An agent step for release_event alone packs no incident timeline: the anchor is not
    known, so the release is judged at as_of (10:30, where the linked hotfix is in force), and
    its record says which time was used and why (``unresolved``)."""
    from ctxcli import api

    add_linked_hotfix(project_copy)
    assert run_cli(["load"]).exit_code == 0
    step = api.build_step(api.InvestigateOptions(case="INC-2026-0723"), goal_types=["release_event"], held=[],
                          step_budget=None)
    assert [e["object_id"] for e in step.evidence] == ["DEP-release-2026.07.23.2"]
    sel = next(e for e in step.trace if e["event"] == "evidence_selected")
    assert sel["valid_at"] == {"anchor": "incident_timeline.first_error_at", "at": "2026-07-23T10:30:00+08:00",
                               "unresolved": "anchor_not_admitted"}
    old = next(o for o in step.omissions if o["ref"] == "DEP-release-2026.07.23.1")
    assert old["reason"] == "superseded_before_as_of" and old["detail"]["valid_at"]["unresolved"] == "anchor_not_admitted"


def test_an_item_admitted_before_its_anchor_is_evicted_once_the_anchor_is_known(project_copy, tmp_path):
    """A playbook copy whose incident timeline is found only by round 2's follow-up: round 1
    admits the linked hotfix judged at as_of (recorded ``unresolved``); round 2 packs the
    timeline, judges the hotfix again at 10:02, evicts it (validity, not_yet_valid, the anchor,
    ``evicted: {admitted_in_round: 1}``), re-opens release_event and admits release .1 there."""
    add_linked_hotfix(project_copy)
    pb = project_copy / "manifests" / "playbooks" / "payment-incident-review.yaml"
    text = pb.read_text(encoding="utf-8")
    old = text[text.index("    retrieve:\n      structured:\n        object_types: [incident, timeline_event"):
               text.index("  - type: release_event")]
    pb.write_text(text.replace(old, "    retrieve:\n      structured:\n        object_types: [security_review]\n"
                                    "    followup:\n      structured:\n        object_types: [timeline_event]\n\n"),
                  encoding="utf-8")
    assert run_cli(["load"]).exit_code == 0
    pack, answer = _investigate(tmp_path)
    assert _claims(answer)["release_timing"][1]["release_id"] == "release-2026.07.23.1"
    assert _claims(answer)["release_timing"][1]["gap_minutes"] == 8
    rounds = {e["object_id"]: e["round"] for e in pack["evidence"]}
    assert rounds["INC-2026-0723-TL-01"] == rounds["DEP-release-2026.07.23.1"] == 2
    release = next(e for e in pack["evidence"] if e["object_id"] == "DEP-release-2026.07.23.1")
    assert release["selected_for"] == "release_event"         # the type was missing again in round 2
    assert "DEP-release-2026.07.23.2" not in rounds
    hot = [o for o in pack["omissions"] if o["ref"] == "DEP-release-2026.07.23.2"]
    assert [(o["gate"], o["reason"], o["round"], o["detail"]["valid_at"], o["detail"]["evicted"]["admitted_in_round"])
            for o in hot] == [("validity", "not_yet_valid", 2, AT_INCIDENT, 1)]
    assert pack["slots"]["evidence_tokens_by_items"] == pack["slots"]["used"]["evidence"]
    trace = [json.loads(x) for x in (tmp_path / "run" / "trace.jsonl").read_text().splitlines()]
    sel = [(e["round"], e["valid_at"]) for e in trace if e["event"] == "evidence_selected"
           and e["object_id"] == "DEP-release-2026.07.23.2"]
    assert sel == [(1, {"anchor": "incident_timeline.first_error_at", "at": "2026-07-23T10:30:00+08:00",
                        "unresolved": "anchor_not_admitted"})]
    # the evicted item's tokens were given back: the slot counts only the items in the pack
    last = [e for e in trace if e["event"] == "sufficiency_assessed"][-1]
    assert last["evidence_tokens"] == pack["slots"]["evidence_tokens_by_items"]
    # the evicted item's selection is in the trace, with the eviction that names it: the report
    # still reads the trace as this pack's
    evicted = hot[0]["detail"]["evicted"]["evidence_id"]
    assert evicted in {e["evidence_id"] for e in trace if e["event"] == "evidence_selected"}
    r = run_cli(["report", tmp_path / "run"])
    assert r.exit_code == 0, r.stderr
    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert len(set(re.findall(r'<span class="seq">(\d+)</span>', page))) == len(trace)


def test_an_erased_object_of_an_anchored_type_stays_out(project_copy, tmp_path):
    """An anchored type is judged with a gate context of its own (the anchor as the question's
    time): the tenant's recorded erasures apply there too — the erased release is dropped by
    the erasure gate, never packed."""
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["erase", "DEP-release-2026.07.23.1", "--reason", "wrong export"]).exit_code == 0
    pack, _ = _investigate(tmp_path)
    assert "DEP-release-2026.07.23.1" not in {e["object_id"] for e in pack["evidence"]}
    om = [o for o in pack["omissions"] if o.get("object_id") == "DEP-release-2026.07.23.1"
          or o["ref"] == "DEP-release-2026.07.23.1"]
    assert om and {o["gate"] for o in om} == {"erasure"}


# ------------------------------------------------------------------------------ supersession: chains, branches, edges
H = 3_600_000_000      # one hour in µs


def _versions(*rows: tuple) -> list[tuple]:
    """Version rows (hydrate.Version) of one family: (object id, supersedes, valid_from,
    valid_to, observed_at), every one readable by the test subject."""
    return [(oid, sup, f"ver-{oid}", vf, vt, [], ["review"], "s", obs) for oid, sup, vf, vt, obs in rows]


def _judge(members: list[tuple], at: int, known: int | None = None) -> dict[str, tuple]:
    """object id -> (validity reason or None, the replacement named) of every version, judged
    by the validity gate at ``at`` as known at ``known``, as the builder wires it."""
    from ctxcli.engine.gates import g_validity
    from ctxcli.engine.hydrate import find_replacement, find_successor
    from ctxcli.util.timeutil import us_to_dt

    src = {"s": ("s", "internal")}
    ctx = dataclasses.replace(
        CTX, as_of=us_to_dt(at, TZ), as_of_us=at, known_at_us=known,
        replacement=lambda o: find_replacement(members, o, "review", at, frozenset(), clearance="internal", sources=src,
                                               known_at_us=known),
        successor=lambda o: find_successor(members, o, "review", at, known, frozenset(), clearance="internal",
                                           sources=src))
    out = {}
    for oid, sup, _, vf, vt, *_rest, obs in members:
        rej = g_validity(obj(object_id=oid, supersedes=sup, valid_from_us=vf, valid_to_us=vt, observed_us=obs,
                             family=1), ctx)
        out[oid] = (None, None) if rej is None else (rej.reason, (rej.detail["replacement"] or {}).get("object_id"))
    return out


T1, T2, T3 = AS_OF_US - 10 * H, AS_OF_US, AS_OF_US + 10 * H


def test_a_chain_whose_next_version_is_not_yet_valid_keeps_the_one_in_force():
    """.1 → .2 → .3, all open-ended, .2 from T2 and .3 from T3: before T2 .1 is in force and both
    later versions are not yet valid (naming .1); from T2 exactly .2 replaces .1; from T3 .3
    replaces both. One microsecond before T2, .1 still."""
    chain = _versions((".1", None, T1, None, T1), (".2", ".1", T2, None, T1), (".3", ".2", T3, None, T1))
    assert _judge(chain, T2 - 1) == {".1": (None, None), ".2": ("not_yet_valid", ".1"), ".3": ("not_yet_valid", ".1")}
    assert _judge(chain, T2) == {".1": ("superseded_before_as_of", ".2"), ".2": (None, None),
                                 ".3": ("not_yet_valid", ".2")}
    assert _judge(chain, T3) == {".1": ("superseded_before_as_of", ".3"), ".2": ("superseded_before_as_of", ".3"),
                                 ".3": (None, None)}


def test_a_version_replaced_by_two_is_superseded_by_the_one_in_force():
    """.1 replaced by .2a (from T2) and by .2b (from T3): between T2 and T3 .2a is in force and
    .1 superseded by it — whichever replacement sorts last — and .2b is not yet valid; from T3
    .1 names the newer one. Before T2, .1 alone."""
    branch = _versions((".1", None, T1, None, T1), (".2a", ".1", T2, None, T1), (".2b", ".1", T3, None, T1))
    assert _judge(branch, T2 - 1) == {".1": (None, None), ".2a": ("not_yet_valid", ".1"),
                                      ".2b": ("not_yet_valid", ".1")}
    assert _judge(branch, T2)[".1"] == ("superseded_before_as_of", ".2a")
    assert _judge(branch, T2)[".2b"][0] == "not_yet_valid" and _judge(branch, T2)[".2a"] == (None, None)
    assert _judge(branch, T3)[".1"] == ("superseded_before_as_of", ".2b")
    # the same with the names the other way round (the later one sorting first)
    swapped = _versions((".1", None, T1, None, T1), (".2b", ".1", T2, None, T1), (".2a", ".1", T3, None, T1))
    assert _judge(swapped, T2)[".1"] == ("superseded_before_as_of", ".2b")
    assert _judge(swapped, T3)[".1"] == ("superseded_before_as_of", ".2a")


def test_an_expired_version_names_the_one_in_force_at_its_end_even_across_a_branch():
    """.1 ends at T2 exactly; .2a (from T2) and .2b (from T3) replace it: at T2 .1 is expired and
    names .2a, one microsecond earlier it is in force; at T3 it names .2b."""
    branch = _versions((".1", None, T1, T2, T1), (".2a", ".1", T2, None, T1), (".2b", ".1", T3, None, T1))
    assert _judge(branch, T2 - 1)[".1"] == (None, None)
    assert _judge(branch, T2)[".1"] == ("expired", ".2a")
    assert _judge(branch, T3)[".1"] == ("expired", ".2b")
    # along a chain: .2 ends exactly where .3 begins; at that instant .1 names .3, a µs before .2
    chain = _versions((".1", None, T1, T1 + H, T1), (".2", ".1", T1 + H, T2, T1), (".3", ".2", T2, None, T1))
    assert _judge(chain, T2 - 1)[".1"] == ("expired", ".2") and _judge(chain, T2)[".1"] == ("expired", ".3")


def test_a_replacement_supersedes_once_observed_by_the_knowledge_time():
    """.2 (in force from T1 + 1h) was observed at T2: known at T2 exactly it supersedes .1; known
    one microsecond earlier it does not, and .1 stays in force. An expired .1 names .2 as its
    replacement only from then, too."""
    chain = _versions((".1", None, T1, None, T1), (".2", ".1", T1 + H, None, T2))
    assert _judge(chain, T3, T2)[".1"] == ("superseded_before_as_of", ".2")
    assert _judge(chain, T3, T2 - 1)[".1"] == (None, None)
    # .1 ending where .2 begins: expired either way, and .2 is named only once it was observed
    ended = _versions((".1", None, T1, T1 + H, T1), (".2", ".1", T1 + H, None, T2))
    assert _judge(ended, T3, T2)[".1"] == ("expired", ".2")
    assert _judge(ended, T3, T2 - 1)[".1"] == ("expired", None)


# ------------------------------------------------------------------------------ the anchor's value
def _timeline(v, t="incident_timeline") -> dict:
    return {"supports": [t], "facts": {"first_error_at": v}}


def test_the_anchor_is_the_one_instant_its_items_name_in_any_zone():
    """Admitted items agree on an anchor when they name the same instant, however written; two
    instants (one microsecond apart) conflict; a value that is not a time with an offset is
    said so; items of other types do not count."""
    from ctxcli.engine.builder import anchor_value

    def at(*items):
        return anchor_value(list(items), "incident_timeline", "first_error_at")

    assert at() is None
    assert at(_timeline("2026-07-23T10:02:00+08:00")) == (INCIDENT, "2026-07-23T10:02:00+08:00")
    assert at(_timeline("2026-07-23T10:02:00+08:00"), _timeline("2026-07-23T02:02:00Z")) == (
        INCIDENT, "2026-07-23T02:02:00Z")
    assert at(_timeline("2026-07-23T10:02:00+08:00"), _timeline("2026-07-23T10:02:00.000001+08:00")) == \
        "anchor_conflict"
    assert at(_timeline("2026-07-23T10:02:00+08:00"), _timeline("soon")) == "anchor_not_a_time"
    assert at(_timeline("2026-07-23T10:02:00")) == "anchor_not_a_time"
    assert at(_timeline("2026-07-23T10:02:00+08:00"), _timeline("2026-07-23T10:01:00+08:00", "release_event")) == (
        INCIDENT, "2026-07-23T10:02:00+08:00")


def test_a_second_timeline_entry_naming_the_first_error_in_utc_agrees_with_it(project_copy, tmp_path):
    """The incident's first error written again in UTC by another timeline entry: the anchor is
    still known (10:02 +08:00), the hotfix completed after it stays out."""
    path = project_copy / "sources" / "pay-incidents" / "incidents.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    text = json.dumps(doc)
    assert text.count('"entry_id": "TL-01"') == 1
    tl = json.loads(text[text.index('{"entry_id": "TL-01"'):].split(', {"entry_id": "TL-02"')[0])
    twin = dict(tl, entry_id="TL-01B", first_error_at="2026-07-23T02:02:00Z",
                title="INC-2026-0723 timeline: first PAY-4097 error (UTC note)",
                text="02:02:00 UTC: the first PAY-4097 error, as the on-call note in UTC records it.")
    path.write_text(text.replace(json.dumps(tl), json.dumps(tl) + ", " + json.dumps(twin)), encoding="utf-8")
    add_linked_hotfix(project_copy)
    assert run_cli(["load"]).exit_code == 0
    pack, answer = _investigate(tmp_path)
    assert {"INC-2026-0723-TL-01", "INC-2026-0723-TL-01B"} <= {e["object_id"] for e in pack["evidence"]}
    # the answer binds one first error (the first of the two texts in order), not a conflict
    status, facts = _claims(answer)["release_timing"]
    assert (status, facts["release_id"], facts["first_error_at"], facts["gap_minutes"]) == (
        "fact", "release-2026.07.23.1", "2026-07-23T02:02:00Z", 8)
    hot = next(o for o in pack["omissions"] if o["ref"] == "DEP-release-2026.07.23.2")
    assert (hot["gate"], hot["reason"], hot["detail"]["valid_at"]["anchor"]) == (
        "validity", "not_yet_valid", "incident_timeline.first_error_at")
    assert "unresolved" not in hot["detail"]["valid_at"]
