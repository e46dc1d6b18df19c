"""Bridge to the untrusted-instruction detector (``ctxcli.injection``), imported on first
use so commands that never gate (``--help``, ``sources``) do not pay for compiling it.

Short fields (identifiers, locators, versions: every header string the evidence block
renders) are scanned together as one text, one per line, and only when that text has a
finding one by one, so the field is named; a finding that needs several fields together
is reported for the field ``header fields``. The learned layer's score depends on the
text it is given, so when the joined text has no finding each short field of at least
``learned.MIN_CHARS`` characters is also scored on its own (as ``ctx eval`` reads it)."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict

_SHORT = 300  # characters: a field this short is scanned with the other short fields

# The verdicts of this process (docs/security.md "The verdict memo"): a warm `ctx serve` meets
# the same objects again in later steps and rounds, and the scan is a deterministic function of
# the fields' names and texts and of the detector (its identity, ``injection_identity``). The
# key is a keyed BLAKE2b digest of all of them under a random key drawn at start-up, so it is
# never the same in two processes, cannot be steered to a collision by a crafted text, and is
# kept in memory only (never written, never in an output); an entry holds no text. Bounded:
# the least recently used verdict goes beyond MEMO_MAX entries.
MEMO_MAX = 4096
_SALT = os.urandom(32)
_MEMO: OrderedDict[bytes, tuple[str, str, str] | None] = OrderedDict()
_LOCK = threading.Lock()
_STATS = {"hits": 0, "scans": 0, "stored": 0, "stale": 0}


def _detector() -> bytes:
    """What a verdict depends on besides the fields: the detector's identity (read at each
    call, so a changed identity misses every kept verdict) and this adapter's own split."""
    return detector_id().encode()


def detector_id() -> str:
    """The identity a stored verdict is kept with (``injection_verdicts.detector``): the
    detector's (:func:`ctxcli.injection_identity.verdict_identity`: version, rules digest, both
    learned layers' models, weights sha256 and thresholds, the intent word lists' digest) and
    this adapter's split. Read at each call."""
    from .. import injection_identity as ident

    return hashlib.sha256(f"{ident.verdict_identity()} short={_SHORT}".encode()).hexdigest()


def fields_sha256(fields: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str:
    """sha256 (hex) of the scanned fields, each name and text length-prefixed: the text a stored
    verdict was computed from (``injection_verdicts.fields_sha256``). Unkeyed, as it is stored;
    a full sha256, so no crafted text can be steered onto another's digest."""
    h = hashlib.sha256()
    for name, text in fields:
        for part in (name, text):
            if part is None:            # (a NULL title): unlike any string
                h.update(b"\xff" * 8)
                continue
            b = part.encode("utf-8", "surrogatepass")
            h.update(len(b).to_bytes(8, "big"))
            h.update(b)
    return h.hexdigest()


def memo_key(fields: tuple[tuple[str, str], ...], detector: bytes | None = None) -> bytes:
    """The memo's key of ``fields``: each name and text length-prefixed, so no two different
    field lists give the same input; ``detector``: the running detector's identity
    (:func:`_detector`) when the caller read it once for a batch."""
    h = hashlib.blake2b(key=_SALT, digest_size=16)
    h.update(_detector() if detector is None else detector)
    for name, text in fields:
        for part in (name.encode("utf-8", "surrogatepass"), text.encode("utf-8", "surrogatepass")):
            h.update(len(part).to_bytes(8, "big"))
            h.update(part)
    return h.digest()


def memo_info() -> dict[str, int]:
    """Verdicts served from the memo (``hits``), scans made (``scans``), entries kept and the bound."""
    return {**{k: _STATS[k] for k in ("hits", "scans")}, "entries": len(_MEMO), "max": MEMO_MAX}


def stored_info() -> dict[str, int]:
    """Verdicts taken from the store (``used``) and stored ones passed over for a scan
    (``stale``: another detector, or fields other than those it was computed from)."""
    return {"used": _STATS["stored"], "stale": _STATS["stale"]}


def memo_clear() -> None:
    with _LOCK:
        _MEMO.clear()
        _STATS.update(hits=0, scans=0, stored=0, stale=0)


def gate_scan(fields: list[tuple[str, str]], stored: tuple | None) -> tuple[str, str, str] | None:
    """The verdict of the evidence gate's ``fields``: the one stored at load (``stored``:
    (detector id, fields sha256, verdict or None), load/verdicts.py) when it was computed by
    this detector from exactly these fields, else :func:`scan` (an upgraded detector, or a text
    that differs from the stored one, is never judged by a stale verdict)."""
    if stored is not None:
        det, digest, hit = stored
        if det == detector_id() and digest == fields_sha256(fields):
            with _LOCK:
                _STATS["stored"] += 1
            return hit
        with _LOCK:
            _STATS["stale"] += 1
    return scan(fields)


def scan(fields: list[tuple[str, str]]) -> tuple[str, str, str] | None:
    """(field, pattern id, label) of the first finding, or None. Results are memoised per
    process (above): an object met again in a later step or retrieval round is not scanned twice."""
    return scan_many([fields])[0]


def scan_many(batch: list[list[tuple[str, str]]], scanner=None) -> list[tuple[str, str, str] | None]:
    """:func:`scan` of each field list of ``batch``; the ones the memo does not hold are
    scanned by ``scanner`` (a list of field tuples -> their verdicts, in order; default: one by
    one in this process — a load passes its worker pool) and kept in the memo."""
    det = _detector()       # (read once: a load passes thousands of objects)
    keys = [memo_key(tuple(f), det) for f in batch]
    out: list = [None] * len(batch)
    todo: list[int] = []
    with _LOCK:
        for i, k in enumerate(keys):
            if k in _MEMO:
                _MEMO.move_to_end(k)
                _STATS["hits"] += 1
                out[i] = _MEMO[k]
            else:
                todo.append(i)
    if todo:
        got = (scanner or scan_fresh)([tuple(batch[i]) for i in todo])
        with _LOCK:
            _STATS["scans"] += len(todo)
            for i, hit in zip(todo, got):
                out[i] = _MEMO[keys[i]] = hit
                _MEMO.move_to_end(keys[i])
            while len(_MEMO) > MEMO_MAX:
                _MEMO.popitem(last=False)
    return out


def scan_fresh(batch: list[tuple[tuple[str, str], ...]]) -> list[tuple[str, str, str] | None]:
    """The verdicts of ``batch`` (field tuples), each scanned, the memo neither read nor filled
    (a load's worker runs this: what it learns would be lost with it)."""
    return [_scan(f) for f in batch]


def _scan(fields: tuple[tuple[str, str], ...]) -> tuple[str, str, str] | None:
    from ..injection import learned, learned_finding, scan_fields

    long_fields = [(n, t) for n, t in fields if t and (len(t) > _SHORT or n in ("title", "content"))]
    short = [(n, t) for n, t in fields if t and not (len(t) > _SHORT or n in ("title", "content"))]
    hit = scan_fields(long_fields)
    if hit is None and short:
        joined = scan_fields([("header fields", "\n".join(t for _, t in short))])
        if joined is not None:
            hit = scan_fields(short) or joined
        else:   # the n-gram score depends on the text's extent: each short field on its own too
            # (the intent layer's does not: every joined field is its own segment)
            for n, t in short:
                f = learned_finding(t) if len(t) >= learned.MIN_CHARS else None
                if f is not None:
                    return n, f.pattern, f.label
    if hit is None:
        return None
    fld, m = hit
    return fld, m.pattern, m.label
