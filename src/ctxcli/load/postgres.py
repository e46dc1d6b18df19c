"""``ctx load --db postgresql://…``: build the store exactly as for DuckDB, publish it as a generation.

The rows, derived tables, postings and store digest come from the same code path as an
embedded store (load/build.py, into a temporary DuckDB file); store/pg/admin.publish then copies
every table into a new schema and switches readers to it in one transaction. A load is
incremental as on DuckDB: the current generation is written back into the temporary file
first, and load/reuse.py reuses the rows of unchanged sources from it.

The temporary folder (``ctx-pg-load-*`` under ``$TMPDIR``) is removed on every path ctx can
see: success, an error, Ctrl-C, and ``SIGTERM`` (turned into an interrupt while the load runs
in the main thread). Only ``SIGKILL`` (or a power cut) can leave it behind.
"""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator


_AT_FORK = False


def _on_term(signum, frame):
    raise KeyboardInterrupt


def _default_term_in_child() -> None:
    if signal.getsignal(signal.SIGTERM) is _on_term:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def _terminate_interrupts() -> Iterator[None]:
    """While the load runs, SIGTERM raises KeyboardInterrupt (as Ctrl-C does), so the
    publishing transaction rolls back and the temporary folder is removed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    global _AT_FORK
    if not _AT_FORK:            # a forked worker of the build keeps the default (dies at once)
        os.register_at_fork(after_in_child=_default_term_in_child)
        _AT_FORK = True

    try:
        old = signal.signal(signal.SIGTERM, _on_term)
    except (ValueError, OSError):       # no signals here (an embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def load_pg(manifests_dir: Path, address: str, *, root: Path, sources_dir: Path | None = None, progress=None,
            on_table=None, incremental: bool = True, vectors: bool = False):
    """With ``incremental`` (the default), the current generation is first written back into
    the temporary DuckDB file (store/pg/admin.export_current), so the build reuses the rows of the
    sources whose digest is unchanged exactly as a DuckDB load does (load/reuse.py)."""
    from ..store.pg.admin import export_current, publish, writer_lock
    from ..util.passwords import mask
    from .build import build_store

    kw = {"progress": progress} if progress else {}
    with _terminate_interrupts(), writer_lock(address) as lock:      # a second writer exits 3 at once
        with tempfile.TemporaryDirectory(prefix="ctx-pg-load-") as tmp:
            built = Path(tmp) / "build.duckdb"
            try:
                prior = export_current(address, built, con=lock) if incremental else None
                res = build_store(manifests_dir, built, root=root, sources_dir=sources_dir,
                                  incremental=prior is not None, vectors=vectors, generations=False, **kw)
            except OSError as e:
                from ..errors import StoreUnusableError

                raise StoreUnusableError(f"cannot build the store for {mask(address)} in {tmp}: "
                                         f"{e.strerror or e} (the current generation is unchanged)") from None
            info = publish(address, built, on_table=on_table)
    out = replace(res, db=f"{mask(address)} (generation {info['generation']})")
    out.generation = info["generation"]      # type: ignore[attr-defined]
    return out
