"""Retrieve: run a plan's queries against the store and fuse their rankings.

Every query is parameterised SQL over fixed statements; tenant isolation is part of each
statement's WHERE clause, so another tenant's objects never become candidates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..models.playbook import Playbook
from .gates import Access
from .plan import Plan, Query

RRF_K = 60

# One statement per channel covers every query of that channel in the round; each query's
# ranking is its own window partition. Parameters are named; VALUES rows are parameters too.
_STRUCTURED = """
WITH qs(qid, etype, otypes) AS (SELECT * FROM (VALUES {rows}) v(qid, etype, otypes)),
keyed AS (
  SELECT k.doc_id, bool_or(k.kind = 's' AND k.key IN ({seeds})) AS on_seed
  FROM object_keys k
  WHERE k.key IN ({allkeys}) AND k.tenant_id = $tenant
    AND ((k.kind = 's' AND k.key IN ({seeds})) OR (k.kind <> 's' AND k.key IN ({bkeys})))
  GROUP BY k.doc_id),
about AS (
  SELECT o.doc_id, o.supports, o.object_type, o.object_id, kd.on_seed
  FROM keyed kd JOIN objects o ON o.doc_id = kd.doc_id),
ranked AS (
  SELECT qs.qid, a.doc_id,
         row_number() OVER (PARTITION BY qs.qid ORDER BY a.on_seed DESC, a.object_type, a.object_id) AS rn
  FROM qs JOIN about a ON list_contains(a.supports, qs.etype)
  WHERE len(qs.otypes) = 0 OR list_contains(qs.otypes, a.object_type))
SELECT qid, doc_id FROM ranked WHERE rn <= $lim ORDER BY qid, rn
"""

# Okapi BM25 (k1 = 1.2, b = 0.75), exact, over the subject's tenant only: N, avgdl and each
# term's df are the tenant's own (tenants, term_stats), so another tenant's documents never
# change a score. Two small lookups first (the tenant's statistics and the evidence types' bits,
# then the query terms' ids and idf), then one statement that reads only the postings of those
# terms in that tenant — postings are sorted by (tenant_no, termid), so the scan skips every
# other row group — and joins nothing: tf, dl and the supports bit mask are in the posting.
# Ids, idf and masks are passed as literals (numbers this code computed), so the filters reach
# the scan; scores are rounded to 9 places, ties broken by doc id.
_BM25_TENANT = "SELECT tenant_no, num_docs, avgdl FROM tenants WHERE tenant_id = $tenant"
_BM25_BITS = "SELECT evidence_type, bit FROM support_bits WHERE evidence_type IN ({types})"
_BM25_TERMS = """
SELECT term, termid, ln((({n} - df + 0.5) / (df + 0.5)) + 1) AS idf
FROM term_stats WHERE tenant_no = {tno} AND term IN ({terms})
"""
_BM25 = """
WITH qt(qi, termid, idf) AS (VALUES {qt}),
qm(qi, mask) AS (VALUES {qm}),
scored AS (
  SELECT qt.qi, p.doc_id,
         round(sum(qt.idf * p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.dl / {avgdl}))), 9) AS score
  FROM postings p JOIN qt ON qt.termid = p.termid JOIN qm ON qm.qi = qt.qi
  WHERE p.tenant_no = {tno} AND p.termid IN ({termids}) AND (p.supports & qm.mask) <> 0
  GROUP BY qt.qi, p.doc_id){check},
ranked AS (
  SELECT qi, doc_id, score, row_number() OVER (PARTITION BY qi ORDER BY score DESC, doc_id) AS rn
  FROM {src})
