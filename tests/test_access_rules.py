"""Access rules before top-k (issue 28, item 1): every channel's statement applies the tenant,
scope, purpose and source (clearance, enabled) rules before its limit, returns only readable
records, and counts what it withheld per access combination of the subject's own tenant —
never an id. The helpers here run every channel of a store; tests/test_postgres.py runs the
same checks on PostgreSQL."""

from __future__ import annotations

import json

import pytest

from ctxcli.engine.gates import Access
from ctxcli.engine.retrieve import QueryRun, readable_for, withheld_by_gate
from ctxcli.engine.plan import Query
from ctxcli.models.manifest import clearance_rank

from .conftest import REPO, run_cli

BIG = 100_000          # a limit past every match: the lists hold every readable match
AS_OF = 2**62          # (validity does not matter with limits this large)
CHANNELS = ("structured", "bm25", "graph", "vector", "window")
SUBJECTS = {
    # the C-102 investigator: no fraud:read (the SIU note, the partner's fraud-desk notes),
    # purpose claim_review (the audit-only extract, the fraud_investigation notes)
    "investigator": Access(frozenset({"case:read", "policy:read", "document:read", "risk:read", "incident:read",
                                      "deploy:read", "runbook:read", "org:read", "postmortem:read"}),
                           "claim_review", "confidential"),
    # cleared for internal only: every confidential source is withheld by classification
    "internal": Access(frozenset({"case:read", "policy:read", "document:read", "risk:read", "fraud:read"}),
                       "claim_review", "internal"),
    "auditor": Access(frozenset({"case:read", "risk:read", "fraud:read"}), "audit", "restricted"),
}


def corpus(d) -> dict:
    """What the channels are asked for (every key, term, type) and each object's access
    columns, read from the DuckDB store ``d``."""
    con = d.con
    objs = {r[0]: r[1:] for r in con.execute(
        "SELECT o.doc_id, o.tenant_id, o.source_id, o.required_scopes, o.allowed_purposes, s.classification, "
        "s.enabled FROM objects o JOIN sources s ON s.source_id = o.source_id").fetchall()}
    from ctxcli.embed import load_model

    model = load_model()
    vecs = [v for v in (model.embed(t) for t in ("claim amount risk signal", "how do I bring payments back",
                                                 "rule version valid on that date")) if v is not None]
    span = dict((r[0], r[1:]) for r in con.execute("SELECT doc_id, valid_from_us, valid_to_us FROM objects").fetchall())

    def valid(doc: int, at: int) -> bool:
        lo, hi = span[doc]
        return (lo is None or lo <= at) and (hi is None or hi > at)

    return {"objects": objs, "valid": valid, "span": span,
            "supports": dict(con.execute("SELECT doc_id, supports FROM objects").fetchall()),
            "subjects": dict(con.execute("SELECT doc_id, subject_id FROM objects").fetchall()),
            "keys": sorted({k for (k,) in con.execute("SELECT DISTINCT key FROM object_keys").fetchall()}),
            "terms": sorted({t for (t,) in con.execute("SELECT term FROM term_stats").fetchall()}),
            "types": [t for (t,) in con.execute("SELECT evidence_type FROM support_bits ORDER BY 1").fetchall()],
            "vecs": vecs,
            # the window channel: every entity type, every relation type, every relation and source usable
            "entity_types": [t for (t,) in con.execute("SELECT DISTINCT entity_type FROM entities ORDER BY 1").fetchall()],
            "rel_types": [t for (t,) in con.execute("SELECT DISTINCT rel_type FROM relations ORDER BY 1").fetchall()],
            "access_ids": [a for (a,) in con.execute("SELECT access_id FROM relation_access ORDER BY 1").fetchall()],
            "sources": [s for (s,) in con.execute("SELECT source_id FROM sources ORDER BY 1").fetchall()]}


