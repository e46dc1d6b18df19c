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

Validity is not an access rule: an expired or not-yet-valid record is still a candidate (the
validity gate explains it and names its replacement). But it must not crowd out either: each
ranked statement keeps going past its limit while records are not valid at ``as_of``, until
``limit`` valid records are in the list or the list holds :data:`WIDEN_CAP` times the limit.

Both dialects are side by side so that a one-sided change is visible.
"""

from __future__ import annotations

from typing import NamedTuple

# A ranked list holds at most limit × WIDEN_CAP records: `limit` valid ones and, before them,
# the records not valid at as_of that rank above them (docs/gates.md).
WIDEN_CAP = 2


class Readable(NamedTuple):  # (None in its place: the ungated baselines, see duck_access)
    """What the subject may read, as statement parameters (the tenant is passed beside it)."""

    scopes: tuple[str, ...]      # the subject's scopes, sorted
    purpose: str
    sources: tuple[str, ...]     # enabled sources at or below the subject's clearance, sorted


# -- DuckDB: `o` is the objects row; $scopes, $purpose, $sources are bound parameters
DUCK_SCOPE = "list_has_all(CAST($scopes AS VARCHAR[]), coalesce(o.required_scopes, []::VARCHAR[]))"
DUCK_PURPOSE = "coalesce(list_contains(o.allowed_purposes, CAST($purpose AS VARCHAR)), false)"
DUCK_SOURCE = "list_contains(CAST($sources AS VARCHAR[]), o.source_id)"
DUCK_READABLE = f"({DUCK_SCOPE} AND {DUCK_PURPOSE} AND {DUCK_SOURCE})"
DUCK_VALID = ("((o.valid_from_us IS NULL OR o.valid_from_us <= $asof) "
              "AND (o.valid_to_us IS NULL OR o.valid_to_us > $asof))")

# -- PostgreSQL: the same predicates; %(scopes)s, %(purpose)s, %(sources)s are bound parameters
PG_SCOPE = "coalesce(o.required_scopes, '{}'::text[]) <@ %(scopes)s::text[]"
PG_PURPOSE = "coalesce(%(purpose)s::text = ANY(o.allowed_purposes), false)"
PG_SOURCE = "o.source_id = ANY(%(sources)s::text[])"
PG_READABLE = f"({PG_SCOPE} AND {PG_PURPOSE} AND {PG_SOURCE})"
PG_VALID = ("((o.valid_from_us IS NULL OR o.valid_from_us <= %(asof)s) "
            "AND (o.valid_to_us IS NULL OR o.valid_to_us > %(asof)s))")


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
    """The head of ``ranked`` (rank order) that the limit admits: items until ``limit`` of them
    are valid at as_of (``valid(item)``), at most ``limit`` × :data:`WIDEN_CAP` in all."""
    out, n_valid = [], 0
    for item in ranked:
        if n_valid >= limit or len(out) >= limit * WIDEN_CAP:
            break
        out.append(item)
        n_valid += bool(valid(item))
    return out
