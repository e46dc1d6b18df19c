"""The manifest's ``mapping:`` applied to one record (a front-matter mapping, a table row, an
exported ticket): field names and ``{field}`` templates onto ctx's fields, constants from
``set``, naive times through the declared zone. Shared by every parser that maps."""

from __future__ import annotations

import re
from datetime import date, datetime, time
from decimal import Decimal
from functools import lru_cache
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


def as_text(v: Any) -> str:
    """A mapped value as text: true/false, a YAML number as written, a time in ISO form, 2.0 as 2."""
    if isinstance(v, bool):
        return "true" if v else "false"
    written = getattr(v, "written", None)     # a YAML number as its text was written (util/yamlio)
    if written is not None:
        return written
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def empty(v: Any) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def field_spec(inner: str) -> tuple[str, str | None]:
    """(name, what a missing or empty value becomes) of a template field's text between the
    braces: ``name`` (None: required), ``name?`` (empty text) or ``name|default``."""
    if "|" in inner:
        name, default = inner.split("|", 1)
        return name, default
    if inner.endswith("?"):
        return inner[:-1], ""
    return inner, None


def spec_names(spec: str) -> list[str]:
    """The record fields a field map or template names (``service``, ``"{a} {b?} {c|x}"``)."""
    if "{" not in spec:
        return [spec]
    return [field_spec(b)[0] for b in _FIELD.findall(spec)]


class _Template:
    """A ``{field}`` template split once into lines of literal text and fields (a mapping
    applies each of its templates to every record: a table's 100k rows). A field is required
    (``{f}``), optional (``{f?}``: empty text) or has a default (``{f|text}``); a line whose
    only fields are optional ones, all missing or empty, is left out with its line break."""

    __slots__ = ("spec", "lines")

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.lines = []
        for line in spec.split("\n"):
            bits = _FIELD.split(line)         # literal, field, literal, field, …, literal
            parts = tuple((field_spec(b) if i % 2 == 1 else None, b) for i, b in enumerate(bits)
                          if b or i % 2 == 1)
            fields = [b for f, b in parts if f is not None]
            droppable = bool(fields) and all("|" not in b and b.endswith("?") for b in fields)
            self.lines.append((parts, droppable))

    def render(self, rec: dict[str, Any], where: Where, target: str) -> str:
        out_lines = []
        for parts, droppable in self.lines:
            out, filled = [], False
            for f, b in parts:
                if f is None:
                    out.append(b)
                    continue
                name, default = f
                v = rec.get(name)
                if type(v) is str and v and not v.isspace():    # the common case: a non-empty text
                    out.append(v)
                    filled = True
                    continue
                if empty(v):
                    if default is None:
                        raise where.error(f"{where.what} {name!r} (in the {target} template {self.spec!r}) is "
                                          f"missing or empty (write {{{name}?}} if it may be, or "
                                          f"{{{name}|default}})", field=target)
                    out.append(default)
                    continue
                out.append(as_text(v))
                filled = True
            if droppable and not filled:
                continue
            out_lines.append("".join(out))
        return "\n".join(out_lines)


_TEMPLATES: dict[str, _Template] = {}


def _template(spec: str) -> _Template:
    t = _TEMPLATES.get(spec)
    if t is None:
        t = _TEMPLATES[spec] = _Template(spec)
    return t


def resolve(spec: str, rec: dict[str, Any], where: Where, target: str, *, required: bool = False) -> Any:
    """A field's value (``spec`` a field name: the raw value, None when absent) or a template's
    text (every ``{field}`` must be present and non-empty, else an error naming it)."""
    if "{" not in spec:
        v = rec.get(spec)
        if required and empty(v):
            raise where.error(f"{where.what} {spec!r} (mapped to {target}) is missing or empty", field=target)
        return v
    return _template(spec).render(rec, where, target)


