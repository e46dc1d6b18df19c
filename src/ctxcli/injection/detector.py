"""The detector: scans a text's views (its normal form, the deobfuscated view, and the
decoded text of encoded spans, recursively up to a bounded depth and size) with every
rule, drops matches governed by a negation or framed as a quoted example, and reports
what is left as :class:`Finding` objects."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Iterator

from . import engine
from .context import Quotes, mentioned, negated
from .decode import MAX_DECODED_TOTAL, MAX_DEPTH, decoded_views
from .normalize import normalize_for_scan
from .transforms import changed_lines, transformed_views
from .views import deobfuscated

_NO_REDECODE = {"rot13", "reversed"}


@dataclass(frozen=True)
class Finding:
    """One untrusted instruction found in a text.

    ``decoded_from`` is "" when found in the text itself, otherwise the chain of
    transformations that produced the view it was found in ("deobfuscated", "base64",
    "base64>rot13" ...); ``start``/``end`` index that view (``excerpt`` is the matched
    text of the view)."""

    pattern: str
    label: str
    lang: str
    decoded_from: str
    start: int
    end: int
    excerpt: str


def _view_findings(view: str, via: str) -> list[Finding]:
    out: list[tuple[int, int, Finding]] = []
    quotes: Quotes | None = None
    for start, end, v in engine.iter_matches(view):
        if v.neg and negated(view, start, end):
            continue
        if quotes is None:
            quotes = Quotes(view)
        if quotes.framed_quote(start, end) or mentioned(view, start):
            continue
        out.append((start, v.order, Finding(v.pid, v.label, v.lang, via, start, end,
                                            view[start:end][:80])))
    out.sort(key=lambda t: (t[0], t[1]))
    kept: list[Finding] = []
    for _, _, f in out:  # one finding per family and overlapping span
        if any(k.pattern == f.pattern and k.start < f.end and f.start < k.end for k in kept[-8:]):
            continue
        kept.append(f)
    return kept


def _views(text: str, norm0: str | None = None) -> Iterator[tuple[str, str]]:
    """(via, normalised view) in scan order, with bounded recursive decoding (``norm0``: the
    text's normal form when the caller has it already)."""
    budget = [MAX_DECODED_TOTAL]

    def walk(raw: str, via: str, depth: int, parent_kind: str) -> Iterator[tuple[str, str]]:
        norm = norm0 if depth == 0 and norm0 is not None else normalize_for_scan(raw)
        yield via, norm
        deob = deobfuscated(raw, norm)
        if deob is not None:
            yield (via + ">" if via else "") + "deobfuscated", changed_lines(deob, norm)
        if depth >= MAX_DEPTH:
            return
        decoded = decoded_views(raw)
        if parent_kind not in _NO_REDECODE:     # a rot13 or reversed view is not transformed again
            decoded = itertools.chain(decoded, transformed_views(norm))
        for kind, dec in decoded:
            if len(dec) > budget[0]:
                continue
            budget[0] -= len(dec)
            yield from walk(dec, (via + ">" if via else "") + kind, depth + 1, kind)

    yield from walk(text, "", 0, "")


def scan_text(text: str, *, first_only: bool = False, norm: str | None = None) -> list[Finding]:
    """Every finding in ``text`` (or only the first one, with ``first_only``). Findings of
    the text itself come first (by position), then those of each derived view; a view's
    finding that repeats a family already found in an earlier view is left out. ``norm``:
    ``normalize_for_scan(text)`` when the caller has it already."""
    if not text:
        return []
    found: list[Finding] = []
    seen: set[str] = set()
    for via, view in _views(text, norm):
        for f in _view_findings(view, via):
            if via and f.pattern in seen:
                continue
            found.append(f)
            if first_only:
                return found
        seen.update(f.pattern for f in found)
    return found
