"""The structured results of ``ctx serve``'s tools (MCP), one model per tool.

Published as ``mcp.<tool>`` JSON Schemas (``ctx schema mcp.investigate``) and listed by the
server as each tool's ``outputSchema``, so a client (the MCP SDK's own validates every result)
knows what a call returns. Results ctx makes for MCP only are closed (no property beyond those
listed); results that are a CLI command's ``--json`` document (explain_omission, replay, diff,
audit_call, handoff) list the keys every such document has and allow the rest. Every result
carries ``ran_as``: the tenant, subject, variant and as_of the call ran with.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class RanAs(Closed):
    """The identity and time a call ran with: a run's request (investigate, build_context, a
    pack's tools), the case's tenant and this server's subject (tools on a case), or the server's
    fixed tenant and subject (tools on neither); null where the call has none."""

    tenant: str | None
    subject: str | None
    variant: str | None
    as_of: str | None = Field(description="ISO-8601 with offset")


class Run(Closed):
    written: bool
    folder: str | None = None
    reason: str | None = None


class Claim(Closed):
    claim_id: str
    status: str
    text: str
    evidence: list[str]


class MissingType(Closed):
    type: str
    reason: str


class ToolItem(Closed):
    result_id: str
    trust: str
    tokens: int


class ToolOmission(Closed):
    ref: str
    gate: str
    reason: str
    withheld: bool


class Resources(Closed):
    pack: str
    trace: str
    answer: str
    messages: str


class Investigate(Closed):
    pack_id: str
    content_hash: str
    case_id: str
    verdict: str
    action: str
    claims: list[Claim]
    missing_types: list[MissingType]
    stop_reason: str | None
    tool_results: list[ToolItem] | None = None
    tool_omissions: list[ToolOmission] | None = None
    memory: dict[str, Any] | None = Field(None, description="What the memory gates kept and omitted")
    resources: Resources
    run: Run
    messages: list[dict[str, Any]] | None = Field(None, description="The rendered model messages (include_messages)")
    ran_as: RanAs


class StepGap(Closed):
    """Why a requested evidence type is missing from the step, as a pack's ``missing`` says it."""

    type: str
    required: bool
    reason: str
    rejected_by: Any = None
    withheld: dict[str, Any] | None = Field(None, description="withheld_for_access: how many and what "
                                            "would admit them (scopes, purposes, clearance), never an id")


class StepItem(Closed):
    evidence_id: str
    object_id: str
    type: str
    source_id: str
    title: str | None
    locator: str | None
    observed_at: str | None
    tokens: int
    text: str


class BuildContext(Closed):
    step_id: str
    case_id: str
    types: list[str]
    step_budget: int
    items: list[StepItem]
    tokens: int
    covered_types: list[str]
    missing_types: list[str]
    gaps: list[StepGap]
    omissions: list[dict[str, Any]]
    trace_events: int
    tool_results: list[ToolItem] | None = None
    tool_omissions: list[ToolOmission] | None = None
    memory: dict[str, Any] | None = None
    handoff: dict[str, Any] | None = Field(None, description="The handoff as far as this subject may see it")
    run: Run
    ran_as: RanAs


class ExplainAll(Open):
    """Every omission of the pack by gate (``ctx explain-omissions --json``)."""

    schema_version: str
    pack_id: str
    case_id: str
    total: int
    gates: list[dict[str, Any]]
    ran_as: RanAs


class ExplainObject(Open):
    """One object (``ctx explain-omissions --object ID --json``)."""

    object_id: str
    status: str
    sentence: str
    ran_as: RanAs


class Replay(Open):
    """``ctx replay --json`` (and ``state`` given a state_version)."""

    status: str
    pack_id: str
    byte_identical: bool
    ran_as: RanAs


class PackRef(Closed):
    pack_id: str
    content_hash: str


class Diff(Open):
    """``ctx diff --json`` of two of this server's packs."""

    a: PackRef
    b: PackRef
    same: bool
    ran_as: RanAs


class Render(Closed):
    pack_id: str
    format: Literal["messages", "markdown"]
    total_tokens: int
    sections: list[dict[str, Any]]
    matches_pack: bool
    text: str
    ran_as: RanAs


class Handoff(Open):
    """The sealed handoff document (docs/agents.md)."""

    schema_version: str
    pack_id: str
    case_id: str
    seal: dict[str, Any]
    ran_as: RanAs


class AuditCall(Open):
    """``ctx audit-call --json`` for this server's subject on the case."""

    schema_version: str
    counts: dict[str, int]
    spans: list[dict[str, Any]]
    ran_as: RanAs


class AddToolResult(Closed):
    result_id: str
    raw: dict[str, Any]
    shaped: dict[str, Any] | None = None
    status: Literal["admitted", "excluded", "withheld"]
    trust: str | None = None
    tokens: int | None = None
    gate: str | None = None
    reason: str | None = None
    detail: dict[str, Any] | None = None
    use: str
    ran_as: RanAs


class UpdateWorkingState(Closed):
    session_id: str
    pinned: int
    messages: int
    summary_replaces: list[str]
    use: str
    ran_as: RanAs


class Remember(Closed):
    memory_id: str
    expires_at: str
    use: str
    ran_as: RanAs


class Forget(Closed):
    memory_id: str
    deleted: Literal[True]
    ran_as: RanAs


class CaseEntry(Closed):
    case_id: str
    playbook: str
    question: str
    as_of: str
    variants: list[str]


class ListCases(Closed):
    cases: list[CaseEntry]
    unreadable: int
    ran_as: RanAs


class EvidenceTypeEntry(Closed):
    type: str
    required: bool
    judgment: str | None


class PlaybookEntry(Closed):
    playbook_id: str
    version: str
    description: str
    purposes: list[str]
    params: list[str]
    evidence_types: list[EvidenceTypeEntry]


class ListPlaybooks(Closed):
    playbooks: list[PlaybookEntry]
    unreadable: int
    ran_as: RanAs


# tool name -> the model of its structured result (a tuple: one of them)
RESULTS: dict[str, Any] = {
    "investigate": Investigate, "build_context": BuildContext, "explain_omission": (ExplainAll, ExplainObject),
    "replay": Replay, "diff": Diff, "render": Render, "handoff": Handoff, "audit_call": AuditCall,
    "add_tool_result": AddToolResult, "update_working_state": UpdateWorkingState, "remember": Remember,
    "forget": Forget, "list_cases": ListCases, "list_playbooks": ListPlaybooks,
}


def result_schema(tool: str) -> dict[str, Any]:
    """The JSON Schema of a tool's structured result (an object at the root, as MCP needs)."""
    from pydantic import TypeAdapter

    model = RESULTS[tool]
    if isinstance(model, tuple):
        from typing import Union

        schema = TypeAdapter(Union[model]).json_schema()   # noqa: UP007 (a runtime tuple)
        return {"type": "object", **schema}
    return model.model_json_schema()
