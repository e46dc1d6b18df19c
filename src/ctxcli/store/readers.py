"""Readers kept open by a long-running process (``ctx serve``): one per store, reopened only
when the store changed.

A CLI command opens the store once per process and closes it (store/__init__.py:open_store).
A warm server answers many tool calls; opening a DuckDB reader (connect, lockdown, the schema
check) and closing it cost ~18 % of an agent step at 10k objects
(benchmarks/results/performance-history.md). For an address the server has asked to keep
(:func:`keep`), :func:`lease` hands each call its own view of one kept reader:

* **DuckDB**: one read-only, locked-down connection per store file, kept open; each call gets
  its own ``cursor()`` of it (a connection of its own on the same database: no connection is
  shared between threads; the read-only mode and the locked configuration are the database's,
  so every cursor keeps them). Before each lease the store file's identity (device, inode,
  size, modification time) is compared with the one the reader was opened on: ``ctx load``
  publishes by renaming a new file onto the path (a new inode, and a new generation), so a
  changed identity means a new store — the old reader is closed once the calls still using it
  have finished, and a new one is opened. (DuckDB's Python client hands a new ``connect`` of a
  path the database still open under that path, so the old one must be closed first: a call
  waits for the other calls on the old reader, never for its own.)
* **PostgreSQL**: connections already come from a pool (store/pg/connect.py). Each call still
  reads in its own snapshot and resolves the current generation first (one statement); the
  layout check and the generation's ``meta`` are read only when that generation is not the
  one the server last saw.

What is cached from a store (its ``meta`` and the small registry tables every investigation
reads: sources per tenant, source access and governance, relation access, mask groups) lives
in the kept reader's ``memo`` and is dropped with it. The store's secret is not cached (it is
read beside the store at each call, as before). :func:`opens` counts the readers opened per
address (the tests' hook).
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path
from typing import Any

_LOCK = threading.Condition()
_KEPT: dict[str, "_Slot"] = {}
_OPENS: Counter = Counter()


def _key(address) -> str:
    from .address import is_postgres

    return address if is_postgres(address) else os.path.abspath(str(address))


class _Reader:
    """One open DuckDB connection on one store file (or one PostgreSQL generation), with the
    calls using it and what was cached from it."""

    def __init__(self, con, ident, generation: int | None, meta: dict[str, str] | None = None) -> None:
        self.con, self.ident, self.generation = con, ident, generation
        self.meta = meta
        self.memo: dict[Any, Any] = {}
        self.leases: Counter = Counter()        # thread id -> open leases
        self.retired = False

    def close(self) -> None:
        self.memo.clear()
        if self.con is not None:
            self.con.close()
            self.con = None


class _Slot:
    def __init__(self) -> None:
        self.reader: _Reader | None = None


def keep(address) -> None:
    """From now on, :func:`ctxcli.store.open_store` of ``address`` (its current generation)
    leases a kept reader (this module) instead of opening one."""
    with _LOCK:
        _KEPT.setdefault(_key(address), _Slot())


def is_kept(address) -> bool:
    return _key(address) in _KEPT


def opens(address) -> int:
    """How many readers this process opened on ``address`` while it was kept."""
    return _OPENS[_key(address)]


def close_all() -> None:
    """Close every kept reader and forget the addresses (a server shutting down; tests)."""
    with _LOCK:
        for slot in _KEPT.values():
            if slot.reader is not None and slot.reader.con is not None:
                slot.reader.close()
        _KEPT.clear()
        _OPENS.clear()


# ------------------------------------------------------------------------------------ DuckDB
def file_identity(db: Path) -> tuple[int, int, int, int] | None:
    """(device, inode, size, modification time in ns) of the store file; None when missing."""
    try:
        st = os.stat(db)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _open_duckdb(db: Path) -> _Reader:
    """A reader whose identity and generation are those of the file it opened (a load may
    publish between the look-ups and the open: look again, as open_store does)."""
    from . import generations as gens
    from .db import open_reader

    for _ in range(3):
        before, gen = file_identity(db), gens.current(db)
        con = open_reader(db)
        if file_identity(db) == before and gens.current(db) == gen:
            return _Reader(con, before, gen)
        con.close()
    return _Reader(open_reader(db), None, None)      # never reused: the next lease reopens


def lease(address):
    """A read-only :class:`DuckDBStore` on the kept reader of ``address`` (opened or reopened
    as needed); its ``close`` ends the lease, not the reader."""
    from .duckdb_store import DuckDBStore

    key, db, me = _key(address), Path(address), threading.get_ident()
    with _LOCK:
        slot = _KEPT.setdefault(key, _Slot())
        while True:
            r = slot.reader
            ident = file_identity(db)
            if r is not None and (r.ident == ident and ident is not None or r.leases[me]):
                break       # unchanged (or this thread is inside a call on it: one call, one store)
            if r is not None:
                r.retired = True
                if sum(r.leases.values()):
                    _LOCK.wait()        # other calls still read the old store: after them
                    continue
                r.close()
                slot.reader = None
            slot.reader = _open_duckdb(db)
            _OPENS[key] += 1
        r.leases[me] += 1
        try:
            cur = r.con.cursor()
        except BaseException:
            _release(r, me)
            raise

    def done() -> None:
        cur.close()
        _release(r, me)

    return DuckDBStore(cur, address, r.generation, on_close=done, memo=r.memo)


def _release(r: _Reader, me: int) -> None:
    with _LOCK:
        r.leases[me] -= 1
        if not r.leases[me]:
            del r.leases[me]
        if r.retired and not r.leases:
            r.close()
        _LOCK.notify_all()


# ------------------------------------------------------------------------------------ PostgreSQL
def pg_seen(address: str, generation: int):
    """The kept reader state of generation ``generation`` of ``address`` when the server has
    already opened it (its meta and memo), else None (the caller reads them and calls
    :func:`pg_opened`)."""
    with _LOCK:
        slot = _KEPT.get(address)
        r = slot.reader if slot is not None else None
        return r if r is not None and r.generation == generation else None


def pg_opened(address: str, generation: int, meta: dict[str, str]) -> _Reader:
    """Record that ``address`` now serves ``generation`` (its meta read); the previous
    generation's cache is dropped."""
    with _LOCK:
        slot = _KEPT.setdefault(address, _Slot())
        if slot.reader is not None:
            slot.reader.close()
        slot.reader = _Reader(None, None, generation, dict(meta))
        _OPENS[address] += 1
        return slot.reader
