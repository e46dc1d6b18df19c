"""The pipeline of one investigation: plan → retrieve → gate → pack, round by round, then
answer. Returns the pack (a plain dict, ready for canonical JSON), the answer and the trace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import orjson

from .. import BUILDER_VERSION
from ..answer import answer as answer_mod
from ..models.manifest import DEFAULT_CLEARANCE, clearance_rank
from ..models.playbook import Playbook
from ..tokens import ENCODING, count
from ..util.canon import obj_hash, opaque_ref
from .gates import CONTENT_GATES, GATE_ORDER, META_GATES, WITHHOLDING_GATES, Access, GateContext, Obj, run_gates
from .pack import PackState, make_item, pack_round
from .plan import make_plan
from .render import evidence_header, section_texts
from .retrieve import fuse, in_list, run_plan

PACK_SCHEMA = "ctx.pack/1"
ANSWER_SCHEMA = "ctx.answer/1"
Strategy = Literal["full", "topk", "governed", "dynamic"]

_OBJ_COLS = """o.doc_id, o.object_id, o.tenant_id, o.source_id, o.source_version, o.object_type, o.subject_id,
       o.title, o.content, o.locator, o.valid_from_us, o.valid_to_us, o.observed_us, o.required_scopes,
       o.allowed_purposes, o.supports, o.facts, o.keys, o.content_hash, o.dedup_hash, o.supersedes, o.tokens,
       o.section, o.doc_ref"""
_SOURCE_COLS = "s.trust_level, s.classification, s.max_age_s, s.redaction, s.owner_team"

# The whole row, joined with its source (used by tests and tools that read objects directly).
_OBJ_SQL = f"""
SELECT {_OBJ_COLS}, {_SOURCE_COLS}, o.family
FROM objects o JOIN sources s ON s.source_id = o.source_id
WHERE o.tenant_id = $tenant AND o.doc_id IN ({{ids}})
"""

# The builder fetches candidates by doc id alone, so the ART index on doc_id serves them as
# point reads: first the metadata (no content column), then the content of the candidates
# that pass the metadata gates. The doc ids come from retrieval statements that filter by
# tenant in SQL; the fetched rows are checked again (tenant gate) before anything is used.
_OBJ_META_SQL = ("SELECT " + _OBJ_COLS.replace("o.content,", "NULL::VARCHAR AS content,")
                 + ", o.family FROM objects o WHERE o.doc_id IN ({ids})")
_CONTENT_SQL = "SELECT doc_id, content FROM objects WHERE doc_id IN ({ids})"
_SOURCES_SQL = "SELECT source_id, trust_level, classification, max_age_s, redaction, owner_team FROM sources"

# Each version's source (for its classification) comes from the objects row of the same family.
_VERSIONS_SQL = """
SELECT v.family, v.object_id, v.supersedes, v.source_version, v.valid_from_us, v.valid_to_us, v.required_scopes,
       v.allowed_purposes, o.source_id
FROM versions v JOIN objects o ON o.family = v.family AND o.object_id = v.object_id AND o.tenant_id = v.tenant_id
WHERE v.tenant_id = $tenant AND v.family IN ({fams}) AND o.family IN ({fams}) ORDER BY v.family, v.object_id
"""


@dataclass
class Request:
    case_id: str
    tenant_id: str
    question: str
    purpose: str
    as_of: datetime
    known_at: datetime | None
    subject_id: str
    scopes: list[str]
    budget: int
    max_rounds: int
    seeds: list[str]
    business_keys: list[str]
    variant: str | None = None
    strategy: Strategy = "dynamic"
    clearance: str = DEFAULT_CLEARANCE

    def to_json(self) -> dict[str, Any]:
        return {"case_id": self.case_id, "tenant_id": self.tenant_id, "question": self.question,
                "purpose": self.purpose, "as_of": self.as_of.isoformat(),
                "known_at": self.known_at.isoformat() if self.known_at else None,
                "subject": {"id": self.subject_id, "scopes": sorted(set(self.scopes)), "clearance": self.clearance},
                "budget": self.budget, "max_rounds": self.max_rounds, "seeds": self.seeds,
                "business_keys": self.business_keys, "variant": self.variant, "strategy": self.strategy}


@dataclass
class BuildResult:
    pack: dict[str, Any]
    answer: dict[str, Any]
    trace: list[dict[str, Any]]
    timings: dict[str, float] = field(default_factory=dict)
    candidates: list[dict[str, Any]] = field(default_factory=list)


def _us(dt: datetime) -> int:
    return int(dt.timestamp()) * 1_000_000 + dt.microsecond


def _meta_row_to_obj(r: tuple, src: dict[str, tuple]) -> Obj:
    """A row of _OBJ_META_SQL (object columns, family) with its source's columns spliced in."""
    return _row_to_obj(tuple(r[:24]) + src[r[3]] + (r[24],))


