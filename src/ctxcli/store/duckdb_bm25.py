"""BM25 on the DuckDB store from the term lists (schema 0009, issue 36): three small statements,
then exact scoring in numpy (or plain Python for a small tenant while numpy is not loaded).

1. The tenant's statistics and every access class (doc_classes) with the access rules of
   store/access.py evaluated on it in the statement (``{ok}``) and whether it holds each
   query's evidence type.
2. One index probe of term_lists by '<tenant_no> <term>' for the query terms (the tenant
   predicate inside the statement as well), each row the tenant's document frequency, its idf
   computed in SQL as before, and the term's postings packed as doc_id << 32 | tf.
3. The tenant's documents (tenant_docs): length, access class and validity at as_of.

Scoring repeats the SQL form's arithmetic step for step in float64 (store/shared.py: idf · tf ·
(k1 + 1) / (tf + k1 · (1 − b + b · dl / avgdl)), the same operations in the same order), sums
each document's terms in the query's order, rounds as DuckDB's ``round(x, 9)`` (half away from
zero) and ranks by (score desc, doc id). The access rule is applied to every matched document
before the top ``limit`` is taken: withheld documents never crowd readable ones out, and only
their counts per access combination leave this module; the list is widened past documents not
valid at as_of as in the SQL form. tests/test_bm25_plan.py holds this to the SQL form (the
exhaustive window ranking) exactly.

Values are written into the statements as literals (strings quoted, numbers this code computed):
DuckDB's Python binding converts each bound list element separately (~0.3 ms each here), which
was a third of a small statement's time. A string a literal cannot carry (one holding NUL) is
bound as a parameter instead (:class:`Literals`).
"""

from __future__ import annotations

import math
import re
import sys
from typing import Any, NamedTuple

from ..errors import StoreError
from .access import WIDEN_CAP, Readable, duck_access, widened
from .base import Found
from .shared import BM25_B, BM25_K1, BM25_PLACES

_CLASSES = """
SELECT t.tenant_no, t.num_docs, t.avgdl, o.cls, {ok} AS ok, [{holds}]::BOOLEAN[] AS holds, o.source_id,
       o.required_scopes, o.allowed_purposes
FROM tenants t, doc_classes o WHERE t.tenant_id = {tenant} ORDER BY o.cls
"""
# The probe is a MATERIALIZED CTE so that the index on term_lists(tkey) answers it (DuckDB uses
# an index only when its column is the scan's only filter); the tenant filter follows inside.
_LISTS = """
WITH m AS MATERIALIZED (SELECT tkey, tenant_no, df, postings FROM term_lists WHERE tkey IN ({keys}))
SELECT tkey, tenant_no, ln((({n} - df + 0.5) / (df + 0.5)) + 1) AS idf, postings FROM m WHERE tenant_no = {tno}
"""
_DOCS = "SELECT doc_id, dl, cls, {valid} AS valid FROM tenant_docs o WHERE tenant_no = {tno}"

_K1, _B1, _B = float(BM25_K1), float(1 - BM25_B), float(BM25_B)
_KP1 = float(BM25_K1 + 1)


# A named parameter of a statement (``$name``), as DuckDB spells it.
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


