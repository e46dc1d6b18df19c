"""Playbooks: the declared retrieval plan, packing budget, claims and decision rules of a
case type (``manifests/playbooks/*.yaml``). The engine holds no domain knowledge: it is
all here, as data."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StringConstraints, field_validator, model_validator

from .manifest import Ident
from .records import TypeName
from .request import BUDGET_MAX, BUDGET_MIN, MAX_ROUNDS_MAX, MAX_ROUNDS_MIN

EdgeType = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9_]{0,63}$")]
FactName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
Term = Annotated[str, StringConstraints(min_length=1, max_length=200)]


class P(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class PathStep(P):
    edge: EdgeType
    to: TypeName


class PathTemplate(P):
    """A typed, directed edge sequence the graph channel may walk, e.g.
    case -BOUND_TO-> ruleset -REQUIRES-> document_type. ``seeds`` (entity keys, may use
    ``{param.NAME}``, e.g. ``store:{param.store}``) join the investigation's seeds.
    ``min_confidence``: every edge walked has at least this confidence; ``inferred: false``: only
    declared relations are walked, never those entity linking made (load/link.py)."""

    id: Ident
    start: TypeName
    steps: list[PathStep] = Field(min_length=1, max_length=6)
    seeds: list[Term] = Field(default_factory=list)
    min_confidence: float | None = Field(None, ge=0.0, le=1.0)
    inferred: bool = Field(True, description="false: relations made by entity linking are not walked.")


ParamValue = str | int | float | bool


class ParamSpec(P):
    """A typed case parameter the playbook uses as ``{param.NAME}``."""

    type: Literal["string", "integer", "number", "boolean"] = "string"
    required: bool = False
    default: ParamValue | None = None
    description: str = ""

    def type_error(self, v: object) -> str | None:
        ok = {"string": isinstance(v, str), "boolean": isinstance(v, bool),
              "integer": isinstance(v, int) and not isinstance(v, bool),
              "number": isinstance(v, (int, float)) and not isinstance(v, bool)}[self.type]
        return None if ok else f"expected {self.type}, got {v!r}"


class StructuredSpec(P):
    object_types: list[TypeName] = Field(default_factory=list)


class FulltextSpec(P):
    terms: list[Term] = Field(min_length=1)


class GraphSpec(P):
    templates: list[Ident] = Field(min_length=1)


class VectorSpec(P):
    """Exact cosine search over the store's vectors (run only by the ``hybrid`` strategy): the
    query text is the question plus the evidence type's judgment; candidates are the tenant's
    objects that support the type and, when listed, are of one of ``object_types``."""

    object_types: list[TypeName] = Field(default_factory=list)
    limit: int | None = Field(None, ge=1, le=1000, description="candidates per query (default: candidate_limit)")


class WindowSpec(P):
    """The time-window channel: the tenant's readable objects that support the evidence type
    (and, when listed, are of one of ``object_types``), linked to an entity — their subject is
    ``entity`` (a key, may use ``{param.NAME}``) or any entity of ``entity_type``, or an entity one
    authorised relation of a ``via`` type away from it (either direction) — whose event time
    (``time``: the object's valid_from or observed_at) lies within ``before_minutes`` before and
    ``after_minutes`` after the anchor, or in the calendar ``day``, ``week`` (ISO: Monday
    00:00 to the next Monday 00:00, excluded) or ``month`` holding the anchor, in ``zone`` (an
    IANA name or a ``±HH:MM`` offset; default the offset of the request's ``as_of``), nearest
    to the anchor first. The anchor is ``as_of``, or the fact ``anchor_fact`` of the admitted
    evidence of type ``anchor_from`` (one agreed ISO time; until it is admitted the query is
    not planned)."""

    object_types: list[TypeName] = Field(default_factory=list)
    entity: Term | None = None
    entity_type: TypeName | None = None
    via: list[EdgeType] = Field(default_factory=list, max_length=16)
    time: Literal["valid_from", "observed_at"] = "valid_from"
    anchor_fact: FactName | None = None
    anchor_from: TypeName | None = None
    before_minutes: int | None = Field(None, ge=0, le=525_600)
    after_minutes: int = Field(0, ge=0, le=525_600)
    calendar: Literal["day", "week", "month"] | None = Field(
        None, description="the calendar day, ISO week (from Monday) or month holding the anchor, instead of minutes")
    zone: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        None, description="the calendar's zone: an IANA name or a ±HH:MM offset (default: the offset of as_of)")
    limit: int | None = Field(None, ge=1, le=1000, description="candidates per query (default: candidate_limit)")

    @model_validator(mode="after")
    def _target(self) -> "WindowSpec":
        if (self.entity is None) == (self.entity_type is None):
            raise ValueError("window: give exactly one of entity, entity_type")
        if (self.anchor_fact is None) != (self.anchor_from is None):
            raise ValueError("window: anchor_fact and anchor_from go together (without them the anchor is as_of)")
        if (self.before_minutes is None) == (self.calendar is None):
            raise ValueError("window: give exactly one of before_minutes, calendar")
        if self.calendar is not None and self.after_minutes:
            raise ValueError("window: after_minutes goes with before_minutes, not with calendar")
        if self.zone is not None:
            if self.calendar is None:
                raise ValueError("window: zone goes with calendar")
            from ..util.timeutil import zone_of

            zone_of(self.zone)
        return self


class ChannelSpecs(P):
    structured: StructuredSpec | None = None
    fulltext: FulltextSpec | None = None
    graph: GraphSpec | None = None
    vector: VectorSpec | None = None
    window: WindowSpec | None = None


RuleValue = str | int | float | bool
FrontKey = Annotated[str, StringConstraints(min_length=1, max_length=200)]
PathGlob = Annotated[str, StringConstraints(min_length=1, max_length=200)]
# The fields a rule's ``regex`` may read: the object's own, a fact, a front-matter key.
REGEX_FIELD = re.compile(r"(title|content|path|subject_id|facts\.[a-z][a-z0-9_]{0,63}|front_matter\..{1,200})\Z", re.S)
MAX_RULE_PATTERN = 256


class EvidenceRule(P):
    """Objects that support an evidence type, by rule rather than by a ``supports`` label in the
    data: every stated criterion must hold (``sources`` / ``object_types`` / ``paths``: one of;
    ``facts``: each equal; ``contains``: each list fact holds the value; ``front_matter``: each
    key of the document's own front matter equals the value or is a list holding it;
    ``front_matter_keys``: each present; ``regex``: each field's text matches, RE2 search;
    ``terms``: one of them in the title or content, case-insensitive). Applied at load."""

    sources: list[Ident] = Field(default_factory=list)
    object_types: list[TypeName] = Field(default_factory=list)
    facts: dict[FactName, RuleValue] = Field(default_factory=dict)
    contains: dict[FactName, RuleValue] = Field(
        default_factory=dict, description="fact name -> a value the fact, a list, holds (tags: rollback)")
    paths: list[PathGlob] = Field(
        default_factory=list, description="patterns over the document's path (git: in the repository; markdown: "
                                          "under the snapshot folder), gitignore's syntax from the root: '**' "
                                          "any folders, '*' and '?' within one name, '[a-z]' a class, a folder's "
                                          "name everything under it. Objects of other parsers have no path.")
    front_matter: dict[FrontKey, RuleValue] = Field(
        default_factory=dict, description="the document's own front-matter key -> its value (or a value its "
                                          "list holds), before any mapping")
    front_matter_keys: list[FrontKey] = Field(
        default_factory=list, description="front-matter keys the document has (any value)")
    regex: dict[str, Annotated[str, StringConstraints(min_length=1, max_length=MAX_RULE_PATTERN)]] = Field(
        default_factory=dict, description="field (title, content, path, subject_id, facts.NAME, "
                                          "front_matter.KEY) -> an RE2 pattern searched in its text")
    terms: list[Term] = Field(default_factory=list)

    @field_validator("paths")
    @classmethod
    def _relative(cls, v: list[str]) -> list[str]:
        for g in v:
            if g.startswith("/") or "\\" in g:
                raise ValueError(f"paths: {g!r}: a glob is a path relative to the repository or snapshot folder, "
                                 f"with '/' between names (no leading '/', no backslash)")
        return v

    @field_validator("regex")
    @classmethod
    def _linear(cls, v: dict[str, str]) -> dict[str, str]:
        from ..util.masking import PatternError, search_pattern

        for f, src in v.items():
            if not REGEX_FIELD.match(f):
                raise ValueError(f"regex: unknown field {f!r} (one of title, content, path, subject_id, "
                                 f"facts.NAME, front_matter.KEY)")
            try:
                search_pattern(src)
            except PatternError as e:
                raise ValueError(f"regex.{f}: {e}") from None
        return v

    @model_validator(mode="after")
    def _some(self) -> "EvidenceRule":
        if not (self.sources or self.object_types or self.facts or self.contains or self.paths
                or self.front_matter or self.front_matter_keys or self.regex or self.terms):
            raise ValueError("a rule needs at least one of sources, object_types, facts, contains, paths, "
                             "front_matter, front_matter_keys, regex, terms")
        return self


class ValidAt(P):
    """The time an evidence type's validity is judged at: the fact ``anchor_fact`` (an ISO time)
    that the admitted evidence of type ``anchor_from`` agrees on — "the release in force when the
    errors began" — instead of the request's ``as_of``. Until that evidence is admitted, as_of."""

    anchor_from: TypeName
    anchor_fact: FactName


class EvidenceType(P):
    type: TypeName
    judgment: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    required: bool = True
    coverage: Literal["one", "all"] = Field(
        "one", description="'one': the best eligible item covers the type; 'all': every eligible item linked "
                           "to the case is needed (e.g. all received documents), and if one cannot fit the type is "
                           "missing over budget.")
    retrieve: ChannelSpecs
    followup: ChannelSpecs | None = None
    match: list[EvidenceRule] = Field(default_factory=list, description="Objects that support this type by rule.")
    valid_at: ValidAt | None = Field(None, description="Judge this type's validity and supersession at a fact of "
                                                       "admitted evidence (e.g. the incident's first_error_at) "
                                                       "instead of as_of.")
    compare: bool = Field(False, description="Keep every admitted item of this type when items of different sources "
                                             "overlap (the same entity and fact with different values, or the same text): the task "
                                             "compares them. Default false: the most authoritative is kept (trust "
                                             "level, then the later valid_from, then the later observed_at) and the "
                                             "others are omitted superseded_by_authority.")


class Budget(P):
    total_tokens: int = Field(ge=BUDGET_MIN, le=BUDGET_MAX)
    response_reserve: int = Field(ge=0)
    instructions: int = Field(ge=0)
    goal_state: int = Field(ge=0)
    tools: int = Field(0, ge=0)

    @property
    def evidence(self) -> int:
        return self.total_tokens - self.response_reserve - self.instructions - self.goal_state - self.tools

    @model_validator(mode="after")
    def _fits(self) -> "Budget":
        if self.evidence < 0:
            raise ValueError("budget: response_reserve + instructions + goal_state + tools exceed total_tokens")
        return self


class DerivedFact(P):
    """A named fact computed from admitted evidence or from other derived facts.

    ops: ``value`` one agreed value of ``fact`` over evidence of type ``from`` (disagreement
    is a conflict); ``collect`` sorted distinct values; ``mapping`` a key->value map built from
    ``key``/``value`` facts; ``map`` ``input`` list translated through ``mapping``;
    ``difference`` / ``intersection`` of two lists; ``expr`` a safe expression.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: FactName
    op: Literal["value", "collect", "mapping", "map", "difference", "intersection", "expr"]
    from_: TypeName | None = Field(None, alias="from")
    fact: FactName | None = None
    where: dict[FactName, str | int | float | bool] = Field(default_factory=dict)
    key: FactName | None = None
    value: FactName | None = None
    input: FactName | None = None
    mapping: FactName | None = None
    left: FactName | None = None
    right: FactName | None = None
    expr: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = None

    @model_validator(mode="after")
    def _args(self) -> "DerivedFact":
        need = {
            "value": ("from_", "fact"), "collect": ("from_", "fact"), "mapping": ("from_", "key", "value"),
            "map": ("input", "mapping"), "difference": ("left", "right"), "intersection": ("left", "right"),
            "expr": ("expr",),
        }[self.op]
        missing = [n.rstrip("_") for n in need if getattr(self, n) is None]
        if missing:
            raise ValueError(f"op {self.op} needs {', '.join(missing)}")
        return self


class TemporalSpec(P):
    """A claim that rests on "A happened shortly before B": the admitted items of type ``events``
    whose ``time_fact`` lies within ``within_minutes`` before the bound fact ``anchor`` (an ISO
    time) are ranked by their distance to it and named by ``label_fact``. The answer states
    this as correlation (the claim's status, hypothesis or inference, with the interval) —
    never as cause — unless every evidence type in ``mechanism`` is present in the pack; then
    ``cause_text`` is stated, as an inference citing the mechanism evidence too."""

    anchor: FactName
    events: TypeName
    time_fact: FactName
    label_fact: FactName
    within_minutes: int = Field(ge=0, le=525_600)
    mechanism: list[TypeName] = Field(default_factory=list)
    cause_text: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = None

    @model_validator(mode="after")
    def _cause(self) -> "TemporalSpec":
        if bool(self.mechanism) != (self.cause_text is not None):
            raise ValueError("temporal: mechanism and cause_text go together")
        return self


class Aggregate(P):
    """A computed fact over a typed set of stored objects, not only over admitted evidence: the
    tenant's objects the subject may read (the access rules inside the statement) that support
    ``evidence_type`` and lie in the window ``over`` (the time-window channel's set, without its
    limit), each gated like a candidate. ``count`` the rows; ``sum``/``min``/``max`` of the
    numeric ``fact``; ``latest_before``/``earliest_after`` the row at or before / at or after the
    window's anchor T nearest to it, reported by ``fact`` (default its object id). The result,
    the rows it was computed from (object ids) and what the gates excluded are recorded in the
    pack (``aggregates``); the answer binds it as a fact named ``name``."""

    name: FactName
    op: Literal["count", "sum", "min", "max", "latest_before", "earliest_after"]
    evidence_type: TypeName
    over: WindowSpec
    fact: FactName | None = None

    @model_validator(mode="after")
    def _fact(self) -> "Aggregate":
        if self.op in ("sum", "min", "max") and self.fact is None:
            raise ValueError(f"aggregates.{self.name}: op {self.op} needs fact")
        return self


class Claim(P):
    id: Ident
    text: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    status: Literal["fact", "inference", "hypothesis"]
    uses: list[FactName] = Field(min_length=1)
    when: Annotated[str, StringConstraints(max_length=500)] | None = None
    else_text: Annotated[str, StringConstraints(max_length=1000)] | None = None
    competing: list[FactName] = Field(default_factory=list,
                                      description="Facts naming competing explanations, stated with the claim.")
    temporal: TemporalSpec | None = None

    @model_validator(mode="after")
    def _correlation(self) -> "Claim":
        if self.temporal is not None and self.status == "fact":
            raise ValueError(f"claims.{self.id}: a temporal claim is a correlation: status hypothesis or inference")
        if self.temporal is not None and self.temporal.anchor not in self.uses:
            raise ValueError(f"claims.{self.id}: temporal anchor {self.temporal.anchor} must be among uses")
        return self


class DecisionRule(P):
    id: Ident
    when: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    action: Ident
    explanation: Annotated[str, StringConstraints(max_length=1000)] = ""


class Decision(P):
    rules: list[DecisionRule] = Field(default_factory=list)
    default_action: Ident
    on_insufficient: Ident
    on_conflict: Ident


class NameResolution(P):
    """Entity names in the question resolved to their stable keys (engine/resolve.py): a name or
    alias of a readable entity of ``entity_types`` found in the question (util/entity_match.py,
    thresholds as a source's ``linking``) joins the seeds, and its key the full-text queries;
    an ambiguous or weak one is recorded as unresolved, with its candidates, and used nowhere."""

    entity_types: list[TypeName] = Field(min_length=1)
    accept: float = Field(0.9, gt=0.0, le=1.0)
    candidate: float = Field(0.75, gt=0.0, le=1.0)
    margin: float = Field(0.05, ge=0.0, le=1.0)
    fuzzy: bool = True

    @model_validator(mode="after")
    def _order(self) -> "NameResolution":
        if self.candidate > self.accept:
            raise ValueError("resolve_names.candidate: must not exceed resolve_names.accept")
        return self


Weight = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class RerankWeights(P):
    """The weight of each reranker feature (engine/rerank.py): a number from 0 to 1. An RRF
    score is about 1/61 per channel that found a candidate, so weights of that order move it."""

    agreement: Weight = 0.004
    exact_id: Weight = 0.02
    authority: Weight = 0.004
    freshness: Weight = 0.002


class Rerank(P):
    """The deterministic reranker after fusion and before the gates (docs/pipeline.md): a
    candidate's score is its RRF score plus the weighted features. Off unless ``enabled``;
    ``freshness_days``: the age (observed_at before as_of) at which freshness is one half."""

    enabled: StrictBool = False
    weights: RerankWeights = Field(default_factory=RerankWeights)
    freshness_days: int = Field(30, ge=1, le=36_500)


class Playbook(P):
    playbook_id: Ident
    version: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    description: str = ""
    purposes: list[Ident] = Field(min_length=1)
    instructions: Annotated[str, StringConstraints(min_length=1)]
    policy_constraints: str = ""
    max_hops: int = Field(ge=1, le=6)
    max_rounds: int = Field(ge=MAX_ROUNDS_MIN, le=MAX_ROUNDS_MAX)
    candidate_limit: int = Field(ge=1, le=1000)
    fanout_cap: int = Field(200, ge=1, le=100000)
    vectors: StrictBool = Field(False, description="`ctx load` builds the store with vectors (the vector channel of the "
                                             "hybrid strategy; the `vectors` extra). A load directive: not part of "
                                             "the playbook's hash")
    deadline_seconds: float | None = Field(
        None, ge=0, le=86_400, description="Stop the round loop once this many seconds have passed since the build "
        "started (stop reason deadline); the case or --deadline overrides it.")
    statement_timeout_seconds: float | None = Field(
        None, gt=0, le=3_600, description="Cancel any one store statement that runs longer (exit 3).")
    budget: Budget
    memory_max_age: dict[Literal["user", "assistant", "tool"], str | int] = Field(
        default_factory=dict, description="Working memory: the age at as_of past which a message of this role is "
        "excluded stale ('30m', '24h', '7d' or seconds; a message's own max_age wins; a message without `at` is "
        "excluded undated). Tool messages age by their tool result.")
    params: dict[FactName, ParamSpec] = Field(default_factory=dict)
    path_templates: list[PathTemplate] = Field(default_factory=list)
    resolve_names: NameResolution | None = Field(None, description="Entity names in the question (opt-in).")
    evidence_types: list[EvidenceType] = Field(min_length=1)
    aggregates: list[Aggregate] = Field(default_factory=list, description="Computed facts over stored rows "
                                        "(count, sum, min, max, latest_before, earliest_after), bound before facts.")
    rerank: Rerank | None = Field(None, description="The deterministic reranker after fusion, before the gates "
                                  "(opt-in: enabled, weights, freshness_days).")
    facts: list[DerivedFact] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    decision: Decision

    @field_validator("memory_max_age")
    @classmethod
    def _ages(cls, v):
        from ..util.timeutil import parse_duration

        for role, age in v.items():
            parse_duration(age, what=f"memory_max_age.{role}")
        return v

    @model_validator(mode="after")
    def _refs(self) -> "Playbook":
        types = self._evidence_type_refs()
        self._anchor_refs(types)
        names = self._aggregate_refs(types)
        self._fact_refs(types, names)
        self._claim_refs(types, names)
        return self

    def _evidence_type_refs(self) -> set[str]:
        """Templates within max_hops, evidence types unique and naming known templates: the types."""
        tids = {t.id for t in self.path_templates}
        for t in self.path_templates:
            if len(t.steps) > self.max_hops:
                raise ValueError(f"path_templates.{t.id}: {len(t.steps)} steps exceed max_hops {self.max_hops}")
        types = set()
        for et in self.evidence_types:
            if et.type in types:
                raise ValueError(f"evidence_types: duplicate type {et.type}")
            types.add(et.type)
            for spec in (et.retrieve, et.followup):
                if spec and spec.graph:
                    for tid in spec.graph.templates:
                        if tid not in tids:
                            raise ValueError(f"evidence_types.{et.type}: unknown path template {tid}")
        return types

    def _anchor_refs(self, types: set[str]) -> None:
        """Each valid_at and window anchor names another declared evidence type."""
        for et in self.evidence_types:
            if et.valid_at and (et.valid_at.anchor_from not in types or et.valid_at.anchor_from == et.type):
                raise ValueError(f"evidence_types.{et.type}: valid_at anchor_from: not another declared evidence "
                                 f"type: {et.valid_at.anchor_from}")
            for spec in (et.retrieve, et.followup):
                w = spec.window if spec else None
                if w and w.anchor_from and w.anchor_from not in types:
                    raise ValueError(f"evidence_types.{et.type}: window anchor_from: unknown evidence type {w.anchor_from}")

    def _aggregate_refs(self, types: set[str]) -> set[str]:
        """Aggregates over declared evidence types, uniquely named: their names."""
        names: set[str] = set()
        for a in self.aggregates:
            if a.evidence_type not in types:
                raise ValueError(f"aggregates.{a.name}: unknown evidence type {a.evidence_type}")
            if a.over.anchor_from and a.over.anchor_from not in types:
                raise ValueError(f"aggregates.{a.name}: anchor_from: unknown evidence type {a.over.anchor_from}")
            if a.name in names:
                raise ValueError(f"aggregates: duplicate name {a.name}")
            names.add(a.name)
        return names

    def _fact_refs(self, types: set[str], names: set[str]) -> None:
        """Facts from declared types, referring only to what is defined before them; adds their names."""
        for f in self.facts:
            if f.from_ and f.from_ not in types:
                raise ValueError(f"facts.{f.name}: unknown evidence type {f.from_}")
            for ref in (f.input, f.mapping, f.left, f.right):
                if ref and ref not in names:
                    raise ValueError(f"facts.{f.name}: refers to {ref} before it is defined")
            if f.name in names:
                raise ValueError(f"facts: duplicate name {f.name}")
            names.add(f.name)

    def _claim_refs(self, types: set[str], names: set[str]) -> None:
        """Claims use only defined facts and declared evidence types."""
        for c in self.claims:
            for u in c.uses + c.competing:
                if u not in names:
                    raise ValueError(f"claims.{c.id}: uses unknown fact {u}")
            if c.temporal is not None:
                for t in [c.temporal.events, *c.temporal.mechanism]:
                    if t not in types:
                        raise ValueError(f"claims.{c.id}: temporal: unknown evidence type {t}")