def to_time(v: Any, tz: str | None, where: Where, name: str) -> str | None:
    """An aware ISO timestamp: aware values pass, naive ones are placed in ``tz`` (a naive value
    without a declared zone is an error naming the field and the record)."""
    if type(v) is str:
        got = _text_time(v, tz)         # a table's times repeat: each text is converted once
        if type(got) is str:
            return got
        if got is None:
            return None
        kind, iso = got
        if kind == "bad":
            raise where.error(f"{where.what} {name!r}: {v!r} is not an ISO-8601 time") from None
        raise where.error(f"{where.what} {name!r}: naive time {iso!r} and the mapping declares no timezone")
    return _to_time(v, tz, where, name)


@lru_cache(maxsize=4096)
def _text_time(v: str, tz: str | None) -> str | tuple[str, str] | None:
    """:func:`to_time` of a text: the ISO timestamp, None for an empty text, or (``bad``, "")
    / (``naive``, the naive time) for the two errors (raised by the caller, who knows where)."""
    if not v.strip():
        return None
    text = v.strip()
    try:
        d = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return ("bad", "")
    if d.tzinfo is None or d.utcoffset() is None:
        if tz is None:
            return ("naive", d.isoformat())
        from zoneinfo import ZoneInfo

        d = d.replace(tzinfo=ZoneInfo(tz))
    return d.isoformat()


def _to_time(v: Any, tz: str | None, where: Where, name: str) -> str | None:
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
    if typ is None and type(v) is str:
        return v            # untyped text: kept as it is (the last case below)
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
            return as_text(v)
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
    return as_text(v)


def _bad(v: Any):
    raise ValueError(v)


_PLANS: dict[int, tuple[Mapping, tuple, tuple]] = {}


def _plan(mp: Mapping) -> tuple[tuple, tuple]:
    """The mapped plain fields (name, spec) and the time fields (name, spec or None) of ``mp``,
    worked out once per mapping rather than once per record."""
    got = _PLANS.get(id(mp))
    if got is None or got[0] is not mp:       # (a frozen model: its plan cannot go stale)
        if len(_PLANS) > 256:
            _PLANS.clear()
        got = _PLANS[id(mp)] = (mp, tuple((f, getattr(mp, f)) for f in PLAIN_FIELDS if getattr(mp, f) is not None),
                                tuple((f, getattr(mp, f)) for f in TIME_FIELDS))
    return got[1], got[2]


def apply(mp: Mapping, rec: dict[str, Any], where: Where, *, native: tuple[str, ...] = ()) -> dict[str, Any]:
    """ctx fields of one record. ``native`` names the ctx fields a record may carry under
    their own names (front matter: ``doc_id``, ``facts`` …); they apply unless mapped."""
    out: dict[str, Any] = {k: rec[k] for k in native if k in rec}
    out.update(mp.set)
    plain, times = _plan(mp)
    for f, spec in plain:
        v = resolve(spec, rec, where, f)
        if type(v) is str and v and not v.isspace():        # the common case: a non-empty text
            out[f] = v
        elif not empty(v):
            out[f] = as_text(v) if not isinstance(v, (list, dict)) else v
        else:
            out.pop(f, None)
    tz = mp.timezone
    for f, spec in times:
        if spec is not None:
            v = to_time(resolve(spec, rec, where, f), tz, where, spec)
            if v is None:
                out.pop(f, None)
            else:
                out[f] = v
        elif f in out and tz is not None:
            out[f] = to_time(out[f], tz, where, f)
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
                if type(v) is str and v and not v.isspace():    # the common case: one key
                    keys.append(v)
                    continue
                for x in v if isinstance(v, list) else [v]:     # a field may hold a list of keys
                    if not empty(x):
                        keys.append(as_text(x))
                continue
            try:
                keys.append(resolve(spec, rec, where, "keys"))
            except InputError:
                continue        # a key template over an empty field: no key, by design
        out["keys"] = keys
    return out