class Literals:
    """Values written into a statement as literals (strings quoted, DuckDB reads no backslash
    escapes); a string holding a NUL character, which a literal cannot carry, is bound as a
    parameter instead (``params``, passed with the statement)."""

    def __init__(self) -> None:
        self.params: dict[str, str] = {}

    def str(self, s: str) -> str:
        if "\x00" in s:
            name = f"nul{len(self.params)}"
            self.params[name] = s
            return f"${name}"
        return "'" + s.replace("'", "''") + "'"

    def inline(self, sql: str, params: dict[str, Any]) -> str:
        """``sql`` with its named parameters (strings, integers, lists of strings or of
        integers) written as literals, in one pass over ``sql``: a literal written in is never
        read again, so a value that spells another parameter's name (``$k1``) stays that text
        and cannot splice that parameter's literal into its own quotes."""
        def one(m: re.Match) -> str:
            name = m.group(1)
            return self.value(name, params[name]) if name in params else m.group(0)

        return _PARAM.sub(one, sql)

    def value(self, name: str, v: Any) -> str:
        """The literal of parameter ``name``'s value ``v``."""
        if isinstance(v, (list, tuple)):
            if all(isinstance(x, int) and not isinstance(x, bool) for x in v) and v:
                return "[" + ", ".join(str(int(x)) for x in v) + "]"
            return "[" + ", ".join(self.str(x) for x in v) + "]::VARCHAR[]"
        if isinstance(v, str):
            return self.str(v)
        if isinstance(v, int) and not isinstance(v, bool):
            return str(int(v))
        raise TypeError(f"no literal for parameter {name} of type {type(v).__name__}")

    def run(self, con, sql: str):
        """``con.execute(sql)`` with the parameters of ``sql`` bound, if it has any."""
        used = self.used(sql)
        return con.execute(sql, used) if used else con.execute(sql)

    def used(self, sql: str) -> dict[str, str]:
        return {k: v for k, v in self.params.items() if re.search(rf"\${k}\b", sql)}

    def once(self, memo: dict | None, slot: str, con, sql: str, fetch: str):
        """``run(con, sql)``'s rows (``fetch``: "fetchall" or "fetchnumpy"), read once per
        connection: ``memo`` (the store's, None: read each time) keeps the last statement of
        ``slot`` — its text, parameters and fetch are the key, so the same key is the same
        result on the file this connection reads — and its rows, which callers only read."""
        key = (sql, tuple(sorted(self.used(sql).items())), fetch)
        kept = memo.get(slot) if memo is not None else None
        if kept is not None and kept[0] == key:
            return kept[1]
        rows = getattr(self.run(con, sql), fetch)()
        if memo is not None:
            memo[slot] = (key, rows)
        return rows


def _largest(s, n: int):
    """A mask of the ``n`` largest values of ``s`` (ties at the cut included; all when fewer)."""
    import numpy as np

    if len(s) <= n:
        return np.ones(len(s), bool)
    return s >= np.partition(s, len(s) - n)[len(s) - n]


def round_places(x):
    """DuckDB's ``round(x, BM25_PLACES)`` of positive float64 values: half away from zero."""
    import numpy as np

    v = x * float(10 ** BM25_PLACES)
    f = np.floor(v)
    return (f + ((v - f) >= 0.5)) / float(10 ** BM25_PLACES)


def round_place(x: float) -> float:
    """:func:`round_places` of one value, in plain Python (the same operations on the same doubles)."""
    v = x * float(10 ** BM25_PLACES)
    f = float(math.floor(v))
    return (f + (1.0 if v - f >= 0.5 else 0.0)) / float(10 ** BM25_PLACES)


# A tenant of at most this many documents is scored in plain Python when numpy is not loaded
# yet: a fresh ``ctx investigate`` on a small store then never imports numpy (~60 ms of its
# start). Both scorers give the same hits bit for bit (tests/test_bm25_plan.py runs every case
# on each); numpy's wins from a few thousand documents on, and costs nothing once loaded.
PLAIN_MAX_DOCS = 2048


def plain_scoring(num_docs: int) -> bool:
    """Whether a tenant of ``num_docs`` documents is scored in plain Python (see PLAIN_MAX_DOCS)."""
    return num_docs <= PLAIN_MAX_DOCS and "numpy" not in sys.modules


