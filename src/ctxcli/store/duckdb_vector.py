"""The vector channel's statement on the DuckDB store: exact cosine top-k inside one tenant.

One statement covers every vector query of a round. The tenant, the evidence type (the object
supports it) and the declared object types are predicates of that statement, so another
tenant's rows are never scored, let alone returned. ``vectors`` is sorted by (tenant_id,
doc_id): the tenant predicate skips other tenants' row groups. Scores are rounded to 6 places
and ties broken by doc id, so the ranking is total and deterministic.
"""

from __future__ import annotations

from typing import Any, Sequence

DIM = 256
SCORE_PLACES = 6

_VECTOR = """
WITH q(qi, etype, otypes, lim, qv) AS (SELECT * FROM (VALUES {rows}) v(qi, etype, otypes, lim, qv)),
scored AS (
  SELECT q.qi, v.doc_id, round(array_cosine_similarity(v.vec, q.qv)::DOUBLE, {places}) AS score
  FROM vectors v JOIN q ON list_contains(v.supports, q.etype)
    AND (len(q.otypes) = 0 OR list_contains(q.otypes, v.object_type))
  WHERE v.tenant_id = $tenant),
ranked AS (
  SELECT s.qi, s.doc_id, s.score, q.lim,
         row_number() OVER (PARTITION BY s.qi ORDER BY s.score DESC, s.doc_id) AS rn
  FROM scored s JOIN q ON q.qi = s.qi)
SELECT qi, doc_id, score FROM ranked WHERE rn <= lim ORDER BY qi, rn
"""


def _num(x: float) -> str:
    """A DOUBLE literal that reads back as exactly ``x``."""
    r = repr(float(x))
    return r if "e" in r or "n" in r else r + "e0"


def vector_topk(con, queries: Sequence[tuple[str, Sequence[str], int, Sequence[float]]], *,
                tenant: str) -> list[tuple[int, int, float]]:
    """(query index, doc id, cosine) of each (evidence type, object types, limit, unit vector),
    each query's hits in rank order."""
    if not queries:
        return []
    params: dict[str, Any] = {"tenant": tenant}
    rows = []
    for qi, (etype, otypes, limit, vec) in enumerate(queries):
        if len(vec) != DIM:
            raise ValueError(f"query vector of {len(vec)} dimensions, the store holds {DIM}")
        params.update({f"e{qi}": etype, f"o{qi}": list(otypes)})
        # The vector as a literal of DOUBLEs (each exactly a float32 ctx computed), cast to
        # FLOAT[256]: binding a 256-element list as a parameter costs 40-100 ms, the literal <1 ms.
        lit = "[" + ", ".join(_num(x) for x in vec) + "]"
        rows.append(f"({qi}, CAST($e{qi} AS VARCHAR), CAST($o{qi} AS VARCHAR[]), {int(limit)}, "
                    f"CAST({lit}::DOUBLE[] AS FLOAT[{DIM}]))")
    sql = _VECTOR.format(rows=", ".join(rows), places=SCORE_PLACES)
    return [(int(qi), int(doc), float(score)) for qi, doc, score in con.execute(sql, params).fetchall()]
