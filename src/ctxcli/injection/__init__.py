"""Untrusted-instruction (prompt-injection) detector for non-authoritative text.

Retrieved documents (e-mails, wiki pages, tickets, ...) are *data*. When their text tries
to instruct the model -- override its rules, fake a system or turn marker, order it to
approve or pay, reveal its prompt, call a tool, send data to an address, append a token,
or pass off an order as the assistant's own reasoning -- the context builder rejects
them. This package is that gate.

Layout
------
* :mod:`.normalize` -- the normal form every rule runs on (NFKC, case-folded, invisible
  characters removed, whitespace collapsed).
* :mod:`.views` -- the deobfuscated view (markup, spaced letters, confusables, leetspeak).
* :mod:`.decode` -- encoded spans (base64, base32, hex, percent, ``\\u`` escapes, HTML
  entities) and whole-text transforms (rot13, reversed), decoded with bounded depth/size.
* :mod:`.engine` -- the rule DSL and the linear matcher; :mod:`.rules_core` (English and
  Chinese core rules), :mod:`.markers` (language-independent markers) and :mod:`.lang`
  (one word-list module per language + shared templates) register the rules.
* :mod:`.context` -- negation and quotation filters; :mod:`.detector` -- views → findings.
* :mod:`.families` -- the stable pattern ids (one per family).
* :mod:`.learned` -- the learned layer: a logistic regression over hashed character n-grams
  and words, shipped as weights (``data/``), scored in numpy.

* :mod:`.intent` -- the intent layer (issue 53): per-segment intent features in 17 languages
  (:mod:`.intent_words`) and learned weights; a text scores as its strongest segment.

The decision (one rule): a text is flagged when a pattern family fires (after the negation
and quotation filters) **or** the intent score of one of its segments is at least
``intent.THRESHOLD`` **or** the n-gram score of one of its windows is at least
``learned.THRESHOLD``. A pattern finding is reported first, then the intent layer's, then the
n-gram layer's; the learned layers are named ``learned:<model>@<version>`` with their score.

Offsets of :func:`detect_injection` index ``normalize_for_scan(text)`` when the match is
in the text itself (``decoded_from == ""``), otherwise the decoded/deobfuscated view.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import engine, rules_core  # noqa: F401,I001  (rules register on import, in this order)
from . import markers  # noqa: F401,E402,I001
from . import lang  # noqa: F401,E402,I001
from .detector import Finding, scan_text
from .families import FAMILIES, PATTERN_IDS
from .lang import LANGUAGES
from .normalize import normalize_for_scan

engine.finalize()

__all__ = [
    "FAMILIES", "Finding", "InjectionMatch", "LANGUAGES", "PATTERN_IDS", "detect_injection", "intent_finding",
    "normalize_for_scan", "scan_fields", "scan_text",
]


@dataclass(frozen=True)
class InjectionMatch:
    """One detected untrusted instruction (the first one of a text).

    ``pattern`` is the family id; ``label`` a short description with an ellipsis (with
    ``[via]`` appended when found in a decoded view); ``start``/``end`` index the view
    (``normalize_for_scan(text)`` when ``decoded_from`` is empty)."""

    pattern: str
    label: str
    start: int
    end: int
    lang: str = ""
    decoded_from: str = ""


def learned_finding(text: str, *, norm: str | None = None) -> Finding | None:
    """The learned layer's finding for ``text`` (its best window), or None below the threshold
    (``norm``: the text's normal form when the caller has it already)."""
    from . import learned

    norm = normalize_for_scan(text) if norm is None else norm
    s = learned.score(norm)
    if s.score < learned.THRESHOLD:
        return None
    return Finding(learned.NAME, f"learned score {s.score:.3f}", "", "", s.start, s.end, norm[s.start:s.end][:80])


def intent_finding(text: str, *, norm: str | None = None) -> Finding | None:
    """The intent layer's finding for ``text`` (its strongest segment), or None below the
    threshold. The label names the score and the segment's offset in the normal form, never
    its text (``norm``: the normal form when the caller has it already)."""
    from . import intent

    norm = normalize_for_scan(text) if norm is None else norm
    s = intent.score(norm)
    if s.score < intent.THRESHOLD:
        return None
    return Finding(intent.NAME, f"intent score {s.score:.3f} at offset {s.start}", "", "", s.start, s.end,
                   norm[s.start:s.end][:80])


def detect_injection(text: str, *, use_learned: bool = True) -> InjectionMatch | None:
    """First finding (lowest start in the text itself; then derived views; then, unless
    ``use_learned`` is false, the intent layer's strongest segment, then the n-gram layer),
    or None."""
    norm = normalize_for_scan(text) if text else ""     # once: every layer reads the same normal form
    with engine.kept_projections():     # and splits it into tokens once
        hits = scan_text(text, first_only=True, norm=norm)
        if not hits and use_learned and text:
            f1 = intent_finding(text, norm=norm) or learned_finding(text, norm=norm)
            hits = [f1] if f1 is not None else []
    if not hits:
        return None
    f = hits[0]
    label = f.label if not f.decoded_from else f"{f.label} [{f.decoded_from}]"
    return InjectionMatch(f.pattern, label, f.start, f.end, f.lang, f.decoded_from)


def scan_fields(fields: list[tuple[str, str]]) -> tuple[str, InjectionMatch] | None:
    """fields = [(field_name, text), ...]; the first field (in the given order) with a
    finding, as ``(field_name, match)``; None when no field has one."""
    for name, text in fields:
        if not text:
            continue
        m = detect_injection(text)
        if m is not None:
            return name, m
    return None
