"""The report's view model: plain dicts and lists built from a verified run, for the template.

Everything here is derived from the pack, the trace and the answer that belong to it, and from
the post-mortem library (omission sentences, pack comparison). Withheld omissions contribute
their opaque ref, gate and what they need, nothing else — the same rule as every other output.
All numbers that become widths are formatted here, so the page is the same bytes every time.
"""

from __future__ import annotations

from typing import Any

from ..postmortem import compare, explain_omissions
from ..util.canon import canonical_bytes
from .loader import Run

SLOTS = ("instructions", "goal_state", "tools", "evidence", "response_reserve")
STATUSES = ("fact", "inference", "hypothesis", "unknown")
PHASES = {"plan_created": "plan", "retrieval_executed": "retrieve", "candidate_retrieved": "retrieve",
          "candidate_rejected": "gate", "evidence_selected": "pack", "sufficiency_assessed": "pack",
          "pack_built": "pack", "claim_generated": "answer", "answer_validated": "answer",
          "model_called": "model", "model_answer_validated": "model", "deadline_reached": "plan",
          "aggregate_computed": "retrieve"}


def pct(part: float, whole: float) -> str:
    """A CSS percentage with fixed precision (deterministic text)."""
    if not whole or part <= 0:
        return "0%"
    return f"{min(100.0, 100.0 * part / whole):.3f}%"


def show(v: Any, limit: int | None = None) -> str:
    """A value as text: strings as they are, lists joined, anything else as canonical JSON."""
    if v is None:
        return "—"
    if isinstance(v, str):
        s = v
    elif isinstance(v, bool):
        s = "true" if v else "false"
    elif isinstance(v, (int, float)):
        s = str(v)
    elif isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        s = ", ".join(str(x) for x in v) if v else "(none)"
    else:
        s = canonical_bytes(v).decode()
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


def short(h: Any, n: int = 12) -> str:
    s = show(h)
    if s.startswith("sha256:") and len(s) > 7 + n:
        return s[: 7 + n] + "…"
    return s


# ---------------------------------------------------------------------------------- sections
def header(run: Run) -> dict[str, Any]:
    p = run.pack
    req = p["request"]
    return {
        "pack_id": p["pack_id"], "content_hash": p["content_hash"], "case_id": req["case_id"],
        "variant": req.get("variant"), "question": req.get("question"), "tenant": req["tenant_id"],
        "subject": req["subject"].get("id"), "scopes": list(req["subject"].get("scopes") or []),
        "purpose": req["purpose"], "as_of": req["as_of"], "known_at": req.get("known_at"),
        "budget": req["budget"], "strategy": req.get("strategy"), "max_rounds": req.get("max_rounds"),
        "playbook": f"{p['playbook'].get('playbook_id')} {p['playbook'].get('version')}",
        "playbook_hash": p["playbook"].get("hash"), "builder": p.get("builder_version"),
        "encoding": p.get("encoding"), "store_digest": (p.get("store") or {}).get("digest"),
        "stop_reason": (p.get("state") or {}).get("stop_reason"), "rounds": (p.get("state") or {}).get("rounds"),
        "n_evidence": len(p["evidence"]), "n_omissions": len(p["omissions"]),
        "n_withheld": sum(1 for o in p["omissions"] if o.get("withheld")),
        "n_missing": len(p.get("missing") or []),
        "tokens": (p.get("slots") or {}).get("total_tokens"),
        "run_check": _run_check(run),
    }


def _run_check(run: Run) -> str | None:
    """What the run folder's ``run.json`` verified (file names, signature), when there is one."""
    rc = getattr(run.lp, "run", None)
    if rc is None:
        return None
    files = ", ".join(getattr(rc, "files", None) or []) or "no other file"
    sig = f"signed (key {rc.key_id})" if getattr(rc, "signed", False) else "unsigned"
    return f"run.json verifies {files} · {sig}"