def window_queries(c: dict, limit: int, anchor_us: int) -> list[tuple]:
    """One window query per (evidence type, entity type), every relation type, all of time."""
    return [(f"w{i:03d}{j:03d}", t, [], {"entity": None, "entity_type": et, "via": c["rel_types"], "time": "valid_from",
                                         "from_us": -(2 ** 62), "to_us": 2 ** 62, "anchor_us": anchor_us}, limit)
            for i, t in enumerate(c["types"]) for j, et in enumerate(c["entity_types"])]


def run_channels(st, tenant: str, readable, c: dict) -> dict[str, tuple[set[int], list[tuple]]]:
    """channel -> (doc ids returned, withheld rows) of store ``st`` for ``tenant``, every query
    with a limit past every match. The withheld rows are normalised to (source, scopes,
    purposes, count) (the graph's carry its key and supports first)."""
    types, keys = c["types"], c["keys"]
    gated = {"tenant": tenant, "readable": readable, "as_of_us": AS_OF}
    out = {}
    f = st.structured([(f"q{i}", t, []) for i, t in enumerate(types)], seeds=keys, business_keys=keys,
                      limit=BIG, **gated)
    out["structured"] = ({d for _, d in f.hits}, [w[1:] for w in f.withheld])
    f = st.bm25([(t, c["terms"]) for t in types], limit=BIG, **gated)
    out["bm25"] = ({d for _, d, _ in f.hits}, [w[1:] for w in f.withheld])
    f = st.graph_hits(keys, **gated)
    out["graph"] = ({d for _, d, _, _ in f.hits}, [w[2:] for w in f.withheld])
    f = st.vector([(t, [], BIG, v) for v in c["vecs"] for t in types], **gated)
    out["vector"] = ({d for _, d, _ in f.hits}, [w[1:] for w in f.withheld])
    f = st.window(window_queries(c, BIG, AS_OF), access_ok=c["access_ids"], entity_sources=c["sources"], **gated)
    out["window"] = ({d for _, d, _ in f.hits}, [w[1:] for w in f.withheld])
    return out


def first_gate(row: tuple, a: Access) -> str | None:
    """The gate that withholds an object (tenant, source, scopes, purposes, level, enabled)."""
    _, _, scopes, purposes, level, enabled = row
    if set(scopes or []) - a.scopes:
        return "scope"
    if not enabled or clearance_rank(level) > clearance_rank(a.clearance):
        return "classification"
    if a.purpose not in (purposes or []):
        return "purpose"
    return None


def check_every_channel(st, c: dict) -> dict[str, set[str]]:
    """For each tenant and subject: each channel returns exactly its tenant's readable matches
    (its ungated matches, kept by the Python form of the rules), and its withheld counts add
    up, gate by gate, to the matches it left out. Returns channel -> gates seen withholding."""
    seen: dict[str, set[str]] = {ch: set() for ch in CHANNELS}
    objs = c["objects"]
    for tenant in ("tenant-demo", "tenant-other"):
        every = run_channels(st, tenant, None, c)
        for ch, (docs, held) in every.items():
            assert docs and {objs[d][0] for d in docs} == {tenant}, (ch, tenant)
            assert held == [], (ch, tenant)                # ungated: nothing withheld
        for name, a in SUBJECTS.items():
            got = run_channels(st, tenant, readable_for(st, tenant, a), c)
            for ch, (docs, held) in got.items():
                want = {d for d in every[ch][0] if first_gate(objs[d], a) is None}
                assert docs == want, (ch, tenant, name, sorted(docs ^ want)[:5])
                run = QueryRun(Query("q", ch, "t", 1), [])
                groups = [tuple(w[-4:]) for w in held]
                withheld_by_gate(run, groups, a, {r[1]: (r[4] if r[5] else None) for r in objs.values()})
                if ch in ("structured", "graph"):      # each match once per (type of the query)
                    expect: dict[str, int] = {}
                    for d in every[ch][0] - docs:
                        g = first_gate(objs[d], a)
                        expect[g] = expect.get(g, 0) + 1
                    assert {g: n > 0 for g, n in run.withheld.items()} == {g: True for g in expect}, (ch, name)
                left_out = every[ch][0] - docs
                assert bool(left_out) == bool(run.withheld), (ch, tenant, name)
                assert {first_gate(objs[d], a) for d in left_out} == set(run.withheld), (ch, tenant, name)
                seen[ch] |= set(run.withheld)
    return seen


