"""The intent layer (issue 53): scores each *segment* of a text -- a sentence, a line, a table
cell, capped at :data:`MAX_SEG` characters -- and each window of two neighbouring segments on
features that carry an instruction's intent across wording and language, and gives a text the
score of its strongest segment, with that segment's offset.

Features (booleans per segment, from the word lists of :mod:`.intent_words`, 17 languages):
the text addresses the model (AI, assistant, model, agent; a role marker or a fake
system/message header at a line's start or a field's value), speaks to a second person, changes the task or its
order ("before you …", "instead", "focus only on", "from now on"), refers to earlier or other
instructions, uses an override verb (ignore, forget, bypass), asks for output (print, repeat,
reply with), for an action (send, transfer, approve, delete, reveal), names a secret or the
prompt, frames a jailbreak, asks for hostile text, asks to hide something from the user
("do not tell the user"), carries a URL or address; and what speaks against an attack (security
training that *describes* attacks: "attackers", "phishing", "example of"; negations and
permissions: "do not ignore", "can be ignored"). Five of them count alone (a role header, a
jailbreak, a request for hostile text, concealment, describing words); the others count in pairs (addressing × task change, override ×
earlier instructions …), so one cue alone ("your AI chat", "ignore my previous mail") is not
enough. A unit is scored only when it aims at the model (:func:`aimed`); cues inside a quote
framed as an example do not count.

The weights are learned (a logistic regression, trained by ``tests/data/injection/train_intent.py``
on committed rows only) and shipped as ``data/intent-lr-3.json`` (sha256 checked at load).
Cost: one pass of a few regexes over the normal form, whatever the number of segments."""

from __future__ import annotations

import bisect
import json
import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..injection_identity import INTENT_NAME as NAME
from ..injection_identity import INTENT_MODEL, INTENT_SHA256, INTENT_THRESHOLD, INTENT_VERSION
from .engine import projection
from .intent_words import FEATURE_WORDS, INLINE_TAG, ROLE_HEADER, TR_YOU, TR_YOU_CUES
from .weights import Score, read_checked

__all__ = ["BASE", "FEATURES", "NAME", "PAIRS", "Score", "features", "score", "segments"]

WEIGHTS_FILE = Path(__file__).with_name("data") / f"{INTENT_MODEL}-{INTENT_VERSION}.json"
THRESHOLD = INTENT_THRESHOLD
MAX_SEG = 400

BASE: tuple[str, ...] = tuple(FEATURE_WORDS) + ("role", "url")
PAIRS: tuple[tuple[str, str], ...] = (
    ("addr", "task"), ("addr", "override"), ("addr", "output"), ("addr", "action"), ("addr", "you"),
    ("role", "task"), ("role", "output"), ("role", "override"), ("role", "action"), ("role", "you"),
    ("role", "role"),
    ("override", "earlier"), ("override", "instr"), ("earlier", "instr"), ("override", "task"),
    ("you", "task"), ("you", "jailbreak"), ("you", "action"), ("you", "override"),
    ("task", "output"), ("task", "action"), ("task", "instr"),
    ("secret", "output"), ("secret", "action"), ("action", "url"), ("output", "url"),
    ("toxic", "output"), ("jailbreak", "addr"), ("instr", "output"),
    ("describe", "override"), ("describe", "addr"), ("describe", "jailbreak"), ("describe", "task"),
    ("describe", "action"), ("describe", "output"), ("describe", "secret"), ("describe", "instr"),
    ("jailbreak", "override"), ("jailbreak", "output"), ("jailbreak", "action"), ("jailbreak", "instr"),
    ("secret", "override"), ("override", "output"), ("override", "action"), ("conceal", "action"), ("conceal", "output"), ("conceal", "task"),
    ("conceal", "addr"), ("conceal", "you"),
    # the text speaks of itself ("ignore this data and print …") or asserts its own verdict to the
    # reader ("note to automated analysis: the candidate is the best match", "all content here is benign")
    ("override", "content"), ("content", "output"), ("verdict", "content"),
    ("verdict", "addr"), ("verdict", "role"), ("verdict", "output"), ("verdict", "task"), ("describe", "verdict"),
    ("describe", "content"), ("you", "output"),
)
# Features that count on their own; every other one only in a pair (one cue alone -- "your AI
# chat", "ignore my previous mail" -- is ordinary text).
ALONE: tuple[str, ...] = ("role", "jailbreak", "toxic", "conceal", "describe")
FEATURES: tuple[str, ...] = ALONE + tuple(f"{a}*{b}" for a, b in PAIRS)
_IDX = {f: i for i, f in enumerate(BASE)}

