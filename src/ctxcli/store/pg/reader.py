"""Reading a PostgreSQL store: :func:`open_pg` (one generation, one snapshot) and
:class:`PgStore`. The retrieval statements are here, each the PostgreSQL form of the DuckDB
statement it names; the others are pairs in store/statements.py, the constants and
expressions both dialects share in store/shared.py."""

from __future__ import annotations

from typing import Any

from ...errors import StoreError
from ...util.passwords import mask
from .. import statements as S
from ..access import POSTGRES, WIDEN_CAP, admitted, edge_authorised, entity_readable, of_type, pg_access, ranked_cols, withheld
from ..base import Found
from ..shared import BM25_PLACES, BM25_SUM_POSTGRES, VECTOR_PLACES, vector_rows
from ..shared import pg_num as _num
from ..statements import C
from .connect import META, driver, pg_errors, release, require_layout, take


def open_pg(address: str, generation: int | None = None) -> "PgStore | None":
    """The current generation (or the kept ``generation``: None when it is not kept)."""
    from .. import readers

    psycopg = driver()
    kept = generation is None and readers.is_kept(address)     # ctx serve: the generation's meta kept between calls
    con, pool = take(address)
    try:
        with pg_errors(address):
            seen = kept and readers.opens(address) > 0
            if not seen:
                require_layout(con, address)
            # One snapshot for the whole investigation: the generation resolved here, read
            # inside one read-only transaction (its locks keep a prune from dropping it).
            con.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            con.read_only = True
            con.autocommit = False
            if generation is not None:
                row = con.execute(f"SELECT gen, schema_name FROM {META}.generations WHERE gen = %s",
                                  [generation]).fetchone()
                if row is None:
                    con.rollback()
                    release(con, pool)
                    return None
            else:
                row = con.execute(f"SELECT g.gen, g.schema_name FROM {META}.current c "
                                  f"JOIN {META}.generations g ON g.gen = c.gen").fetchone()
            if row is None:
                raise StoreError(f"store {mask(address)} has no generation yet; run `ctx load --db {mask(address)}`")
            gen, schema = row
            con.execute(f"SET LOCAL search_path TO {schema}")
            r = readers.pg_seen(address, int(gen)) if kept else None    # the generation this server last read?
            if r is None:
                meta = _read_meta(con, address)
                if kept:
                    r = readers.pg_opened(address, int(gen), meta)
            else:
                meta = r.meta
    except BaseException:
        release(con, pool)
        raise
    return PgStore(con, address, int(gen), meta, pool=pool, memo=r.memo if r is not None else None)


def _read_meta(con, address: str) -> dict[str, str]:
    """The generation's meta, after checking its schema version."""
    from ..schema import SCHEMA_VERSION

    meta = dict(con.execute("SELECT key, value FROM meta ORDER BY key").fetchall())
    try:
        version = int(meta.get("schema_version", 0))
    except ValueError:
        version = 0
    if version != SCHEMA_VERSION:
        raise StoreError(f"store {mask(address)} has schema version {version}, this ctx needs "
                         f"{SCHEMA_VERSION}; run `ctx load --db {mask(address)}` to publish a new generation")
    return meta


