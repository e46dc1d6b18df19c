"""Retrieve: run a plan's queries against the store and fuse their rankings.

Every query is one call of the store interface (store/base.py), one statement per channel;
tenant isolation and the access rules (scope, purpose, the source's classification and
enabled flag: store/access.py) are part of each statement's WHERE clause, before its limit
(store/duckdb_store.py, store/pg/reader.py), so another tenant's objects never become
candidates and withheld objects neither become candidates nor crowd readable ones out. What a
query withheld comes back as counts per gate (:func:`withheld_by_gate`), never as ids.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..errors import StoreError
from ..models.manifest import clearance_rank
from ..models.playbook import Playbook
from ..store.access import Readable, widened
from .gates import GATE_ORDER, Access
from .plan import Plan, Query
from .resolve import is_entity_key

RRF_K = 60


@dataclass
class QueryRun:
    query: Query
    hits: list[int]                       # doc ids in rank order
    detail: dict[int, dict[str, Any]] = field(default_factory=dict)   # per-hit extra (score, path)
    seconds: float = 0.0
    withheld: dict[str, int] = field(default_factory=dict)     # gate -> matches the access rules withheld
    needs: dict[str, set[str]] = field(default_factory=lambda: {"scopes": set(), "purposes": set()})
    clearance: str | None = None          # the lowest classification the classification rule withheld
    # a window whose entity only sources the subject may not read declare (so it found nothing):
    # {"key", "needs_scopes", "allowed_purposes"[, "needs_clearance"]}, never the source's id;
    # a walk's next hop to such an entity: {"from" (the seed), "hop", "relation", …} (hop_withheld)
    entity_withheld: dict[str, Any] | None = None


@dataclass
class Candidate:
    doc_id: int
    ranks: dict[str, int]                 # channel -> rank within the channel's fused list
    queries: dict[str, int]               # query id -> rank within that query
    rrf: float
    paths: list[str] = field(default_factory=list)
    # the channels' own scores behind the ranks (``retrieval_scores`` of an evidence item)
    scores: dict[str, float] = field(default_factory=dict)
    # the reranker's score and features (engine/rerank.py); None when it is off
    rerank: float | None = None
    features: dict[str, float] | None = None


def readable_for(con, tenant: str, access: Access) -> Readable:
    """The subject's access as statement parameters: its scopes, its purpose, and the tenant's
    sources (and per-record-tenant ones) that are enabled and classified at or below its
    clearance (the sources table is small: read whole)."""
    return _readable(con.tenant_sources(tenant), access)


def _readable(sources: list[tuple], access: Access) -> Readable:
    return Readable(tuple(sorted(access.scopes)), access.purpose,
                    tuple(sorted(sid for sid, enabled, _, _, level in sources if enabled and access.cleared(level))))


def withheld_by_gate(run: QueryRun, groups, access: Access, levels: dict[str, str | None]) -> None:
    """Add the withheld groups (source, required scopes, allowed purposes, count) to ``run``:
    each under the first gate that withholds it (scope → classification → purpose), with what
    the scope and purpose gates would need. ``levels``: the tenant's enabled sources and their
    classification (a disabled source's records are not loaded; one would count as
    classification). A group of a source that is not the tenant's is a bug: StoreError."""
    for src, scopes, purposes, n in groups:
        lacking = set(scopes or []) - access.scopes
        if src not in levels:
            raise StoreError("a candidate statement counted a record of another tenant's source; nothing was used")
        if lacking:
            gate = "scope"
            run.needs["scopes"].update(lacking)
        elif levels[src] is None or not access.cleared(levels[src]):
            gate = "classification"
            if levels[src] is not None and (run.clearance is None
                                            or clearance_rank(levels[src]) < clearance_rank(run.clearance)):
                run.clearance = levels[src]
        elif access.purpose not in (purposes or []):
            gate = "purpose"
            run.needs["purposes"].update(purposes or [])
        else:
            raise StoreError("a candidate statement withheld a record the access rules admit; nothing was used")
        run.withheld[gate] = run.withheld.get(gate, 0) + int(n)
    run.withheld = dict(sorted(run.withheld.items(), key=lambda kv: GATE_ORDER.index(kv[0])))


