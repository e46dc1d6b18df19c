"""The published shapes of the files a run writes: pack.json, answer.json, timings.json and
every trace event. They are the source of the JSON Schemas in ``ctxcli/schemas/`` (see
``ctxcli.schemas``); ctx builds these files as plain dicts, and tests validate what it writes
against the schemas. Top-level sections and every trace event forbid unknown fields, so a new
field is a schema change; nested parts whose shape belongs to a playbook (facts, details) are
open objects."""

from __future__ import annotations

from typing import Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

Hash = str
JSON = dict[str, Any]


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ------------------------------------------------------------------------------ pack.json
class Subject(Closed):
    id: str
    scopes: list[str]
    clearance: str | None = None


class PackRequest(Closed):
    case_id: str
    tenant_id: str
    question: str
    purpose: str
    as_of: str = Field(description="ISO 8601 with offset")
    known_at: str | None
    subject: Subject
    budget: int
    max_rounds: int
    seeds: list[str]
    business_keys: list[str]
    variant: str | None
    strategy: Literal["full", "topk", "governed", "dynamic", "hybrid"]
    params: dict[str, str | int | float | bool] | None = Field(None, description="case parameters (only when "
                                                               "the playbook declares any)")
    adhoc: Literal[True] | None = Field(None, description="an ad-hoc run: no case file, the case is this request "
                                        "(ctx investigate --playbook)")
    deadline_seconds: float | None = Field(None, description="the case's, variant's or --deadline's deadline "
                                           "(only when given)")


class Transformation(BaseModel):
    kind: Literal["redaction", "compression"]
    before_hash: Hash | None = None
    after_hash: Hash | None = None


class ErasureNote(Closed):
    """When, by whom and why an object's content was erased from a pack already written."""

    at: str
    by: str
    reason: str


class ErasedItem(ErasureNote):
    object_id: str
    evidence_id: str


class PackErasure(Closed):
    """What `ctx erase --apply` removed; ``sealed_hash`` replaces the content hash as the pack's seal."""

    erased: list[ErasedItem]
    applied_at: str
    sealed_hash: Hash


class EvidenceItem(Closed):
    evidence_id: str
    object_id: str
    source_id: str
    source_version: str | None
    object_type: str
    subject_id: str | None
    title: str
    locator: str | None
    content_hash: Hash
    valid_from: str | None
    valid_to: str | None
    observed_at: str | None
    trust_level: str
    classification: str | None
    owner_team: str | None
    supports: list[str]
    facts: JSON
    round: int
    channels: dict[str, int]
    queries: dict[str, int]
    rrf: float
    retrieval_scores: dict[str, float] = Field(
        default_factory=dict, description="the channels' raw scores behind the ranks: bm25, cosine (the best of "
        "the item's queries), graph_hops, window_offset_s (the nearest), structured (1.0: an exact match); "
        "rounded to 6 digits; rerank: the reranker's score when the playbook enables it (12 digits)")
    graph_templates: list[str]
    content_tokens: int
    text: str
    text_hash: Hash
    transformations: list[Transformation]
    selected_for: str | None
    tokens: int
    erased: ErasureNote | None = Field(None, description="set by `ctx erase --apply`: the text, title and "
                                       "facts were removed (hashes kept)")


class WithheldOmission(Closed):
    """Rejected by the tenant, scope, purpose or classification gate: an opaque reference and no content."""

    ref: str = Field(pattern=r"^wh-[0-9a-f]{16}$")
    withheld: Literal[True]
    gate: Literal["tenant", "scope", "purpose", "classification"]
    reason: str
    detail: JSON
    round: int
    channels: dict[str, int]
    rrf: float


class VisibleOmission(Closed):
    ref: str
    withheld: Literal[False]
    gate: str
    reason: str
    detail: JSON
    round: int
    channels: dict[str, int]
    rrf: float
    object_id: str
    source_id: str
    source_version: str | None
    title: str
    object_type: str
    supports: list[str]
    tokens: int
    content_hash: Hash
    trust_level: str


