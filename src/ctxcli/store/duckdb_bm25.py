"""BM25 on the DuckDB store from the term lists (schema 0009, issue 36): three small statements,
then exact scoring in numpy.

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

import re
from typing import Any

from ..errors import StoreError
from .access import WIDEN_CAP, Readable, duck_access
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
        used = {k: v for k, v in self.params.items() if re.search(rf"\${k}\b", sql)}
        return con.execute(sql, used) if used else con.execute(sql)


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


def bm25_lists(con, queries, *, tenant: str, readable: Readable | None, as_of_us: int, limit: int) -> Found:
    """DuckDBStore.bm25 for a subject without unmasking scopes (see the module's docstring)."""
    import numpy as np

    if limit <= 0:
        return Found([], [])
    lit = Literals()
    ok, valid, access = duck_access(readable, as_of_us)
    ok, valid = lit.inline(ok, access), lit.inline(valid, access)
    types = sorted({etype for etype, _ in queries})
    holds = ", ".join(f"list_contains(o.supports, {lit.str(t)})" for t in types)
    rows = lit.run(con, _CLASSES.format(ok=ok, holds=holds, tenant=lit.str(tenant))).fetchall()
    if not rows:
        return Found([], [])            # no such tenant, or no objects
    tno, n, avgdl = rows[0][:3]
    ncls = rows[-1][3] + 1
    cls_ok = np.zeros(ncls, bool)
    cls_holds = np.zeros((len(types), ncls), bool)
    combo: dict[int, tuple] = {}
    for *_, cls, readable_cls, held, src, scopes, purposes in rows:
        cls_ok[cls] = readable_cls
        cls_holds[:, cls] = held
        combo[cls] = (src, scopes, purposes)
    terms = sorted({t for _, qterms in queries for t in qterms})
    if not terms:
        return Found([], [])
    got = lit.run(con, _LISTS.format(keys=", ".join(lit.str(f"{int(tno)} {t}") for t in terms), n=int(n),
                                     tno=int(tno))).fetchnumpy()
    if any(int(x) != tno for x in got["tenant_no"]):    # a second line behind the statement's tenant filter
        raise StoreError("a store lookup returned a row of another tenant; nothing was used")
    if not len(got["tkey"]):
        return Found([], [])
    docs = lit.run(con, _DOCS.format(valid=valid, tno=int(tno))).fetchnumpy()
    size = int(docs["doc_id"].max()) + 1 if len(docs["doc_id"]) else 0
    lenk = np.zeros(size)           # k1 · (1 − b + b · dl / avgdl) per document, as the SQL form
    lenk[docs["doc_id"]] = _K1 * (_B1 + (_B * docs["dl"].astype(np.float64)) / float(avgdl))
    cls_of = np.zeros(size, np.int64)
    cls_of[docs["doc_id"]] = docs["cls"]
    valid_of = np.zeros(size, bool)
    valid_of[docs["doc_id"]] = docs["valid"]
    per: dict[str, tuple[Any, Any]] = {}
    prefix = len(f"{int(tno)} ")
    for key, idf, packed in zip(got["tkey"], got["idf"], got["postings"]):
        halves = np.ascontiguousarray(packed, dtype="<i8").view("<i4")     # (tf, doc id) per posting
        tf, d = halves[0::2], halves[1::2]
        if len(d) and int(d.max()) >= size:
            raise StoreError("a term list names a document its tenant does not hold; nothing was used")
        per[str(key)[prefix:]] = (d, float(idf) * tf * _KP1 / (tf + lenk[d]))
    cap = int(limit) * WIDEN_CAP
    hits: list[tuple] = []
    withheld: dict[tuple, int] = {}
    col = {t: i for i, t in enumerate(types)}
    for qi, (etype, qterms) in enumerate(queries):
        parts = [per[t] for t in qterms if t in per]        # a repeated term counts again, as in SQL
        if not parts:
            continue
        score = np.bincount(np.concatenate([p[0] for p in parts]), weights=np.concatenate([p[1] for p in parts]),
                            minlength=size)
        matched = np.flatnonzero(score)                      # every posting weighs > 0
        matched = matched[cls_holds[col[etype]][cls_of[matched]]]
        ok_doc = cls_ok[cls_of[matched]]
        if not ok_doc.all():
            for cls, cnt in zip(*np.unique(cls_of[matched[~ok_doc]], return_counts=True)):
                src, scopes, purposes = combo[int(cls)]
                key = (qi, src, None if scopes is None else tuple(scopes),
                       None if purposes is None else tuple(purposes))
                withheld[key] = withheld.get(key, 0) + int(cnt)
            matched = matched[ok_doc]
        s = round_places(score[matched])
        # the cap largest (ties included) and the ``limit`` largest valid at as_of (store/access.py)
        keep = _largest(s, cap) | (valid_of[matched] & _largest(np.where(valid_of[matched], s, -np.inf), limit))
        matched, s = matched[keep], s[keep]
        order = np.lexsort((matched, -s))
        n_valid = 0
        for rank, (doc, sc) in enumerate(zip(matched[order].tolist(), s[order].tolist()), 1):
            if n_valid >= limit:
                break
            ok = bool(valid_of[doc])
            if ok or rank <= cap:
                hits.append((qi, doc, sc))
            n_valid += ok
    return Found(hits, sorted(((qi, src, None if sc is None else list(sc), None if pu is None else list(pu), c)
                               for (qi, src, sc, pu), c in withheld.items()), key=repr))
