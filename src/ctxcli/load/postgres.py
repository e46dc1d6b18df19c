"""``ctx load --db postgresql://…``: build the store exactly as for DuckDB, publish it as a generation.

The rows, derived tables, postings and store digest come from the same code path as an
embedded store (load/build.py, into a temporary DuckDB file); store/pg/admin.publish then copies
every table into a new schema and switches readers to it in one transaction. A load is
incremental as on DuckDB: the current generation is written back into the temporary file
first, and load/reuse.py reuses the rows of unchanged sources from it.

The temporary folder (``ctx-pg-load-*`` under ``$TMPDIR``) is removed on every path ctx can
see: success, an error, Ctrl-C, and ``SIGTERM`` (turned into an interrupt while the load runs
in the main thread: util/signals.py). Only ``SIGKILL`` (or a power cut) can leave it behind.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path


def load_pg(manifests_dir: Path, address: str, *, root: Path, sources_dir: Path | None = None, progress=None,
            on_table=None, incremental: bool = True, vectors: bool = False):
    """With ``incremental`` (the default), the current generation is first written back into
    the temporary DuckDB file (store/pg/admin.export_current), so the build reuses the rows of the
    sources whose digest is unchanged exactly as a DuckDB load does (load/reuse.py)."""
    from ..store.pg.admin import export_current, publish, writer_lock
    from ..util.passwords import mask
    from .build import build_store

    kw = {"progress": progress} if progress else {}
    from ..util.signals import terminate_interrupts

    with terminate_interrupts(), writer_lock(address) as lock:      # a second writer exits 3 at once
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
