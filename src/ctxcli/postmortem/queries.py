"""The queries a pack ran, and why each did not return a given (visible) object.

The queries of each round that look for a type the object supports are run again without a
limit, so "ranked below the limit" is told apart from "not matched at all"; the hit counts
come from the pack's linked ``trace.jsonl`` beside it (every event names the pack id).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .packfile import LoadedPack


@dataclass
class QueryOutcome:
    round: int
    query_id: str
    channel: str
    evidence_type: str
    limit: int
    ran_with: dict[str, Any]
    hits: int | None
    outcome: str


def _trace_hits(lp: LoadedPack) -> dict[tuple[int, str], int]:
    """Hit counts per (round, query id) from the pack's linked trace (``trace.jsonl`` beside it;
    a trace of another pack is refused by :func:`read_linked_trace`)."""
    from .packfile import read_linked_trace

    out: dict[tuple[int, str], int] = {}
    for ev in read_linked_trace(lp) or []:
        if ev.get("event") == "retrieval_executed" and isinstance(ev.get("hits"), int):
            out[(ev.get("round"), ev.get("query_id"))] = ev["hits"]
    return out


def searched_with(pack: dict[str, Any]) -> dict[str, list[str]]:
    """Everything the pack's queries searched with, per channel, in first-seen order."""
    out: dict[str, list[str]] = {"fulltext_terms": [], "structured_object_types": [], "seeds": [],
                                 "business_keys": [], "graph_templates": []}

    def add(k: str, xs: Any) -> None:
        for x in xs or []:
            if x not in out[k]:
                out[k].append(x)

    for rnd in pack["rounds"]:
        if not isinstance(rnd, dict):
            continue
        add("seeds", rnd.get("seeds"))
        add("business_keys", rnd.get("business_keys"))
        for q in rnd.get("queries", []):
            if not isinstance(q, dict):
                continue
            if q.get("channel") == "fulltext":
                add("fulltext_terms", q.get("terms"))
            elif q.get("channel") == "structured":
                add("structured_object_types", q.get("object_types"))
            elif q.get("channel") == "graph":
                add("graph_templates", q.get("templates"))
    return out


def _ran_with(q: dict[str, Any], rnd: dict[str, Any]) -> dict[str, Any]:
    ch = q.get("channel")
    if ch == "structured":
        return {"object_types": q.get("object_types", []), "seeds": rnd.get("seeds", []),
                "business_keys": rnd.get("business_keys", [])}
    if ch == "fulltext":
        return {"terms": q.get("terms", [])}
    return {"templates": q.get("templates", []), "seeds": rnd.get("seeds", []), "max_hops": rnd.get("max_hops")}


def query_outcomes(con, lp: LoadedPack, doc_id: int, otype: str, subj: str | None, supports: list[str],
                   keys: list[str]) -> list[QueryOutcome]:
    """Each query that ran, and why it did not return this (visible) object.

    The queries of each round that look for a type the object supports are run again without
    a limit, so "ranked below the limit" is told apart from "not matched at all"."""
    from ..engine.plan import Plan, Query
    from ..util.timeutil import dt_to_us, parse_ts

    pack = lp.data
    hits = _trace_hits(lp)
    pb = _playbook(pack)
    try:
        as_of = parse_ts(pack["request"]["as_of"])
        as_of_us: int | None = dt_to_us(as_of)
    except ValueError:
        as_of_us = None
    # The pack's subject: the re-run walks only the graph edges that subject may follow.
    from ..engine.gates import Access
    from ..models.manifest import DEFAULT_CLEARANCE

    who = pack["request"].get("subject") or {}
    access = Access(scopes=frozenset(str(s) for s in who.get("scopes") or []),
                    purpose=str(pack["request"]["purpose"]), clearance=str(who.get("clearance", DEFAULT_CLEARANCE)))
    out: list[QueryOutcome] = []
    for rnd in pack["rounds"]:
        if not isinstance(rnd, dict):
            continue
        plan = Plan(round=rnd.get("round", 0), target_types=list(rnd.get("target_types", [])),
                    seeds=list(rnd.get("seeds", [])), business_keys=list(rnd.get("business_keys", [])),
                    max_hops=rnd.get("max_hops", 2), fanout_cap=rnd.get("fanout_cap", 50),
                    candidate_limit=rnd.get("candidate_limit", 20))
        qjs = [qj for qj in rnd.get("queries", []) if isinstance(qj, dict)]
        queries = [Query(query_id=str(qj.get("query_id", "?")), channel=str(qj.get("channel", "?")),
                         evidence_type=str(qj.get("evidence_type", "?")), limit=int(qj.get("limit", 0)),
                         object_types=tuple(qj.get("object_types", [])), text=qj.get("text", ""),
                         terms=tuple(qj.get("terms", [])), templates=tuple(qj.get("templates", [])))
                   for qj in qjs]
        ranks = _unlimited_ranks(con, plan, [q for q in queries if q.evidence_type in supports], pb, lp.tenant,
                                 as_of_us, doc_id, access)
        for qj, q in zip(qjs, queries):
            why = _why_not(q, plan, ranks, doc_id, otype, subj, supports, keys)
            out.append(QueryOutcome(round=plan.round, query_id=q.query_id, channel=q.channel,
                                    evidence_type=q.evidence_type, limit=q.limit, ran_with=_ran_with(qj, rnd),
                                    hits=hits.get((plan.round, q.query_id)), outcome=why))
    return out


