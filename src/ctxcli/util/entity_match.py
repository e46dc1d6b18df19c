"""Names of entities found in text: exact phrase lookup, then fuzzy matching with rapidfuzz.

One matcher for the load (entity linking: load/link.py) and for the plan (a question or seed
that names an entity by an alias: engine/resolve.py). Text and names are compared as
*phrases*: lowercased runs of letters and digits joined by one space, so ``Checkout-API``,
``checkout api`` and ``checkout_api`` are the same phrase.

A phrase of the text that equals a name of exactly one entity is a match of confidence 1.0
(``exact``). Where no exact match covers it, a window of the text with as many words as a
name is scored against the names of that length that share a blocking key with it (a word,
or a word's first or last three letters) with ``rapidfuzz.fuzz.ratio`` (normalised
Indel similarity, 0..100; confidence = score / 100, ``fuzzy``); names shorter than
``FUZZY_MIN_CHARS`` are matched exactly only. A mention is *resolved* when one entity holds
the best score, that score reaches ``accept`` and no other entity comes within ``margin`` of
it; otherwise, when the best score reaches ``candidate``, it is *unresolved* and keeps every
entity at or above ``candidate`` as a candidate — never merged into one of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
FUZZY_MIN_CHARS = 6
MAX_WORDS = 8


def entity_names(e: dict) -> list[str]:
    """What names an entity in text: its name, aliases, key and the key's id after ``type:``."""
    key = e["entity_key"]
    return [e["name"], *(e.get("aliases") or []), key, key.split(":", 1)[-1]]


def phrase(text: str) -> str:
    """The comparable form of a name or a text: lowercase words joined by single spaces."""
    return " ".join(_WORD.findall(text.lower()))


@dataclass(frozen=True)
class Mention:
    text: str                                   # the phrase as found (normalised)
    start: int                                  # word offset in the text
    candidates: tuple[tuple[str, float], ...]   # (entity key, confidence), best first, then key
    method: str                                 # exact | fuzzy
    resolved: str | None                        # the entity key, or None (unresolved)

    @property
    def confidence(self) -> float:
        return self.candidates[0][1]


def _block_keys(word: str) -> tuple[str, ...]:
    """Blocking keys of a word for fuzzy candidates: the word, its first and its last three
    letters (a misspelling keeps one of them unless it changes both ends)."""
    return (word, "<" + word[:3], ">" + word[-3:])


@dataclass
class Dictionary:
    """Names per entity: ``add(key, names)``; then :meth:`find` over texts."""

    exact: dict[str, set[str]] = field(default_factory=dict)         # phrase -> entity keys
    by_len: dict[int, list[str]] = field(default_factory=dict)        # word count -> fuzzy phrases
    _lengths: list[int] | None = None
    _blocks: dict[int, dict[str, list[int]]] | None = None

    def add(self, key: str, names) -> None:
        for n in names:
            p = phrase(n)
            if not p or len(p.split(" ")) > MAX_WORDS:
                continue
            if p not in self.exact:
                self.exact[p] = set()
                if len(p) >= FUZZY_MIN_CHARS:
                    self.by_len.setdefault(len(p.split(" ")), []).append(p)
            self.exact[p].add(key)
        self._lengths = self._blocks = None

    def _index(self) -> None:
        self._lengths = sorted({len(p.split(" ")) for p in self.exact}, reverse=True)
        self._blocks = {}
        for n, names in self.by_len.items():
            idx: dict[str, list[int]] = {}
            for i, p in enumerate(names):
                for w in p.split(" "):
                    for b in _block_keys(w):
                        idx.setdefault(b, []).append(i)
            self._blocks[n] = idx

    def find(self, text: str, *, accept: float, candidate: float, margin: float,
             fuzzy: bool = True) -> list[Mention]:
        """The mentions in ``text``, in text order: exact phrases first (longest first, no
        overlap), then fuzzy windows over the words no exact match covers; a window is scored
        only against the names that share a blocking key with one of its words
        (:func:`_block_keys`), so the cost grows with the text, not with the dictionary."""
        from rapidfuzz import fuzz, process

        words = phrase(text).split(" ") if text else []
        if not words or not self.exact:
            return []
        if self._lengths is None:
            self._index()
        taken = [False] * len(words)
        out: list[Mention] = []
        for n in self._lengths:
            for i in range(len(words) - n + 1):
                if any(taken[i:i + n]):
                    continue
                p = " ".join(words[i:i + n]) if n > 1 else words[i]
                keys = self.exact.get(p)
                if keys:
                    for j in range(i, i + n):
                        taken[j] = True
                    out.append(_decide(p, i, [(k, 1.0) for k in keys], "exact", accept, candidate, margin))
        if fuzzy:
            wkeys = [_block_keys(w) for w in words]
            for n in sorted(self.by_len, reverse=True):
                names, idx = self.by_len[n], self._blocks[n]
                per_word = [tuple(c for b in ks for c in idx.get(b, ())) for ks in wkeys]
                for i in range(len(words) - n + 1):
                    if not any(per_word[i:i + n]) or any(taken[i:i + n]):
                        continue
                    p = " ".join(words[i:i + n])
                    if len(p) < FUZZY_MIN_CHARS:
                        continue
                    cand = sorted({c for w in per_word[i:i + n] for c in w})
                    got = process.extract(p, [names[c] for c in cand], scorer=fuzz.ratio,
                                          score_cutoff=candidate * 100, limit=None)
                    if not got:
                        continue
                    best: dict[str, float] = {}
                    for name, score, _ in got:
                        for k in self.exact[name]:
                            best[k] = max(best.get(k, 0.0), round(score / 100.0, 4))
                    for j in range(i, i + n):
                        taken[j] = True
                    out.append(_decide(p, i, list(best.items()), "fuzzy", accept, candidate, margin))
        out.sort(key=lambda m: m.start)
        return out


def _decide(p: str, start: int, scored: list[tuple[str, float]], method: str, accept: float, candidate: float,
            margin: float) -> Mention:
    cands = tuple(sorted(((k, s) for k, s in scored if s >= candidate), key=lambda ks: (-ks[1], ks[0])))
    top = cands[0][1]
    rivals = [k for k, s in cands[1:] if s >= top - margin]
    resolved = cands[0][0] if top >= accept and not rivals else None
    return Mention(p, start, cands, method, resolved)