class Missing(BaseModel):
    model_config = ConfigDict(extra="allow")   # the answer layer may add gap details

    type: str
    judgment: str
    required: bool
    reason: str = Field(description="over_budget, rejected_by_gates, not_found, withheld_for_access, …")


class NotTried(Closed):
    rounds: list[int] = Field(description="the rounds a deadline stop did not run")
    evidence_types: list[str] = Field(description="the evidence types still missing when it stopped")


class PackState(Closed):
    rounds: int
    stop_reason: Literal["evidence_sufficient", "max_rounds_reached", "no_progress", "budget_exhausted", "deadline"]
    gaps: Literal["full", "compact"]
    not_tried: NotTried | None = Field(None, description="present when the deadline stopped the round loop")


class SectionFreshness(Closed):
    oldest_observed_at: str | None
    newest_observed_at: str | None


class Section(Closed):
    """One model-visible section, in the fixed order (docs/agents.md, "Section order and trust")."""

    section: str
    slot: Literal["instructions", "goal_state", "tools", "evidence"]
    trust: str
    kind: Literal["system_instruction", "policy", "user_request", "working_memory", "tool_result",
                  "retrieved_evidence", "episodic_memory", "conflict", "semantic_memory", "example",
                  "exclusion"] | None = Field(
        None, description="the design's section kind (absent in packs written before it was recorded)")
    source_refs: list[str] | None = Field(None, description="where the text came from: playbook:ID@VERSION, "
                                          "case:ID[#variant], evidence ids, tool-result ids; [] for ctx's own")
    freshness: SectionFreshness | None = Field(None, description="oldest and newest observation of the items "
                                               "of a data section; null for the others")
    tokens: int


class Slots(Closed):
    allocation: dict[str, int]
    used: dict[str, int]
    sections: list[Section]
    total_tokens: int
    evidence_tokens_by_items: int
    within_budget: dict[str, bool]


class EmbeddingModel(Closed):
    model: str = Field(description="the pinned embedding model, e.g. wordllama/l2_supercat-256")
    version: str = Field(description="its package version")
    weights_sha256: str = Field(description="sha256 of its weights file: a different value is drift")


class LearnedDetector(Closed):
    name: str = Field(description="learned:<model>@<version>, as the trace names its findings")
    model: str
    version: str
    weights_sha256: str = Field(description="sha256 of its shipped weights file")
    threshold: float = Field(description="a window (intent: a segment) scoring at least this is a finding")


class Detector(Closed):
    version: str = Field(description="the untrusted-instruction detector's version (ctx-injection/N)")
    rules_sha256: str = Field(description="sha256 of its pattern rules")
    learned: LearnedDetector
    intent: LearnedDetector | None = Field(None, description="the intent layer (learned:intent-lr@N), scored "
                                           "per segment; absent in packs of ctx-injection/2")


class PackStore(Closed):
    digest: str
    schema_version: int
    sources: dict[str, str]
    key_id: str | None = Field(None, description="id of the store secret that keys opaque refs and digests")
    backend: Literal["postgresql"] | None = Field(None, description="the store backend when it is not the "
                                                  "embedded DuckDB file")
    embedding: EmbeddingModel | None = Field(None, description="the model the store's vectors were made with")
    generation: int | None = Field(None, description="the store generation the pack was built on (outside the "
                                   "content hash; ctx replay rebuilds against it while it is kept)")


class PackClaim(Closed):
    claim_id: str
    status: Literal["fact", "inference", "hypothesis", "unknown"]
    facts: JSON
    evidence: list[str]


class PackAnswer(Closed):
    verdict: str
    recommended_action: str
    claims: list[PackClaim]


class StaleSource(Closed):
    """A source retrieval considered whose snapshot is older than its refresh SLA at as_of."""

    source_id: str
    refresh_sla: str
    refresh_sla_s: int
    snapshot_observed_at: str | None = Field(description="newest observation not after as_of; null: none")
    age_s: int | None
    age: str | None