def outcome(run: Run, ev_ids: set[str]) -> dict[str, Any]:
    """Verdict, action and claims: from answer.json when it belongs to the pack, else the pack's answer."""
    a = run.answer or {}
    pa = run.pack["answer"]
    act = a.get("recommended_action") if isinstance(a.get("recommended_action"), dict) else {}
    claims = []
    for c in (a.get("claims") if run.answer else pa.get("claims")) or []:
        if not isinstance(c, dict):
            continue
        status = str(c.get("status"))
        claims.append({
            "id": show(c.get("claim_id")), "status": status,
            "status_class": status if status in STATUSES else "other", "text": c.get("text"),
            "facts": [(show(k), show(v)) for k, v in sorted((c.get("facts") or {}).items())],
            "evidence": cites(c.get("evidence"), ev_ids),
            "condition": _condition(c.get("condition")),
        })
    counts = [(s, sum(1 for c in claims if c["status"] == s)) for s in STATUSES]
    return {
        "verdict": show(pa.get("verdict")), "action": show(pa.get("recommended_action")),
        "action_reason": act.get("reason"), "action_rule": act.get("rule_id"),
        "action_evidence": cites(act.get("evidence"), ev_ids), "summary": a.get("summary"),
        "side_effect": a.get("side_effect"), "claims": claims, "status_counts": [x for x in counts if x[1]],
        "missing": [{"type": show(m.get("type")), "reason": show(m.get("reason")), "required": bool(m.get("required")),
                     "judgment": m.get("judgment")} for m in (run.pack.get("missing") or []) if isinstance(m, dict)],
        "conflicts": [{"fact": show(c.get("fact")),
                       "vals": [(show(v.get("value")), cites(v.get("evidence"), ev_ids))
                                  for v in c.get("values") or [] if isinstance(v, dict)]}
                      for c in (a.get("conflicts") or []) if isinstance(c, dict)],
        "contradictions": [{"relation": show(c.get("relation_id")), "type": show(c.get("type")),
                            "from": cites((c.get("from") or {}).get("evidence"), ev_ids),
                            "to": cites((c.get("to") or {}).get("evidence"), ev_ids),
                            "confidence": show(c.get("confidence"))}
                           for c in (run.pack.get("contradictions") or []) if isinstance(c, dict)],
        "validation": [(show(k), show(v)) for k, v in sorted((a.get("validation") or {}).items())],
        "from_answer_file": run.answer is not None,
    }


def _condition(c: Any) -> str | None:
    if not c:
        return None
    if isinstance(c, dict) and "when" in c:
        return f"{show(c['when'])}: " + ("holds" if c.get("holds") else "does not hold")
    return show(c)


def cites(ids: Any, ev_ids: set[str]) -> list[dict[str, Any]]:
    """Cited evidence ids; ``linked`` only for ids that have a card on this page."""
    return [{"id": show(i), "linked": i in ev_ids} for i in (ids or [])]


def budget(run: Run) -> dict[str, Any]:
    p = run.pack
    slots = p.get("slots") or {}
    alloc = slots.get("allocation") or p.get("budget") or {}
    used = dict(slots.get("used") or {})
    total = alloc.get("total") or p["request"]["budget"]
    segs = []
    for s in SLOTS:
        a = int(alloc.get(s) or 0)
        u = int(used.get(s) or 0) if s != "response_reserve" else a
        if not a and not u:
            continue
        segs.append({"slot": s, "allocated": a, "used": u, "free": max(0, a - u),
                     "used_w": pct(min(u, a) if a else u, total), "free_w": pct(max(0, a - u), total),
                     "reserve": s == "response_reserve", "over": bool(a) and u > a})
    by_type: dict[str, dict[str, Any]] = {}
    for e in p["evidence"]:
        t = show(e.get("selected_for") or e.get("object_type"))
        g = by_type.setdefault(t, {"type": t, "n": 0, "tokens": 0, "ids": []})
        g["n"] += 1
        g["tokens"] += int(e.get("tokens") or 0)
        g["ids"].append(show(e.get("evidence_id")))
    ev_alloc = int(alloc.get("evidence") or 0)
    types = sorted(by_type.values(), key=lambda g: (-g["tokens"], g["type"]))
    for g in types:
        g["w"] = pct(g["tokens"], ev_alloc or max((x["tokens"] for x in types), default=1))
    return {"total": total, "segments": segs, "total_tokens": slots.get("total_tokens"),
            "evidence_alloc": ev_alloc, "evidence_used": int(used.get("evidence") or 0), "by_type": types,
            "sections": [{"section": show(s.get("section")), "slot": show(s.get("slot")),
                          "tokens": s.get("tokens"), "trust": show(s.get("trust"))}
                         for s in slots.get("sections") or [] if isinstance(s, dict)]}


