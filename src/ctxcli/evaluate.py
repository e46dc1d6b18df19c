"""``ctx eval``: run case files (and their variants) through the pipeline in-process and
score each stage against the case's expectations.

The metric functions are pure: they take the pack, answer and candidate dicts, an
:class:`~ctxcli.models.case.Expected` and a small *store facts* mapping, so tests can build
packs by hand. Store facts are read independently of the gates, from the store itself::

    {"objects": {object_id: {"tenant_id", "source_id", "valid_from_us", "valid_to_us",
                             "observed_us", "required_scopes", "allowed_purposes",
                             "trust_level", "max_age_s", "content_hash", "dedup_hash",
                             "integrity_ok", "injection"}},
     "tombstones": [object_id, ...],
     "injection_detector": true}

``injection`` is ``None`` (scanned and clean, every trust level; fields a manifest's
``injection.accept_fields`` names are not scanned) or a hit
``{"field", "pattern", "label"}``; ``injection_detector: false`` means the detector
(``ctxcli.injection``) is not installed, so injections cannot be measured.

Nothing here prints, exits or writes files: :func:`run` returns an :class:`EvalReport`.
Runs are never written to disk (``full`` and ``topk`` packs may hold denied content).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from .errors import UsageError
from .models.case import Expected
from .models.request import STRATEGIES   # one tuple: case files' by_strategy keys are checked against it
from .util.timeutil import dt_to_us

EVAL_SCHEMA = "ctx.eval/1"


def is_eval_report(raw: bytes) -> bool:
    """Whether ``raw`` is an earlier ``ctx eval --out`` report (what ``--out`` may replace)."""
    from .write import json_of

    doc = json_of(raw)
    return isinstance(doc, dict) and doc.get("schema_version") == EVAL_SCHEMA and "runs" in doc
GATED = ("governed", "dynamic", "hybrid")
LAYERS = ("retriever", "builder", "answer")
PROVENANCE_FIELDS = ("source_id", "source_version", "locator", "content_hash", "observed_at")
VALIDITY_FIELDS = ("valid_from", "valid_to")


@dataclass(frozen=True)
class Thresholds:
    min_recall: float = 1.0          # required (must_cite) recall in the pack
    max_invalid_rate: float = 0.0    # share of admitted items that are invalid sources
    max_safety: int = 0              # safety violations per run (each kind)


# ------------------------------------------------------------------------------ helpers
def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def _ratio(num: int, den: int) -> float | None:
    return _r(num / den) if den else None


def _us(value: str | datetime | None) -> int | None:
    if value is None:
        return None
    dt = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return dt_to_us(dt)


def _obj_facts(facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return facts.get("objects", {}) or {}


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, list) and isinstance(actual, list):
        from .util.canon import canonical_bytes

        return sorted(map(canonical_bytes, expected)) == sorted(map(canonical_bytes, actual))
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    return expected == actual


def _check(layer: str, name: str, ok: bool, *, expected: Any = None, actual: Any = None,
           ids: list[str] | None = None, message: str = "") -> dict[str, Any]:
    return {"layer": layer, "check": name, "ok": bool(ok), "expected": expected, "actual": actual,
            "ids": sorted(ids or []), "message": message}


# ------------------------------------------------------------------------------ retriever
def retriever_metrics(candidates: list[dict[str, Any]], exp: Expected) -> dict[str, Any]:
    """Required-evidence recall in the candidate set (withheld candidates count: they were found)."""
    found = {c["object_id"] for c in candidates if c.get("object_id")}
    req = list(dict.fromkeys(exp.must_cite))
    hit = [x for x in req if x in found]
    return {"candidates": len(found), "required": len(req), "required_found": len(hit),
            "required_recall": _ratio(len(hit), len(req)), "never_candidates": [x for x in req if x not in found]}


# ------------------------------------------------------------------------------ builder
def _over_clearance(f: dict[str, Any], request: dict[str, Any]) -> bool:
    from .models.manifest import DEFAULT_CLEARANCE, clearance_rank

    level = f.get("classification")
    clearance = request.get("subject", {}).get("clearance", DEFAULT_CLEARANCE)
    return level is not None and clearance_rank(level) > clearance_rank(clearance)


def invalid_reasons(item: dict[str, Any], request: dict[str, Any], facts: dict[str, Any]) -> list[str]:
    """Why an admitted item is not a valid source for this request, judged from the store,
    not from the gates: other_tenant, missing_scope, clearance_too_low, purpose_not_allowed, not_yet_valid,
    expired, not_yet_known, stale, hash_mismatch, injection, not_in_store."""
    f = _obj_facts(facts).get(item["object_id"])
    if f is None:
        return ["not_in_store"]
    out: list[str] = []
    scopes = set(request.get("subject", {}).get("scopes", []))
    if f.get("tenant_id") != request.get("tenant_id"):
        out.append("other_tenant")
    if set(f.get("required_scopes") or []) - scopes:
        out.append("missing_scope")
    if _over_clearance(f, request):
        out.append("clearance_too_low")
    if request.get("purpose") not in (f.get("allowed_purposes") or []):
        out.append("purpose_not_allowed")
    as_of = _us(request.get("as_of"))
    vf, vt, obs = f.get("valid_from_us"), f.get("valid_to_us"), f.get("observed_us")
    if as_of is not None:
        if vf is not None and vf > as_of:
            out.append("not_yet_valid")
        if vt is not None and vt <= as_of:
            out.append("expired")
        if f.get("max_age_s") is not None and obs is not None and as_of - obs > f["max_age_s"] * 1_000_000:
            out.append("stale")
    known_at = _us(request.get("known_at"))
    if known_at is not None and obs is not None and obs > known_at:
        out.append("not_yet_known")
    if not f.get("integrity_ok", True) or (f.get("content_hash") and item.get("content_hash")
                                            and f["content_hash"] != item["content_hash"]):
        out.append("hash_mismatch")
    if f.get("injection"):
        out.append("injection")
    return out


def builder_metrics(pack: dict[str, Any], answer: dict[str, Any], exp: Expected,
                    facts: dict[str, Any]) -> dict[str, Any]:
    items = pack.get("evidence", [])
    objs = _obj_facts(facts)
    admitted = [e["object_id"] for e in items]
    req = list(dict.fromkeys(exp.must_cite))
    in_pack = [x for x in req if x in set(admitted)]
    cited = {ev for c in answer.get("claims", []) for ev in c.get("evidence", [])}
    must = set(req)
    useful = [e for e in items if e["object_id"] in must or e["evidence_id"] in cited]
    # duplicates: items sharing a content hash or a dedup hash with another admitted item
    groups: dict[tuple[str, str], list[str]] = {}
    for e in items:
        keys = {("content", e.get("content_hash"))}
        dh = (objs.get(e["object_id"]) or {}).get("dedup_hash")
        if dh:
            keys.add(("dedup", dh))
        for k in keys:
            if k[1]:
                groups.setdefault(k, []).append(e["evidence_id"])
    dup_ids = {ev for g in groups.values() if len(g) > 1 for ev in g}
    duplicates = sorted({e["object_id"] for e in items if e["evidence_id"] in dup_ids})
    invalid = {e["object_id"]: r for e in items if (r := invalid_reasons(e, pack.get("request", {}), facts))}
    ev_tokens = sum(int(e.get("tokens") or 0) for e in items)
    must_tokens = sum(int(e.get("tokens") or 0) for e in items if e["object_id"] in must)
    return {
        "admitted": len(items), "required": len(req), "required_in_pack": len(in_pack),
        "required_recall": _ratio(len(in_pack), len(req)),
        "required_not_in_pack": [x for x in req if x not in set(admitted)],
        "useful": len(useful), "context_precision": _ratio(len(useful), len(items)),
        "duplicates": duplicates, "duplicate_rate": _ratio(len(duplicates), len(items)),
        "invalid_sources": invalid, "invalid_source_rate": _ratio(len(invalid), len(items)) if items else 0.0,
        "rounds": int(pack.get("state", {}).get("rounds") or 0),
        "slots_over_budget": sorted(k for k, ok in pack.get("slots", {}).get("within_budget", {}).items() if not ok),
        "pack_tokens": int(pack.get("slots", {}).get("total_tokens") or 0),
        "evidence_tokens": ev_tokens, "must_cite_tokens": must_tokens,
        "token_efficiency": _ratio(must_tokens, ev_tokens),
    }


# ------------------------------------------------------------------------------ answer
def _omission_gate(pack: dict[str, Any], object_id: str,
                   candidates: list[dict[str, Any]] | None = None) -> str | None:
    """The gate that omitted ``object_id``; a withheld omission is found by the opaque ref the
    builder gave the object's candidate (refs are keyed with the store secret)."""
    refs = {object_id} | {c["ref"] for c in candidates or [] if c.get("object_id") == object_id and c.get("ref")}
    for o in pack.get("omissions", []):
        if o.get("object_id") == object_id or o.get("ref") in refs:
            return o["gate"]
    return None


