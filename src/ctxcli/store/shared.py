"""What both store backends say alike, named once (duckdb_store.py / duckdb_vector.py and
pg/reader.py import it).

A constant two dialects must agree on lives here, and so does each dialect's rendering of a
shared expression, side by side, so that a change to one of them shows next to the other
(docs/modules.md, "Two dialects"). The statements around them stay in their backend, except
those written once for both (store/access.py, store/window.py).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Sequence

# ------------------------------------------------------------------------------ BM25
# Okapi BM25 with k1 = 1.2 and b = 0.75, as SQL decimal literals (DuckDB multiplies the integer
# document length by the decimal b exactly; PostgreSQL casts the same product to float8 at the
# same point), so both backends compute the same float8 steps in the same order.
BM25_K1 = Decimal("1.2")
BM25_B = Decimal("0.75")
# Scores are rounded to this many decimal places (DuckDB's round(x, 9); PostgreSQL's copy of
# it: floor(x · 1e9 + ½) / 1e9, half away from zero for the positive scores BM25 gives).
BM25_PLACES = 9

# The score of one document for one query: the sum over its postings of
# idf · tf · (k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl)); ``{avgdl}`` is left for the
# statement's own ``format``.
BM25_SUM_DUCKDB = (f"sum(qt.idf * p.tf * {BM25_K1 + 1} / (p.tf + {BM25_K1} * ({1 - BM25_B} + {BM25_B} * p.dl "
                   "/ {avgdl})))")
BM25_SUM_POSTGRES = (f"sum(qt.idf * p.tf * {BM25_K1 + 1}::float8 / (p.tf + {BM25_K1}::float8 * ({1 - BM25_B}::float8 "
                     f"+ ({BM25_B} * p.dl)::float8\n             / {{avgdl}})))")

# ------------------------------------------------------------------------------ vectors
VECTOR_DIM = 256            # the vectors table's FLOAT[256] (embed/model.py computes them)
VECTOR_PLACES = 6           # cosine scores rounded to 6 places, ties broken by doc id


def vector_rows(queries: Sequence[tuple[str, Sequence[str], int, Sequence[float]]], params: dict[str, Any],
                row: Callable[[int, int, Sequence[float]], str]) -> list[str]:
    """The query table of a vector statement: one row per (evidence type, object types, limit,
    vector), the type and object types bound as ``e<i>`` / ``o<i>``, the row itself rendered by
    the dialect's ``row(i, limit, vector)``. ValueError for a vector of another dimension."""
    rows = []
    for qi, (etype, otypes, limit, vec) in enumerate(queries):
        if len(vec) != VECTOR_DIM:
            raise ValueError(f"query vector of {len(vec)} dimensions, the store holds {VECTOR_DIM}")
        params.update({f"e{qi}": etype, f"o{qi}": list(otypes)})
        rows.append(row(qi, int(limit), vec))
    return rows


# ------------------------------------------------------------------------------ float literals
# Numbers ctx computed (idf, avgdl, vector components) travel as literals, so that filters
# reach the scan; each reads back as exactly the float it was.
def duck_num(x: float) -> str:
    """A DuckDB DOUBLE literal that reads back as exactly ``x``."""
    r = repr(float(x))
    return r if "e" in r or "n" in r else r + "e0"


def pg_num(x: float) -> str:
    """A PostgreSQL float8 literal that reads back as exactly ``x``."""
    return f"'{float(x)!r}'::float8"


# ------------------------------------------------------------------------------ withheld counts
def held_counts(key, rows: list[tuple]) -> list[tuple]:  # noqa: ANN001
    """(key, source, scopes, purposes, count) summed over ``rows`` (…, source, scopes, purposes,
    count), in a fixed order."""
    acc: dict[tuple, int] = {}
    for *_, src, scopes, purposes, n in rows:
        k = (src, tuple(scopes or ()), tuple(purposes or ()))
        acc[k] = acc.get(k, 0) + int(n)
    return sorted([(key, src, list(sc), list(pu), n) for (src, sc, pu), n in acc.items()], key=repr)
