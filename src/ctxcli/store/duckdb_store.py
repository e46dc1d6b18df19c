"""The embedded DuckDB store: the default backend (a file, replaced atomically by ``ctx load``).

Every statement ctx runs against a DuckDB store is here, in duckdb_bm25.py (BM25 from the term
lists) and duckdb_vector.py, or, as the DuckDB half of a pair with its PostgreSQL form, in
store/statements.py (load/build.py and load/reuse.py build the file itself). Parameters are named and bound; numbers this code computed (BM25 term ids,
idf, masks) are passed as literals so that their filters reach the scan.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from ..errors import StoreError
from .access import (DUCKDB, WIDEN_CAP, Readable, admitted, duck_access, edge_authorised, entity_readable, ranked_cols,
                     widened, withheld)
from . import statements as S
from .base import Found
from .shared import BM25_PLACES, BM25_SUM_DUCKDB, held_counts
from .shared import duck_num as _num

# Point lookups go through ART indexes (load/build.py: object_keys(key), entities(entity_key),
# relations(src), objects(doc_id)). DuckDB scans an ART only when its column is the scan's only
# filter: `key IN (...) AND tenant_id = $tenant` falls back to a sequential scan of the whole
# table. So the probe is a MATERIALIZED CTE with the one IN list (an index scan), and the tenant
# filter is applied to its few rows in the same statement: tenant isolation stays inside every
# statement, and so do the walk's edge authorisation and validity (_EDGES_SQL) and the seeds'
# readable sources (_SEEDS_SQL). Python checks every returned row again (a row of another
# tenant, or an edge the subject may not use, is a bug: StoreError, never a candidate); the
# kind and type filters, the fan-out cap and the ranking run in Python over those few rows.
# A hash join over a whole key table (the one-statement form) cost 10-70 ms; each probe ~1 ms.
_KEYS_SQL = """
WITH k AS MATERIALIZED (SELECT key, tenant_id, kind, doc_id FROM object_keys WHERE key IN ({keys}))
SELECT key, tenant_id, kind, doc_id FROM k WHERE tenant_id = $tenant
"""
# The objects a key lookup found, with the access rules applied in the statement (store/access.py):
# the readable ones by doc id, with whether each is valid at as_of; of the others only a count
# per (subject, supports, object type, source, required scopes, allowed purposes) — never a doc
# id. The probe by doc id is a MATERIALIZED CTE, so the index on objects(doc_id) answers it.
_ABOUT_SQL = """
WITH a AS MATERIALIZED (
  SELECT doc_id, tenant_id, subject_id, supports, object_type, object_id, source_id, required_scopes,
         allowed_purposes, valid_from_us, valid_to_us
  FROM objects WHERE doc_id IN ({ids})),
g AS (SELECT o.*, {ok} AS ok, {valid} AS valid FROM a o WHERE o.tenant_id = $tenant)
SELECT doc_id, subject_id, supports, object_type, object_id, valid,
       NULL::VARCHAR, NULL::VARCHAR[], NULL::VARCHAR[], NULL::BIGINT FROM g WHERE ok
UNION ALL
""" + withheld("g", "NULL, subject_id, supports, object_type, NULL, NULL", "subject_id, supports, object_type") + "\n"
_SEEDS_SQL = """
WITH e AS MATERIALIZED (SELECT entity_id, entity_type, tenant_id, source_id FROM entities
                        WHERE entity_key IN ({keys}))
SELECT entity_id, entity_type, tenant_id, source_id FROM e
WHERE """ + entity_readable(DUCKDB) + """
"""
_EDGES_SQL = """
WITH r AS MATERIALIZED (
  SELECT src, dst, rel_type, dst_type, relation_id, tenant_id, valid_from_us, valid_to_us, access_id,
         ev_valid_from_us, ev_valid_to_us, confidence, extraction_method
  FROM relations WHERE src IN ({nodes}))
SELECT * FROM r
WHERE dst IS NOT NULL AND """ + edge_authorised(DUCKDB) + "\n"
_ENTITY_KEYS_SQL = "SELECT entity_id, entity_key FROM entities WHERE entity_id IN ({ids})"
# The graph step's objects about the reached entities (graph_hits): one probe of subject_docs
# (schema 0009: subject, tenant, doc id, access class, validity; an index on subject_id,
# answered through the MATERIALIZED CTE), joined with the few doc_classes rows, the access
# rules (store/access.py) and validity at as_of evaluated in the statement, the tenant predicate
# inside it. Keys and access values are literals (duckdb_bm25.Literals).
_SUBJECT_DOCS_SQL = """
WITH s AS MATERIALIZED (SELECT subject_id, tenant_id, doc_id, cls, valid_from_us, valid_to_us FROM subject_docs
                        WHERE subject_id IN ({keys})),
o AS (SELECT s.*, c.supports, c.source_id, c.required_scopes, c.allowed_purposes FROM s JOIN doc_classes c ON c.cls = s.cls)
SELECT o.subject_id, o.doc_id, o.supports, {valid} AS valid, {ok} AS ok, o.source_id, o.required_scopes,
       o.allowed_purposes, o.tenant_id
