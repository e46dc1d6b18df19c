"""Extra views of a text, each scanned like the text itself:

* ``deobfuscated``: markup tags removed ("ig<b></b>nore" -> "ignore"; comment markers
  removed, the comment's text kept), spaced-out letters re-joined ("i g n o r e" ->
  "ignore"), then normalised, confusables mapped to their Latin/ASCII skeleton with the
  Unicode TR39 table shipped by ``confusable-homoglyphs`` ("Ignоre" with a Cyrillic
  "о" -> "ignore") and leetspeak undone in words that mix letters and digits
  ("1gn0r3" -> "ignore").

Only computed when it can differ from the plain normal form.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache

import regex

from .normalize import normalize_for_scan

_TAG = regex.compile(r"<!--|-->|/\*|\*/|</?[a-z][a-z0-9]{0,15}(?:\s[^<>\n]{0,200})?/?>", regex.IGNORECASE)
_SPACED = regex.compile(r"(?<=(?:^|\s)\p{L}) (?=\p{L}(?:\s|$))")
_INWORD_MARK = regex.compile(r"(?<=\p{L})[*~`|]{1,3}(?=\p{L})")  # not "_": identifiers
_LEET_WORD = regex.compile(
    r"(?<![\p{L}0-9$])(?=[\p{L}0-9$]{0,30}\p{L})(?=[\p{L}0-9$]{0,30}[0-9$])[\p{L}0-9$]{2,30}(?![\p{L}0-9$])")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "$": "s",
                       "8": "b", "9": "g"})
_HEXLIKE = regex.compile(r"[0-9a-f]+")
# Cheap pre-checks (stdlib re)
# The prechecks below start with a literal or a small class (so re skips ahead to it
# instead of trying every position) and match where their plain forms match:
# <!--|[^\W_]</?[a-zA-Z]|</?[a-zA-Z][a-zA-Z0-9]{0,15}>[^\W_]
_HAS_TAG = re.compile(r"<(?:!--|(?<=[^\W_]<)/?[a-zA-Z]|/?[a-zA-Z][a-zA-Z0-9]{0,15}>[^\W_])")
# [^\W\d_][*~`|]{1,3}[^\W\d_], found from the run's first mark
_HAS_INWORD_MARK = re.compile(r"[*~`|](?<=[^\W\d_][*~`|])[*~`|]{0,2}[^\W\d_]")
# (?<!\S)[^\W\d_] [^\W\d_] [^\W\d_](?!\S), found from the space after its first letter
_HAS_SPACED = re.compile(r" [^\W\d_] [^\W\d_](?!\S)(?<=(?<!\S)[^\W\d_] [^\W\d_] [^\W\d_])")
# [^\W\d_][0-9$]|[0-9$][^\W\d_], found from the digit
_HAS_LEET = re.compile(r"[0-9$](?:[^\W\d_]|(?<=[^\W\d_][0-9$]))")
# Tokens mixing ASCII letters with letters of scripts that hold Latin lookalikes
# (Greek, Cyrillic, Armenian, Cherokee, IPA/Latin extensions, phonetic, ...).
_LOOK = "\u0180-\u02af\u0370-\u058f\u13a0-\u13ff\u1d00-\u1dbf\u2c00-\u2c7f\ua640-\ua69f\uab70-\uabbf"
_MIXED_CORE = re.compile(r"[a-z][" + _LOOK + r"]|[" + _LOOK + r"][a-z]")
_TOKEN_AROUND = re.compile(r"[a-z" + _LOOK + r"]{0,40}")
_HAS_LOOK = re.compile("[" + _LOOK + "]")  # _MIXED_CORE needs one (a class: re skips ahead)
# A leetspeak word (_LEET_WORD) is a run of letters, digits and "$" holding both, so some
# letter in it touches a digit or "$" (a _LEET_PAIR match), and it never holds a space or a
# line break: only the space-delimited chunks that hold such a pair are rewritten.
_LEET_PAIR = regex.compile(r"[0-9$](?=\p{L})|(?<=\p{L})[0-9$]")


@lru_cache(maxsize=1)
def _skeleton_table() -> dict[int, str]:
    """Non-ASCII character -> ASCII letter/digit it is confusable with (TR39 data from the
    ``confusable-homoglyphs`` package, read once)."""
    import confusable_homoglyphs

    path = os.path.join(os.path.dirname(confusable_homoglyphs.__file__), "confusables.json")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    table: dict[int, str] = {}
    for ch, homoglyphs in data.items():
        if len(ch) != 1 or ord(ch) < 128:
            continue
        for h in homoglyphs:
            c = h.get("c", "")
            if len(c) == 1 and c.isascii() and c.isalnum():
                table[ord(ch)] = c.lower()
                break
    # Scripts whose letters are not lookalikes of Latin in practice are left alone so
    # that CJK text keeps its meaning in this view.
    for cp in list(table):
        if 0x2E80 <= cp <= 0xD7FF or 0xF900 <= cp <= 0xFAFF or 0xFF00 <= cp <= 0xFFEF:
            del table[cp]
    return table


def _unleet(m: "regex.Match[str]") -> str:
    w = m.group()
    if _HEXLIKE.fullmatch(w) and len(w) >= 8:  # hashes and ids stay as they are
        return w
    return w.translate(_LEET)


def _skeleton_mixed(s: str) -> str:
    """Map the letters of tokens that mix ASCII letters with lookalike letters (found by
    a two-character search; each token is then widened to its ends, at most 40 chars
    each way) to their TR39 skeleton."""
    if _HAS_LOOK.search(s) is None:
        return s
    out: list[str] = []
    pos = 0
    table = _skeleton_table()
    for m in _MIXED_CORE.finditer(s):
        a = m.start()
        if a < pos:
            continue
        lo = a
        while lo > pos and a - lo < 40 and (s[lo - 1].isalpha()):
            lo -= 1
        hi = _TOKEN_AROUND.match(s, m.end()).end()
        out.append(s[pos:lo])
        out.append(s[lo:hi].translate(table))
        pos = hi
    if not out:
        return s
    out.append(s[pos:])
    return "".join(out)


def _unleet_words(s: str) -> str:
    """``_LEET_WORD.sub(_unleet, s)``, run only on the chunks between spaces and line breaks
    where a letter touches a digit or "$" (a match is a whole run of letters, digits and "$"
    holding both, so it lies in one such chunk, and the lookarounds see the same characters at
    a chunk's ends; a date or an address holds no such pair). The chunks are rewritten in one
    call, joined by line breaks (which no match crosses)."""
    m = _LEET_PAIR.search(s)
    if m is None:
        return s
    spans: list[tuple[int, int]] = []
    pos, n = 0, len(s)
    while m is not None:
        i = m.start()
        a = max(s.rfind(" ", pos, i), s.rfind("\n", pos, i)) + 1
        b1, b2 = s.find(" ", i), s.find("\n", i)
        b = min(b1 if b1 >= 0 else n, b2 if b2 >= 0 else n)
        spans.append((a, b))
        pos = b
        m = _LEET_PAIR.search(s, b)
    done = _LEET_WORD.sub(_unleet, "\n".join(s[a:b] for a, b in spans)).split("\n")
    out: list[str] = []
    pos = 0
    for (a, b), chunk in zip(spans, done):
        out.append(s[pos:a])
        out.append(chunk)
        pos = b
    out.append(s[pos:])
    return "".join(out)


def skeleton(text: str) -> str:
    """``text`` in the form two renderings of the same words share: the scan's normal form
    (invisible characters dropped, NFKC, casefolded, whitespace collapsed) with the letters of
    tokens that mix ASCII and lookalike letters mapped to their TR39 skeleton ("раyment" with
    a Cyrillic "р" and "а" is "payment")."""
    s = normalize_for_scan(text)
    return s if s.isascii() else _skeleton_mixed(s)


def deobfuscated(text: str, norm: str) -> str | None:
    """The deobfuscated view, or None when there is nothing to undo. Each step first
    checks cheaply (stdlib ``re``) whether it applies."""
    t = text
    if ("<" in t and _HAS_TAG.search(t) is not None) or "/*" in t:
        t = _TAG.sub(" ", t) if ("<!--" in t or "/*" in t) else _TAG.sub("", t)
    if any(c in t for c in "*~`|") and _HAS_INWORD_MARK.search(t) is not None:
        t = _INWORD_MARK.sub("", t)
    if _HAS_SPACED.search(t) is not None:
        t = _SPACED.sub("", t)
    s = normalize_for_scan(t) if t is not text else norm
    if not s.isascii():
        s = _skeleton_mixed(s)
    if _HAS_LEET.search(s) is not None:
        s = _unleet_words(s)
    return None if s == norm else s