def _top_numpy(lists, docs, queries, types, cls_ok, cls_holds, *, limit: int, cap: int):
    """Per query, its kept documents in rank order as (doc, score, valid), and the documents
    withheld by the access rule as {access class: count}; in numpy (lists and docs fetched as
    arrays)."""
    import numpy as np

    cls_ok, cls_holds = np.array(cls_ok, bool), np.array(cls_holds, bool).reshape(len(types), len(cls_ok))
    size = int(docs["doc_id"].max()) + 1 if len(docs["doc_id"]) else 0
    lenk = np.zeros(size)           # k1 · (1 − b + b · dl / avgdl) per document, as the SQL form
    lenk[docs["doc_id"]] = _K1 * (_B1 + (_B * docs["dl"].astype(np.float64)) / lists.avgdl)
    cls_of = np.zeros(size, np.int64)
    cls_of[docs["doc_id"]] = docs["cls"]
    valid_of = np.zeros(size, bool)
    valid_of[docs["doc_id"]] = docs["valid"]
    per: dict[str, tuple[Any, Any]] = {}
    for term, idf, packed in lists.rows:
        halves = np.ascontiguousarray(packed, dtype="<i8").view("<i4")     # (tf, doc id) per posting
        tf, d = halves[0::2], halves[1::2]
        if len(d) and int(d.max()) >= size:
            raise StoreError(_UNHELD)
        per[term] = (d, float(idf) * tf * _KP1 / (tf + lenk[d]))
    col = {t: i for i, t in enumerate(types)}
    for etype, qterms in queries:
        parts = [per[t] for t in qterms if t in per]        # a repeated term counts again, as in SQL
        if not parts:
            yield [], {}
            continue
        score = np.bincount(np.concatenate([p[0] for p in parts]), weights=np.concatenate([p[1] for p in parts]),
                            minlength=size)
        matched = np.flatnonzero(score)                      # every posting weighs > 0
        matched = matched[cls_holds[col[etype]][cls_of[matched]]]
        ok_doc = cls_ok[cls_of[matched]]
        withheld: dict[int, int] = {}
        if not ok_doc.all():
            for cls, cnt in zip(*np.unique(cls_of[matched[~ok_doc]], return_counts=True)):
                withheld[int(cls)] = int(cnt)
            matched = matched[ok_doc]
        s = round_places(score[matched])
        # the cap largest (ties included) and the ``limit`` largest valid at as_of (store/access.py)
        keep = _largest(s, cap) | (valid_of[matched] & _largest(np.where(valid_of[matched], s, -np.inf), limit))
        matched, s = matched[keep], s[keep]
        order = np.lexsort((matched, -s))
        docs_in, s_in = matched[order].tolist(), s[order].tolist()
        yield [(doc, sc, bool(valid_of[doc])) for doc, sc in zip(docs_in, s_in)], withheld


def _top_plain(lists, docs, queries, types, cls_ok, cls_holds, *, limit: int, cap: int):
    """:func:`_top_numpy` in plain Python for a small tenant (lists and docs fetched as rows):
    the same float64 operations in the same order, so the same scores bit for bit."""
    of: dict[int, tuple[float, int, bool]] = {}
    for doc, dl, cls, valid in docs:
        of[doc] = (_K1 * (_B1 + (_B * float(dl)) / lists.avgdl), cls, bool(valid))
    per: dict[str, list[tuple[int, float]]] = {}
    for term, idf, packed in lists.rows:
        weights = []
        for p in packed:
            doc, tf = p >> 32, p & 0xFFFFFFFF
            if doc not in of:
                raise StoreError(_UNHELD)
            weights.append((doc, float(idf) * tf * _KP1 / (tf + of[doc][0])))
        per[term] = weights
    ncls = len(cls_ok)
    for etype, qterms in queries:
        score: dict[int, float] = {}
        for t in qterms:                                     # a repeated term counts again, as in SQL
            for doc, w in per.get(t, ()):
                score[doc] = score.get(doc, 0.0) + w
        ti = types.index(etype)
        holds = cls_holds[ti * ncls:(ti + 1) * ncls]
        withheld: dict[int, int] = {}
        kept: list[tuple[float, int]] = []
        for doc, sc in score.items():
            cls = of[doc][1]
            if not holds[cls]:
                continue
            if not cls_ok[cls]:
                withheld[cls] = withheld.get(cls, 0) + 1
                continue
            kept.append((round_place(sc), doc))
        # the cap largest (ties included) and the ``limit`` largest valid at as_of (store/access.py)
        cut = _cut([sc for sc, _ in kept], cap)
        cut_valid = _cut([sc for sc, doc in kept if of[doc][2]], limit)
        kept = [(sc, doc) for sc, doc in kept if sc >= cut or (of[doc][2] and sc >= cut_valid)]
        kept.sort(key=lambda x: (-x[0], x[1]))
        yield [(doc, sc, of[doc][2]) for sc, doc in kept], withheld


