"""answer.md: the answer for people."""

from __future__ import annotations

from typing import Any

from ..engine.render import clean, entity_withheld_text


def answer_markdown(ans: dict[str, Any], pack: dict[str, Any]) -> str:
    req = pack["request"]
    lines = [f"# {req['case_id']}: {ans['verdict']}", "",
             f"- Question: {clean(req['question'])}",
             f"- As of: {req['as_of']}" + (f" (known at {req['known_at']})" if req["known_at"] else ""),
             f"- Subject: {req['subject']['id']} · purpose {req['purpose']}",
             f"- Pack: {pack['pack_id']} · store {pack['store']['digest'][:19]}…",
             f"- Recommended action: **{ans['recommended_action']['action']}** — "
             f"{clean(ans['recommended_action']['reason'])}",
             f"- Side effect: {ans['side_effect']}", "", "## Summary", "", clean(ans["summary"]), "", "## Claims", ""]
    for c in ans["claims"]:
        cites = ", ".join(c["evidence"]) or "no evidence"
        lines.append(f"- **{c['claim_id']}** ({c['status']}): {clean(c['text'])} [{cites}]")
    if ans["conflicts"]:
        lines += ["", "## Conflicts", ""]
        for c in ans["conflicts"]:
            vals = "; ".join(f"{v['value']} [{', '.join(v['evidence'])}]" for v in c["values"])
            lines.append(f"- {c['fact']}: {clean(vals)}")
    if ans.get("contradictions"):
        lines += ["", "## Contradictions", ""]
        lines += [f"- {clean(c['text'])}" for c in ans["contradictions"]]
    lines += ["", "## Missing evidence", ""]
    if ans["missing_evidence"]:
        for m in ans["missing_evidence"]:
            lines.append(f"- {m['type']} ({'required' if m['required'] else 'optional'}): {m['judgment']} — "
                         f"{m['reason'].replace('_', ' ')}"
                         + (f" ({entity_withheld_text(m['withheld_entity'])})" if m.get("withheld_entity") else ""))
    else:
        lines.append("- none")
    lines += ["", "## Evidence", ""]
    for e in pack["evidence"]:
        lines.append(f"- `{e['evidence_id']}` {e['object_id']} ({e['source_id']} {clean(e['source_version'])}) — "
                     f"{clean(e['title'])} · {clean(e['locator'])}")
    return "\n".join(lines) + "\n"
