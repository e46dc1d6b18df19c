"""The context builder: stages over a small build context, round by round —

    plan a round → retrieve → hydrate → gate → pack → assess (stop reason)

— then assemble the pack. Each stage returns what it kept and what it dropped (with the
gate and reason), and the trace events are emitted from those results, in that order.
Answering and sealing the pack happen above the engine (``ctxcli.pipeline``), so the
engine never imports the answer layer.

The same stages serve one investigation (:func:`build`) and one step of an agent
(:func:`build_step`: given the evidence types a step needs and the evidence ids it already
holds, only new admitted items within the step's budget).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from ..models.manifest import DEFAULT_CLEARANCE, clearance_rank
from .. import BUILDER_VERSION
from ..models.playbook import Playbook
from ..tokens import ENCODING, count
from ..util.packid import PACK_SCHEMA
from ..util.timeutil import dt_to_us
from .disclose import Disclosure
from .gates import (CONTENT_GATES, GATE_ORDER, META_GATES, WITHHOLDING_GATES, Access, GateContext, Obj, Rejection,
                    run_gates)
from .hydrate import Hydrator, find_replacement, find_successor
from .pack import PackState, evidence_id, make_item, pack_round
from .plan import Plan, make_plan
from .render import evidence_header, section_info, section_texts
from .retrieve import Candidate, QueryRun, fuse, run_plan, scores_shown
from .trace import Trace, request_hash, run_id_for

Strategy = Literal["full", "topk", "governed", "dynamic", "hybrid"]


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
    params: dict[str, Any] = field(default_factory=dict)
    goal_ref: str | None = None             # contract fields from the case, recorded at the pack's top level
    state_version: str | None = None
    tools: list[str] = field(default_factory=list)
    tool_results: list[Any] = field(default_factory=list)    # agents.tool_results.ToolResult, gated by the pipeline
    live_requests: list[dict[str, Any]] = field(default_factory=list)   # ctxcli.live's record of its requests
    working_state: Any = None               # agents.memory.WorkingState (--memory), gated by the pipeline
    memory_records: list[Any] | None = None   # agents.memory.MemoryRecord recalled (--recall); None: no recall
    adhoc: bool = False                     # no case file: the case was synthesised from the request
    deadline_seconds: float | None = None   # the case's or --deadline (else the playbook's)

    def to_json(self) -> dict[str, Any]:
        d = {"case_id": self.case_id, "tenant_id": self.tenant_id, "question": self.question,
             "purpose": self.purpose, "as_of": self.as_of.isoformat(),
             "known_at": self.known_at.isoformat() if self.known_at else None,
             "subject": {"id": self.subject_id, "scopes": sorted(set(self.scopes)), "clearance": self.clearance},
             "budget": self.budget, "max_rounds": self.max_rounds, "seeds": self.seeds,
             "business_keys": self.business_keys, "variant": self.variant, "strategy": self.strategy}
        if self.params:   # recorded only when the case has any: other packs keep their bytes
            d["params"] = dict(sorted(self.params.items()))
        if self.adhoc:    # recorded only for ad-hoc runs: replay rebuilds their case from this request
            d["adhoc"] = True
        if self.deadline_seconds is not None:   # recorded only when given: other packs keep their bytes
            d["deadline_seconds"] = self.deadline_seconds
        return d


def playbook_json(pb: Playbook, pb_hash: str) -> dict[str, Any]:
    return {"playbook_id": pb.playbook_id, "version": pb.version, "hash": pb_hash,
            "instructions": pb.instructions, "policy_constraints": pb.policy_constraints,
            "budget": pb.budget.model_dump(mode="json")}


def budget_for(pb: Playbook, total: int) -> dict[str, int]:
    """The slot allocation (tokens per slot) for a total budget."""
    b = pb.budget
    if total == b.total_tokens:
        return {"total": total, "response_reserve": b.response_reserve, "instructions": b.instructions,
                "goal_state": b.goal_state, "tools": b.tools, "evidence": b.evidence}
    # A different total keeps the fixed-size slots (their texts do not shrink), scales the
    # response reserve with the total, and gives the remainder to evidence.
    parts = {"response_reserve": int(b.response_reserve * total / b.total_tokens), "instructions": b.instructions,
             "goal_state": b.goal_state, "tools": b.tools}
    parts["evidence"] = total - sum(parts.values())
    return {"total": total, **parts}


# ------------------------------------------------------------------------------ context
@dataclass
class BuildContext:
    """What stays fixed during one build."""

    con: Any
    pb: Playbook
    req: Request
    gctx: GateContext
    hydrator: Hydrator
    trace: Trace
    allocation: dict[str, int]          # tokens per slot
    apply_gates: bool                   # governed and dynamic strategies
    max_rounds: int
    channels: tuple[str, ...]
    type_order: list[str]
    required: list[str]
    playbook_types: set[str]
    cover_all: frozenset[str]
    disclosure: Disclosure              # how objects appear in outputs (masks, keyed digests and refs)
    resolution: Any = None              # the request's names resolved to entity keys (engine/resolve.py)
    anchor_types: frozenset[str] = frozenset()   # the types other types' validity is anchored at (valid_at)
    compare: frozenset[str] = frozenset()        # types whose overlapping items are all kept (compare: true)
    timings: dict[str, float] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)   # source id -> source_discovered reason

    def time(self, key: str, t0: float) -> None:
        self.timings[key] = self.timings.get(key, 0.0) + time.perf_counter() - t0


@dataclass
class BuildState:
    """What the rounds gather."""

    packed: PackState
    header_tokens: int
    missing_types: list[str]
    anchored_subjects: set[str]
    seen: set[int] = field(default_factory=set)
    # doc id -> (its subject, its omission record) of candidates the relevance gate dropped as
    # not linked to the case; reconsidered when a later round's graph or structured channel links
    # them (their subject becomes an anchor), and their omission then goes
    unlinked: dict[int, tuple[str | None, dict[str, Any]]] = field(default_factory=dict)
    # doc id -> (its candidate, its omission record) of candidates of a type whose validity is
    # anchored at a fact of admitted evidence (playbook ``valid_at``), rejected by validity or as
    # not linked while that anchor was not known yet: gated anew once it is
    unanchored: dict[int, tuple[Any, dict[str, Any], list[str]]] = field(default_factory=dict)
    judged_at: dict[str, dict[str, Any]] = field(default_factory=dict)   # object id -> the anchor its validity used
    unresolved: set[int] = field(default_factory=set)   # doc ids gated this round before their anchor was known
    # evidence id -> (object, candidate) of items admitted at as_of while their anchor was not
    # known: judged again at the anchor once it is, and evicted if not valid there
    provisional: dict[str, tuple[Obj, Candidate]] = field(default_factory=dict)
    anchor_gctx: dict[int, GateContext] = field(default_factory=dict)    # anchor µs -> its gate context
    held: frozenset[str] = frozenset()          # evidence ids the caller already holds (per-step builds)
    omissions: list[dict[str, Any]] = field(default_factory=list)
    plans: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    rounds: int = 0
    stop_reason: str = "max_rounds_reached"
    not_tried: dict[str, Any] | None = None     # what a deadline stop left out (rounds, evidence types)
    aggregates: list[dict[str, Any]] = field(default_factory=list)   # the playbook's aggregates, computed
    # evidence type -> what withheld candidates (scope / classification / purpose gates, same
    # tenant only) would need: {"count", "scopes", "purposes", "clearance", "by_gate"}; reported
    # on the missing type, never their content
    withheld_types: dict[str, dict[str, Any]] = field(default_factory=dict)


def gate_context(hydrator: Hydrator, *, tenant: str, scopes: list[str], purpose: str, as_of: datetime,
                 known_at: datetime | None, clearance: str, erased: Any = None) -> GateContext:
    """What the per-candidate gates judge against, with the version chains ``hydrator`` reads
    (a superseded object names its visible replacement)."""
    scope_set = frozenset(scopes)
    as_of_us = dt_to_us(as_of)
    known_at_us = dt_to_us(known_at) if known_at else None
    # A later version replaces an object only once it is known: by known_at, else by as_of (the
    # knowledge-time gate's default; a version recorded after as_of is not yet known then).
    known_us = as_of_us if known_at_us is None else known_at_us

    def replacement(o: Obj) -> dict[str, Any] | None:
        return find_replacement(hydrator.families.get(o.family, []), o, purpose, as_of_us, scope_set,
                                clearance=clearance, sources=hydrator.sources, known_at_us=known_us)

    def successor(o: Obj) -> tuple[bool, dict[str, Any] | None]:
        return find_successor(hydrator.families.get(o.family, []), o, purpose, as_of_us, known_us, scope_set,
                              clearance=clearance, sources=hydrator.sources)

    return GateContext(tenant=tenant, scopes=scope_set, purpose=purpose, as_of=as_of, as_of_us=as_of_us,
                       known_at_us=known_at_us, replacement=replacement, clearance=clearance, successor=successor,
                       erased=erased)


def start(con, pb: Playbook, req: Request, *, key: bytes, evidence_budget: int | None = None,
          held: frozenset[str] = frozenset(), memory_tokens: int = 0,
          reserve: int = 0) -> tuple[BuildContext, BuildState]:
    """``key`` is the store secret (:mod:`ctxcli.store.secret`): opaque references and digests
    of masked text in the outputs are keyed with it."""
    scopes = frozenset(req.scopes)
    hydrator = Hydrator(con, req.tenant_id)
    from ..erasures import for_run

    # the erasures recorded until now apply to this run (read before any object is)
    gctx = gate_context(hydrator, tenant=req.tenant_id, scopes=req.scopes, purpose=req.purpose, as_of=req.as_of,
                        known_at=req.known_at, clearance=req.clearance, erased=for_run(con, req.tenant_id, key))
    allocation = budget_for(pb, req.budget)
    type_order = [et.type for et in pb.evidence_types]
    req_hash = request_hash(req.to_json())
    trace = Trace(run=run_id_for(req_hash))
    limits = {k: v for k, v in (("deadline_seconds", deadline_of(pb, req)),
                                ("statement_timeout_seconds", pb.statement_timeout_seconds)) if v is not None}
    trace.emit("run_started", request_hash=req_hash, builder_version=BUILDER_VERSION, case_id=req.case_id,
               variant=req.variant, strategy=req.strategy, playbook={"playbook_id": pb.playbook_id,
                                                                     "version": pb.version},
               **limits)     # recorded only when set: other traces keep their bytes
    sources = discover_sources(con, req, trace, key=key)
    from .resolve import resolve
    from .retrieve import walk_access

    access = Access(scopes=scopes, purpose=req.purpose, clearance=req.clearance)
    resolution = resolve(con, tenant=req.tenant_id, readable=walk_access(con, access)["readable"],
                         seeds=list(req.seeds), question=req.question, spec=pb.resolve_names)
    bc = BuildContext(
        con=con, pb=pb, req=req, gctx=gctx, hydrator=hydrator, trace=trace, allocation=allocation, sources=sources,
        apply_gates=req.strategy in ("governed", "dynamic", "hybrid"),
        max_rounds=req.max_rounds if req.strategy in ("dynamic", "hybrid") else 1,
        channels=("fulltext",) if req.strategy == "topk" else ("structured", "fulltext", "graph", "window", "vector")
        if req.strategy == "hybrid" else ("structured", "fulltext", "graph", "window"),
        type_order=type_order, required=[et.type for et in pb.evidence_types if et.required],
        playbook_types=set(type_order),
        cover_all=frozenset(et.type for et in pb.evidence_types if et.coverage == "all"),
        disclosure=Disclosure(key=key, scopes=scopes), resolution=resolution,
        anchor_types=frozenset(et.valid_at.anchor_from for et in pb.evidence_types if et.valid_at is not None),
        compare=frozenset(et.type for et in pb.evidence_types if et.compare))
    header = count(evidence_header(0))
    # working memory (``memory_tokens``) and tool results charged to the evidence slot (``reserve``)
    # come after required evidence and before optional evidence: both are kept from optional
    # evidence only, and fitted to what required evidence leaves once it is packed (build)
    packed = PackState(budget=allocation["evidence"] if evidence_budget is None else evidence_budget + header,
                       used=header, reserve=reserve + (memory_tokens if evidence_budget is None else 0),
                       required=frozenset(bc.required))
    st = BuildState(packed=packed, header_tokens=header, missing_types=list(type_order),
                    anchored_subjects=set(req.seeds) | set(resolution.seeds), held=held)
    return bc, st


def discover_sources(con, req: Request, trace: Trace, *, key: bytes) -> dict[str, str]:
    """One ``source_discovered`` event per source of the request's tenant, in source id order:
    whether retrieval may consider it (``considered``) and, if not, why (``disabled``,
    ``purpose_not_allowed`` with the allowed purposes, ``scope_missing`` with the scopes the
    subject lacks). Source ids and their scope/purpose requirements are registry configuration
    (``ctx sources`` shows them), never object content; other tenants' sources are not listed
    at all (docs/security.md); per-record-tenant sources are listed. A source classified above
    the subject's clearance is not named: its ``source_id`` is an opaque reference keyed with the
    store secret, with the clearance it needs (``clearance_insufficient``), as the
    classification gate does for objects. Object-level rules still apply per candidate at the
    gates."""
    from ..models.manifest import clearance_rank
    from ..util.canon import opaque_ref

    rows = con.tenant_sources(req.tenant_id)
    held = set(req.scopes)
    out: dict[str, str] = {}
    for source_id, enabled, scopes, purposes, level in rows:
        lacking = sorted(set(scopes or []) - held)
        if level and clearance_rank(level) > clearance_rank(req.clearance):
            trace.emit("source_discovered", source_id=opaque_ref(req.tenant_id, "source:" + source_id, key=key),
                       considered=False, reason="clearance_insufficient", needs_clearance=level)
        elif not enabled:
            trace.emit("source_discovered", source_id=source_id, considered=False, reason="disabled")
        elif purposes and req.purpose not in purposes:
            trace.emit("source_discovered", source_id=source_id, considered=False, reason="purpose_not_allowed",
                       allowed_purposes=sorted(purposes))
        elif lacking:
            trace.emit("source_discovered", source_id=source_id, considered=False, reason="scope_missing",
                       needs_scopes=lacking)
        else:
            trace.emit("source_discovered", source_id=source_id, considered=True, reason="allowed")
        out[source_id] = trace.events[-1]["reason"]
    return out


# ------------------------------------------------------------------------------ stage results
@dataclass
class Retrieved:
    runs: list[QueryRun]
    fresh: list[Candidate]              # fused candidates not seen in an earlier round, in fused order
    fused: list[Candidate] = field(default_factory=list)    # every fused candidate of the round


@dataclass
class Decision:
    obj: Obj
    cand: Candidate
    rejection: Rejection | None         # None: kept


@dataclass
class Packed:
    admitted: list[dict[str, Any]]
    dropped: list[tuple[Obj, Candidate, Rejection]]


# ------------------------------------------------------------------------------ stages
def plan_round(bc: BuildContext, st: BuildState, round_no: int) -> Plan:
    """The queries for the evidence types still missing."""
    target = [t for t in bc.type_order if t in st.missing_types]
    return make_plan(bc.pb, round_no=round_no, target_types=target, seeds=bc.req.seeds,
                     business_keys=bc.req.business_keys, channels=bc.channels,
                     question=bc.req.question, resolution=bc.resolution,
                     anchors=window_anchors(bc, st))


def window_anchors(bc: BuildContext, st: BuildState) -> dict[str, tuple[int, str] | str]:
    """The anchors the playbook's window queries name: ``as_of``, and each (evidence type, fact)
    as the one value the admitted items of that type agree on (an ISO time), else why not."""

    out: dict[str, tuple[int, str] | str] = {"as_of": (bc.gctx.as_of_us, bc.req.as_of.isoformat())}
    windows = [spec.window for et in bc.pb.evidence_types for spec in (et.retrieve, et.followup)
               if spec is not None and spec.window is not None] + [a.over for a in bc.pb.aggregates]
    for w in windows:
        if w.anchor_fact is not None:
            got = anchor_value(st.packed.admitted, w.anchor_from, w.anchor_fact)
            if got is not None:
                out[f"{w.anchor_from}.{w.anchor_fact}"] = got
    return out


def anchor_value(admitted: list[dict[str, Any]], anchor_from: str, anchor_fact: str) -> tuple[int, str] | str | None:
    """The one instant the admitted items of type ``anchor_from`` agree on for ``anchor_fact``:
    (µs, its ISO text — the first in text order of those naming it: the same instant may be
    written in another zone), ``anchor_not_a_time`` when one value is not an ISO time with an
    offset, ``anchor_conflict`` when they name two instants; None when none holds it."""
    from ..util.timeutil import parse_ts

    vals = sorted({str(i["facts"][anchor_fact]) for i in admitted
                   if anchor_from in i["supports"] and i["facts"].get(anchor_fact) is not None})
    instants: dict[int, str] = {}
    for v in vals:
        try:
            instants.setdefault(dt_to_us(parse_ts(v)), v)
        except ValueError:
            return "anchor_not_a_time"
    if len(instants) > 1:
        return "anchor_conflict"
    return next(iter(instants.items()), None)


def validity_anchor(bc: BuildContext, st: BuildState, supports: list[str]) -> dict[str, Any] | str | None:
    """The time validity is judged at for an object supporting ``supports``: None when none of
    its types is anchored (playbook ``valid_at``: as_of); else, for the first anchored type in
    playbook order, ``{"type", "anchor", "at", "at_us"}`` once the admitted evidence of the
    anchor's type agrees on one ISO time, or why not (``anchor_not_admitted``,
    ``anchor_conflict``, ``anchor_not_a_time``)."""
    from ..util.timeutil import parse_ts

    for et in bc.pb.evidence_types:
        if et.valid_at is None or et.type not in supports:
            continue
        va = et.valid_at
        got = anchor_value(st.packed.admitted, va.anchor_from, va.anchor_fact)
        if got is None:
            return "anchor_not_admitted"
        if isinstance(got, str):
            return got
        return {"type": et.type, "anchor": f"{va.anchor_from}.{va.anchor_fact}", "at": parse_ts(got[1]).isoformat(),
                "at_us": got[0]}
    return None


def anchor_name(bc: BuildContext, supports: list[str]) -> str | None:
    """``<anchor_from>.<anchor_fact>`` of the first anchored type (playbook order) among ``supports``."""
    for et in bc.pb.evidence_types:
        if et.valid_at is not None and et.type in supports:
            return f"{et.valid_at.anchor_from}.{et.valid_at.anchor_fact}"
    return None


def awaits_anchor(bc: BuildContext, st: BuildState, o: Obj) -> bool:
    """Whether ``o`` is of an anchored type whose anchor no admitted item holds yet: it is gated
    after this round has packed the anchor types (:func:`run_round`), never before."""
    return bc.apply_gates and validity_anchor(bc, st, o.supports) == "anchor_not_admitted"


def gctx_for(bc: BuildContext, st: BuildState, o: Obj) -> tuple[GateContext, dict[str, Any] | str | None]:
    """The gate context an object is judged with: the request's, or — for an anchored type whose
    anchor is known — one whose question time is the anchor (the knowledge time stays the
    request's: known_at, else as_of)."""
    anchor = validity_anchor(bc, st, o.supports)
    if not isinstance(anchor, dict):
        return bc.gctx, anchor
    g = st.anchor_gctx.get(anchor["at_us"])
    if g is None:
        from ..util.timeutil import parse_ts

        at = parse_ts(anchor["at"]).astimezone(bc.req.as_of.tzinfo)
        g = st.anchor_gctx[anchor["at_us"]] = gate_context(
            bc.hydrator, tenant=bc.req.tenant_id, scopes=bc.req.scopes, purpose=bc.req.purpose, as_of=at,
            known_at=bc.req.known_at or bc.req.as_of, clearance=bc.req.clearance, erased=bc.gctx.erased)
    return g, anchor


def retrieve_candidates(bc: BuildContext, st: BuildState, plan: Plan) -> Retrieved:
    """Run the plan's queries and fuse their rankings; keep the candidates not seen before."""
    t0 = time.perf_counter()
    access = Access(scopes=bc.gctx.scopes, purpose=bc.gctx.purpose, clearance=bc.gctx.clearance)
    runs = run_plan(bc.con, plan, bc.pb, tenant=bc.req.tenant_id, as_of_us=bc.gctx.as_of_us,
                    access=access, ungated=not bc.apply_gates, known_us=bc.gctx.known_us) if plan.queries else []
    for run in runs:
        key = f"channel.{run.query.channel}"
        bc.timings[key] = bc.timings.get(key, 0.0) + run.seconds
        bc.timings[f"query.{run.query.query_id}"] = run.seconds     # retrieval latency (timings.json)
    bc.time("retrieve", t0)
    if bc.req.strategy == "topk":
        for run in runs:
            run.hits = run.hits[: bc.pb.candidate_limit]
    fused = fuse(runs)
    fresh = [c for c in fused if c.doc_id not in st.seen]
    st.seen.update(c.doc_id for c in fresh)
    return Retrieved(runs, fresh, fused)


def hydrate_objects(bc: BuildContext, st: BuildState, found: Retrieved) -> dict[int, Obj]:
    """The fresh candidates' objects (metadata only); the subjects reached by the graph and
    structured channels become anchors of the case. A candidate an earlier round dropped as not
    linked to the case joins the fresh ones again (in fused order) once its subject is an
    anchor, and its omission record is withdrawn: it is gated and packed anew."""
    t0 = time.perf_counter()
    objs = bc.hydrator.metadata([c.doc_id for c in found.fresh])
    linked = {d for run in found.runs if run.query.channel in ("graph", "structured", "window") for d in run.hits}
    for d in linked:
        subject = objs[d].subject_id if d in objs else st.unlinked[d][0] if d in st.unlinked else None
        if subject:
            st.anchored_subjects.add(subject)
    again = [c for c in found.fused if c.doc_id in st.unlinked and st.unlinked[c.doc_id][0] in st.anchored_subjects]
    regate_unanchored(bc, st, found, objs)
    if again:
        for c in again:
            om = st.unlinked.pop(c.doc_id)[1]
            st.omissions[:] = [o for o in st.omissions if o is not om]
        objs.update(bc.hydrator.metadata([c.doc_id for c in again]))
        order = {c.doc_id: i for i, c in enumerate(found.fused)}
        found.fresh = sorted([*found.fresh, *again], key=lambda c: order[c.doc_id])
    bc.time("hydrate", t0)
    return objs


def rerank_candidates(bc: BuildContext, plan: Plan, found: Retrieved, objs: dict[int, Obj]) -> None:
    """The playbook's reranker (engine/rerank.py), when enabled: score the fresh candidates and
    order the round's candidates by it; the gates then judge them in that order. Off: nothing."""
    spec = bc.pb.rerank
    if spec is None or not spec.enabled:
        return
    from .rerank import ordered, rerank

    ids = [*plan.seeds, *plan.business_keys, *bc.req.business_keys]
    found.fresh = rerank(found.fresh, objs, spec, identifiers=ids, as_of_us=bc.gctx.as_of_us)
    found.fused = ordered(found.fused)


def regate_unanchored(bc: BuildContext, st: BuildState, found: Retrieved, objs: dict[int, Obj]) -> set[int]:
    """Candidates an earlier round rejected by validity or as not linked while their anchor was
    not known, whose anchor is known now (and whose type is still missing): their omission is
    withdrawn and they join the fresh candidates (in fused order), to be gated at the anchor.
    Returns their doc ids."""
    fused_ids = {c.doc_id for c in found.fused}
    back: set[int] = set()
    for d, (cand, om, supports) in list(st.unanchored.items()):    # their anchor is known now: gated at it
        anchor = validity_anchor(bc, st, supports)
        if isinstance(anchor, dict) and anchor["type"] not in st.packed.covered:
            st.unanchored.pop(d)
            st.unlinked.pop(d, None)
            st.omissions[:] = [o for o in st.omissions if o is not om]
            objs.update(bc.hydrator.metadata([d]))
            if d not in fused_ids:
                found.fused.append(cand)
                fused_ids.add(d)
            found.fresh = [c for c in found.fresh if c.doc_id != d] + [cand]
            back.add(d)
    if back:
        order = {c.doc_id: i for i, c in enumerate(found.fused)}
        found.fresh.sort(key=lambda c: order[c.doc_id])
    return back


def gate_candidates(bc: BuildContext, st: BuildState, cands: list[Candidate], objs: dict[int, Obj]) -> list[Decision]:
    """The per-candidate gates over ``cands`` (in fused order): the metadata gates first, then
    (for those that pass) the content is read and the content gates run. Ungated strategies keep
    everything. A candidate of an anchored type is judged at its anchor when known; else at
    as_of, and the record says so (``valid_at: {anchor, at, unresolved}``)."""
    t0 = time.perf_counter()
    meta_rejection: dict[int, Rejection | None] = {}
    ctxs: dict[int, GateContext] = {}
    if bc.apply_gates:
        for c in cands:
            if c.doc_id in objs:
                o = objs[c.doc_id]
                g, anchor = gctx_for(bc, st, o)
                ctxs[c.doc_id] = g
                rej = run_gates(o, g, META_GATES)[0]
                if isinstance(anchor, dict):        # the trace and the record say which time was used
                    st.judged_at[o.object_id] = {k: anchor[k] for k in ("anchor", "at")}
                elif anchor is not None:            # its anchor is not known: as_of, recorded
                    st.judged_at[o.object_id] = {"anchor": anchor_name(bc, o.supports) or "",
                                                 "at": bc.req.as_of.isoformat(), "unresolved": anchor}
                    st.unresolved.add(c.doc_id)
                if anchor is not None and rej is not None and rej.gate == "validity":
                    rej.detail["valid_at"] = st.judged_at[o.object_id]
                meta_rejection[c.doc_id] = rej
    bc.hydrator.fill_content(objs, sorted(c.doc_id for c in cands if c.doc_id in objs
                                          and meta_rejection.get(c.doc_id) is None))
    decisions = []
    for c in cands:
        o = objs.get(c.doc_id)
        if o is None:   # a doc id retrieval returned but the store no longer holds: nothing to gate
            continue
        rej = meta_rejection.get(c.doc_id)
        if bc.apply_gates and rej is None:
            rej = run_gates(o, ctxs.get(c.doc_id, bc.gctx), CONTENT_GATES)[0]
        eid = evidence_id(o, bc.disclosure.digest(o))     # the id its evidence item would have
        if rej is None and eid in st.held:
            rej = Rejection("duplicate", "already_held", {"evidence_id": eid})
        decisions.append(Decision(o, c, rej))
    bc.time("gates", t0)
    return decisions


def pack_admitted(bc: BuildContext, st: BuildState, round_no: int, kept: list[tuple[Obj, Candidate]],
                  target: list[str], *, considered: set[int] | None = None, first_pass_only: bool = False) -> Packed:
    """Coverage-first admission into the evidence slot (duplicate, relevance and budget gates)."""
    t0 = time.perf_counter()
    req = bc.req

    def anchored(o: Obj) -> bool:
        return (o.subject_id in st.anchored_subjects) or bool(set(o.keys) & set(req.business_keys)) \
            or o.object_id in req.business_keys

    def make(o: Obj, c: Candidate) -> dict[str, Any]:
        return make_item(o, tz=req.as_of.tzinfo, disclosure=bc.disclosure, round_no=round_no, cand=c, count=count)

    def shrink(item: dict[str, Any], o: Obj, remaining: int) -> dict[str, Any] | None:
        from . import compress      # 18 regexes compiled at import; only a pack over budget compresses

        return compress.try_compress(item, o, remaining, bc.pb, count)

    before = len(st.packed.admitted)
    dropped = pack_round(kept, state=st.packed, type_order=bc.type_order, target=target,
                         playbook_types=bc.playbook_types, anchored=anchored, make=make,
                         compress=shrink if bc.apply_gates else None, coverage_first=bc.apply_gates,
                         apply_gates=bc.apply_gates, enforce_budget=req.strategy != "full",
                         cover_all=bc.cover_all, considered=considered, first_pass_only=first_pass_only,
                         compare=bc.compare)
    bc.time("pack", t0)
    return Packed(st.packed.admitted[before:], dropped)


def assess(bc: BuildContext, st: BuildState, round_no: int, progressed: bool) -> str | None:
    """Which types are still missing, and whether to stop (the stop reason) or plan another round."""
    st.missing_types = [t for t in bc.type_order if t not in st.packed.covered]
    req_missing = [t for t in st.missing_types if t in bc.required]
    bc.trace.emit("sufficiency_assessed", round=round_no, covered=sorted(st.packed.covered),
                  missing=st.missing_types, required_missing=req_missing, evidence_tokens=st.packed.used,
                  evidence_budget=st.packed.budget)
    if not req_missing:
        return "evidence_sufficient"
    if all(t in st.packed.over_budget_types for t in req_missing):
        return "budget_exhausted"
    if round_no > 1 and not progressed:
        return "no_progress"
    return None


def gate_and_pack(bc: BuildContext, st: BuildState, round_no: int, plan: Plan, found: Retrieved,
                  objs: dict[int, Obj]) -> tuple[list[Decision], Packed]:
    """Gate the round's candidates and pack those kept. A candidate of an anchored type
    (playbook ``valid_at``) whose anchor no admitted item holds yet is never judged before this
    round's anchor types are packed: the others are gated, the best item of each anchor type
    is packed, then the waiting candidates (and earlier ones rejected while their anchor was
    unknown) are gated at the anchor — or, still unknown, at as_of, recorded — and the rest is
    packed. Decisions come back in fused order."""
    waiting = {c.doc_id for c in found.fresh if c.doc_id in objs and awaits_anchor(bc, st, objs[c.doc_id])}
    decisions = gate_candidates(bc, st, [c for c in found.fresh if c.doc_id not in waiting], objs)
    considered: set[int] = set()
    dropped: list[tuple[Obj, Candidate, Rejection]] = []
    target = list(plan.target_types)
    if waiting or st.unanchored or st.provisional:
        anchors = [t for t in target if t in bc.anchor_types]
        kept = [(d.obj, d.cand) for d in decisions if d.rejection is None]
        holds = [k for k in kept if _holds_anchor(bc, k[0])]       # an anchor type's item holding the fact first
        dropped += pack_admitted(bc, st, round_no, holds + [k for k in kept if k not in holds], anchors,
                                 considered=considered, first_pass_only=True).dropped
        reopened = rejudge_provisional(bc, st, round_no)
        target = [t for t in bc.type_order if t in target or t in reopened]
        back = regate_unanchored(bc, st, found, objs)
        decisions += gate_candidates(bc, st, [c for c in found.fresh if c.doc_id in waiting | back], objs)
        order = {c.doc_id: i for i, c in enumerate(found.fresh)}
        decisions.sort(key=lambda d: order[d.cand.doc_id])
    dropped += pack_admitted(bc, st, round_no, [(d.obj, d.cand) for d in decisions
                                                if d.rejection is None and d.obj.doc_id not in considered],
                             target, considered=considered).dropped
    judged_at_as_of = {evidence_id(d.obj, bc.disclosure.digest(d.obj)): d for d in decisions
                       if d.rejection is None and d.obj.doc_id in st.unresolved}
    for item in st.packed.admitted:
        d = judged_at_as_of.get(item["evidence_id"]) if item["round"] == round_no else None
        if d is not None:
            st.provisional[item["evidence_id"]] = (d.obj, d.cand)
    rejudge_provisional(bc, st, round_no)     # an anchor admitted among this round's extras
    return decisions, Packed([i for i in st.packed.admitted if i["round"] == round_no], dropped)


def rejudge_provisional(bc: BuildContext, st: BuildState, round_no: int) -> set[str]:
    """Items admitted at as_of while their anchor was not known, judged again by validity once
    it is: one valid at the anchor stays (its record now names the anchor); one that is not is
    evicted — removed from the evidence, its tokens given back, an omission (gate validity, the
    reason at the anchor, ``valid_at``, ``evicted: {admitted_in_round, evidence_id}``) recorded —
    and the types no other item covers are missing again. Returns those types."""
    from .gates import g_validity

    evicted: list[Obj] = []
    for eid, (o, c) in list(st.provisional.items()):
        g, anchor = gctx_for(bc, st, o)
        if not isinstance(anchor, dict):
            continue
        del st.provisional[eid]
        when = st.judged_at[o.object_id] = {k: anchor[k] for k in ("anchor", "at")}
        rej = g_validity(o, g)
        if rej is None:
            continue
        item = next((i for i in st.packed.admitted if i["evidence_id"] == eid), None)
        if item is None:
            continue
        st.packed.admitted.remove(item)
        st.packed.used -= item["tokens"]
        st.packed.dedup.pop(o.dedup_hash, None)
        rej.detail["valid_at"] = when
        rej.detail["evicted"] = {"admitted_in_round": item["round"], "evidence_id": eid}
        _record_rejection(bc, st, round_no, o, c, rej)
        evicted.append(o)
    if not evicted:
        return set()
    st.packed.covered = ({t for i in st.packed.admitted for t in i["supports"] if t in bc.playbook_types}
                         - (bc.cover_all & st.packed.over_budget_types))
    return {t for o in evicted for t in o.supports if t in bc.playbook_types and t not in st.packed.covered}


def _holds_anchor(bc: BuildContext, o: Obj) -> bool:
    """Whether ``o`` supports a type other types' validity is anchored at and holds that fact."""
    return any(et.valid_at.anchor_from in o.supports and o.facts.get(et.valid_at.anchor_fact) is not None
               for et in bc.pb.evidence_types if et.valid_at is not None)


# ------------------------------------------------------------------------------ one round
def run_round(bc: BuildContext, st: BuildState, round_no: int) -> Packed:
    """plan → retrieve → hydrate → gate → pack for one round, with its trace events."""
    st.rounds = round_no
    plan = plan_round(bc, st, round_no)
    st.plans.append(plan.to_json())
    qt = {q.query_id: list(q.question_terms) for q in plan.queries if q.question_terms}
    bc.trace.emit("plan_created", round=round_no, target_types=plan.target_types, queries=len(plan.queries),
                  **({"question_terms": qt} if qt else {}),
                  **({"resolved": plan.resolved} if plan.resolved else {}),
                  **({"unresolved": plan.unresolved} if plan.unresolved else {}))
    found = retrieve_candidates(bc, st, plan)
    for run in found.runs:
        q = run.query
        bc.trace.emit("retrieval_executed", round=round_no, query_id=q.query_id, channel=q.channel,
                      evidence_type=q.evidence_type, query=q.to_json(),
                      filters={"tenant_id": bc.req.tenant_id, "as_of": bc.req.as_of.isoformat(),
                               "supports": q.evidence_type}, hits=len(run.hits),
                      **({"withheld": dict(run.withheld)} if run.withheld else {}))
    _count_withheld(bc, st, found.runs)
    objs = hydrate_objects(bc, st, found)
    rerank_candidates(bc, plan, found, objs)
    decisions, packed = gate_and_pack(bc, st, round_no, plan, found, objs)
    for d in decisions:
        _record_candidate(bc, st, round_no, d)
    for o, c, rej in packed.dropped:
        _record_rejection(bc, st, round_no, o, c, rej)
        if rej.gate == "relevance" and rej.reason == "not_linked_to_case":
            st.unlinked[c.doc_id] = (o.subject_id, st.omissions[-1])
        if c.doc_id in st.unresolved and rej.gate == "relevance":
            st.unanchored[c.doc_id] = (c, st.omissions[-1], list(o.supports))
    for d in decisions:
        if d.rejection is not None and d.rejection.gate == "validity" and d.obj.doc_id in st.unresolved:
            st.unanchored[d.obj.doc_id] = (d.cand, next(om for om in reversed(st.omissions)
                                                         if om["gate"] == "validity" and om["round"] == round_no
                                                         and om["ref"] == bc.disclosure.ref(d.obj, withheld=False)),
                                           list(d.obj.supports))
    st.unresolved.clear()
    for item in packed.admitted:
        when = st.judged_at.get(item["object_id"])
        bc.trace.emit("evidence_selected", round=round_no, evidence_id=item["evidence_id"],
                      object_id=item["object_id"], selected_for=item["selected_for"], tokens=item["tokens"],
                      transformations=[t["kind"] for t in item["transformations"]],
                      **({"valid_at": when} if when else {}))
        for t in item["transformations"]:
            bc.trace.emit("evidence_transformed", round=round_no, evidence_id=item["evidence_id"],
                          object_id=item["object_id"], kind=t["kind"], method=t.get("method"),
                          before_hash=t.get("before_hash"), after_hash=t.get("after_hash"),
                          before_tokens=t.get("before_tokens"), after_tokens=t.get("after_tokens"))
    return packed


def _count_withheld(bc: BuildContext, st: BuildState, runs: list[QueryRun]) -> None:
    """What the round's statements withheld (counts per gate, never ids): per query in the
    round's plan (``withheld``), and per evidence type for its gap entry — per gate (scope,
    classification, purpose) the most any one query of the type withheld (queries of several
    channels find the same records; counts cannot be merged without ids, so each figure is a
    lower bound), with what would admit them: scopes, purposes, the lowest clearance."""
    per_query = {r.query.query_id: dict(r.withheld) for r in runs if r.withheld}
    if per_query:
        st.plans[-1]["withheld"] = per_query
    for run in runs:
        if run.entity_withheld is not None:     # the window's entity: its declaring source is withheld
            st.withheld_types.setdefault(run.query.evidence_type, {"count": 0, "scopes": set(), "purposes": set(),
                                                                   "clearance": None, "by_gate": {}}
                                         ).setdefault("entity", run.entity_withheld)
        if not any(run.withheld.get(g, 0) for g in ("scope", "classification", "purpose")):
            continue
        w = st.withheld_types.setdefault(run.query.evidence_type, {"count": 0, "scopes": set(), "purposes": set(),
                                                                   "clearance": None, "by_gate": {}})
        for g in ("scope", "classification", "purpose"):
            if run.withheld.get(g):
                w["by_gate"][g] = max(w["by_gate"].get(g, 0), run.withheld[g])
        w["count"] = sum(w["by_gate"].values())
        w["scopes"].update(run.needs["scopes"])
        w["purposes"].update(run.needs["purposes"])
        if run.clearance is not None and (w["clearance"] is None
                                          or clearance_rank(run.clearance) < clearance_rank(w["clearance"])):
            w["clearance"] = run.clearance


def _record_candidate(bc: BuildContext, st: BuildState, round_no: int, d: Decision) -> None:
    o, c, rej = d.obj, d.cand, d.rejection
    vis = rej is None or rej.gate not in WITHHOLDING_GATES
    rr = {"rerank": {"score": c.rerank, "features": dict(c.features or {})}} if c.rerank is not None else {}
    st.candidates.append({
        "round": round_no, "ref": bc.disclosure.ref(o, withheld=not vis), "withheld": not vis,
        "channels": c.ranks, "queries": c.queries, "rrf": c.rrf, **rr, "supports": list(o.supports) if vis else [],
        "tokens": o.tokens if vis else None, "object_id": o.object_id, "subject_id": o.subject_id})
    bc.trace.emit("candidate_retrieved", round=round_no, ref=st.candidates[-1]["ref"], withheld=not vis,
                  channels=c.ranks, rrf=c.rrf, **({"scores": scores_shown(c.scores, bc.disclosure.hides_text(o))}
                                                  if vis else {}), **(rr if vis else {}))
    if rej is not None:
        _record_rejection(bc, st, round_no, o, c, rej)


def _record_rejection(bc: BuildContext, st: BuildState, round_no: int, o: Obj, c: Candidate,
                      rej: Rejection) -> None:
    om = _omission(o, c, rej, round_no, bc.disclosure)
    st.omissions.append(om)
    if rej.gate in ("scope", "classification", "purpose"):   # another tenant's objects are never hinted at
        for t in o.supports:
            w = st.withheld_types.setdefault(t, {"count": 0, "scopes": set(), "purposes": set(), "clearance": None,
                                                 "by_gate": {}})
            w["count"] += 1
            w["by_gate"][rej.gate] = w["by_gate"].get(rej.gate, 0) + 1
            if rej.gate == "scope":
                w["scopes"].update(rej.detail.get("needs", []))
            elif rej.gate == "classification":      # the lowest clearance that admits one of them
                level = rej.detail["needs"]
                if w["clearance"] is None or clearance_rank(level) < clearance_rank(w["clearance"]):
                    w["clearance"] = level
            else:
                w["purposes"].update(rej.detail.get("allowed", []))
    bc.trace.emit("candidate_rejected", round=round_no, ref=om["ref"], withheld=om["withheld"], gate=om["gate"],
                  reason=om["reason"], detail=om["detail"])


def _omission(o: Obj, c: Candidate, rej: Rejection, round_no: int, disc: Disclosure) -> dict[str, Any]:
    om: dict[str, Any] = {
        "withheld": rej.gate in WITHHOLDING_GATES, "gate": rej.gate, "reason": rej.reason, "round": round_no,
        "channels": dict(c.ranks), "rrf": c.rrf,
    }
    om.update(disc.omission_fields(o, rej))     # ref, detail and what the record may name
    return om


# ------------------------------------------------------------------------------ assemble
def missing_entries(bc: BuildContext, st: BuildState, types: list[str]) -> list[dict[str, Any]]:
    """Each of ``types`` not covered, with why (``pack.missing``): ``over_budget``,
    ``withheld_for_access`` (with what the withheld candidates need: counts, scopes, clearance,
    purposes — never an id), ``rejected_by_gates``, ``not_tried`` or ``not_found``."""
    judg = {et.type: et for et in bc.pb.evidence_types}
    missing = []
    for t in types:
        if t in st.packed.covered:
            continue
        gates = sorted({o["gate"] for o in st.omissions if not o["withheld"] and t in o.get("supports", [])},
                       key=GATE_ORDER.index)
        w = st.withheld_types.get(t)
        reason = "over_budget" if t in st.packed.over_budget_types else (
            "withheld_for_access" if w else "rejected_by_gates" if gates else
            "not_tried" if st.not_tried is not None else "not_found")
        entry: dict[str, Any] = {"type": t, "judgment": judg[t].judgment, "required": judg[t].required,
                                 "reason": reason}
        if gates and reason != "over_budget":
            entry["rejected_by"] = gates
        if w:
            entry["withheld"] = {"count": w["count"], "needs_scopes": sorted(w["scopes"]),
                                 "allowed_purposes": sorted(w["purposes"]),
                                 "by_gate": {g: w["by_gate"][g] for g in GATE_ORDER if g in w["by_gate"]}}
            if w["clearance"] is not None:
                entry["withheld"]["needs_clearance"] = w["clearance"]
            if "entity" in w:
                entry["withheld"]["entity"] = w["entity"]
        missing.append(entry)
    return missing


def assemble(bc: BuildContext, st: BuildState, pb_hash: str, store: dict[str, Any],
             tools: Any = None, memory: Any = None) -> dict[str, Any]:
    """The pack without its answer and seal: request, plans, evidence, omissions (in gate
    order), what is missing and why, and the token count of every section."""
    t0 = time.perf_counter()
    missing = missing_entries(bc, st, bc.type_order)
    st.omissions.sort(key=lambda o: (GATE_ORDER.index(o["gate"]), o["round"], o["ref"]))
    allocation = bc.allocation
    pack: dict[str, Any] = {
        "schema_version": PACK_SCHEMA,
        "builder_version": BUILDER_VERSION,
        "encoding": ENCODING,
        "request": bc.req.to_json(),
        "playbook": playbook_json(bc.pb, pb_hash),
        "store": store,
        "gate_order": GATE_ORDER,
        "rounds": st.plans,
        "budget": allocation,
        "evidence": st.packed.admitted,
        "omissions": st.omissions,
        "missing": missing,
        "state": {"rounds": st.rounds, "stop_reason": st.stop_reason, "gaps": "full",
                  **({"not_tried": st.not_tried} if st.not_tried is not None else {})},
        "goal_ref": bc.req.goal_ref,
        "state_version": bc.req.state_version,
        "tools": list(bc.req.tools),
        "stale_sources": _stale_sources(bc),
    }
    if bc.apply_gates:          # the detector the injection gate ran (the ungated baselines run none)
        from ..injection_identity import identity as detector_identity

        pack["detector"] = detector_identity()
    if bc.apply_gates:          # the ungated baselines authorise nothing, so surface nothing either
        from .contradict import contradictions
        from .retrieve import walk_access

        access = Access(scopes=bc.gctx.scopes, purpose=bc.gctx.purpose, clearance=bc.gctx.clearance)
        found = contradictions(bc.con, st.packed.admitted, tenant=bc.req.tenant_id, as_of_us=bc.gctx.as_of_us,
                               access_ok=walk_access(bc.con, access)["access_ok"], known_us=bc.gctx.known_us)
        if found:
            pack["contradictions"] = found
    if tools is not None:     # recorded only when tool results were given: other packs keep their bytes
        pack.update(tools.to_pack())
    if memory is not None:    # recorded only with a working state or a recall: other packs keep their bytes
        pack.update(memory.to_pack())
    if bc.pb.aggregates:     # recorded only when the playbook declares some: other packs keep their bytes
        pack["aggregates"] = st.aggregates
    sections, slot_used = _count_sections(pack)
    if slot_used["goal_state"] > allocation["goal_state"]:
        pack["state"]["gaps"] = "compact"
        sections, slot_used = _count_sections(pack)
    pack["slots"] = {
        "allocation": allocation,
        "used": slot_used,
        "sections": sections,
        "total_tokens": sum(s["tokens"] for s in sections),
        "evidence_tokens_by_items": st.header_tokens + sum(i["tokens"] for i in st.packed.admitted),
        "within_budget": {s: slot_used[s] <= allocation[s] for s in slot_used},
    }
    bc.trace.emit("pack_built", evidence=len(st.packed.admitted), omissions=len(st.omissions),
                  total_tokens=pack["slots"]["total_tokens"], stop_reason=st.stop_reason)
    bc.time("assemble", t0)
    return pack


def _stale_sources(bc: BuildContext) -> list[dict[str, Any]]:
    """The sources retrieval considered whose snapshot is older than their refresh SLA at the
    knowledge time (``known_at``, else as_of), counting only observations known then
    (engine/freshness.py)."""
    from .freshness import source_ages

    ages = source_ages(bc.con, bc.req.tenant_id, bc.gctx.as_of_us, bc.req.as_of.tzinfo, bc.gctx.known_at_us)
    return [{k: v for k, v in a.items() if k != "stale"} for a in ages
            if a["stale"] and bc.sources.get(a["source_id"]) == "allowed"]


def _count_sections(pack: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, int]]:
    sections = []
    slot_used = {s: 0 for s in ("instructions", "goal_state", "tools", "evidence")}
    for name, slot, trust, text in section_texts(pack):
        n = count(text)
        sections.append({"section": name, "slot": slot, "trust": trust, **section_info(pack, name), "tokens": n})
        slot_used[slot] += n
    return sections, slot_used


