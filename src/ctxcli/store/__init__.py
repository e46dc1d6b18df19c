"""The store layer: one interface (base.Store), two backends chosen by the store address.

A path names an embedded DuckDB file (duckdb_store); ``postgresql://…`` names a shared
PostgreSQL server (store/pg/). Nothing above this package knows which one it has.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .address import PG_PREFIXES, is_postgres  # noqa: F401  (ctxcli.store.is_postgres)


def open_store(address, generation: int | None = None):
    """A read-only :class:`base.Store` on the store at ``address``: its current generation, or
    the kept ``generation`` (None when that one is no longer kept: the caller decides);
    raises StoreError / StoreBusyError / StoreUnusableError, never a driver error."""
    if is_postgres(address):
        from .pg.reader import open_pg

        return open_pg(address, generation)
    from . import generations as gens
    from . import readers
    from .db import open_reader
    from .duckdb_store import DuckDBStore

    if generation is None and readers.is_kept(address):
        return readers.lease(address)       # ctx serve: the kept reader, reopened when the file changed
    db = Path(address)
    # A connection reads the file it opened to the end (a load publishes a new file, never
    # writes into this one): the small tables every investigation reads again (the source
    # registry, relation access, meta) are read once per connection (``memo``).
    if generation is not None:
        p = gens.path_of(db, generation)
        return None if p is None else DuckDBStore(open_reader(p), address, generation, memo={})
    for _ in range(3):      # a load may publish between the open and the look-up: look again
        before = gens.current(db)
        con = open_reader(db)
        if gens.current(db) == before:
            return DuckDBStore(con, address, before, memo={})
        con.close()
    return DuckDBStore(open_reader(db), address, None, memo={})


def kept_generations(address) -> list[tuple[int, bool]]:
    """(number, current) of every kept generation of the store at ``address``, newest first."""
    if is_postgres(address):
        from .pg.admin import generations

        return [(g["generation"], g["current"]) for g in reversed(generations(address))]
    from . import generations as gens

    return [(g["generation"], g["current"]) for g in gens.listing(Path(address))]


def drop_generations(address, numbers) -> list[int]:
    """Remove the kept generations ``numbers`` of the store at ``address`` (never the current
    one: a load replaces it). Returns those removed, in order."""
    if is_postgres(address):
        from .pg.admin import drop_generations as drop_pg

        return drop_pg(address, numbers)
    from . import generations as gens

    return gens.drop(Path(address), numbers)


def keep_connections(address, *, size: int = 4) -> None:
    """For a long-running process (ctx serve): keep the store at ``address`` open between the
    calls (store/readers.py). A DuckDB file: one reader, reopened when a load replaced the
    file; PostgreSQL: up to ``size`` pooled server connections, each open still resolving the
    current generation, the generation's meta read again only when it changed."""
    from . import readers

    if is_postgres(address):
        from .pg.connect import keep_pool

        keep_pool(address, size=size)
    readers.keep(address)


def kept_opens(address) -> int:
    """How many readers this process opened on a kept ``address`` (store/readers.py): one per
    store generation it served, not one per call."""
    from . import readers

    return readers.opens(address)


def close_kept() -> None:
    """Close the readers kept by :func:`keep_connections` (and the PostgreSQL pools)."""
    from . import readers
    from .pg.connect import close_pools

    readers.close_all()
    close_pools()


@contextmanager
def read_errors(address) -> Iterator[None]:
    """Turn a backend failure while reading the store at ``address`` into one line, exit 3."""
    if is_postgres(address):
        from .pg.connect import pg_errors

        with pg_errors(address):
            yield
        return
    from .db import store_errors

    with store_errors(address):
        yield