def rrf_ranks(pack: dict[str, Any]) -> dict[tuple[Any, str], int]:
    """Rank of each candidate of a round by fused (RRF) score, over the admitted and omitted
    candidates of that round; equal scores share a rank."""
    by_round: dict[Any, list[tuple[str, float]]] = {}
    for e in pack["evidence"]:
        by_round.setdefault(e.get("round"), []).append((e["object_id"], float(e.get("rrf") or 0)))
    for o in pack["omissions"]:
        by_round.setdefault(o.get("round"), []).append((o["ref"], float(o.get("rrf") or 0)))
    out = {}
    for rnd, xs in by_round.items():
        scores = sorted((s for _, s in xs), reverse=True)
        for key, s in xs:
            out[(rnd, key)] = 1 + sum(1 for x in scores if x > s)
    return out


def evidence_cards(run: Run, claims: list[dict[str, Any]]) -> list[dict[str, Any]]:
    p = run.pack
    ranks = rrf_ranks(p)
    cited_by: dict[str, list[str]] = {}
    for c in claims:
        for e in c["evidence"]:
            cited_by.setdefault(e["id"], []).append(c["id"])
    cards = []
    for e in p["evidence"]:
        trs = []
        for t in e.get("transformations") or []:
            if not isinstance(t, dict):
                continue
            extra = [(show(k), show(v, 200)) for k, v in sorted(t.items())
                     if k not in ("kind", "method", "before_hash", "after_hash", "before_tokens", "after_tokens")]
            trs.append({"kind": show(t.get("kind")), "method": t.get("method"), "before_hash": show(t.get("before_hash")),
                        "after_hash": show(t.get("after_hash")), "before_tokens": show(t.get("before_tokens")),
                        "after_tokens": show(t.get("after_tokens")), "extra": extra})
        eid = show(e.get("evidence_id"))
        cards.append({
            "id": eid, "object_id": show(e["object_id"]), "title": show(e.get("title")),
            "object_type": show(e.get("object_type")), "source": show(e.get("source_id")),
            "source_version": show(e.get("source_version")), "trust": show(e.get("trust_level")),
            "classification": show(e.get("classification")), "owner": show(e.get("owner_team")),
            "locator": show(e.get("locator")), "valid_from": e.get("valid_from"), "valid_to": e.get("valid_to"),
            "observed": show(e.get("observed_at")), "tokens": e.get("tokens"), "content_tokens": e.get("content_tokens"),
            "selected_for": show(e.get("selected_for")), "supports": show(e.get("supports")),
            "subject_id": show(e.get("subject_id")), "round": e.get("round"),
            "content_hash": show(e.get("content_hash")), "text_hash": show(e.get("text_hash")),
            "facts": [(show(k), show(v)) for k, v in sorted((e.get("facts") or {}).items())],
            "transformations": trs, "text": show(e.get("text")),
            "channels": [(show(k), show(v)) for k, v in sorted((e.get("channels") or {}).items())],
            "queries": [(show(k), show(v)) for k, v in sorted((e.get("queries") or {}).items())],
            "rrf": show(e.get("rrf")), "rrf_rank": ranks.get((e.get("round"), e["object_id"])),
            "graph": [show(g) for g in e.get("graph_templates") or []],
            "cited_by": cited_by.get(eid, []),
        })
    return cards


def omissions(run: Run) -> dict[str, Any]:
    p = run.pack
    rep = explain_omissions(run.lp)
    counts = {g.gate: len(g.items) for g in rep.groups}
    order = [g for g in p["gate_order"] if isinstance(g, str)]
    ev_ids = {e.get("evidence_id") for e in p["evidence"]}
    groups = []
    for g in rep.groups:
        items = []
        for x in g.items:
            common = {"gate": x.gate, "reason": x.reason, "round": x.round, "sentence": x.sentence,
                      "would_admit": list(x.would_admit), "withheld": x.withheld, "ref": x.ref}
            if x.withheld:
                common["needs"] = [(show(k), show(v)) for k, v in sorted(x.needs.items())]
            else:
                dup = (x.detail or {}).get("duplicate_of")
                common.update({"object_id": show(x.object_id), "source": x.source_id, "title": x.title,
                               "facts": [(show(k), show(v, 300)) for k, v in sorted((x.detail or {}).items())],
                               "duplicate_of": dup if dup in ev_ids else None})
            items.append(common)
        groups.append({"gate": g.gate, "count": len(items), "rows": items})
    strip = [{"gate": g, "count": counts.get(g, 0)} for g in order]
    return {"groups": groups, "strip": strip, "total": rep.total, "admitted": len(p["evidence"])}


