"""Handoffs between agents: findings with their evidence, open uncertainties, the next step.

``make`` writes a handoff document from a verified pack and its answer: every finding (a
claim of status fact or inference) bound to its evidence ids and the object ids behind them,
every open uncertainty (a hypothesis or unknown claim, a missing evidence type), the
recommended next step (never one with a side effect), and the subject, scopes, clearance,
purpose and as_of it is valid for. Its ``seal`` is an HMAC-SHA256 of everything else under
the store secret: without the key a document cannot be edited and sealed again (a plain
hash could be recomputed by anyone).

``receive`` refuses a document whose seal does not verify, whole. Otherwise it re-gates it
for another agent's subject: a finding or uncertainty is passed on only when every object it
rests on passes every gate for the receiving subject at its as_of (one its source masks for
that subject only when the finding was made from the masked text too); otherwise it is
dropped whole (its text may tell what the evidence says) and only counted. Then its text is
judged against the cited objects as the receiver may see them (:func:`check_finding_text`):
a text carrying a value the receiver's masks hide, a value none of its cited objects holds,
a claim the claim checker finds false of them, or instruction-like text is dropped with its
reason. A handoff of another tenant, or for
another purpose, passes nothing; a next step whose action is not one of the receiver's
playbook's actions is not passed on.
"""

from __future__ import annotations

import re
from typing import Any

from ..util.canon import canonical_bytes, key_id, keyed_hex

HANDOFF_SCHEMA = "ctx.handoff/2"
SEAL_ALG = "hmac-sha256"
_MAC = re.compile(r"^[0-9a-f]{64}$")
_ACTION = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_CLAIM_KEYS = ("claim_id", "status", "text", "evidence", "objects", "masked")


def _mac(key: bytes, body: dict[str, Any]) -> str:
    return keyed_hex(key, "ctx-handoff-seal", canonical_bytes(body).decode("utf-8"))


def seal(doc: dict[str, Any], key: bytes) -> dict[str, Any]:
    """``doc`` with its ``seal`` (an HMAC under the store secret ``key`` of everything else)."""
    body = {k: v for k, v in doc.items() if k != "seal"}
    return {**body, "seal": {"alg": SEAL_ALG, "key_id": key_id(key), "mac": _mac(key, body)}}


def make(pack: dict[str, Any], answer: dict[str, Any], *, key: bytes) -> dict[str, Any]:
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
        # a handoff hands on a recommendation, never a step with a side effect
        "next_step": {"action": ra["action"], "side_effect": "none"},
    }
    return seal(doc, key)


def _strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _shape(doc: dict[str, Any]) -> str | None:
    """Why a sealed document is not shaped like one ``make`` writes, or None."""
    for f in ("pack_id", "case_id", "tenant_id", "verdict", "findings", "uncertainties", "next_step", "valid_for"):
        if f not in doc:
            return f"the handoff has no {f}"
    vf = doc["valid_for"]
    if not isinstance(vf, dict) or not isinstance(vf.get("purpose"), str) or not _strs(vf.get("scopes")):
        return "valid_for must hold the subject, scopes, clearance, purpose and as_of"
    unc = doc["uncertainties"]
    if not isinstance(unc, dict) or not isinstance(unc.get("claims"), list) or not isinstance(
            unc.get("missing_types"), list):
        return "uncertainties must hold claims and missing_types"
    for where, claims, statuses in (("findings", doc["findings"], ("fact", "inference")),
                                    ("uncertainties.claims", unc["claims"], ("hypothesis", "unknown"))):
        if not isinstance(claims, list):
            return f"{where} must be a list"
        for i, c in enumerate(claims):
            if not isinstance(c, dict) or set(c) != set(_CLAIM_KEYS):
                return f"{where}[{i}] must hold exactly {', '.join(_CLAIM_KEYS)}"
            if c["status"] not in statuses or not isinstance(c["text"], str) or not isinstance(c["claim_id"], str):
                return f"{where}[{i}]: status must be one of {', '.join(statuses)}, text and claim_id strings"
            if not all(_strs(c[k]) for k in ("evidence", "objects", "masked")):
                return f"{where}[{i}]: evidence, objects and masked must be lists of ids"
    for i, m in enumerate(unc["missing_types"]):
        if not isinstance(m, dict) or set(m) != {"type", "required", "reason"} or not all(
                isinstance(m[k], str) for k in ("type", "reason")):
            return f"uncertainties.missing_types[{i}] must hold type, required and reason"
    ns = doc["next_step"]
    if not isinstance(ns, dict) or set(ns) != {"action", "side_effect"}:
        return "next_step must hold exactly action and side_effect"
    if not isinstance(ns["action"], str) or not _ACTION.match(ns["action"]):
        return "next_step.action must be an action name (lower case letters, digits, _)"
    if ns["side_effect"] != "none":
        return "next_step.side_effect must be none: a handoff never hands on a step with a side effect"
    return None


def looks_like(doc: Any) -> bool:
    """Whether ``doc`` is a handoff document ctx wrote (of this or the earlier schema), sealed
    or not: what ``ctx handoff --out`` may replace."""
    return isinstance(doc, dict) and doc.get("schema_version") in (HANDOFF_SCHEMA, "ctx.handoff/1") and (
        "seal" in doc or "content_hash" in doc)


