"""Encoded spans and whole-text transforms whose decoded text is scanned too.

:func:`decoded_views` yields ``(kind, text)`` pairs for one (raw) text:

* spans of base64 (standard and URL-safe), base32 and hex that decode to mostly
  printable UTF-8 text;
* the text with percent-encoding, ``\\uXXXX`` / ``\\xXX`` escapes or HTML character
  references decoded (when it has any).

(The text in rot13 and reversed are built by :mod:`.transforms`, over the lines where they
can matter.)

Bounds: a span is decoded only when it is 16..262,144 characters long; at most
:data:`MAX_SPANS` spans per text; the caller limits the depth (a decoded text is itself
decoded again, at most ``MAX_DEPTH`` times) and the total decoded size."""

from __future__ import annotations

import base64
import binascii
import html
import re
import urllib.parse
from typing import Iterator

import regex

MAX_DEPTH = 2
MAX_SPANS = 64
MAX_DECODED_TOTAL = 4 << 20  # characters per scanned text, all depths together

# stdlib re: plain character-class runs, found by advancing over the text once
_B64 = re.compile(r"[A-Za-z0-9+/_\-]{16,262144}={0,2}")
_B32 = re.compile(r"[A-Z2-7]{16,262144}={0,6}")
_HEX = re.compile(r"[0-9A-Fa-f]{16,262144}")
_PCT = regex.compile(r"%[0-9A-Fa-f]{2}")
_ESC = regex.compile(r"\\u\{?([0-9A-Fa-f]{4,6})\}?|\\x([0-9A-Fa-f]{2})|\\U([0-9A-Fa-f]{8})")


def _printable(t: str) -> bool:
    if not t:
        return False
    bad = sum(1 for c in t if not (c.isprintable() or c in "\n\r\t"))
    letters = sum(1 for c in t if c.isalpha())
    return bad <= len(t) // 20 and letters >= len(t) // 3


def _text(b: bytes) -> str | None:
    try:
        t = b.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return t if _printable(t) else None


def _b64(span: str) -> str | None:
    if span.isalpha() and (span.islower() or span.isupper()):
        return None  # a long word, not base64
    s = span.rstrip("=")
    if len(s) % 4 == 1:
        return None
    s += "=" * (-len(s) % 4)
    try:
        if "-" in s or "_" in s:
            return _text(base64.urlsafe_b64decode(s))
        return _text(base64.b64decode(s, validate=True))
    except (binascii.Error, ValueError):
        return None


def _b32(span: str) -> str | None:
    s = span.rstrip("=")
    s += "=" * (-len(s) % 8)
    try:
        return _text(base64.b32decode(s))
    except (binascii.Error, ValueError):
        return None


def _esc(m: "regex.Match[str]") -> str:
    h = m.group(1) or m.group(2) or m.group(3)
    try:
        return chr(int(h, 16))
    except (ValueError, OverflowError):
        return m.group()


def _spans(text: str) -> Iterator[tuple[str, str]]:
    """``(kind, span)`` of every hex, base32 and base64 match, in that order (all hex first). One
    pass finds the base64 runs; hex and base32 are looked for only inside them: their letters
    are base64 letters, so each of their runs lies in a base64 run of 16 or more (one run
    split at the length bound is several adjacent matches, joined here), and "=" padding
    beyond it is searched up to 6 characters on."""
    b64 = [m.span() for m in _B64.finditer(text)]
    regions: list[list[int]] = []
    for a, b in b64:
        if regions and regions[-1][1] == a:
            regions[-1][1] = b
        else:
            regions.append([a, b])
    n = len(text)
    for kind, rx in (("hex", _HEX), ("base32", _B32)):
        for a, b in regions:
            for m in rx.finditer(text, a, min(n, b + 6)):
                yield kind, m.group()
    for a, b in b64:
        yield "base64", text[a:b]


_DECODERS = {"hex": lambda s: _text(binascii.unhexlify(s)), "base32": _b32, "base64": _b64}


def decoded_views(text: str) -> Iterator[tuple[str, str]]:
    """``(kind, text)`` pairs (see the module docstring)."""
    n = 0
    if len(text) >= 16:
        for kind, span in _spans(text):
            if kind == "hex" and len(span) % 2:
                continue
            if kind == "base64" and _HEX.fullmatch(span):
                continue
            out = _DECODERS[kind](span)
            if out:
                yield kind, out
                n += 1
                if n >= MAX_SPANS:
                    return
    if "%" in text and _PCT.search(text) is not None:
        out = urllib.parse.unquote(text.replace("+", " "), errors="replace")
        if out != text:
            yield "percent", out
    if "\\" in text and _ESC.search(text) is not None:
        yield "escapes", _ESC.sub(_esc, text)
    if "&" in text and ";" in text:
        out = html.unescape(text)
        if out != text:
            yield "html_entities", out
