"""How the tool registry says a tool's raw result is shaped (``tools[].shape`` in
``manifests/tools.yaml``): data, validated here, executed by :mod:`ctxcli.store.shape`.

    shape:
      format: csv                  # json | jsonl | csv | parquet (default: from the raw file's suffix)
      filters:                     # every row kept passes all of them
        - {field: store, equals: STORE_001}
        - {field: month, in: ["2026-07", "2026-08"]}
      group_by: [month]
      aggregates:                  # sum | count | min | max | avg, each named
        - {name: revenue, op: sum, field: revenue, decimals: 0}
        - {name: rows, op: count}
      compare: {field: month, current: "2026-08", previous: "2026-07", decimals: 1}
      limit: 100                   # rows (no aggregates) or groups
      limitations: ["cost breakdown not available"]

Without ``aggregates`` the shape lists rows: ``fields`` (a projection) become facts holding
one list each. Every field name is a plain identifier (letters, digits, ``_``): nothing else
ever reaches the SQL text, and values are always passed as parameters.
"""

from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from typing_extensions import Annotated

FIELD_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
FieldName = Annotated[str, StringConstraints(pattern=FIELD_PATTERN)]
Value = Union[str, int, float, bool]
FORMATS = ("json", "jsonl", "csv", "parquet")
OPS = ("sum", "count", "min", "max", "avg")


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ShapeFilter(_Closed):
    """Keep a row when ``field`` equals ``equals`` (or is one of ``in``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    field: FieldName
    equals: Optional[Value] = None
    in_: Optional[list[Value]] = Field(None, alias="in", min_length=1, max_length=1000)

    @model_validator(mode="after")
    def _one(self):
        if (self.equals is None) == (self.in_ is None):
            raise ValueError("filters: give exactly one of equals or in")
        return self


class ShapeAggregate(_Closed):
    """One aggregate over the kept rows (per group): ``op`` of ``field`` (``count`` may omit it)."""

    name: FieldName
    op: Literal["sum", "count", "min", "max", "avg"]
    field: Optional[FieldName] = None
    decimals: Optional[int] = Field(None, ge=0, le=10, description="round the value to this many decimals")

    @model_validator(mode="after")
    def _field(self):
        if self.field is None and self.op != "count":
            raise ValueError(f"field: {self.op} needs a field")
        return self


class ShapeCompare(_Closed):
    """Compare two values of a period field (one of ``group_by``): each aggregate's change
    (current − previous) and percentage change (100 × change / previous)."""

    field: FieldName
    current: Value
    previous: Value
    decimals: int = Field(1, ge=0, le=10, description="decimals of the percentage change")


class FitStep(_Closed):
    """One way ctx may shape a packed tool result further when it does not fit its room (the
    registry's ``fit``, tried in order, each on what the one before left): ``facts`` keeps only
    the facts of these names (``revenue`` keeps ``revenue``, ``revenue[month=…]`` and
    ``revenue.change[…]``); ``only: compare`` keeps only the period comparison (``.change`` and
    ``.pct_change`` facts); ``rows`` cuts every list fact (a projection) to its first N values."""

    facts: Optional[list[FieldName]] = Field(None, min_length=1, max_length=200)
    only: Optional[Literal["compare"]] = None
    rows: Optional[int] = Field(None, ge=0, le=10_000)

    @model_validator(mode="after")
    def _one(self):
        if sum(x is not None for x in (self.facts, self.only, self.rows)) != 1:
            raise ValueError("fit: give exactly one of facts, only or rows")
        return self


class ShapeSpec(_Closed):
    format: Optional[Literal["json", "jsonl", "csv", "parquet"]] = None
    fields: list[FieldName] = Field(default_factory=list, max_length=200)
    filters: list[ShapeFilter] = Field(default_factory=list, max_length=50)
    group_by: list[FieldName] = Field(default_factory=list, max_length=10)
    aggregates: list[ShapeAggregate] = Field(default_factory=list, max_length=50)
    compare: Optional[ShapeCompare] = None
    limit: int = Field(100, ge=1, le=10_000)
    limitations: list[Annotated[str, StringConstraints(min_length=1, max_length=4000)]] = Field(default_factory=list)

    @model_validator(mode="after")
    def _coherent(self):
        if self.aggregates:
            if self.fields:
                raise ValueError("fields: a projection lists rows; with aggregates, name the groups in group_by")
            names = [a.name for a in self.aggregates]
            dup = next((n for n in names if names.count(n) > 1), None)
            if dup is not None:
                raise ValueError(f"aggregates: {dup!r} is named twice")
        else:
            if not self.fields:
                raise ValueError("fields: without aggregates, list the fields to keep")
            if self.group_by:
                raise ValueError("group_by: needs aggregates")
        if self.compare is not None:
            if self.compare.field not in self.group_by:
                raise ValueError("compare.field: must be one of group_by")
            if self.compare.current == self.compare.previous:
                raise ValueError("compare: current and previous must differ")
        return self