FROM o WHERE o.tenant_id = {tenant}
"""
# Relations of some types between entities both among ``keys`` (CONTRADICTS, engine/contradictions.py),
# authorised and valid at as_of as a walked edge (_EDGES_SQL).
_AMONG_SQL = """
WITH e AS MATERIALIZED (SELECT entity_id, entity_key, tenant_id FROM entities WHERE entity_key IN ({keys})),
n AS (SELECT entity_id, entity_key FROM e WHERE tenant_id = $tenant)
SELECT r.relation_id, r.rel_type, a.entity_key, b.entity_key, r.evidence_object_id, r.confidence, r.tenant_id,
       r.access_id, r.valid_from_us, r.valid_to_us, r.ev_valid_from_us, r.ev_valid_to_us
FROM relations r JOIN n a ON a.entity_id = r.src JOIN n b ON b.entity_id = r.dst
WHERE """ + edge_authorised(DUCKDB, "r.") + """
  AND """ + DUCKDB.member("r.rel_type", DUCKDB.arr("types", "text")) + """
ORDER BY r.relation_id
"""


def _same_tenant(rows: list[tuple], tenant: str, col: int) -> list[tuple]:
    """``rows`` after checking that each is the tenant's (the statement already filtered)."""
    for r in rows:
        if r[col] != tenant:
            raise StoreError("a store lookup returned a row of another tenant; nothing was used")
    return rows


def _literal(con, sql: str, params: dict[str, Any]):
    """``con.execute(sql, params)`` with the parameters written into the statement as literals
    (duckdb_bm25.Literals: DuckDB's Python binding costs ~0.3 ms per bound list element; a
    string holding NUL stays bound)."""
    from .duckdb_bm25 import Literals

    lit = Literals()
    return lit.run(con, lit.inline(sql, params))


def _linked(lo: int | None, hi: int | None, at: int, known: int) -> bool:
    """Whether a relation (or its attesting object) links at question time ``at`` as known at
    ``known``: declared by the knowledge time and not ended by the question's time."""
    return (lo is None or lo <= known) and (hi is None or hi > at)


# BM25's SQL form (bm25_sql: a subject holding an unmasking scope, and the exhaustive reference
# of tests/test_bm25_plan.py; every other call reads the term lists, duckdb_bm25.py).
# Okapi BM25 (k1 and b: store/shared.py), exact, over the subject's tenant only: N, avgdl and each
# term's df are the tenant's own (tenants, term_stats), so another tenant's documents never
# change a score. Two small lookups first (the tenant's statistics and the evidence types' bits,
# then the query terms' ids and idf), then one statement that reads only the postings of those
# terms in that tenant — postings are sorted by (tenant_no, termid), so the scan skips every
# other row group — and joins nothing: tf, dl and the supports bit mask are in the posting.
# Ids, idf and masks are passed as literals (numbers this code computed), so the filters reach
# the scan; scores are rounded to 9 places, ties broken by doc id (_BM25_TOP).
_BM25_TENANT = "SELECT tenant_no, num_docs, avgdl FROM tenants WHERE tenant_id = $tenant"
_BM25_BITS = "SELECT evidence_type, bit FROM support_bits WHERE evidence_type IN ({types})"
# The terms are probed by term alone, so that the index on term_stats(term) answers (DuckDB
# uses an index only when its column is the scan's only filter; a store loaded before the index
# existed gives the same rows by a scan); the probe is a MATERIALIZED CTE so the tenant filter
# stays inside the statement without being pushed into the scan (which would lose the index).
_BM25_TERMS = """
WITH t AS MATERIALIZED (SELECT tenant_no, term, termid, df FROM term_stats WHERE term IN ({terms}))
SELECT tenant_no, term, termid, ln((({n} - df + 0.5) / (df + 0.5)) + 1) AS idf
FROM t WHERE tenant_no = {tno}
"""
_BM25 = """
WITH qt(qi, termid, idf) AS (VALUES {qt}),
qm(qi, mask) AS (VALUES {qm}),
scored AS (
  SELECT qt.qi, p.doc_id,
         round(""" + BM25_SUM_DUCKDB + f", {BM25_PLACES}) AS score" + """
  FROM {postings} p JOIN qt ON qt.termid = p.termid JOIN qm ON qm.qi = qt.qi
  WHERE p.tenant_no = {tno} AND (p.supports & qm.mask) <> 0
  GROUP BY qt.qi, p.doc_id){check},
{gated}
{top}{end}
"""
# A subject holding a mask group's unmasking scope (``unmasked``, schema 0007): the group's
# unmasked-only terms count too. Their document frequencies are added to the masked text's
# (a document holds a term in one table or the other, never both), and their postings join the
# scan; for every other subject the statements above run unchanged, so nothing it can see
# depends on masked text.
_BM25_TERMS_UNMASKED = """
WITH t AS MATERIALIZED (
  SELECT tenant_no, term, termid, df FROM term_stats WHERE term IN ({terms})
  UNION ALL SELECT tenant_no, term, termid, df FROM raw_term_stats WHERE term IN ({terms}) AND grp IN ({grps}))
SELECT tenant_no, term, termid, ln((({n} - sum(df) + 0.5) / (sum(df) + 0.5)) + 1) AS idf
FROM t WHERE tenant_no = {tno} GROUP BY tenant_no, term, termid
"""
_POSTINGS_UNMASKED = ("(SELECT tenant_no, termid, doc_id, tf, dl, supports FROM postings UNION ALL "
                      "SELECT tenant_no, termid, doc_id, tf, dl, supports FROM raw_postings WHERE grp IN ({grps}))")
