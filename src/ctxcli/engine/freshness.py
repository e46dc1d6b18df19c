"""Freshness by SLA: a source's snapshot age at the knowledge time against its ``refresh_sla``.

The knowledge time is ``known_at`` when the request gives one, else ``as_of`` (docs/gates.md,
"Which time each gate uses"). A snapshot's time is its newest observation known then (the latest
``observed_at`` of its objects not after the knowledge time, the cut-off of the knowledge-time
gate: an observation that gate excludes cannot make a source fresh); the store keeps no other
clock for a snapshot. Its age is measured at the knowledge time. A source is *stale* when that
age exceeds its ``refresh_sla``, or when it has no observation by the cut-off.
"""

from __future__ import annotations

from typing import Any

from ..util.timeutil import parse_duration, us_to_dt


def source_ages(con, tenant: str | None, as_of_us: int, tz, known_at_us: int | None = None) -> list[dict[str, Any]]:
    """Every source (of ``tenant``, and per-record-tenant sources; all when ``tenant`` is None)
    with its newest observation by the knowledge time (``known_at``, else ``as_of``), its age
    then, SLA and whether it is stale."""
    cutoff = as_of_us if known_at_us is None else known_at_us
    rows = con.source_freshness(tenant, cutoff)
    out = []
    for source_id, sla, newest in rows:
        sla_s = int(parse_duration(sla, what="refresh_sla").total_seconds())
        age_s = None if newest is None else (cutoff - newest) // 1_000_000
        out.append({"source_id": source_id, "refresh_sla": sla, "refresh_sla_s": sla_s,
                    "snapshot_observed_at": us_to_dt(newest, tz).isoformat() if newest is not None else None,
                    "age_s": age_s, "age": human_age(age_s), "stale": age_s is None or age_s > sla_s})
    return out


def human_age(seconds: int | None) -> str | None:
    """``5d 10h``, ``3h 7m``, ``42m``, ``9s``: the two largest units."""
    if seconds is None:
        return None
    parts = []
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= n or (unit == "s" and not parts):
            parts.append(f"{seconds // n}{unit}")
            seconds %= n
        if len(parts) == 2:
            break
    return " ".join(parts)
