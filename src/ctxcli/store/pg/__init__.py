"""The team store on PostgreSQL (``postgresql://…``): the same tables as the DuckDB store, published as generations.

Layout in the database the address names:

* ``ctx_meta.info`` — (key, value): ``layout_version`` of this layout (checked like the DuckDB
  store's schema version);
* ``ctx_meta.generations`` — one row per published generation: its number, schema
  (``ctx_g<N>``), store digest, schema version, object count and when it was published;
* ``ctx_meta.current`` — one row: the generation readers use.

A load builds the store exactly as the DuckDB backend does (load/build.py, into a temporary
file), then copies its tables into a new schema ``ctx_g<N>`` and points ``ctx_meta.current`` at
it, all in one transaction: a killed load leaves nothing, and readers see the old or the new
generation, never a mix. One writer at a time: a session-level advisory lock; a second writer
gets StoreBusyError (exit 3) at once. A reader resolves the current generation once, when it
opens, and reads it inside one read-only REPEATABLE READ transaction, so one investigation
reads one generation even while a load publishes the next; ``ctx store prune`` never drops the
current generation and waits for readers of the ones it drops.

The package: ``connect`` (the address, the driver, password masking of its messages, the
server's errors as one line, connection pools, the layout check every connection makes),
``admin`` (init, publish, export, generations, prune, the writer's lock) and ``reader``
(:class:`PgStore`, every statement an investigation runs).

Every statement is the PostgreSQL form of the DuckDB statement in duckdb_store.py, with the
same predicates (the tenant inside every candidate statement), the same template, validity,
cycle and fan-out rules for the walk, ctx's own postings-based BM25 in float8 arithmetic in the
same order (never ``ts_rank``), DuckDB's rounding of scores, and explicit orderings with byte
order (``COLLATE "C"``) and DuckDB's NULL placement. Credentials come only from the address,
``PGPASSFILE`` or the libpq environment; every message masks the password.
"""