# The access rules and validity (store/access.py) are applied in `about`, before the rank and
# the limit: `ranked` ranks only readable records; each list holds the first `lim` valid at as_of
# and the invalid ones before them within the first lim × WIDEN_CAP places; the withheld matches come back as counts per access
# combination, never as doc ids (rows with doc_id NULL).
_STRUCTURED = f"""
WITH qs(qid, etype, otypes) AS (VALUES {{rows}}),
keyed AS (
  SELECT k.doc_id, bool_or(k.kind = 's' AND k.key = ANY(%(seeds)s::text[])) AS on_seed
  FROM object_keys k
  WHERE k.key = ANY(%(allkeys)s::text[]) AND k.tenant_id = %(tenant)s
    AND ((k.kind = 's' AND k.key = ANY(%(seeds)s::text[])) OR (k.kind <> 's' AND k.key = ANY(%(bkeys)s::text[])))
  GROUP BY k.doc_id),
about AS (
  SELECT o.doc_id, o.supports, o.object_type, o.object_id, kd.on_seed, {{ok}} AS ok, {{valid}} AS valid,
         o.source_id, o.required_scopes, o.allowed_purposes
  FROM keyed kd JOIN objects o ON o.doc_id = kd.doc_id),
matched AS (
  SELECT qs.qid, a.* FROM qs JOIN about a ON {of_type(POSTGRES, "qs.etype", "qs.otypes", "a")}),
ranked AS (
  SELECT qid, doc_id, valid,
         {ranked_cols(f"PARTITION BY qid ORDER BY on_seed DESC NULLS LAST, object_type {C}, object_id {C}, doc_id")}
  FROM matched WHERE ok)
SELECT qid, doc_id, rn, NULL::text, NULL::text[], NULL::text[], NULL::bigint
FROM ranked WHERE {admitted("%(lim)s", f"%(lim)s * {WIDEN_CAP}")}
UNION ALL
{withheld("matched", "qid, NULL, NULL", "qid")}
"""

# The same arithmetic as duckdb_store._BM25, in float8 and in the same order; the score is
# rounded as DuckDB's round(x, 9) does (std::round(x * 1e9) / 1e9, half away from zero).
_BM25 = """
WITH qt(qi, termid, idf) AS (VALUES {qt}),
qm(qi, mask) AS (VALUES {qm}),
raw AS (
  SELECT qt.qi, p.doc_id,
         """ + BM25_SUM_POSTGRES + f" * 1e{BM25_PLACES}::float8 AS y" + """
  FROM {postings} p JOIN qt ON qt.termid = p.termid JOIN qm ON qm.qi = qt.qi
  WHERE p.tenant_no = {tno} AND p.termid IN ({termids}) AND (p.supports & qm.mask) <> 0
  GROUP BY qt.qi, p.doc_id),
scored AS (
  SELECT qi, doc_id, (floor(y) + CASE WHEN y - floor(y) >= 0.5 THEN 1 ELSE 0 END) / 1e""" + f"{BM25_PLACES}" + """::float8 AS score
  FROM raw){check},
gated AS (
  SELECT s.qi, s.doc_id, s.score, {ok} AS ok, {valid} AS valid, o.source_id, o.required_scopes,
         o.allowed_purposes
  FROM {src} s JOIN objects o ON o.doc_id = s.doc_id),
ranked AS (
  SELECT qi, doc_id, score, valid, """ + ranked_cols("PARTITION BY qi ORDER BY score DESC, doc_id") + """
  FROM gated WHERE ok)
SELECT qi, doc_id, score, rn, NULL::text, NULL::text[], NULL::text[], NULL::bigint
FROM ranked WHERE """ + admitted("{lim}", "{cap}") + """
UNION ALL
""" + withheld("gated", "qi, NULL, NULL, NULL", "qi") + "\n"
_BM25_CHECK = """,
checked AS (
  SELECT s.* FROM scored s JOIN (VALUES {qe}) qe(qi, etype) ON qe.qi = s.qi
  JOIN objects o ON o.doc_id = s.doc_id
  WHERE qe.etype IS NULL OR qe.etype = ANY(o.supports))"""
# A subject holding a mask group's unmasking scope: as duckdb_store._BM25_TERMS_UNMASKED and
# _POSTINGS_UNMASKED (the df of the unmasked-only terms added, their postings scanned too).
_BM25_IDF = ("SELECT term, termid, ln(((%s::bigint - df)::float8 + 0.5::float8) / (df::float8 + 0.5::float8) "
             "+ 1::float8) FROM term_stats WHERE tenant_no = %s AND term = ANY(%s::text[])")
