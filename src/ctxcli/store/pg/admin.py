"""Administering a PostgreSQL store: ``ctx store init`` (the meta schema and the store secret),
publishing a built DuckDB store as a new generation (tables, indexes, row-level security),
writing the current generation back for an incremental load, listing and pruning
generations, and the single writer's advisory lock."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

from ...errors import StoreBusyError, StoreError, StoreUnusableError, UsageError
from ...util.passwords import mask
from .connect import LAYOUT_VERSION, META, connect, driver, first_line, pg_errors, require_layout, stored_layout
from ..schema import DUCKDB_ONLY_TABLES

LOCK_KEY = 0x637478_6c6f6164      # "ctx" "load": the writer's advisory lock


# ---------------------------------------------------------------------------------- the meta schema
_META_DDL = [
    f"CREATE SCHEMA IF NOT EXISTS {META}",
    f"CREATE TABLE IF NOT EXISTS {META}.info(key text PRIMARY KEY, value text NOT NULL)",
    f"""CREATE TABLE IF NOT EXISTS {META}.generations(gen integer PRIMARY KEY, schema_name text NOT NULL UNIQUE,
        store_digest text NOT NULL, schema_version integer NOT NULL, objects bigint NOT NULL,
        published_at timestamptz NOT NULL DEFAULT now())""",
    f"""CREATE TABLE IF NOT EXISTS {META}.current(one boolean PRIMARY KEY DEFAULT true CHECK (one),
        gen integer NOT NULL REFERENCES {META}.generations(gen))""",
    # The store secret (store/secret.py): created once, readable by its owner and the roles
    # granted SELECT on it; $CTX_SECRET still wins.
    f"CREATE TABLE IF NOT EXISTS {META}.secret(one boolean PRIMARY KEY DEFAULT true CHECK (one), key bytea NOT NULL)",
    f"REVOKE ALL ON {META}.secret FROM PUBLIC",
]


def init_store(address: str) -> dict[str, Any]:
    """Create the meta schema (idempotent); check the layout version of an existing one.
    Returns {"address", "layout_version", "created", "generations"}."""
    con = connect(address)
    try:
        with pg_errors(address):
            existed = stored_layout(con, address)
            if existed is None:
                with con.transaction():
                    for stmt in _META_DDL:
                        con.execute(stmt)
                    con.execute(f"INSERT INTO {META}.info VALUES ('layout_version', %s) ON CONFLICT (key) DO NOTHING",
                                [str(LAYOUT_VERSION)])
                    import secrets

                    con.execute(f"INSERT INTO {META}.secret(one, key) VALUES (true, %s) ON CONFLICT (one) DO NOTHING",
                                [secrets.token_bytes(32)])
            gens = con.execute(f"SELECT count(*) FROM {META}.generations").fetchone()[0]
    finally:
        con.close()
    return {"address": mask(address), "layout_version": LAYOUT_VERSION, "created": existed is None,
            "generations": int(gens)}



def read_secret(address: str) -> bytes:
    """The store secret kept in the store (``ctx_meta.secret``)."""
    psycopg = driver()
    con = connect(address)
    try:
        require_layout(con, address)
        try:
            row = con.execute(f"SELECT key FROM {META}.secret").fetchone()
        except psycopg.errors.InsufficientPrivilege:
            raise StoreError(f"cannot read the store secret of {mask(address)} (permission denied on "
                             f"{META}.secret); set $CTX_SECRET or have the store's owner grant SELECT on it") from None
        except psycopg.Error as e:
            raise StoreUnusableError(f"store {mask(address)} failed: {first_line(e, address)}") from None
    finally:
        con.close()
    if row is None or len(bytes(row[0])) < 16:
        raise StoreError(f"store {mask(address)} has no secret; run `ctx store init {mask(address)}`")
    return bytes(row[0])



# ---------------------------------------------------------------------------------- publishing
_PG_TYPES = {"VARCHAR": "text", "INTEGER": "int4", "BIGINT": "int8", "DOUBLE": "float8",
             "BOOLEAN": "bool", "UBIGINT": "int8", "VARCHAR[]": "text[]", "INTEGER[]": "int4[]",
             "BIGINT[]": "int8[]", "DOUBLE[]": "float8[]", "FLOAT[256]": "float4[]"}     # vectors: searched by vector() in float4
# Point lookups and scans the statements below need (the DuckDB file is sorted instead).
_INDEXES = [
    "CREATE UNIQUE INDEX ON objects(doc_id)",
    "CREATE INDEX ON objects(tenant_id, object_id)",
    "CREATE INDEX ON objects(family)",
    # the newest observation of a source (store.source_freshness, per investigation): one
    # backward index probe per source instead of a scan of every object per source
    "CREATE INDEX ON objects(source_id, tenant_id, observed_us)",
    "CREATE INDEX ON objects(source_id, observed_us)",
    "CREATE INDEX ON object_keys(key, tenant_id)",
    "CREATE INDEX ON entities(entity_id)",
    "CREATE INDEX ON entities(tenant_id, entity_key)",
    "CREATE INDEX ON relations(src, rel_type)",
    "CREATE INDEX ON postings(tenant_no, termid)",
    "CREATE INDEX ON term_stats(tenant_no, term)",
    "CREATE INDEX ON raw_postings(tenant_no, termid)",
    "CREATE INDEX ON raw_term_stats(tenant_no, term)",
    "CREATE INDEX ON versions(tenant_id, family)",
    "CREATE INDEX ON tombstones(tenant_id, object_id)",
    "CREATE INDEX ON injection_verdicts(doc_id)",
]


# Row-level security, the second line of tenant isolation: while a candidate statement runs,
# the reader sets ``ctx.tenant`` (transaction-local) and these policies hide every other
# tenant's rows, even if a statement's own tenant predicate were wrong. Outside candidate
# statements the setting is empty and the policies pass every row (hydration by doc id and
# postmortem lookups filter by tenant themselves). PostgreSQL skips RLS for superusers and
# roles with BYPASSRLS: run ctx as an ordinary role for this line to hold.
_TENANT = "nullif(current_setting('ctx.tenant', true), '')"
_RLS_TABLES = {
    "objects": "tenant_id", "object_keys": "tenant_id", "entities": "tenant_id", "relations": "tenant_id",
    "tombstones": "tenant_id", "versions": "tenant_id",
    "postings": "tenant_no", "term_stats": "tenant_no", "vectors": "tenant_id",
    "raw_postings": "tenant_no", "raw_term_stats": "tenant_no", "unresolved_entities": "tenant_id",
    "injection_verdicts": "tenant_id",
}


def _rls(table: str, col: str) -> list[str]:
    own = (f"{col} = {_TENANT}" if col == "tenant_id" else
           f"{col} = (SELECT t.tenant_no FROM tenants t WHERE t.tenant_id = {_TENANT})")
    return [f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY", f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
            f"CREATE POLICY ctx_tenant ON {table} USING ({_TENANT} IS NULL OR {own})"]


@contextmanager
def writer_lock(address: str) -> Iterator[Any]:
    """Hold the store's single-writer advisory lock on a connection of its own for a load or a
    prune; a second writer raises StoreBusyError at once (exit 3). The lock dies with the
    session, so a killed writer never leaves the store locked."""
    con = connect(address, app="ctx-writer")
    try:
        with pg_errors(address):
            require_layout(con, address)
            got = con.execute("SELECT pg_try_advisory_lock(%s)", [LOCK_KEY]).fetchone()[0]
        if not got:
            raise StoreBusyError(f"store {mask(address)} is busy: another `ctx load` or `ctx store prune` is "
                                 f"writing it; retry when it has finished")
        yield con
    finally:
        con.close()


def publish(address: str, duckdb_file, on_table=None) -> dict[str, Any]:
    """Copy every table of the built DuckDB store ``duckdb_file`` into a new generation and make
    it current, in one transaction. The caller holds :func:`writer_lock`. Returns
    {"generation", "schema", "store_digest", "objects"}."""
    import duckdb

    src = duckdb.connect(str(duckdb_file), read_only=True)
    con = connect(address, autocommit=False, app="ctx-load")
    try:
        with pg_errors(address):
            meta = dict(src.execute("SELECT key, value FROM meta").fetchall())
            tables = [r[0] for r in src.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
                "AND table_type = 'BASE TABLE' ORDER BY table_name").fetchall() if r[0] not in DUCKDB_ONLY_TABLES]
            n_obj = src.execute("SELECT count(*) FROM objects").fetchone()[0]
            gen = con.execute(f"SELECT coalesce(max(gen), 0) + 1 FROM {META}.generations").fetchone()[0]
            schema = f"ctx_g{int(gen)}"
            con.execute(f"CREATE SCHEMA {schema}")
            con.execute(f"SET LOCAL search_path TO {schema}")
            for t in tables:
                _copy_table(src, con, t)
                if on_table:
                    on_table(t)
            for stmt in _INDEXES:
                con.execute(stmt)
            for table, col in _RLS_TABLES.items():
                for stmt in _rls(table, col):
                    con.execute(stmt)
            for t in tables:
                con.execute(f"ANALYZE {t}")
            con.execute(f"INSERT INTO {META}.generations(gen, schema_name, store_digest, schema_version, objects) "
                        f"VALUES (%s, %s, %s, %s, %s)",
                        [gen, schema, meta["store_digest"], int(meta["schema_version"]), n_obj])
            con.execute(f"INSERT INTO {META}.current(one, gen) VALUES (true, %s) "
                        f"ON CONFLICT (one) DO UPDATE SET gen = excluded.gen", [gen])
            con.commit()
    finally:
        con.close()
        src.close()
    return {"generation": int(gen), "schema": schema, "store_digest": meta["store_digest"], "objects": int(n_obj)}


def _copy_table(src, con, table: str) -> None:
    cols = src.execute("SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'main' "
                       "AND table_name = ? ORDER BY ordinal_position", [table]).fetchall()
    defs, sel, types = [], [], []
    for name, dtype in cols:
        pg = _PG_TYPES.get(dtype) or ("float4[]" if re.fullmatch(r"FLOAT\[\d+\]", dtype) else None)
        if pg is None:
            raise StoreError(f"cannot publish column {table}.{name} of type {dtype} to PostgreSQL")
        defs.append(f"{name} {pg}")
        types.append(pg)
        if pg == "float4[]" and dtype != "FLOAT[]":      # a fixed-size array: read it as a list
            sel.append(f"{name}::FLOAT[]")
        elif dtype == "UBIGINT":      # a 64-bit mask: the same bits as a signed bigint
            sel.append(f"CASE WHEN {name} >= 9223372036854775808 THEN ({name}::HUGEINT - 18446744073709551616)"
                       f"::BIGINT ELSE {name}::BIGINT END")
        else:
            sel.append(name)
    con.execute(f"CREATE TABLE {table}({', '.join(defs)})")
    for (name, dtype), pg in zip(cols, types):
        if _DUCK_TYPES.get(pg) != dtype:        # the DuckDB type the PostgreSQL one does not say
            con.execute(f"COMMENT ON COLUMN {table}.{name} IS 'duckdb:{dtype}'")      # ([A-Z0-9[\\]] only)
    cur = src.execute(f"SELECT {', '.join(sel)} FROM {table}")
    with con.cursor().copy(f"COPY {table} FROM STDIN (FORMAT BINARY)") as cp:
        cp.set_types(types)
        while rows := cur.fetchmany(10_000):
            for r in rows:
                cp.write_row(r)


_DUCK_TYPES = {pg: duck for duck, pg in _PG_TYPES.items() if duck not in ("UBIGINT", "FLOAT[256]")}
_DUCK_TYPES["float4[]"] = "FLOAT[]"


def export_current(address: str, duckdb_file, *, con=None) -> str | None:
    """Write the current generation back into the DuckDB file ``duckdb_file`` (every table,
    every row, the DuckDB types it was published from), so that an incremental load
    (load/reuse.py) reads it as the live store. Returns the generation's store digest, or
    None when there is nothing to reuse (no generation yet, or one published before the
    DuckDB types were recorded). Values travel as CSV: float8 in PostgreSQL's shortest exact
    form, arrays as JSON (float4 arrays widened to float8 first), so every value reads back
    exactly."""
    import os

    import duckdb

    own = con is None
    con = con or connect(address, app="ctx-load")
    try:
        with pg_errors(address):
            row = con.execute(f"SELECT g.schema_name, g.store_digest FROM {META}.current c "
                              f"JOIN {META}.generations g ON g.gen = c.gen").fetchone()
            if row is None:
                return None
            schema, digest = row
            cols = con.execute(
                "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), "
                "col_description(c.oid, a.attnum) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
                "WHERE n.nspname = %s AND c.relkind = 'r' ORDER BY c.relname, a.attnum", [schema]).fetchall()
            tables: dict[str, list[tuple[str, str, str]]] = {}
            for t, name, pgtype, comment in cols:
                pgt = {"text": "text", "integer": "int4", "bigint": "int8", "double precision": "float8",
                       "boolean": "bool", "text[]": "text[]", "integer[]": "int4[]", "bigint[]": "int8[]",
                       "real[]": "float4[]", "double precision[]": "float8[]"}.get(pgtype)
                duck = comment[len("duckdb:"):] if comment and comment.startswith("duckdb:") else _DUCK_TYPES.get(pgt)
                tables.setdefault(t, []).append((name, pgt, duck))
            if not any(d in ("UBIGINT",) for t in tables.values() for _, _, d in t) and "postings" in tables:
                return None             # published before the DuckDB types were recorded
            dst = duckdb.connect(str(duckdb_file), config={"threads": "2"})
            try:
                dst.execute("SET enable_progress_bar = false")     # (it would print on stdout)
                for t, tcols in tables.items():
                    dst.execute(f"CREATE TABLE {t}({', '.join(f'{n} {d}' for n, _, d in tcols)})")
                    out = [f"array_to_json({n}{'::float8[]' if p == 'float4[]' else ''})" if p.endswith("[]")
                           else n for n, p, _ in tcols]
                    csv = f"{duckdb_file}.{t}.csv"
                    with open(csv, "wb") as fh, con.cursor().copy(
                            f"COPY (SELECT {', '.join(out)} FROM {schema}.{t}) TO STDOUT (FORMAT csv)") as cp:
                        for chunk in cp:
                            fh.write(chunk)
                    read = {n: ("VARCHAR" if p.endswith("[]") or d == "UBIGINT" else d) for n, p, d in tcols}
                    sel = []
                    for n, p, d in tcols:
                        if p.endswith("[]"):
                            sel.append(f"{n}::JSON::{d}")
                        elif d == "UBIGINT":    # the bits of a signed bigint, back as unsigned
                            sel.append(f"CASE WHEN {n}::BIGINT < 0 THEN ({n}::HUGEINT + 18446744073709551616)"
                                       f"::UBIGINT ELSE {n}::UBIGINT END")
                        else:
                            sel.append(n)
                    cspec = "{" + ", ".join(f"'{n}': '{ty}'" for n, ty in read.items()) + "}"
                    path = csv.replace("'", "''")
                    dst.execute(f"INSERT INTO {t} SELECT {', '.join(sel)} FROM read_csv('{path}', header = false, "
                                f"columns = {cspec}, quote = '\"', escape = '\"', allow_quoted_nulls = false, "
                                f"auto_detect = false, max_line_size = 100000000)")
                    os.remove(csv)
                dst.execute("CHECKPOINT")
            finally:
                dst.close()
    finally:
        if own:
            con.close()
    return digest


def generations(address: str) -> list[dict[str, Any]]:
    con = connect(address)
    try:
        with pg_errors(address):
            require_layout(con, address)
            cur = con.execute(f"SELECT gen FROM {META}.current").fetchone()
            rows = con.execute(f"SELECT gen, schema_name, store_digest, objects, published_at FROM {META}.generations "
                               f"ORDER BY gen").fetchall()
    finally:
        con.close()
    return [{"generation": g, "schema": s, "store_digest": d, "objects": n, "published_at": t.isoformat(),
             "current": cur is not None and g == cur[0]} for g, s, d, n, t in rows]


def prune(address: str, keep: int) -> dict[str, Any]:
    """Drop all but the newest ``keep`` generations (never the current one). Holds the writer
    lock; DROP waits for readers still inside a generation it drops."""
    if keep < 1:
        raise UsageError("--keep must be at least 1 (the current generation is always kept)")
    with writer_lock(address) as con:
        with pg_errors(address):
            cur = con.execute(f"SELECT gen FROM {META}.current").fetchone()
            gens = [r for r in con.execute(f"SELECT gen, schema_name FROM {META}.generations ORDER BY gen DESC")]
            kept = {g for g, _ in gens[:keep]} | ({cur[0]} if cur else set())
            dropped = [g for g, schema in gens if g not in kept and _drop(con, g, schema)]
    return {"address": mask(address), "kept": sorted(kept), "dropped": sorted(dropped)}


def _drop(con, gen: int, schema: str) -> bool:
    """Drop one generation: its schema (every row of it) and its row, in one transaction."""
    with con.transaction():
        con.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        con.execute(f"DELETE FROM {META}.generations WHERE gen = %s", [gen])
    return True


def drop_generations(address: str, numbers) -> list[int]:
    """Drop the kept generations ``numbers`` (never the current one), under the writer lock;
    DROP waits for readers still inside one. Returns those dropped."""
    want = {int(n) for n in numbers}
    if not want:
        return []
    with writer_lock(address) as con:
        with pg_errors(address):
            cur = con.execute(f"SELECT gen FROM {META}.current").fetchone()
            gens = con.execute(f"SELECT gen, schema_name FROM {META}.generations ORDER BY gen").fetchall()
            return [g for g, schema in gens
                    if g in want and (cur is None or g != cur[0]) and _drop(con, g, schema)]

