"""Connections to a PostgreSQL store: the driver, the address (its password masked in every
message), the server's errors as one line (exit 3), the layout check every connection makes,
and the reader pools a long-running process keeps."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from ...errors import StoreBusyError, StoreError, StoreUnusableError, UsageError
from ...util.passwords import mask

LAYOUT_VERSION = 1
META = "ctx_meta"


def first_line(e: Exception, address: str) -> str:
    return mask((str(e).strip().splitlines() or [type(e).__name__])[0], address)


def driver():
    try:
        import psycopg
    except ImportError:
        from ...util.distribution import install_hint

        raise UsageError(f"a postgresql:// store needs the PostgreSQL driver: {install_hint('postgres')} "
                         "(psycopg[binary]==3.3.9)") from None
    return psycopg


def connect(address: str, *, autocommit: bool = True, app: str = "ctx"):
    """A connection to the server ``address`` names; one masked line, exit 3, when it fails."""
    psycopg = driver()
    try:
        return psycopg.connect(address, autocommit=autocommit, application_name=app, connect_timeout=10)
    except psycopg.Error as e:
        raise StoreUnusableError(f"cannot connect to the store {mask(address)}: {first_line(e, address)}") from None
    except Exception as e:          # a malformed address (psycopg raises ProgrammingError / ValueError)
        raise UsageError(f"--db {mask(address)}: not a usable PostgreSQL address ({first_line(e, address)})") from None


@contextmanager
def pg_errors(address: str) -> Iterator[None]:
    """Turn a server failure while reading into one line, exit 3. Errors in ctx's own SQL
    (syntax, undefined column) stay bugs."""
    psycopg = driver()
    try:
        yield
    except (psycopg.errors.SyntaxError, psycopg.errors.UndefinedColumn, psycopg.errors.UndefinedFunction):
        raise
    except psycopg.errors.QueryCanceled as e:
        from ...errors import StatementTimeoutError

        raise StatementTimeoutError(f"store {mask(address)}: a statement was cancelled ({first_line(e, address)}); "
                                    "nothing was used") from None
    except psycopg.Error as e:
        raise StoreUnusableError(f"store {mask(address)} failed: {first_line(e, address)}") from None



def stored_layout(con, address: str) -> int | None:
    """The layout version of the meta schema, None when there is none; StoreError when it is
    not this ctx's."""
    exists = con.execute("SELECT to_regclass(%s) IS NOT NULL", [f"{META}.info"]).fetchone()[0]
    if not exists:
        return None
    row = con.execute(f"SELECT value FROM {META}.info WHERE key = 'layout_version'").fetchone()
    try:
        version = int(row[0]) if row else 0
    except (TypeError, ValueError):
        version = 0
    if version != LAYOUT_VERSION:
        raise StoreError(f"store {mask(address)} has layout version {version}, this ctx needs {LAYOUT_VERSION}")
    return version



def require_layout(con, address: str) -> None:
    if stored_layout(con, address) is None:
        raise StoreError(f"no ctx store at {mask(address)}; run `ctx store init {mask(address)}` first")



# Connection pools kept by a long-running process (ctx serve), one per address: open_pg takes a
# connection from the pool and PgStore.close gives it back. Without a pool every open_pg
# connects afresh (the CLI: one investigation per process).
_POOLS: dict[str, Any] = {}


def _reset_reader(con) -> None:
    """A connection going back to the pool: out of any transaction, default session state."""
    con.rollback()
    con.autocommit = True
    con.read_only = None
    con.isolation_level = None


def keep_pool(address: str, *, size: int = 4) -> None:
    """Reuse up to ``size`` server connections for the readers this process opens on
    ``address``; each reader still resolves the current generation when it opens."""
    if address in _POOLS:
        return
    driver()
    try:
        from psycopg_pool import ConnectionPool, PoolTimeout
    except ImportError:
        from ...util.distribution import install_hint

        raise UsageError(f"pooled PostgreSQL connections need psycopg-pool: {install_hint('postgres')} "
                         "(psycopg-pool==3.3.3)") from None
    pool = ConnectionPool(address, min_size=1, max_size=size, open=False, reset=_reset_reader,
                          check=ConnectionPool.check_connection, name="ctx-readers",
                          kwargs={"autocommit": True, "application_name": "ctx-reader", "connect_timeout": 10})
    try:
        pool.open(wait=True, timeout=15)
    except PoolTimeout:
        pool.close()
        raise StoreUnusableError(f"cannot connect to the store {mask(address)}: no connection within 15 s") from None
    except Exception as e:          # a malformed address
        pool.close()
        raise UsageError(f"--db {mask(address)}: not a usable PostgreSQL address ({first_line(e, address)})") \
            from None
    _POOLS[address] = pool


def close_pools() -> None:
    while _POOLS:
        _POOLS.popitem()[1].close()


def release(con, pool) -> None:
    if pool is None:
        con.close()
    else:
        pool.putconn(con)


def take(address: str):
    """A connection for a reader, and the pool it goes back to (None: close it instead)."""
    pool = _POOLS.get(address)
    if pool is None:
        return connect(address, autocommit=True, app="ctx-reader"), None
    from psycopg_pool import PoolTimeout

    try:
        return pool.getconn(timeout=30), pool
    except PoolTimeout:
        raise StoreBusyError(f"store {mask(address)}: every pooled connection stayed busy for 30 s") from None
