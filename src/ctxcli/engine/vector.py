"""The vector channel: exact cosine search over the store's vectors, inside one tenant.

One statement covers every vector query of a round. The tenant, the evidence type (the
object supports it) and the declared object types are predicates of that statement, so
another tenant's objects are never scored, let alone returned. Cosine scores are rounded to
6 places and ties broken by doc id, so the ranking is total and deterministic. The query
vector is made by the installed pinned model, which must be the one the store's vectors were
made with (meta ``embedding_weights_sha256``); otherwise :class:`EmbeddingError`.
"""

from __future__ import annotations

from typing import Any

from ..embed.model import DIM
from ..errors import EmbeddingError
from .plan import Query

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


def query_model(con):
    """The installed model, checked against the one the store's vectors were made with."""
    from ..embed import load_model

    model = load_model()
    row = con.execute("SELECT value FROM meta WHERE key = 'embedding_weights_sha256'").fetchone()
    stored = row[0] if row else None
    if stored != model.weights_sha256:
        raise EmbeddingError(f"the store's vectors were made with other embedding weights "
                             f"(sha256 {str(stored)[:12]}…, installed {model.weights_sha256[:12]}…); "
                             f"rebuild the store with `ctx load`")
    return model


def vector_search(con, qs: list[Query], *, tenant: str) -> list[tuple[int, int, float]]:
    """Exact cosine top-``limit`` of each vector query within the tenant: (query index, doc id,
    score), each query's hits in rank order. A query whose text has no token finds nothing."""
    model = query_model(con)
    params: dict[str, Any] = {"tenant": tenant}
    rows = []
    for qi, q in enumerate(qs):
        vec = model.embed(q.text)
        if vec is None:
            continue
        params.update({f"e{qi}": q.evidence_type, f"o{qi}": list(q.object_types)})
        # The vector as a literal of DOUBLEs (each exactly a float32 this code computed), cast to
        # FLOAT[256]: binding a 256-element list as a parameter costs 40-100 ms, the literal <1 ms.
        lit = "[" + ", ".join(_num(x) for x in vec) + "]"
        rows.append(f"({qi}, CAST($e{qi} AS VARCHAR), CAST($o{qi} AS VARCHAR[]), {int(q.limit)}, "
                    f"CAST({lit}::DOUBLE[] AS FLOAT[{DIM}]))")
    if not rows:
        return []
    sql = _VECTOR.format(rows=", ".join(rows), places=SCORE_PLACES)
    return [(int(qi), int(doc), float(score)) for qi, doc, score in con.execute(sql, params).fetchall()]