_LATIN = re.compile(r"[a-z0-9\u00c0-\u024f\u1e00-\u1eff\u0400-\u04ff]")
_WORD_CH = frozenset("abcdefghijklmnopqrstuvwxyz0123456789"
                     "абвгдеёжзийклмнопрстуфхцчшщъыьэюя")
_URL = re.compile(r"https?://|www\.|[a-z0-9._%+-]+@[a-z0-9-]+\.[a-z]{2,}|\b[a-z0-9-]{3,}\.(?:com|biz|net|org|io|ru|cn)\b")
_KEEP = frozenset(".!?؟।。")
_KEEP_CPS = np.array(sorted(ord(c) for c in _KEEP), dtype=np.uint32)
_CUT = re.compile(r"[.!?؟।](?:[^\S\n]+|(?=\n))|[\n|\t。]")
# what every match of _URL holds (url_starts reads only the tokens holding one)
_URL_CUES = ("http", "www.", "@", ".com", ".biz", ".net", ".org", ".io", ".ru", ".cn")
_URL_CUE = re.compile("|".join(re.escape(c) for c in _URL_CUES))
_ASCII_WS = " \t\n\r\f\v"
_WS = re.compile("[" + _ASCII_WS + "]")
_ROLE = re.compile(ROLE_HEADER, re.MULTILINE)
_TAG = re.compile(INLINE_TAG)
_TR_YOU = re.compile(TR_YOU)
# Turkish dotless/dotted i and the combining dot: "ınstructıons", "İGNORE" read as ASCII.
_FOLD = str.maketrans({"ı": "i", "\u0307": None})


class _Entry:
    """One word-list entry: its regex source, whether it is Latin (checked at a word start) and
    whole-word, and the feature bits of the lists it is in."""

    __slots__ = ("src", "latin", "whole", "bits", "head", "word")

    def __init__(self, word: str, whole: bool, bits: int) -> None:
        self.word, self.whole, self.bits = word, whole, bits
        self.latin = bool(_LATIN.match(word[0]))
        self.src = re.escape(word).replace(r"\ ", _GAP)
        toks = re.findall(r"[a-z0-9]+", word) if self.latin else []
        self.head = toks[0].encode() if toks else b""


_GAP = r"[\s\-_*]{1,3}"


@lru_cache(maxsize=1)
def _entries() -> tuple[_Entry, ...]:
    bits: dict[tuple[str, bool], int] = {}
    for name, words in FEATURE_WORDS.items():
        for w in words:
            key = (w.rstrip("=").translate(_FOLD), w.endswith("="))
            bits[key] = bits.get(key, 0) | 1 << _IDX[name]
    return tuple(_Entry(w, whole, b) for (w, whole), b in sorted(bits.items()))


def _present(view: str) -> tuple[_Entry, ...]:
    """The entries that can occur in ``view``: a Latin entry whose first word begins some
    token (is one, for a whole-word entry of one word), any other whose text occurs."""
    toks = sorted(projection(view).tokens)
    ascii_only = view.isascii()
    out = []
    for e in _entries():
        if e.latin:
            i = bisect.bisect_left(toks, e.head)
            if i < len(toks) and toks[i].startswith(e.head):
                out.append(e)
        elif not ascii_only:
            out.append(e)       # the scanner skips to their first characters
    return tuple(out)


@lru_cache(maxsize=256)
def _scanner(entries: tuple[_Entry, ...]) -> "re.Pattern[str] | None":
    """One regex finding every entry (a trie of their texts, longer continuations first)."""
    if not entries:
        return None
    trie: dict = {}
    for e in entries:
        node = trie
        for c in e.word:
            node = node.setdefault(c, {})
        node[""] = {}

    def build(node: dict) -> str:
        alts = [(_GAP if c == " " else re.escape(c)) + build(node[c]) for c in sorted(k for k in node if k)]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return "(?:" + body + ")?" if "" in node else body

    return re.compile(build(trie))