class ToolRaw(Closed):
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int
    location: str
    rows: Optional[int] = Field(None, description="rows of the raw result (when ctx shaped it)")


class LiveOrigin(Closed):
    source_id: str
    request: str
    valid_from: Optional[str] = Field(None, description="the record's, when the source's mapping names it")
    valid_to: Optional[str] = Field(None, description="the record's, when the source's mapping names it")


class LiveRequest(Closed):
    """One request of the live channel: made (``fetched``), ``failed`` (why, in one line) or
    ``not_made`` (a parameter the investigation lacks, or a knowledge cutoff before the fetch)."""

    source_id: str
    request: str
    url: Optional[str] = Field(None, description="base URL and filled path (never a credential); absent when a "
                               "parameter was missing")
    status: Literal["fetched", "failed", "not_made"]
    reason: Optional[Literal["missing_param", "cutoff_before_fetch"]] = None
    param: Optional[str] = None
    error: Optional[str] = None
    fetched_at: Optional[str] = None
    response_sha256: Optional[str] = Field(None, pattern=r"^[0-9a-f]{64}$")
    size: Optional[int] = None
    records: Optional[int] = None
    cached: Optional[bool] = Field(None, description="true: the response of an earlier request of this process "
                                   "(within the source's cache_ttl), observed when it was fetched")


class ToolResultItem(Closed):
    """A tool result that passed the tool-result gates: its shaped form (what the model sees)
    and a reference to the raw result (which it never sees)."""

    result_id: str = Field(pattern=r"^tr-[0-9a-f]{12}$")
    tool: str
    version: str
    call_id: str | None
    arguments: JSON
    trust_level: Literal["authoritative", "operational", "internal", "user_supplied", "public", "untrusted"] = Field(
        description="authoritative for a registered authoritative tool, else untrusted; a live record: its "
                    "source manifest's trust_level")
    observed_at: str
    max_age: str | None
    raw: ToolRaw
    facts: JSON
    limitations: list[str]
    record_ids: list[str]
    tokens: int
    verified_facts: Optional[list[str]] = Field(None, description="facts the raw-vs-shaped check found in raw or "
                                                "equal to the declared aggregate (only when it ran)")
    unverified_facts: Optional[list[str]] = Field(None, description="facts ctx could not check against raw: the "
                                                  "caller's word (only when the check ran)")
    shaped_further: Optional[JSON] = Field(None, description="present when ctx shaped the result further to fit its "
                                           "room (the registry's fit): steps used, facts given and kept")
    live: Optional[LiveOrigin] = Field(None, description="present when ctx fetched the record itself from a live "
                                       "API source (docs/authoring.md, 'Live API sources')")


class WithheldToolOmission(Closed):
    """A tool result the subject may not see: an opaque keyed reference and what it needs."""

    ref: str = Field(pattern=r"^wh-[0-9a-f]{16}$")
    withheld: Literal[True]
    gate: Literal["tenant", "scope", "purpose"]
    reason: str
    detail: JSON


class VisibleToolOmission(Closed):
    ref: str = Field(pattern=r"^tr-[0-9a-f]{12}$")
    withheld: Literal[False]
    gate: Literal["validity", "knowledge_time", "freshness", "injection", "raw_check", "duplicate", "budget"]
    reason: str
    detail: JSON
    tool: str
    version: str
    observed_at: str
class PinnedItem(Closed):
    ref: str
    kind: Literal["goal", "policy", "approval", "stop_condition"]
    text: str


class SummaryItem(Closed):
    text: str
    replaces: list[str]
    summarizer: dict[str, str]
    omitted: list[str]
    checked: bool = Field(description="read by the claim checker against every message it replaces "
                                      "(false: the caller did not give them all)")
    tokens: int


