"""Mask patterns (a source manifest's ``redaction.patterns``): compiled once, run in linear time.

Patterns run on RE2 (``google-re2``), whose work is linear in the text: a manifest pattern
cannot make a masking pass backtrack for minutes over untrusted text. RE2 has no
look-around; the one form masks need, a guard of one character class on either side of the
match (``(?<![0-9])1[3-9][0-9]{9}(?![0-9])``), is rewritten here into a consumed character
beside a capture group and gives the matches the backtracking engine gave. Any other pattern
RE2 cannot compile (back-references, look-around elsewhere) is refused with
:class:`PatternError` when the manifest is read.

Text is matched after NFKC normalisation, with dashes (``\\p{Pd}``, the minus sign) read as
``-`` and invisible format characters (``\\p{Cf}``: zero-width space, soft hyphen…) dropped,
so full-width digits or a zero-width space inside a number do not slip past a mask. A text a
mask changes is shown in that normalised form; a text no mask matches is returned unchanged.

Replacements are literal text. Facts are masked whole: numbers by their decimal string, and
the names of a mapping's entries as well as its values.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any, Callable

Patterns = list[tuple[str, "Compiled", str]]


class PatternError(ValueError):
    """A mask pattern the linear-time engine cannot run (or that matches the empty text)."""


# A guard of one character: a bracket class, a class escape or one (escaped) character.
_GUARD = r"(?:\[(?:\\.|[^\]\\])+\]|\\[dDwWsS]|\\[pP]\{\w+\}|\\[pP]\w|\\.|[^\\()\[\]|?*+{}.^$])"
_BEHIND = re.compile(rf"^\(\?<!({_GUARD})\)")
_AHEAD = re.compile(rf"\(\?!({_GUARD})\)$")


def _negate(g: str) -> str:
    """A class matching exactly the characters the guard ``g`` does not."""
    if g.startswith("[^"):
        return "[" + g[2:]
    if g.startswith("["):
        return "[^" + g[1:]
    if len(g) == 2 and g[0] == "\\" and g[1] in "dDwWsS":
        return "\\" + g[1].swapcase()
    if g.startswith("\\p") or g.startswith("\\P"):
        return ("\\P" if g[1] == "p" else "\\p") + g[2:]
    return "[^" + g + "]"


def _options():
    import re2

    o = re2.Options()
    o.log_errors = False        # RE2 would print its own multi-line log to stderr
    return o


class Compiled:
    """One pattern on RE2; ``subn`` behaves like ``re.subn`` with a literal replacement."""

    def __init__(self, source: str) -> None:
        import re2

        body, pre, post = source, None, None
        if m := _BEHIND.match(body):
            pre, body = m.group(1), body[m.end():]
        if m := _AHEAD.search(body):
            post, body = m.group(1), body[:m.start()]
        if re.search(r"\(\?<?[=!]", body):
            raise PatternError("look-around is supported only as one (?<!…) guard at the start and one (?!…) "
                               "at the end of a pattern")
        suffix = f"(?:{_negate(post)}|\\z)" if post else ""
        opts = _options()
        try:
            plain = re2.compile(f"(?:{body})", opts)
            self.first = re2.compile(f"(?:\\A|{_negate(pre)})({body}){suffix}" if pre else f"({body}){suffix}", opts)
            self.later = re2.compile(f"{_negate(pre)}({body}){suffix}", opts) if pre else self.first
        except re2.error as e:
            msg = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
            raise PatternError(f"not a pattern ctx can run in linear time (RE2): {msg}") from None
        if plain.fullmatch("") is not None:
            raise PatternError("the pattern matches the empty text")
        self.pre = pre is not None

    def subn(self, repl: str, text: str) -> tuple[str, int]:
        parts: list[str] = []
        pos = last = n = 0
        rx = self.first
        while pos <= len(text):
            m = rx.search(text, pos)
            if m is None:
                break
            s, e = m.start(1), m.end(1)
            if e == s:                  # refused at compile time; never loop on an empty match
                pos = e + 1
                continue
            parts.append(text[last:s])
            parts.append(repl)
            last, n = e, n + 1
            # the guard before the next match is the character before it, read again
            pos = e - 1 if self.pre else e
            rx = self.later
        if not n:
            return text, 0
        parts.append(text[last:])
        return "".join(parts), n


@functools.lru_cache(maxsize=512)
def compile_pattern(source: str) -> Compiled:
    """``source`` compiled (cached); :class:`PatternError` when it cannot be run in linear time."""
    return Compiled(source)


@functools.lru_cache(maxsize=512)
def search_pattern(source: str):
    """``source`` compiled on RE2 for a plain search (a playbook evidence rule's ``regex``):
    linear in the text, so no back-references and no look-around (RE2 refuses them), and
    :class:`PatternError` for a pattern that matches the empty text (it would match every text)."""
    import re2

    try:
        rx = re2.compile(source, _options())
    except re2.error as e:
        msg = e.args[0].decode("utf-8", "replace") if e.args and isinstance(e.args[0], bytes) else str(e)
        raise PatternError(f"not an RE2 pattern ({msg}); RE2 runs in linear time and has no "
                           f"back-references or look-around") from None
    if rx.search("") is not None:
        raise PatternError("the pattern matches the empty text, so it would match every text")
    return rx


def check_replacement(repl: str) -> None:
    """Replacements are literal text shown in packs: no control characters, no backslash
    (which a reader could take for a group reference)."""
    if "\\" in repl or any(unicodedata.category(c) in ("Cc", "Cf") for c in repl):
        raise PatternError("a replacement is literal text: no backslash and no control or format characters")


def patterns(policy: dict[str, Any]) -> Patterns:
    return [(p["name"], compile_pattern(p["regex"]), p["replacement"]) for p in policy["patterns"]]


_DASHES = {c: "-" for c in (0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212, 0xFE58, 0xFE63, 0xFF0D)}


def normalise(text: str) -> str:
    """``text`` as masks read it: NFKC, dashes as ``-``, format characters dropped, a lone
    surrogate as ``?``."""
    if text.isascii():
        return text
    t = unicodedata.normalize("NFKC", text).translate(_DASHES)
    # every format character is beyond ASCII: only the non-ASCII runs are looked at
    t = _NON_ASCII.sub(_drop_format, t)
    # a lone surrogate (a YAML "\udcff" escape) cannot be matched by RE2: read as "?"
    return t.encode("utf-8", "replace").decode("utf-8") if _SURROGATE.search(t) else t


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _drop_format(m: re.Match) -> str:
    return "".join(c for c in m.group() if unicodedata.category(c) != "Cf")


def mask(text: str, pats: Patterns, counts: dict[str, int] | None = None) -> str:
    if not text or not pats:
        return text
    out = normalise(text)
    hit = False
    for name, rx, repl in pats:
        out, n = rx.subn(repl, out)
        if n:
            hit = True
            if counts is not None:
                counts[name] = counts.get(name, 0) + n
    return out if hit else text


def _decimal(v: int | float) -> str:
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return str(v)


def map_strings(v: Any, fn: Callable[[str], str], *, numbers: bool = False, keys: bool = False,
                skip: frozenset[str] | set[str] = frozenset()) -> Any:
    """``v`` with ``fn`` applied to every string in it (lists and mappings walked): the one walk
    of masking (:func:`mask_value`) and erasure (``ledger/erasure``). ``numbers``: a number is
    rewritten through its decimal string too (it becomes the new string when ``fn`` changes
    it); ``keys``: a mapping's keys too; ``skip``: keys whose values are left as they are."""
    if isinstance(v, str):
        return fn(v)
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        if not numbers:
            return v
        s = _decimal(v)
        m = fn(s)
        return v if m == s else m
    if isinstance(v, list):
        return [map_strings(x, fn, numbers=numbers, keys=keys, skip=skip) for x in v]
    if isinstance(v, dict):
        return {(fn(k) if keys and isinstance(k, str) else k):
                (x if k in skip else map_strings(x, fn, numbers=numbers, keys=keys, skip=skip))
                for k, x in v.items()}
    return v


def mask_value(v: Any, pats: Patterns, counts: dict[str, int] | None = None) -> Any:
    """``v`` with every string in it masked (lists and mappings walked, a mapping's keys too);
    a number a mask matches (by its decimal string) becomes the masked string."""
    return map_strings(v, lambda s: mask(s, pats, counts), numbers=True, keys=True)
