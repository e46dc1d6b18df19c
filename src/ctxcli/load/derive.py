"""Per-object values derived at load time (exact token count, full-text shadow text), computed
in a pool of worker processes so that they run on every core while the main process keeps
reading and validating records.

Workers are spawned (not forked: the loading process may hold threads) and import only this
module, the tokenizer and the shadow-text function. Small loads never start a pool.
"""

from __future__ import annotations

import os
from collections import deque
from typing import Any, Callable

from . import fts_text

Item = tuple[str, str, str]          # title, content, keys joined by spaces
BATCH = 1024


def derive(items: list[Item]) -> list[tuple[int, str]]:
    """(token count of the content, shadow text of title + content + keys) for each item."""
    from ..tokens import encoding

    enc = encoding()
    return [(len(enc.encode_ordinary(c)), fts_text.shadow_text(t, c, k)) for t, c, k in items]


def _init() -> None:
    from ..tokens import encoding

    encoding()


def workers() -> int:
    env = os.environ.get("CTX_LOAD_WORKERS")
    if env and env.isdigit():
        return int(env)
    return min(os.cpu_count() or 1, 4)


class Deriver:
    """Feed batches of objects with ``add``; ``done`` is called with each batch, in order, once
    its values are set (``tokens``, ``fts_text``). The pool starts with the second batch; with
    one worker (or one batch) everything runs in this process."""

    def __init__(self, done: Callable[[list[dict[str, Any]]], None]) -> None:
        self.done = done
        self.pool = None
        self.pending: deque = deque()
        self.batches = 0
        self.n = workers()

    def add(self, batch: list[dict[str, Any]]) -> None:
        items = [(o["title"], o["content"], " ".join(o["keys"])) for o in batch]
        self.batches += 1
        if self.pool is None and self.n > 1 and self.batches > 1:
            import multiprocessing

            self.pool = multiprocessing.get_context("spawn").Pool(self.n, initializer=_init)
        if self.pool is None:
            self._finish(batch, derive(items))
            return
        self.pending.append((batch, self.pool.apply_async(derive, (items,))))
        while len(self.pending) > 2 * self.n:
            b, r = self.pending.popleft()
            self._finish(b, r.get())

    def _finish(self, batch: list[dict[str, Any]], values: list[tuple[int, str]]) -> None:
        for o, (n, text) in zip(batch, values):
            o["tokens"], o["fts_text"] = n, text
        self.done(batch)

    def close(self) -> None:
        while self.pending:
            b, r = self.pending.popleft()
            self._finish(b, r.get())
        self.shutdown()

    def shutdown(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None