class MessageItem(Closed):
    id: str
    role: Literal["user", "assistant", "tool"]
    at: str | None
    text: str = Field(description="empty when the message was cleared")
    cleared: JSON | None = Field(description="why the text was cleared (a stale tool result); null when not")
    tool_result: str | None = Field(None, description="the tool result the message carried (kept when cleared)")
    demoted: Literal["pinned_goal_not_the_cases"] | None = Field(
        None, description="a pinned goal of the session that is not the case's question, packed as an ordinary "
        "message (only the case sets the goal)")
    tokens: int


class WorkingMemory(Closed):
    """The working state as packed (docs/agents.md, "Working memory")."""

    session_id: str | None = Field(description="null when the whole state was withheld")
    pinned: list[PinnedItem]
    summary: SummaryItem | None
    messages: list[MessageItem]
    messages_given: int


class RecalledMemory(Closed):
    """What a pack keeps of every recalled memory record, admitted or in conflict."""

    memory_id: str = Field(pattern=r"^mem-[0-9a-f]{12}$")
    subject_id: str
    text: str
    created_at: str
    expires_at: str
    reviewed_by: str
    source: str | None


class MemoryItem(RecalledMemory):
    """A recalled memory record that passed the memory gates."""

    trust_level: Literal["reviewed_memory"]
    tokens: int


class MemoryConflict(RecalledMemory):
    """A recalled memory record that contradicts admitted evidence: packed only in the conflicts
    section (docs/agents.md, "Memory that contradicts the evidence")."""

    trust_level: Literal["contradicted_memory"]
    conflict: JSON = Field(description="code (value_differs, misbound_entity, status_upgraded, hedge_dropped), "
                           "the evidence ids it contradicts and, for a value, field, given and admitted")
    tokens: int


class MemoryOmission(Closed):
    """A working-memory item or memory record the gates dropped (withheld: an opaque keyed ref)."""

    section: Literal["working_memory", "episodic_memory"]
    ref: str
    withheld: bool
    gate: Literal["tenant", "subject", "scope", "purpose", "knowledge_time", "ttl", "review", "freshness",
                  "injection", "claims", "duplicate", "budget"]
    reason: str
    detail: JSON


class AggregateRecord(Closed):
    """One computed aggregate: the set's query, the value, the rows it rests on (ids as the
    subject may see them; each passed the gates) and what was excluded or withheld (counts)."""

    name: str
    op: Literal["count", "sum", "min", "max", "latest_before", "earliest_after"]
    evidence_type: str
    fact: str | None
    query: JSON | None = Field(description="the window query of the set; null when it could not be run")
    value: int | float | str | bool | None = Field(description="the computed value; null when unknown")
    rows: list[str]
    excluded: dict[str, int]
    withheld: dict[str, int]
    unknown: str | None = None
    withheld_entity: JSON | None = Field(None, description="the window's entity when only sources withheld from "
                                         "the subject declare it: its key and what would admit one (never the source)")


