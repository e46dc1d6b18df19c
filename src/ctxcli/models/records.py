"""Snapshot records: knowledge objects, entities, relations and tombstones."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from ..util.timeutil import parse_ts
from .manifest import Ident, Scope

FactValue = str | int | float | bool | list[str] | list[int] | list[float] | None
TypeName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]


class Rec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def _aware(v: Any, field: str) -> Any:
    # parse_ts is imported once at module level: an import statement here ran for every
    # timestamp of every record (~1 s of a 20k-object load).
    if v is None:
        return None
    return parse_ts(v, what=field)


_NO_INTS = frozenset((str, float, bool, type(None)))


def as_text(v: Any) -> Any:
    """A number or true/false written where text is meant, as its text: a YAML number as it
    was written (``1.10`` stays "1.10": util/yamlio.WrittenFloat), any other as Python prints it;
    anything else unchanged (the model refuses what is not text)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        written = getattr(v, "written", None)
        return written if written is not None else repr(v) if isinstance(v, float) else str(v)
    return v


def _mixed_lists(facts: Any) -> Any:
    """A fact whose list mixes texts with numbers or true/false (``tags: [gateway, 502]``) holds
    every item as text."""
    if not isinstance(facts, dict):
        return facts
    out = facts
    for k, v in facts.items():
        if isinstance(v, list) and any(isinstance(x, str) for x in v) \
                and all(isinstance(x, (str, int, float)) for x in v) and not all(isinstance(x, str) for x in v):
            if out is facts:
                out = dict(facts)
            out[k] = [as_text(x) for x in v]
    return out


def _exact_facts(v: dict[str, Any]) -> dict[str, Any]:
    """Facts from YAML front matter arrive as Python ints of any size; JSONL is checked when
    read (util/jsonstrict). Beyond 64 bits a fact could not be stored exactly: refused."""
    from ..util.jsonstrict import INT_MAX, INT_MIN, check_ints

    for x in v.values():
        t = type(x)
        if t is int:
            if not INT_MIN <= x <= INT_MAX:
                break
        elif t not in _NO_INTS:
            break
    else:
        return v            # scalars within range (a table's facts, mostly): nothing to refuse
    for k in sorted(v):
        check_ints(v[k], f"fact {k!r}")
    return v


class ObjectRecord(Rec):
    """One knowledge object (a line of objects.jsonl, or a Markdown section)."""

    object_id: Ident
    tenant_id: Ident | None = None
    source_version: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    object_type: TypeName
    subject_id: Ident | None = Field(None, description="Entity key this object is about.")
    title: Annotated[str, StringConstraints(max_length=1000)]
    content: str
    locator: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    observed_at: datetime
    required_scopes: list[Scope] = Field(default_factory=list)
    allowed_purposes: list[Ident] | None = None
    supports: list[TypeName] = Field(default_factory=list)
    facts: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")], FactValue] = Field(
        default_factory=dict)
    keys: list[Annotated[str, StringConstraints(min_length=1, max_length=128)]] = Field(
        default_factory=list, description="Business keys (case ids, error codes) for exact lookup.")
    content_hash: Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")] | None = None
    supersedes: Ident | None = None

    @field_validator("valid_from", "valid_to", "observed_at", mode="before")
    @classmethod
    def _tz(cls, v: Any, info) -> Any:
        return _aware(v, info.field_name)

    @field_validator("facts", mode="before")
    @classmethod
    def _mixed(cls, v: Any) -> Any:
        return _mixed_lists(v)

    @field_validator("facts")
    @classmethod
    def _facts(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _exact_facts(v)

    @model_validator(mode="after")
    def _order(self) -> "ObjectRecord":
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError("valid_to: must be after valid_from")
        return self


class EntityRecord(Rec):
    entity_key: Ident
    tenant_id: Ident | None = None
    entity_type: TypeName
    name: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    aliases: list[Annotated[str, StringConstraints(min_length=1, max_length=300)]] = Field(default_factory=list)


class RelationRecord(Rec):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    relation_id: Ident
    tenant_id: Ident | None = None
    from_: Ident = Field(alias="from")
    type: Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")]
    to: Ident
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    evidence_object_id: Ident | None = None
    source_version: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    confidence: float = Field(1.0, ge=0.0, le=1.0)

    @field_validator("valid_from", "valid_to", mode="before")
    @classmethod
    def _tz(cls, v: Any, info) -> Any:
        return _aware(v, info.field_name)

    @model_validator(mode="after")
    def _order(self) -> "RelationRecord":
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError("valid_to: must be after valid_from")
        return self


class TombstoneRecord(Rec):
    object_id: Ident
    tenant_id: Ident | None = None
    deleted_at: datetime
    reason: Annotated[str, StringConstraints(max_length=300)] = ""

    @field_validator("deleted_at", mode="before")
    @classmethod
    def _tz(cls, v: Any, info) -> Any:
        return _aware(v, info.field_name)


class DocumentFrontMatter(Rec):
    """YAML front matter of a Markdown document; every section inherits it."""

    doc_id: Ident
    tenant_id: Ident | None = None
    title: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    version: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    object_type: TypeName
    subject_id: Ident | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    observed_at: datetime
    required_scopes: list[Scope] = Field(default_factory=list)
    allowed_purposes: list[Ident] | None = None
    supports: list[TypeName] = Field(default_factory=list)
    facts: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")], FactValue] = Field(
        default_factory=dict)
    keys: list[Annotated[str, StringConstraints(min_length=1, max_length=128)]] = Field(default_factory=list)
    supersedes: Ident | None = Field(None, description="doc_id of the document this version replaces.")

    @field_validator("valid_from", "valid_to", "observed_at", mode="before")
    @classmethod
    def _tz(cls, v: Any, info) -> Any:
        return _aware(v, info.field_name)

    @field_validator("doc_id", "tenant_id", "title", "version", "object_type", "subject_id", "supersedes",
                     mode="before")
    @classmethod
    def _text(cls, v: Any) -> Any:
        return as_text(v)

    @field_validator("required_scopes", "allowed_purposes", "supports", "keys", mode="before")
    @classmethod
    def _texts(cls, v: Any) -> Any:
        return [as_text(x) for x in v] if isinstance(v, list) else v

    @field_validator("facts", mode="before")
    @classmethod
    def _mixed(cls, v: Any) -> Any:
        return _mixed_lists(v)

    @field_validator("facts")
    @classmethod
    def _facts(cls, v: dict[str, Any]) -> dict[str, Any]:
        return _exact_facts(v)

    @model_validator(mode="after")
    def _order(self) -> "DocumentFrontMatter":
        if self.valid_from and self.valid_to and self.valid_to <= self.valid_from:
            raise ValueError("valid_to: must be after valid_from")
        return self