def _cut(scores: list[float], n: int) -> float:
    """The ``n``-th largest of ``scores`` (every score is kept when there are at most ``n``)."""
    if len(scores) <= n:
        return -math.inf
    return sorted(scores, reverse=True)[n - 1]


_UNHELD = "a term list names a document its tenant does not hold; nothing was used"


class _Lists(NamedTuple):
    """The query terms' lists as read: (term, idf, postings) rows and the tenant's avgdl."""

    rows: list
    avgdl: float


def bm25_lists(con, queries, *, tenant: str, readable: Readable | None, as_of_us: int, limit: int,
               memo: dict | None = None) -> Found:
    """DuckDBStore.bm25 for a subject without unmasking scopes (see the module's docstring).
    With the store's ``memo``, the access classes and the tenant's documents are read once per
    connection for the same request (a later round of the investigation asks for them again)."""
    if limit <= 0:
        return Found([], [])
    lit = Literals()
    ok, valid, access = duck_access(readable, as_of_us)
    ok, valid = lit.inline(ok, access), lit.inline(valid, access)
    types = sorted({etype for etype, _ in queries})
    holds = ", ".join(f"list_contains(o.supports, {lit.str(t)})" for t in types)
    rows = lit.once(memo, "bm25:classes", con, _CLASSES.format(ok=ok, holds=holds, tenant=lit.str(tenant)), "fetchall")
    if not rows:
        return Found([], [])            # no such tenant, or no objects
    tno, n, avgdl = rows[0][:3]
    ncls = rows[-1][3] + 1
    cls_ok = [False] * ncls
    cls_holds = [False] * (len(types) * ncls)         # [type index · ncls + class]
    combo: dict[int, tuple] = {}
    for *_, cls, readable_cls, held, src, scopes, purposes in rows:
        cls_ok[cls] = bool(readable_cls)
        for ti, h in enumerate(held):
            cls_holds[ti * ncls + cls] = bool(h)
        combo[cls] = (src, scopes, purposes)
    terms = sorted({t for _, qterms in queries for t in qterms})
    if not terms:
        return Found([], [])
    plain = plain_scoring(int(n))
    cur = lit.run(con, _LISTS.format(keys=", ".join(lit.str(f"{int(tno)} {t}") for t in terms), n=int(n),
                                     tno=int(tno)))
    got = cur.fetchall() if plain else list(zip(*cur.fetchnumpy().values()))
    if any(int(row[1]) != tno for row in got):    # a second line behind the statement's tenant filter
        raise StoreError("a store lookup returned a row of another tenant; nothing was used")
    if not got:
        return Found([], [])
    prefix = len(f"{int(tno)} ")
    lists = _Lists([(str(key)[prefix:], idf, packed) for key, _, idf, packed in got], float(avgdl))
    top = _top_plain if plain else _top_numpy
    docs = lit.once(memo, "bm25:docs", con, _DOCS.format(valid=valid, tno=int(tno)), "fetchall" if plain else "fetchnumpy")
    cap = int(limit) * WIDEN_CAP
    hits: list[tuple] = []
    withheld: dict[tuple, int] = {}
    for qi, (ranked, held_back) in enumerate(top(lists, docs, queries, types, cls_ok, cls_holds,
                                                  limit=int(limit), cap=cap)):
        for cls, cnt in held_back.items():
            src, scopes, purposes = combo[cls]
            key = (qi, src, None if scopes is None else tuple(scopes), None if purposes is None else tuple(purposes))
            withheld[key] = withheld.get(key, 0) + cnt
        hits.extend((qi, doc, sc) for doc, sc, _ in widened(ranked, int(limit), lambda r: r[2]))
    return Found(hits, sorted(((qi, src, None if sc is None else list(sc), None if pu is None else list(pu), c)
                               for (qi, src, sc, pu), c in withheld.items()), key=repr))
