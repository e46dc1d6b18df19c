"""Which backend a store address names: ``postgresql://…`` a PostgreSQL server, anything else
an embedded DuckDB file. Its own module so that the store's parts (readers.py) can ask without
importing the package that imports them."""

from __future__ import annotations

PG_PREFIXES = ("postgresql://", "postgres://")


def is_postgres(address) -> bool:
    return isinstance(address, str) and address.startswith(PG_PREFIXES)