def _row_to_obj(r: tuple) -> Obj:
    return Obj(
        doc_id=r[0], object_id=r[1], tenant_id=r[2], source_id=r[3], source_version=r[4], object_type=r[5],
        subject_id=r[6], title=r[7], content=r[8], locator=r[9], valid_from_us=r[10], valid_to_us=r[11],
        observed_us=r[12], required_scopes=list(r[13] or []), allowed_purposes=list(r[14] or []),
        supports=list(r[15] or []), facts=orjson.loads(r[16]) if r[16] else {}, keys=list(r[17] or []),
        content_hash=r[18], dedup_hash=r[19], supersedes=r[20], tokens=r[21], section=r[22], doc_ref=r[23],
        trust_level=r[24], classification=r[25], max_age_s=r[26],
        redaction=orjson.loads(r[27]) if r[27] else None, owner_team=r[28], family=r[29])


def playbook_json(pb: Playbook, pb_hash: str) -> dict[str, Any]:
    return {"playbook_id": pb.playbook_id, "version": pb.version, "hash": pb_hash,
            "instructions": pb.instructions, "policy_constraints": pb.policy_constraints,
            "budget": pb.budget.model_dump(mode="json")}


def budget_for(pb: Playbook, total: int) -> dict[str, int]:
    b = pb.budget
    if total == b.total_tokens:
        ev = b.evidence
        return {"total": total, "response_reserve": b.response_reserve, "instructions": b.instructions,
                "goal_state": b.goal_state, "tools": b.tools, "evidence": ev}
    # A different total keeps the fixed-size slots (their texts do not shrink), scales the
    # response reserve with the total, and gives the remainder to evidence.
    parts = {"response_reserve": int(b.response_reserve * total / b.total_tokens), "instructions": b.instructions,
             "goal_state": b.goal_state, "tools": b.tools}
    parts["evidence"] = total - sum(parts.values())
    return {"total": total, **parts}