def entity_withheld(con, pairs: list[tuple[QueryRun, str]], tenant: str, readable, access: Access,
                    levels: dict[str, str | None]) -> None:
    """For each (run, entity key) — a window's entity, a graph walk's seed — whose key only
    sources the subject may not read declare in the tenant, mark the run (its first such key):
    the entity's existence belongs to its declaring record, so the run does not match it (nor
    walk its relations), and says what would admit one of those sources (scopes, clearance,
    purposes — as :func:`withheld_by_gate` judges a record), so the gap reads "withheld for
    access" instead of "not found" (docs/gates.md). The source is never named."""
    if not pairs:
        return
    declared: dict[str, set[str]] = {}
    for key, sid in con.entity_declarers(tenant, sorted({k for _, k in pairs})):
        declared.setdefault(key, set()).add(sid)
    ok = set(readable)
    policy = {sid: (scopes, purposes) for sid, scopes, purposes, _ in con.source_access()}
    for run, key in pairs:
        srcs = declared.get(key, set())
        if run.entity_withheld is not None or not srcs or srcs & ok:
            continue
        run.entity_withheld = {"key": key, **_admits(run, srcs, policy, access, levels)}


def _admits(run: QueryRun, srcs: set[str], policy: dict[str, tuple], access: Access,
            levels: dict[str, str | None]) -> dict[str, Any]:
    """What would admit one of the withheld sources ``srcs`` (scopes, purposes, the lowest
    clearance), judged as :func:`withheld_by_gate` judges a record; never a source id."""
    probe = QueryRun(run.query, [])
    withheld_by_gate(probe, [(sid, *policy[sid], 1) for sid in sorted(srcs)], access, levels)
    return {"needs_scopes": sorted(probe.needs["scopes"]), "allowed_purposes": sorted(probe.needs["purposes"]),
            **({"needs_clearance": probe.clearance} if probe.clearance else {})}


def hop_withheld(con, pending: list[tuple[QueryRun, tuple[str, ...]]], reached: list[tuple], steps: list[tuple],
                 *, tenant: str, max_hops: int, as_of_us: int, known_us: int | None, access: Access,
                 levels: dict[str, str | None]) -> None:
    """For each (run, its templates) of a walk that found nothing: when a path of one of its
    templates (``reached``: the store's ``walk`` rows) ends at an entity from which the next
    step's edge leads to an entity that only sources withheld from the subject declare, mark the
    run (the nearest such hop: by depth, template, path, then relation type and target). The
    edge must be one the subject could walk but for its target — its registering source and
    attesting object pass (:func:`walk_access`) — so nothing the subject may not see is
    hinted at. The mark names the seed the path starts from (the request names it), the hop
    and the relation type (the playbook's), and what would admit a declaring source; never the
    target's key, id, name or source (docs/gates.md)."""
    pending = [(run, tids) for run, tids in pending if run.entity_withheld is None]
    step_of = {(tid, i): (edge, to, least, inferred) for tid, i, edge, to, least, inferred in steps}
    seed_of = {path[0]: key for _, depth, path, _, key in reached if depth == 0}
    ends = [(tid, depth, path) for tid, depth, path, _, _ in reached
            if depth < max_hops and (tid, depth + 1) in step_of and path[0] in seed_of]
    if not pending or not ends:
        return
    readable, cleared = _readable_cleared(con, access)
    seen = [r for r in con.relation_access() if _edge_seen(r, readable, cleared, access)]
    hidden = {r[0] for r in seen if r[2] not in readable}       # walkable but for the target's source
    if not hidden:
        return
    out: dict[int, list[tuple]] = {}
    for src, rel, dtype, aid, conf, method, key in con.withheld_edges(
            sorted({path[-1] for _, _, path in ends}), tenant=tenant, as_of_us=as_of_us,
            access_ok=[r[0] for r in seen if r[2] in readable], known_us=known_us):
        if aid in hidden:
            out.setdefault(src, []).append((rel, dtype, conf, method, key))
    hops = []          # (depth, template, path, relation type, target key)
    for tid, depth, path in ends:
        edge, to, least, inferred = step_of[(tid, depth + 1)]
        hops.extend((depth, tid, list(path), rel, key) for rel, dtype, conf, method, key in out.get(path[-1], ())
                    if rel == edge and dtype == to and conf >= least and (inferred or method is None))
    if not hops:
        return
    declared: dict[str, set[str]] = {}
    for key, sid in con.entity_declarers(tenant, sorted({h[4] for h in hops})):
        declared.setdefault(key, set()).add(sid)
    policy = {sid: (scopes, purposes) for sid, scopes, purposes, _ in con.source_access()}
    hops = sorted(h for h in hops if declared.get(h[4]) and not declared[h[4]] & readable)
    for run, tids in pending:
        for depth, tid, path, rel, key in hops:
            if tid in tids:
                run.entity_withheld = {"from": seed_of[path[0]], "hop": depth + 1, "relation": rel,
                                       **_admits(run, declared[key], policy, access, levels)}
                break