def test_every_channel_applies_every_access_rule_before_its_limit_on_duckdb(store):
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        seen = check_every_channel(st, corpus(st))
    finally:
        st.close()
    # every rule withheld something in every channel: dropping one from a statement shows
    assert seen == {ch: {"scope", "classification", "purpose"} for ch in CHANNELS}


WIDEN_AT = 1784779200000000     # 2026-07-23T12:00:00+08:00 (C-102's as_of) in microseconds


def ranked_lists(st, tenant: str, readable, c: dict, limit: int, as_of_us: int) -> dict[tuple[str, int], list[int]]:
    """(channel, query index) -> doc ids in rank order, for structured, BM25 and vector."""
    types, keys = c["types"], c["keys"]
    gated = {"tenant": tenant, "readable": readable, "as_of_us": as_of_us}
    out: dict[tuple[str, int], list[int]] = {}
    f = st.structured([(f"q{i:03d}", t, []) for i, t in enumerate(types)], seeds=keys, business_keys=keys,
                      limit=limit, **gated)
    for qid, d in f.hits:
        out.setdefault(("structured", int(qid[1:])), []).append(d)
    for ch, f in (("bm25", st.bm25([(t, c["terms"]) for t in types], limit=limit, **gated)),
                  ("vector", st.vector([(t, [], limit, v) for v in c["vecs"] for t in types], **gated))):
        for qi, d, _ in f.hits:
            out.setdefault((ch, qi), []).append(d)
    return out


def expected_head(ranked: list[int], limit: int, valid) -> list[int]:
    """What a list with ``limit`` holds of the full ranking: the first ``limit`` records valid
    at as_of, and the invalid ones before the last of them that rank within the first
    ``limit`` × WIDEN_CAP places (validity before the limit, issue 47)."""
    from ctxcli.store.access import WIDEN_CAP

    want, n_valid = [], 0
    for rank, d in enumerate(ranked, 1):
        if n_valid == limit:
            break
        if valid(d) or rank <= limit * WIDEN_CAP:
            want.append(d)
        n_valid += bool(valid(d))
    return want


def check_widening(st, c: dict) -> int:
    """With a small limit, each list is the head of the full ranking that holds ``limit``
    records valid at as_of, or ``limit`` × WIDEN_CAP records; returns how many lists went past
    their limit."""

    valid = c["valid"]
    widened = 0
    for tenant in ("tenant-demo", "tenant-other"):
        readable = readable_for(st, tenant, SUBJECTS["investigator"])
        full = ranked_lists(st, tenant, readable, c, BIG, WIDEN_AT)
        for limit in (1, 3):
            got = ranked_lists(st, tenant, readable, c, limit, WIDEN_AT)
            for key, docs in full.items():
                want = expected_head(docs, limit, lambda d: valid(d, WIDEN_AT))
                assert got.get(key, []) == want, (tenant, key, limit)
                widened += len(want) > limit
    return widened


def validity_ends(c: dict, tenant: str = "tenant-demo") -> list[int]:
    """Every instant at which a record of ``tenant`` stops being valid (its valid_to); in the
    bundled data each is also where its next version becomes valid (its valid_from)."""
    return sorted({hi for d, (lo, hi) in c["span"].items() if hi is not None and c["objects"][d][0] == tenant})


