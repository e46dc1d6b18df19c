"""Access rules inside the candidate statements: what the subject may read, as predicates that
every channel's statement applies *before* its limit (docs/gates.md, "Where each rule is
enforced").

A record is **readable** when (1) it is the request's tenant's (each statement's own tenant
predicate), (2) the subject holds every scope it needs (its source's and its record's,
``objects.required_scopes``), (3) the request's purpose is among its allowed purposes
(``objects.allowed_purposes``) and (4) its source is enabled and classified at or below the
subject's clearance. (4) is a property of the source, decided in Python over the small sources
table (:func:`ctxcli.engine.retrieve.readable_for`) and passed as the list ``sources``; (2)
and (3) are per record and decided in the statement. So each channel's limit counts only
records the subject may see: withheld records never crowd readable ones out, and are never
returned.

What the statements return about the records they withhold is a count per access
combination (source, required scopes, allowed purposes) of the subject's own tenant — never
a doc id, an object id, a title or content; the engine turns each combination into the gate
that withholds it (scope → classification → purpose, the gate order) and what it would need.

Validity is applied before the limit too, but it does not hide: an expired or not-yet-valid
record is still a candidate (the validity gate explains it and names its replacement). Each
ranked list holds the first ``limit`` records valid at ``as_of`` (the question's time), however
many invalid ones rank above them, and, among them, the invalid records ranked within the first
``limit`` × :data:`WIDEN_CAP` places (so a long chain of old versions is explained in part, and
never crowds out the version in force).

Each predicate is written once here and used by every statement of both backends: the time
predicates, the ranked list's widening and withheld counts as they are, the access rules
through :class:`Dialect` (what DuckDB and PostgreSQL write differently: array parameters,
membership, containment).
"""

from __future__ import annotations

import re
from typing import NamedTuple

C = 'COLLATE "C"'       # PostgreSQL: order text by bytes, as DuckDB does

# A ranked list holds `limit` valid records and, before the last of them, the records not
# valid at as_of ranked within the first limit × WIDEN_CAP places (docs/gates.md).
WIDEN_CAP = 2


class Readable(NamedTuple):  # (None in its place: the ungated baselines, see duck_access)
    """What the subject may read, as statement parameters (the tenant is passed beside it)."""

    scopes: tuple[str, ...]      # the subject's scopes, sorted
    purpose: str
    sources: tuple[str, ...]     # enabled sources at or below the subject's clearance, sorted


# -- The time predicates, written once (DuckDB's ``$name`` parameters; :func:`pg` gives PostgreSQL's)
def valid_at(a: str) -> str:
    """A record of alias ``a`` (``"o."``) valid at ``$asof``: from its first instant (valid_from ≤
    as_of) until its end (valid_to > as_of; the end itself is the next version's)."""
    return f"(({a}valid_from_us IS NULL OR {a}valid_from_us <= $asof) AND ({a}valid_to_us IS NULL OR {a}valid_to_us > $asof))"


def links_at(a: str) -> str:
    """A relation of alias ``a`` (``"r."`` or ``""``) that links at ``$asof`` as known at ``$known``:
    declared by the knowledge time (valid_from ≤ known) and not ended at the question time
    (valid_to > as_of) — and so is the record that states it (``ev_``)."""
    return (f"({a}valid_from_us IS NULL OR {a}valid_from_us <= $known) AND ({a}valid_to_us IS NULL OR {a}valid_to_us > $asof)"
            f" AND ({a}ev_valid_from_us IS NULL OR {a}ev_valid_from_us <= $known)"
            f" AND ({a}ev_valid_to_us IS NULL OR {a}ev_valid_to_us > $asof)")


def in_window(t: str, lo: str, hi: str) -> str:
    """An event time ``t`` inside the window [lo, hi]: both ends belong to it."""
    return f"{t} >= {lo} AND {t} <= {hi}"


# -- The limit's widening (:func:`widened`) in SQL, written once for both backends: a readable
# candidate row (``ok``) carries ``valid`` (valid at as_of); ranked in its window, it keeps
# ``rn`` (its place) and ``nv`` (how many rows before it are valid), and the list admits it when
# fewer than the limit are valid before it and it is valid or within the widening cap.
def ranked_cols(window: str) -> str:
    """``rn`` and ``nv`` over ``window`` (``PARTITION BY … ORDER BY …``, a total order)."""
    return (f"row_number() OVER ({window}) AS rn,\n"
            f"         coalesce(sum(valid::integer) OVER ({window} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS nv")