# The query terms reach the postings scan through the join with qt: DuckDB pushes the build
# side's term ids into the scan as a dynamic filter (an IN list and min/max), which skips the
# row groups holding none of them just as a literal IN list did, without the literal list's
# extra hash probe of every scanned posting (measured: the same rows scanned, ~20 % less time).
# The top-``limit`` of each query by (score desc, doc id): a bounded top-n per query (max_by
# keeps the ``limit`` largest keys, and the key (score, -doc id) is unique, so ties at any rank
# go to the smaller doc id, as ORDER BY score DESC, doc_id would) instead of sorting every
# scored document in a window (at 100k that sort was half of the statement's time).
# The access rules and validity (store/access.py), then the readable top of each query: a bounded
# top-n per query (max_by keeps the n largest keys, and the key (score, -doc id) is unique, so
# ties at any rank go to the smaller doc id, as ORDER BY score DESC, doc_id would) instead of
# sorting every scored document in a window (at 100k that sort was half of the statement's
# time); n is the widening cap (limit × WIDEN_CAP), and the list ends once ``limit`` of its
# records are valid at as_of. The withheld matches come back as counts per access combination.
_BM25_GATED = """gated AS (
  SELECT s.qi, s.doc_id, s.score, {ok} AS ok, {valid} AS valid, o.source_id, o.required_scopes,
         o.allowed_purposes
  FROM {src} s JOIN objects o ON o.doc_id = s.doc_id),"""
# The top-n key (score, then the smaller doc id first), for both lists of _BM25_TOP.
_BM25_KEY = "{{'score': score, 'neg': -doc_id}}"
# The cap largest of each query, and its ``lim`` largest valid at as_of (validity before the limit).
_BM25_TOP = """top AS (
  SELECT qi, unnest(max_by({{'doc_id': doc_id, 'score': score, 'valid': valid}}, """ + _BM25_KEY + """,
                           {cap})) AS t
  FROM gated WHERE ok GROUP BY qi
  UNION
  SELECT qi, unnest(max_by({{'doc_id': doc_id, 'score': score, 'valid': valid}}, """ + _BM25_KEY + """,
                           {lim})) AS t
  FROM gated WHERE ok AND valid GROUP BY qi),
cut AS (SELECT qi, t.doc_id AS doc_id, t.score AS score, t.valid AS valid FROM top),"""
# max_by takes n < 1,000,000; a larger limit (explain-omissions ranks every match) sorts in a window.
_BM25_TOP_N_MAX = 10_000
_BM25_RANKED = """cut AS (SELECT qi, doc_id, score, valid FROM gated WHERE ok),"""
_BM25_END = """
ranked AS (
  SELECT qi, doc_id, score, valid, """ + ranked_cols("PARTITION BY qi ORDER BY score DESC, doc_id") + """
  FROM cut)
SELECT qi, doc_id, score, rn, NULL::VARCHAR, NULL::VARCHAR[], NULL::VARCHAR[], NULL::BIGINT
FROM ranked WHERE """ + admitted("{lim}", "{cap}") + """
UNION ALL
""" + withheld("gated", "qi, NULL, NULL, NULL", "qi")
# Evidence types past bit MASK_BITS share the last bit: their hits are checked against objects.
_BM25_CHECK = """,
checked AS (
  SELECT s.* FROM scored s JOIN (VALUES {qe}) qe(qi, etype) ON qe.qi = s.qi
  JOIN objects o ON o.doc_id = s.doc_id
  WHERE qe.etype IS NULL OR list_contains(o.supports, qe.etype))"""


# Every edge is authorised before it is walked, so a withheld edge never reaches a path and the
# fan-out cap counts authorised edges only. An edge passes when (1) it is the tenant's and valid
# at as_of; (2) the source that registered it and the source of the entity it leads to pass the
# subject's scope, classification and purpose; (3) the object that attests it, if it names one,
# would pass the scope, classification, purpose and validity gates. (2) and the non-temporal
# part of (3) are decided per relation_access row in Python (walk_access → $access_ok); the
# attesting object's validity is checked in
# :meth:`DuckDBStore.walk`. A seed entity starts a walk only when its source
# passes (2) ($readable).
def in_list(values: list[Any], prefix: str, params: dict[str, Any]) -> str:
    """An IN list of named parameters (constants at bind time, so the filter reaches the scan)."""
    names = []
    for i, v in enumerate(values):
        params[f"{prefix}{i}"] = v
        names.append(f"${prefix}{i}")
    return ", ".join(names) if names else "NULL"



