"""Case files (``examples/cases/*.yaml``): what to investigate, for whom, and what a correct
outcome looks like (used by ``ctx eval``)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, WithJsonSchema, field_validator

from .manifest import Classification, Ident, Scope
from .playbook import FactName, ParamValue
from .request import BUDGET_MAX, BUDGET_MIN, MAX_ROUNDS_MAX, MAX_ROUNDS_MIN, STRATEGIES


class C(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Subject(C):
    id: Ident
    scopes: list[Scope] = Field(default_factory=list)
    clearance: Classification = Field(
        Classification.internal, description="Highest source classification the subject may read "
        "(public < internal < confidential < restricted).")


class ExpectedFields(C):
    """The expectations one run is held to (``ctx eval``); also a ``by_strategy`` override."""

    must_cite: list[Ident] = Field(default_factory=list)
    must_not_cite: list[Ident] = Field(default_factory=list)
    verdict: Literal["complete", "partial", "insufficient_evidence", "conflicting_evidence", "refused"] | None = None
    action: Ident | None = None
    claims: dict[Ident, dict[FactName, Any]] = Field(default_factory=dict)
    claim_status: dict[Ident, Literal["fact", "inference", "hypothesis", "unknown"]] = Field(default_factory=dict)
    stop_reason: Literal["evidence_sufficient", "max_rounds_reached", "no_progress", "budget_exhausted",
                         "deadline"] | None = None
    missing: list[Ident] | None = None
    rejected: dict[Ident, str] = Field(default_factory=dict, description="object id -> gate that must reject it")
    withheld: dict[Ident, Literal["tenant", "scope", "classification", "purpose"]] = Field(
        default_factory=dict, description="object id -> the access gate that keeps it from the subject: holds when "
        "that gate rejected it or when it was never a candidate (the access rules withhold inside the store's "
        "statements); the object must be in the store")


def _known_strategy(v: str) -> str:
    if v not in STRATEGIES:
        raise ValueError(f"unknown strategy {v!r} (known: {', '.join(STRATEGIES)})")
    return v


StrategyName = Annotated[str, AfterValidator(_known_strategy), WithJsonSchema({"type": "string", "enum": list(STRATEGIES)})]


class Expected(ExpectedFields):
    by_strategy: dict[StrategyName, ExpectedFields] = Field(
        default_factory=dict, description="strategy -> expected fields that replace the base ones (field by field) "
        "for runs of that strategy; ctx eval's recall and precision columns still use the base must_cite and "
        "must_not_cite.")

    def for_strategy(self, strategy: str) -> "Expected":
        """The effective expectation of a run with ``strategy``: the base fields, each field the
        strategy's override states replacing the base one (shallow); ``by_strategy`` dropped."""
        over = self.by_strategy.get(strategy)
        base = {k: getattr(self, k) for k in self.model_fields_set if k != "by_strategy"}
        if over is not None:
            base.update({k: getattr(over, k) for k in over.model_fields_set})
        return Expected(**base)


InputPath = Annotated[str, StringConstraints(min_length=1, max_length=500)]


class Inputs(C):
    """An agent's inputs a run is given (docs/agents.md), as files relative to the project root:
    what `--tool-result`, `--memory` and the recalled memory records would hand in. ``ctx eval``
    runs cases with failures injected this way (an injected or stale tool result, a poisoned or
    another tenant's memory record) and checks that none of them is admitted."""

    tool_results: list[InputPath] = Field(default_factory=list, description="tool-result files")
    memory: InputPath | None = Field(None, description="a working-state file")
    memory_records: list[InputPath] | None = Field(None, description="memory-record files (ctx.memory/1) to "
                                                   "recall; absent: no recall")


class Variant(C):
    """A named re-run of the case with some request fields changed."""

    description: str = ""
    as_of: datetime | None = None
    known_at: datetime | None = None
    subject: Subject | None = None
    purpose: Ident | None = None
    budget: int | None = Field(None, ge=BUDGET_MIN, le=BUDGET_MAX)      # the limits of --budget, --max-rounds
    max_rounds: int | None = Field(None, ge=MAX_ROUNDS_MIN, le=MAX_ROUNDS_MAX)
    params: dict[FactName, ParamValue] = Field(default_factory=dict, description="Overrides the case's params.")
    deadline_seconds: float | None = Field(None, ge=0, le=86_400, description="Overrides the case's deadline_seconds.")
    inputs: Inputs | None = Field(None, description="Replaces the case's inputs.")
    expected: Expected | None = None

    @field_validator("as_of", "known_at", mode="before")
    @classmethod
    def _tz(cls, v: Any, info) -> Any:
        from ..util.timeutil import parse_ts

        return None if v is None else parse_ts(v, what=info.field_name)


class CaseFile(C):
    case_id: Ident
    tenant_id: Ident
    playbook: Ident
    question: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    purpose: Ident
    as_of: datetime
    subject: Subject
    seeds: list[Ident] = Field(min_length=1, description="Entity keys the investigation starts from (type:key), "
                                                          "or entity names resolved to their keys when it runs.")
    business_keys: list[Annotated[str, StringConstraints(min_length=1, max_length=128)]] = Field(default_factory=list)
    params: dict[FactName, ParamValue] = Field(default_factory=dict,
                                               description="Values of the playbook's declared params.")
    expected: Expected | None = None
    variants: dict[Ident, Variant] = Field(default_factory=dict)
    goal_ref: Ident | None = Field(None, description="The goal this investigation serves (pack.goal_ref).")
    state_version: Annotated[str, StringConstraints(min_length=1, max_length=128)] | None = Field(
        None, description="Version of the caller's task state the pack was built for (pack.state_version).")
    tools: list[Ident] = Field(default_factory=list, description="Tools the caller may use (pack.tools).")
    deadline_seconds: float | None = Field(None, ge=0, le=86_400,
                                           description="Overrides the playbook's deadline_seconds.")
    inputs: Inputs | None = Field(None, description="The agent's inputs the run is given (tool results, working "
                                  "state, memory records), unless the caller gives its own.")

    @field_validator("as_of", mode="before")
    @classmethod
    def _tz(cls, v: Any, info) -> Any:
        from ..util.timeutil import parse_ts

        return parse_ts(v, what=info.field_name)