_BM25_IDF_UNMASKED = ("SELECT term, termid, ln(((%s::bigint - sum(df))::float8 + 0.5::float8) / "
                      "(sum(df)::float8 + 0.5::float8) + 1::float8) FROM ("
                      "SELECT term, termid, df FROM term_stats WHERE tenant_no = %s AND term = ANY(%s::text[]) "
                      "UNION ALL SELECT term, termid, df FROM raw_term_stats WHERE tenant_no = %s "
                      "AND term = ANY(%s::text[]) AND grp = ANY(%s::int[])) t GROUP BY term, termid")
_POSTINGS_UNMASKED = ("(SELECT tenant_no, termid, doc_id, tf, dl, supports FROM postings UNION ALL "
                      "SELECT tenant_no, termid, doc_id, tf, dl, supports FROM raw_postings WHERE grp IN ({grps}))")

# As duckdb_store._WALK: the fan-out rank is computed per hop over the (template, path)
# partition and applied when the next hop reads the row and in the final select (PostgreSQL has
# no QUALIFY); ties among equal destinations are broken by relation id.
_WALK = f"""
WITH RECURSIVE
steps(tid, step, edge, to_type, least, inferred) AS (VALUES {{steps}}),
starts(tid, start_type) AS (VALUES {{starts}}),
walk(tid, depth, node, path, rels, rn) AS (
  SELECT s.tid, 0, e.entity_id, ARRAY[e.entity_id], ARRAY[]::text[], 1::bigint
  FROM starts s JOIN entities e ON e.entity_type = s.start_type
  WHERE e.entity_key = ANY(%(seeds)s::text[]) AND {POSTGRES.params(entity_readable(POSTGRES, "e."))}
  UNION ALL
  SELECT w.tid, w.depth + 1, r.dst, w.path || r.dst, w.rels || r.relation_id,
         row_number() OVER (PARTITION BY w.tid, w.path ORDER BY r.dst, r.relation_id {C})
  FROM walk w
  JOIN steps st ON st.tid = w.tid AND st.step = w.depth + 1
  JOIN relations r ON r.src = w.node AND r.rel_type = st.edge AND r.dst_type = st.to_type
  WHERE w.depth < %(max_hops)s AND w.rn <= %(fanout)s
    AND {POSTGRES.params(edge_authorised(POSTGRES, "r."))}
    AND NOT r.dst = ANY(w.path)
    AND r.confidence >= st.least AND (st.inferred OR r.extraction_method IS NULL)
)
SELECT w.tid, w.depth, w.path, w.rels, e.entity_key
FROM walk w JOIN entities e ON e.entity_id = w.node
WHERE w.rn <= %(fanout)s
ORDER BY w.tid {C}, w.depth, w.path, w.rels {C}
"""

# relations_among: an authorised edge of one of the requested types between two of the keys
_RELATION_OK = POSTGRES.params(" AND ".join((
    POSTGRES.member("a.entity_key", POSTGRES.arr("keys", "text")), POSTGRES.member("b.entity_key", POSTGRES.arr("keys", "text")),
    POSTGRES.member("r.rel_type", POSTGRES.arr("types", "text")), edge_authorised(POSTGRES, "r."))))
_GRAPH_HITS = """
WITH hit AS (
  SELECT k.key, o.doc_id, o.supports, {ok} AS ok, {valid} AS valid, o.source_id, o.required_scopes,
         o.allowed_purposes
  FROM object_keys k JOIN objects o ON o.doc_id = k.doc_id
  WHERE k.key = ANY(%(keys)s::text[]) AND k.kind = 's' AND k.tenant_id = %(tenant)s)
SELECT key, doc_id, supports, valid, NULL::text, NULL::text[], NULL::text[], NULL::bigint FROM hit WHERE ok
UNION ALL
""" + withheld("hit", "key, NULL, supports, NULL", "key, supports") + "\n"

