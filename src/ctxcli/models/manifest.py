"""Source manifests: one YAML file per registered source (``manifests/sources/*.yaml``)."""

from __future__ import annotations

import re
from enum import Enum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

IDENT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/#-]{0,159}$"
SCOPE_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
IDENT_RE = re.compile(IDENT_PATTERN)
SCOPE_RE = re.compile(SCOPE_PATTERN)
Ident = Annotated[str, StringConstraints(pattern=IDENT_PATTERN)]
Scope = Annotated[str, StringConstraints(pattern=SCOPE_PATTERN)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrustLevel(str, Enum):
    authoritative = "authoritative"
    operational = "operational"
    internal = "internal"
    user_supplied = "user_supplied"
    public = "public"
    untrusted = "untrusted"


class Classification(str, Enum):
    public = "public"
    internal = "internal"
    confidential = "confidential"
    restricted = "restricted"


# Clearance levels, lowest first: a subject cleared for a level reads sources classified at it
# or below. A subject that states no clearance is cleared for DEFAULT_CLEARANCE.
CLEARANCE_LEVELS = tuple(c.value for c in Classification)
DEFAULT_CLEARANCE = Classification.internal.value


def clearance_rank(level: str) -> int:
    """Position of a classification or clearance level (unknown levels rank above restricted)."""
    return CLEARANCE_LEVELS.index(level) if level in CLEARANCE_LEVELS else len(CLEARANCE_LEVELS)


class DeletionMode(str, Enum):
    tombstone = "tombstone"      # tombstones.jsonl removes objects and records the deletion
    none = "none"                # the source never deletes; a tombstone file is an error


class Parser(str, Enum):
    records = "records"          # objects.jsonl
    markdown = "markdown"        # *.md with YAML front matter, one object per section


PARSER_VERSIONS = {Parser.records: {"1"}, Parser.markdown: {"1"}}


class Freshness(Strict):
    max_age: str = Field(description="Objects observed longer than this before as_of are stale, e.g. '30d'.")


class ValidTime(Strict):
    from_field: str = "valid_from"
    to_field: str = "valid_to"


class RedactionPattern(Strict):
    name: Ident
    regex: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    replacement: Annotated[str, StringConstraints(max_length=64)]


class Redaction(Strict):
    """Masks applied to an object's text before it enters a pack, unless the subject holds
    one of ``unless_scopes``. The policy that mandates it is cited by ``policy_object``."""

    unless_scopes: list[Scope] = Field(default_factory=list)
    patterns: list[RedactionPattern] = Field(min_length=1)
    policy_object: Ident | None = None


class SourceManifest(Strict):
    source_id: Ident
    tenant_id: Ident | None = Field(None, description="None means each record names its tenant.")
    source_type: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
    owner_team: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    classification: Classification
    trust_level: TrustLevel
    required_scopes: list[Scope]
    allowed_purposes: list[Ident] = Field(min_length=1)
    refresh_sla: str
    freshness: Freshness | None = None
    valid_time: ValidTime = ValidTime()
    deletion_mode: DeletionMode
    parser: Parser
    parser_version: str
    schema_version: int = Field(ge=1, le=1)
    enabled: bool
    snapshot: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    redaction: Redaction | None = None

    @field_validator("refresh_sla")
    @classmethod
    def _sla(cls, v: str) -> str:
        from ..util.timeutil import parse_duration

        parse_duration(v, what="refresh_sla")
        return v

    @field_validator("freshness")
    @classmethod
    def _fresh(cls, v: Freshness | None) -> Freshness | None:
        from ..util.timeutil import parse_duration

        if v is not None:
            parse_duration(v.max_age, what="freshness.max_age")
        return v

    @field_validator("parser_version")
    @classmethod
    def _pv(cls, v: str, info) -> str:
        p = info.data.get("parser")
        if p is not None and v not in PARSER_VERSIONS[p]:
            raise ValueError(f"parser {p.value} has no version {v!r} (known: {sorted(PARSER_VERSIONS[p])})")
        return v

    @field_validator("redaction")
    @classmethod
    def _redaction(cls, v: Redaction | None) -> Redaction | None:
        from ..util.masking import PatternError, check_replacement, compile_pattern

        if v is not None:
            for i, p in enumerate(v.patterns):
                try:
                    compile_pattern(p.regex)
                except PatternError as e:
                    raise ValueError(f"redaction.patterns[{i}].regex ({p.name}): {e}") from None
                try:
                    check_replacement(p.replacement)
                except PatternError as e:
                    raise ValueError(f"redaction.patterns[{i}].replacement ({p.name}): {e}") from None
        return v