def retrieval(run: Run) -> list[dict[str, Any]]:
    p = run.pack
    hits: dict[tuple[Any, Any], Any] = {}
    for e in run.trace or []:
        if e.get("event") == "retrieval_executed":
            hits[(e.get("round"), e.get("query_id"))] = e.get("hits")
    ranks = rrf_ranks(p)
    rounds = []
    for r in p["rounds"]:
        if not isinstance(r, dict):
            continue
        rnd = r.get("round")
        qs = []
        for q in r.get("queries") or []:
            if not isinstance(q, dict):
                continue
            if q.get("channel") == "fulltext":
                what = f"text “{show(q.get('text'))}” → terms {show(q.get('terms'))}"
            elif q.get("channel") == "graph":
                what = f"path templates {show(q.get('templates'))}"
            else:
                what = f"object types {show(q.get('object_types'))}"
            qs.append({"id": show(q.get("query_id")), "channel": show(q.get("channel")),
                       "type": show(q.get("evidence_type")), "what": what, "limit": q.get("limit"),
                       "hits": hits.get((rnd, q.get("query_id")))})
        admitted = []
        for e in p["evidence"]:
            if e.get("round") != rnd:
                continue
            admitted.append({"id": show(e.get("evidence_id")), "object_id": show(e["object_id"]),
                             "type": show(e.get("selected_for")),
                             "channels": [(show(k), show(v)) for k, v in sorted((e.get("channels") or {}).items())],
                             "queries": [(show(k), show(v)) for k, v in sorted((e.get("queries") or {}).items())],
                             "rrf": show(e.get("rrf")), "rrf_rank": ranks.get((rnd, e["object_id"])),
                             "graph": [show(g) for g in e.get("graph_templates") or []]})
        admitted.sort(key=lambda x: (x["rrf_rank"] or 0, x["object_id"]))
        n_cand = sum(1 for (rr, _) in ranks if rr == rnd)
        rounds.append({"round": rnd, "seeds": show(r.get("seeds")), "business_keys": show(r.get("business_keys")),
                       "targets": show(r.get("target_types")), "limit": r.get("candidate_limit"),
                       "max_hops": r.get("max_hops"), "queries": qs, "admitted": admitted, "candidates": n_cand,
                       "has_hits": bool(hits)})
    return rounds


def _event_summary(e: dict[str, Any]) -> str:
    k = e.get("event")
    if k == "plan_created":
        return f"round {show(e.get('round'))}: {show(e.get('queries'))} queries for {show(e.get('target_types'))}"
    if k == "retrieval_executed":
        return (f"{show(e.get('query_id'))} {show(e.get('channel'))} for {show(e.get('evidence_type'))}: "
                f"{show(e.get('hits'))} hits")
    if k == "candidate_retrieved":
        ch = ", ".join(f"{c} #{r}" for c, r in sorted((e.get("channels") or {}).items()))
        return f"{show(e.get('ref'))} ({ch}; rrf {show(e.get('rrf'))})" + (" · withheld" if e.get("withheld") else "")
    if k == "candidate_rejected":
        return f"{show(e.get('ref'))} rejected by {show(e.get('gate'))} ({show(e.get('reason'))})"
    if k == "evidence_selected":
        return (f"{show(e.get('evidence_id'))} {show(e.get('object_id'))} for {show(e.get('selected_for'))}, "
                f"{show(e.get('tokens'))} tokens")
    if k == "sufficiency_assessed":
        return (f"round {show(e.get('round'))}: covered {show(e.get('covered'))}; missing {show(e.get('missing'))}; "
                f"{show(e.get('evidence_tokens'))} of {show(e.get('evidence_budget'))} evidence tokens")
    if k == "pack_built":
        return (f"{show(e.get('evidence'))} evidence, {show(e.get('omissions'))} omissions, "
                f"{show(e.get('total_tokens'))} tokens; stop: {show(e.get('stop_reason'))}")
    if k == "claim_generated":
        return f"{show(e.get('claim_id'))}: {show(e.get('status'))} citing {show(e.get('evidence'))}"
    if k == "answer_validated":
        return f"verdict {show(e.get('verdict'))}, action {show(e.get('action'))}"
    if k == "model_called":
        return (f"model {show(e.get('model'))} at {show(e.get('endpoint'))}: HTTP {show(e.get('status'))}, "
                f"{show(e.get('latency_ms'))} ms")
    if k == "model_answer_validated":
        return (f"{show(e.get('status'))}; violations {show(e.get('violations'))}; "
                f"warnings {show(e.get('warnings'))}")
    rest = {x: y for x, y in e.items() if x not in ("event", "seq")}
    return show(rest, 300)


