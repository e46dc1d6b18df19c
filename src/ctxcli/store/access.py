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

Both dialects are side by side so that a one-sided change is visible; what both read alike
(the time predicates, the ranked list's widening and withheld counts) is written once here
and used by every statement of both backends.
"""

from __future__ import annotations

import re
from typing import NamedTuple

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


# -- DuckDB: `o` is the objects row; $scopes, $purpose, $sources are bound parameters
DUCK_SCOPE = "list_has_all(CAST($scopes AS VARCHAR[]), coalesce(o.required_scopes, []::VARCHAR[]))"
DUCK_PURPOSE = "coalesce(list_contains(o.allowed_purposes, CAST($purpose AS VARCHAR)), false)"
DUCK_SOURCE = "list_contains(CAST($sources AS VARCHAR[]), o.source_id)"
DUCK_READABLE = f"({DUCK_SCOPE} AND {DUCK_PURPOSE} AND {DUCK_SOURCE})"
DUCK_VALID = valid_at("o.")

# -- PostgreSQL: the same predicates; %(scopes)s, %(purpose)s, %(sources)s are bound parameters
PG_SCOPE = "coalesce(o.required_scopes, '{}'::text[]) <@ %(scopes)s::text[]"
PG_PURPOSE = "coalesce(%(purpose)s::text = ANY(o.allowed_purposes), false)"
PG_SOURCE = "o.source_id = ANY(%(sources)s::text[])"
PG_READABLE = f"({PG_SCOPE} AND {PG_PURPOSE} AND {PG_SOURCE})"
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