def build(con, pb: Playbook, pb_hash: str, req: Request, store: dict[str, Any]) -> BuildResult:
    t_all = time.perf_counter()
    timings: dict[str, float] = {}
    trace: list[dict[str, Any]] = []
    tz = req.as_of.tzinfo
    as_of_us = _us(req.as_of)
    scopes = frozenset(req.scopes)
    gated = req.strategy in ("governed", "dynamic")
    max_rounds = 1 if req.strategy != "dynamic" else req.max_rounds
    channels = ("fulltext",) if req.strategy == "topk" else ("structured", "fulltext", "graph")

    def ev(kind: str, **kw: Any) -> None:
        trace.append({"seq": len(trace) + 1, "event": kind, **kw})

    families: dict[int, list[tuple]] = {}
    src_cols = {r[0]: tuple(r[1:]) for r in con.execute(_SOURCES_SQL).fetchall()}

    def replacement(o: Obj) -> dict[str, Any] | None:
        return _find_replacement(families.get(o.family, []), o, req, as_of_us, scopes, src_cols)

    gctx = GateContext(tenant=req.tenant_id, scopes=scopes, purpose=req.purpose, as_of=req.as_of,
                       as_of_us=as_of_us, known_at_us=_us(req.known_at) if req.known_at else None,
                       replacement=replacement, clearance=req.clearance)
    access = Access(scopes=scopes, purpose=req.purpose, clearance=req.clearance)
    budget = budget_for(pb, req.budget)
    state = PackState(budget=budget["evidence"], used=count(evidence_header(0)))
    header_tokens = state.used
    playbook_types = {et.type for et in pb.evidence_types}
    type_order = [et.type for et in pb.evidence_types]
    required = [et.type for et in pb.evidence_types if et.required]
    seen: set[int] = set()
    anchored_subjects: set[str] = set(req.seeds)
    omissions: list[dict[str, Any]] = []
    plans: list[dict[str, Any]] = []
    all_cands: list[dict[str, Any]] = []
    stop_reason = "max_rounds_reached"
    missing_types = list(type_order)
    rounds_run = 0

    for round_no in range(1, max_rounds + 1):
        rounds_run = round_no
        target = [t for t in type_order if t in missing_types]
        plan = make_plan(pb, round_no=round_no, target_types=target, seeds=req.seeds,
                         business_keys=req.business_keys, channels=channels)
        plans.append(plan.to_json())
        ev("plan_created", round=round_no, target_types=target, queries=len(plan.queries))
        t0 = time.perf_counter()
        runs = run_plan(con, plan, pb, tenant=req.tenant_id, as_of_us=as_of_us, access=access) if plan.queries else []
        for q, run in zip(plan.queries, runs):
            timings[f"channel.{q.channel}"] = timings.get(f"channel.{q.channel}", 0.0) + run.seconds
            ev("retrieval_executed", round=round_no, query_id=q.query_id, channel=q.channel,
               evidence_type=q.evidence_type, query=q.to_json(),
               filters={"tenant_id": req.tenant_id, "as_of": req.as_of.isoformat(), "supports": q.evidence_type},
               hits=len(run.hits))
        timings["retrieve"] = timings.get("retrieve", 0.0) + time.perf_counter() - t0
        if req.strategy == "topk":
            for run in runs:
                run.hits = run.hits[: pb.candidate_limit]
        cands = fuse(runs)
        new = [c for c in cands if c.doc_id not in seen]
        seen.update(c.doc_id for c in new)
        t0 = time.perf_counter()
        params: dict[str, Any] = {}
        sql = _OBJ_META_SQL.format(ids=in_list(sorted(c.doc_id for c in new), "d", params))
        rows = con.execute(sql, params).fetchall() if new else []
        objs = {r[0]: _meta_row_to_obj(r, src_cols) for r in rows}
        fams = sorted({o.family for o in objs.values() if o.family is not None} - set(families))
        if fams:
            params = {"tenant": req.tenant_id}
            for r in con.execute(_VERSIONS_SQL.format(fams=in_list(fams, "f", params)), params).fetchall():
                families.setdefault(r[0], []).append(r[1:])
        graph_docs = {d for run in runs if run.query.channel in ("graph", "structured") for d in run.hits}
        for d in graph_docs:
            if d in objs and objs[d].subject_id:
                anchored_subjects.add(objs[d].subject_id)
        eligible: list[tuple[Obj, Any]] = []
        decided: dict[int, Any] = {}
        if gated:
            for c in new:
                if c.doc_id in objs:
                    decided[c.doc_id] = run_gates(objs[c.doc_id], gctx, META_GATES)[0]
        need = sorted(d for d in objs if decided.get(d) is None)
        if need:
            params = {}
            for d, text in con.execute(_CONTENT_SQL.format(ids=in_list(need, "c", params)), params).fetchall():
                objs[d].content = text
        for c in new:
            o = objs.get(c.doc_id)
            if o is None:   # not in this tenant: cannot happen, the SQL filters by tenant
                continue
            rej = decided.get(c.doc_id)
            if gated and rej is None:
                rej = run_gates(o, gctx, CONTENT_GATES)[0]
            vis = rej is None or rej.gate not in WITHHOLDING_GATES
            cj = {"round": round_no, "ref": o.object_id if vis else opaque_ref(o.tenant_id, o.object_id),
                  "withheld": not vis, "channels": c.ranks, "queries": c.queries, "rrf": c.rrf,
                  "supports": list(o.supports) if vis else [], "tokens": o.tokens if vis else None,
                  "object_id": o.object_id, "subject_id": o.subject_id}
            all_cands.append(cj)
            ev("candidate_retrieved", round=round_no, ref=cj["ref"], withheld=not vis, channels=c.ranks,
               rrf=c.rrf)
            if rej is not None:
                omissions.append(_omission(o, c, rej, round_no, tz))
                ev("candidate_rejected", round=round_no, **_trace_rej(omissions[-1]))
            else:
                eligible.append((o, c))
        timings["gates"] = timings.get("gates", 0.0) + time.perf_counter() - t0

        t0 = time.perf_counter()

        def make(o: Obj, c: Any, _r=round_no) -> dict[str, Any]:
            return make_item(o, tz=tz, scopes=scopes, round_no=_r, cand=c, count=count)

        def anchored(o: Obj) -> bool:
            return (o.subject_id in anchored_subjects) or bool(set(o.keys) & set(req.business_keys)) \
                or o.object_id in req.business_keys

        from .compress import try_compress

        before = len(state.admitted)
        rejs = pack_round(eligible, state=state, type_order=type_order, target=target,
                          playbook_types=playbook_types, anchored=anchored, make=make,
                          compress=(lambda item, o, rem: try_compress(item, o, rem, pb, count)) if gated else None,
                          coverage_first=gated, gates=gated, budget=req.strategy != "full",
                          cover_all=frozenset(et.type for et in pb.evidence_types if et.coverage == "all"))
        for o, c, rej in rejs:
            omissions.append(_omission(o, c, rej, round_no, tz))
            ev("candidate_rejected", round=round_no, **_trace_rej(omissions[-1]))
        for item in state.admitted[before:]:
            ev("evidence_selected", round=round_no, evidence_id=item["evidence_id"], object_id=item["object_id"],
               selected_for=item["selected_for"], tokens=item["tokens"],
               transformations=[t["kind"] for t in item["transformations"]])
        timings["pack"] = timings.get("pack", 0.0) + time.perf_counter() - t0

        missing_types = [t for t in type_order if t not in state.covered]
        req_missing = [t for t in missing_types if t in required]
        progress = len(state.admitted) > before
        ev("sufficiency_assessed", round=round_no, covered=sorted(state.covered), missing=missing_types,
           required_missing=req_missing, evidence_tokens=state.used, evidence_budget=state.budget)
        if not req_missing:
            stop_reason = "evidence_sufficient"
            break
        if req_missing and all(t in state.over_budget_types for t in req_missing):
            stop_reason = "budget_exhausted"
            break
        if round_no > 1 and not progress:
            stop_reason = "no_progress"
            break
        if round_no == max_rounds:
            stop_reason = "max_rounds_reached"

    judg = {et.type: et for et in pb.evidence_types}
    missing = []
    for t in type_order:
        if t in state.covered:
            continue
        reason = "over_budget" if t in state.over_budget_types else (
            "rejected_by_gates" if any(t in o.get("supports", []) for o in omissions if not o["withheld"])
            else "not_found")
        missing.append({"type": t, "judgment": judg[t].judgment, "required": judg[t].required, "reason": reason})

    omissions.sort(key=lambda o: (GATE_ORDER.index(o["gate"]), o["round"], o["ref"]))
    pack: dict[str, Any] = {
        "schema_version": PACK_SCHEMA,
        "builder_version": BUILDER_VERSION,
        "encoding": ENCODING,
        "request": req.to_json(),
        "playbook": playbook_json(pb, pb_hash),
        "store": store,
        "gate_order": GATE_ORDER,
        "rounds": plans,
        "budget": budget,
        "evidence": state.admitted,
        "omissions": omissions,
        "missing": missing,
        "state": {"rounds": rounds_run, "stop_reason": stop_reason, "gaps": "full"},
    }
    t0 = time.perf_counter()
    sections, slot_used = _count_sections(pack)
    if slot_used["goal_state"] > budget["goal_state"]:
        pack["state"]["gaps"] = "compact"
        sections, slot_used = _count_sections(pack)
    evidence_sum = header_tokens + sum(i["tokens"] for i in state.admitted)
    pack["slots"] = {
        "allocation": budget,
        "used": slot_used,
        "sections": sections,
        "total_tokens": sum(s["tokens"] for s in sections),
        "evidence_tokens_by_items": evidence_sum,
        "within_budget": {s: slot_used[s] <= budget[s] for s in slot_used},
    }
    ans = answer_mod.answer(pb, pack)
    ev("pack_built", evidence=len(state.admitted), omissions=len(omissions), total_tokens=pack["slots"]["total_tokens"],
       stop_reason=stop_reason)
    for c in ans["claims"]:
        ev("claim_generated", claim_id=c["claim_id"], status=c["status"], evidence=c["evidence"])
    validation = answer_mod.validate(ans, pack)
    ans["validation"] = validation
    ev("answer_validated", verdict=ans["verdict"], action=ans["recommended_action"]["action"], **validation)
    timings["answer"] = time.perf_counter() - t0
    pack["answer"] = {"verdict": ans["verdict"], "recommended_action": ans["recommended_action"]["action"],
                      "claims": [{"claim_id": c["claim_id"], "status": c["status"], "facts": c["facts"],
                                  "evidence": c["evidence"]} for c in ans["claims"]]}
    h = obj_hash(pack)
    pack["content_hash"] = h
    pack["pack_id"] = "pk-" + h.split(":")[1][:16]
    ans = {"schema_version": ANSWER_SCHEMA, "pack_id": pack["pack_id"], "case_id": req.case_id,
           "variant": req.variant, **ans}
    timings["total"] = time.perf_counter() - t_all
    return BuildResult(pack=pack, answer=ans, trace=trace, timings=timings, candidates=all_cands)