# The vector channel as duckdb_vector._VECTOR computes it: array_cosine_similarity over FLOAT
# arrays is a float32 loop (distance += x*y, norms likewise, in element order), then
# distance / sqrt(norm_l * norm_r), clamped to [-1, 1]; here the same float4 operations in the
# same order (ordered aggregates), then DuckDB's round(x, 6). Exact, and slow on large stores:
# the scoring reads every vector of the tenant that supports the type.
_VECTOR = f"""
WITH q(qi, etype, otypes, lim, qv) AS (VALUES {{rows}}),
cand AS (
  SELECT q.qi, q.lim, v.doc_id,
         (SELECT sum(x * y ORDER BY i) FROM unnest(v.vec, q.qv) WITH ORDINALITY u(x, y, i)) AS d,
         (SELECT sum(x * x ORDER BY i) FROM unnest(v.vec) WITH ORDINALITY u(x, i)) AS nl,
         (SELECT sum(y * y ORDER BY i) FROM unnest(q.qv) WITH ORDINALITY u(y, i)) AS nr
  FROM vectors v JOIN q ON {of_type(POSTGRES, "q.etype", "q.otypes", "v")}
  WHERE v.tenant_id = %(tenant)s),
sim AS (
  SELECT qi, lim, doc_id, greatest(-1::float4, least(d / sqrt(nl * nr)::float4, 1::float4))::float8 * {{scale}} AS y
  FROM cand),
scored AS (
  SELECT qi, lim, doc_id, (floor(y) + CASE WHEN y - floor(y) >= 0.5 THEN 1 ELSE 0 END) / {{scale}} AS score
  FROM sim),
gated AS (
  SELECT s.qi, s.lim, s.doc_id, s.score, {{ok}} AS ok, {{valid}} AS valid, o.source_id, o.required_scopes,
         o.allowed_purposes
  FROM scored s JOIN objects o ON o.doc_id = s.doc_id),
ranked AS (
  SELECT qi, lim, doc_id, score, valid, {ranked_cols("PARTITION BY qi ORDER BY score DESC, doc_id")}
  FROM gated WHERE ok)
SELECT qi, doc_id, score, rn, NULL::text, NULL::text[], NULL::text[], NULL::bigint
FROM ranked WHERE {admitted("lim", f"lim * {WIDEN_CAP}")}
UNION ALL
{withheld("gated", "qi, NULL, NULL, NULL", "qi")}
"""

def _values(rows: list[tuple], prefix: str, params: dict[str, Any], casts: tuple[str, ...]) -> str:
    out = []
    for i, r in enumerate(rows):
        cells = []
        for j, v in enumerate(r):
            name = f"{prefix}{i}_{j}"
            params[name] = v
            cells.append(f"%({name})s::{casts[j]}")
        out.append("(" + ", ".join(cells) + ")")
    return ", ".join(out)


def _held(rows: list[tuple], at: int) -> list[tuple]:
    """The withheld rows (doc id NULL) of a candidate statement: (query key, source, scopes,
    purposes, count), the columns from ``at`` on, in a fixed order."""
    return sorted(((r[0], *r[at:]) for r in rows if r[1] is None), key=repr)