def verify(doc: Any, key: bytes) -> str | None:
    """Why ``doc`` is not an intact handoff sealed with ``key`` (the store secret), or None."""
    import hmac

    if not isinstance(doc, dict) or doc.get("schema_version") != HANDOFF_SCHEMA:
        return f"not a handoff document ({HANDOFF_SCHEMA})"
    s = doc.get("seal")
    if not isinstance(s, dict) or s.get("alg") != SEAL_ALG or not isinstance(s.get("mac"), str) \
            or not _MAC.match(s["mac"]):
        return f"the handoff carries no {SEAL_ALG} seal"
    body = {k: v for k, v in doc.items() if k != "seal"}
    if not hmac.compare_digest(_mac(key, body), s["mac"]):
        return "the handoff's seal does not verify: it was edited after it was sealed, or sealed by another store"
    return _shape(doc)


# ------------------------------------------------------------------------------ the text of a finding
def check_finding_text(finding: dict[str, Any], views: list[Any]) -> dict[str, Any] | None:
    """THE CLAIM-CHECK HOOK: why the receiver's evidence does not support ``finding``'s text,
    or None. ``views``: the objects the finding cites (``engine.gates.Obj``) as the receiving
    subject may see them (masked where its sources mask them for it).

    Two checks, in order: every number, date, identifier and version in the text must be in
    one of those objects (the answer validator's value checks), then the claim checker
    (``answer.claims.check_claim``: comparisons, epistemic status, bound entities, hedges)
    judges the text and its status against those objects. Callers need only the reason it
    returns ({"reason": ..., "detail": {...}} — the detail never quotes the text)."""
    from ..answer.claims import check_claim
    from ..answer.validate import haystack, value_supported, values_in

    if not views:
        return None
    texts: list[str] = []
    for o in views:
        texts += [x for x in (o.object_id, o.source_id, o.source_version, o.locator, o.title, o.content,
                              o.subject_id or "") if x]
        texts.append(canonical_bytes(o.facts).decode("utf-8"))
    hay = haystack(texts)
    bad = [v for v in values_in(finding["text"]) if not value_supported(v, hay)]
    if bad:
        return {"reason": "unsupported_value", "detail": {"values": len(set(bad))}}
    items = [{"evidence_id": o.object_id, "facts": o.facts or {}, "text": o.content or ""} for o in views]
    codes = sorted({v["code"] for v in check_claim(finding["text"], finding["status"], items)
                    if v.get("severity") != "warning"})
    if codes:
        return {"reason": "claim_violation", "detail": {"codes": codes}}
    return None


def _unmasked(text: str, obj) -> bool:
    """Whether ``text`` carries a value that ``obj``'s source masks (its masks change it)."""
    from ..util.masking import mask, patterns

    return mask(text, patterns(obj.redaction)) != text


def receive(judge, doc: dict[str, Any], *, actions: list[str] | None = None) -> dict[str, Any]:
    """What of ``doc`` (already verified) the judge's subject may be handed: findings and
    open claims whose every object it may see at its as_of and whose text its view of those
    objects supports (``judge``: :class:`ctxcli.agents.audit.Judge`; ``actions``: the
    receiver's playbook actions — a next step of another action is not passed on)."""
    from ..engine.injection_adapter import scan

    who = judge.who
    out: dict[str, Any] = {"from_pack": doc["pack_id"], "findings": [], "open_claims": [], "missing_types": [],
                           "withheld": 0, "dropped": [], "next_step": None}
    if doc["tenant_id"] != who.tenant_id or doc["valid_for"]["purpose"] != who.purpose:
        n = len(doc["findings"]) + len(doc["uncertainties"]["claims"])
        out.update(withheld=n, refused="the handoff is for another tenant or purpose: nothing of it is passed on")
        return out

    def visible(c: dict[str, Any]) -> list[Any] | None:
        """The cited objects as the receiver sees them; None when one of them it may not see."""
        if not c["evidence"]:
            return []               # a claim that rests on no evidence (the playbook's own words)
        if not c["objects"] or len(c["objects"]) < len(set(c["evidence"])):
            return None             # evidence not bound to an object this side can check
        views = []
        for o in c["objects"]:
            v = judge.object(o) or {}
            # an object this subject sees masked passes only when the finding was made from it masked too
            if not (v.get("status") == "admitted" or (v.get("gate") == "redaction" and o in c["masked"])):
                return None
            views.append(judge.view(o))
        return views

    def why_not(c: dict[str, Any], views: list[Any]) -> dict[str, Any] | None:
        for o in views:
            if o.redaction and judge.masks(o) and _unmasked(c["text"], o):
                # the masked list is the producer's word: the text itself must not carry what the masks hide
                return {"reason": "unmasked_values", "detail": {}}
        hit = scan([("text", c["text"])])
        if hit is not None:
            return {"reason": "instruction_like_text", "detail": {"pattern": hit[1], "matched": hit[2]}}
        return check_finding_text(c, views)

    for dest, src in (("findings", doc["findings"]), ("open_claims", doc["uncertainties"]["claims"])):
        for c in src:
            views = visible(c)
            if views is None:
                out["withheld"] += 1
                continue
            bad = why_not(c, views)
            if bad is not None:
                out["dropped"].append({"claim_id": c["claim_id"], "section": dest, **bad})
                continue
            out[dest].append({k: c[k] for k in _CLAIM_KEYS})
    out["missing_types"] = [dict(m) for m in doc["uncertainties"]["missing_types"]]
    ns = doc["next_step"]
    if actions is None or ns["action"] in actions:
        out["next_step"] = dict(ns)
    else:
        out["next_step_dropped"] = "not_a_playbook_action"
    return out
