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
from collections import Counter, deque
from typing import Any, Callable

from . import fts_text

BATCH = 1024


def row_line(row: dict[str, Any], cols) -> bytes:
    """One row of a load's NDJSON row file (load/build._Writer): the columns ``cols``, in order."""
    import orjson

    return orjson.dumps({c: row.get(c) for c in cols})


def derive(rows: list[dict[str, Any]], obj_cols: tuple[str, ...], term_cols: tuple[str, ...],
           vectors: bool = True) -> tuple[bytes, bytes, bytes]:
    """For each object row (``doc_id`` set): its dedup hash, the token count of its content,
    the shadow text of title + content + keys (masked for a masked source: indexed_text), and the shadow text's distinct terms
    (first-seen order) with their frequencies. Returns the rows as NDJSON lines of the
    objects and doc_terms files (columns ``obj_cols``, ``term_cols``, load/build._Writer's
    format) and their vectors as NDJSON lines ``{"doc_id": …, "vec": […]}`` (load/vectors.py
    reads them; a text without a token has no line; none at all without ``vectors``)."""
    import orjson

    from ..tokens import encoding
    from .parse import dedup_hash
    from .vectors import embed_text

    enc = encoding()
    dumps = orjson.dumps
    objs, terms = [], []
    texts = []
    terms_of = fts_text.terms
    for o in rows:
        title, content, keys = indexed_text(o)
        texts.append(embed_text(title, content))
        key_text = " ".join(keys)
        ts = terms_of(title)
        ts += terms_of(content)
        ts += terms_of(key_text)
        tf = Counter(ts)        # first-seen order, as the dict it replaces
        # the terms only the unmasked text has, for subjects holding an unmasking scope: a field
        # the mask left as it was has the same terms, all of them counted in ``tf`` already
        raw: dict[str, int] = {}
        if (o.get("_redact") or {}).get("unless_scopes"):
            for masked, plain in ((title, o["title"]), (content, o["content"]), (key_text, " ".join(o["keys"]))):
                if masked == plain:
                    continue
                for x in terms_of(plain):
                    if x not in tf:
                        raw[x] = raw.get(x, 0) + 1
        o["raw_terms"], o["raw_tfs"] = list(raw), list(raw.values())
        o["dedup_hash"] = dedup_hash(o["content"])
        o["tokens"], o["fts_text"], o["terms"], o["tfs"] = \
            len(enc.encode_ordinary(o["content"])), " ".join(ts), list(tf), list(tf.values())
        objs.append(row_line(o, obj_cols))
        terms.append(row_line(o, term_cols))
    if not vectors:
        return b"\n".join(objs) + b"\n", b"\n".join(terms) + b"\n", b""
    from ..embed.model import load_model

    vecs = load_model().embed_many(texts)
    lines = b"".join(dumps({"doc_id": o["doc_id"], "vec": v}) + b"\n" for o, v in zip(rows, vecs) if v is not None)
    return b"\n".join(objs) + b"\n", b"\n".join(terms) + b"\n", lines


def indexed_text(o: dict[str, Any]) -> tuple[str | None, str, list[str]]:
    """(title, content, keys) as the full-text index and the vector see them: masked by the
    source's redaction policy (``_redact``, set by load/build.py), so that no subject's ranks or
    scores depend on text a mask hides from it (docs/security.md)."""
    policy = o.get("_redact")
    if not policy:
        return o["title"], o["content"], o["keys"]
    from ..util.masking import mask, patterns

    pats = patterns(policy)
    title = mask(o["title"], pats) if o["title"] else o["title"]
    return title, mask(o["content"], pats), [mask(k, pats) for k in o["keys"]]


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


def start_pool(vectors: bool = True):
    """A pool of forked workers (the encoding, and with ``vectors`` the embedding matrix, loaded
    first, so they inherit it), or None when this machine or platform runs everything in this
    process."""
    n = workers()
    if n <= 1:
        return None
    import multiprocessing

    from ..tokens import encoding

    encoding()
    if vectors:
        from ..embed.model import load_model

        load_model().matrix()
    import signal

    # SIGINT stays blocked while the workers are forked, so that a Ctrl-C arriving before a
    # worker's initializer has run cannot interrupt that worker (a pool with a worker killed
    # mid-start can hang on terminate); the parent takes a pending Ctrl-C once unblocked.
    # The workers are forked with the default SIGTERM: a Python handler (the load's, util/signals)
    # runs only when the interpreter gets back to its loop, so a worker stuck right after the fork
    # (a lock another thread of this process held) would never end on pool.terminate().
    term = signal.getsignal(signal.SIGTERM)
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        if term not in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        return multiprocessing.get_context("fork").Pool(n, initializer=_ignore_interrupt)
    finally:
        if term not in (signal.SIG_DFL, None):
            signal.signal(signal.SIGTERM, term)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _ignore_interrupt() -> None:
    """Workers leave Ctrl-C to the parent, which stops the pool and prints one line (no
    traceback per worker). A worker is forked with SIGINT blocked (see start_pool): it
    ignores the signal first, then unblocks it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def derive_spooled(path: str, obj_cols: tuple[str, ...], term_cols: tuple[str, ...],
                   vectors: bool = True) -> tuple[bytes, bytes, bytes]:
    """:func:`derive` for a batch the parent spooled to ``path`` (a pickle; removed once read)."""
    import pickle

    with open(path, "rb") as fh:
        rows = pickle.load(fh)
    os.unlink(path)
    return derive(rows, obj_cols, term_cols, vectors)


class Deriver:
    """Feed batches of object rows (``doc_id`` set) with ``add``; ``done`` is called, batch
    after batch in order, with the number of rows and what :func:`derive` made of them.
    Without a pool, or for the first batch (a small load never waits for a worker), it runs in
    this process.

    A batch goes to a worker as a file in ``spool`` (the load's temporary folder), the task
    itself only naming it: a task larger than the pipe's buffer would leave the pool's
    task-handler thread blocked mid-write when Ctrl-C stops the workers, and
    ``Pool.terminate()`` then waits for that thread for ever (a hang seen in the suite)."""

    def __init__(self, done: Callable[[int, tuple[bytes, bytes, bytes]], None], obj_cols: tuple[str, ...],
                 term_cols: tuple[str, ...], pool=None, vectors: bool = True, spool: str = "") -> None:
        self.done = done
        self.cols = (obj_cols, term_cols, vectors)
        self.pool = pool
        self.spool = spool
        self.pending: deque = deque()
        self.batches = 0
        self.n = getattr(pool, "_processes", 1) if pool is not None else 1

    def add(self, batch: list[dict[str, Any]]) -> None:
        self.batches += 1
        if self.pool is None or self.batches == 1:
            self.done(len(batch), derive(batch, *self.cols))
            return
        import pickle

        path = os.path.join(self.spool, f"batch-{os.getpid()}-{self.batches}.pickle")
        with open(path, "wb") as fh:
            pickle.dump(batch, fh, protocol=pickle.HIGHEST_PROTOCOL)
        self.pending.append((len(batch), self.pool.apply_async(derive_spooled, (path, *self.cols))))
        while len(self.pending) > 2 * self.n:
            n, r = self.pending.popleft()
            self.done(n, r.get())

    def close(self) -> None:
        while self.pending:
            n, r = self.pending.popleft()
            self.done(n, r.get())