class PgStore:
    """One generation of a PostgreSQL store, read in one snapshot (:class:`base.Store`)."""

    backend = "postgresql"

    def __init__(self, con, address: str, generation: int, meta: dict[str, str], *, pool=None,
                 memo: dict | None = None) -> None:
        self.con = con
        self.pool = pool                    # the pool the connection goes back to (ctx serve), or None
        self.raw_address = address
        self.address = mask(address)
        self.generation = generation
        self._meta = meta
        self._memo = memo                   # ctx serve: this generation's small tables, kept (store/readers.py)

    def _cached(self, key, read):
        """``read()``, kept for this generation when the server keeps it (a copy each time)."""
        if self._memo is None:
            return read()
        from copy import deepcopy

        if key not in self._memo:
            self._memo[key] = read()
        return deepcopy(self._memo[key])

    def _q(self, sql: str, params: Any = None) -> list[tuple]:
        return self.con.execute(sql, params).fetchall()

    def _tenant_q(self, tenant: str, sql: str, params: Any = None) -> list[tuple]:
        """A candidate statement with row-level security set to ``tenant`` (the second line;
        the statement's own predicate is the first)."""
        self.con.execute("SELECT set_config('ctx.tenant', %s, true)", [tenant])
        rows = self._q(sql, params)         # (a failure aborts the transaction, setting and all)
        self.con.execute("SELECT set_config('ctx.tenant', '', true)")
        return rows

    def close(self) -> None:
        if self.pool is not None:
            self.con.rollback()             # idle, then the pool's reset restores the session defaults
            self.pool.putconn(self.con)
            return
        try:
            self.con.rollback()
        finally:
            self.con.close()

    def errors(self):
        return pg_errors(self.raw_address)

    def set_statement_timeout(self, seconds: float) -> None:
        """Cancel every later statement of the reading transaction that runs longer than
        ``seconds`` (PostgreSQL's statement_timeout, local to the transaction)."""
        self.con.execute("SELECT set_config('statement_timeout', %s, true)", [f"{max(1, round(seconds * 1000))}ms"])

    def meta(self) -> dict[str, str]:
        return dict(self._meta)

    def describe(self) -> dict[str, Any]:
        return {"backend": "postgresql"}

    # -- source registry
    def source_digests(self) -> dict[str, str]:
        return self._cached("source_digests", lambda: dict(self._q(S.SOURCE_DIGESTS.postgres)))

    def source_rows(self, cols) -> list[tuple]:
        return self._q(f"SELECT {', '.join(cols)} FROM sources ORDER BY source_id {C}")

    def tenant_sources(self, tenant: str) -> list[tuple]:
        return self._cached(("tenant_sources", tenant), lambda: self._q(S.TENANT_SOURCES.postgres, [tenant]))

    def source_access(self) -> list[tuple]:
        return self._cached("source_access", lambda: self._q(S.SOURCE_ACCESS.postgres))

    def source_governance(self) -> list[tuple]:
        return self._cached("source_governance", lambda: self._q(S.SOURCE_GOVERNANCE.postgres))

    def source_freshness(self, tenant: str | None, as_of_us: int) -> list[tuple]:
        return self._q(S.SOURCE_FRESHNESS[tenant is not None].postgres, S.source_freshness_params(tenant, as_of_us))

    def source_policy(self, source_id: str) -> tuple | None:
        rows = self._q(S.SOURCE_POLICY.postgres, [source_id])
        return rows[0] if rows else None

    def disabled_sources(self) -> list[str]:
        return self._cached("disabled_sources", lambda: [r[0] for r in self._q(S.DISABLED_SOURCES.postgres)])

    # -- candidate queries
    def structured(self, queries, *, seeds, business_keys, tenant, readable, as_of_us, limit) -> Found:
        ok, valid, access = pg_access(readable, as_of_us)
        params: dict[str, Any] = {"tenant": tenant, "lim": limit, "seeds": list(seeds), **access,
                                  "bkeys": list(business_keys), "allkeys": sorted(set(seeds) | set(business_keys))}
        rows = _values([(q, e, list(o)) for q, e, o in queries], "s", params, casts=("text", "text", "text[]"))
        got = self._tenant_q(tenant, _STRUCTURED.format(rows=rows, ok=ok, valid=valid), params)
        hits = sorted((r for r in got if r[1] is not None), key=lambda r: (r[0].encode(), r[2]))
        return Found([(qid, doc) for qid, doc, *_ in hits], _held(got, 3))

    def relation_access(self) -> list[tuple]:
        return self._cached("relation_access", lambda: self._q(
            "SELECT access_id, source_id, dst_source_id, attested, ev_source_id, ev_required_scopes, "
            "ev_allowed_purposes FROM relation_access ORDER BY access_id"))

    def walk(self, *, steps, starts, seeds, tenant, max_hops, as_of_us, fanout, readable, access_ok,
             known_us: int | None = None) -> list[tuple]:
        params: dict[str, Any] = {"tenant": tenant, "max_hops": max_hops, "asof": as_of_us, "fanout": fanout,
                                  "known": as_of_us if known_us is None else known_us,
                                  "readable": list(readable), "access_ok": list(access_ok), "seeds": list(seeds)}
        sql = _WALK.format(steps=_values(steps, "g", params, casts=("text", "integer", "text", "text", "float8", "boolean")),
                           starts=_values(starts, "t", params, casts=("text", "text")))
        return self._tenant_q(tenant, sql, params)

    def entity_declarers(self, tenant, keys) -> list[tuple[str, str]]:
        if not keys:
            return []
        rows = self._tenant_q(tenant, S.ENTITY_DECLARERS.postgres, {"tenant": tenant, "keys": sorted(set(keys))})
        if any(r[2] != tenant for r in rows):
            raise StoreError("a store lookup returned a row of another tenant; nothing was used")
        return [(k, sid) for k, sid, _ in rows]

    def entity_names(self, tenant, readable, *, keys=None, types=None) -> list[tuple]:
        rows = self._tenant_q(tenant, S.ENTITY_NAMES[keys is not None, types is not None].postgres,
                              S.entity_names_params(tenant, readable, keys, types))
        ok = set(readable)
        if any(r[4] != tenant or r[5] not in ok for r in rows):
            raise StoreError("a store lookup returned an entity of a source the subject may not read")
        return [(k, t, n, list(a or [])) for k, t, n, a, *_ in rows]

    def withheld_edges(self, nodes, *, tenant, as_of_us, access_ok, known_us: int | None = None) -> list[tuple]:
        if not nodes:
            return []
        rows = self._tenant_q(tenant, S.WITHHELD_EDGES.postgres, {
            "tenant": tenant, "nodes": sorted(set(nodes)), "access_ok": sorted(access_ok), "asof": as_of_us,
            "known": as_of_us if known_us is None else known_us})
        if any(r[7] != tenant for r in rows):
            raise StoreError("a store lookup returned a row of another tenant; nothing was used")
        if any(r[3] in set(access_ok) for r in rows):
            raise StoreError("a store lookup returned an edge the subject may walk as withheld")
        return [(src, rel, dt, aid, float(conf), method, key) for src, rel, dt, aid, conf, method, key, _ in rows]

    def relations_among(self, keys, *, rel_types, tenant, as_of_us, access_ok, known_us: int | None = None) -> list[tuple]:
        # As duckdb_store._AMONG_SQL.
        if not keys or not rel_types:
            return []
        rows = self._tenant_q(tenant, f"""
SELECT r.relation_id, r.rel_type, a.entity_key, b.entity_key, r.evidence_object_id, r.confidence
FROM relations r JOIN entities a ON a.entity_id = r.src JOIN entities b ON b.entity_id = r.dst
WHERE a.tenant_id = %(tenant)s AND b.tenant_id = %(tenant)s AND {_RELATION_OK}
ORDER BY r.relation_id {C}""", {"tenant": tenant, "keys": sorted(keys), "types": sorted(rel_types),
                                "access_ok": sorted(access_ok), "asof": as_of_us,
                                "known": as_of_us if known_us is None else known_us})
        return [(rid, t, a, b, ev, float(c)) for rid, t, a, b, ev, c in rows]

    def graph_hits(self, keys, *, tenant, readable, as_of_us) -> Found:
        ok, valid, access = pg_access(readable, as_of_us)
        got = self._tenant_q(tenant, _GRAPH_HITS.format(ok=ok, valid=valid),
                             {"keys": list(keys), "tenant": tenant, **access})
        hits = sorted(((k, d, sup, v) for k, d, sup, v, *_ in got if d is not None), key=lambda r: (r[0].encode(), r[1]))
        return Found(hits, sorted(((k, sup, *rest) for k, d, sup, _, *rest in got if d is None), key=repr))

    def window(self, queries, *, tenant, readable, as_of_us, access_ok, entity_sources,
               known_us: int | None = None) -> Found:
        from ..window import QUERY_COLUMNS, window_found, window_rows, window_sql, window_vias

        ok, valid, access = pg_access(readable, as_of_us)
        rows: list[tuple] = []
        for tcol, qs in window_rows(queries).items():
            params: dict[str, Any] = {"tenant": tenant, "readable": sorted(entity_sources), "access_ok": sorted(access_ok),
                                      "asof": as_of_us, "known": as_of_us if known_us is None else known_us,
                                      "vias": window_vias(qs), **access}
            table = "VALUES " + _values(qs, "w", params, casts=tuple(t for _, t in QUERY_COLUMNS))
            rows += self._tenant_q(tenant, window_sql(POSTGRES, table, tcol, ok, valid), params)
        return Found(*window_found(queries, rows))

    def mask_groups(self) -> list[tuple[int, list[str]]]:
        return self._cached("mask_groups", lambda: [(int(g), list(u or [])) for g, u in self._q(S.MASK_GROUPS.postgres)])

    def bm25(self, queries, *, tenant: str, readable, as_of_us: int, limit: int, unmasked=()) -> Found:
        from ..schema import MASK_BITS

        row = self._q("SELECT tenant_no, num_docs, avgdl FROM tenants WHERE tenant_id = %s", [tenant])
        if not row:
            return Found([], [])
        tno, n, avgdl = row[0]
        types = sorted({etype for etype, _ in queries})
        bits = dict(self._q("SELECT evidence_type, bit FROM support_bits WHERE evidence_type = ANY(%s::text[])",
                            [types]))
        terms = sorted({t for _, qterms in queries for t in qterms})
        # idf as duckdb_store._BM25_TERMS computes it: float8 arithmetic, natural log.
        grps = sorted({int(g) for g in unmasked})
        idf = {t: (tid, x) for t, tid, x in (
            self._q(_BM25_IDF_UNMASKED, [int(n), int(tno), terms, int(tno), terms, grps]) if grps
            else self._q(_BM25_IDF, [int(n), int(tno), terms]))}
        qt, qm, qe, termids, xparams = [], [], [], set(), {}
        for qi, (etype, qterms) in enumerate(queries):
            bit = bits.get(etype)
            found = [idf[t] for t in qterms if t in idf]
            if bit is None or not found:
                continue
            mask_ = 1 << min(bit, MASK_BITS)
            if mask_ >= 1 << 63:
                mask_ -= 1 << 64                    # the same bits as a signed bigint
            qm.append(f"({qi}, {mask_}::bigint)")
            qt.extend(f"({qi}, {int(tid)}, {_num(x)})" for tid, x in found)
            termids.update(int(tid) for tid, _ in found)
            if bit >= MASK_BITS:
                xparams[f"x{qi}"] = etype
                qe.append(f"({qi}, %(x{qi})s::text)")
            else:
                qe.append(f"({qi}, NULL::text)")
        if not qt:
            return Found([], [])
        overflow = bool(xparams)
        ok, valid, access = pg_access(readable, as_of_us)
        sql = _BM25.format(qt=", ".join(qt), qm=", ".join(qm), avgdl=_num(avgdl), tno=int(tno),
                           postings=_POSTINGS_UNMASKED.format(grps=", ".join(map(str, grps))) if grps else "postings",
                           termids=", ".join(map(str, sorted(termids))),
                           check=_BM25_CHECK.format(qe=", ".join(qe)) if overflow else "",
                           src="checked" if overflow else "scored", lim=int(limit), cap=int(limit) * WIDEN_CAP,
                           ok=ok, valid=valid)
        got = self._tenant_q(tenant, sql, {**xparams, **access} or None)
        hits = sorted((r for r in got if r[1] is not None), key=lambda r: (r[0], r[3]))
        return Found([(qi, doc, score) for qi, doc, score, *_ in hits], _held(got, 4))

    def vector(self, queries, *, tenant: str, readable, as_of_us: int) -> Found:
        """hits (query index, doc id, cosine) of each (evidence type, object types, limit, unit
        vector); withheld (query index, source, scopes, purposes, count)."""
        if not queries:
            return Found([], [])
        ok, valid, access = pg_access(readable, as_of_us)
        params: dict[str, Any] = {"tenant": tenant, **access}

        def row(qi: int, limit: int, vec) -> str:
            params[f"v{qi}"] = [float(x) for x in vec]
            return f"({qi}, %(e{qi})s::text, %(o{qi})s::text[], {limit}, %(v{qi})s::float8[]::float4[])"

        rows = vector_rows(queries, params, row)
        sql = _VECTOR.format(rows=", ".join(rows), scale=_num(10.0 ** VECTOR_PLACES), ok=ok, valid=valid)
        got = self._tenant_q(tenant, sql, params)
        hits = sorted((r for r in got if r[1] is not None), key=lambda r: (r[0], r[3]))
        return Found([(int(qi), int(doc), float(score)) for qi, doc, score, *_ in hits], _held(got, 4))

    # -- objects
    def object_metadata(self, doc_ids) -> list[tuple]:
        return self._q(S.OBJECT_METADATA.postgres, {"ids": sorted(doc_ids)})

    def object_content(self, doc_ids) -> list[tuple]:
        return self._q(S.OBJECT_CONTENT.postgres, {"ids": list(doc_ids)})

    def versions(self, tenant, families) -> list[tuple]:
        return self._q(S.VERSIONS.postgres, {"tenant": tenant, "fams": list(families)})

    def object_texts(self, tenant, object_ids) -> list[tuple[str, str, str]]:
        return self._q(S.OBJECT_TEXTS.postgres, [tenant, list(object_ids)])

    def audit_index(self) -> list[tuple[int, str, str, str | None, str, str]]:
        return self._q(S.AUDIT_INDEX.postgres, [])

    # -- postmortem lookups
    def tombstone(self, tenant, object_id) -> tuple | None:
        rows = self._q(S.TOMBSTONE.postgres, [tenant, object_id])
        return rows[0] if rows else None

    def object_exists(self, tenant, object_id) -> bool:
        return bool(self._q(S.OBJECT_EXISTS.postgres, [tenant, object_id]))

    def object_summary(self, tenant, object_id) -> tuple | None:
        rows = self._q(S.OBJECT_SUMMARY.postgres, [tenant, object_id])
        return rows[0] if rows else None

    def object_hashes(self, object_ids) -> list[tuple]:
        return self._q(S.OBJECT_HASHES.postgres, {"ids": list(object_ids)})

    def holds_object(self, object_id: str, tenant: str | None) -> bool:
        return bool(self._q(S.HOLDS_OBJECT.postgres, {"o": object_id, "t": tenant}))

    def content_hashes(self) -> list[tuple]:
        return self._q(S.CONTENT_HASHES.postgres)

    def entity_links(self) -> list[tuple]:
        return self._q(S.ENTITY_LINKS.postgres)

    def object_facts(self, object_ids) -> list[tuple]:
        return self._q(S.OBJECT_FACTS.postgres, {"ids": list(object_ids)})

    def tombstoned_ids(self, tenant, object_ids) -> list[str]:
        return [r[0] for r in self._q(S.TOMBSTONED_IDS.postgres, {"t": tenant, "ids": list(object_ids)})]
