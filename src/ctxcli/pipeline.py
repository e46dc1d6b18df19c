"""One investigation end to end: build the pack (engine), answer from it (answer), seal it.

The engine and the answer layer do not import each other; this module composes them. The
API and replay call :func:`investigate`, with the pack's store section from :func:`store_info`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from .answer import answer as answer_mod
from .engine.builder import Request, build
from .engine.trace import Trace
from .models.playbook import Playbook
from .util.packid import seal as seal_pack

ANSWER_SCHEMA = "ctx.answer/1"


@dataclass
class BuildResult:
    pack: dict[str, Any]
    answer: dict[str, Any]
    trace: list[dict[str, Any]]
    timings: dict[str, float] = field(default_factory=dict)
    candidates: list[dict[str, Any]] = field(default_factory=list)


def investigate(con, pb: Playbook, pb_hash: str, req: Request, store: dict[str, Any], *,
                key: bytes, tools=None, memory=None, clock=None) -> BuildResult:
    """``key``: the store secret (opaque references and digests of masked text are keyed with it).
    ``tools``: an already gated set of tool results (replay passes the pack's); by default the
    request's tool results are gated here (:func:`gate_tools`); ``memory`` likewise (replay passes
    the pack's; by default :func:`gate_memory`). ``clock``: what the deadline is
    measured with (tests pass their own; default time.monotonic)."""
    t_all = time.perf_counter()
    pb, req = with_params(pb, req)
    tools = tools if tools is not None else gate_tools(pb, req, key, con=con)
    built = build(con, pb, pb_hash, req, store, key=key, tools=tools,
                  memory=memory if memory is not None else gate_memory(pb, req, key, tools),
                  **({"clock": clock} if clock is not None else {}))
    t0 = time.perf_counter()
    ans = answer_and_record(pb, built.pack, built.trace, refusal=refusal_for(req, built.sources))
    built.timings["answer"] = time.perf_counter() - t0
    seal(built.pack, ans)
    built.trace.emit("pack_sealed", pack_id=built.pack["pack_id"], content_hash=built.pack["content_hash"])
    built.trace.link(built.pack["pack_id"])
    ans = {"schema_version": ANSWER_SCHEMA, "pack_id": built.pack["pack_id"], "case_id": req.case_id,
           "variant": req.variant, **ans, "stale_sources": built.pack["stale_sources"]}
    built.timings["total"] = time.perf_counter() - t_all
    return BuildResult(pack=built.pack, answer=ans, trace=built.trace.events, timings=built.timings,
                       candidates=built.candidates)


def store_info(con, key: bytes | None = None, *, tenant: str, clearance: str) -> dict[str, Any]:
    """The store section of a pack, as the pack's tenant and subject may know the store:
    ``sources`` names only the sources of ``tenant`` (and per-record-tenant sources) whose
    classification the subject's ``clearance`` allows — those ``source_discovered`` names —
    and ``digest`` is the digest of that view (the store schema, those sources' digests and
    the embedding model), so a change to another tenant's source, or to one the subject may not
    know of, is no drift for this pack. With the store secret ``key``, the digests (plain
    digests of whole snapshots, masked text included) are keyed with it, and ``key_id`` names
    (never reveals) the secret."""
    from .models.manifest import clearance_rank
    from .util.canon import canonical_bytes, key_id, sealed_hash, sha256_hex

    meta = con.meta()
    known = {sid for sid, _en, _sc, _pu, level in con.tenant_sources(tenant)
             if not level or clearance_rank(level) <= clearance_rank(clearance)}
    srcs = {s: d for s, d in con.source_digests().items() if s in known}
    digest = "sha256:" + sha256_hex(canonical_bytes({
        "schema_version": meta["schema_version"], "sources": sorted(srcs.items()),
        "embedding": meta.get("embedding_weights_sha256")}))
    info = {"digest": digest, "schema_version": int(meta["schema_version"]), "sources": srcs}
    if "embedding_weights_sha256" in meta:      # the model the store's vectors were made with
        info["embedding"] = {"model": meta["embedding_model"], "version": meta["embedding_version"],
                             "weights_sha256": meta["embedding_weights_sha256"]}
    if key is not None:
        info["digest"] = sealed_hash(info["digest"], key=key)
        info["sources"] = {s: sealed_hash(d, key=key) for s, d in srcs.items()}
        info["key_id"] = key_id(key)
    info.update(con.describe())     # {"backend": "postgresql"} on a team store; nothing for DuckDB
    return info


def store_resolver(con, req: Request, key: bytes):
    """For the tool-result gates: the withholding gate of the stored object an id names when
    the request's subject may not see it (another tenant's, a missing scope, clearance or
    purpose, or masked for it), or of an entity it names that the subject may not see
    (``agents.entities``), else None."""
    from .agents.audit import AuditSubject, Judge

    judge = Judge(con, AuditSubject(req.tenant_id, req.subject_id, list(req.scopes), req.clearance, req.purpose,
                                    req.as_of, req.known_at), key=key)
    entities = judge.entities()

    def resolve(x: str) -> str | None:
        return judge.withholding_gate(x) or entities.withheld(x)

    return resolve


def gate_tools(pb: Playbook, req: Request, key: bytes, con=None):
    """The request's tool results (the caller's, and the live channel's: ctxcli.live) through the
    tool-result gates (``agents.tool_results``), within the tools slot — or the evidence slot
    when the playbook gives tools no tokens; None when the request has no tool result and made
    no live request (the pack then has no tool-result fields)."""
    if not req.tool_results and not req.live_requests:
        return None
    from .agents.registry import read_registry
    from .agents.tool_results import gate_tool_results
    from .engine.builder import budget_for
    from .tokens import count

    alloc = budget_for(pb, req.budget)
    slot = "tools" if alloc["tools"] else "evidence"
    return gate_tool_results(req.tool_results, tenant_id=req.tenant_id, scopes=req.scopes, purpose=req.purpose,
                             as_of=req.as_of, known_at=req.known_at, budget=alloc[slot], slot=slot,
                             registry=read_registry(), key=key, count=count,
                             resolve=store_resolver(con, req, key) if con is not None else None,
                             live=req.live_requests)


def gate_memory(pb: Playbook, req: Request, key: bytes, tools=None):
    """The request's working state and recalled memory records through their gates
    (``agents.memory``), within what the evidence slot holds after the tool results charged to
    it; None when the request has neither (the pack then has no memory fields)."""
    if req.working_state is None and req.memory_records is None:
        return None
    from .agents.memory import gate_memory as gate
    from .engine.builder import budget_for
    from .tokens import count

    room = budget_for(pb, req.budget)["evidence"] - (tools.tokens if tools is not None and tools.slot == "evidence"
                                                     else 0)
    from .util.timeutil import parse_duration

    ages = {role: parse_duration(v, what=f"memory_max_age.{role}") for role, v in pb.memory_max_age.items()}
    return gate(req.working_state, req.memory_records, tenant_id=req.tenant_id, subject_id=req.subject_id,
                scopes=req.scopes, purpose=req.purpose, as_of=req.as_of, known_at=req.known_at,
                budget=max(0, room), key=key, count=count, goal=req.question, max_age=ages)


def with_params(pb: Playbook, req: Request) -> tuple[Playbook, Request]:
    """The playbook with the request's ``{param.NAME}`` filled in, and the request with the
    path templates' seeds added (unchanged when the playbook uses no parameter)."""
    import dataclasses

    from .params import resolve, template_seeds

    rpb = resolve(pb, req.params)
    extra = [s for s in template_seeds(rpb) if s not in req.seeds]
    return rpb, (dataclasses.replace(req, seeds=req.seeds + extra) if extra else req)