def admitted(lim: str, cap: str) -> str:
    """The ranked rows the limit ``lim`` admits, widened within the first ``cap`` places
    (``lim`` × :data:`WIDEN_CAP`): as :func:`widened`."""
    return f"nv < {lim} AND (valid OR rn <= {cap})"


def withheld(src: str, head: str, keys: str = "") -> str:
    """The matches of ``src`` the subject may not read (``NOT ok``), as counts per ``keys`` (the
    query's, if any) and access combination (source, required scopes, allowed purposes), never
    a doc id: ``head`` is the select list before the source (the keys and the NULLs of the
    other columns)."""
    group = ", ".join(k for k in (keys, "source_id, required_scopes, allowed_purposes") if k)
    return (f"SELECT {head}, source_id, required_scopes, allowed_purposes, count(*)\n"
            f"FROM {src} WHERE NOT ok GROUP BY {group}")


def pg(sql: str) -> str:
    """A predicate written for DuckDB (``$name``) in PostgreSQL's parameters (``%(name)s``)."""
    return re.sub(r"\$(\w+)", r"%(\1)s", sql)


class Dialect(NamedTuple):
    """How one backend writes what a predicate needs, so that each predicate is written once
    (:func:`readable_sql`, the window statement in :mod:`.window`): a bound parameter cast to an
    array or a scalar, array membership, containment and emptiness. Predicates are written with
    DuckDB's ``$name`` parameters; :meth:`params` turns them into the backend's."""

    name: str
    type_names: tuple[tuple[str, str], ...]     # ("text", the backend's name for it), …

    def t(self, typ: str) -> str:
        """The backend's name of ``typ`` ("text", "integer", "bigint")."""
        return dict(self.type_names)[typ]

    def arr(self, param: str, typ: str) -> str:
        """``$param`` as an array of ``typ``."""
        t = self.t(typ)
        return f"CAST(${param} AS {t}[])" if self.name == "duckdb" else f"${param}::{t}[]"

    def val(self, param: str, typ: str) -> str:
        """``$param`` as one ``typ``."""
        t = self.t(typ)
        return f"CAST(${param} AS {t})" if self.name == "duckdb" else f"${param}::{t}"

    def member(self, x: str, array: str) -> str:
        """``x`` is an element of ``array``."""
        return f"list_contains({array}, {x})" if self.name == "duckdb" else f"{x} = ANY({array})"

    def has_all(self, array: str, sub: str) -> str:
        """Every element of ``sub`` is in ``array``."""
        return f"list_has_all({array}, {sub})" if self.name == "duckdb" else f"{sub} <@ {array}"

    def empty_if_null(self, array: str, typ: str) -> str:
        """``array``, or an empty array of ``typ`` when it is NULL."""
        t = self.t(typ)
        return f"coalesce({array}, []::{t}[])" if self.name == "duckdb" else f"coalesce({array}, '{{}}'::{t}[])"

    def is_empty(self, array: str) -> str:
        return f"len({array}) = 0" if self.name == "duckdb" else f"cardinality({array}) = 0"

    @property
    def q(self) -> str:
        """A positional parameter."""
        return "?" if self.name == "duckdb" else "%s"

    def arr_q(self, typ: str) -> str:
        """A positional parameter as an array of ``typ``."""
        return f"CAST(? AS {self.t(typ)}[])" if self.name == "duckdb" else f"%s::{self.t(typ)}[]"

    def by(self, col: str) -> str:
        """``col`` (text) in ORDER BY, ordered by bytes on both backends."""
        return col if self.name == "duckdb" else f"{col} {C}"

    def in_ids(self, col: str, name: str, typ: str) -> str:
        """``col`` among the ids ``name``: DuckDB, a list of literals the caller formats into
        ``{name}`` (so the index on ``col`` answers it); PostgreSQL, the array ``$name``."""
        return f"{col} IN ({{{name}}})" if self.name == "duckdb" else f"{col} = ANY(${name}::{self.t(typ)}[])"

    def params(self, sql: str) -> str:
        """``sql``'s ``$name`` parameters in the backend's form."""
        return sql if self.name == "duckdb" else pg(sql)