def check_validity_edges(st, c: dict) -> int:
    """One microsecond before and exactly at each :func:`validity_ends` instant, every ranked
    list with limit 1 (structured, BM25, vector, the time window) of the types of the records
    that end is the head of the full ranking that validity at that instant gives
    (``valid_from ≤ as_of < valid_to``), and the graph step flags each object valid exactly
    then. Returns how many lists changed across the instants (a statement judging an end one
    microsecond off changes one of them)."""
    tenant = "tenant-demo"
    readable = readable_for(st, tenant, SUBJECTS["investigator"])
    ends = validity_ends(c)
    ending = [d for d, (_, hi) in c["span"].items() if hi in ends]
    types = sorted({t for d in ending for t in c["supports"][d]})
    # the window: each type about the kind of entity its ending records are about, via every relation
    about = sorted({(t, c["subjects"][d].split(":")[0]) for d in ending for t in c["supports"][d]})
    sub = {**c, "types": types}
    changed = 0
    for v in ends:
        heads = []
        for at in (v - 1, v):
            def valid(d: int, at: int = at) -> bool:
                return c["valid"](d, at)

            gated = {"tenant": tenant, "readable": readable, "as_of_us": at}
            lists = []
            for lim in (BIG, 1):
                out = ranked_lists(st, tenant, readable, sub, lim, at)
                w = [(f"w{i}", t, [], {"entity": None, "entity_type": et, "via": c["rel_types"], "time": "valid_from",
                                      "from_us": -(2 ** 62), "to_us": 2 ** 62, "anchor_us": at}, lim)
                     for i, (t, et) in enumerate(about)]
                for qid, d, _ in st.window(w, access_ok=c["access_ids"], entity_sources=c["sources"], **gated).hits:
                    out.setdefault(("window", qid), []).append(d)
                lists.append(out)
            full, got = lists
            for key, docs in full.items():
                assert got.get(key, []) == expected_head(docs, 1, valid), (key, at)
            hits = st.graph_hits(c["keys"], **gated).hits
            assert hits and all(flag == valid(d) for _, d, _, flag in hits), at
            heads.append(got)
        changed += sum(heads[0].get(k) != heads[1].get(k) for k in heads[0].keys() | heads[1].keys())
    return changed


def test_a_record_is_valid_from_its_first_instant_until_its_end_in_every_statement_on_duckdb(store):
    """Validity before the limit, at its exact edges (issue 47): a version ending at as_of is
    not valid in any statement, the one beginning then is; a microsecond earlier, the other way."""
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        c = corpus(st)
        assert len(validity_ends(c)) == 7
        assert check_validity_edges(st, c) > 10
    finally:
        st.close()


def test_records_not_valid_at_as_of_do_not_crowd_out_either_on_duckdb(store):
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        assert check_widening(st, corpus(st)) > 10
    finally:
        st.close()


def _pack(case: str, variant: str | None, strategy: str = "dynamic"):
    from ctxcli import api

    return api.investigate(api.InvestigateOptions(case=case, variant=variant, strategy=strategy))


@pytest.mark.parametrize("variant, gate", [(None, "purpose"), ("siu-crowded", "scope")])
@pytest.mark.parametrize("strategy", ["governed", "dynamic", "hybrid"])
def test_withheld_records_do_not_crowd_out_the_one_readable_signal(store, variant, gate, strategy):
    """45 fraud-desk notes about partner claim C-102 that the subject may not see outrank its
    one readable CLAIM_AMOUNT signal in every channel; the signal is still found and admitted,
    the claim amount is bound, and claim_amount_signal is not reported withheld for access."""
    res = _pack("PARTNER-C-102", variant, strategy)
    pack, answer = res.pack, res.answer
    assert "OTHER-SIG-C102-AMOUNT" in {e["object_id"] for e in pack["evidence"]}
    claims = {c["claim_id"]: c for c in answer["claims"]}
    assert claims["claim_amount"]["facts"]["claim_amount"] == 8400 and claims["claim_amount"]["status"] == "fact"
    assert [(m["type"], m["reason"]) for m in pack["missing"]] == [
        ("document_status", "not_found"), ("policy_tenure_signal", "not_found"), ("manual_review_rule", "not_found")]
    assert answer["verdict"] == "insufficient_evidence"
    # the notes never became candidates: no omission record, no id, only a count per gate
    assert not [o for o in pack["omissions"] if o["withheld"]]
    from ctxcli import api

    for name, data in api.output_files(res).items():
        assert b"OTHER-FRAUD" not in data and b"Fraud desk note" not in data, name
    structured = pack["rounds"][0]["queries"]
    amount_q = next(q["query_id"] for q in structured if q["evidence_type"] == "claim_amount_signal"
                    and q["channel"] == "structured")
    assert pack["rounds"][0]["withheld"][amount_q] == {gate: 45}
    executed = [e for e in res.trace if e["event"] == "retrieval_executed" and e["query_id"] == amount_q]
    assert executed[0]["withheld"] == {gate: 45}
    from ctxcli.engine.render import gaps_text

    assert f"- Withheld by {gate}: at least 45 item(s) the subject may not see." in gaps_text(pack)


