"""Redaction: masks a source declares for subjects without a raw-read scope.

The masks apply to every string of an object that can reach an output: its text, title,
locator, source version, object and subject ids (a Markdown section's heading is part of its
id, title and locator) and facts (strings, numbers by their decimal string, and the names of
facts; util/masking.py), for admitted evidence and for omission records alike. The full-text
index and the vectors are built from the same masked text (load/derive.py), so no rank or
score depends on what the masks hide. The digest of the unmasked text is shown only keyed with the
store secret (``before_hash``), never as a plain hash a subject could test guesses against.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from ..util.canon import content_hash, sealed_hash
from ..util.masking import Patterns, mask, mask_value, patterns  # noqa: F401  (one masking mechanism)

# The string fields of an object (engine.gates.Obj) that outputs show.
MASKED_FIELDS = ("content", "title", "locator", "source_version", "object_id", "subject_id")


def applies(o, scopes: frozenset[str]) -> bool:
    """Whether ``o``'s source masks it for a subject holding ``scopes``."""
    return bool(o.redaction) and not (set(o.redaction.get("unless_scopes", [])) & scopes)


def masked_copy(o, pats: Patterns, counts: dict[str, int] | None = None):
    """A copy of ``o`` with every field of :data:`MASKED_FIELDS` and every fact masked."""
    changes = {f: mask(getattr(o, f), pats, counts) for f in MASKED_FIELDS if isinstance(getattr(o, f), str)}
    changes["facts"] = mask_value(dict(o.facts), pats, counts)
    return dataclasses.replace(o, **changes)


def redact(o, policy: dict[str, Any], count: Callable[[str], int], *, key: bytes):
    """(``o`` masked under ``policy``, the transformation or None when nothing matched);
    the transformation's ``before_hash`` is keyed with ``key``."""
    counts: dict[str, int] = {}
    m = masked_copy(o, patterns(policy), counts)
    if not counts:
        return m, None
    tr = {
        "kind": "redaction", "policy_object": policy.get("policy_object"),
        "unless_scopes": list(policy.get("unless_scopes", [])),
        "masked": dict(sorted(counts.items())),
        "before_hash": sealed_hash(o.content_hash, key=key), "after_hash": content_hash(m.content),
        "before_tokens": o.tokens, "after_tokens": count(m.content),
    }
    return m, tr
