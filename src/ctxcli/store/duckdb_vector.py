"""The vector channel's statement on the DuckDB store: exact cosine top-k inside one tenant.

One statement covers every vector query of a round. The tenant, the access rules
(store/access.py), the evidence type (the object supports it) and the declared object types are
predicates of that statement, so another tenant's rows are never scored, and withheld rows
never ranked, let alone returned. ``vectors`` is sorted by (tenant_id,
doc_id): the tenant predicate skips other tenants' row groups. Scores are rounded to 6 places
and ties broken by doc id, so the ranking is total and deterministic.
"""

from __future__ import annotations

from typing import Any, Sequence

from .access import DUCKDB, WIDEN_CAP, Readable, admitted, duck_access, of_type, ranked_cols, withheld
from .base import Found
from .shared import VECTOR_DIM as DIM
from .shared import VECTOR_PLACES as SCORE_PLACES
from .shared import duck_num as _num
from .shared import vector_rows

# The access rules and validity come from the objects row of each scored vector (store/access.py):
# only readable records are ranked, the list holds the first ``lim`` valid at as_of and the
# invalid ones before them within the first lim × WIDEN_CAP places, and the withheld matches come back as counts per access combination.
_VECTOR = f"""
WITH q(qi, etype, otypes, lim, qv) AS (SELECT * FROM (VALUES {{rows}}) v(qi, etype, otypes, lim, qv)),
scored AS (
  SELECT q.qi, v.doc_id, round(array_cosine_similarity(v.vec, q.qv)::DOUBLE, {{places}}) AS score
  FROM vectors v JOIN q ON {of_type(DUCKDB, "q.etype", "q.otypes", "v")}
  WHERE v.tenant_id = $tenant),
gated AS (
  SELECT s.qi, s.doc_id, s.score, {{ok}} AS ok, {{valid}} AS valid, o.source_id, o.required_scopes,
         o.allowed_purposes
  FROM scored s JOIN objects o ON o.doc_id = s.doc_id),
ranked AS (
  SELECT s.qi, s.doc_id, s.score, q.lim, s.valid, {ranked_cols("PARTITION BY s.qi ORDER BY s.score DESC, s.doc_id")}
  FROM gated s JOIN q ON q.qi = s.qi WHERE s.ok)
SELECT qi, doc_id, score, rn, NULL::VARCHAR, NULL::VARCHAR[], NULL::VARCHAR[], NULL::BIGINT
FROM ranked WHERE {admitted("lim", f"lim * {WIDEN_CAP}")}
UNION ALL
{withheld("gated", "qi, NULL, NULL, NULL", "qi")}
"""


def vector_topk(con, queries: Sequence[tuple[str, Sequence[str], int, Sequence[float]]], *,
                tenant: str, readable: Readable, as_of_us: int) -> Found:
    """hits (query index, doc id, cosine) of each (evidence type, object types, limit, unit
    vector), each query's in rank order; withheld (query index, source, scopes, purposes, count)."""
    if not queries:
        return Found([], [])
    ok, valid, access = duck_access(readable, as_of_us)
    params: dict[str, Any] = {"tenant": tenant, **access}

    def row(qi: int, limit: int, vec) -> str:
        # The vector as a literal of DOUBLEs (each exactly a float32 ctx computed), cast to
        # FLOAT[256]: binding a 256-element list as a parameter costs 40-100 ms, the literal <1 ms.
        lit = "[" + ", ".join(_num(x) for x in vec) + "]"
        return (f"({qi}, CAST($e{qi} AS VARCHAR), CAST($o{qi} AS VARCHAR[]), {limit}, "
                f"CAST({lit}::DOUBLE[] AS FLOAT[{DIM}]))")

    rows = vector_rows(queries, params, row)
    sql = _VECTOR.format(rows=", ".join(rows), places=SCORE_PLACES, ok=ok, valid=valid)
    rows = con.execute(sql, params).fetchall()
    hits = sorted((r for r in rows if r[1] is not None), key=lambda r: (r[0], r[3]))
    return Found([(int(qi), int(doc), float(score)) for qi, doc, score, *_ in hits],
                 sorted(((int(r[0]), *r[4:]) for r in rows if r[1] is None), key=repr))
