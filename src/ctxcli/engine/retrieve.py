"""Retrieve: run a plan's queries against the store and fuse their rankings.

Every query is parameterised SQL over fixed statements; tenant isolation is part of each
statement's WHERE clause, so another tenant's objects never become candidates.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..models.playbook import Playbook
from .plan import Plan, Query

RRF_K = 60

_STRUCTURED = """
SELECT o.doc_id FROM objects o
WHERE o.tenant_id = $tenant AND list_contains(o.supports, $etype)
  AND (len($otypes) = 0 OR list_contains($otypes, o.object_type))
  AND (list_contains($seeds, o.subject_id) OR list_has_any(o.keys, $bkeys) OR list_contains($bkeys, o.object_id))
ORDER BY list_contains($seeds, o.subject_id) DESC, o.object_type, o.object_id
LIMIT $lim
"""

# Okapi BM25 (k1 = 1.2, b = 0.75, the FTS extension's parameters) scored from the postings
# of the query's terms only, instead of match_bm25's scan of every document.
_BM25 = """
WITH q AS (SELECT d.termid, d.df FROM fts_main_objects.dict d WHERE list_contains($terms, d.term)),
st AS (SELECT num_docs, avgdl FROM fts_main_objects.stats),
scored AS (
  SELECT p.doc_id,
         sum(ln(((st.num_docs - q.df + 0.5) / (q.df + 0.5)) + 1)
             * p.tf * 2.2 / (p.tf + 1.2 * (0.25 + 0.75 * p.dl / st.avgdl))) AS score
  FROM q JOIN postings p ON p.termid = q.termid CROSS JOIN st
  GROUP BY p.doc_id)
SELECT s.doc_id, round(s.score, 9) AS score FROM scored s JOIN objects o ON o.doc_id = s.doc_id
WHERE o.tenant_id = $tenant AND list_contains(o.supports, $etype)
ORDER BY round(s.score, 9) DESC, s.doc_id
LIMIT $lim
"""

_GRAPH = """
WITH RECURSIVE
steps(tid, step, edge, to_type) AS (SELECT * FROM (VALUES {steps}) v(tid, step, edge, to_type)),
starts(tid, start_type) AS (SELECT * FROM (VALUES {starts}) v(tid, start_type)),
walk(tid, depth, node, path, rels) AS (
  SELECT s.tid, 0, e.entity_id, [e.entity_id], []::VARCHAR[]
  FROM starts s JOIN entities e ON e.entity_type = s.start_type
  WHERE e.tenant_id = $tenant AND list_contains($seeds, e.entity_key)
  UNION ALL
  SELECT w.tid, w.depth + 1, r.dst, list_append(w.path, r.dst), list_append(w.rels, r.relation_id)
  FROM walk w
  JOIN steps st ON st.tid = w.tid AND st.step = w.depth + 1
  JOIN relations r ON r.src = w.node AND r.rel_type = st.edge AND r.dst_type = st.to_type
  WHERE r.tenant_id = $tenant AND w.depth < $max_hops
    AND (r.valid_from_us IS NULL OR r.valid_from_us <= $asof)
    AND (r.valid_to_us IS NULL OR r.valid_to_us > $asof)
    AND NOT list_contains(w.path, r.dst)
  QUALIFY row_number() OVER (PARTITION BY w.tid, w.path ORDER BY r.dst) <= $fanout
),
reached AS (
  SELECT w.tid, w.depth, w.path, w.rels, e.entity_key
  FROM walk w JOIN entities e ON e.entity_id = w.node),
hits AS (
  SELECT o.doc_id, h.depth, h.tid, h.path, h.rels,
         row_number() OVER (PARTITION BY o.doc_id ORDER BY h.depth, h.tid, h.path) AS pick
  FROM reached h JOIN objects o ON o.tenant_id = $tenant AND o.subject_id = h.entity_key
  WHERE list_contains(o.supports, $etype))
SELECT doc_id, depth, tid, path, rels FROM hits WHERE pick = 1
ORDER BY depth, tid, path, doc_id
LIMIT $lim
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


def _values(rows: list[tuple], prefix: str, params: dict[str, Any]) -> str:
    """A VALUES list whose every cell is a named parameter."""
    out = []
    for i, r in enumerate(rows):
        cells = []
        for j, v in enumerate(r):
            name = f"{prefix}{i}_{j}"
            params[name] = v
            cells.append("$" + name)
        out.append("(" + ", ".join(cells) + ")")
    return ", ".join(out)


def run_query(con, q: Query, plan: Plan, pb: Playbook, *, tenant: str, as_of_us: int) -> QueryRun:
    t0 = time.perf_counter()
    run = QueryRun(q, [])
    if q.channel == "structured":
        rows = con.execute(_STRUCTURED, {"tenant": tenant, "etype": q.evidence_type, "otypes": list(q.object_types),
                                         "seeds": plan.seeds, "bkeys": plan.business_keys, "lim": q.limit}).fetchall()
        run.hits = [r[0] for r in rows]
    elif q.channel == "fulltext":
        if q.terms:
            rows = con.execute(_BM25, {"terms": list(q.terms), "tenant": tenant, "etype": q.evidence_type,
                                       "lim": q.limit}).fetchall()
            run.hits = [r[0] for r in rows]
            run.detail = {r[0]: {"score": r[1]} for r in rows}
    else:
        tmpl = {t.id: t for t in pb.path_templates}
        step_rows, start_rows = [], []
        for tid in q.templates:
            t = tmpl[tid]
            start_rows.append((tid, t.start))
            for i, s in enumerate(t.steps, 1):
                step_rows.append((tid, i, s.edge, s.to))
        params: dict[str, Any] = {
            "tenant": tenant, "seeds": plan.seeds, "max_hops": plan.max_hops, "asof": as_of_us,
            "fanout": plan.fanout_cap, "etype": q.evidence_type, "lim": q.limit}
        sql = _GRAPH.format(steps=_values(step_rows, "s", params), starts=_values(start_rows, "t", params))
        rows = con.execute(sql, params).fetchall()
        run.hits = [r[0] for r in rows]
        run.detail = {r[0]: {"depth": r[1], "template": r[2], "entity_path": list(r[3]), "relations": list(r[4])}
                      for r in rows}
    run.seconds = time.perf_counter() - t0
    return run


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