DUCKDB = Dialect("duckdb", (("text", "VARCHAR"), ("integer", "INTEGER"), ("bigint", "BIGINT")))
POSTGRES = Dialect("postgres", (("text", "text"), ("integer", "integer"), ("bigint", "bigint")))


def readable_sql(d: Dialect) -> str:
    """The per-record access rules of an objects row ``o``: the subject holds every scope it
    needs (``$scopes``), the request's purpose is among its allowed ones (``$purpose``; no
    allowed purposes: none), and its source is one the subject may read (``$sources``)."""
    scope = d.has_all(d.arr("scopes", "text"), d.empty_if_null("o.required_scopes", "text"))
    purpose = f"coalesce({d.member(d.val('purpose', 'text'), 'o.allowed_purposes')}, false)"
    source = d.member("o.source_id", d.arr("sources", "text"))
    return d.params(f"({scope} AND {purpose} AND {source})")


def of_type(d: Dialect, etype: str, otypes: str, row: str) -> str:
    """A row (alias ``row``: an object or its vector) that answers a query: it supports the
    query's evidence type (the column ``etype`` among ``row.supports``) and is of one of its
    object types (the array ``otypes``; empty: any type)."""
    return (f"{d.member(etype, f'{row}.supports')}"
            f" AND ({d.is_empty(otypes)} OR {d.member(f'{row}.object_type', otypes)})")


def entity_readable(d: Dialect, a: str = "") -> str:
    """An entity of alias ``a`` (``"e."`` or ``""``) the walk may start from or reach: the request's
    tenant's (``$tenant``), declared by a source the subject may read (``$readable``)."""
    return f"{a}tenant_id = $tenant AND {d.member(f'{a}source_id', d.arr('readable', 'text'))}"


def edge_authorised(d: Dialect, a: str = "") -> str:
    """A relation of alias ``a`` the walk may take: the request's tenant's, of an access class the
    subject may follow (``$access_ok``: its source, its destination's and its attesting record's,
    decided in Python over the small relation_access table), linking at as_of as known at the
    knowledge time (:func:`links_at`)."""
    return f"{a}tenant_id = $tenant AND {d.member(f'{a}access_id', d.arr('access_ok', 'integer'))} AND {links_at(a)}"


DUCK_READABLE = readable_sql(DUCKDB)
DUCK_VALID = valid_at("o.")
PG_READABLE = readable_sql(POSTGRES)
PG_VALID = pg(valid_at("o."))


def _params(readable: Readable, as_of_us: int) -> dict:
    return {"scopes": list(readable.scopes), "purpose": readable.purpose, "sources": list(readable.sources),
            "asof": as_of_us}


def duck_access(readable: Readable | None, as_of_us: int) -> tuple[str, str, dict]:
    """(readable predicate, valid predicate, their parameters) for a DuckDB statement. ``None``
    is the ungated baselines (strategies ``full`` and ``topk``, which exist to show what the
    gates prevent, docs/eval.md): no access rule and no widening, only the tenant."""
    if readable is None:
        return "true", "true", {}
    return DUCK_READABLE, DUCK_VALID, _params(readable, as_of_us)


def pg_access(readable: Readable | None, as_of_us: int) -> tuple[str, str, dict]:
    """As :func:`duck_access`, for a PostgreSQL statement."""
    if readable is None:
        return "true", "true", {}
    return PG_READABLE, PG_VALID, _params(readable, as_of_us)


def widened(ranked, limit: int, valid) -> list:
    """What the limit admits of ``ranked`` (rank order): the first ``limit`` items valid at
    as_of (``valid(item)``) and the invalid items before the last of them that rank within the
    first ``limit`` × :data:`WIDEN_CAP` places."""
    out, n_valid = [], 0
    for rank, item in enumerate(ranked, 1):
        if n_valid >= limit:
            break
        ok = bool(valid(item))
        if ok or rank <= limit * WIDEN_CAP:
            out.append(item)
        n_valid += ok
    return out
