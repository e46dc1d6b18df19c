"""The scores of one ``ctx eval`` run, pure: the pack, answer and candidate dicts against an
:class:`~ctxcli.models.case.Expected` and the store facts (evaluate/facts.py), so tests can
build packs by hand. Nothing here reads a store or a file."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..models.case import Expected
from ..models.request import STRATEGIES   # noqa: F401  (one tuple: case files' by_strategy keys are checked against it)
from ..util.timeutil import dt_to_us

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
def round4(x: float | None) -> float | None:
    return None if x is None else round(x, 4)


def ratio(num: int, den: int) -> float | None:
    return round4(num / den) if den else None


def _us(value: str | datetime | None) -> int | None:
    if value is None:
        return None
    dt = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return dt_to_us(dt)


def _obj_facts(facts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return facts.get("objects", {}) or {}


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, list) and isinstance(actual, list):
        from ..util.canon import canonical_bytes

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
            "required_recall": ratio(len(hit), len(req)), "never_candidates": [x for x in req if x not in found]}


# ------------------------------------------------------------------------------ builder
def _over_clearance(f: dict[str, Any], request: dict[str, Any]) -> bool:
    from ..models.manifest import DEFAULT_CLEARANCE, clearance_rank

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
    # the knowledge time: known_at, else as_of (docs/gates.md, "Which time each gate uses")
    known_at = _us(request.get("known_at")) if request.get("known_at") else as_of
    if known_at is not None and obs is not None:
        if obs > known_at:
            out.append("not_yet_known")
        elif f.get("max_age_s") is not None and known_at - obs > f["max_age_s"] * 1_000_000:
            out.append("stale")
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
        "required_recall": ratio(len(in_pack), len(req)),
        "required_not_in_pack": [x for x in req if x not in set(admitted)],
        "useful": len(useful), "context_precision": ratio(len(useful), len(items)),
        "duplicates": duplicates, "duplicate_rate": ratio(len(duplicates), len(items)),
        "invalid_sources": invalid, "invalid_source_rate": ratio(len(invalid), len(items)) if items else 0.0,
        "rounds": int(pack.get("state", {}).get("rounds") or 0),
        "slots_over_budget": sorted(k for k, ok in pack.get("slots", {}).get("within_budget", {}).items() if not ok),
        "pack_tokens": int(pack.get("slots", {}).get("total_tokens") or 0),
        "evidence_tokens": ev_tokens, "must_cite_tokens": must_tokens,
        "token_efficiency": ratio(must_tokens, ev_tokens),
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
                   candidates: list[dict[str, Any]] | None = None,
                   stored: list[str] | None = None) -> dict[str, Any]:
    """The answer checked against every expectation the case states (unstated ones are
    skipped), claim evidence coverage and provenance completeness. ``checks`` lists each
    comparison with its layer (stop_reason, missing, rejected and withheld are the builder's).
    ``stored``: the ``withheld`` ids the store holds (None: not known)."""
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
    for oid, gate in exp.withheld.items():
        # withheld either way: rejected by that access gate, or never a candidate (the access
        # rules apply inside the statements) — but it must be an object of the store
        got = _omission_gate(pack, oid, candidates)
        if got is None:
            got = "admitted" if oid in admitted else "dropped" if oid in cand_ids else (
                "not_in_store" if stored is not None and oid not in stored else "never_a_candidate")
        checks.append(_check("builder", f"withheld:{oid}", got in (gate, "never_a_candidate"), expected=gate,
                             actual=got, ids=[oid]))

    # claim evidence coverage: every non-unknown claim cites >= 1 evidence id in the pack
    ids = {e["evidence_id"] for e in pack.get("evidence", [])}
    ids |= {t["result_id"] for t in pack.get("tool_results") or []}      # citable for their facts
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
        "claims_known": len(known), "claim_evidence_coverage": ratio(len(known) - len(uncovered), len(known)),
        "claims_uncovered": uncovered, "citations_outside_pack": outside,
        "provenance_completeness": ratio(n - len(incomplete), n), "provenance_incomplete": incomplete,
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
    out = {"acl_violations": dict(sorted(acl.items())), "admitted_injections": sorted(inj) if detector else None,
           "purged_returned": sorted(set(purged)), "must_not_cite_admitted": mnc,
           "violations": len(acl) + len(inj) + len(set(purged)) + len(mnc)}
    if "input_violations" in facts:     # only for runs given an agent's inputs: other reports keep their bytes
        out["admitted_bad_inputs"] = list(facts["input_violations"])
        out["violations"] += len(out["admitted_bad_inputs"])
    return out


def input_violations(pack: dict[str, Any], tool_results: list[Any], working: Any, records: list[Any] | None,
                     scan) -> list[str]:
    """The agent inputs the pack admitted although an independent look at them says it must not
    (the design's "inject failures"): a tool result of another tenant, stale at as_of or
    carrying injected text; a memory record of another tenant or subject, expired or poisoned; a
    working-memory message with injected text, or a stale tool message whose text was kept.
    ``scan``: the detector's ``scan_fields`` (None: injections are not judged). Each entry is
    ``ref (why)``."""
    from ..agents.tool_results import strings
    from ..util.timeutil import parse_duration

    req = pack["request"]
    as_of = datetime.fromisoformat(req["as_of"])
    hit = (lambda fields: scan(fields) is not None) if scan is not None else (lambda fields: False)
    bad: list[str] = []
    admitted_tr = {i["result_id"] for i in pack.get("tool_results") or []}
    for tr in tool_results:
        age = tr.max_age_td()
        why = [w for w, cond in (("other_tenant", tr.tenant_id != req["tenant_id"]),
                                 ("stale", age is not None and as_of - tr.observed_at > age),
                                 ("injection", hit(strings(tr)))) if cond]
        if why and tr.result_id() in admitted_tr:
            bad.append(f"{tr.result_id()} ({', '.join(why)})")
    packed = {r["memory_id"] for r in pack.get("episodic_memory") or []}
    for r in records or []:
        why = [w for w, cond in (("other_tenant", r.tenant_id != req["tenant_id"]),
                                 ("other_subject", r.subject_id != req["subject"]["id"]),
                                 ("expired", r.expires_at <= as_of),
                                 ("injection", hit([("text", r.text)]))) if cond]
        if why and r.memory_id in packed:
            bad.append(f"{r.memory_id} ({', '.join(why)})")
    w = pack.get("working_memory")
    if working is not None and w is not None:
        kept = {m["id"]: m for m in w["messages"]}
        for m in working.messages:
            k = kept.get(m.id)
            if k is None:
                continue
            ref = m.tool_result
            stale = ref is not None and ref.max_age is not None and (
                as_of - ref.observed_at > parse_duration(ref.max_age, what="max_age"))
            if stale and k["cleared"] is None:
                bad.append(f"{m.id} (stale tool message kept)")
            if k["text"] and hit([("text", m.text)]):
                bad.append(f"{m.id} (injection)")
        if working.tenant_id != req["tenant_id"] or working.subject_id != req["subject"]["id"]:
            if w["pinned"] or w["messages"] or w["summary"]:
                bad.append("working state (other_tenant_or_subject)")
    return bad


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
    for name in ("acl_violations", "admitted_injections", "purged_returned", "must_not_cite_admitted",
                 "admitted_bad_inputs"):
        val = safety.get(name)
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
    if name in ("acl_violations", "admitted_injections", "purged_returned", "must_not_cite_admitted",
                "admitted_bad_inputs"):
        return name.replace("_", " ") + ": " + ", ".join(ids)
    if name.startswith("rejected:"):
        return f"{name[9:]} expected rejected by {c['expected']}, got {c['actual']}"
    if name.startswith("withheld:"):
        return f"{name[9:]} expected withheld by {c['expected']}, got {c['actual'].replace('_', ' ')}"
    if name in ("claim_evidence_coverage", "citations_in_pack"):
        return f"{c['message']}: " + ", ".join(ids)
    if name == "provenance_complete":
        return "provenance incomplete: " + ", ".join(f"{k} lacks {'/'.join(v)}" for k, v in (c["actual"] or {}).items())
    return f"{name}: expected {_show(c['expected'])}, got {_show(c['actual'])}" + (
        f" ({c['message']})" if c["message"] else "")


def _show(v: Any) -> str:
    from ..util.canon import canonical_bytes

    return v if isinstance(v, str) else canonical_bytes(v).decode()


# ------------------------------------------------------------------------------ repeats
STABLE_PARTS = ("verdict", "action", "claims", "pack")


def signature(pack: dict[str, Any], answer: dict[str, Any]) -> dict[str, str]:
    """What must not change when a deterministic run is repeated: the verdict, the action, the
    claims (their canonical bytes' digest) and the pack (its canonical bytes' digest)."""
    from ..util.canon import canonical_bytes, sha256_hex

    return {"verdict": str(answer.get("verdict")),
            "action": str((answer.get("recommended_action") or {}).get("action")),
            "claims": sha256_hex(canonical_bytes(answer.get("claims") or []).decode())[:16],
            "pack": sha256_hex(canonical_bytes(pack).decode())[:16]}


def stability(sigs: list[dict[str, str]]) -> dict[str, Any]:
    """Across the repeats of one run: how many distinct values each part took (1: stable)."""
    distinct = {k: len({s[k] for s in sigs}) for k in STABLE_PARTS}
    return {"repeats": len(sigs), "distinct": distinct, "stable": all(v == 1 for v in distinct.values())}


def stability_check(st: dict[str, Any]) -> dict[str, Any]:
    varied = [k for k, v in st["distinct"].items() if v > 1]
    return _check("builder", "stable_across_repeats", st["stable"], expected=1, actual=st["distinct"],
                  ids=varied, message=f"{', '.join(varied) or 'nothing'} differed across {st['repeats']} runs")


def model_spread(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The spread of one run's model answers asked again (--repeat with --answerer model)."""
    status: dict[str, int] = {}
    for r in rows:
        status[r["status"]] = status.get(r["status"], 0) + 1
    n = len(rows)
    return {"asks": n, "status": dict(sorted(status.items())),
            "verdict_agrees": round4(sum(bool(r["verdict_agrees"]) for r in rows) / n) if n else None,
            "action_agrees": round4(sum(bool(r["action_agrees"]) for r in rows) / n) if n else None}


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
    ans = answer_metrics(pack, answer, eff, candidates, facts.get("stored") if eff.withheld else None)
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