SELECT qi, doc_id, score FROM ranked WHERE rn <= {lim} ORDER BY qi, rn
"""
# Evidence types past bit MASK_BITS share the last bit: their hits are checked against objects.
_BM25_CHECK = """,
checked AS (
  SELECT s.* FROM scored s JOIN (VALUES {qe}) qe(qi, etype) ON qe.qi = s.qi
  JOIN objects o ON o.doc_id = s.doc_id
  WHERE qe.etype IS NULL OR list_contains(o.supports, qe.etype))"""


def _num(x: float) -> str:
    """A DOUBLE literal that reads back as exactly ``x``."""
    r = repr(float(x))
    return r if "e" in r or "n" in r else r + "e0"

# Every edge is authorised before it is walked, so a withheld edge never reaches a path and the
# fan-out cap counts authorised edges only. An edge passes when (1) it is the tenant's and valid
# at as_of; (2) the source that registered it and the source of the entity it leads to pass the
# subject's scope, classification and purpose; (3) the object that attests it, if it names one,
# would pass the scope, classification, purpose and validity gates. (2) and the non-temporal
# part of (3) are decided per relation_access row in Python (_walk_access → $access_ok); the
# attesting object's validity is checked here. A seed entity starts a walk only when its source
# passes (2) ($readable).
_WALK = """
WITH RECURSIVE
steps(tid, step, edge, to_type) AS (SELECT * FROM (VALUES {steps}) v(tid, step, edge, to_type)),
starts(tid, start_type) AS (SELECT * FROM (VALUES {starts}) v(tid, start_type)),
walk(tid, depth, node, path, rels) AS (
  SELECT s.tid, 0, e.entity_id, [e.entity_id], []::VARCHAR[]
  FROM starts s JOIN entities e ON e.entity_type = s.start_type
  WHERE e.tenant_id = $tenant AND e.entity_key IN ({seeds})
    AND list_contains(CAST($readable AS VARCHAR[]), e.source_id)
  UNION ALL
  SELECT w.tid, w.depth + 1, r.dst, list_append(w.path, r.dst), list_append(w.rels, r.relation_id)
  FROM walk w
  JOIN steps st ON st.tid = w.tid AND st.step = w.depth + 1
  JOIN relations r ON r.src = w.node AND r.rel_type = st.edge AND r.dst_type = st.to_type
  WHERE r.tenant_id = $tenant AND w.depth < $max_hops
    AND (r.valid_from_us IS NULL OR r.valid_from_us <= $asof)
    AND (r.valid_to_us IS NULL OR r.valid_to_us > $asof)
    AND list_contains(CAST($access_ok AS INTEGER[]), r.access_id)
    AND (r.ev_valid_from_us IS NULL OR r.ev_valid_from_us <= $asof)
    AND (r.ev_valid_to_us IS NULL OR r.ev_valid_to_us > $asof)
    AND NOT list_contains(w.path, r.dst)
  QUALIFY row_number() OVER (PARTITION BY w.tid, w.path ORDER BY r.dst) <= $fanout
)
SELECT w.tid, w.depth, w.path, w.rels, e.entity_key
FROM walk w JOIN entities e ON e.entity_id = w.node
ORDER BY w.tid, w.depth, w.path
"""

# Objects about the reached entities (their subject), for each graph query's evidence type.
_GRAPH_HITS = """
SELECT k.key, o.doc_id, o.supports
FROM object_keys k JOIN objects o ON o.doc_id = k.doc_id
WHERE k.key IN ({keys}) AND k.kind = 's' AND k.tenant_id = $tenant
ORDER BY k.key, o.doc_id
"""


@dataclass
class QueryRun:
    query: Query
    hits: list[int]                       # doc ids in rank order
    detail: dict[int, dict[str, Any]] = field(default_factory=dict)   # per-hit extra (score, path)
    seconds: float = 0.0


@dataclass
class Candidate:
    doc_id: int
    ranks: dict[str, int]                 # channel -> rank within the channel's fused list
    queries: dict[str, int]               # query id -> rank within that query
    rrf: float
    paths: list[str] = field(default_factory=list)
    bm25: float | None = None


def _values(rows: list[tuple], prefix: str, params: dict[str, Any], casts: tuple[str, ...]) -> str:
    """A VALUES list whose every cell is a typed named parameter."""
    out = []
    for i, r in enumerate(rows):
        cells = []
        for j, v in enumerate(r):
            name = f"{prefix}{i}_{j}"
            params[name] = v
            cells.append(f"CAST(${name} AS {casts[j]})")
        out.append("(" + ", ".join(cells) + ")")
    return ", ".join(out)


def run_plan(con, plan: Plan, pb: Playbook, *, tenant: str, as_of_us: int, access: Access) -> list[QueryRun]:
    """Run every query of the plan: one SQL statement per channel. Returns one QueryRun per
    query, in plan order; a channel's elapsed time is shared evenly by its queries. The graph
    walk follows only edges ``access`` authorises (see _WALK)."""
    runs = {q.query_id: QueryRun(q, []) for q in plan.queries}
    by_ch: dict[str, list[Query]] = {}
    for q in plan.queries:
        by_ch.setdefault(q.channel, []).append(q)
    lim = plan.candidate_limit
    if qs := by_ch.get("structured"):
        t0 = time.perf_counter()
        params: dict[str, Any] = {"tenant": tenant, "lim": lim}
        rows_sql = _values([(q.query_id, q.evidence_type, list(q.object_types)) for q in qs], "s", params,
                           casts=("VARCHAR", "VARCHAR", "VARCHAR[]"))
        sql = _STRUCTURED.format(rows=rows_sql, seeds=in_list(plan.seeds, "k", params),
                                 bkeys=in_list(plan.business_keys, "b", params),
                                 allkeys=in_list(sorted(set(plan.seeds) | set(plan.business_keys)), "a", params))
        for qid, doc in con.execute(sql, params).fetchall():
            runs[qid].hits.append(doc)
        _share(runs, qs, time.perf_counter() - t0)
    if qs := [q for q in by_ch.get("fulltext", []) if q.terms]:
        t0 = time.perf_counter()
        for qi, doc, score in bm25(con, qs, tenant=tenant, lim=lim):
            runs[qs[qi].query_id].hits.append(doc)
            runs[qs[qi].query_id].detail[doc] = {"score": score}
        _share(runs, qs, time.perf_counter() - t0)
    if qs := by_ch.get("vector"):
        from .vector import vector_search

        t0 = time.perf_counter()
        for qi, doc, score in vector_search(con, qs, tenant=tenant):
            runs[qs[qi].query_id].hits.append(doc)
            runs[qs[qi].query_id].detail[doc] = {"cosine": score}
        _share(runs, qs, time.perf_counter() - t0)
    if qs := by_ch.get("graph"):
        t0 = time.perf_counter()
        tmpl = {t.id: t for t in pb.path_templates}
        used = sorted({tid for q in qs for tid in q.templates})
        params = {"tenant": tenant, "max_hops": plan.max_hops, "asof": as_of_us, "fanout": plan.fanout_cap,
                  **_walk_access(con, access)}
        steps = [(tid, i, s.edge, s.to) for tid in used for i, s in enumerate(tmpl[tid].steps, 1)]
        sql = _WALK.format(
            steps=_values(steps, "g", params, casts=("VARCHAR", "INTEGER", "VARCHAR", "VARCHAR")),
            starts=_values([(tid, tmpl[tid].start) for tid in used], "t", params, casts=("VARCHAR", "VARCHAR")),
            seeds=in_list(plan.seeds, "k", params))
        reached = con.execute(sql, params).fetchall()     # (tid, depth, path, rels, entity_key), ordered
        first: dict[tuple[str, str], tuple] = {}
        for tid, depth, path, rels, key in reached:
            first.setdefault((tid, key), (depth, list(path), list(rels)))
        keys = sorted({k for _, k in first})
        about: dict[str, list[tuple[int, list[str]]]] = {}
        if keys:
            params = {"tenant": tenant}
            for key, doc, supports in con.execute(_GRAPH_HITS.format(keys=in_list(keys, "e", params)), params).fetchall():
                about.setdefault(key, []).append((doc, list(supports or [])))
        for q in qs:
            best: dict[int, tuple] = {}
            for (tid, key), (depth, path, rels) in first.items():
                if tid not in q.templates:
                    continue
                for doc, supports in about.get(key, []):
                    if q.evidence_type not in supports:
                        continue
                    cand = (depth, tid, path, rels)
                    if doc not in best or cand[:3] < best[doc][:3]:
                        best[doc] = cand
            order = sorted(best.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[1][2], kv[0]))[:lim]
            run = runs[q.query_id]
            for doc, (depth, tid, path, rels) in order:
                run.hits.append(doc)
                run.detail[doc] = {"depth": depth, "template": tid, "entity_path": path, "relations": rels}
        _share(runs, qs, time.perf_counter() - t0)
    return [runs[q.query_id] for q in plan.queries]


def _walk_access(con, access: Access) -> dict[str, Any]:
    """The subject's access as parameters of _WALK: the sources it may read ($readable) and the
    relation_access rows it is authorised for ($access_ok). Both tables are small (one row per
    source, one per distinct access combination of the relations): read whole."""
    readable, cleared = set(), set()
    for sid, scopes, purposes, level in con.execute(
            "SELECT source_id, required_scopes, allowed_purposes, classification FROM sources").fetchall():
        if access.cleared(level):
            cleared.add(sid)
        if access.source_ok(scopes, purposes, level):
            readable.add(sid)
    ok = [aid for aid, sid, dst_sid, attested, ev_sid, ev_scopes, ev_purposes in con.execute(
        "SELECT access_id, source_id, dst_source_id, attested, ev_source_id, ev_required_scopes, ev_allowed_purposes "
        "FROM relation_access ORDER BY access_id").fetchall()
        if sid in readable and dst_sid in readable
        and (not attested or (ev_sid in cleared and set(ev_scopes or []) <= access.scopes
                              and access.purpose in (ev_purposes or [])))]
    return {"readable": sorted(readable), "access_ok": ok}


def bm25(con, qs: list[Query], *, tenant: str, lim: int) -> list[tuple[int, int, float]]:
    """Exact BM25 top-``lim`` of each full-text query within the tenant: (query index, doc id,
    score), each query's hits in rank order."""
    from ..store.schema import MASK_BITS

    row = con.execute(_BM25_TENANT, {"tenant": tenant}).fetchone()
    if row is None:
        return []
    tno, n, avgdl = row
    params: dict[str, Any] = {}
    types = sorted({q.evidence_type for q in qs})
    bits = dict(con.execute(_BM25_BITS.format(types=in_list(types, "e", params)), params).fetchall())
    params = {}
    terms = sorted({t for q in qs for t in q.terms})
    idf = {t: (tid, x) for t, tid, x in con.execute(
        _BM25_TERMS.format(n=int(n), tno=int(tno), terms=in_list(terms, "t", params)), params).fetchall()}
    qt, qm, qe, termids, xparams = [], [], [], set(), {}
    for qi, q in enumerate(qs):
        bit = bits.get(q.evidence_type)
        found = [idf[t] for t in q.terms if t in idf]
        if bit is None or not found:
            continue            # no object of the tenant supports the type or holds a term
        qm.append(f"({qi}, {1 << min(bit, MASK_BITS)}::UBIGINT)")
        qt.extend(f"({qi}, {int(tid)}, {_num(x)})" for tid, x in found)
        termids.update(int(tid) for tid, _ in found)
        if bit >= MASK_BITS:
            xparams[f"x{qi}"] = q.evidence_type
            qe.append(f"({qi}, CAST($x{qi} AS VARCHAR))")
        else:
            qe.append(f"({qi}, NULL::VARCHAR)")
    if not qt:
        return []
    overflow = bool(xparams)
    sql = _BM25.format(qt=", ".join(qt), qm=", ".join(qm), avgdl=_num(avgdl), tno=int(tno),
                       termids=", ".join(map(str, sorted(termids))),
                       check=_BM25_CHECK.format(qe=", ".join(qe)) if overflow else "",
                       src="checked" if overflow else "scored", lim=int(lim))
    return con.execute(sql, xparams).fetchall()