def run_plan(con, plan: Plan, pb: Playbook, *, tenant: str, as_of_us: int, access: Access,
             ungated: bool = False, known_us: int | None = None) -> list[QueryRun]:
    """Run every query of the plan against the store ``con`` (store/base.py): one statement per
    channel, each with the subject's access rules before its limit (:func:`readable_for`).
    Returns one QueryRun per query, in plan order, with what it withheld per gate; a channel's
    elapsed time is shared evenly by its queries. The graph walk follows only edges ``access``
    authorises (the store's ``walk``; walk_access decides which). ``ungated``: the baselines
    that apply no gate (strategies ``full`` and ``topk``) — only the tenant predicate.
    Records are judged valid at ``as_of_us`` (the question's time); the relations that link
    them to the case (walk, window) by when they were known, ``known_us`` (default: as_of)."""
    runs = {q.query_id: QueryRun(q, []) for q in plan.queries}
    by_ch: dict[str, list[Query]] = {}
    for q in plan.queries:
        by_ch.setdefault(q.channel, []).append(q)
    lim = plan.candidate_limit
    sources = con.tenant_sources(tenant)
    readable = None if ungated else _readable(sources, access)
    levels = {sid: (level if enabled else None) for sid, enabled, _, _, level in sources}
    gated = {"tenant": tenant, "readable": readable, "as_of_us": as_of_us}

    def held(keyed: dict, rows) -> None:
        by: dict[Any, list[tuple]] = {}
        for key, *group in rows:
            by.setdefault(key, []).append(tuple(group))
        for key, groups in by.items():
            withheld_by_gate(runs[keyed[key]], groups, access, levels)

    if qs := by_ch.get("structured"):
        t0 = time.perf_counter()
        found = con.structured([(q.query_id, q.evidence_type, list(q.object_types)) for q in qs],
                               seeds=list(plan.seeds), business_keys=list(plan.business_keys), limit=lim, **gated)
        for qid, doc in found.hits:
            runs[qid].hits.append(doc)
        held({q.query_id: q.query_id for q in qs}, found.withheld)
        _share(runs, qs, time.perf_counter() - t0)
    if qs := [q for q in by_ch.get("fulltext", []) if q.terms]:
        t0 = time.perf_counter()
        found = bm25(con, qs, lim=lim, unmasked=unmasked_groups(con, access), **gated)
        for qi, doc, score in found.hits:
            runs[qs[qi].query_id].hits.append(doc)
            runs[qs[qi].query_id].detail[doc] = {"score": score}
        held({i: q.query_id for i, q in enumerate(qs)}, found.withheld)
        _share(runs, qs, time.perf_counter() - t0)
    if qs := by_ch.get("vector"):
        from .vector import vector_search

        t0 = time.perf_counter()
        found = vector_search(con, qs, **gated)
        for qi, doc, score in found.hits:
            runs[qs[qi].query_id].hits.append(doc)
            runs[qs[qi].query_id].detail[doc] = {"cosine": score}
        held({i: q.query_id for i, q in enumerate(qs)}, found.withheld)
        _share(runs, qs, time.perf_counter() - t0)
    if qs := by_ch.get("window"):
        t0 = time.perf_counter()
        walk = walk_access(con, access)
        found = con.window([(q.query_id, q.evidence_type, list(q.object_types), q.window, q.limit) for q in qs],
                           access_ok=walk["access_ok"], entity_sources=walk["readable"], known_us=known_us, **gated)
        anchor = {q.query_id: q.window["anchor_us"] for q in qs}
        for qid, doc, t in found.hits:
            runs[qid].hits.append(doc)
            runs[qid].detail[doc] = {"event_time_us": t, "offset_seconds": (t - anchor[qid]) // 1_000_000}
        held({q.query_id: q.query_id for q in qs}, found.withheld)
        entity_withheld(con, [(runs[q.query_id], q.window["entity"]) for q in qs if q.window.get("entity")],
                        tenant, walk["readable"], access, levels)
        _share(runs, qs, time.perf_counter() - t0)
    if qs := by_ch.get("graph"):
        t0 = time.perf_counter()
        tmpl = {t.id: t for t in pb.path_templates}
        used = sorted({tid for q in qs for tid in q.templates})
        # (template, step, edge, target type, least confidence, inferred edges allowed)
        steps = [(tid, i, s.edge, s.to, tmpl[tid].min_confidence or 0.0, tmpl[tid].inferred)
                 for tid in used for i, s in enumerate(tmpl[tid].steps, 1)]
        walk = walk_access(con, access)
        reached = con.walk(steps=steps, starts=[(tid, tmpl[tid].start) for tid in used], seeds=list(plan.seeds),
                           tenant=tenant, max_hops=plan.max_hops, as_of_us=as_of_us, fanout=plan.fanout_cap,
                           known_us=known_us, **walk)     # (tid, depth, path, rels, entity_key), ordered
        first: dict[tuple[str, str], tuple] = {}
        for tid, depth, path, rels, key in reached:
            first.setdefault((tid, key), (depth, list(path), list(rels)))
        keys = sorted({k for _, k in first})
        about: dict[str, list[tuple[int, list[str], bool]]] = {}
        withheld: list[tuple] = []
        if keys:
            found = con.graph_hits(keys, **gated)
            for key, doc, supports, valid in found.hits:
                about.setdefault(key, []).append((doc, list(supports or []), bool(valid)))
            withheld = found.withheld
        for q in qs:
            best: dict[int, tuple] = {}
            valid: dict[int, bool] = {}
            for (tid, key), (depth, path, rels) in first.items():
                if tid not in q.templates:
                    continue
                for doc, supports, ok in about.get(key, []):
                    if q.evidence_type not in supports:
                        continue
                    valid[doc] = ok
                    cand = (depth, tid, path, rels)
                    if doc not in best or cand[:3] < best[doc][:3]:
                        best[doc] = cand
            order = widened(sorted(best.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[1][2], kv[0])), lim,
                            lambda kv: valid[kv[0]])  # noqa: B023 (called within this iteration)
            run = runs[q.query_id]
            for doc, (depth, tid, path, rels) in order:
                run.hits.append(doc)
                run.detail[doc] = {"depth": depth, "template": tid, "entity_path": path, "relations": rels}
            mine = {key for tid, key in first if tid in q.templates}
            withheld_by_gate(run, [tuple(w[2:]) for w in withheld if w[0] in mine and q.evidence_type in (w[1] or [])],
                             access, levels)
        seeds = [s for s in plan.seeds if is_entity_key(s)]     # a walk that found nothing: a withheld seed?
        entity_withheld(con, [(runs[q.query_id], s) for q in qs if not runs[q.query_id].hits for s in seeds],
                        tenant, walk["readable"], access, levels)
        hop_withheld(con, [(runs[q.query_id], tuple(q.templates)) for q in qs if not runs[q.query_id].hits],
                     reached, steps, tenant=tenant, max_hops=plan.max_hops, as_of_us=as_of_us, known_us=known_us,
                     access=access, levels=levels)   # …or an entity the walk's next hop leads to?
        _share(runs, qs, time.perf_counter() - t0)
    return [runs[q.query_id] for q in plan.queries]