class Pack(Closed):
    """pack.json (``ctx.pack/1``)."""

    schema_version: Literal["ctx.pack/1"]
    builder_version: str
    encoding: str
    request: PackRequest
    playbook: JSON
    store: PackStore
    gate_order: list[str]
    rounds: list[JSON]
    budget: dict[str, int]
    evidence: list[EvidenceItem]
    omissions: list[Union[WithheldOmission, VisibleOmission]]
    missing: list[Missing]
    state: PackState
    slots: Slots
    answer: PackAnswer
    goal_ref: str | None = Field(description="the case's goal_ref; null when it has none")
    state_version: str | None = Field(description="the case's state_version; null when it has none")
    tools: list[str] = Field(description="the case's tools that the project's tool registry (manifests/tools.yaml) "
                             "knows and the subject may use; empty when none")
    stale_sources: list[StaleSource]
    detector: Detector | None = Field(None, description="the injection detector the gates ran (pattern rules "
                                      "and learned layer); absent for the ungated strategies full and topk")
    contradictions: list[JSON] | None = Field(
        None, description="admitted items a CONTRADICTS relation links (engine/contradict.py); absent when none")
    tool_results: list[ToolResultItem] | None = Field(None, description="gated tool results, packed in the "
                                                      "tool_results section (only when the run was given any)")
    tool_omissions: list[Union[WithheldToolOmission, VisibleToolOmission]] | None = Field(
        None, description="tool results the tool-result gates dropped (only when the run was given any)")
    live_requests: list[LiveRequest] | None = Field(
        None, description="the live channel's requests, made or not (only when an API source was usable)")
    working_memory: WorkingMemory | None = Field(None, description="the gated working state (only when the run "
                                                 "was given one: --memory, or a serve session)")
    episodic_memory: list[MemoryItem] | None = Field(None, description="recalled memory records that passed the "
                                                     "memory gates (only when the run recalled memory)")
    memory_conflicts: list[MemoryConflict] | None = Field(
        None, description="recalled records that contradict admitted evidence, packed only in the conflicts "
        "section (absent when none)")
    memory_omissions: list[MemoryOmission] | None = Field(
        None, description="working-memory items and memory records the gates dropped (only with memory)")
    aggregates: list[AggregateRecord] | None = Field(None, description="the playbook's aggregates as computed; "
                                                     "absent when it declares none")
    content_hash: Hash
    pack_id: str = Field(pattern=r"^pk-[0-9a-f]{16}$")
    erasure: PackErasure | None = Field(None, description="set by `ctx erase --apply` (the pack as built is "
                                        "content_hash; as it is now, erasure.sealed_hash)")


# ------------------------------------------------------------------------------ answer.json
class AnswerClaim(BaseModel):
    model_config = ConfigDict(extra="allow")   # the answer layer may add fields per claim

    claim_id: str
    status: Literal["fact", "inference", "hypothesis", "unknown"]
    facts: JSON
    evidence: list[str]
    text: str
    condition: JSON | None = Field(None, description="the claim's `when` and whether it holds")
    competing: list[JSON] | None = Field(None, description="competing explanations with their evidence")
    correlation: JSON | None = Field(None, description="a temporal claim's anchor, window, ranked candidates and "
                                     "whether its mechanism evidence is present")
    confidence: Confidence


class Confidence(Closed):
    """Defined from the evidence, never a number (docs/pipeline.md, "Claim confidence")."""

    level: Literal["high", "medium", "low", "none"]
    status: Literal["fact", "inference", "hypothesis", "unknown"]
    trust_levels: list[str]
    sources: int = Field(ge=0, description="distinct sources cited")


class Refusal(BaseModel):
    model_config = ConfigDict(extra="allow")

    reason: Literal["subject_has_no_scope", "purpose_not_allowed_by_any_source"]


class Action(Closed):
    action: str
    rule_id: str | None
    reason: str
    evidence: list[str]


class Answer(BaseModel):
    """answer.json (``ctx.answer/1``)."""

    model_config = ConfigDict(extra="allow")

    schema_version: Literal["ctx.answer/1"]
    pack_id: str = Field(pattern=r"^pk-[0-9a-f]{16}$")
    case_id: str
    variant: str | None
    verdict: str
    summary: str
    claims: list[AnswerClaim]
    recommended_action: Action
    side_effect: Literal["none"]
    derived_facts: dict[str, JSON]
    conflicts: list[JSON]
    contradictions: list[JSON] | None = Field(None, description="CONTRADICTS relations between admitted items, "
                                              "stated with their evidence; absent when none")
    missing_evidence: list[JSON]
    validation: JSON
    refusal: Refusal | None = Field(None, description="present when verdict is refused")
    not_tried: NotTried | None = Field(None, description="present when the deadline stopped the round loop")
    stale_sources: list[StaleSource]


# ------------------------------------------------------------------------------ timings.json
class Timings(Closed):
    """timings.json (``ctx.timings/1``): wall-clock seconds; ignored by replay and diff."""

    schema_version: Literal["ctx.timings/1"]
    pack_id: str
    run: str
    seconds: dict[str, float]