# ------------------------------------------------------------------------------ the builds
@dataclass
class Built:
    """A pack before its answer and seal, with the trace so far."""

    pack: dict[str, Any]
    trace: Trace
    timings: dict[str, float]
    candidates: list[dict[str, Any]]
    sources: dict[str, str] = field(default_factory=dict)


def deadline_of(pb: Playbook, req: Request) -> float | None:
    """The run's deadline in seconds: the request's (case or --deadline), else the playbook's."""
    return req.deadline_seconds if req.deadline_seconds is not None else pb.deadline_seconds


def build(con, pb: Playbook, pb_hash: str, req: Request, store: dict[str, Any], *, key: bytes,
          tools: Any = None, memory: Any = None, clock=time.monotonic) -> Built:
    """One investigation: rounds of plan → retrieve → hydrate → gate → pack → assess until
    a stop reason, then assemble (``key``: the store secret, see :func:`start`). ``tools``: the
    gated tool results (``agents.tool_results.ToolGate``), packed before the evidence; ``memory``:
    the gated working state and memories (``agents.memory.MemoryGate``), charged to the evidence
    slot before the evidence. With a
    deadline (:func:`deadline_of`), ``clock`` is read before each round: once the deadline has
    passed, the loop stops with ``deadline`` and records what it did not try (the remaining
    rounds and the evidence types still missing), traced as ``deadline_reached``."""
    t_all = time.perf_counter()
    deadline = deadline_of(pb, req)
    started = clock()
    bc, st = start(con, pb, req, key=key, memory_tokens=memory.tokens if memory is not None else 0,
                   reserve=tools.reserved() if tools is not None and tools.slot == "evidence" else 0)
    if pb.statement_timeout_seconds is not None:
        con.set_statement_timeout(pb.statement_timeout_seconds)
    for round_no in range(1, bc.max_rounds + 1):
        if deadline is not None and clock() - started >= deadline:
            st.stop_reason = "deadline"
            st.missing_types = [t for t in bc.type_order if t not in st.packed.covered]
            st.not_tried = {"rounds": list(range(round_no, bc.max_rounds + 1)), "evidence_types": st.missing_types}
            bc.trace.emit("deadline_reached", round=round_no, deadline_seconds=deadline,
                          not_tried_rounds=st.not_tried["rounds"], not_tried_types=st.not_tried["evidence_types"])
            break
        packed = run_round(bc, st, round_no)
        stop = assess(bc, st, round_no, progressed=bool(packed.admitted))
        if stop is not None:
            st.stop_reason = stop
            break
    # what required evidence left of the slot: the memory sections, then the tool results, within it
    room = st.packed.budget - st.packed.used
    if memory is not None:
        memory = memory.against(st.packed.admitted, count)     # a record the evidence contradicts: conflicts
        memory = memory.refit(room, count)
        room -= memory.tokens
    if tools is not None:
        tools = tools.refit(room, count)
    input_decisions(bc.trace, tools, memory)
    if pb.aggregates:
        from .aggregate import compute

        t0 = time.perf_counter()
        st.aggregates = compute(bc, st, window_anchors(bc, st))
        bc.time("aggregates", t0)
    pack_doc = assemble(bc, st, pb_hash, store, tools, memory)
    bc.timings["build"] = time.perf_counter() - t_all
    return Built(pack_doc, bc.trace, bc.timings, st.candidates, bc.sources)


