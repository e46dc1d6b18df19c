"""Opening the store: read-only readers, lockdown, the writer's lock."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..errors import StoreBusyError, StoreError, StoreUnusableError, UsageError
from .schema import SCHEMA_VERSION


def lockdown(con) -> None:
    """After this, the connection cannot read or write files other than the store, install
    or auto-load extensions, or change these settings."""
    con.execute("SET enable_external_access=false; SET autoinstall_known_extensions=false; "
                "SET autoload_known_extensions=false; SET lock_configuration=true")     # one round trip


def _busy(e: Exception) -> bool:
    msg = str(e).lower()      # not just "lock": "Corrupt database file … in block at …" is damage
    return "could not set lock" in msg or "conflicting lock" in msg


@contextmanager
def writer_lock(db: Path) -> Iterator[None]:
    """Hold the store's writer lock (``flock`` on ``<store>.lock``) for the duration of a load.

    A second writer does not wait: it raises StoreBusyError before it reads or writes
    anything. The lock file is created once and kept (removing it would let a third writer
    lock a fresh file while the second still holds the old one); it holds no data.
    """
    from filelock import FileLock, Timeout

    lock_path = Path(str(db) + ".lock")
    if not db.parent.is_dir():
        try:
            db.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UsageError(f"--db {db}: cannot create its folder ({e.strerror})") from None
    # filelock opens the file without following a symbolic link and keeps it after release
    lock = FileLock(lock_path, timeout=0, mode=0o644)
    try:
        lock.acquire()
    except Timeout:             # (an OSError too: caught first)
        raise StoreBusyError(f"store {db} is busy: another `ctx load` is writing it; retry when it has "
                             f"finished") from None
    except OSError as e:
        raise StoreUnusableError(f"cannot write the store {db}: {e.strerror} (its lock file {lock_path.name}; "
                                 f"the previous store, if any, is unchanged)") from None
    try:
        yield
    finally:
        lock.release()


def no_pandas_probes() -> None:
    """DuckDB's Python client tries ``import pandas`` whenever it binds parameters (to recognise
    DataFrames). Without pandas installed, Python does not cache the failure, so every try
    searches ``sys.path`` again: 438 failed imports per investigation, ~50-100 ms at 1M objects
    (benchmarks/results/performance-history.md). When pandas is not installed, record that once
    in ``sys.modules`` (``None`` makes the import fail at once, as documented for the import
    system)."""
    import importlib.util
    import sys

    if "pandas" not in sys.modules and importlib.util.find_spec("pandas") is None:
        sys.modules["pandas"] = None


def open_reader(db: Path):
    """A read-only, locked-down connection; raises StoreError / StoreBusyError, never a DuckDB error."""
    import duckdb

    no_pandas_probes()

    if not db.is_file():
        raise StoreError(f"no store at {db}; run `ctx load` first")
    try:
        con = duckdb.connect(str(db), read_only=True, config={"threads": "2"})
    except duckdb.Error as e:
        if _busy(e):
            raise StoreBusyError(f"store {db} is busy (another process holds it for writing); retry") from None
        raise StoreUnusableError(f"cannot open store {db}: {_first_line(e)}; rebuild it with `ctx load`") from None
    try:
        lockdown(con)
        row = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    except duckdb.CatalogException:
        con.close()
        raise StoreError(f"{db} is not a ctx store (no schema record); run `ctx load` to rebuild it") from None
    except duckdb.Error as e:
        con.close()
        raise StoreUnusableError(f"store {db} is damaged: {_first_line(e)}; rebuild it with `ctx load`") from None
    try:
        version = int(row[0]) if row else 0
    except (TypeError, ValueError):
        version = 0
    if version != SCHEMA_VERSION:
        con.close()
        raise StoreError(f"store {db} has schema version {version}, this ctx needs {SCHEMA_VERSION}; "
                         f"run `ctx load` to rebuild it")
    return con


def _first_line(e: Exception) -> str:
    return (str(e).splitlines() or [type(e).__name__])[0]


@contextmanager
def store_errors(db: Path | str) -> Iterator[None]:
    """Turn a DuckDB failure while reading the store (a corrupt block, a truncated or overwritten
    file) into one line, exit 3. Errors in ctx's own SQL (parser, binder) stay bugs."""
    import duckdb

    try:
        yield
    except (duckdb.ParserException, duckdb.BinderException):
        raise
    except duckdb.Error as e:
        raise StoreUnusableError(f"store {db} is damaged: {_first_line(e)}; rebuild it with `ctx load`") from None


def store_meta(con) -> dict[str, str]:
    return dict(con.execute("SELECT key, value FROM meta ORDER BY key").fetchall())
