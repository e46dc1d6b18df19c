"""The first objects a source's manifest produces, without building a store: an author changes
a mapping and sees the result in seconds (``ctx sources preview SOURCE``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ..errors import UsageError
from ..util.timeutil import us_to_dt


# The fields of a previewed object that a source's masks apply to (engine/redact.py
# MASKED_FIELDS, its facts, and its keys, which the full-text index sees masked).
_MASKED = ("object_id", "subject_id", "title", "source_version", "locator", "supersedes", "facts", "keys")


def preview(manifests_dir: Path, root: Path, source_id: str, *, limit: int = 5,
            sources_dir: Path | None = None) -> dict[str, Any]:
    """{source, parser, objects: [first ``limit`` objects], entities / relations / tombstones:
    the first ``limit`` of each}. Evidence types include the playbooks' rules.

    The objects are shown as a subject without the source's unmasking scopes sees them: the
    source's redaction masks (its manifest's ``redaction`` and its parser's own, e.g. git's
    author and committer e-mails) are applied to every string field shown, as hydration applies
    them (engine/redact.py); ``masked`` counts the matches per mask."""
    from datetime import timezone
    from itertools import islice

    from .evidence_rules import read_rules
    from ..util.masking import mask_value, patterns
    from .parse import parse_source, read_manifests
    from .parsers import redaction
    from .parsers.names import raise_unknown

    manifests = read_manifests(manifests_dir, root)
    found = [(m, d, b) for m, d, b in manifests if m.source_id == source_id]
    if not found:
        known = ", ".join(m.source_id for m, _, _ in manifests)
        raise UsageError(f"no source {source_id!r} in {manifests_dir / 'sources'} (known: {known})")
    m, disp, mbytes = found[0]
    ls = parse_source(m, disp, mbytes, root, sources_dir, read_rules(manifests_dir / "playbooks", root))
    raise_unknown(ls)       # a mapped name no record has: a misspelling, said before any record

    def when(us: int | None) -> str | None:
        dt = us_to_dt(us, timezone.utc)
        return dt.isoformat() if dt else None

    objs = [{"object_id": o["object_id"], "tenant_id": o["tenant_id"], "object_type": o["object_type"],
             "subject_id": o["subject_id"], "title": o["title"], "valid_from": when(o["valid_from_us"]),
             "valid_to": when(o["valid_to_us"]), "observed_at": when(o["observed_us"]),
             "source_version": o["source_version"], "supports": o["supports"], "facts": orjson.loads(o["facts"]),
             "keys": o["keys"], "locator": o["locator"], "supersedes": o["supersedes"]}
            for o in islice(ls.iter_objects(), limit)]
    red = redaction(m)
    counts: dict[str, int] = {}
    if red is not None:
        pats = patterns(red.model_dump(mode="json"))
        objs = [{k: mask_value(v, pats, counts) if k in _MASKED else v for k, v in o.items()} for o in objs]
    ents = [{k: e[k] for k in ("tenant_id", "entity_key", "entity_type", "name")}
            for e in islice(ls.iter_entities(), limit)]
    rels = [{"tenant_id": t, "relation_id": r.relation_id, "from": r.from_, "type": r.type, "to": r.to,
             "evidence_object_id": r.evidence_object_id} for r, t, _, _ in islice(ls.iter_relations(), limit)]
    tombs = [{k: t[k] for k in ("tenant_id", "object_id", "reason")} for t in islice(ls.iter_tombstones(), limit)]
    return {"source_id": m.source_id, "parser": m.parser, "manifest": disp, "enabled": m.enabled,
            "masked": dict(sorted(counts.items())),
            "unless_scopes": sorted(red.unless_scopes) if red is not None else [],
            "objects": objs, "entities": ents, "relations": rels, "tombstones": tombs}