class _Timed:
    """A DuckDB connection whose every statement (its execute and its fetch) is interrupted
    from a timer thread after ``seconds``: the statement raises StatementTimeoutError (exit 3)."""

    def __init__(self, con, seconds: float) -> None:
        self.raw, self.seconds = con, seconds

    def __getattr__(self, name: str):
        return getattr(self.raw, name)

    def execute(self, sql: str, params=None):
        import threading

        fired = threading.Event()

        def fire() -> None:
            fired.set()
            self.raw.interrupt()

        timer = threading.Timer(self.seconds, fire)
        timer.daemon = True
        timer.start()
        return _TimedResult(self, timer, fired, lambda: self.raw.execute(sql) if params is None
                            else self.raw.execute(sql, params))


class _TimedResult:
    def __init__(self, timed: _Timed, timer, fired, run) -> None:
        self.timed, self.timer, self.fired = timed, timer, fired
        self.res = self._guard(run, keep=True)

    def _guard(self, fn, keep: bool = False):
        import duckdb

        try:
            return fn()
        except duckdb.InterruptException:
            if not self.fired.is_set():
                raise
            from ..errors import StatementTimeoutError

            raise StatementTimeoutError(f"a store statement ran longer than the statement timeout "
                                        f"({self.timed.seconds:g} s) and was cancelled; nothing was used") from None
        finally:
            if not keep:
                self.timer.cancel()

    def fetchall(self):
        return self._guard(self.res.fetchall)

    def fetchone(self):
        return self._guard(self.res.fetchone)

    def fetchnumpy(self):
        return self._guard(self.res.fetchnumpy)