# ------------------------------------------------------------------------------ trace events
class Event(Closed):
    seq: int = Field(ge=1)
    run: str = Field(pattern=r"^run-[0-9a-f]{16}$")
    pack_id: str = Field(pattern=r"^pk-[0-9a-f]{16}$")


class RunStarted(Event):
    event: Literal["run_started"]
    request_hash: Hash
    builder_version: str
    case_id: str
    variant: str | None
    strategy: str
    playbook: JSON
    deadline_seconds: float | None = Field(None, description="the run's deadline, when it has one")
    statement_timeout_seconds: float | None = Field(None, description="the store statements' timeout, when set")


class SourceDiscovered(Event):
    event: Literal["source_discovered"]
    source_id: str
    considered: bool
    reason: Literal["allowed", "disabled", "purpose_not_allowed", "scope_missing", "clearance_insufficient"]
    allowed_purposes: list[str] | None = None
    needs_scopes: list[str] | None = None
    needs_clearance: str | None = None


class PlanCreated(Event):
    event: Literal["plan_created"]
    round: int
    target_types: list[str]
    queries: int
    question_terms: dict[str, list[str]] | None = Field(None, description="query id -> terms taken from the question")
    resolved: list[JSON] | None = Field(None, description="names in the seeds or the question resolved to entity "
                                        "keys (engine/resolve.py)")
    unresolved: list[JSON] | None = Field(None, description="names that matched several entities or none well "
                                          "enough, with their candidates")


class RetrievalExecuted(Event):
    event: Literal["retrieval_executed"]
    round: int
    query_id: str
    channel: Literal["structured", "fulltext", "graph", "vector", "window"]
    evidence_type: str
    query: JSON
    filters: JSON
    hits: int
    withheld: dict[Literal["scope", "classification", "purpose"], int] | None = Field(
        None, description="matches the access rules inside the statement withheld, per gate (a count, never an "
        "id); absent when none")


class RerankRecord(Closed):
    score: float = Field(description="RRF score + the weighted features, rounded to 12 digits")
    features: dict[Literal["agreement", "exact_id", "authority", "freshness"], float] = Field(
        description="each feature, rounded to 6 digits (docs/pipeline.md, Reranker)")


class CandidateRetrieved(Event):
    event: Literal["candidate_retrieved"]
    round: int
    ref: str
    withheld: bool
    channels: dict[str, int]
    rrf: float
    scores: dict[str, float] | None = Field(None, description="the raw scores (as an evidence item's "
                                            "retrieval_scores); absent for a withheld candidate")
    rerank: RerankRecord | None = Field(None, description="the reranker's score and features when the playbook "
                                        "enables it (engine/rerank.py); absent for a withheld candidate")


class CandidateRejected(Event):
    event: Literal["candidate_rejected"]
    round: int
    ref: str
    withheld: bool
    gate: str
    reason: str
    detail: JSON


class InputAdmitted(Event):
    """A caller's input (tool result, working-memory item, memory record) the gates admitted."""

    event: Literal["input_admitted"]
    section: Literal["tool_results", "working_memory", "episodic_memory"]
    ref: str
    trust: str | None = None
    tokens: int | None = None
    kind: str | None = None
    pinned: bool | None = None
    replaces: list[str] | None = None
    cleared: bool | None = None
    shaped_further: JSON | None = None


class InputConflict(Event):
    """A recalled memory record that contradicts admitted evidence: packed only in the conflicts section."""

    event: Literal["input_conflict"]
    section: Literal["conflicts"]
    ref: str
    reason: str
    detail: JSON
    tokens: int


class InputRejected(Event):
    """A caller's input a gate dropped: the gate and its reason (withheld: only a keyed reference)."""

    event: Literal["input_rejected"]
    section: Literal["tool_results", "working_memory", "episodic_memory"]
    ref: str
    withheld: bool
    gate: str
    reason: str
    detail: JSON