def _unlimited_ranks(con, plan, queries, pb, tenant: str, as_of_us: int | None,
                     doc_id: int, access) -> dict[str, int | None]:
    """query id -> the object's rank when the query runs without a limit (None: not returned).
    Queries that cannot be re-run (templates no longer in the playbook) are left out."""
    from dataclasses import replace

    from ..engine import retrieve

    if as_of_us is None:
        return {}
    templates = {t.id for t in pb.path_templates} if pb is not None else set()
    runnable = [replace(q, limit=1_000_000) for q in queries
                if q.channel in ("structured", "fulltext") or (q.channel == "graph" and q.templates
                                                                and set(q.templates) <= templates)]
    if not runnable:
        return {}
    big = replace(plan, candidate_limit=1_000_000, queries=runnable)
    runs = retrieve.run_plan(con, big, pb, tenant=tenant, as_of_us=as_of_us, access=access)
    out: dict[str, int | None] = {}
    for run in runs:
        hits = list(run.hits)
        out[run.query.query_id] = hits.index(doc_id) + 1 if doc_id in hits else None
    return out


def _playbook(pack: dict[str, Any]):
    from ..errors import CtxError
    from ..project import read_playbook

    try:
        pb, _ = read_playbook(pack["playbook"].get("playbook_id", ""))
        return pb
    except CtxError:
        return None


def _why_not(q, plan, ranks: dict[str, int | None], doc_id: int, otype: str, subj: str | None,
             supports: list[str], keys: list[str]) -> str:
    if q.evidence_type not in supports:
        return f"looked for {q.evidence_type}, which it does not support"
    rerun = q.query_id in ranks
    rank = ranks.get(q.query_id)
    if rank is not None:
        if rank > q.limit:
            return f"it ranks {rank}, below the limit of {q.limit}"
        return f"it matches now (rank {rank}), so the store must have changed since the pack was built"
    if q.channel == "structured":
        if q.object_types and otype not in q.object_types:
            return f"its type {otype} is not among {', '.join(q.object_types)}"
        if subj not in plan.seeds and not set(keys) & set(plan.business_keys):
            return (f"it is about {subj or 'no entity'}, not a seed ({', '.join(plan.seeds) or 'none'}), and carries "
                    f"none of the business keys ({', '.join(plan.business_keys) or 'none'})")
        return "not returned"
    if q.channel == "fulltext":
        if not q.terms:
            return "the query had no terms"
        return "it contains none of the terms" if rerun else "not returned"
    if q.channel == "graph":
        if not rerun:
            return "not returned (the playbook's templates changed since: not re-run)"
        return (f"no path from the seeds along {', '.join(q.templates)} (within {plan.max_hops} hops, valid at as_of) "
                f"reaches its subject {subj or '(none)'}")
    return "not returned"


def would_match(outcomes: list[QueryOutcome], supports: list[str]) -> list[str]:
    types = {o.evidence_type for o in outcomes}
    if not set(supports) & types:
        return [f"a playbook evidence type it supports ({', '.join(supports) or 'none'})"]
    out = []
    if any(o.channel == "structured" and o.evidence_type in supports for o in outcomes):
        out.append("a link to the case: a seed subject or one of the business keys")
    if any(o.channel == "fulltext" and o.evidence_type in supports for o in outcomes):
        out.append("text containing the full-text terms, ranked within the limit")
    if any(o.channel == "graph" and o.evidence_type in supports for o in outcomes):
        out.append("a relation on a template path from a seed to its subject")
    if any("ranks" in o.outcome for o in outcomes):
        out.append("a larger candidate limit")
    return out