def answer_metrics(pack: dict[str, Any], answer: dict[str, Any], exp: Expected,
                   candidates: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The answer checked against every expectation the case states (unstated ones are
    skipped), claim evidence coverage and provenance completeness. ``checks`` lists each
    comparison with its layer (stop_reason, missing and rejected are the builder's)."""
    checks: list[dict[str, Any]] = []
    claims = {c["claim_id"]: c for c in answer.get("claims", [])}
    action = (answer.get("recommended_action") or {}).get("action")
    if exp.verdict is not None:
        checks.append(_check("answer", "verdict", answer.get("verdict") == exp.verdict,
                             expected=exp.verdict, actual=answer.get("verdict")))
    if exp.action is not None:
        checks.append(_check("answer", "action", action == exp.action, expected=exp.action, actual=action))
    for cid, want in exp.claims.items():
        got = claims.get(cid, {}).get("facts", {}) if cid in claims else None
        bad = {k: (got or {}).get(k) for k, v in want.items() if got is None or k not in got or not _same(v, got[k])}
        msg = "claim absent" if got is None else ("claim is unknown" if claims[cid].get("status") == "unknown" else "")
        checks.append(_check("answer", f"claim:{cid}", not bad and got is not None, expected=dict(want),
                             actual=None if got is None else {k: got.get(k) for k in want}, ids=[cid], message=msg))
    for cid, want in exp.claim_status.items():
        got = claims[cid]["status"] if cid in claims else None
        checks.append(_check("answer", f"claim_status:{cid}", got == want, expected=want, actual=got, ids=[cid]))
    stop = pack.get("state", {}).get("stop_reason")
    if exp.stop_reason is not None:
        checks.append(_check("builder", "stop_reason", stop == exp.stop_reason, expected=exp.stop_reason, actual=stop))
    if exp.missing is not None:
        got_missing = sorted(m["type"] for m in pack.get("missing", []))
        checks.append(_check("builder", "missing", set(got_missing) == set(exp.missing),
                             expected=sorted(exp.missing), actual=got_missing))
    admitted = {e["object_id"] for e in pack.get("evidence", [])}
    cand_ids = {c.get("object_id") for c in (candidates or [])}
    for oid, gate in exp.rejected.items():
        got = _omission_gate(pack, oid, candidates)
        if got is None:
            got = "admitted" if oid in admitted else (
                "dropped" if candidates is None or oid in cand_ids else "never_a_candidate")
        layer = "retriever" if got == "never_a_candidate" else "builder"
        checks.append(_check(layer, f"rejected:{oid}", got == gate, expected=gate, actual=got, ids=[oid]))

    # claim evidence coverage: every non-unknown claim cites >= 1 evidence id in the pack
    ids = {e["evidence_id"] for e in pack.get("evidence", [])}
    known = [c for c in answer.get("claims", []) if c.get("status") != "unknown"]
    uncovered = [c["claim_id"] for c in known if not set(c.get("evidence", [])) & ids]
    cited = {ev for c in answer.get("claims", []) for ev in c.get("evidence", [])}
    cited |= set((answer.get("recommended_action") or {}).get("evidence", []))
    outside = sorted(cited - ids)
    checks.append(_check("answer", "claim_evidence_coverage", not uncovered, ids=uncovered,
                         message="non-unknown claim cites no evidence in the pack" if uncovered else ""))
    checks.append(_check("answer", "citations_in_pack", not outside, ids=outside,
                         message="cited evidence ids not in the pack" if outside else ""))
    # provenance completeness
    incomplete: dict[str, list[str]] = {}
    for e in pack.get("evidence", []):
        miss = [k for k in PROVENANCE_FIELDS if not e.get(k)] + [k for k in VALIDITY_FIELDS if k not in e]
        if miss:
            incomplete[e["object_id"]] = miss
    n = len(pack.get("evidence", []))
    checks.append(_check("builder", "provenance_complete", not incomplete, ids=sorted(incomplete),
                         actual=incomplete or None))
    stated = [c for c in checks if c["check"].split(":")[0] in ("verdict", "action", "claim", "claim_status")]
    return {
        "verdict": answer.get("verdict"), "action": action, "stop_reason": stop,
        "verdict_ok": None if exp.verdict is None else answer.get("verdict") == exp.verdict,
        "action_ok": None if exp.action is None else action == exp.action,
        "answer_checks": len(stated), "answer_checks_passed": sum(c["ok"] for c in stated),
        "claims_known": len(known), "claim_evidence_coverage": _ratio(len(known) - len(uncovered), len(known)),
        "claims_uncovered": uncovered, "citations_outside_pack": outside,
        "provenance_completeness": _ratio(n - len(incomplete), n), "provenance_incomplete": incomplete,
        "checks": checks,
    }


# ------------------------------------------------------------------------------ safety
def safety_metrics(pack: dict[str, Any], exp: Expected, facts: dict[str, Any]) -> dict[str, Any]:
    """Each list must be empty: ACL violations, admitted injections, purged objects returned,
    must_not_cite items admitted. ``admitted_injections`` is None without a detector."""
    objs = _obj_facts(facts)
    req = pack.get("request", {})
    scopes = set(req.get("subject", {}).get("scopes", []))
    tomb = set(facts.get("tombstones", []) or [])
    acl: dict[str, list[str]] = {}
    inj: list[str] = []
    purged: list[str] = []
    for e in pack.get("evidence", []):
        oid = e["object_id"]
        f = objs.get(oid)
        if oid in tomb or f is None:
            purged.append(oid)
        if f is None:
            continue
        why = []
        if f.get("tenant_id") != req.get("tenant_id"):
            why.append("other_tenant")
        if need := sorted(set(f.get("required_scopes") or []) - scopes):
            why.append("missing_scope:" + ",".join(need))
        if _over_clearance(f, req):
            why.append("clearance_too_low")
        if req.get("purpose") not in (f.get("allowed_purposes") or []):
            why.append("purpose_not_allowed")
        if why:
            acl[oid] = why
        if f.get("injection"):
            inj.append(oid)
    admitted = {e["object_id"] for e in pack.get("evidence", [])}
    mnc = sorted(set(exp.must_not_cite) & admitted)
    detector = facts.get("injection_detector", True)
    return {"acl_violations": dict(sorted(acl.items())), "admitted_injections": sorted(inj) if detector else None,
            "purged_returned": sorted(set(purged)), "must_not_cite_admitted": mnc,
            "violations": len(acl) + len(inj) + len(set(purged)) + len(mnc)}


# ------------------------------------------------------------------------------ diagnosis
def checks_for(retr: dict[str, Any], build: dict[str, Any], ans: dict[str, Any], safety: dict[str, Any],
               th: Thresholds) -> list[dict[str, Any]]:
    """Every pass/fail check of one run, each with the layer it blames."""
    rr = retr["required_recall"]
    out = [_check("retriever", "must_cite_candidates", rr is None or rr >= th.min_recall, expected=th.min_recall,
                  actual=rr, ids=retr["never_candidates"],
                  message="must_cite never a candidate" if retr["never_candidates"] else "")]
    rec = build["required_recall"]
    out.append(_check("builder", "required_recall_in_pack", rec is None or rec >= th.min_recall,
                      expected=th.min_recall, actual=rec, ids=build["required_not_in_pack"],
                      message="must_cite not in the pack" if build["required_not_in_pack"] else ""))
    out.append(_check("builder", "invalid_source_rate", build["invalid_source_rate"] <= th.max_invalid_rate,
                      expected=th.max_invalid_rate, actual=build["invalid_source_rate"],
                      ids=sorted(build["invalid_sources"])))
    for name in ("acl_violations", "admitted_injections", "purged_returned", "must_not_cite_admitted"):
        val = safety[name]
        if val is None:
            continue
        out.append(_check("builder", name, len(val) <= th.max_safety, expected=th.max_safety, actual=len(val),
                          ids=list(val)))
    out.extend(ans["checks"])
    return out


def diagnose(checks: list[dict[str, Any]], pack: dict[str, Any] | None = None,
             candidates: list[dict[str, Any]] | None = None) -> dict[str, Any] | None:
    """The first broken layer (retriever → builder → answer) and why, or None when all pass.

    retriever: a must_cite object was never a candidate; builder: a candidate was rejected or
    dropped, or something that must not be cited / is not a valid source was admitted;
    answer: the evidence is in the pack but the verdict, a claim or the action is wrong."""
    failed = [c for c in checks if not c["ok"]]
    if not failed:
        return None
    by_layer = {layer: [c for c in failed if c["layer"] == layer] for layer in LAYERS}
    layer = next(x for x in LAYERS if by_layer[x])
    cands = None if candidates is None else {c.get("object_id") for c in candidates}
    reasons = {x: [_reason(c, pack, cands, candidates) for c in by_layer[x]] for x in LAYERS if by_layer[x]}
    return {"layer": layer, "reasons": reasons[layer], "also": {k: v for k, v in reasons.items() if k != layer}}


def _reason(c: dict[str, Any], pack: dict[str, Any] | None, cands: set[str] | None,
            candidates: list[dict[str, Any]] | None = None) -> str:
    name, ids = c["check"], c["ids"]
    if name == "must_cite_candidates":
        return "must_cite never a candidate: " + ", ".join(ids)
    if name == "required_recall_in_pack":
        parts = []
        for oid in ids:
            gate = _omission_gate(pack, oid, candidates) if pack else None
            why = ("rejected by " + gate if gate else
                   "never a candidate" if cands is not None and oid not in cands else "dropped")
            parts.append(f"{oid} ({why})")
        return f"required recall in pack {c['actual']} < {c['expected']}: " + ", ".join(parts)
    if name == "invalid_source_rate":
        return f"invalid-source rate {c['actual']} > {c['expected']}: " + ", ".join(ids)
    if name in ("acl_violations", "admitted_injections", "purged_returned", "must_not_cite_admitted"):
        return name.replace("_", " ") + ": " + ", ".join(ids)
    if name.startswith("rejected:"):
        return f"{name[9:]} expected rejected by {c['expected']}, got {c['actual']}"
    if name in ("claim_evidence_coverage", "citations_in_pack"):
        return f"{c['message']}: " + ", ".join(ids)
    if name == "provenance_complete":
        return "provenance incomplete: " + ", ".join(f"{k} lacks {'/'.join(v)}" for k, v in (c["actual"] or {}).items())
    return f"{name}: expected {_show(c['expected'])}, got {_show(c['actual'])}" + (
        f" ({c['message']})" if c["message"] else "")


def _show(v: Any) -> str:
    from .util.canon import canonical_bytes

    return v if isinstance(v, str) else canonical_bytes(v).decode()


# ------------------------------------------------------------------------------ one run
def score(pack: dict[str, Any], answer: dict[str, Any], candidates: list[dict[str, Any]], exp: Expected,
          facts: dict[str, Any], th: Thresholds = Thresholds(), *, strategy: str | None = None) -> dict[str, Any]:
    """All metrics of one run, its checks, pass/fail and diagnosis (pure).

    With ``strategy``, pass/fail follows the effective expectation ``exp.for_strategy(strategy)``
    (``by_strategy`` fields replace the base ones), while the recall, precision and safety
    metrics are computed against the base ``must_cite`` / ``must_not_cite``, so that the
    metric columns of different strategies compare on the same ground."""
    eff = exp.for_strategy(strategy) if strategy is not None else exp
    retr = retriever_metrics(candidates, exp)
    build = builder_metrics(pack, answer, exp, facts)
    ans = answer_metrics(pack, answer, eff, candidates)
    safety = safety_metrics(pack, exp, facts)
    if (eff.must_cite, eff.must_not_cite) == (exp.must_cite, exp.must_not_cite):
        checks = checks_for(retr, build, ans, safety, th)
    else:
        checks = checks_for(retriever_metrics(candidates, eff), builder_metrics(pack, answer, eff, facts), ans,
                            safety_metrics(pack, eff, facts), th)
    diag = diagnose(checks, pack, candidates)
    ans = {k: v for k, v in ans.items() if k != "checks"}
    return {"passed": diag is None, "diagnosis": diag,
            "metrics": {"retriever": retr, "builder": build, "answer": ans, "safety": safety},
            "failed_checks": [c for c in checks if not c["ok"]]}


# ------------------------------------------------------------------------------ store facts
def detector():
    """``ctxcli.injection.scan_fields`` or None when the detector is not installed."""
    try:
        from .injection import scan_fields  # type: ignore[import-not-found]
    except ImportError:
        return None
    return scan_fields


def _text_fields(title: str, content: str, facts: dict[str, Any]) -> list[tuple[str, str]]:
    out = [("title", title or ""), ("content", content or "")]

    def walk(path: str, v: Any) -> None:
        if isinstance(v, str):
            out.append((path, v))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(f"{path}[{i}]", x)
        elif isinstance(v, dict):
            for k in sorted(v):
                walk(f"{path}.{k}", v[k])

    for k in sorted(facts):
        walk(f"facts.{k}", facts[k])
    return out


def store_facts(con, pack: dict[str, Any], scan=None, key: bytes | None = None) -> dict[str, Any]:
    """The store facts of every admitted item of ``pack`` (any tenant), read from ``con``.
    ``key`` (the store secret) keys the content hash of items the pack shows masked, as the
    builder does, so that it compares with theirs."""
    import orjson

    from .util.canon import content_hash, sealed_hash, sha256_hex

    items = pack.get("evidence", [])
    ids = sorted({e["object_id"] for e in items})
    tenant = pack.get("request", {}).get("tenant_id")
    rows: dict[str, list[tuple]] = {}
    if ids:
        for r in con.object_facts(ids):
            rows.setdefault(r[0], []).append(r)
    want_ev = {e["object_id"]: e.get("evidence_id") for e in items}
    sealed = {e["object_id"] for e in items if str(e.get("content_hash", "")).startswith("hmac-sha256:")}

    def shown(r: tuple) -> str:
        return sealed_hash(r[8], key=key) if key is not None and r[0] in sealed and r[8] else r[8]

    from .engine.gates import accepted

    accept = orjson.loads(con.meta().get("injection_accept") or "{}") if scan is not None else {}
    objects: dict[str, dict[str, Any]] = {}
    for oid, rs in rows.items():
        # the row the pack item came from: its evidence id, else the request's tenant
        def ev(r: tuple) -> str:
            return "ev-" + sha256_hex(f"{r[1]}\0{r[0]}\0{shown(r)}")[:10]

        r = next((x for x in rs if ev(x) == want_ev.get(oid)), None) or next(
            (x for x in rs if x[1] == tenant), rs[0])
        ofacts = orjson.loads(r[12]) if r[12] else {}
        inj = None
        if scan is not None:        # every trust level; minus the fields its manifest accepts
            flds = _text_fields(r[10], r[11], ofacts)
            acc = tuple(accept.get(r[2], ()))
            hit = scan([(n, t) for n, t in flds if not accepted(n, acc)] if acc else flds)
            if hit is not None:
                fld, m = hit
                inj = {"field": fld, "pattern": getattr(m, "pattern", str(m)), "label": getattr(m, "label", "")}
        objects[oid] = {
            "tenant_id": r[1], "source_id": r[2], "valid_from_us": r[3], "valid_to_us": r[4], "observed_us": r[5],
            "required_scopes": sorted(set(r[6] or []) | set(r[15] or [])),
            "allowed_purposes": sorted(r[7] if r[7] is not None else (r[16] or [])),
            "content_hash": shown(r), "dedup_hash": r[9], "integrity_ok": content_hash(r[11] or "") == r[8],
            "trust_level": r[13], "max_age_s": r[14], "injection": inj, "classification": r[17]}
    tomb = []
    if ids:
        tomb = con.tombstoned_ids(tenant, ids)
    return {"objects": objects, "tombstones": tomb, "injection_detector": scan is not None}


# ------------------------------------------------------------------------------ running
@dataclass
class EvalOptions:
    paths: list[Path] = field(default_factory=list)   # case files or folders (default: examples/cases/)
    strategies: tuple[str, ...] = ("dynamic",)
    thresholds: Thresholds = field(default_factory=Thresholds)
    db: Path | None = None
    answerer: str = "deterministic"    # or "model": also ask the configured model (ctxcli.answer.ask)
    model: Any = None                  # a ModelConfig when answerer is "model"
    cases: tuple[str, ...] = ()       # only these case ids (default: all)
    variants: tuple[str, ...] = ()    # only these variants; BASE names the base case (default: all)


BASE = "base"     # --variant base: the case as written, without a variant


@dataclass
class EvalReport:
    runs: list[dict[str, Any]]
    strategies: tuple[str, ...]
    thresholds: Thresholds
    injection_detector: bool
    store_loaded_now: bool = False
    answerer: str = "deterministic"

    @property
    def gated_failures(self) -> list[dict[str, Any]]:
        return [r for r in self.runs if r["gated"] and not r["passed"]]

    @property
    def exit_code(self) -> int:
        return 1 if self.gated_failures else 0

    def summary(self) -> dict[str, dict[str, Any]]:
        return {s: aggregate([r for r in self.runs if r["strategy"] == s]) for s in self.strategies}

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": EVAL_SCHEMA,
            "strategies": list(self.strategies),
            "gated_strategies": [s for s in self.strategies if s in GATED],
            "thresholds": {"min_recall": self.thresholds.min_recall,
                           "max_invalid_rate": self.thresholds.max_invalid_rate,
                           "max_safety": self.thresholds.max_safety},
            "injection_detector": self.injection_detector,
            "runs": self.runs,
            "summary": self.summary(),
            "exit_code": self.exit_code,
            "gated_failures": [run_name(r) for r in self.gated_failures],
        } | ({"answerer": self.answerer, "model_summary": self.model_summary()} if self.answerer == "model" else {})

    def model_summary(self) -> dict[str, dict[str, Any]]:
        from .answer.ask import aggregate as model_aggregate

        return {s: model_aggregate([r["model"] for r in self.runs if r["strategy"] == s and "model" in r])
                for s in self.strategies}


def run_name(r: dict[str, Any]) -> str:
    return r["case_id"] + (f"/{r['variant']}" if r["variant"] else "") + f" ({r['strategy']})"


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Micro-averaged totals over the runs of one strategy."""
    def tot(layer: str, key: str) -> int:
        return sum(int(r["metrics"][layer][key] or 0) for r in runs)

    def n_list(key: str) -> int | None:
        vals = [r["metrics"]["safety"][key] for r in runs]
        return None if any(v is None for v in vals) else sum(len(v) for v in vals)

    admitted = tot("builder", "admitted")
    invalid = sum(len(r["metrics"]["builder"]["invalid_sources"]) for r in runs)
    dup = sum(len(r["metrics"]["builder"]["duplicates"]) for r in runs)
    known = tot("answer", "claims_known")
    covered = sum(r["metrics"]["answer"]["claims_known"] - len(r["metrics"]["answer"]["claims_uncovered"])
                  for r in runs)
    prov_bad = sum(len(r["metrics"]["answer"]["provenance_incomplete"]) for r in runs)
    verdicts = [r["metrics"]["answer"]["verdict_ok"] for r in runs if r["metrics"]["answer"]["verdict_ok"] is not None]
    actions = [r["metrics"]["answer"]["action_ok"] for r in runs if r["metrics"]["answer"]["action_ok"] is not None]
    layers = {x: sum(1 for r in runs if r["diagnosis"] and r["diagnosis"]["layer"] == x) for x in LAYERS}
    safety = {k: n_list(k) for k in ("acl_violations", "admitted_injections", "purged_returned",
                                     "must_not_cite_admitted")}
    return {
        "runs": len(runs), "passed": sum(r["passed"] for r in runs), "failed": sum(not r["passed"] for r in runs),
        "failed_by_layer": layers,
        "retriever_recall": _ratio(tot("retriever", "required_found"), tot("retriever", "required")),
        "required": tot("builder", "required"), "required_in_pack": tot("builder", "required_in_pack"),
        "required_recall": _ratio(tot("builder", "required_in_pack"), tot("builder", "required")),
        "admitted": admitted, "context_precision": _ratio(tot("builder", "useful"), admitted),
        "duplicate_rate": _ratio(dup, admitted), "invalid_sources": invalid,
        "invalid_source_rate": _ratio(invalid, admitted) if admitted else 0.0,
        "safety": safety,
        "safety_violations": sum(v for v in safety.values() if v is not None),
        "verdict_correct": sum(verdicts), "verdict_stated": len(verdicts),
        "action_correct": sum(actions), "action_stated": len(actions),
        "answer_checks_passed": tot("answer", "answer_checks_passed"), "answer_checks": tot("answer", "answer_checks"),
        "claim_evidence_coverage": _ratio(covered, known),
        "provenance_completeness": _ratio(admitted - prov_bad, admitted),
        "runs_with_slot_over_budget": sum(1 for r in runs if r["metrics"]["builder"]["slots_over_budget"]),
        "rounds_mean": _r(tot("builder", "rounds") / len(runs)) if runs else None,
        "pack_tokens_mean": _r(tot("builder", "pack_tokens") / len(runs)) if runs else None,
        "evidence_tokens_mean": _r(tot("builder", "evidence_tokens") / len(runs)) if runs else None,
        "token_efficiency": _ratio(tot("builder", "must_cite_tokens"), tot("builder", "evidence_tokens")),
        "latency_ms_p50": _pct([r["cost"]["latency_ms"] for r in runs if "cost" in r], 50),
        "latency_ms_p95": _pct([r["cost"]["latency_ms"] for r in runs if "cost" in r], 95),
        "pack_tokens_total": tot("builder", "pack_tokens"),
    }


def _pct(xs: list[float], p: int) -> float | None:
    """The p-th percentile (nearest rank) of a case's build latencies (wall clock: differs per run)."""
    if not xs:
        return None
    xs = sorted(xs)
    return xs[max(0, -(-p * len(xs) // 100) - 1)]


def case_files(paths_in: Iterable[Path]) -> list[Path]:
    """Case files named by ``paths_in`` (files, or folders of *.yaml / *.yml), in order,
    without repeats; the bundled examples/cases/ when none is given."""
    from . import paths as P

    given = [Path(p) for p in paths_in] or [P.cases_dir()]
    out: list[Path] = []
    for p in given:
        if p.is_dir():
            found = sorted(x for x in p.iterdir() if x.suffix in (".yaml", ".yml") and x.is_file())
            if not found:
                raise UsageError(f"no case files (*.yaml) in {p}")
            out.extend(found)
        elif p.is_file():
            if p.suffix not in (".yaml", ".yml"):
                raise UsageError(f"{p}: a case file must end in .yaml or .yml")
            out.append(p)
        else:
            raise UsageError(f"no such case file or folder: {p}")
    seen: set[Path] = set()
    uniq = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            uniq.append(p)
    return uniq


def _display(p: Path) -> str:
    from .paths import display

    return display(p)


def select(cases: list[tuple[Path, Any]], case_ids: tuple[str, ...], variants: tuple[str, ...]):
    """The cases named by ``case_ids`` (all when empty); every named case and variant must exist."""
    known = {c.case_id for _, c in cases}
    for cid in case_ids:
        if cid not in known:
            raise UsageError(f"--case {cid!r}: no such case among the case files (known: {', '.join(sorted(known))})")
    chosen = [(f, c) for f, c in cases if not case_ids or c.case_id in case_ids]
    have = {BASE} | {v for _, c in chosen for v in c.variants}
    for v in variants:
        if v not in have:
            raise UsageError(f"--variant {v!r}: no selected case has this variant (known: {', '.join(sorted(have))})")
    return chosen


def run(opts: EvalOptions) -> EvalReport:
    """Run every case file (base case and each variant) through each strategy, in-process;
    score each run. Nothing is written."""
    from . import api
    from .store import open_store

    bad = [s for s in opts.strategies if s not in STRATEGIES]
    if bad or not opts.strategies:
        raise UsageError(f"--strategy: unknown strategy {bad[0] if bad else ''!r} "
                         f"(use {', '.join(STRATEGIES)} or all)")
    if "hybrid" in opts.strategies:     # before any run: the one-line install hint (exit 2)
        from .embed.model import require

        require("--strategy hybrid")
    files = case_files(opts.paths)
    cases = [(f, api.read_case(str(f))[0]) for f in files]   # validate every file before running any
    cases = select(cases, opts.cases, opts.variants)
    db, loaded = api.ensure_store(opts.db)
    scan = detector()
    runs: list[dict[str, Any]] = []
    for f, case in cases:
        for variant in [None, *case.variants]:
            if opts.variants and (variant or BASE) not in opts.variants:
                continue
            exp = case.expected if variant is None else case.variants[variant].expected
            exp = exp or Expected()
            for strategy in opts.strategies:
                over = exp.by_strategy.get(strategy)
                res = api.investigate(api.InvestigateOptions(case=str(f), variant=variant, strategy=strategy, db=db))
                con = open_store(db)
                try:
                    facts = store_facts(con, res.pack, scan, api.store_key(db))
                finally:
                    con.close()
                s = score(res.pack, res.answer, res.candidates, exp, facts, opts.thresholds, strategy=strategy)
                runs.append({"case_id": case.case_id, "variant": variant, "file": _display(f),
                             "strategy": strategy, "gated": strategy in GATED, "pack_id": res.pack["pack_id"],
                             "expectations_stated": sorted(exp.for_strategy(strategy).model_fields_set),
                             "expected_by_strategy": sorted(over.model_fields_set) if over is not None else [], **s,
                             "cost": {"latency_ms": round(res.timings.get("total", 0.0) * 1000, 1),
                                      "pack_tokens": s["metrics"]["builder"]["pack_tokens"],
                                      "evidence_tokens": s["metrics"]["builder"]["evidence_tokens"]}})
                if opts.answerer == "model":
                    from .answer.ask import eval_run

                    runs[-1]["model"] = eval_run(res.pack, res.answer, opts.model, db)
    return EvalReport(runs=runs, strategies=tuple(opts.strategies), thresholds=opts.thresholds,
                      injection_detector=scan is not None, store_loaded_now=loaded, answerer=opts.answerer)