def input_decisions(trace: Trace, tools: Any, memory: Any) -> None:
    """One trace event per decision on the caller's inputs (tool results, working memory,
    recalled memory): ``input_admitted`` or ``input_rejected`` with the gate and its reason —
    a withheld one only by its keyed reference, as in the pack."""
    if tools is not None:
        for i in tools.items:
            trace.emit("input_admitted", section="tool_results", ref=i["result_id"], trust=i["trust_level"],
                       tokens=i["tokens"], **({"shaped_further": i["shaped_further"]} if "shaped_further" in i else {}))
        for o in tools.omissions:
            trace.emit("input_rejected", section="tool_results", ref=o["ref"], withheld=o["withheld"],
                       gate=o["gate"], reason=o["reason"], detail=o["detail"])
    if memory is not None:
        w = memory.working
        if w is not None:
            for p in w["pinned"]:
                trace.emit("input_admitted", section="working_memory", ref=p["ref"], kind=p["kind"], pinned=True)
            if w["summary"] is not None:
                trace.emit("input_admitted", section="working_memory", ref="summary",
                           replaces=w["summary"]["replaces"], tokens=w["summary"]["tokens"])
            for m in w["messages"]:
                trace.emit("input_admitted", section="working_memory", ref=m["id"], cleared=m["cleared"] is not None,
                           tokens=m["tokens"])
        for r in memory.records or []:
            trace.emit("input_admitted", section="episodic_memory", ref=r["memory_id"], tokens=r["tokens"])
        for r in memory.conflicts:
            trace.emit("input_conflict", section="conflicts", ref=r["memory_id"], reason=r["conflict"]["code"],
                       detail=r["conflict"], tokens=r["tokens"])
        for o in memory.omissions:
            trace.emit("input_rejected", section=o["section"], ref=o["ref"], withheld=o["withheld"],
                       gate=o["gate"], reason=o["reason"], detail=o["detail"])