class EvidenceSelected(Event):
    event: Literal["evidence_selected"]
    round: int
    evidence_id: str
    object_id: str
    selected_for: str | None
    tokens: int
    transformations: list[str]
    valid_at: dict[str, str] | None = Field(None, description="present when its type's validity is anchored at a "
                                            "fact of admitted evidence (playbook valid_at): anchor, at; unresolved "
                                            "(why) when that fact was not known and as_of was used")


class EvidenceTransformed(Event):
    event: Literal["evidence_transformed"]
    round: int
    evidence_id: str
    object_id: str
    kind: Literal["redaction", "compression"]
    method: str | None
    before_hash: Hash | None
    after_hash: Hash | None
    before_tokens: int | None
    after_tokens: int | None


class SufficiencyAssessed(Event):
    event: Literal["sufficiency_assessed"]
    round: int
    covered: list[str]
    missing: list[str]
    required_missing: list[str]
    evidence_tokens: int
    evidence_budget: int


class AggregateComputed(Event):
    event: Literal["aggregate_computed"]
    name: str
    op: str
    value: int | float | str | bool | None
    rows: int = Field(ge=0, description="how many gated rows the value rests on")
    excluded: dict[str, int] = Field(description="rows the gates excluded, per gate")
    withheld: dict[Literal["scope", "classification", "purpose"], int] = Field(
        description="matches the access rules inside the statement withheld, per gate (never an id)")
    unknown: str | None = Field(None, description="why no value: anchor_not_admitted, no_rows, too_many_rows, …")


class DeadlineReached(Event):
    event: Literal["deadline_reached"]
    round: int = Field(description="the round that was not started")
    deadline_seconds: float
    not_tried_rounds: list[int]
    not_tried_types: list[str]


class PackBuilt(Event):
    event: Literal["pack_built"]
    evidence: int
    omissions: int
    total_tokens: int
    stop_reason: str


class ClaimGenerated(Event):
    event: Literal["claim_generated"]
    claim_id: str
    status: str
    evidence: list[str]


class AnswerValidated(BaseModel):
    model_config = ConfigDict(extra="allow")   # the validator's checks, by name

    seq: int = Field(ge=1)
    run: str = Field(pattern=r"^run-[0-9a-f]{16}$")
    pack_id: str = Field(pattern=r"^pk-[0-9a-f]{16}$")
    event: Literal["answer_validated"]
    verdict: str
    action: str


class PackSealed(Event):
    event: Literal["pack_sealed"]
    content_hash: Hash


class ModelCalled(BaseModel):
    """Appended by ``ctx ask`` (docs/model.md)."""

    model_config = ConfigDict(extra="allow")
    seq: int = Field(ge=1)
    run: str = Field(pattern=r"^run-[0-9a-f]{16}$")
    pack_id: str = Field(pattern=r"^pk-[0-9a-f]{16}$")
    event: Literal["model_called"]


class ModelAnswerValidated(BaseModel):
    model_config = ConfigDict(extra="allow")
    seq: int = Field(ge=1)
    run: str = Field(pattern=r"^run-[0-9a-f]{16}$")
    pack_id: str = Field(pattern=r"^pk-[0-9a-f]{16}$")
    event: Literal["model_answer_validated"]
    status: str


TRACE_EVENTS: dict[str, type[BaseModel]] = {
    "run_started": RunStarted, "source_discovered": SourceDiscovered, "plan_created": PlanCreated,
    "retrieval_executed": RetrievalExecuted, "candidate_retrieved": CandidateRetrieved,
    "candidate_rejected": CandidateRejected, "input_admitted": InputAdmitted, "input_rejected": InputRejected,
    "input_conflict": InputConflict,
    "evidence_selected": EvidenceSelected,
    "evidence_transformed": EvidenceTransformed, "sufficiency_assessed": SufficiencyAssessed,
    "deadline_reached": DeadlineReached, "aggregate_computed": AggregateComputed, "pack_built": PackBuilt, "claim_generated": ClaimGenerated, "answer_validated": AnswerValidated,
    "pack_sealed": PackSealed, "model_called": ModelCalled, "model_answer_validated": ModelAnswerValidated,
}