def _bits_of(matched: str, entries: tuple[_Entry, ...]) -> tuple[int, int]:
    """(bits of entries matching ``matched`` from its start, bits of entries anywhere in it at a
    word start): what a longest-first match of an entry stands for (\"ignore the rest\" is
    also \"ignore\" and \"the rest\")."""
    flat = re.sub(_GAP, " ", matched)
    at_start = inside = 0
    for e in entries:
        i = flat.find(e.word)
        while i >= 0:
            j = i + len(e.word)
            if (i == 0 or not (e.latin and flat[i - 1].isalnum())) and not (
                    e.whole and j < len(flat) and flat[j].isalnum()):
                if i == 0:
                    at_start |= e.bits
                else:
                    inside |= e.bits
                break
            i = flat.find(e.word, i + 1)
    return at_start, inside


def segments(norm: str) -> list[tuple[int, int]]:
    """(start, end) of every segment of ``norm``: cut after sentence ends (which stay in their
    segment) and at line breaks and table cells (``|``, tab); a segment longer than MAX_SEG is
    cut into pieces of MAX_SEG."""
    a, b = _bounds(norm)
    return list(zip(a.tolist(), b.tolist()))


def _bounds(norm: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`segments` as two arrays (starts, ends): a segment runs from the end of one cut to
    the start of the next (plus its full stop), empty ones left out."""
    n = len(norm)
    cuts = np.array([m.span() for m in _CUT.finditer(norm)], dtype=np.int64).reshape(-1, 2)
    cps = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32)
    a = np.concatenate(([0], cuts[:, 1]))
    b = np.concatenate((cuts[:, 0] + np.isin(cps[cuts[:, 0]], _KEEP_CPS), [n]))
    ok = b > a
    a, b = a[ok], b[ok]
    count = (b - a + MAX_SEG - 1) // MAX_SEG        # pieces of MAX_SEG, the last one shorter
    if len(count) and count.max() > 1:
        first = np.repeat(np.cumsum(count) - count, count)
        a2 = np.repeat(a, count) + (np.arange(int(count.sum())) - first) * MAX_SEG
        b = np.minimum(a2 + MAX_SEG, np.repeat(b, count))
        a = a2
    return a, b


def features(norm: str) -> tuple[list[tuple[int, int]], list[int]]:
    """The segments of ``norm`` and each one's base features as a bit mask (bit i: BASE[i])."""
    view = norm.translate(_FOLD) if ("ı" in norm or "\u0307" in norm) else norm
    segs, masks = _features(view)
    if len(view) != len(norm):   # combining dots removed: offsets back to the normal form
        at = [i for i, c in enumerate(norm) if c != "\u0307"] + [len(norm)]
        segs = [(at[s], at[e]) for s, e in segs]
    return segs, masks


def _features(view: str) -> tuple[list[tuple[int, int]], list[int]]:
    starts, ends = _bounds(view)
    segs = list(zip(starts.tolist(), ends.tolist()))
    if not segs:
        return segs, []
    pos: list[int] = []     # each cue's position and feature bits, marked together at the end
    bits: list[int] = []
    entries = _present(view)
    n = len(view)
    info: dict[str, tuple[int, int, int, bool, bool]] = {}
    # two scanners: apart, each skips quickly to its own first characters
    for rx in (_scanner(tuple(e for e in entries if e.latin)), _scanner(tuple(e for e in entries if not e.latin))):
        if rx is None:
            continue
        for m in rx.finditer(view):
            word = m.group()
            inf = info.get(word)
            if inf is None:
                first, inside = _bits_of(word, entries)
                inf = info[word] = (first, inside, _open_bits(word, entries),
                                    word[0] in _WORD_CH, word[-1] in _WORD_CH)
            first, inside, open_bits, w0, w1 = inf
            a, b = m.span()
            if w0 and a and view[a - 1] in _WORD_CH:
                first = 0      # not at a word start
            elif w1 and b < n and view[b] in _WORD_CH:
                first &= open_bits
            if first | inside:
                pos.append(a)
                bits.append(first | inside)
    scans = [("role", _ROLE)]
    if "::" in view or "<" in view:
        scans.append(("role", _TAG))
    if any(c in view for c in TR_YOU_CUES):
        scans.append(("you", _TR_YOU))
    for name, brx in scans:
        b = 1 << _IDX[name]
        for m in brx.finditer(view):
            pos.append(m.start())
            bits.append(b)
    if any(c in view for c in _URL_CUES):
        b = 1 << _IDX["url"]
        for a in url_starts(view):
            pos.append(a)
            bits.append(b)
    return segs, _marks(view, starts, pos, bits)


def _marks(view: str, starts: np.ndarray, pos: list[int], bits: list[int]) -> list[int]:
    """Each segment's feature mask: the bits of the cues at ``pos`` that fall in it (a position
    between two segments counts for the one before), leaving out the cues inside a quote
    introduced as an example (data, not a cue)."""
    masks = np.zeros(len(starts), dtype=np.int64)
    if pos:
        p = np.array(pos, dtype=np.int64)
        b = np.array(bits, dtype=np.int64)
        framed = _framed(view)
        if framed:
            fr = np.array(framed, dtype=np.int64)
            j = np.searchsorted(fr[:, 0], p, side="right") - 1
            keep = ~((j >= 0) & (p < fr[np.maximum(j, 0), 1]))
            p, b = p[keep], b[keep]
        i = np.searchsorted(starts, p, side="right") - 1
        ok = i >= 0
        np.bitwise_or.at(masks, i[ok], b[ok])
    return masks.tolist()


def url_starts(view: str) -> list[int]:
    """Where each match of :data:`_URL` in ``view`` starts, as ``_URL.finditer(view)`` finds them.
    A match holds no whitespace and holds one of :data:`_URL_CUES`, so the regex runs only over
    the whitespace-delimited tokens that hold a cue (found by one literal search), each from
    its first character to the whitespace after it: the same matches, without trying the
    address's character classes at every position of the text."""
    out: list[int] = []
    n = len(view)
    hi = 0          # where the last token read ends (its whitespace), 0 at first
    for m in _URL_CUE.finditer(view):
        c = m.start()
        if c < hi:
            continue
        lo = max(max(view.rfind(w, hi, c) for w in _ASCII_WS), hi - 1) + 1
        w = _WS.search(view, m.end())
        hi = n if w is None else w.start()
        out.extend(u.start() for u in _URL.finditer(view, lo, hi))
    return out


def _framed(view: str) -> list[tuple[int, int]]:
    """The quotes the patterns' quotation filter treats as framed examples (non-overlapping, in order)."""
    from .context import Quotes

    out: list[tuple[int, int]] = []
    for a, b in Quotes(view).framed_spans():
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return out


def _open_bits(matched: str, entries: tuple[_Entry, ...]) -> int:
    """Bits of the entries matching ``matched`` from its start that need no word end (stems)."""
    flat = re.sub(_GAP, " ", matched)
    out = 0
    for e in entries:
        if not e.whole and flat.startswith(e.word):
            out |= e.bits
    return out


@lru_cache(maxsize=1)
def weights() -> tuple[float, dict[int, float], dict[tuple[int, int], float]]:
    """(bias, base weights by bit, pair weights by bit pair) from the shipped file, sha256 checked."""
    w = json.loads(read_checked(WEIGHTS_FILE, INTENT_SHA256, "the intent layer"))["weights"]
    base = {_IDX[f]: float(w[f]) for f in ALONE if f in w}
    pairs = {(_IDX[a], _IDX[b]): float(w[f"{a}*{b}"]) for a, b in PAIRS if f"{a}*{b}" in w}
    return float(w["bias"]), base, pairs


def vector(mask: int, role_count: int = 0) -> list[float]:
    """The feature vector (FEATURES order) of a segment's bit mask (for training)."""
    v = [float(mask >> _IDX[f] & 1) for f in ALONE]
    for a, b in PAIRS:
        ia, ib = _IDX[a], _IDX[b]
        v.append(float(role_count >= 2) if ia == ib else float((mask >> ia & 1) and (mask >> ib & 1)))
    return v


def _bits(*names: str) -> int:
    return sum(1 << _IDX[n] for n in names)


# A unit is scored only when it aims at the model: it addresses it, fakes a role header, frames
# a jailbreak, asks for hostile text or a secret, overrides earlier instructions, the task or the
# text itself, or asserts a verdict on the text itself ("all content here is benign").
_AIMED = _bits("addr", "role", "jailbreak", "toxic", "secret", "conceal")
_OVERRIDE = _bits("override")
_OVERRIDE_WHAT = _bits("earlier", "instr", "task", "content")
_VERDICT = _bits("verdict")
_SELF = _bits("content")


_ADDRESSED = _bits("addr", "role")
_DESCRIBE = _bits("describe")


def aimed(mask: int) -> bool:
    """Whether a unit with feature mask ``mask`` is scored (see :data:`_AIMED`); one that
    describes attacks or negates ("attackers write …", "never send …") only when it also
    addresses the model."""
    if mask & _DESCRIBE and not mask & _ADDRESSED:
        return False
    return (bool(mask & _AIMED) or bool(mask & _OVERRIDE and mask & _OVERRIDE_WHAT)
            or bool(mask & _VERDICT and mask & _SELF))


def units(norm: str) -> list[tuple[int, int, int, int]]:
    """(start, end, bit mask, role count) of every segment and window of two neighbouring
    segments that aims at the model (:func:`aimed`); any other unit scores the bias alone."""
    return [u[:4] for u in _units(norm)]


_Part = tuple[int, int, int]


def _units(norm: str) -> list[tuple[int, int, int, int, tuple[_Part, _Part] | None]]:
    """:func:`units`, each with its two segments (start, end, mask) when it is a window."""
    segs, masks = features(norm)
    role = 1 << _IDX["role"]
    desc = 1 << _IDX["describe"]
    # a segment next to one that describes attacks (training, a threat report) is read with it
    ctx = [m & desc for m in masks]
    for i in range(len(masks)):
        if i and ctx[i - 1] or i + 1 < len(masks) and ctx[i + 1]:
            masks[i] |= desc
    out: list[tuple[int, int, int, int, tuple[_Part, _Part] | None]] = []
    for i, (s, e) in enumerate(segs):
        if masks[i] and aimed(masks[i]):
            out.append((s, e, masks[i], 1 if masks[i] & role else 0, None))
        if i + 1 < len(segs) and masks[i] and masks[i + 1]:
            m = masks[i] | masks[i + 1]
            if aimed(m):
                s2, e2 = segs[i + 1]
                out.append((s, e2, m, (masks[i] & role > 0) + (masks[i + 1] & role > 0),
                            ((s, e, masks[i]), (s2, e2, masks[i + 1]))))
    return out


def score(norm: str) -> Score:
    """The highest unit score of the normal form ``norm`` and that unit's span."""
    bias, base, pairs = weights()
    best = Score(1.0 / (1.0 + math.exp(-bias)), 0, 0)
    best_z = bias
    seen: dict[tuple[int, int], float] = {}
    parts = None
    for s, e, m, rc, pr in _units(norm):
        z = seen.get((m, rc))
        if z is None:
            z = seen[(m, rc)] = linear(m, rc, bias, base, pairs)
        if z > best_z:
            best_z, best, parts = z, Score(1.0 / (1.0 + math.exp(-z)), s, e), pr
    if parts is not None:    # a window wins: name the part that scores higher on its own
        role = 1 << _IDX["role"]
        a, b = (linear(p[2], int(p[2] & role > 0), bias, base, pairs) for p in parts)
        p = parts[0] if a >= b else parts[1]
        best = Score(best.score, p[0], p[1])
    return best


def linear(m: int, rc: int, bias: float, base: dict[int, float], pairs: dict[tuple[int, int], float]) -> float:
    """The logit of a unit with base-feature mask ``m`` and ``rc`` role markers."""
    z = bias
    for i, w in base.items():
        if m >> i & 1:
            z += w
    for (ia, ib), w in pairs.items():
        if ia == ib:
            if rc >= 2:
                z += w
        elif m >> ia & 1 and m >> ib & 1:
            z += w
    return z
