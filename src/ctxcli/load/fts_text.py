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

# ASCII fast path (stdlib re): parts are maximal letter/digit runs; compounds are runs joined
# by - _ . : / . Non-ASCII text uses the `regex` module with Unicode classes and Han bigrams.
_A_PART = re.compile(r"[a-z0-9]+")
_A_COMPOUND = re.compile(r"[a-z0-9]+(?:[-_.:/][a-z0-9]+)+")
_A_JOIN = re.compile(r"[-_.:/]")
_U_WORD = r"(?:(?!\p{Han})[\p{L}\p{N}])+"
_U_PART = regex.compile(_U_WORD)
_U_COMPOUND = regex.compile(rf"{_U_WORD}(?:[-_.:/]{_U_WORD})+")
_U_HAN = regex.compile(r"\p{Han}+")
MAX_TERM = 64


def terms(text: str) -> list[str]:
    """Index terms of ``text`` (duplicates kept, so term frequency is preserved): each
    compound identifier joined by ``_``, then every part, then Han bigrams."""
    if text.isascii():
        text = text.lower()
        comp, part, han = _A_COMPOUND.findall(text), _A_PART.findall(text), []
    else:
        # No term or compound spans white space, so the text is cut at white space into runs of
        # ASCII and non-ASCII chunks: ASCII runs take the fast stdlib patterns (they find exactly
        # what the Unicode patterns find there), only the rest goes through `regex`.
        text = unicodedata.normalize("NFKC", text).casefold()
        comp, part, han = [], [], []
        for is_ascii, run in _runs(text.split()):
            if is_ascii:
                comp += _A_COMPOUND.findall(run)
                part += _A_PART.findall(run)
            else:
                comp += _U_COMPOUND.findall(run)
                part += _U_PART.findall(run)
                han += _U_HAN.findall(run)
    out = [j for j in (_A_JOIN.sub("_", c) for c in comp) if len(j) <= MAX_TERM]
    out.extend(p for p in part if len(p) <= MAX_TERM)
    for run in han:
        if len(run) == 1:
            out.append(run)
        else:
            out.extend(run[i:i + 2] for i in range(len(run) - 1))
    return out


def _runs(chunks: list[str]) -> list[tuple[bool, str]]:
    """Consecutive chunks grouped by whether they are ASCII, each group joined by a space."""
    out: list[tuple[bool, str]] = []
    cur: list[str] = []
    kind = None
    for c in chunks:
        a = c.isascii()
        if a is not kind and cur:
            out.append((kind, " ".join(cur)))
            cur = []
        kind = a
        cur.append(c)
    if cur:
        out.append((kind, " ".join(cur)))
    return out


def query_terms(text: str) -> list[str]:
    """Distinct query terms in first-seen order."""
    seen: dict[str, None] = {}
    for t in terms(text):
        seen.setdefault(t, None)
    return list(seen)