def test_the_crowding_variant_passes_ctx_eval_on_every_gated_strategy(store):
    r = run_cli(["eval", REPO / "examples" / "cases" / "PARTNER-C-102.yaml", "--strategy", "all", "--json"])
    assert r.exit_code == 0, r.stdout[-2000:]
    runs = json.loads(r.stdout)["runs"]
    assert {(x["variant"], x["strategy"]) for x in runs if x["passed"]} >= {
        (v, s) for v in (None, "siu-crowded") for s in ("governed", "dynamic", "hybrid")}


def test_a_missing_type_still_says_how_many_were_withheld_for_access(store, tmp_path):
    """C-102 for an intern: the rules are withheld inside the statements, and the gap says how
    many candidates the scope rule withheld and what they need; explain-omissions shows it."""
    out = tmp_path / "run"
    r = run_cli(["investigate", "C-102", "--variant", "restricted", "--out", out])
    assert r.exit_code == 0, r.output
    pack = json.loads((out / "pack.json").read_text())
    gaps = {m["type"]: m for m in pack["missing"]}
    assert gaps["policy_version"]["reason"] == "withheld_for_access"
    assert gaps["policy_version"]["withheld"] == {"count": 3, "needs_scopes": ["policy:read"], "allowed_purposes": [],
                                                  "by_gate": {"scope": 3},
                                                  # the walk's next hop (the bound policy) is withheld too
                                                  "entity": {"from": "case:C-102", "hop": 1, "relation": "BOUND_TO",
                                                             "needs_scopes": ["policy:read"], "allowed_purposes": []}}
    r = run_cli(["explain-omissions", out / "pack.json", "--json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert {m["type"]: m["withheld"]["count"] for m in doc["missing"]}["policy_version"] == 3
    assert doc["withheld"]["scope"] >= 3 and set(doc["withheld"]) <= {"scope", "classification", "purpose"}
    r = run_cli(["explain-omissions", out / "pack.json"])
    flat = " ".join(r.stdout.split())
    assert f"withheld for access by scope: at least {doc['withheld']['scope']} item(s)" in flat
    assert "policy_version (withheld_for_access)" in flat


def test_the_graph_channel_widens_past_records_not_valid_at_as_of(store):
    """The graph channel ranks in the engine (depth, template, path, doc id): with a small limit
    its list is the head of the full ranking holding ``limit`` records valid at as_of (at most
    limit × WIDEN_CAP), as the statements' lists are."""
    from dataclasses import replace

    from ctxcli import api
    from ctxcli.engine.plan import make_plan
    from ctxcli.engine.retrieve import run_plan
    from ctxcli.store import open_store

    pb, _ = api.read_playbook("motor-claim-review")
    a = SUBJECTS["investigator"]
    st = open_store(store)
    try:
        c = corpus(st)
        base = make_plan(pb, round_no=1, target_types=[et.type for et in pb.evidence_types], seeds=["case:C-102"],
                         business_keys=["C-102"], channels=("graph",))
        base.queries[:] = [q for q in base.queries if q.channel == "graph"]

        def lists(limit: int) -> dict[str, list[int]]:
            plan = replace(base, candidate_limit=limit)
            return {r.query.query_id: r.hits for r in run_plan(st, plan, pb, tenant="tenant-demo",
                                                                 as_of_us=WIDEN_AT, access=a)}
        full, widened = lists(BIG), 0
        for limit in (1, 2):
            for qid, hits in lists(limit).items():
                want = expected_head(full[qid], limit, lambda d: c["valid"](d, WIDEN_AT))
                assert hits == want, (qid, limit)
                widened += len(want) > limit
    finally:
        st.close()
    assert widened > 0