def walk_access(con, access: Access) -> dict[str, Any]:
    """The subject's access as arguments of the store's ``walk``: the sources it may read
    (``readable``) and the relation_access rows it is authorised for (``access_ok``). Both tables are small (one row per
    source, one per distinct access combination of the relations): read whole."""
    readable, cleared = _readable_cleared(con, access)
    ok = [r[0] for r in con.relation_access() if _edge_seen(r, readable, cleared, access) and r[2] in readable]
    return {"readable": sorted(readable), "access_ok": ok}


def _readable_cleared(con, access: Access) -> tuple[set[str], set[str]]:
    """The sources the subject may read, and those at or below its clearance."""
    readable, cleared = set(), set()
    for sid, scopes, purposes, level in con.source_access():
        if access.cleared(level):
            cleared.add(sid)
        if access.source_ok(scopes, purposes, level):
            readable.add(sid)
    return readable, cleared


def _edge_seen(row: tuple, readable: set[str], cleared: set[str], access: Access) -> bool:
    """A relation_access row whose registering source the subject may read and whose attesting
    object (if it names one) passes scope, classification and purpose: the edge is walkable
    when its target's source is readable too (:func:`walk_access`)."""
    _, sid, _, attested, ev_sid, ev_scopes, ev_purposes = row
    return sid in readable and (not attested or (ev_sid in cleared and set(ev_scopes or []) <= access.scopes
                                                 and access.purpose in (ev_purposes or [])))


