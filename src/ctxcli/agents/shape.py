"""Tool output shaped by ctx, and hand-written shaped facts checked against raw.

The tool registry declares per tool how its raw result is shaped (``shape``,
:mod:`ctxcli.models.tool_shape`); :mod:`ctxcli.store.shape` executes it with DuckDB over the
raw file. Here the rows become ``shaped.facts`` (``verified: true``) with the declared
limitations, and the raw result is kept by reference (path, sha256, rows).

Fact names (what the model and the raw-vs-shaped check read):

    revenue                                   an aggregate, no group_by
    revenue[month=2026-07]                    per group (group_by fields in order, comma-separated)
    revenue.change[month=2026-08 vs 2026-07]  compare: current − previous
    revenue.pct_change[month=2026-08 vs 2026-07]   100 × change / previous (null when previous is 0)
    month                                     without aggregates: one list per projected field
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..models.tool_shape import ShapeSpec

MAX_FACT_NAME = 200
# the largest raw result read (a tool result's raw file, here and in agents/tool_results.py)
MAX_RAW_FILE_BYTES = 64 << 20


def _label(names: list[str], values: list[Any]) -> str:
    return ",".join(f"{n}={'null' if v is None else v}" for n, v in zip(names, values))


def _key(name: str, label: str, *, display: str) -> str:
    k = f"{name}[{label}]" if label else name
    if len(k) > MAX_FACT_NAME:
        raise InputError(f"the fact name {k[:60]}… is over {MAX_FACT_NAME} characters (a group value too long)",
                         file=display, field="shape.group_by")
    return k


def facts_of(spec: ShapeSpec, out, *, display: str) -> dict[str, Any]:
    """The facts of a shape's rows (``store.shape.ShapeRows``), in a stable order."""
    facts: dict[str, Any] = {}
    if not spec.aggregates:
        for i, f in enumerate(spec.fields):
            facts[f] = [r[i] for r in out.rows]
        return facts
    ng = len(spec.group_by)
    for r in out.rows:
        label = _label(spec.group_by, r[:ng])
        for a, v in zip(spec.aggregates, r[ng:]):
            facts[_key(a.name, label, display=display)] = v
    if spec.compare is not None:
        c = spec.compare
        others = [g for g in spec.group_by if g != c.field]
        for r in out.compare:
            head = _label(others, r[:len(others)])
            label = (head + "," if head else "") + f"{c.field}={c.current} vs {c.previous}"
            vals = r[len(others):]
            for i, a in enumerate(spec.aggregates):
                facts[_key(f"{a.name}.change", label, display=display)] = vals[2 * i]
                facts[_key(f"{a.name}.pct_change", label, display=display)] = vals[2 * i + 1]
    return facts


def _limitations(spec: ShapeSpec, out) -> list[str]:
    lims = list(spec.limitations)
    if out.total > len(out.rows):
        what = "groups" if spec.aggregates else "rows"
        lims.append(f"shaped from the first {len(out.rows)} of {out.total} {what} (limit {spec.limit})")
    return lims


def sniff(path: Path) -> str | None:
    """The format of a raw file without a telling suffix (stored content-addressed by ``ctx
    serve``): a JSON array, JSON lines, Parquet, or CSV (a first line with a comma)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.lstrip()
    if text.startswith(b"["):
        return "json"
    if text.startswith(b"{"):
        return "jsonl"
    first = text.split(b"\n", 1)[0]
    return "csv" if b"," in first else None


def _raw_format(path: Path, spec: ShapeSpec, *, display: str) -> str:
    from ..store.shape import format_of

    fmt = format_of(path, spec.format) or sniff(path)
    if fmt is None:
        raise InputError(f"cannot tell the raw result's format from {path.name!r}: declare shape.format "
                         "(json, jsonl, csv or parquet)", file=display, field="shape.format")
    return fmt


def shape_file(path: Path, spec: ShapeSpec, *, display: str) -> tuple[dict[str, Any], list[str], int]:
    """The facts, limitations and raw row count of one raw file shaped by ``spec``."""
    from ..store.shape import open_raw

    with open_raw(path, _raw_format(path, spec, display=display), display=display) as t:
        out = t.shape(spec, limit=spec.limit)
    return facts_of(spec, out, display=display), _limitations(spec, out), out.raw_rows


# ------------------------------------------------------------------------- raw-vs-shaped check
@dataclass
class FactCheck:
    """How the facts of one tool result stand against its raw result."""

    checked: bool                                   # the raw was structured and the tool declares a shape
    verified: list[str] = field(default_factory=list)
    unverified: list[str] = field(default_factory=list)
    mismatch: dict[str, Any] | None = None          # the first fact raw contradicts: fact, given, expected


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def agrees(given: Any, expected: Any) -> bool:
    """A fact agrees with the computed value: equal, or a number equal to it at the precision
    it is written with (15 for 15.04; never 16)."""
    if isinstance(given, bool) or isinstance(expected, bool):
        return type(given) is type(expected) and given == expected      # true is not 1
    if _num(given) and _num(expected):
        g, e = Decimal(str(given)), Decimal(str(expected))
        places = max(0, -g.as_tuple().exponent) if isinstance(given, float) else 0
        return abs(g - e) <= Decimal(5) / (Decimal(10) ** (places + 1)) or g == e
    return given == expected


def _same_bytes(path: Path, sha256: str) -> bool:
    """The raw file is still a regular file (no link) holding the bytes the result records."""
    from ..util.safeio import NotReadable, read_regular

    try:
        return hashlib.sha256(read_regular(path, MAX_RAW_FILE_BYTES, follow=False)).hexdigest() == sha256
    except NotReadable:
        return False


def check_facts(tr, spec: ShapeSpec | None) -> FactCheck:
    """Each fact of ``tr`` against its raw result: the declared aggregate of that name (the
    registry's ``shape`` over the raw rows, without its row limit), else the raw field of that
    name holding the value. A fact that disagrees is a mismatch; one ctx cannot check (no
    such aggregate or field; raw not structured or not on this host; no declaration) is
    unverified."""
    names = list(tr.shaped.facts)
    path = getattr(tr, "_raw_path", None)
    if spec is None or path is None:
        return FactCheck(checked=False, unverified=names)
    from ..store.shape import format_of, open_raw

    if not _same_bytes(path, tr.raw.sha256):      # changed (or replaced) since the result was read
        return FactCheck(checked=False, unverified=names)
    fmt = format_of(path, spec.format) or sniff(path)
    if fmt is None:
        return FactCheck(checked=False, unverified=names)
    res = FactCheck(checked=True)
    try:
        with open_raw(path, fmt, display=tr.raw.location) as t:
            try:
                computed = facts_of(spec, t.shape(spec, limit=None), display=tr.raw.location)
            except InputError:
                computed = {}
            for name, given in tr.shaped.facts.items():
                if name in computed:
                    exp = computed[name]
                    ok = agrees(given, exp) if not isinstance(exp, list) else given == exp
                    if not ok:
                        res.mismatch = res.mismatch or {"fact": name, "given": given, "expected": exp}
                        continue
                    res.verified.append(name)
                    continue
                found = t.contains(name, given if isinstance(given, list) else [given])
                if found is None:
                    res.unverified.append(name)
                elif found:
                    res.verified.append(name)
                else:
                    res.mismatch = res.mismatch or {"fact": name, "given": given, "expected": "not in raw"}
    except InputError:          # raw not readable as declared: nothing checked
        return FactCheck(checked=False, unverified=names)
    return res
