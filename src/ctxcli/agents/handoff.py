"""Handoffs between agents: findings with their evidence, open uncertainties, the next step.

``make`` writes a handoff document from a verified pack and its answer: every finding (a
claim of status fact or inference) bound to its evidence ids and the object ids behind them,
every open uncertainty (a hypothesis or unknown claim, a missing evidence type), the
recommended next step, and the subject, scopes, clearance, purpose and as_of it is valid for.
Its ``content_hash`` covers everything else in it.

``receive`` re-gates a handoff for another agent's subject: a finding or uncertainty is
passed on only when every object it rests on passes every gate for the receiving subject at
its as_of (one its source masks for that subject only when the finding was made from the masked
text too); otherwise it is dropped whole (its text may tell what the evidence says) and only
counted. A handoff of another tenant, or for another purpose, passes nothing.
"""

from __future__ import annotations

from typing import Any

from ..util.canon import obj_hash

HANDOFF_SCHEMA = "ctx.handoff/1"


def make(pack: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    objects = {e["evidence_id"]: e["object_id"] for e in pack["evidence"]}
    masked = {e["evidence_id"] for e in pack["evidence"]
              if any(t.get("kind") == "redaction" for t in e.get("transformations") or [])}
    req = pack["request"]

    def bound(c: dict[str, Any]) -> dict[str, Any]:
        return {"claim_id": c["claim_id"], "status": c["status"], "text": c["text"],
                "evidence": list(c["evidence"]), "objects": sorted({objects[e] for e in c["evidence"] if e in objects}),
                "masked": sorted({objects[e] for e in c["evidence"] if e in objects and e in masked})}

    findings = [bound(c) for c in answer["claims"] if c["status"] in ("fact", "inference")]
    open_claims = [bound(c) for c in answer["claims"] if c["status"] in ("hypothesis", "unknown")]
    missing = [{"type": m["type"], "required": m["required"], "reason": m["reason"]} for m in pack["missing"]]
    ra = answer["recommended_action"]
    doc = {
        "schema_version": HANDOFF_SCHEMA, "pack_id": pack["pack_id"], "case_id": req["case_id"],
        "tenant_id": req["tenant_id"],
        "valid_for": {"subject": req["subject"]["id"], "scopes": list(req["subject"]["scopes"]),
                      "clearance": req["subject"].get("clearance"), "purpose": req["purpose"], "as_of": req["as_of"]},
        "verdict": answer["verdict"], "findings": findings,
        "uncertainties": {"claims": open_claims, "missing_types": missing},
        "next_step": {"action": ra["action"], "side_effect": ra.get("side_effect", "none")},
    }
    doc["content_hash"] = obj_hash(doc)
    return doc


def verify(doc: Any) -> str | None:
    """Why ``doc`` is not an intact handoff document, or None."""
    if not isinstance(doc, dict) or doc.get("schema_version") != HANDOFF_SCHEMA:
        return f"not a handoff document ({HANDOFF_SCHEMA})"
    body = {k: v for k, v in doc.items() if k != "content_hash"}
    if obj_hash(body) != doc.get("content_hash"):
        return "the handoff does not match its content_hash (edited or truncated)"
    for f in ("findings", "uncertainties", "next_step", "valid_for", "tenant_id"):
        if f not in doc:
            return f"the handoff has no {f}"
    return None


def receive(judge, doc: dict[str, Any]) -> dict[str, Any]:
    """What of ``doc`` the judge's subject may be handed: findings and open claims whose every
    object it may see at its as_of (``judge``: :class:`ctxcli.agents.audit.Judge`)."""
    who = judge.who
    out: dict[str, Any] = {"from_pack": doc["pack_id"], "findings": [], "open_claims": [], "missing_types": [],
                           "withheld": 0, "next_step": None}
    if doc["tenant_id"] != who.tenant_id or doc["valid_for"]["purpose"] != who.purpose:
        n = len(doc["findings"]) + len(doc["uncertainties"]["claims"])
        out.update(withheld=n, refused="the handoff is for another tenant or purpose: nothing of it is passed on")
        return out

    def passes(c: dict[str, Any]) -> bool:
        if not c["evidence"]:
            return True             # a claim that rests on no evidence (the playbook's own words)
        if not c["objects"] or len(c["objects"]) < len(set(c["evidence"])):
            return False            # evidence not bound to an object this side can check
        for o in c["objects"]:
            v = judge.object(o) or {}
            # an object this subject sees masked passes only when the finding was made from it masked too
            if not (v.get("status") == "admitted" or (v.get("gate") == "redaction" and o in c.get("masked", []))):
                return False
        return True

    for key, dest in (("findings", "findings"), ("claims", "open_claims")):
        src = doc["findings"] if key == "findings" else doc["uncertainties"]["claims"]
        for c in src:
            if passes(c):
                out[dest].append({k: c[k] for k in ("claim_id", "status", "text", "evidence", "objects", "masked")})
            else:
                out["withheld"] += 1
    out["missing_types"] = [dict(m) for m in doc["uncertainties"]["missing_types"]]
    out["next_step"] = dict(doc["next_step"])
    return out