def unmasked_groups(con, access: Access) -> list[int]:
    """The mask groups whose unmasked-only terms the subject may search: those whose
    unless_scopes it holds one of (the masks do not apply to it, engine/redact.applies)."""
    return [g for g, scopes in con.mask_groups() if set(scopes or []) & access.scopes]


def bm25(con, qs: list[Query], *, tenant: str, readable, as_of_us: int, lim: int,
         unmasked: list[int] | None = None):
    """Exact BM25 top-``lim`` of each full-text query among the tenant's readable records (the
    store's ``bm25``: hits (query index, doc id, score), each query's in rank order, and what the
    access rules withheld); ``unmasked``: the mask groups whose unmasked-only terms count
    (unmasked_groups)."""
    kw = {"unmasked": unmasked} if unmasked else {}
    return con.bm25([(q.evidence_type, list(q.terms)) for q in qs], tenant=tenant, readable=readable,
                    as_of_us=as_of_us, limit=lim, **kw)


def _share(runs: dict[str, QueryRun], qs: list[Query], seconds: float) -> None:
    for q in qs:
        runs[q.query_id].seconds = seconds / len(qs)


SCORE_DIGITS = 6        # raw scores are rounded so packs stay byte-identical across platforms
# channel -> (score name, the detail it comes from, better: max or min)
_RAW = {"fulltext": ("bm25", "score", max), "vector": ("cosine", "cosine", max),
        "graph": ("graph_hops", "depth", min), "window": ("window_offset_s", "offset_seconds", min)}


def _score(scores: dict[str, float], channel: str, detail: dict[str, Any]) -> None:
    """Fold one query's hit into the candidate's raw scores: BM25 and cosine (the best of its
    queries), graph hops and the window's distance from its anchor in seconds (the nearest), and a
    structured hit's exact match (1.0: it matched a seed, a business key or its type)."""
    if channel == "structured":
        scores["structured"] = 1.0
        return
    name, key, better = _RAW.get(channel, (None, None, None))
    if name is None or detail.get(key) is None:
        return
    raw = detail[key]
    v = abs(int(raw)) if channel in ("graph", "window") else round(float(raw), SCORE_DIGITS)
    scores[name] = better(scores[name], v) if name in scores else v


_CONTENT_SCORES = ("bm25", "cosine")


def scores_shown(scores: dict[str, float], masked: bool) -> dict[str, float]:
    """The raw scores a subject may see: when the masks change an object's text for it, its text
    scores (BM25 counts the stored text's length, masked text included; cosine is of the stored
    text) would tell what the mask hides, and are left out."""
    return {k: v for k, v in scores.items() if k not in _CONTENT_SCORES} if masked else dict(scores)


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
            if doc in run.hits:
                _score(c.scores, run.query.channel, d or {})
        c.scores = dict(sorted(c.scores.items()))
        cands.append(c)
    cands.sort(key=lambda c: (-c.rrf, c.doc_id))
    return cands
