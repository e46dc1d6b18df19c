"""The one tokenizer used for full-text search, at load time and at query time.

The DuckDB FTS extension's default tokenizer drops digits and treats a run of Chinese
characters as a single word. ctx therefore indexes a *shadow* text of lowercase terms
separated by spaces, built here, with ``stemmer='none'`` and an ignore pattern that
keeps ``_``:

* identifiers keep their joined form and their parts: ``AB-123`` → ``ab_123 ab 123``,
  ``ERROR_CODE`` → ``error_code error code``, ``2026.1`` → ``2026_1 2026 1``;
* Han runs become overlapping bigrams (a lone character stays itself):
  ``数据中心`` → ``数据 据中 中心``.
"""

from __future__ import annotations

import re
import unicodedata

import regex

# ASCII fast path (stdlib re): parts are maximal letter/digit runs of at most MAX_TERM
# characters (a longer run is no term); compounds are runs joined by - _ . : / . Both start only
# where a run starts and never backtrack into it (the greedy patterns they replace tried every
# position of every word: the same matches, found in linear time). Non-ASCII text uses the
# `regex` module with Unicode classes and Han bigrams.
MAX_TERM = 64
_A_PART = re.compile(r"(?<![a-z0-9])[a-z0-9]{1,%d}(?![a-z0-9])" % MAX_TERM)
_A_COMPOUND = re.compile(r"(?<![a-z0-9])[a-z0-9]++(?:[-_.:/][a-z0-9]++)+")
_A_JOIN = re.compile(r"[-_.:/]")
_U_WORD = r"(?:(?!\p{Han})[\p{L}\p{N}])+"
_U_PART = regex.compile(_U_WORD)
_U_COMPOUND = regex.compile(rf"{_U_WORD}(?:[-_.:/]{_U_WORD})+")
_U_HAN = regex.compile(r"\p{Han}+")
# Mixed text: each non-ASCII chunk is replaced by this marker (never in an ASCII chunk), the
# ASCII patterns run once over the whole text, and each marker in their result is replaced by
# what the Unicode patterns found in its chunk.
_MARK = "\uffff"
_M_PART = re.compile(_A_PART.pattern + "|" + _MARK)
_M_COMPOUND = re.compile(_A_COMPOUND.pattern + "|" + _MARK)


def terms(text: str) -> list[str]:
    """Index terms of ``text`` (duplicates kept, so term frequency is preserved): each
    compound identifier joined by ``_``, then every part, then Han bigrams."""
    if text.isascii():
        text = text.lower()
        comp = _A_COMPOUND.findall(text)
        part = _A_PART.findall(text)
        return _joined(comp) + part if comp else part
    # No term or compound spans white space, so the text is cut at white space into chunks:
    # ASCII chunks take the fast stdlib patterns (they find exactly what the Unicode patterns
    # find there), only the others go through `regex`.
    chunks = unicodedata.normalize("NFKC", text).casefold().split()
    u_comp: list[list[str]] = []
    u_part: list[list[str]] = []
    han: list[str] = []
    for i, c in enumerate(chunks):
        if not c.isascii():
            u_comp.append(_U_COMPOUND.findall(c))
            u_part.append([p for p in _U_PART.findall(c) if len(p) <= MAX_TERM])
            han += _U_HAN.findall(c)
            chunks[i] = _MARK
    text = " ".join(chunks)
    out = _joined(_splice(_M_COMPOUND.findall(text), u_comp))
    out += _splice(_M_PART.findall(text), u_part)
    for run in han:
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return out


def _joined(comp: list[str]) -> list[str]:
    """Compounds of at most MAX_TERM characters, their separators as ``_``."""
    return [_A_JOIN.sub("_", c) for c in comp if len(c) <= MAX_TERM]


def _splice(found: list[str], chunks: list[list[str]]) -> list[str]:
    """``found`` with its i-th marker replaced by the items of ``chunks[i]``."""
    if not chunks:
        return found
    out: list[str] = []
    start = 0
    for items in chunks:
        i = found.index(_MARK, start)
        out += found[start:i]
        out += items
        start = i + 1
    out += found[start:]
    return out


def query_terms(text: str) -> list[str]:
    """Distinct query terms in first-seen order."""
    seen: dict[str, None] = {}
    for t in terms(text):
        seen.setdefault(t, None)
    return list(seen)