def _count_sections(pack: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    sections = []
    slot_used = {s: 0 for s in ("instructions", "goal_state", "tools", "evidence")}
    for name, slot, trust, text in section_texts(pack):
        n = count(text)
        sections.append({"section": name, "slot": slot, "trust": trust, "tokens": n})
        slot_used[slot] += n
    return sections, slot_used


def _omission(o: Obj, c: Any, rej, round_no: int, tz) -> dict[str, Any]:
    withheld = rej.gate in WITHHOLDING_GATES
    om: dict[str, Any] = {
        "ref": opaque_ref(o.tenant_id, o.object_id) if withheld else o.object_id,
        "withheld": withheld, "gate": rej.gate, "reason": rej.reason, "detail": rej.detail, "round": round_no,
        "channels": dict(c.ranks), "rrf": c.rrf,
    }
    if not withheld:
        om.update(object_id=o.object_id, source_id=o.source_id, source_version=o.source_version,
                  title=o.title, object_type=o.object_type, supports=list(o.supports), tokens=o.tokens,
                  content_hash=o.content_hash, trust_level=o.trust_level)
    return om


def _trace_rej(om: dict[str, Any]) -> dict[str, Any]:
    return {"ref": om["ref"], "withheld": om["withheld"], "gate": om["gate"], "reason": om["reason"],
            "detail": om["detail"]}


def _find_replacement(members: list[tuple], o: Obj, req: Request, as_of_us: int,
                      scopes: frozenset[str], sources: dict[str, tuple]) -> dict[str, Any] | None:
    """The visible version valid at as_of along the supersession chain, if any: forward
    (what replaced an expired object) or backward (what a not-yet-valid one will replace)."""
    by_id = {m[0]: m for m in members}
    by_sup = {m[1]: m for m in sorted(members) if m[1] is not None}
    forward = o.valid_to_us is not None and o.valid_to_us <= as_of_us
    cur = o.object_id if forward else o.supersedes
    for _ in range(50):
        if cur is None:
            return None
        m = by_sup.get(cur) if forward else by_id.get(cur)
        if m is None:
            return None
        oid, sup, ver, vf, vt, rs, ap, sid = m
        if set(rs or []) - scopes or req.purpose not in (ap or []) or sid not in sources \
                or clearance_rank(sources[sid][1]) > clearance_rank(req.clearance):
            return None
        if (vf is None or vf <= as_of_us) and (vt is None or vt > as_of_us):
            return {"object_id": oid, "version": ver}
        cur = oid if forward else sup
    return None
