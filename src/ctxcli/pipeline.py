"""One investigation end to end: build the pack (engine), answer from it (answer), seal it.

The engine and the answer layer do not import each other; this module composes them. The
API and replay call :func:`investigate`."""

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


def investigate(con, pb: Playbook, pb_hash: str, req: Request, store: dict[str, Any]) -> BuildResult:
    t_all = time.perf_counter()
    built = build(con, pb, pb_hash, req, store)
    t0 = time.perf_counter()
    ans = answer_and_record(pb, built.pack, built.trace)
    built.timings["answer"] = time.perf_counter() - t0
    seal(built.pack, ans)
    ans = {"schema_version": ANSWER_SCHEMA, "pack_id": built.pack["pack_id"], "case_id": req.case_id,
           "variant": req.variant, **ans}
    built.timings["total"] = time.perf_counter() - t_all
    return BuildResult(pack=built.pack, answer=ans, trace=built.trace.events, timings=built.timings,
                       candidates=built.candidates)


def answer_and_record(pb: Playbook, pack: dict[str, Any], trace: Trace) -> dict[str, Any]:
    """The deterministic answer from the pack, validated against it, with its trace events."""
    ans = answer_mod.answer(pb, pack)
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
