"""The manifest's ``mapping:`` applied to one record (a front-matter mapping, a table row, an
exported ticket): field names and ``{field}`` templates onto ctx's fields, constants from
``set``, naive times through the declared zone. Shared by every parser that maps."""

from __future__ import annotations

import re
from datetime import date, datetime, time
from decimal import Decimal
from typing import Any

from ...errors import InputError
from ...models.manifest import FactSpec, Mapping

_FIELD = re.compile(r"\{([^{}]+)\}")
TIME_FIELDS = ("valid_from", "valid_to", "observed_at")
PLAIN_FIELDS = ("object_id", "title", "body", "version", "object_type", "subject_id", "tenant_id",
                "supersedes")


class Where:
    """Where a record is, for messages: a file and line, plus a label (``row 12``, ``commit
    abc1234 path a.md``) and the column naming convention of the source."""

    def __init__(self, file: str, line: int | None = None, label: str = "", what: str = "field") -> None:
        self.file, self.line, self.label, self.what = file, line, label, what

    def error(self, msg: str, field: str | None = None) -> InputError:
        return InputError(f"{self.label}: {msg}" if self.label else msg, file=self.file, line=self.line,
                          field=field)


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def empty(v: Any) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def resolve(spec: str, rec: dict[str, Any], where: Where, target: str, *, required: bool = False) -> Any:
    """A field's value (``spec`` a field name: the raw value, None when absent) or a template's
    text (every ``{field}`` must be present and non-empty, else an error naming it)."""
    if "{" not in spec:
        v = rec.get(spec)
        if required and empty(v):
            raise where.error(f"{where.what} {spec!r} (mapped to {target}) is missing or empty", field=target)
        return v

    def sub(m: re.Match) -> str:
        name = m.group(1)
        v = rec.get(name)
        if empty(v):
            raise where.error(f"{where.what} {name!r} (in the {target} template {spec!r}) is missing or empty",
                              field=target)
        return _text(v)

    return _FIELD.sub(sub, spec)


def to_time(v: Any, tz: str | None, where: Where, name: str) -> str | None:
    """An aware ISO timestamp: aware values pass, naive ones are placed in ``tz`` (a naive value
    without a declared zone is an error naming the field and the record)."""
    if empty(v):
        return None
    if isinstance(v, date) and not isinstance(v, datetime):
        v = datetime.combine(v, time())
    if isinstance(v, str):
        text = v.strip()
        try:
            v = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
        except ValueError:
            raise where.error(f"{where.what} {name!r}: {v!r} is not an ISO-8601 time") from None
    if not isinstance(v, datetime):
        raise where.error(f"{where.what} {name!r}: {type(v).__name__} is not a time")
    if v.tzinfo is None or v.utcoffset() is None:
        if tz is None:
            raise where.error(f"{where.what} {name!r}: naive time {v.isoformat()!r} and the mapping "
                              f"declares no timezone")
        from zoneinfo import ZoneInfo

        v = v.replace(tzinfo=ZoneInfo(tz))
    return v.isoformat()


def fact_value(spec: str | FactSpec, rec: dict[str, Any], tz: str | None, where: Where, fact: str) -> Any:
    src, typ = (spec, None) if isinstance(spec, str) else (spec.from_, spec.type)
    v = resolve(src, rec, where, f"facts.{fact}")
    if empty(v):
        return None
    try:
        if typ == "int":
            return int(v) if not isinstance(v, float) or v.is_integer() else _bad(v)
        if typ == "float":
            return float(v)
        if typ == "bool":
            if isinstance(v, str):
                return {"true": True, "false": False, "1": True, "0": False}[v.strip().lower()]
            return bool(v)
        if typ == "timestamp":
            return to_time(v, tz, where, src)
        if typ == "str":
            return _text(v)
        if typ == "list":
            items = v if isinstance(v, list) else str(v).split(";")
            return [x.strip() if isinstance(x, str) else x for x in items if not empty(x)]
    except (ValueError, KeyError, TypeError):
        raise where.error(f"{where.what} {src!r}: {v!r} is not a {typ}", field=f"facts.{fact}") from None
    # untyped: keep what the source typed, made JSON-safe
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, (datetime, date)):
        return to_time(v, tz, where, src)
    if isinstance(v, (str, int, float, bool)) or (isinstance(v, list) and all(isinstance(x, (str, int, float))
                                                                               for x in v)):
        return v
    return _text(v)


def _bad(v: Any):
    raise ValueError(v)


def apply(mp: Mapping, rec: dict[str, Any], where: Where, *, native: tuple[str, ...] = ()) -> dict[str, Any]:
    """ctx fields of one record. ``native`` names the ctx fields a record may carry under
    their own names (front matter: ``doc_id``, ``facts`` …); they apply unless mapped."""
    out: dict[str, Any] = {k: rec[k] for k in native if k in rec}
    out.update(mp.set)
    for f in PLAIN_FIELDS:
        spec = getattr(mp, f)
        if spec is not None:
            v = resolve(spec, rec, where, f)
            if not empty(v):
                out[f] = _text(v) if not isinstance(v, (list, dict)) else v
            else:
                out.pop(f, None)
    for f in TIME_FIELDS:
        spec = getattr(mp, f)
        if spec is not None:
            v = to_time(resolve(spec, rec, where, f), mp.timezone, where, spec)
            if v is None:
                out.pop(f, None)
            else:
                out[f] = v
        elif f in out and mp.timezone is not None:
            out[f] = to_time(out[f], mp.timezone, where, f)
    if mp.facts:
        facts = dict(out.get("facts") or {})
        for name, spec in mp.facts.items():
            v = fact_value(spec, rec, mp.timezone, where, name)
            if v is not None:
                facts[name] = v
        out["facts"] = facts
    if mp.keys:
        keys = list(out.get("keys") or [])
        for spec in mp.keys:
            if "{" not in spec:
                v = rec.get(spec)
                for x in v if isinstance(v, list) else [v]:     # a field may hold a list of keys
                    if not empty(x):
                        keys.append(_text(x))
                continue
            try:
                keys.append(resolve(spec, rec, where, "keys"))
            except InputError:
                continue        # a key template over an empty field: no key, by design
        out["keys"] = keys
    return out
