"""``ctx load --db postgresql://…``: build the store exactly as for DuckDB, publish it as a generation.

The rows, derived tables, postings and store digest come from the same code path as an
embedded store (load/build.py, into a temporary DuckDB file); pg_store.publish then copies
every table into a new schema and switches readers to it in one transaction. PostgreSQL loads
are always full loads (the temporary file has no previous store to reuse rows from).

The temporary folder (``ctx-pg-load-*`` under ``$TMPDIR``) is removed on every path ctx can
see: success, an error, Ctrl-C, and ``SIGTERM`` (turned into an interrupt while the load runs
in the main thread). Only ``SIGKILL`` (or a power cut) can leave it behind.
"""

from __future__ import annotations

import signal
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator


@contextmanager
def _terminate_interrupts() -> Iterator[None]:
    """While the load runs, SIGTERM raises KeyboardInterrupt (as Ctrl-C does), so the
    publishing transaction rolls back and the temporary folder is removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_term(signum, frame):
        raise KeyboardInterrupt

    try:
        old = signal.signal(signal.SIGTERM, on_term)
    except (ValueError, OSError):       # no signals here (an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def load_pg(manifests_dir: Path, address: str, *, root: Path, sources_dir: Path | None = None, progress=None,
            on_table=None):
    from ..load.build import build_store
    from .pg_store import mask, publish, writer_lock

    kw = {"progress": progress} if progress else {}
    with _terminate_interrupts(), writer_lock(address):      # a second writer exits 3 before reading anything
        with tempfile.TemporaryDirectory(prefix="ctx-pg-load-") as tmp:
            built = Path(tmp) / "build.duckdb"
            try:
                res = build_store(manifests_dir, built, root=root, sources_dir=sources_dir, incremental=False, **kw)
            except OSError as e:
                from ..errors import StoreUnusableError

                raise StoreUnusableError(f"cannot build the store for {mask(address)} in {tmp}: "
                                         f"{e.strerror or e} (the current generation is unchanged)") from None
            info = publish(address, built, on_table=on_table)
    out = replace(res, db=f"{mask(address)} (generation {info['generation']})")
    out.generation = info["generation"]      # type: ignore[attr-defined]
    return out
