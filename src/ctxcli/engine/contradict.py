"""CONTRADICTS relations between admitted items, surfaced in the pack (issue 30, item 6).

A relation of type ``CONTRADICTS`` (declared in a source's relations, like any other) says
that what one entity stands for contradicts what another stands for. An admitted item stands
for an entity when its subject is that entity or its object id is that entity's key (a
document can be its own entity: ``{"entity_key": "PM-DRAFT-A", …}``). When both ends of such
a relation are stood for by admitted items, the pack lists the pair under ``contradictions``,
and the answer states it (answer/answer.py: the verdict is ``conflicting_evidence``). The
relation is authorised like an edge of the graph walk: its source, its target entity's
source and its attesting object must be readable by the subject, and it and that object must
be valid at as_of (store ``relations_among``); a contradiction attested by an object the
subject may not read is never surfaced.
"""

from __future__ import annotations

from typing import Any

CONTRADICTS = "CONTRADICTS"


def contradictions(con, evidence: list[dict[str, Any]], *, tenant: str, as_of_us: int,
                   access_ok: list[int], known_us: int | None = None) -> list[dict[str, Any]]:
    """One entry per CONTRADICTS relation whose two ends admitted items stand for, by relation id."""
    stands: dict[str, list[str]] = {}
    for e in evidence:
        for k in {e.get("subject_id"), e.get("object_id")} - {None}:
            stands.setdefault(k, []).append(e["evidence_id"])
    if len(stands) < 2:
        return []
    out = []
    for rid, _, a, b, ev_obj, conf in con.relations_among(sorted(stands), rel_types=[CONTRADICTS], tenant=tenant,
                                                          as_of_us=as_of_us, access_ok=access_ok,
                                                          known_us=known_us):
        left, right = sorted(set(stands[a])), sorted(set(stands[b]))
        if left == right:
            continue            # one item on both ends says nothing about two items
        out.append({"relation_id": rid, "type": CONTRADICTS, "from": {"entity": a, "evidence": left},
                    "to": {"entity": b, "evidence": right}, "attested_by": ev_obj, "confidence": conf})
    return out