def refusal_for(req: Request, sources: dict[str, str]) -> dict[str, Any] | None:
    """Why the request is not allowed at all, or None: a subject with no scope, or a purpose
    that no enabled source of the tenant allows (``sources``: the ``source_discovered``
    reasons). Gates still decide per object; this is the request-level refusal."""
    if not req.scopes:
        return {"reason": "subject_has_no_scope", "subject": req.subject_id}
    enabled = [r for r in sources.values() if r != "disabled"]
    if all(r == "purpose_not_allowed" for r in enabled):
        return {"reason": "purpose_not_allowed_by_any_source", "purpose": req.purpose}
    return None


TRUSTED = ("authoritative", "operational")


def confidence(claim: dict[str, Any], pack: dict[str, Any]) -> dict[str, Any]:
    """A claim's confidence from its evidence, never a number (docs/pipeline.md):

    - ``none``: the claim is unknown (its facts are missing or conflicting);
    - ``high``: a fact whose every cited item comes from an authoritative or operational source;
    - ``medium``: a fact citing a less trusted source, or an inference (derived by the
      playbook's rules) whose cited items are all authoritative or operational;
    - ``low``: a hypothesis, or an inference citing a less trusted source.

    The basis lists the trust levels and the number of distinct sources cited (agreement)."""
    items = {i["evidence_id"]: i for i in pack["evidence"]}
    cited = [items[e] for e in claim["evidence"] if e in items]
    trust = sorted({i["trust_level"] for i in cited})
    trusted = bool(cited) and all(t in TRUSTED for t in trust)
    status = claim["status"]
    if status == "unknown":
        level = "none"
    elif status == "fact":
        level = "high" if trusted else "medium"
    elif status == "inference":
        level = "medium" if trusted else "low"
    else:
        level = "low"
    return {"level": level, "status": status, "trust_levels": trust,
            "sources": len({i["source_id"] for i in cited})}


def answer_and_record(pb: Playbook, pack: dict[str, Any], trace: Trace,
                      refusal: dict[str, Any] | None = None) -> dict[str, Any]:
    """The deterministic answer from the pack, validated against it, with its trace events.
    A refused request gets verdict ``refused``, its reason, no claims and action ``none``."""
    ans = answer_mod.answer(pb, pack)
    if refusal is not None:
        ans.update(verdict="refused", refusal=refusal, claims=[], conflicts=[],
                   summary=f"Refused: {refusal['reason'].replace('_', ' ')}.",
                   recommended_action={"action": "none", "rule_id": None, "evidence": [],
                                       "reason": f"the request is not allowed ({refusal['reason']})"})
    for c in ans["claims"]:
        c["confidence"] = confidence(c, pack)
    for c in ans["claims"]:
        trace.emit("claim_generated", claim_id=c["claim_id"], status=c["status"], evidence=c["evidence"])
    validation = answer_mod.validate(ans, pack)
    ans["validation"] = validation
    trace.emit("answer_validated", verdict=ans["verdict"], action=ans["recommended_action"]["action"], **validation)
    return ans


def seal(pack: dict[str, Any], ans: dict[str, Any]) -> None:
    """Record the answer's summary in the pack, then its content hash and pack id."""
    pack["answer"] = {"verdict": ans["verdict"], "recommended_action": ans["recommended_action"]["action"],
                      "claims": [{"claim_id": c["claim_id"], "status": c["status"], "facts": c["facts"],
                                  "evidence": c["evidence"]} for c in ans["claims"]]}
    seal_pack(pack)
