"""The whole-text transforms: the text in rot13 and the text reversed, each built over the
lines where it can matter.

An order hidden in rot13 ("Vtaber nyy cerivbhf vafgehpgvbaf") or written backwards
(".snoitcurtsni suoiverp lla erongi") becomes a rule's words once transformed back. A line
is kept for a transform when one of its words, so transformed, is a word some rule's gate
needs (:func:`.engine.keywords`: whole ASCII words of two characters or more, and the CJK,
Cyrillic and other needles that hold a letter, which are looked for reversed in the line; for
the reversed view, not the words that read the same backwards, which the text itself holds).
Each kept line is taken with :data:`CONTEXT` lines either side; runs of kept lines are joined
by line breaks and transformed (rot13: the ASCII letters rotated; reversed: the characters in
the opposite order, so the runs come last to first, as in the whole text reversed). A text
none of whose lines is kept yields no view: ordinary prose costs a screen of its words
(one pass) instead of two more views of the whole text, each normalised, deobfuscated and
scanned.

The lines are those of the text's normal form (``normalize_for_scan``): invisible characters
gone, NFKC, case-folded, whitespace collapsed, so that the screen sees the words the scan
would. Word beginnings (the gates' stems) are not screened: transformed, they begin too many
ordinary words; a transformed order whose only rule words are word beginnings is not looked
for (docs/security.md)."""

from __future__ import annotations

import bisect
import re
from functools import lru_cache
from typing import Iterable, Iterator

from . import engine

CONTEXT = 1     # lines kept either side of a line that holds a transformed rule word

_ROT13 = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    b"NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")


def rot13(text: str) -> str:
    """``text`` with its ASCII letters rotated by 13 (UTF-8 bytes: a multi-byte sequence holds
    no ASCII byte, so only letters change)."""
    return text.encode("utf-8", "surrogatepass").translate(_ROT13).decode("utf-8", "surrogatepass")


@lru_cache(maxsize=1)
def _screens() -> tuple[frozenset[bytes], frozenset[bytes], tuple["re.Pattern[str]", ...]]:
    """(rule words in rot13, rule words reversed, regexes finding the other needles reversed),
    built once the rules are registered."""
    toks, phrases = engine.keywords()
    rot = frozenset(t.translate(_ROT13) for t in toks)
    # a word that reads the same backwards ("sys", "ии", "你") says nothing of a reversed line
    rev = frozenset(t[::-1] for t in toks if t != t[::-1])
    phrases = tuple(p for p in phrases if p != p[::-1])
    rxs = (_reversed_finder(p[::-1] for p in phrases if not p.isascii()),
           engine.first_char_alternation(p[::-1] for p in phrases if p.isascii()))
    return rot, rev, tuple(rx for rx in rxs if rx is not None)


def _reversed_finder(needles: Iterable[str]) -> "re.Pattern[str] | None":
    """One regex finding each of ``needles`` (each holding a non-ASCII character) from its
    first non-ASCII character, the ASCII ones before it checked by a lookbehind
    (``給(?<=ia給)``): the engine skips ahead to those characters only, as it cannot over the
    ordinary letters that begin a reversed "给ai". A match starts a few characters into its
    needle, on the same line (no needle holds a line break), which is what the screen asks."""
    by_anchor: dict[str, set[tuple[str, str]]] = {}
    for w in needles:
        i = next(j for j, c in enumerate(w) if not c.isascii())
        by_anchor.setdefault(w[i], set()).add((w[:i], w[i + 1:]))
    if not by_anchor:
        return None
    alts = []
    for c, parts in sorted(by_anchor.items()):
        branches = [("(?<=" + re.escape(pre + c) + ")" if pre else "") + re.escape(rest)
                    for pre, rest in sorted(parts, key=lambda x: (-len(x[0]) - len(x[1]), x))]
        alts.append(re.escape(c) + "(?:" + "|".join(branches) + ")")
    return re.compile("|".join(alts))


def _word_starts(proj: bytes, words: frozenset[bytes]) -> list[int]:
    """Where each of ``words`` occurs as a whole word of the ASCII projection ``proj`` (only
    ``[a-z0-9]`` and spaces). The regex begins with the words, so the engine skips ahead to
    their first characters; a match that begins inside a token ends at that token's end (the
    lookahead), so it never hides the whole word that follows."""
    rx = re.compile(rb"(?:" + b"|".join(re.escape(w) for w in sorted(words)) + rb")(?![a-z0-9])")
    return [a for a in (m.start() for m in rx.finditer(proj)) if a == 0 or proj[a - 1] == 32]


def _runs(kept: list[int], n: int) -> list[tuple[int, int]]:
    """Runs ``[a, b)`` of line indexes: each kept line with CONTEXT lines either side, merged
    where they touch."""
    runs: list[tuple[int, int]] = []
    for i in kept:
        a, b = max(0, i - CONTEXT), min(n, i + CONTEXT + 1)
        if runs and a <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], b))
        else:
            runs.append((a, b))
    return runs


def transformed_views(norm: str) -> Iterator[tuple[str, str]]:
    """``("rot13", text)`` and ``("reversed", text)`` for a text's normal form ``norm``, each
    only when some line of it is kept for that transform (module docstring)."""
    if not norm:
        return
    rot, rev, rxs = _screens()
    # one pass over the text's words; the hits are looked for only when a word is one (the
    # ASCII projection has one byte per character and a space for each line break)
    _, ascii_, words = engine.projection(norm)
    hit_rot, hit_rev = rot & words, rev & words
    rot_at = _word_starts(ascii_, hit_rot) if hit_rot else []
    rev_at = _word_starts(ascii_, hit_rev) if hit_rev else []
    if rxs and not norm.isascii():
        for rx in rxs:
            rev_at.extend(m.start() for m in rx.finditer(norm))
    if not rot_at and not rev_at:
        return
    lines = norm.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    keep_rot = sorted({bisect.bisect_right(starts, pos) - 1 for pos in rot_at})
    keep_rev = {bisect.bisect_right(starts, pos) - 1 for pos in rev_at}
    if keep_rot:
        yield "rot13", rot13("\n".join("\n".join(lines[a:b]) for a, b in _runs(keep_rot, len(lines))))
    if keep_rev:
        yield "reversed", "\n".join("\n".join(lines[a:b]) for a, b in _runs(sorted(keep_rev), len(lines)))[::-1]


def changed_lines(view: str, norm: str) -> str:
    """A view of the text that rewrites some of its lines (the deobfuscated view), cut to the
    lines that differ from the text's normal form ``norm``, with :data:`CONTEXT` lines either
    side, runs joined by line breaks: a line the view left as it was holds what the normal
    form's own scan found already (a later view's finding of a family found before is left
    out). The whole view when the two differ in their number of lines (a markup comment
    removed across lines): the lines then do not pair."""
    a, b = norm.split("\n"), view.split("\n")
    if len(a) != len(b):
        return view
    kept = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if len(kept) == len(b):
        return view
    return "\n".join("\n".join(b[i:j]) for i, j in _runs(kept, len(b)))
