"""Normalisation of text before matching: Unicode tag characters decoded, invisible
characters removed, NFKC, case-folded, whitespace collapsed, whitespace between Han
characters dropped (:func:`normalize_for_scan`). Further views (confusable skeleton,
markup, spaced-out letters, leetspeak) are in :mod:`.views`."""

from __future__ import annotations

import re
import unicodedata

# --------------------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------------------

# Invisible / format characters that can be used to split keywords: soft hyphen,
# combining grapheme joiner, Arabic letter mark, Hangul fillers, Khmer inherent vowels,
# Mongolian FVS/vowel separator, zero-width space/joiners/marks, bidi embeddings and
# isolates, word joiner and invisible operators, variation selectors, BOM/ZWNBSP,
# language tag / cancel tag, variation selectors supplement.
_INVISIBLE_BMP = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
)
_INVISIBLE_ASTRAL = "\U000e0000-\U000e001f\U000e007f\U000e0080-\U000e0fff"
_INVISIBLE = re.compile("[" + _INVISIBLE_BMP + _INVISIBLE_ASTRAL + "]")
# Unicode "tag" characters U+E0020..U+E007E mirror printable ASCII and render
# invisibly; they are used to smuggle hidden instructions. Decode them to ASCII.
_TAGS = re.compile("[\U000e0020-\U000e007e]+")
# Whitespace other than " " and "\n" that NFKC leaves alone.
_ODD_WS_CLASS = "\t\r\x0b\x0c\x1c-\x1f\x85\u1680\u2028\u2029"
# One pass to learn whether any of the above occurs at all (usually not). A BMP-only
# class is much cheaper to test; astral characters are looked for only when the text
# has any (its UTF-16 form is longer than two bytes per character).
_SPECIAL_BMP = re.compile("[" + _INVISIBLE_BMP + _ODD_WS_CLASS + "]")
_SPECIAL_ASTRAL = re.compile("[" + _INVISIBLE_ASTRAL + "\U000e0020-\U000e007e]")
# Common compatibility characters in CJK text, replaced cheaply before the (expensive)
# NFKC pass so that most chunks of ordinary Chinese text are already NFKC-stable.
_FAST_COMPAT = (
    ("\uff0c", ","), ("\uff1a", ":"), ("\uff1b", ";"), ("\uff01", "!"), ("\uff1f", "?"),
    ("\uff08", "("), ("\uff09", ")"), ("\u3000", " "), ("\uff05", "%"), ("\uff5e", "~"),
)
# Line-break-like characters (after NFKC; U+2028/2029/0085 survive NFKC).
_LINE_BREAKS = ("\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")
_SPACES = ("\t", "\x1f", "\u1680")  # other spaces are mapped to U+0020 by NFKC
_HAN = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_HAN_GAP = re.compile(r"[ \n](?<=" + _HAN + r"[ \n])(?=" + _HAN + ")")
_HAS_HAN = re.compile(_HAN)
_NFKC_CHUNK = 1 << 16


def _nfkc(s: str) -> str:
    if unicodedata.is_normalized("NFKC", s):
        return s
    for a, b in _FAST_COMPAT:
        if a in s:
            s = s.replace(a, b)
    if unicodedata.is_normalized("NFKC", s):
        return s
    if len(s) <= _NFKC_CHUNK:
        return unicodedata.normalize("NFKC", s)
    # Normalise chunk by chunk, skipping chunks that are already stable. Chunks are cut
    # right after a line break: nothing composes across "\n".
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        j = s.find("\n", i + _NFKC_CHUNK)
        j = n if j < 0 else j + 1
        chunk = s[i:j]
        if not unicodedata.is_normalized("NFKC", chunk):
            chunk = unicodedata.normalize("NFKC", chunk)
        out.append(chunk)
        i = j
    return "".join(out)


def _collapse_ws(s: str, odd: bool = True) -> str:
    if odd:  # only when such characters may occur (each check is a pass over s)
        for c in _LINE_BREAKS:
            if c in s:
                s = s.replace(c, "\n")
        for c in _SPACES:
            if c in s:
                s = s.replace(c, " ")
    # Collapse runs with C-level replaces (each pass at least halves a run).
    while "  " in s:
        s = s.replace("  ", " ")
    if " \n" in s:
        s = s.replace(" \n", "\n")
    if "\n " in s:
        s = s.replace("\n ", "\n")
    while "\n\n" in s:
        s = s.replace("\n\n", "\n")
    return s


def normalize_for_scan(text: str) -> str:
    """Return the normal form the patterns run on (offsets of matches index into it).

    Steps: decode Unicode tag characters; strip zero-width/invisible characters
    (U+200B-U+200F, U+2060-U+206F, U+FEFF, soft hyphen, bidi controls, variation
    selectors, ...); NFKC; casefold; collapse whitespace (a run containing a line
    break becomes a single ``\\n``, other runs a single space); drop whitespace
    between two Han characters ("忽 略" -> "忽略").
    """
    s = text
    if not s.isascii():
        astral = len(s.encode("utf-16-le", "surrogatepass")) != 2 * len(s)
        if astral and _SPECIAL_ASTRAL.search(s) is not None:
            if _TAGS.search(s) is not None:
                s = _TAGS.sub(lambda m: "".join(chr(ord(c) - 0xE0000) for c in m.group()), s)
            s = _INVISIBLE.sub("", s)
        special = _SPECIAL_BMP.search(s) is not None
        if special:
            s = _INVISIBLE.sub("", s)
        s = _nfkc(s)
        s = s.casefold()
        s = _collapse_ws(s, odd=special)
        if _HAS_HAN.search(s) is not None:
            s = _HAN_GAP.sub("", s)
    else:
        s = s.lower()  # casefold == lower for ASCII
        s = _collapse_ws(s)
    return s