def timeline(run: Run) -> list[dict[str, Any]]:
    """The trace as runs of consecutive events of one kind (a run of many is folded)."""
    groups: list[dict[str, Any]] = []
    for e in run.trace or []:
        k = show(e.get("event"))
        line = {"seq": e.get("seq"), "summary": _event_summary(e),
                "detail": show({x: y for x, y in e.items() if x not in ("event", "seq")})}
        if groups and groups[-1]["event"] == k:
            groups[-1]["events"].append(line)
        else:
            groups.append({"event": k, "phase": PHASES.get(k, "other"), "events": [line]})
    for g in groups:
        g["first"], g["last"] = g["events"][0]["seq"], g["events"][-1]["seq"]
    return groups


def _mark(v: Any, kind: str) -> dict[str, str]:
    if isinstance(v, dict):
        code, msg = v.get("code"), v.get("message")
        text = f"{show(code)}: {show(msg, 300)}" if code and msg else show(msg or code or v, 300)
    else:
        text = show(v, 300)
    return {"kind": kind, "text": text}


def model_answer(run: Run, ev_ids: set[str]) -> dict[str, Any] | None:
    """A model's answer (``model_answer.json``) with the validator's marks, and the recorded
    exchange (``model.json``: model, endpoint host, latency, usage) when present."""
    m = run.model
    if m is None:
        return None
    rec = run.model_record or {}
    ans = m.get("answer") if isinstance(m.get("answer"), dict) else {}
    val = m.get("validation") if isinstance(m.get("validation"), dict) else {}
    per_claim: dict[int, list[dict[str, str]]] = {}
    general: list[dict[str, str]] = []
    for kind, key in (("violation", "violations"), ("warning", "warnings")):
        for v in val.get(key) or []:
            i = v.get("claim") if isinstance(v, dict) else None
            if isinstance(i, int) and not isinstance(i, bool):
                per_claim.setdefault(i, []).append(_mark(v, kind))
            else:
                general.append(_mark(v, kind))
    checked = {c.get("claim"): c for c in val.get("claims") or [] if isinstance(c, dict)}
    claims = []
    for i, c in enumerate(ans.get("claims") or []):
        if not isinstance(c, dict):
            continue
        marks = per_claim.get(i, [])
        ok = checked[i].get("ok") if i in checked else not marks
        claims.append({"n": i, "text": show(c.get("text")), "status": show(c.get("status")),
                       "status_class": c.get("status") if c.get("status") in STATUSES else "other",
                       "evidence": cites(c.get("evidence"), ev_ids), "marks": marks, "ok": bool(ok)})
    parse = m.get("parse") if isinstance(m.get("parse"), dict) else {}
    det = m.get("deterministic") if isinstance(m.get("deterministic"), dict) else {}
    usage = rec.get("usage") if isinstance(rec.get("usage"), dict) else {}
    return {"file": run.model_file, "model": show(rec.get("model")), "endpoint": show(rec.get("endpoint")),
            "latency_ms": rec.get("latency_ms"), "usage": [(show(k), show(v)) for k, v in sorted(usage.items())],
            "status": show(m.get("status")), "used": m.get("used"), "parse_error": parse.get("error"),
            "verdict": show(ans.get("verdict")), "action": show(ans.get("recommended_action")),
            "det_verdict": show(det.get("verdict")), "det_action": show(det.get("recommended_action")),
            "summary": ans.get("summary"), "claims": claims, "general": general,
            "n_ok": sum(1 for c in claims if c["ok"]),
            "n_violations": len(val.get("violations") or []),
            "codes": show(sorted({str(v.get("code")) for v in val.get("violations") or [] if isinstance(v, dict)})),
            "counts": [(show(k), show(v)) for k, v in sorted((val.get("counts") or {}).items())]}


