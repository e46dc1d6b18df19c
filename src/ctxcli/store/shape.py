"""DuckDB over one raw tool result (a JSON array, JSON lines, CSV or Parquet file): the
shaping a tool registry declares (:mod:`ctxcli.models.tool_shape`), and the look-ups the
raw-vs-shaped check needs.

The connection may read that one file and nothing else (``allowed_paths``, then external
access off and the configuration locked, before the file is read); no extension is installed.
SQL text is built only from validated field names, each quoted; every value is a parameter.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..models.tool_shape import FIELD_PATTERN, ShapeSpec

_READERS = {
    "json": "read_json(?, format='auto')",
    "jsonl": "read_json(?, format='newline_delimited')",
    "csv": "read_csv(?, header=true)",
    "parquet": "read_parquet(?)",
}
_SUFFIXES = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet"}


def format_of(path: Path, declared: str | None) -> str | None:
    """The raw file's format: the declared one, else from its suffix (None: not structured)."""
    return declared or _SUFFIXES.get(path.suffix.lower())


def q(name: str) -> str:
    """A field name as a quoted SQL identifier. Names are validated (FIELD_PATTERN) before they
    get here; quoting (with ``"`` doubled) keeps even an unvalidated one a single identifier."""
    import re

    if not re.match(FIELD_PATTERN, name):
        raise InputError(f"{name!r} is not a plain field name (letters, digits, _)", field="field")
    return '"' + name.replace('"', '""') + '"'