class DuckDBStore:
    """A read-only DuckDB store (:class:`ctxcli.store.base.Store`)."""

    backend = "duckdb"

    def __init__(self, con, path: Path | str | None = None, generation: int | None = None, *,
                 on_close=None, memo: dict | None = None) -> None:
        self.con = con
        self.path = path
        self.address = str(path) if path is not None else "(connection)"
        self.generation = generation    # the store generation this connection reads (store/generations.py)
        # a lease of a reader kept by ctx serve (store/readers.py): what ends the lease; and the
        # cache of the small tables every investigation reads: the kept reader's, or this
        # connection's (open_store); None: read them each time
        self._on_close, self._memo = on_close, memo

    # -- opening, describing
    def close(self) -> None:
        done, self._on_close = self._on_close, None
        if done is not None:
            done()              # closes this call's cursor; the kept reader stays open
            return
        self.con.close()

    def _cached(self, key, read):
        """``read()``, kept in the memo when there is one (open_store's readers; a copy
        each time: callers may change what they get)."""
        if self._memo is None:
            return read()
        from copy import deepcopy

        if key not in self._memo:
            self._memo[key] = read()
        return deepcopy(self._memo[key])

    def set_statement_timeout(self, seconds: float) -> None:
        """Interrupt every later statement that runs longer than ``seconds`` (a timer thread)."""
        self.con = _Timed(getattr(self.con, "raw", self.con), seconds)

    @contextmanager
    def errors(self) -> Iterator[None]:
        from .db import store_errors

        with store_errors(self.address):
            yield

    def meta(self) -> dict[str, str]:
        from .db import store_meta

        return self._cached("meta", lambda: store_meta(self.con))

    def describe(self) -> dict[str, Any]:
        return {"generation": self.generation} if self.generation is not None else {}

    # -- source registry
    def source_digests(self) -> dict[str, str]:
        return self._cached("source_digests", lambda: dict(self.con.execute(S.SOURCE_DIGESTS.duckdb).fetchall()))

    def source_rows(self, cols) -> list[tuple]:
        return self.con.execute(f"SELECT {', '.join(cols)} FROM sources ORDER BY source_id").fetchall()

    def tenant_sources(self, tenant: str) -> list[tuple]:
        return self._cached(("tenant_sources", tenant),
                            lambda: self.con.execute(S.TENANT_SOURCES.duckdb, [tenant]).fetchall())

    def source_access(self) -> list[tuple]:
        return self._cached("source_access", lambda: self.con.execute(S.SOURCE_ACCESS.duckdb).fetchall())

    def source_governance(self) -> list[tuple]:
        return self._cached("source_governance", lambda: self.con.execute(S.SOURCE_GOVERNANCE.duckdb).fetchall())

    def source_freshness(self, tenant: str | None, as_of_us: int) -> list[tuple]:
        return self.con.execute(S.SOURCE_FRESHNESS[tenant is not None].duckdb,
                                S.source_freshness_params(tenant, as_of_us)).fetchall()

    def source_policy(self, source_id: str) -> tuple | None:
        return self.con.execute(S.SOURCE_POLICY.duckdb, [source_id]).fetchone()

    def disabled_sources(self) -> list[str]:
        return self._cached("disabled_sources",
                            lambda: [r[0] for r in self.con.execute(S.DISABLED_SOURCES.duckdb).fetchall()])

    # -- candidate queries
    def structured(self, queries, *, seeds, business_keys, tenant, readable, as_of_us, limit) -> Found:
        """For each (query id, evidence type, object types): the tenant's readable objects whose
        subject is a seed or that carry a business key, supporting the type (and of one of the
        object types, if any), seed subjects first, then by (object type, object id); the first
        until ``limit`` of them are valid at as_of (store/access.py), as (query id, doc id) in
        query and rank order. Withheld: (query id, source, scopes, purposes, count)."""
        seed_set, bkey_set = set(seeds), set(business_keys)
        params: dict[str, Any] = {}
        on_seed: dict[int, bool] = {}
        params["tenant"] = tenant
        for key, _, kind, doc in _same_tenant(self.con.execute(
                _KEYS_SQL.format(keys=in_list(sorted(seed_set | bkey_set), "a", params)), params).fetchall(), tenant, 1):
            if kind == "s" and key in seed_set:
                on_seed[doc] = True
            elif kind != "s" and key in bkey_set:
                on_seed.setdefault(doc, False)
        if not on_seed:
            return Found([], [])
        about, held = self._about(sorted(on_seed), tenant, readable, as_of_us)
        # seed subjects first, then object type and id (NULLs last, as SQL's ascending order)
        about.sort(key=lambda r: (not on_seed[r[0]], r[3] is None, r[3] or "", r[4] is None, r[4] or "", r[0]))
        out: list[tuple[str, int]] = []
        withheld: list[tuple] = []
        for qid, etype, otypes in queries:
            match = [r for r in about if etype in (r[2] or ()) and (not otypes or r[3] in otypes)]
            out.extend((qid, r[0]) for r in widened(match, limit, lambda r: r[5]))
            withheld.extend(held_counts(qid, [h for h in held if etype in (h[1] or ())
                                               and (not otypes or h[2] in otypes)]))
        out.sort(key=lambda r: r[0])       # stable: each query's hits keep their rank order
        return Found(out, sorted(withheld, key=repr))

    def _about(self, doc_ids: list[int], tenant: str, readable: Readable, as_of_us: int) -> tuple[list, list]:
        """(readable rows: doc id, subject, supports, object type, object id, valid), (withheld
        rows: subject, supports, object type, source, scopes, purposes, count) of ``doc_ids``."""
        ok, valid, access = duck_access(readable, as_of_us)
        params: dict[str, Any] = {"tenant": tenant, **access}
        rows = self.con.execute(_ABOUT_SQL.format(ids=in_list(doc_ids, "d", params), ok=ok, valid=valid),
                                params).fetchall()
        return [r[:6] for r in rows if r[0] is not None], [(r[1], r[2], r[3], *r[6:]) for r in rows if r[0] is None]

    def relation_access(self) -> list[tuple]:
        return self._cached("relation_access", lambda: self.con.execute(
            "SELECT access_id, source_id, dst_source_id, attested, ev_source_id, ev_required_scopes, "
            "ev_allowed_purposes FROM relation_access ORDER BY access_id").fetchall())

    def walk(self, *, steps, starts, seeds, tenant, max_hops, as_of_us, fanout, readable, access_ok,
             known_us: int | None = None) -> list[tuple]:
        """Every path of each template from the seed entities, hop by hop: (template id, depth,
        entity path, relation ids, key of the last entity), ordered by (template, depth, path).
        At each hop a path follows at most ``fanout`` authorised edges (lowest target first); an
        edge links when declared by ``known_us`` (default: as_of) and not ended by as_of."""
        con = self.con
        known = as_of_us if known_us is None else known_us
        step_of = {(tid, step): (edge, to, least, inferred) for tid, step, edge, to, least, inferred in steps}
        readable_set, ok = set(readable), set(access_ok)
        params: dict[str, Any] = {"tenant": tenant, "readable": sorted(readable_set)}
        ents = _same_tenant(_literal(con, _SEEDS_SQL.format(keys=in_list(seeds, "k", params)), params).fetchall(),
                            tenant, 2)
        if any(sid not in readable_set for *_, sid in ents):
            raise StoreError("a store lookup returned a seed entity of a source the subject may not read")
        # (tid, depth, node, path, rels)
        frontier = [(tid, 0, eid, (eid,), ()) for tid, stype in starts
                    for eid, etype, _, sid in ents if etype == stype]
        rows = list(frontier)
        depth = 0
        while frontier and depth < max_hops:
            frontier = [w for w in frontier if (w[0], depth + 1) in step_of]
            if not frontier:
                break
            params = {"tenant": tenant, "access_ok": sorted(ok), "asof": as_of_us, "known": known}
            edges: dict[int, list[tuple]] = {}
            for e in _same_tenant(_literal(con, _EDGES_SQL.format(
                    nodes=in_list(sorted({w[2] for w in frontier}), "n", params)), params).fetchall(), tenant, 5):
                src, dst, rel, dtype, rid, ten, vf, vt, aid, evf, evt, conf, method = e
                if not (dst is not None and aid in ok and _linked(vf, vt, as_of_us, known)
                        and _linked(evf, evt, as_of_us, known)):
                    raise StoreError("a store lookup returned an edge the subject may not walk")
                edges.setdefault(src, []).append((dst, rel, dtype, rid, conf, method))
            # the fan-out cap counts the edges of every walk row with the same (template, path)
            groups: dict[tuple, list[tuple]] = {}
            for tid, _, node, path, rels in frontier:
                edge, to, least, inferred = step_of[(tid, depth + 1)]
                groups.setdefault((tid, path), []).extend(
                    (dst, rid, rels) for dst, rel, dtype, rid, conf, method in edges.get(node, ())
                    if rel == edge and dtype == to and dst not in path and conf >= least
                    and (inferred or method is None))
            nxt = []
            for (tid, path), cand in groups.items():
                cand.sort(key=lambda c: (c[0], c[2], c[1]))
                nxt.extend((tid, depth + 1, dst, path + (dst,), rels + (rid,)) for dst, rid, rels in cand[:fanout])
            depth += 1
            rows.extend(nxt)
            frontier = nxt
        if not rows:
            return []
        params = {}
        keys = dict(_literal(con, _ENTITY_KEYS_SQL.format(
            ids=in_list(sorted({w[2] for w in rows}), "i", params)), params).fetchall())
        out = [(tid, d, list(path), list(rels), keys[node]) for tid, d, node, path, rels in rows if node in keys]
        out.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
        return out

    def entity_names(self, tenant, readable, *, keys=None, types=None) -> list[tuple]:
        params = S.entity_names_params(tenant, readable, keys, types)
        rows = self.con.execute(S.ENTITY_NAMES[keys is not None, types is not None].duckdb, params).fetchall()
        ok = set(readable)
        if any(r[5] not in ok for r in _same_tenant(rows, tenant, 4)):
            raise StoreError("a store lookup returned an entity of a source the subject may not read")
        return [(k, t, n, list(a or [])) for k, t, n, a, *_ in rows]

    def entity_declarers(self, tenant, keys) -> list[tuple[str, str]]:
        if not keys:
            return []
        rows = self.con.execute(S.ENTITY_DECLARERS.duckdb, {"tenant": tenant, "keys": sorted(set(keys))}).fetchall()
        return [(k, sid) for k, sid, _ in _same_tenant(rows, tenant, 2)]

    def withheld_edges(self, nodes, *, tenant, as_of_us, access_ok, known_us: int | None = None) -> list[tuple]:
        if not nodes:
            return []
        params = {"tenant": tenant, "nodes": sorted(set(nodes)), "access_ok": sorted(access_ok), "asof": as_of_us,
                  "known": as_of_us if known_us is None else known_us}
        rows = _same_tenant(self.con.execute(S.WITHHELD_EDGES.duckdb, params).fetchall(), tenant, 7)
        if any(r[3] in set(access_ok) for r in rows):
            raise StoreError("a store lookup returned an edge the subject may walk as withheld")
        return [tuple(r[:7]) for r in rows]

    def relations_among(self, keys, *, rel_types, tenant, as_of_us, access_ok, known_us: int | None = None) -> list[tuple]:
        if not keys or not rel_types:
            return []
        known = as_of_us if known_us is None else known_us
        params: dict[str, Any] = {"tenant": tenant, "types": sorted(rel_types), "access_ok": sorted(access_ok),
                                  "asof": as_of_us, "known": known}
        rows = _same_tenant(self.con.execute(_AMONG_SQL.format(keys=in_list(sorted(keys), "k", params)),
                                             params).fetchall(), tenant, 6)
        ok = set(access_ok)
        for *_, aid, vf, vt, evf, evt in rows:
            if not (aid in ok and _linked(vf, vt, as_of_us, known) and _linked(evf, evt, as_of_us, known)):
                raise StoreError("a store lookup returned an edge the subject may not walk")
        return [tuple(r[:6]) for r in rows]

    def graph_hits(self, keys, *, tenant, readable, as_of_us) -> Found:
        """(entity key, doc id, supports, valid) of the tenant's readable objects whose subject
        is one of ``keys``, ordered by (key, doc id); withheld: (entity key, supports, source,
        scopes, purposes, count). One probe of subject_docs (schema 0009) with the access rules
        and validity applied in the statement (_SUBJECT_DOCS_SQL)."""
        from .duckdb_bm25 import Literals

        if not keys:
            return Found([], [])
        lit = Literals()
        ok, valid, access = duck_access(readable, as_of_us)
        rows = _same_tenant(lit.run(self.con, _SUBJECT_DOCS_SQL.format(
            keys=", ".join(lit.str(k) for k in sorted(set(keys))), ok=lit.inline(ok, access),
            valid=lit.inline(valid, access), tenant=lit.str(tenant))).fetchall(), tenant, 8)
        hits, acc = [], {}
        for key, doc, sup, is_valid, is_ok, src, scopes, purposes, _ in rows:
            if is_ok:
                hits.append((key, doc, sup, is_valid))
            else:       # per (key, supports, source, scopes, purposes), as on PostgreSQL
                k = (key, tuple(sup or ()), src, tuple(scopes or ()), tuple(purposes or ()))
                acc[k] = acc.get(k, 0) + 1
        return Found(sorted(hits, key=lambda h: (h[0], h[1])),
                     sorted(((k, list(sup), src, list(sc), list(pu), n) for (k, sup, src, sc, pu), n in acc.items()),
                            key=repr))

    def window(self, queries, *, tenant, readable, as_of_us, access_ok, entity_sources,
               known_us: int | None = None) -> Found:
        """For each (query id, evidence type, object types, window query (plan.window_query),
        limit): the tenant's readable objects linked to the window's entity whose event time lies
        in the window, nearest to the anchor first, as (query id, doc id, event time µs) in query
        and rank order. Withheld: (query id, source, scopes, purposes, count)."""
        from .window import QUERY_COLUMNS, window_found, window_rows, window_sql, window_vias

        ok, valid, access = duck_access(readable, as_of_us)
        struct = ", ".join(f"{c} {DUCKDB.t(t[:-2])}[]" if t.endswith("[]") else f"{c} {DUCKDB.t(t)}"
                           for c, t in QUERY_COLUMNS)
        table = f"SELECT unnest(CAST($queries AS STRUCT({struct})[]), recursive := true)"
        rows: list[tuple] = []
        for tcol, qs in window_rows(queries).items():
            params = {"tenant": tenant, "readable": sorted(entity_sources), "access_ok": sorted(access_ok),
                      "asof": as_of_us, "known": as_of_us if known_us is None else known_us, "vias": window_vias(qs),
                      "queries": [dict(zip((c for c, _ in QUERY_COLUMNS), q)) for q in qs], **access}
            rows += self.con.execute(window_sql(DUCKDB, table, tcol, ok, valid), params).fetchall()
        return Found(*window_found(queries, rows))

    def vector(self, queries, *, tenant: str, readable: Readable, as_of_us: int) -> Found:
        from .duckdb_vector import vector_topk

        return vector_topk(self.con, queries, tenant=tenant, readable=readable, as_of_us=as_of_us)

    def mask_groups(self) -> list[tuple[int, list[str]]]:
        return self._cached("mask_groups", lambda: self.con.execute(S.MASK_GROUPS.duckdb).fetchall())

    def bm25(self, queries, *, tenant: str, readable: Readable, as_of_us: int, limit: int, unmasked=()) -> Found:
        """Exact BM25 top-``limit`` of each (evidence type, terms) among the tenant's readable
        records (widened past records not valid at as_of): hits (query index, doc id, score),
        each query's in rank order; withheld (query index, source, scopes, purposes, count). The
        unmasked-only terms of the mask groups ``unmasked`` count too (scored in SQL,
        :meth:`bm25_sql`); every other call reads the term lists (:func:`bm25_lists`)."""
        if unmasked:
            return self.bm25_sql(queries, tenant=tenant, readable=readable, as_of_us=as_of_us, limit=limit,
                                 unmasked=unmasked)
        from .duckdb_bm25 import bm25_lists

        return bm25_lists(self.con, queries, tenant=tenant, readable=readable, as_of_us=as_of_us, limit=limit,
                          memo=self._memo)

    def bm25_sql(self, queries, *, tenant: str, readable: Readable, as_of_us: int, limit: int, unmasked=()) -> Found:
        """:meth:`bm25` as one scoring statement over the postings table (the same scores and
        order: tests/test_bm25_plan.py holds the two to each other)."""
        from .schema import MASK_BITS

        con, lim = self.con, limit
        if lim <= 0:
            return Found([], [])
        row = con.execute(_BM25_TENANT, {"tenant": tenant}).fetchone()
        if row is None:
            return Found([], [])
        tno, n, avgdl = row
        params: dict[str, Any] = {}
        types = sorted({etype for etype, _ in queries})
        bits = dict(con.execute(_BM25_BITS.format(types=in_list(types, "e", params)), params).fetchall())
        params = {}
        terms = sorted({t for _, qterms in queries for t in qterms})
        grps = ", ".join(str(int(g)) for g in sorted(set(unmasked)))
        rows = con.execute((_BM25_TERMS_UNMASKED if grps else _BM25_TERMS).format(
            n=int(n), tno=int(tno), terms=in_list(terms, "t", params), grps=grps), params).fetchall()
        if any(no != tno for no, *_ in rows):      # a second line behind the statement's tenant filter
            raise StoreError("a store lookup returned a row of another tenant; nothing was used")
        idf = {t: (tid, x) for _, t, tid, x in rows}
        qt, qm, qe, xparams = [], [], [], {}
        for qi, (etype, qterms) in enumerate(queries):
            bit = bits.get(etype)
            found = [idf[t] for t in qterms if t in idf]
            if bit is None or not found:
                continue            # no object of the tenant supports the type or holds a term
            qm.append(f"({qi}, {1 << min(bit, MASK_BITS)}::UBIGINT)")
            qt.extend(f"({qi}, {int(tid)}, {_num(x)})" for tid, x in found)
            if bit >= MASK_BITS:
                xparams[f"x{qi}"] = etype
                qe.append(f"({qi}, CAST($x{qi} AS VARCHAR))")
            else:
                qe.append(f"({qi}, NULL::VARCHAR)")
        if not qt:
            return Found([], [])
        overflow = bool(xparams)
        ok, valid, access = duck_access(readable, as_of_us)
        cap = int(lim) * WIDEN_CAP
        sql = _BM25.format(qt=", ".join(qt), qm=", ".join(qm), avgdl=_num(avgdl), tno=int(tno),
                           postings=_POSTINGS_UNMASKED.format(grps=grps) if grps else "postings",
                           check=_BM25_CHECK.format(qe=", ".join(qe)) if overflow else "",
                           gated=_BM25_GATED.format(src="checked" if overflow else "scored", ok=ok, valid=valid),
                           top=(_BM25_TOP.format(cap=cap, lim=int(lim)) if cap <= _BM25_TOP_N_MAX else _BM25_RANKED),
                           end=_BM25_END.format(lim=int(lim), cap=cap))
        rows = con.execute(sql, {**xparams, **access}).fetchall()
        hits = sorted((r for r in rows if r[1] is not None), key=lambda r: (r[0], r[3]))
        return Found([(qi, doc, score) for qi, doc, score, *_ in hits],
                     sorted(((r[0], *r[4:]) for r in rows if r[1] is None), key=repr))

    # -- objects
    def object_metadata(self, doc_ids) -> list[tuple]:
        params: dict[str, Any] = {}
        sql = S.OBJECT_METADATA.duckdb.format(ids=in_list(sorted(doc_ids), "d", params))
        return self.con.execute(sql, params).fetchall()

    def object_content(self, doc_ids) -> list[tuple]:
        params: dict[str, Any] = {}
        return self.con.execute(S.OBJECT_CONTENT.duckdb.format(ids=in_list(doc_ids, "c", params)), params).fetchall()

    def versions(self, tenant, families) -> list[tuple]:
        params: dict[str, Any] = {"tenant": tenant}
        return self.con.execute(S.VERSIONS.duckdb.format(fams=in_list(families, "f", params)), params).fetchall()

    def object_texts(self, tenant, object_ids) -> list[tuple[str, str, str]]:
        return self.con.execute(S.OBJECT_TEXTS.duckdb, [tenant, object_ids]).fetchall()

    def audit_index(self) -> list[tuple[int, str, str, str | None, str, str]]:
        return self.con.execute(S.AUDIT_INDEX.duckdb).fetchall()

    # -- postmortem lookups
    def tombstone(self, tenant, object_id) -> tuple | None:
        return self.con.execute(S.TOMBSTONE.duckdb, [tenant, object_id]).fetchone()

    def holds_object(self, object_id: str, tenant: str | None) -> bool:
        return self.con.execute(S.HOLDS_OBJECT.duckdb, {"o": object_id, "t": tenant}).fetchone() is not None

    def content_hashes(self) -> list[tuple]:
        return self.con.execute(S.CONTENT_HASHES.duckdb).fetchall()

    def all_tombstones(self) -> list[tuple]:
        """(tenant_id, object_id, deleted_at_us, reason) of every tombstone, first per object."""
        return self.con.execute("SELECT tenant_id, object_id, min(deleted_at_us), arg_min(reason, deleted_at_us) "
                                "FROM tombstones GROUP BY tenant_id, object_id ORDER BY tenant_id, object_id"
                                ).fetchall()

    def object_exists(self, tenant, object_id) -> bool:
        return self.con.execute(S.OBJECT_EXISTS.duckdb, [tenant, object_id]).fetchone() is not None

    def object_summary(self, tenant, object_id) -> tuple | None:
        return self.con.execute(S.OBJECT_SUMMARY.duckdb, [tenant, object_id]).fetchone()

    def entity_links(self) -> list[tuple]:
        return self.con.execute(S.ENTITY_LINKS.duckdb).fetchall()

    def object_facts(self, object_ids) -> list[tuple]:
        return self.con.execute(S.OBJECT_FACTS.duckdb, {"ids": object_ids}).fetchall()

    def object_hashes(self, object_ids) -> list[tuple]:
        # the ids as literals: DuckDB binds a list parameter element by element, and a
        # list_contains over it tests every row (~5× slower at 100k objects). Every run of a
        # warm server asks again for the same recorded erasures: read once per connection.
        from .duckdb_bm25 import Literals

        lit = Literals()
        ids = ", ".join(lit.str(i) for i in object_ids) or "NULL"
        return lit.once(self._memo, "object_hashes", self.con, S.OBJECT_HASHES.duckdb.format(ids=ids), "fetchall")

    def tombstoned_ids(self, tenant, object_ids) -> list[str]:
        return [x[0] for x in self.con.execute(S.TOMBSTONED_IDS.duckdb, {"t": tenant, "ids": object_ids}).fetchall()]
