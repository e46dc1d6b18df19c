"""Per-object values derived at load time (exact token count, full-text shadow text, the
embedding vector), computed in a pool of worker processes so that they run on every core while
the main process keeps reading and validating records.

Workers are forked on Linux once the parent has loaded the encoding (so they inherit it and
no lock can be held by a half-finished load at fork time); the loading process has opened no
DuckDB connection yet. Spawned workers would re-run the caller's main module, so elsewhere
(and for small loads) everything runs in this process.
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any, Callable

from . import fts_text

Item = tuple[int, str, str, str]     # doc id, title, content, keys joined by spaces
BATCH = 1024


Derived = tuple[int, str, list[str], list[int]]


def derive(items: list[Item]) -> tuple[list[Derived], bytes]:
    """For each item: token count of the content, shadow text of title + content + keys, and
    the shadow text's distinct terms (first-seen order) with their frequencies; and the
    items' vectors as NDJSON lines ``{"doc_id": …, "vec": […]}`` (load/vectors.py reads them;
    a text without a token has no line)."""
    import orjson

    from ..embed.model import load_model
    from ..tokens import encoding
    from .vectors import embed_text

    enc = encoding()
    out = []
    for _, t, c, k in items:
        ts = [x for f in (t, c, k) for x in fts_text.terms(f)]
        tf: dict[str, int] = {}
        for x in ts:
            tf[x] = tf.get(x, 0) + 1
        out.append((len(enc.encode_ordinary(c)), " ".join(ts), list(tf), list(tf.values())))
    vecs = load_model().embed_many([embed_text(t, c) for _, t, c, _ in items])
    lines = b"".join(orjson.dumps({"doc_id": d, "vec": v}) + b"\n"
                     for (d, _, _, _), v in zip(items, vecs) if v is not None)
    return out, lines


def workers() -> int:
    """Worker processes: $CTX_LOAD_WORKERS, else one per core (at most 4); 1 where fork is
    unavailable."""
    import multiprocessing
    import sys

    if not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    env = os.environ.get("CTX_LOAD_WORKERS")
    if env and env.isdigit():
        return max(1, int(env))
    return min(os.cpu_count() or 1, 4)


def start_pool():
    """A pool of forked workers (the encoding loaded first, so they inherit it), or None when
    this machine or platform runs everything in this process."""
    n = workers()
    if n <= 1:
        return None
    import multiprocessing

    from ..embed.model import load_model
    from ..tokens import encoding

    encoding()
    load_model().matrix()
    return multiprocessing.get_context("fork").Pool(n)


class Deriver:
    """Feed batches of objects (``doc_id`` set) with ``add``; ``done`` is called with each
    batch, in order, once its values are set (``tokens``, ``fts_text``, ``terms``, ``tfs``),
    and with the batch's vector lines. Without a pool, or for the first batch (a small load
    never waits for a worker), it runs in this process."""

    def __init__(self, done: Callable[[list[dict[str, Any]], bytes], None], pool=None) -> None:
        self.done = done
        self.pool = pool
        self.pending: deque = deque()
        self.batches = 0
        self.n = getattr(pool, "_processes", 1) if pool is not None else 1

    def add(self, batch: list[dict[str, Any]]) -> None:
        items = [(o["doc_id"], o["title"], o["content"], " ".join(o["keys"])) for o in batch]
        self.batches += 1
        if self.pool is None or self.batches == 1:
            self._finish(batch, derive(items))
            return
        self.pending.append((batch, self.pool.apply_async(derive, (items,))))
        while len(self.pending) > 2 * self.n:
            b, r = self.pending.popleft()
            self._finish(b, r.get())

    def _finish(self, batch: list[dict[str, Any]], result: tuple[list[Derived], bytes]) -> None:
        values, vectors = result
        for o, (n, text, terms, tfs) in zip(batch, values):
            o["tokens"], o["fts_text"], o["terms"], o["tfs"] = n, text, terms, tfs
        self.done(batch, vectors)

    def close(self) -> None:
        while self.pending:
            b, r = self.pending.popleft()
            self._finish(b, r.get())
