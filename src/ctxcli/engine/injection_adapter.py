"""Bridge to the untrusted-instruction detector (``ctxcli.injection``), imported on first
use so commands that never gate (``--help``, ``sources``) do not pay for compiling it.

Short fields (identifiers, locators, versions: every header string the evidence block
renders) are scanned together as one text, one per line, and only when that text has a
finding one by one, so the field is named; a finding that needs several fields together
is reported for the field ``header fields``. The learned layer's score depends on the
text it is given, so when the joined text has no finding each short field of at least
``learned.MIN_CHARS`` characters is also scored on its own (as ``ctx eval`` reads it)."""

from __future__ import annotations

from functools import lru_cache

_SHORT = 300  # characters: a field this short is scanned with the other short fields


def scan(fields: list[tuple[str, str]]) -> tuple[str, str, str] | None:
    """(field, pattern id, label) of the first finding, or None. Results are memoised per
    process: an object met again in a later retrieval round is not scanned twice."""
    return _scan(tuple(fields))


@lru_cache(maxsize=2048)
def _scan(fields: tuple[tuple[str, str], ...]) -> tuple[str, str, str] | None:
    from ..injection import learned, learned_finding, scan_fields

    long_fields = [(n, t) for n, t in fields if t and (len(t) > _SHORT or n in ("title", "content"))]
    short = [(n, t) for n, t in fields if t and not (len(t) > _SHORT or n in ("title", "content"))]
    hit = scan_fields(long_fields)
    if hit is None and short:
        joined = scan_fields([("header fields", "\n".join(t for _, t in short))])
        if joined is not None:
            hit = scan_fields(short) or joined
        else:   # the learned score depends on the text's extent: each short field on its own too
            for n, t in short:
                f = learned_finding(t) if len(t) >= learned.MIN_CHARS else None
                if f is not None:
                    return n, f.pattern, f.label
    if hit is None:
        return None
    fld, m = hit
    return fld, m.pattern, m.label