def in_list(values: list[Any], prefix: str, params: dict[str, Any]) -> str:
    """An IN list of named parameters (constants at bind time, so the filter reaches the scan)."""
    names = []
    for i, v in enumerate(values):
        params[f"{prefix}{i}"] = v
        names.append(f"${prefix}{i}")
    return ", ".join(names) if names else "NULL"


def _share(runs: dict[str, QueryRun], qs: list[Query], seconds: float) -> None:
    for q in qs:
        runs[q.query_id].seconds = seconds / len(qs)


def fuse(runs: list[QueryRun]) -> list[Candidate]:
    """Per channel, interleave its queries by rank (rank 1 of every query, then rank 2 …) and
    keep each object's first position; then Reciprocal Rank Fusion (k = 60) across channels.
    Ties are broken by doc id, so the order is total and deterministic."""
    per_channel: dict[str, list[tuple[int, int, int]]] = {}
    qranks: dict[int, dict[str, int]] = {}
    for qi, run in enumerate(runs):
        for rank, doc in enumerate(run.hits, 1):
            per_channel.setdefault(run.query.channel, []).append((rank, qi, doc))
            qranks.setdefault(doc, {}).setdefault(run.query.query_id, rank)
    ranks: dict[int, dict[str, int]] = {}
    for ch, entries in per_channel.items():
        entries.sort()
        r = 0
        for _, _, doc in entries:
            if ch in ranks.get(doc, {}):
                continue
            r += 1
            ranks.setdefault(doc, {})[ch] = r
    cands = []
    for doc, chr_ in ranks.items():
        score = sum(1.0 / (RRF_K + r) for r in chr_.values())
        c = Candidate(doc, dict(sorted(chr_.items())), dict(sorted(qranks[doc].items())), round(score, 12))
        for run in runs:
            d = run.detail.get(doc)
            if d and "template" in d and not c.paths:
                c.paths.append(d["template"])
            if d and "score" in d and c.bm25 is None:
                c.bm25 = d["score"]
        cands.append(c)
    cands.sort(key=lambda c: (-c.rrf, c.doc_id))
    return cands