@dataclass
class Step:
    """One agent step: the new items admitted for the step's goal, what was dropped, the trace."""

    evidence: list[dict[str, Any]]
    omissions: list[dict[str, Any]]
    covered: list[str]
    missing: list[str]
    tokens: int
    trace: list[dict[str, Any]]
    step_budget: int = 0      # the evidence tokens the step was given
    tools: Any = None         # the tool-result gates' decision (agents.tool_results.ToolGate); None: none given
    memory: Any = None        # the memory gates' decision (agents.memory.MemoryGate); None: none given
    request: dict[str, Any] | None = None    # the request as a pack records it (api.build_step)
    gaps: list[dict[str, Any]] = field(default_factory=list)   # each missing goal type and why, as pack.missing


def build_step(con, pb: Playbook, req: Request, *, goal_types: list[str], held: list[str],
               step_budget: int, key: bytes) -> Step:
    """One step of an agent: one round of the same stages for the evidence types it needs
    (``goal_types``, a subset of the playbook's), admitting only items whose evidence id it does
    not already hold (``held``; those are dropped as duplicates, reason ``already_held``) within
    ``step_budget`` evidence tokens (the evidence-section header is not charged)."""
    unknown = [t for t in goal_types if t not in {et.type for et in pb.evidence_types}]
    if unknown:
        raise ValueError(f"evidence types not in playbook {pb.playbook_id}: {', '.join(unknown)}")
    bc, st = start(con, pb, req, key=key, evidence_budget=step_budget, held=frozenset(held))
    st.missing_types = [t for t in bc.type_order if t in goal_types]
    run_round(bc, st, 1)
    st.omissions.sort(key=lambda o: (GATE_ORDER.index(o["gate"]), o["round"], o["ref"]))
    return Step(evidence=st.packed.admitted, omissions=st.omissions,
                covered=[t for t in bc.type_order if t in st.packed.covered and t in goal_types],
                missing=[t for t in bc.type_order if t in goal_types and t not in st.packed.covered],
                tokens=st.packed.used - st.header_tokens, trace=bc.trace.events, step_budget=step_budget,
                gaps=missing_entries(bc, st, [t for t in bc.type_order if t in goal_types]))
