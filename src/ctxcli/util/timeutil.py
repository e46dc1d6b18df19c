"""Timezone-aware timestamps and durations. Naive timestamps are always an error."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_DUR = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_ts(value: object, *, what: str = "timestamp") -> datetime:
    """Parse an ISO-8601 timestamp that carries a zone offset; raise ValueError otherwise."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{what} {value!r} is not an ISO-8601 timestamp") from None
    else:
        raise ValueError(f"{what} must be an ISO-8601 string, got {type(value).__name__}")
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError(f"{what} {value!r} has no timezone offset (naive timestamps are not accepted)")
    return dt


def to_utc(dt: datetime) -> datetime:
    return dt.astimezone(timezone.utc)


def iso(dt: datetime | None) -> str | None:
    """Canonical text form used in every output: UTC, seconds precision, 'Z'."""
    if dt is None:
        return None
    u = dt.astimezone(timezone.utc)
    if u.microsecond:
        return u.isoformat().replace("+00:00", "Z")
    return u.strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_local(dt: datetime) -> str:
    """The timestamp in its own offset, as the user wrote it (for requests)."""
    return dt.isoformat()


def parse_duration(value: object, *, what: str = "duration") -> timedelta:
    """'90m', '24h', '30d', '2w' or an integer number of seconds."""
    if isinstance(value, bool):
        raise ValueError(f"{what} must be like '24h' or '30d'")
    if isinstance(value, int) and value >= 0:
        return timedelta(seconds=value)
    if isinstance(value, str):
        m = _DUR.match(value)
        if m:
            return timedelta(seconds=int(m.group(1)) * _UNITS[m.group(2)])
    raise ValueError(f"{what} {value!r} must be like '90m', '24h', '30d' or '2w'")


def fmt_duration(td: timedelta) -> str:
    s = int(td.total_seconds())
    for unit, n in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if s % n == 0 and s >= n:
            return f"{s // n}{unit}"
    return f"{s}s"
