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

import unicodedata

import regex

# A word: letters/digits (not Han), joined by - _ . : / into compound identifiers.
_WORD = r"(?:(?!\p{Han})[\p{L}\p{N}])+"
_TOKEN = regex.compile(rf"(\p{{Han}}+)|({_WORD}(?:[-_.:/]{_WORD})*)")
_PARTS = regex.compile(_WORD)
MAX_TERM = 64


def terms(text: str) -> list[str]:
    """Index terms of ``text`` in order (duplicates kept, so term frequency is preserved)."""
    out: list[str] = []
    text = unicodedata.normalize("NFKC", text).casefold()
    for m in _TOKEN.finditer(text):
        han, word = m.group(1), m.group(2)
        if han:
            if len(han) == 1:
                out.append(han)
            else:
                out.extend(han[i:i + 2] for i in range(len(han) - 1))
            continue
        parts = _PARTS.findall(word)
        if len(parts) > 1:
            joined = "_".join(parts)
            if len(joined) <= MAX_TERM:
                out.append(joined)
        out.extend(p for p in parts if len(p) <= MAX_TERM)
    return out


def shadow_text(*fields: str) -> str:
    return " ".join(t for f in fields for t in terms(f))


def query_terms(text: str) -> list[str]:
    """Distinct query terms in first-seen order."""
    seen: dict[str, None] = {}
    for t in terms(text):
        seen.setdefault(t, None)
    return list(seen)
