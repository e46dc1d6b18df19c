"""Obfuscations applied to evaluation rows (shared by build_heldout.py and build_dev.py).

Each takes (text, lang) and returns the obfuscated text. The encodings are wrapped in a
neutral line (no hint such as "decode this") so the detector has to find them itself.
"""

from __future__ import annotations

import base64
import codecs
import urllib.parse

_CYR = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "i": "і", "x": "х", "y": "у"}
_LEET = {"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"}


def _latin(lang: str) -> bool:
    return lang in ("en", "de", "fr", "es", "it", "pt")


def homoglyph(t: str, lang: str) -> str:
    if not _latin(lang):
        return zero_width(t, lang)
    return "".join(_CYR.get(ch, ch) if i % 2 == 0 else ch for i, ch in enumerate(t))


def spaced(t: str, lang: str) -> str:
    if not _latin(lang) and lang != "ru":
        return " ".join(t)
    words = t.split(" ")
    k = max(2, len(words) // 2)
    return " ".join(" ".join(w) for w in words[:k]) + "   " + " ".join(words[k:])


def leet(t: str, lang: str) -> str:
    if not _latin(lang):
        return markup_split(t, lang)
    return "".join(_LEET.get(ch, ch) for ch in t)


def b64(t: str, lang: str) -> str:
    return "Attachment metadata: " + base64.b64encode(t.encode()).decode()


def b32(t: str, lang: str) -> str:
    return "ref=" + base64.b32encode(t.encode()).decode()


def hexenc(t: str, lang: str) -> str:
    return "trace id " + t.encode().hex()


def percent(t: str, lang: str) -> str:
    return "link: https://portal.example.com/notes?msg=" + urllib.parse.quote(t)


def uescape(t: str, lang: str) -> str:
    return 'config {"note": "' + "".join("\\u%04x" % ord(c) for c in t) + '"}'


def rot13(t: str, lang: str) -> str:
    if not _latin(lang):
        return b64(t, lang)
    return "Fwd (rot13): " + codecs.encode(t, "rot13")


def reversed_(t: str, lang: str) -> str:
    return "sig: " + t[::-1]


def markup_split(t: str, lang: str) -> str:
    out = []
    for w in t.split(" "):
        if len(w) > 4:
            w = w[:2] + "<b></b>" + w[2:]
        out.append(w)
    return " ".join(out) if " " in t else "<span>".join(t[i:i + 3] for i in range(0, len(t), 3))


def zero_width(t: str, lang: str) -> str:
    return "\u200b".join(t)


def none(t: str, lang: str) -> str:
    return t


OBFUSCATORS = {
    "none": none, "homoglyph": homoglyph, "spaced": spaced, "leet": leet, "base64": b64,
    "base32": b32, "hex": hexenc, "percent": percent, "uescape": uescape, "rot13": rot13,
    "reversed": reversed_, "markup_split": markup_split, "zero_width": zero_width,
}
