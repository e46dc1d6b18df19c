"""Aggregates: computed facts over a typed set of stored objects (issue 30, item 5).

An aggregate's set is the time-window channel's (store ``window``: the tenant's objects the
subject may read — the access rules are inside the statement — that support the evidence type
and are linked to the entity within the window), read past any candidate limit up to
:data:`ROW_CAP` rows; each row is then gated like a candidate (the metadata gates, then the
content gates), and the value is computed over the rows that pass. What the statement withheld
comes back as counts per gate, never as ids; what the gates excluded, as counts per gate. The
pack records each computation (``aggregates``): the query, the value, the rows (as the
subject may see their ids) and the exclusions."""

from __future__ import annotations

from typing import Any

from .gates import CONTENT_GATES, META_GATES, Access, run_gates
from .plan import Query, window_anchor_key, window_query
from .retrieve import QueryRun, entity_withheld, walk_access, readable_for, withheld_by_gate

# More rows than this and the aggregate is not computed (reason too_many_rows): a value over a
# truncated set would not be exact.
ROW_CAP = 1000


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def compute(bc, st, anchors: dict[str, Any]) -> list[dict[str, Any]]:
    """Every aggregate of the playbook, in playbook order, as recorded in the pack."""
    if not bc.pb.aggregates:
        return []
    con, req = bc.con, bc.req
    access = Access(scopes=bc.gctx.scopes, purpose=bc.gctx.purpose, clearance=bc.gctx.clearance)
    readable = readable_for(con, req.tenant_id, access) if bc.apply_gates else None
    walk = walk_access(con, access)
    levels = {sid: (level if enabled else None) for sid, enabled, _, _, level in con.tenant_sources(req.tenant_id)}
    out = []
    for a in bc.pb.aggregates:
        rec: dict[str, Any] = {"name": a.name, "op": a.op, "evidence_type": a.evidence_type, "fact": a.fact,
                               "query": None, "value": None, "rows": [], "excluded": {}, "withheld": {}}
        out.append(rec)
        at = anchors.get(window_anchor_key(a.over), "anchor_not_admitted") if st.stop_reason != "deadline" \
            else "deadline"
        if isinstance(at, str):
            rec["unknown"] = at
            continue
        w = window_query(a.over, at, anchors["as_of"][1])
        rec["query"] = {"object_types": list(a.over.object_types), **w}
        found = con.window([(a.name, a.evidence_type, list(a.over.object_types), w, ROW_CAP)], tenant=req.tenant_id,
                           readable=readable, as_of_us=bc.gctx.as_of_us, access_ok=walk["access_ok"],
                           entity_sources=walk["readable"], known_us=bc.gctx.known_us)
        held = QueryRun(Query(a.name, "window", a.evidence_type, ROW_CAP, window=w), [])
        withheld_by_gate(held, [tuple(x[1:]) for x in found.withheld], access, levels)
        rec["withheld"] = dict(held.withheld)
        if w.get("entity"):
            entity_withheld(con, [(held, w["entity"])], req.tenant_id, walk["readable"], access, levels)
        if held.entity_withheld is not None:    # the set's entity: only sources withheld from the subject declare it
            rec["withheld_entity"] = held.entity_withheld
        if len(found.hits) >= ROW_CAP:
            rec["unknown"] = "too_many_rows"
            continue
        times = {doc: t for _, doc, t in found.hits}
        objs = bc.hydrator.metadata(sorted(times))
        keep = []
        if bc.apply_gates:
            meta = {d: run_gates(o, bc.gctx, META_GATES)[0] for d, o in objs.items()}
            bc.hydrator.fill_content(objs, sorted(d for d, r in meta.items() if r is None))
            for d in sorted(objs):
                rej = meta[d] or run_gates(objs[d], bc.gctx, CONTENT_GATES)[0]
                if rej is None:
                    keep.append(objs[d])
                else:
                    rec["excluded"][rej.gate] = rec["excluded"].get(rej.gate, 0) + 1
        else:
            keep = [objs[d] for d in sorted(objs)]
        rec["excluded"] = dict(sorted(rec["excluded"].items()))
        _value(rec, a, keep, times, w["anchor_us"], bc.disclosure)
    for rec in out:
        bc.trace.emit("aggregate_computed", name=rec["name"], op=rec["op"], value=rec["value"], rows=len(rec["rows"]),
                      excluded=rec["excluded"], withheld=rec["withheld"],
                      **({"unknown": rec["unknown"]} if "unknown" in rec else {}))
    return out


def _value(rec: dict[str, Any], a, keep: list, times: dict[int, int], anchor_us: int, disclosure) -> None:
    """The aggregate's value over the gated rows ``keep`` and the rows it rests on."""
    name = {o.doc_id: disclosure.ref(o, withheld=False) for o in keep}
    if a.op == "count":
        rec["value"], used = len(keep), keep
    elif a.op in ("sum", "min", "max"):
        used = [o for o in keep if _number(o.facts.get(a.fact))]
        if len(used) < len(keep):
            rec["excluded"]["fact_not_a_number"] = len(keep) - len(used)
        vals = [o.facts[a.fact] for o in used]
        rec["value"] = sum(vals) if a.op == "sum" else (min(vals) if a.op == "min" else max(vals)) if vals else None
        if a.op != "sum" and vals:
            used = [o for o in used if o.facts[a.fact] == rec["value"]]
    else:
        before = a.op == "latest_before"
        side = [o for o in keep if (times[o.doc_id] <= anchor_us if before else times[o.doc_id] >= anchor_us)]
        side.sort(key=lambda o: (abs(times[o.doc_id] - anchor_us), name[o.doc_id]))
        used = side[:1]
        if used:
            o = used[0]
            rec["value"] = o.facts.get(a.fact) if a.fact else name[o.doc_id]
    rec["rows"] = sorted(name[o.doc_id] for o in used)
    if rec["value"] is None:
        rec["unknown"] = "no_rows"
