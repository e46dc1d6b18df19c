"""The learned layer: a logistic regression over hashed character n-grams and words of the
normal form (:func:`.normalize.normalize_for_scan`), shipped as weights only
(``data/<MODEL>-<VERSION>.npz``, its sha256 checked at load) and evaluated in plain numpy.

Features of a text: every character 2-, 3- and 4-gram and every word and word pair, each
hashed into ``DIM`` buckets; a window's score is ``sigmoid(bias + mean weight of its
character grams + mean weight of its words)``. A text up to ``WINDOWS[0]`` characters is one
window; a longer one is scored in overlapping windows of each size in :data:`WINDOWS` and in
runs of one to three of its sentences (prefix sums, so every span costs O(1) after one pass),
and its score is the highest.

Weights that record ``framing`` 1 (trained with ``train_learned.py --framing``: issue 35's third
candidate, not shipped) are applied to the text with the quotes the patterns treat as framed
examples masked out (:func:`mask`, the spans of :meth:`.context.Quotes.framed_spans`): a
security-training note quoting an attack is scored on its own words, not on the quoted ones.
``ngram-lr@2`` records none and sees the whole text.

Weights are trained offline by ``tests/data/injection/train_learned.py`` (numpy only; the
training data is described in docs/security.md)."""

from __future__ import annotations

import re
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np

from ..injection_identity import LEARNED_NAME as NAME
from ..injection_identity import MODEL, THRESHOLD, WEIGHTS_SHA256
from ..injection_identity import MODEL_VERSION as VERSION
from .weights import Score, WeightsError, read_checked

__all__ = ["MODEL", "NAME", "THRESHOLD", "VERSION", "WEIGHTS_SHA256", "Score", "WeightsError", "score", "weights"]

DIM = 1 << 18
CHAR_NS = (2, 3, 4)
WINDOWS = ((240, 120), (720, 360))   # (size, stride) in characters of the normal form
MIN_CHARS = 80      # shorter texts are left to the patterns (too few n-grams to score reliably)
WEIGHTS_FILE = Path(__file__).with_name("data") / f"{MODEL}-{VERSION}.npz"

_P = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(64 - 18)
_WORD_SPLIT = re.compile(r"(\w+)")


