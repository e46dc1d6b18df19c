"""``ctx load --db postgresql://…``: build the store exactly as for DuckDB, publish it as a generation.

The rows, derived tables, postings and store digest come from the same code path as an
embedded store (load/build.py, into a temporary DuckDB file); pg_store.publish then copies
every table into a new schema and switches readers to it in one transaction. PostgreSQL loads
are always full loads (the temporary file has no previous store to reuse rows from).
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path


def load_pg(manifests_dir: Path, address: str, *, root: Path, sources_dir: Path | None = None, progress=None,
            on_table=None):
    from ..load.build import build_store
    from .pg_store import mask, publish, writer_lock

    kw = {"progress": progress} if progress else {}
    with writer_lock(address):      # a second writer exits 3 before reading anything
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