# ---------------------------------------------------------------------------------- compare
def comparison(run: Run, other: Run, key: bytes | None = None) -> dict[str, Any]:
    """``ctx diff`` of this run (A) against another (B), as rows for a side-by-side table: the
    same comparison (``key``: the store secret ``ctx diff`` uses, so withheld objects are matched
    across the runs, and the counts and reasons are the same)."""
    d = compare(run.pack, other.pack, key=key)
    ev_a = {e.get("evidence_id") for e in run.pack["evidence"]}

    def obj(ch) -> str:
        return ch.key + (f" ({ch.source_id})" if ch.source_id else "")

    def moved(ch) -> str:
        if ch.a.gate == ch.b.gate and ch.a.reason == ch.b.reason:
            return f"{ch.b.describe()} ({', '.join(ch.fields)} changed)"
        return ch.b.describe()

    sections: list[dict[str, Any]] = []

    def add(title: str, rows: list[tuple[str, str, str]]) -> None:
        if rows:
            sections.append({"title": title, "rows": [{"item": i, "a": a, "b": b} for i, a, b in rows]})

    add("request", [(f.field, show(f.a, 120), show(f.b, 120)) for f in d.request])
    ver = [(f.field, show(f.a, 120), show(f.b, 120)) for f in d.versions]
    if d.store_digest:
        ver.append(("store digest", short(d.store_digest.a), short(d.store_digest.b)))
    ver += [(f"source {s.source_id}", short(s.a), short(s.b)) for s in d.sources]
    add("playbook, builder and store", ver)
    ans = [(f.field, show(f.a, 160), show(f.b, 160)) for f in d.answer]
    for cl in d.claims:
        fa = "; ".join(f"{f.field} {show(f.a, 40)}" for f in cl.facts)
        fb = "; ".join(f"{f.field} {show(f.b, 40)}" for f in cl.facts)
        ca = (cl.a_status or "absent") + (f" · {fa}" if fa else "")
        cb = (cl.b_status or "absent") + (f" · {fb}" if fb else "")
        if "evidence" in cl.fields:
            ca += f" · cites {show(cl.a_evidence)}"
            cb += f" · cites {show(cl.b_evidence)}"
        ans.append((f"claim {cl.claim_id}", ca, cb))
    ans += [(f.field, show(f.a, 160), show(f.b, 160)) for f in d.outcome]
    add("verdict, action and claims", ans)
    add("evidence only in A", [(obj(c), c.a.describe(), c.b.describe()) for c in d.evidence_only_a])
    add("evidence only in B", [(obj(c), c.a.describe(), c.b.describe()) for c in d.evidence_only_b])
    add("evidence changed", [(obj(c), f"content {short(c.a.content_hash)}",
                              f"content {short(c.b.content_hash)} ({', '.join(c.fields)})")
                             for c in d.evidence_changed])
    add("omissions moved", [(obj(c), c.a.describe(), moved(c)) for c in d.omissions_moved])
    add("omissions only in A", [(obj(c), c.a.describe(), c.b.describe()) for c in d.omissions_only_a])
    add("omissions only in B", [(obj(c), c.a.describe(), c.b.describe()) for c in d.omissions_only_b])
    o = other.pack
    return {"same": d.same, "count": d.count(), "sections": sections, "ev_a": sorted(x for x in ev_a if x),
            "a": side(run), "b": side(other), "b_pack_id": o["pack_id"],
            "also": list(d.other_sections)}


def side(run: Run) -> dict[str, Any]:
    p = run.pack
    req = p["request"]
    return {"pack_id": p["pack_id"], "case": req["case_id"] + (f" ({req['variant']})" if req.get("variant") else ""),
            "subject": f"{req['subject'].get('id')} · {show(req['subject'].get('scopes'))}",
            "purpose": req["purpose"], "as_of": req["as_of"], "verdict": show(p["answer"].get("verdict")),
            "action": show(p["answer"].get("recommended_action")), "evidence": len(p["evidence"]),
            "omissions": len(p["omissions"])}


def build(run: Run, other: Run | None = None, key: bytes | None = None,
          audit: dict[str, Any] | None = None) -> dict[str, Any]:
    ev_ids = {e.get("evidence_id") for e in run.pack["evidence"]}
    out = outcome(run, ev_ids)
    return {
        "h": header(run), "outcome": out, "budget": budget(run), "cards": evidence_cards(run, out["claims"]),
        "omissions": omissions(run), "retrieval": retrieval(run), "timeline": timeline(run),
        "trace_events": len(run.trace or []), "model": model_answer(run, ev_ids),
        "compare": comparison(run, other, key) if other is not None else None,
        "notes": list(run.notes),
        "audit": audit,     # report/audit.py: an audit-call document for this run's subject
    }