def char_features(norm: str) -> tuple[np.ndarray, np.ndarray]:
    """(bucket, start offset) of every character n-gram (n in CHAR_NS) of ``norm``."""
    cps = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    buckets, starts = [], []
    h = np.zeros(len(cps), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for n in range(1, max(CHAR_NS) + 1):
            if len(cps) < n:
                break
            h = h[: len(cps) - n + 1] * _P + cps[n - 1:]
            if n in CHAR_NS:
                buckets.append(((h + np.uint64(n)) * _MIX) >> _SHIFT)
                starts.append(np.arange(len(h), dtype=np.int64))
    if not buckets:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(buckets).astype(np.int64), np.concatenate(starts)


def _char_sums(norm: str, wc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What ``_window_sums(len(norm), *reversed(char_features(norm)))`` gives with ``wc``'s
    weights -- the same floats, added in the same order -- without materialising the
    features: every n-gram starts at its own offset, so the per-offset sums are plain adds."""
    cps = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n = len(cps)
    tot = np.zeros(n)
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(1, max(CHAR_NS) + 1):
            if n < k:
                break
            h = h[: n - k + 1] * _P + cps[k - 1:]
            if k in CHAR_NS:
                b = (((h + np.uint64(k)) * _MIX) >> _SHIFT).astype(np.int64)
                tot[: len(b)] += wc[b]
    s = np.zeros(n + 1)
    s[1:] = np.cumsum(tot)
    # the count of n-grams starting before each offset j: min(j, n - k + 1) for each k
    at = np.arange(n + 1)
    c = np.zeros(n + 1)
    for k in CHAR_NS:
        c += np.minimum(at, max(n - k + 1, 0))
    return s, c


def word_features(norm: str) -> tuple[np.ndarray, np.ndarray]:
    """(bucket, start offset) of every word and every pair of neighbouring words."""
    parts = _WORD_SPLIT.split(norm)      # [gap, word, gap, word, ..., gap]
    words = parts[1::2]
    if not words:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    lens = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    pos = np.cumsum(lens)[0::2][: len(words)]
    crc = {w: zlib.crc32(w.encode()) for w in set(words)}    # words repeat: each hashed once
    h = np.fromiter(map(crc.__getitem__, words), dtype=np.uint64, count=len(words))
    with np.errstate(over="ignore"):
        uni = ((h + np.uint64(7)) * _MIX) >> _SHIFT
        bi = (((h[:-1] * _P + h[1:]) + np.uint64(11)) * _MIX) >> _SHIFT
    return np.concatenate([uni, bi]).astype(np.int64), np.concatenate([pos, pos[:-1]])


def mask(norm: str) -> tuple[str, np.ndarray | None]:
    """``norm`` without the spans the patterns' quotation filter treats as framed examples
    (:meth:`.context.Quotes.framed_spans`: a quote, inline code or fenced block introduced as
    an example), each replaced by one space; and the offset in ``norm`` of every character of
    the result and of its end (None when nothing was masked)."""
    from .context import Quotes

    framed = Quotes(norm).framed_spans()
    if not framed:
        return norm, None
    parts: list[str] = []
    offs: list[np.ndarray] = []
    at = 0
    for qs, qe in framed:
        parts += [norm[at:qs], " "]
        offs += [np.arange(at, qs, dtype=np.int64), np.array([qs], dtype=np.int64)]
        at = qe
    parts.append(norm[at:])
    offs += [np.arange(at, len(norm) + 1, dtype=np.int64)]
    return "".join(parts), np.concatenate(offs)


@lru_cache(maxsize=1)
def weights() -> tuple[np.ndarray, np.ndarray, float, bool]:
    """(char weights, word weights, bias, framing) from the shipped file, after its sha256 is
    checked; framing: the weights were trained on :func:`mask`'s text (recorded ``framing`` 1)."""
    data = read_checked(WEIGHTS_FILE, WEIGHTS_SHA256, "the learned detector")
    import io

    with np.load(io.BytesIO(data)) as z:
        framing = "framing" in z.files and int(z["framing"][0]) == 1
        return z["char"].astype(np.float32), z["word"].astype(np.float32), float(z["bias"][0]), framing


def _window_sums(n: int, pos: np.ndarray, vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums (length n+1) of vals and of counts by start offset."""
    s = np.zeros(n + 1)
    c = np.zeros(n + 1)
    if len(pos):
        s[1:] = np.cumsum(np.bincount(pos, weights=vals, minlength=n))
        c[1:] = np.cumsum(np.bincount(pos, minlength=n))
    return s, c


_ENDS = np.array([ord(c) for c in ".!?\n。！？"], dtype=np.uint32)


def _sentence_spans(norm: str) -> np.ndarray:
    """Runs of one, two or three sentences (cut after . ! ? 。 and line breaks) of MIN_CHARS
    to WINDOWS[-1][0] characters: an instruction among other sentences is scored on its own."""
    cps = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32)
    cuts = np.concatenate([[0], np.flatnonzero(np.isin(cps, _ENDS)) + 1, [len(cps)]])
    cuts = np.unique(cuts)
    out = [np.zeros((0, 2), dtype=np.int64)]
    for k in (1, 2, 3):
        if len(cuts) > k:
            sp = np.stack([cuts[:-k], cuts[k:]], axis=1)
            ln = sp[:, 1] - sp[:, 0]
            out.append(sp[(ln >= MIN_CHARS) & (ln <= WINDOWS[-1][0])])
    return np.concatenate(out).astype(np.int64)


def spans(norm: str) -> np.ndarray:
    """(start, end) of every window scored for ``norm`` (rows may repeat)."""
    n = len(norm)
    if n <= WINDOWS[0][0]:
        return np.array([[0, n]], dtype=np.int64)
    out: list[np.ndarray] = []
    for size, stride in WINDOWS:
        if size >= n:
            out.append(np.array([[0, n]], dtype=np.int64))
            continue
        st = np.minimum(np.arange(0, n - size + stride, stride), n - size)
        out.append(np.stack([st, st + size], axis=1))
    out.append(_sentence_spans(norm))
    return np.concatenate(out)


def score(norm: str) -> Score:
    """Highest window score of the normal form ``norm`` (0.0 for a text shorter than MIN_CHARS),
    and that window's span in ``norm``; with weights trained on masked text, of :func:`mask`'s
    text (the span mapped back to ``norm``)."""
    if len(norm) < MIN_CHARS:
        return Score(0.0, 0, 0)
    wc, ww, bias, framing = weights()
    offs = None
    if framing:
        norm, offs = mask(norm)
    if offs is not None and len(norm) < MIN_CHARS:      # what is left after masking
        return Score(0.0, 0, 0)
    wb, wp = word_features(norm)
    n = len(norm)
    cs, cc = _char_sums(norm, wc)
    ws, wn = _window_sums(n, wp, ww[wb])
    sp = spans(norm)
    a, b = sp[:, 0], sp[:, 1]
    z = bias + (cs[b] - cs[a]) / np.maximum(cc[b] - cc[a], 1) + (ws[b] - ws[a]) / np.maximum(wn[b] - wn[a], 1)
    i = int(np.argmax(z))
    start, end = int(a[i]), int(b[i])
    if offs is not None:
        start, end = int(offs[start]), int(offs[end])
    return Score(float(1.0 / (1.0 + np.exp(-z[i]))), start, end)