def _value(v: Any) -> Any:
    if isinstance(v, decimal.Decimal):
        v = float(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return None
        return int(v) if v.is_integer() and abs(v) < 2**53 else v
    if isinstance(v, (_dt.datetime, _dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, (str, int, bool)) or v is None:
        return v
    return str(v)


@dataclass
class ShapeRows:
    """What a shape returned: rows of (group values…, aggregate values…) or projected rows."""

    raw_rows: int
    kept_rows: int
    rows: list[list[Any]] = field(default_factory=list)
    total: int = 0                                  # groups (or rows) before the limit
    compare: list[list[Any]] = field(default_factory=list)   # (other groups…, change, pct per aggregate…)


class RawTable:
    """One raw file, loaded into an in-memory table ``raw`` by a locked-down connection."""

    def __init__(self, path: Path, fmt: str, *, display: str) -> None:
        import duckdb

        self.display = display
        real = str(path.parent.resolve() / path.name)       # the file as named (a final link is the caller's check)
        con = duckdb.connect(":memory:")
        try:
            con.execute("SET threads=1")            # sums of doubles in one order: the same bytes every run
            con.execute("SET allowed_paths=" + _literal_list([real]))     # SET takes no parameter
            con.execute("SET enable_external_access=false")
            con.execute("SET autoinstall_known_extensions=false")
            con.execute("SET autoload_known_extensions=false")
            con.execute("SET lock_configuration=true")
            con.execute(f"CREATE TEMP TABLE raw AS SELECT * FROM {_READERS[fmt]}", [real])
            self.columns = [r[0] for r in con.execute("DESCRIBE raw").fetchall()]
            self.rows = con.execute("SELECT count(*) FROM raw").fetchone()[0]
        except duckdb.Error as e:
            con.close()
            raise InputError(f"cannot read the raw result as {fmt}: {_first_line(e)}", file=display) from None
        self.con = con

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> "RawTable":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _need(self, name: str, where: str) -> str:
        if name not in self.columns:
            raise InputError(f"the raw result has no field {name!r} (it has: {', '.join(self.columns[:20])})",
                             file=self.display, field=where)
        return q(name)

    def _run(self, sql: str, params: list[Any], where: str) -> list[tuple]:
        import duckdb

        try:
            return self.con.execute(sql, params).fetchall()
        except duckdb.Error as e:
            raise InputError(f"cannot shape the raw result: {_first_line(e)}", file=self.display,
                             field=where) from None

    def _where(self, spec: ShapeSpec) -> tuple[str, list[Any]]:
        parts, params = [], []
        for i, f in enumerate(spec.filters):
            col = self._need(f.field, f"shape.filters[{i}].field")
            if f.in_ is not None:
                parts.append(f"{col} IN ({', '.join('?' for _ in f.in_)})")
                params += list(f.in_)
            else:
                parts.append(f"{col} = ?")
                params.append(f.equals)
        return (" WHERE " + " AND ".join(parts)) if parts else "", params

    def shape(self, spec: ShapeSpec, *, limit: int | None) -> ShapeRows:
        """The declared shape over the raw rows: per group (in group order) the aggregates, or
        the projected rows (in the order of the projection's values); at most ``limit``."""
        where, params = self._where(spec)
        kept = self._run(f"SELECT count(*) FROM raw{where}", params, "shape.filters")[0][0]
        out = ShapeRows(raw_rows=self.rows, kept_rows=kept)
        lim = f" LIMIT {int(limit)}" if limit is not None else ""
        if not spec.aggregates:
            cols = [self._need(f, f"shape.fields[{i}]") for i, f in enumerate(spec.fields)]
            sel = ", ".join(cols)
            rows = self._run(f"SELECT {sel}, count(*) OVER () FROM raw{where} ORDER BY {sel}{lim}", params,
                             "shape.fields")
            out.rows = [[_value(v) for v in r[:-1]] for r in rows]
            out.total = rows[0][-1] if rows else 0
            return out
        groups = [self._need(g, f"shape.group_by[{i}]") for i, g in enumerate(spec.group_by)]
        aggs = []
        for i, a in enumerate(spec.aggregates):
            arg = "*" if a.field is None else self._need(a.field, f"shape.aggregates[{i}].field")
            expr = f"{a.op}({arg})"
            aggs.append(expr if a.decimals is None else f"round({expr}, {int(a.decimals)})")
        sel = ", ".join(groups + aggs + ["count(*) OVER ()"])
        tail = f" GROUP BY {', '.join(groups)} ORDER BY {', '.join(groups)}" if groups else ""
        rows = self._run(f"SELECT {sel} FROM raw{where}{tail}{lim}", params, "shape.aggregates")
        out.rows = [[_value(v) for v in r[:-1]] for r in rows]
        out.total = rows[0][-1] if rows else 0
        if spec.compare is not None:
            out.compare = self._compare(spec, where, params, groups)
        return out

    def _compare(self, spec: ShapeSpec, where: str, params: list[Any], groups: list[str]) -> list[list[Any]]:
        c = spec.compare
        period = q(c.field)
        others = [g for g, name in zip(groups, spec.group_by) if name != c.field]
        raw_aggs = [f"{a.op}({'*' if a.field is None else q(a.field)}) AS a{i}"
                    for i, a in enumerate(spec.aggregates)]
        cols = []
        for i, a in enumerate(spec.aggregates):
            diff = f"(c.a{i} - p.a{i})"
            cols.append(diff if a.decimals is None else f"round({diff}, {int(a.decimals)})")
            cols.append(f"round(CAST(c.a{i} - p.a{i} AS DOUBLE) * 100 / nullif(CAST(p.a{i} AS DOUBLE), 0), "
                        f"{int(c.decimals)})")
        join = " AND ".join(f"c.{g} IS NOT DISTINCT FROM p.{g}" for g in others) or "true"
        sel = ", ".join([f"c.{g}" for g in others] + cols)
        order = f" ORDER BY {', '.join(f'c.{g}' for g in others)}" if others else ""
        sql = (f"WITH g AS (SELECT {', '.join(groups)}, {', '.join(raw_aggs)} FROM raw{where} "
               f"GROUP BY {', '.join(groups)}) SELECT {sel} FROM g c JOIN g p ON {join} "
               f"WHERE c.{period} = ? AND p.{period} = ?{order}")
        rows = self._run(sql, params + [c.current, c.previous], "shape.compare")
        return [[_value(v) for v in r] for r in rows]

    def contains(self, name: str, values: list[Any]) -> bool | None:
        """Whether every one of ``values`` occurs in the raw field ``name`` (None: no such field,
        or a value of another type than the field's)."""
        import duckdb
        import re

        if name not in self.columns or not re.match(FIELD_PATTERN, name):
            return None
        for v in values:
            try:
                n = self.con.execute(f"SELECT count(*) FROM raw WHERE {q(name)} = ?", [v]).fetchone()[0]
            except duckdb.Error:
                return None
            if not n:
                return False
        return True


def _literal_list(items: list[str]) -> str:
    """A list of string literals for a SET statement (it takes no parameter)."""
    return "[" + ", ".join("'" + s.replace("'", "''") + "'" for s in items) + "]"


def _first_line(e: Exception) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0][:300]


def open_raw(path: Path, fmt: str, *, display: str) -> RawTable:
    if fmt not in _READERS:
        raise InputError(f"format must be one of {', '.join(_READERS)}", file=display, field="shape.format")
    return RawTable(path, fmt, display=display)
