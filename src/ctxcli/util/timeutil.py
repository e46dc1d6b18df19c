"""Timezone-aware timestamps and durations. Naive timestamps are always an error."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from functools import lru_cache

_DUR = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_MIN_UTC = datetime(2, 1, 1, tzinfo=timezone.utc)
_MAX_UTC = datetime(9998, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_option_time(value: str | None, option: str) -> datetime | None:
    """A user-given time (a CLI flag or a tool argument): None stays None; a value without a
    zone offset is a one-line UsageError naming ``option``."""
    if value is None:
        return None
    from ..errors import UsageError

    try:
        return parse_ts(value, what=option)
    except ValueError as e:
        raise UsageError(str(e)) from None


def parse_ts(value: object, *, what: str = "timestamp") -> datetime:
    """Parse an ISO-8601 timestamp that carries a zone offset; raise ValueError otherwise."""
    if type(value) is str:
        return _parse_text(value, what)     # a load's times repeat: each text is parsed once
    return _parse(value, what)


@lru_cache(maxsize=4096)
def _parse_text(value: str, what: str) -> datetime:
    return _parse(value, what)       # datetimes are immutable: one per text is safe to share


def _parse(value: object, what: str) -> datetime:
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
    try:
        u = dt.astimezone(timezone.utc)
    except OverflowError:
        u = None
    # A day of margin at both ends, so converting to any offset later cannot overflow.
    if u is None or not (_MIN_UTC <= u <= _MAX_UTC):
        raise ValueError(f"{what} {value!r} is out of range (years 0002 to 9998)")
    return dt


_OFFSET = re.compile(r"^([+-])(\d{2}):(\d{2})$")


def zone_of(name: str):
    """A calendar's zone: a ``±HH:MM`` offset (fixed) or an IANA name (``Europe/Madrid``, with its
    daylight-saving rules); ValueError naming it otherwise."""
    m = _OFFSET.match(name)
    if m:
        h, mi = int(m.group(2)), int(m.group(3))
        if h > 23 or mi > 59:
            raise ValueError(f"zone {name!r} is not a ±HH:MM offset or an IANA time zone name")
        return timezone((-1 if m.group(1) == "-" else 1) * timedelta(hours=h, minutes=mi))
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except (ValueError, OSError, KeyError):     # ZoneInfoNotFoundError is a KeyError
        raise ValueError(f"zone {name!r} is not a ±HH:MM offset or an IANA time zone name") from None


def calendar_bounds(unit: str, us: int, tz) -> tuple[int, int]:
    """The first µs of the calendar ``unit`` (day, week from Monday, month) holding ``us`` in
    ``tz``, and the first µs of the next one (excluded): the zone's offset decides which day."""
    d = us_to_dt(us, tz).date()
    if unit == "week":
        d -= timedelta(days=d.weekday())
    elif unit == "month":
        d = d.replace(day=1)
    start = datetime(d.year, d.month, d.day)
    if unit == "day":
        nxt = start + timedelta(days=1)
    elif unit == "week":
        nxt = start + timedelta(days=7)
    else:
        nxt = datetime(d.year + d.month // 12, d.month % 12 + 1, 1)
    return dt_to_us(start.replace(tzinfo=tz)), dt_to_us(nxt.replace(tzinfo=tz))


def dt_to_us(dt: datetime) -> int:
    """Microseconds since the Unix epoch (the store's time unit) of an aware timestamp."""
    return int(dt.timestamp()) * 1_000_000 + dt.microsecond


def us_to_dt(us: int | None, tz) -> datetime | None:
    """The stored microseconds as a timestamp in ``tz`` (None stays None)."""
    if us is None:
        return None
    return (_EPOCH + timedelta(microseconds=us)).astimezone(tz)


def iso(when: datetime | None, tz=None) -> str | None:
    """A timestamp as ISO 8601 text, in ``tz`` when one is given (else as it is); None stays None.
    Stored microseconds: ``iso(us_to_dt(us, tz))``."""
    if when is None:
        return None
    return (when.astimezone(tz) if tz is not None else when).isoformat()


def parse_duration(value: object, *, what: str = "duration") -> timedelta:
    """'90m', '24h', '30d', '2w' or an integer number of seconds."""
    if isinstance(value, bool):
        raise ValueError(f"{what} must be like '24h' or '30d'")
    try:
        if isinstance(value, int) and value >= 0:
            return timedelta(seconds=value)
        if isinstance(value, str):
            m = _DUR.match(value)
            if m:
                return timedelta(seconds=int(m.group(1)) * _UNITS[m.group(2)])
    except OverflowError:
        raise ValueError(f"{what} {value!r} is too long") from None
    raise ValueError(f"{what} {value!r} must be like '90m', '24h', '30d' or '2w'")


def fmt_duration(td: timedelta) -> str:
    s = int(td.total_seconds())
    for unit, n in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if s % n == 0 and s >= n:
            return f"{s // n}{unit}"
    return f"{s}s"
