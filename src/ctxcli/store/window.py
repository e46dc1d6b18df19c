"""The time-window channel's statement, written once for both backends (:func:`window_sql`) and
read back alike (:func:`window_found`): for each query, the named entities (of a readable
source), the entities one authorised relation of a ``via`` type away (either direction) that
links at as_of as known at the knowledge time, and the objects about them whose event time lies
in [from, to], readable before the limit (store/access.py), nearest to the anchor first (ties by
doc id), widened past records not valid at as_of. The event-time column is chosen from a fixed
map, never taken from the playbook's text."""

from __future__ import annotations

from functools import lru_cache

from .access import WIDEN_CAP, Dialect, admitted, edge_authorised, entity_readable, in_window, of_type, ranked_cols, withheld
from .shared import held_counts

TIME_COLUMNS = {"valid_from": "valid_from_us", "observed_at": "observed_us"}

# the query table's columns, in order: (name, type)
QUERY_COLUMNS = (("qi", "integer"), ("supports", "text"), ("etype", "text"), ("ekeys", "text[]"),
                 ("via", "text[]"), ("otypes", "text[]"), ("lo", "bigint"), ("hi", "bigint"),
                 ("anchor", "bigint"), ("lim", "bigint"), ("cap", "bigint"))


@lru_cache(maxsize=32)
def window_sql(d: Dialect, queries: str, tcol: str, ok: str, valid: str) -> str:
    """The statement for dialect ``d``: ``queries`` is the body of the query table (the columns
    of :data:`QUERY_COLUMNS`, one row per query; ``$vias``: every relation type they walk),
    ``tcol`` the event-time column (a value of
    :data:`TIME_COLUMNS`), ``ok`` and ``valid`` the access and validity predicates of an objects
    row ``o`` (store/access.py). Rows: (query index, doc id, event time, rank, then NULLs) for
    what the limit admits, and (query index, NULL, NULL, NULL, source, scopes, purposes, count)
    for what the subject may not read."""
    assert tcol in TIME_COLUMNS.values(), tcol
    text = d.t("text")
    cols = ", ".join(c for c, _ in QUERY_COLUMNS)
    return d.params(f"""
WITH q({cols}) AS ({queries}),
e AS (
  SELECT q.qi, entity_id, entity_key FROM entities JOIN q
    ON {d.member("entity_key", "q.ekeys")} OR entity_type = q.etype
  WHERE {entity_readable(d)}),
r AS (
  SELECT src, dst, rel_type FROM relations
  WHERE dst IS NOT NULL AND {d.member("rel_type", d.arr("vias", "text"))} AND {edge_authorised(d)}),
linked AS (
  SELECT qi, entity_key AS k FROM e
  UNION SELECT e.qi, n.entity_key FROM r JOIN e ON r.src = e.entity_id JOIN q ON q.qi = e.qi AND {d.member("r.rel_type", "q.via")}
    JOIN entities n ON n.entity_id = r.dst WHERE n.tenant_id = $tenant
  UNION SELECT e.qi, n.entity_key FROM r JOIN e ON r.dst = e.entity_id JOIN q ON q.qi = e.qi AND {d.member("r.rel_type", "q.via")}
    JOIN entities n ON n.entity_id = r.src WHERE n.tenant_id = $tenant),
cand AS (
  SELECT q.qi, q.anchor, q.lim, q.cap, o.doc_id, o.{tcol} AS t, {ok} AS ok, {valid} AS valid, o.source_id,
         o.required_scopes, o.allowed_purposes
  FROM objects o JOIN linked ON o.subject_id = linked.k JOIN q ON q.qi = linked.qi
  WHERE o.tenant_id = $tenant AND {of_type(d, "q.supports", "q.otypes", "o")}
    AND {in_window(f"o.{tcol}", "q.lo", "q.hi")}),
ranked AS (
  SELECT qi, lim, cap, doc_id, t, valid, {ranked_cols("PARTITION BY qi ORDER BY abs(t - anchor), doc_id")}
  FROM cand WHERE ok)
SELECT qi, doc_id, t, rn, NULL::{text}, NULL::{text}[], NULL::{text}[], NULL::{d.t("bigint")}
FROM ranked WHERE {admitted("lim", "cap")}
UNION ALL
{withheld("cand", "qi, NULL, NULL, NULL", "qi")}
""")


def window_rows(queries) -> dict[str, list[tuple]]:  # noqa: ANN001
    """The query table's rows of ``queries`` ((query id, evidence type, object types, window
    query, limit), the engine's order), one list per event-time column, in the columns'
    order; each query's cap is its limit × WIDEN_CAP."""
    by_col: dict[str, list[tuple]] = {}
    for qi, (_qid, etype, otypes, w, lim) in enumerate(queries):
        by_col.setdefault(TIME_COLUMNS[w["time"]], []).append((
            qi, etype, w["entity_type"], [w["entity"]] if w["entity"] else [], list(w["via"]), list(otypes),
            w["from_us"], w["to_us"], w["anchor_us"], int(lim), int(lim) * WIDEN_CAP))
    return dict(sorted(by_col.items()))


def window_vias(rows: list[tuple]) -> list[str]:
    """Every relation type the query table's ``rows`` walk (the statement reads only those)."""
    return sorted({v for r in rows for v in r[4]})


def window_found(queries, rows: list[tuple]) -> tuple[list[tuple], list[tuple]]:  # noqa: ANN001
    """(hits, withheld) of the statements' ``rows``: hits (query id, doc id, event time) in query
    and rank order; withheld (query id, source, scopes, purposes, count) in a fixed order."""
    per: dict[int, list[tuple]] = {}
    for r in rows:
        per.setdefault(r[0], []).append(r[1:])
    hits: list[tuple] = []
    held: list[tuple] = []
    for qi, (qid, *_) in enumerate(queries):
        got = per.get(qi, [])
        hits.extend((qid, doc, t) for doc, t, _rn, *_ in sorted((r for r in got if r[0] is not None),
                                                                 key=lambda r: r[2]))
        held.extend(held_counts(qid, [r for r in got if r[0] is None]))
    return hits, sorted(held, key=repr)
