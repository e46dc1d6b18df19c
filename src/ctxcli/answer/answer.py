"""Answer: deterministic claims from the pack's evidence alone.

Derived facts bind values to the evidence ids that supplied them; claims state them with an
epistemic status; decision rules map facts to a recommended action. Conflicts and gaps are
stated, never resolved by guessing.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Any

from ..models.playbook import Playbook
from ..util.canon import canonical_bytes
from . import expr


@dataclass
class Bound:
    value: Any
    evidence: list[str]


@dataclass
class Facts:
    bound: dict[str, Bound] = field(default_factory=dict)
    conflicts: dict[str, list[Bound]] = field(default_factory=dict)
    unbound: dict[str, list[str]] = field(default_factory=dict)   # fact -> evidence types it needed


def _key(v: Any) -> bytes:
    return canonical_bytes(v)


def _items(evidence: list[dict[str, Any]], etype: str, where: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in evidence if etype in e["supports"] and all(e["facts"].get(k) == v for k, v in where.items())]


def _admitted_for(e: dict[str, Any], etype: str, query_types: dict[str, str]) -> bool:
    """Whether the item was admitted for ``etype``: selected for it, or found by one of its
    queries — not an item that also supports it but came in for another type."""
    return e.get("selected_for") == etype or any(query_types.get(q) == etype for q in e.get("queries") or {})


def _merge_ids(*lists: list[str]) -> list[str]:
    """The sorted union of lists of evidence ids."""
    return sorted({x for lst in lists for x in lst})


def derive(pb: Playbook, evidence: list[dict[str, Any]], env0: dict[str, Any],
           missing_types: frozenset[str] = frozenset(), aggregates: list[dict[str, Any]] = (),
           query_types: dict[str, str] | None = None) -> Facts:
    """Bind derived facts. A type reported missing binds nothing, even when some of its items
    were admitted (e.g. the rest did not fit): a fact from part of the evidence is not stated.
    ``aggregates`` (the pack's, computed over stored rows) are bound first, with the admitted
    items among their rows as evidence. ``collect`` gathers only the items admitted for its type
    (``query_types``: the plan's query id -> evidence type), so an item of an overlapping type
    that came in for another type does not join the list (and contradict a count of the type)."""
    f = Facts()
    covered = {t for e in evidence for t in e["supports"]} - missing_types
    needs: dict[str, list[str]] = {}          # fact -> the evidence types it rests on
    for rec in aggregates:
        needs[rec["name"]] = [rec["evidence_type"]]
        if rec["value"] is None:
            f.unbound[rec["name"]] = [rec["evidence_type"]]
        else:   # its evidence: the admitted items among the rows it was computed from
            rows = set(rec["rows"])
            f.bound[rec["name"]] = Bound(rec["value"], sorted({e["evidence_id"] for e in evidence
                                                               if e["object_id"] in rows}))
    for d in pb.facts:
        if d.op in ("value", "collect", "mapping"):
            needs[d.name] = [d.from_]
            if d.from_ in missing_types or (d.op != "value" and d.from_ not in covered):
                f.unbound[d.name] = [d.from_]
                continue
            items = _items(evidence, d.from_, d.where)
            if d.op == "collect" and query_types is not None:
                items = [e for e in items if _admitted_for(e, d.from_, query_types)]
            {"value": _bind_value, "collect": _bind_collect, "mapping": _bind_mapping}[d.op](f, d, items)
        elif d.op in ("map", "difference", "intersection"):
            _bind_combination(f, d, needs)
        else:
            _bind_expr(f, d, needs, env0)
    f.unbound = {k: v for k, v in f.unbound.items() if k not in f.conflicts}
    return f


_ISO_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d{1,6})?)?(?:Z|[+-]\d\d:\d\d)")


def _agree_key(v: Any) -> bytes:
    """What two values must share to agree: the value itself, or for an ISO time with an offset
    the instant it names (the same first error written in UTC and in +08:00 agrees)."""
    if isinstance(v, str) and _ISO_INSTANT.fullmatch(v):
        from ..util.timeutil import dt_to_us, parse_ts

        try:
            return b"instant:%d" % dt_to_us(parse_ts(v))
        except ValueError:
            pass
    return _key(v)


def _bind_value(f: Facts, d, items: list[dict[str, Any]]) -> None:
    """One value: bound when every item agrees, a conflict when they do not. Items naming the
    same instant in other zones agree; the value kept is the first of their texts in order."""
    groups: dict[bytes, Bound] = {}
    for e in items:
        if d.fact in e["facts"] and e["facts"][d.fact] is not None:
            v = e["facts"][d.fact]
            b = groups.setdefault(_agree_key(v), Bound(v, []))
            b.evidence.append(e["evidence_id"])
            if _key(v) < _key(b.value):
                b.value = v
    vals = sorted(groups.values(), key=lambda b: _key(b.value))
    for b in vals:
        b.evidence.sort()
    if len(vals) == 1:
        f.bound[d.name] = vals[0]
    elif len(vals) > 1:
        f.conflicts[d.name] = vals
    else:
        f.unbound[d.name] = [d.from_]


def _bind_collect(f: Facts, d, items: list[dict[str, Any]]) -> None:
    """Every distinct value of the fact across the items (lists flattened)."""
    vals_set: dict[bytes, Any] = {}
    ids = []
    for e in items:
        v = e["facts"].get(d.fact)
        if v is None:
            continue
        for x in (v if isinstance(v, list) else [v]):
            vals_set[_key(x)] = x
        ids.append(e["evidence_id"])
    f.bound[d.name] = Bound([vals_set[k] for k in sorted(vals_set)], sorted(ids))


def _bind_mapping(f: Facts, d, items: list[dict[str, Any]]) -> None:
    """A key -> value mapping from the items; a key with two values is a conflict."""
    mp: dict[str, Any] = {}
    ids = []
    clash = None
    for e in items:
        k, v = e["facts"].get(d.key), e["facts"].get(d.value)
        if k is None or v is None:
            continue
        if isinstance(k, list):
            continue
        if k in mp and mp[k] != v:
            clash = k
        mp[str(k)] = v
        ids.append(e["evidence_id"])
    if clash is not None:
        f.conflicts[d.name] = [Bound({clash: mp[clash]}, sorted(ids))]
    else:
        f.bound[d.name] = Bound(dict(sorted(mp.items())), sorted(ids))


def _inputs(f: Facts, needs: dict[str, list[str]], *names: str | None) -> tuple[list[str], list[str] | None]:
    """(evidence ids, None) when all bound, else (ids so far, the evidence types still needed)."""
    ids: list[str] = []
    miss: list[str] = []
    for n in names:
        if n is None:
            continue
        if n in f.bound:
            ids += f.bound[n].evidence
        else:   # only the inputs actually missing, not every type the input rests on
            miss += f.unbound.get(n, needs.get(n, []))
    return ids, (miss if any(n is not None and n not in f.bound for n in names) else None)


def _bind_combination(f: Facts, d, needs: dict[str, list[str]]) -> None:
    """map (a value through a mapping), difference or intersection of two bound facts."""
    a, b = (d.input, d.mapping) if d.op == "map" else (d.left, d.right)
    ids, miss = _inputs(f, needs, a, b)
    needs[d.name] = needs.get(a, []) + needs.get(b, [])
    if miss is not None or a in f.conflicts or b in f.conflicts:
        f.unbound[d.name] = sorted(set(miss if miss is not None else needs[d.name]))
        return
    av, bv = f.bound[a].value, f.bound[b].value
    av = av if isinstance(av, list) else [av]
    if d.op == "map":
        mp = bv if isinstance(bv, dict) else {}
        out = sorted({str(mp.get(str(x), x)) for x in av})
    else:
        bl = set(map(str, bv if isinstance(bv, list) else [bv]))
        out = sorted({str(x) for x in av if (str(x) in bl) == (d.op == "intersection")})
    f.bound[d.name] = Bound(out, _merge_ids(ids))


def _bind_expr(f: Facts, d, needs: dict[str, list[str]], env0: dict[str, Any]) -> None:
    """An expression over bound facts; unbound when a name it uses is unknown or it fails."""
    refs = sorted(expr.names(d.expr))
    needs[d.name] = sorted({t for r in refs for t in needs.get(r, [])})
    env = dict(env0)
    env.update({k: b.value for k, b in f.bound.items()})
    try:
        v = expr.evaluate(d.expr, env)
    except (expr.Unknown, expr.ExprError):
        absent = [r for r in refs if r not in f.bound]
        f.unbound[d.name] = sorted({t for r in absent for t in f.unbound.get(r, needs.get(r, []))}) \
            if absent else needs[d.name]
        return
    ids = [e for r in refs if r in f.bound for e in f.bound[r].evidence]
    f.bound[d.name] = Bound(v, _merge_ids(ids))


def fmt(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, list):
        return ", ".join(fmt(x) for x in v) if v else "none"
    if isinstance(v, dict):
        return ", ".join(f"{k} → {fmt(x)}" for k, x in v.items()) if v else "none"
    return str(v)


class _Fmt(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def _text(template: str, values: dict[str, Any]) -> str:
    return template.format_map(_Fmt({k: fmt(v) for k, v in values.items()}))


def answer(pb: Playbook, pack: dict[str, Any]) -> dict[str, Any]:
    evidence = pack["evidence"]
    env0 = {"as_of": pack["request"]["as_of"]}
    query_types = {q["query_id"]: q["evidence_type"] for r in pack.get("rounds") or [] for q in r.get("queries") or []
                   if "query_id" in q and "evidence_type" in q}
    f = derive(pb, evidence, env0, frozenset(m["type"] for m in pack["missing"]), pack.get("aggregates", []),
               query_types)
    values = dict(env0)
    values.update({k: b.value for k, b in f.bound.items()})
    judg = {et.type: et.judgment for et in pb.evidence_types}
    missing_types = frozenset(m["type"] for m in pack["missing"])
    claims = [_claim(c, f, values, judg) for c in pb.claims]
    agg_names = {a["name"] for a in pack.get("aggregates", [])}
    for c, claim in zip(pb.claims, claims):
        used = sorted(set(c.uses) & agg_names)
        if used and claim["status"] != "unknown" and not claim["evidence"]:
            # computed over stored rows, none of which is in the pack: nothing here to cite
            claim.update(status="unknown", facts={}, evidence=[], text=(
                "Unknown: none of the rows " + ", ".join(used) + " was computed from is in the pack "
                "(pack.aggregates lists them)."))
        if c.temporal is not None and claim["status"] != "unknown":
            _correlation(c, claim, f, values, evidence, missing_types)
    missing = pack["missing"]
    contradicts = pack.get("contradictions") or []
    verdict = _verdict(missing, f, contradicts)
    action = _action(pb, verdict, missing, f, values, contradicts)
    conflicts = [{"fact": k, "values": [{"value": b.value, "evidence": b.evidence} for b in bs]}
                 for k, bs in sorted(f.conflicts.items())]
    not_tried = pack["state"].get("not_tried")
    if not_tried is not None and verdict in ("complete", "insufficient_evidence"):
        verdict = "partial"          # a deadline stop: what was gathered, and what was not tried
    summary = _summary(verdict, claims, action, missing, conflicts, contradicts)
    extra: dict[str, Any] = {}
    if not_tried is not None:
        extra["not_tried"] = not_tried
        summary += (" Stopped at the deadline; not tried: round(s) " + ", ".join(map(str, not_tried["rounds"]))
                    + (" for " + ", ".join(not_tried["evidence_types"]) if not_tried["evidence_types"] else "") + ".")
    out = {
        "verdict": verdict, "summary": summary, "claims": claims, **extra,
        "conflicts": conflicts,
        "missing_evidence": [{"type": m["type"], "judgment": m["judgment"], "required": m["required"],
                              "reason": m["reason"], **_entity_withheld(m)} for m in missing],
        "recommended_action": action, "side_effect": "none",
        "derived_facts": {k: {"value": b.value, "evidence": b.evidence} for k, b in sorted(f.bound.items())},
    }
    if contradicts:     # admitted items a CONTRADICTS relation links (engine/contradict.py): stated, not resolved
        out["contradictions"] = [
            {"relation_id": c["relation_id"], "evidence": _merge_ids(c["from"]["evidence"], c["to"]["evidence"]),
             "text": f"{', '.join(c['from']['evidence'])} contradicts {', '.join(c['to']['evidence'])} "
                     f"(relation {c['relation_id']})."} for c in contradicts]
    return out


def _entity_withheld(m: dict[str, Any]) -> dict[str, Any]:
    """A gap's window entity (or walk seed) that only sources withheld from the subject declare
    (its key and what would admit one of them, never the source: engine/retrieve.entity_withheld),
    or a walk's next hop to one (the seed, hop and relation, never its key: hop_withheld); else nothing."""
    e = (m.get("withheld") or {}).get("entity")
    return {"withheld_entity": e} if e else {}


def _contradiction_ids(contradicts: list[dict[str, Any]]) -> list[str]:
    return _merge_ids(*[c["from"]["evidence"] + c["to"]["evidence"] for c in contradicts])


def _claim(c, f: Facts, values: dict[str, Any], judg: dict[str, str]) -> dict[str, Any]:
    """One claim of the playbook: stated with its status, unknown (and why), or conflicting."""
    conflicted = [u for u in c.uses if u in f.conflicts]
    missing = [u for u in c.uses if u not in f.bound and u not in f.conflicts]
    claim: dict[str, Any] = {"claim_id": c.id}
    if conflicted:
        ids = _merge_ids(*[b.evidence for u in conflicted for b in f.conflicts[u]])
        vals = "; ".join(f"{u}: " + " vs ".join(f"{fmt(b.value)} [{', '.join(b.evidence)}]" for b in f.conflicts[u])
                         for u in conflicted)
        claim.update(status="unknown", text=f"Conflicting evidence — {vals}.", facts={}, evidence=ids)
    elif missing:
        types = sorted({t for u in missing for t in f.unbound.get(u, [])})
        why = "; ".join(f"{t} ({judg.get(t, t).rstrip('. ')})" for t in types) or ", ".join(missing)
        claim.update(status="unknown", text=f"Unknown: the pack lacks evidence for {why}.", facts={}, evidence=[])
    else:
        ids = [e for u in c.uses for e in f.bound[u].evidence]
        text = c.text
        if c.when:
            when_refs = sorted(expr.names(c.when))
            try:
                holds = bool(expr.evaluate(c.when, values))
                ids += [e for r in when_refs if r in f.bound for e in f.bound[r].evidence]
            except (expr.Unknown, expr.ExprError):
                claim.update(status="unknown", text=f"Unknown: cannot evaluate {c.when!r} from the pack.",
                             facts={}, evidence=[])
                return claim
            claim["condition"] = {"when": c.when, "holds": holds}
            if not holds:
                text = c.else_text or f"Not the case: {c.when}."
        claim.update(status=c.status, text=_text(text, values),
                     facts={u: f.bound[u].value for u in c.uses}, evidence=_merge_ids(ids))
    if c.competing and claim["status"] != "unknown":
        comp = []
        for u in c.competing:
            if u in f.bound and f.bound[u].value not in (None, [], {}):
                comp.append({"fact": u, "value": f.bound[u].value, "evidence": f.bound[u].evidence})
        claim["competing"] = comp
        if comp:
            claim["text"] += " Competing explanation(s): " + "; ".join(
                f"{fmt(x['value'])} [{', '.join(x['evidence'])}]" for x in comp) + "."
    return claim


def _minutes(a, b) -> float | None:
    """Minutes from ISO time ``a`` to ``b`` (None when either is not a time)."""
    try:
        return expr.FUNCS["minutes_between"](a, b)
    except (ValueError, TypeError):
        return None


def _correlation(c, claim: dict[str, Any], f: Facts, values: dict[str, Any], evidence: list[dict[str, Any]],
                 missing_types: frozenset[str]) -> None:
    """A claim resting on "A happened shortly before B" (the playbook's ``temporal``): the
    admitted ``events`` items within ``within_minutes`` before the anchor, ranked by distance to
    it (then label, then evidence id) and named — several are candidates, not a conflict. The
    claim stays a correlation (its hypothesis/inference status, with the interval) unless every
    ``mechanism`` type is present in the pack: then ``cause_text``, as an inference that also
    cites the mechanism evidence."""
    t = c.temporal
    anchor = f.bound[t.anchor].value
    ranked = []
    for e in evidence:
        if t.events not in e["supports"] or t.events in missing_types:
            continue
        gap = _minutes(e["facts"].get(t.time_fact), anchor)
        if gap is not None and 0 <= gap <= t.within_minutes:
            ranked.append((gap, str(e["facts"].get(t.label_fact, e["object_id"])), e["evidence_id"],
                           e["facts"][t.time_fact]))
    ranked.sort()
    cands = [{"rank": i, "label": label, "at": at, "minutes_before": gap, "evidence": [eid]}
             for i, (gap, label, eid, at) in enumerate(ranked, 1)]
    mech_ids = sorted({e["evidence_id"] for e in evidence for m in t.mechanism
                       if m in e["supports"] and m not in missing_types})
    present = bool(t.mechanism) and all(any(m in e["supports"] for e in evidence) and m not in missing_types
                                        for m in t.mechanism)
    claim["correlation"] = {"anchor": t.anchor, "anchor_at": anchor, "within_minutes": t.within_minutes,
                            "candidates": cands, "mechanism": {"types": list(t.mechanism), "present": present}}
    # the interval and the ranked candidates are values the claim states: bound with it (sealed in the pack)
    claim["facts"] = {**claim["facts"], "within_minutes": t.within_minutes,
                      "candidates": [{k: x[k] for k in ("label", "at", "minutes_before")} for x in cands]}
    if not cands:
        claim.update(status="unknown", facts={}, evidence=[],
                     text=f"Unknown: no {t.events} item within {fmt(t.within_minutes)} minutes before "
                          f"{t.anchor} ({anchor}).")
        return
    named = "; ".join(f"{x['rank']}. {x['label']} at {x['at']}, {fmt(x['minutes_before'])} min before "
                      f"[{x['evidence'][0]}]" for x in cands)
    ids = _merge_ids(claim["evidence"], [x["evidence"][0] for x in cands])
    if present:
        claim.update(status="inference", text=_text(" ".join(t.cause_text.split()), values)
                     + f" Nearest preceding: {cands[0]['label']} ({fmt(cands[0]['minutes_before'])} min before); "
                     f"mechanism evidence [{', '.join(mech_ids)}]. Candidates in the window: {named}.",
                     evidence=_merge_ids(ids, mech_ids))
        return
    claim.update(evidence=ids, text=claim["text"] + f" Temporal correlation within {fmt(t.within_minutes)} minutes "
                 f"before {t.anchor} ({anchor}), ranked by distance: {named}. Not a confirmed cause: no "
                 + (f"mechanism evidence ({', '.join(t.mechanism)}) in the pack." if t.mechanism
                    else "mechanism evidence is declared for this claim."))


def _verdict(missing: list[dict[str, Any]], f: Facts, contradicts: list[dict[str, Any]] = ()) -> str:
    if any(m["required"] for m in missing):
        return "insufficient_evidence"
    if f.conflicts or contradicts:
        return "conflicting_evidence"
    return "partial" if missing else "complete"


def _action(pb: Playbook, verdict: str, missing: list[dict[str, Any]], f: Facts,
            values: dict[str, Any], contradicts: list[dict[str, Any]] = ()) -> dict[str, Any]:
    """The recommended action: fixed for insufficient or conflicting evidence, else the first
    decision rule that holds, else the default."""
    if verdict == "insufficient_evidence":
        return {"action": pb.decision.on_insufficient, "rule_id": None,
                "reason": "required evidence is missing: " + ", ".join(m["type"] for m in missing if m["required"]),
                "evidence": []}
    if verdict == "conflicting_evidence":
        on = sorted(f.conflicts) + [f"{c['relation_id']} ({c['type']})" for c in contradicts]
        return {"action": pb.decision.on_conflict, "rule_id": None,
                "reason": "evidence conflicts on " + ", ".join(on),
                "evidence": _merge_ids(*[b.evidence for bs in f.conflicts.values() for b in bs],
                                       _contradiction_ids(list(contradicts)))}
    undetermined = []
    for r in pb.decision.rules:
        try:
            if expr.evaluate(r.when, values):
                refs = sorted(expr.names(r.when))
                return {"action": r.action, "rule_id": r.id, "reason": r.explanation or f"rule {r.id}: {r.when}",
                        "evidence": _merge_ids([e for x in refs if x in f.bound for e in f.bound[x].evidence])}
        except (expr.Unknown, expr.ExprError):
            undetermined.append(r.id)
    return {"action": pb.decision.default_action, "rule_id": None,
            "reason": "no decision rule applies" + (
                f" (undetermined: {', '.join(undetermined)})" if undetermined else ""),
            "evidence": []}


def _summary(verdict: str, claims: list[dict[str, Any]], action: dict[str, Any], missing: list[dict[str, Any]],
             conflicts: list[dict[str, Any]], contradicts: list[dict[str, Any]] = ()) -> str:
    n_status: dict[str, int] = {}
    for c in claims:
        n_status[c["status"]] = n_status.get(c["status"], 0) + 1
    summary = (f"Verdict {verdict}: {len(claims)} claim(s) ("
               + ", ".join(f"{n} {s}" for s, n in sorted(n_status.items())) + f"); recommended action "
               f"{action['action']}" + (f" (rule {action['rule_id']})" if action["rule_id"] else "") + ".")
    if missing:
        summary += " Missing evidence: " + ", ".join(m["type"] for m in missing) + "."
    if conflicts:
        summary += " Conflicts: " + ", ".join(c["fact"] for c in conflicts) + "."
    if contradicts:
        summary += " Contradictions: " + "; ".join(
            f"{', '.join(c['from']['evidence'])} vs {', '.join(c['to']['evidence'])} ({c['relation_id']})"
            for c in contradicts) + "."
    return summary


def validate(ans: dict[str, Any], pack: dict[str, Any]) -> dict[str, Any]:
    ids = {e["evidence_id"] for e in pack["evidence"]} | {t["result_id"] for t in pack.get("tool_results") or []}
    cited = {e for c in ans["claims"] for e in c["evidence"]} | set(ans["recommended_action"]["evidence"])
    outside = sorted(cited - ids)
    return {"citations_in_pack": not outside, "outside_pack": outside,
            "every_claim_has_status": all(c["status"] in ("fact", "inference", "hypothesis", "unknown")
                                          for c in ans["claims"]),
            "non_unknown_claims_cite": all(c["evidence"] for c in ans["claims"] if c["status"] != "unknown")}
