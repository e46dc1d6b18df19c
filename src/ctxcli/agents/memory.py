"""Working memory and durable memory, gated like every other input of a model call.

**Working state** (``ctx.working-state/1``: ``ctx investigate --memory FILE``, or the session of
``ctx serve``) is what an agent keeps between its model calls: pinned items (the goal, a policy,
the approval state, the stop condition), a rolling summary that names the message ids it
replaces, the summarizer and its version and the categories it left out, and the recent
messages. Pinned items are never dropped under budget pressure; recent messages are dropped
oldest first; a tool message whose tool result is stale at as_of is cleared — its text leaves
the context, its reference stays.

**Memory records** (``ctx.memory/1``, written by ``ctx remember`` / the ``remember`` tool only
with an explicit review, always with an expiry, deleted by ``ctx forget``) are recalled into
the ``episodic_memory`` section. A record is gated on every use, in this order:

    tenant → subject → scope → purpose → knowledge_time → ttl → review → injection → duplicate → budget

The first four withhold (an opaque keyed reference, never the record's text or id). A record
is context, never an instruction: it is rendered fenced after the evidence, in the user
message, and the current request prevails over it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import AwareDatetime, Field, ValidationError, model_validator

from ..engine import checks
from ..engine.checks import InputGate, Rejection
from ..models.manifest import Ident, Scope
from ..util.canon import canonical_bytes, keyed_hex, sha256_hex
from ..util.timeutil import iso
from .tool_results import Closed, MaxAge, Short, Text

WORKING_SCHEMA = "ctx.working-state/1"
MEMORY_SCHEMA = "ctx.memory/1"
WORKING_GATE_ORDER = ["tenant", "subject", "knowledge_time", "freshness", "injection", "claims", "budget"]
PINNED_KINDS = ("goal", "policy", "approval", "stop_condition")
MAX_FILE_BYTES = 1_000_000
# Recent messages, the summary and recalled memories may use at most this share of what the
# evidence slot holds after the tool results and pinned items; pinned items are always packed.
MEMORY_SHARE = 0.5


class Pinned(Closed):
    """An item the agent must always see: never dropped under budget pressure."""

    kind: Literal["goal", "policy", "approval", "stop_condition"]
    text: Text = Field(min_length=1)


class Summarizer(Closed):
    name: Short
    version: Short


class Summary(Closed):
    """A rolling summary of older messages: which ones it replaces, who made it, what it left out."""

    text: Text = Field(min_length=1)
    replaces: list[Short] = Field(min_length=1, description="ids of the messages it replaces")
    summarizer: Summarizer
    omitted: list[Short] = Field(default_factory=list, description="categories the summary left out")
    replaced: list["Message"] = Field(
        default_factory=list, description="the messages it replaces, as they were: the claim checker reads the "
        "summary against them (a summary without all of them is packed unchecked)")


class ToolRef(Closed):
    """The tool result a tool message carried: its reference stays when its text is cleared."""

    result_id: str = Field(pattern=r"^tr-[0-9a-f]{12}$")
    observed_at: AwareDatetime
    max_age: MaxAge | None = None


class Message(Closed):
    id: Short
    role: Literal["user", "assistant", "tool"]
    text: Text
    at: AwareDatetime | None = None
    tool_result: ToolRef | None = None
    max_age: MaxAge | None = Field(None, description="'30m', '24h', '7d' or seconds: older at as_of, the message is "
                                   "excluded stale (default: the playbook's memory_max_age for its role)")


Summary.model_rebuild()   # its ``replaced`` messages are declared below it


class WorkingState(Closed):
    """``--memory FILE``: the working state of one agent run or session."""

    schema_version: Literal["ctx.working-state/1"] = WORKING_SCHEMA
    session_id: Short
    tenant_id: Ident
    subject_id: Ident
    pinned: list[Pinned] = Field(default_factory=list)
    summary: Summary | None = None
    messages: list[Message] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ids(self):
        seen: set[str] = set()
        for m in self.messages:
            if m.id in seen:
                raise ValueError(f"message id {m.id} appears twice")
            seen.add(m.id)
        if self.summary is not None:
            both = sorted(seen & set(self.summary.replaces))
            if both:
                raise ValueError(f"message {both[0]} is both in messages and replaced by the summary")
            given: set[str] = set()
            for m in self.summary.replaced:
                if m.id not in self.summary.replaces:
                    raise ValueError(f"summary.replaced: message {m.id} is not one the summary replaces")
                if m.id in given:
                    raise ValueError(f"summary.replaced: message {m.id} appears twice")
                given.add(m.id)
        return self


class Review(Closed):
    reviewed_by: Ident
    reviewed_at: AwareDatetime


class MemoryRecord(Closed):
    """One durable memory record (``ctx remember``)."""

    schema_version: Literal["ctx.memory/1"] = MEMORY_SCHEMA
    memory_id: str = Field(pattern=r"^mem-[0-9a-f]{12}$")
    tenant_id: Ident
    subject_id: Ident
    scopes: list[Scope] = Field(default_factory=list, description="scopes a subject needs to recall it")
    purposes: list[Ident] = Field(default_factory=list, description="purposes it may serve (empty: any)")
    text: Text = Field(min_length=1)
    created_at: AwareDatetime
    expires_at: AwareDatetime
    review: Review | None = None
    source: Short | None = Field(None, description="where it came from (a pack id, a message id)")

    @model_validator(mode="after")
    def _ttl(self):
        if self.expires_at <= self.created_at:
            raise ValueError("expires_at must be after created_at")
        return self


def memory_id_for(body: dict[str, Any]) -> str:
    """``mem-`` + 12 hex digits of the canonical JSON of the record without its id: ``body`` is
    the record as written (``model_dump(mode="json")``, so a UTC time reads ``Z``)."""
    return "mem-" + sha256_hex(canonical_bytes({k: v for k, v in body.items() if k != "memory_id"}))[:12]


def _legacy_id(rec: MemoryRecord) -> str:
    """The id ctx before issue 49 gave a record: its times as ``isoformat()`` (``+00:00``, not
    the ``Z`` it wrote), so a UTC record it wrote is still read as the record it is."""
    body = rec.model_dump(mode="json")
    body["created_at"], body["expires_at"] = rec.created_at.isoformat(), rec.expires_at.isoformat()
    if rec.review is not None:
        body["review"]["reviewed_at"] = rec.review.reviewed_at.isoformat()
    return memory_id_for(body)


def new_record(*, tenant_id: str, subject_id: str, text: str, created_at: datetime, ttl: timedelta,
               reviewed_by: str | None, scopes: list[str] | None = None, purposes: list[str] | None = None,
               source: str | None = None, file: str = "remember") -> MemoryRecord:
    """A memory record to write: refused without an explicit review (``reviewed_by``)."""
    from ..errors import UsageError
    from ..util.pyd import input_error

    if not reviewed_by:
        raise UsageError("a memory write needs an explicit review: give --reviewed-by (reviewed_by) "
                         "naming who reviewed it")
    body = {"schema_version": MEMORY_SCHEMA, "tenant_id": tenant_id, "subject_id": subject_id,
            "scopes": sorted(set(scopes or [])), "purposes": sorted(set(purposes or [])), "text": text,
            "created_at": created_at.isoformat(), "expires_at": (created_at + ttl).isoformat(),
            "review": {"reviewed_by": reviewed_by, "reviewed_at": created_at.isoformat()}, "source": source,
            "memory_id": "mem-000000000000"}
    try:
        rec = MemoryRecord.model_validate(body)
    except ValidationError as e:
        raise input_error(e, file=file) from None
    # the id of the bytes write_record writes (parse_record checks those)
    return rec.model_copy(update={"memory_id": memory_id_for(rec.model_dump(mode="json"))})


def parse_working_state(data: Any, *, file: str) -> WorkingState:
    from ..errors import InputError
    from ..util.pyd import input_error

    try:
        return WorkingState.model_validate(data)
    except ValidationError as e:
        raise input_error(e, file=file) from None
    except ValueError as e:
        raise InputError(str(e), file=file) from None


def read_working_state(path: Path) -> WorkingState:
    """``ctx investigate --memory FILE``: a YAML or JSON working-state file."""
    from ..util.yamlio import loads_yaml, read_text
    from ..paths import display as _display

    disp = _display(path)
    return parse_working_state(loads_yaml(read_text(path, display=disp, limit=MAX_FILE_BYTES), file=disp), file=disp)


def parse_record(data: Any, *, file: str) -> MemoryRecord:
    from ..errors import InputError
    from ..util.pyd import input_error

    try:
        rec = MemoryRecord.model_validate(data)
    except ValidationError as e:
        raise input_error(e, file=file) from None
    if rec.memory_id not in (memory_id_for(rec.model_dump(mode="json")), _legacy_id(rec)):
        raise InputError("the record does not match its memory_id (edited after it was written)", file=file,
                         field="memory_id")
    return rec


# ------------------------------------------------------------------------------ the memory store
def store_dir(runs_dir: Path) -> Path:
    """Durable memory lives beside the runs by default: ``<runs>/memory/<mem-id>.json``."""
    return Path(runs_dir) / "memory"


def write_record(folder: Path, rec: MemoryRecord) -> Path:
    import os
    import tempfile

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{rec.memory_id}.json"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(canonical_bytes(rec.model_dump(mode="json")))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def delete_record(folder: Path, memory_id: str) -> bool:
    """Delete one record; False when there is none of that id."""
    import re

    from ..errors import UsageError

    if not re.fullmatch(r"mem-[0-9a-f]{12}", memory_id or ""):
        raise UsageError(f"{memory_id!r} is not a memory id (mem-…)")
    path = Path(folder) / f"{memory_id}.json"
    if not path.is_file():
        return False
    path.unlink()
    return True


def read_records(folder: Path) -> list[MemoryRecord]:
    """Every record of a memory folder, by id (a ``mem-*.json`` file ctx did not write there,
    or one edited since, is an input error naming it)."""
    from ..util.jsonstrict import loads as loads_strict

    folder = Path(folder)
    if not folder.is_dir():
        return []
    return [parse_record(loads_strict(p.read_bytes()), file=f"{folder.name}/{p.name}")
            for p in sorted(folder.glob("mem-*.json"))]


# ------------------------------------------------------------------------------ gates
@dataclass
class MemoryGate:
    """What the working-memory and memory gates kept and dropped, and the sections' tokens."""

    working: dict[str, Any] | None = None        # None: the run was given no working state
    records: list[dict[str, Any]] | None = None   # None: the run recalled no memory
    omissions: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0                              # both sections, charged to the evidence slot
    decisions: list[dict[str, Any]] = field(default_factory=list)   # for the trace, in gate order
    conflicts: list[dict[str, Any]] = field(default_factory=list)   # records contradicting admitted evidence

    def against(self, evidence: list[dict[str, Any]], count: Callable[[str], int]) -> "MemoryGate":
        """The recalled records read against the admitted ``evidence`` (``agents.conflicts``): a
        record that contradicts it leaves ``records`` for ``conflicts``, with the reason — packed
        only in the ``conflicts`` section, never as a memory."""
        from ..engine import render
        from .conflicts import conflict

        if not self.records:
            return self
        kept, moved = [], list(self.conflicts)
        for r in self.records:
            why = conflict(r["text"], evidence)
            if why is None:
                kept.append(r)
                continue
            item = {**{k: v for k, v in r.items() if k not in ("tokens", "trust_level")},
                    "trust_level": "contradicted_memory", "conflict": why, "tokens": 0}
            item["tokens"] = count(render.conflict_block(item))
            moved.append(item)
        if len(kept) == len(self.records):
            return self
        g = MemoryGate(working=self.working, records=kept, omissions=list(self.omissions), decisions=self.decisions,
                       conflicts=moved)
        g.tokens = g.count_tokens(count)
        return g

    def count_tokens(self, count: Callable[[str], int]) -> int:
        from ..engine import render

        return sum(count(t) for t in (render.working_memory_text(self.working),
                                      render.episodic_memory_text(self.records),
                                      render.conflicts_text(self.conflicts)))

    def refit(self, room: int, count: Callable[[str], int]) -> "MemoryGate":
        """These sections within ``room``: what the evidence slot has left once required evidence
        is packed (required evidence comes first). What does not fit is omitted ``over_budget``
        (``after: required_evidence``): the recalled records from the last, then the recent
        messages from the oldest, then the summary; pinned items are never dropped."""
        from ..engine import render

        if self.tokens <= room:
            return self
        working = None if self.working is None else {**self.working, "messages": list(self.working["messages"])}
        records = None if self.records is None else list(self.records)
        conflicts = list(self.conflicts)
        g = MemoryGate(working=working, records=records, omissions=list(self.omissions), decisions=self.decisions,
                       conflicts=conflicts)

        def tokens() -> int:
            return sum(count(t) for t in (render.working_memory_text(working), render.episodic_memory_text(records),
                                          render.conflicts_text(conflicts)))

        def omit(section: str, ref: str, n: int) -> None:
            g.omissions.append({"section": section, "ref": ref, "withheld": False, "gate": "budget",
                                "reason": "over_budget", "detail": {"tokens": n, "remaining": room,
                                                                    "after": "required_evidence"}})

        while (now := tokens()) > room:
            if records:
                r = records.pop()
                omit("episodic_memory", r["memory_id"], r["tokens"])
            elif conflicts:
                r = conflicts.pop()
                omit("episodic_memory", r["memory_id"], r["tokens"])
            elif working is not None and working["messages"]:
                m = working["messages"].pop(0)
                omit("working_memory", m["id"], m["tokens"])
            elif working is not None and working.get("summary") is not None:
                omit("working_memory", "summary", working["summary"]["tokens"])
                working["summary"] = None
            else:
                break
        g.tokens = now
        order = {"working_memory": WORKING_GATE_ORDER, "episodic_memory": MEMORY_GATE_ORDER}
        g.omissions.sort(key=lambda o: (o["section"], order[o["section"]].index(o["gate"]), o["ref"]))
        return g

    def to_pack(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.working is not None:
            out["working_memory"] = self.working
        if self.records is not None:
            out["episodic_memory"] = self.records
        if self.conflicts:       # only when a record contradicts the evidence: other packs keep their bytes
            out["memory_conflicts"] = self.conflicts
        out["memory_omissions"] = self.omissions
        return out


def summary_violations(s: Summary) -> list[str]:
    """The claim checker's error codes for a summary read against the messages it replaces that
    the caller gave (``summary.replaced``); none when it gave none of them."""
    if not s.replaced:
        return []
    from ..answer.claims import check_summary

    return sorted({v["code"] for v in check_summary(s.text, [m.text for m in s.replaced])
                   if v.get("severity") != "warning"})


def _stale(ref: ToolRef, as_of: datetime) -> tuple[str, str] | None:
    from ..util.timeutil import fmt_duration, parse_duration

    if ref.max_age is None:
        return None
    age = parse_duration(ref.max_age, what="max_age")
    if as_of - ref.observed_at > age:
        return fmt_duration(age), fmt_duration(as_of - ref.observed_at)
    return None


def _same_goal(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _too_old(m: Message, as_of: datetime, defaults: dict[str, timedelta]) -> dict[str, Any] | None:
    """Why a message without a tool result is past its age at as_of (its own ``max_age``, else
    the playbook's for its role), or None: ``stale_message`` with the age, ``undated`` when an
    age applies and the message has no ``at``."""
    from ..util.timeutil import fmt_duration, parse_duration

    if m.tool_result is not None:
        return None          # a tool message's age is its tool result's (cleared, reference kept)
    limit = parse_duration(m.max_age, what="max_age") if m.max_age is not None else defaults.get(m.role)
    if limit is None:
        return None
    if m.at is None:
        return {"reason": "undated", "max_age": fmt_duration(limit)}
    if as_of - m.at > limit:
        return {"reason": "stale_message", "max_age": fmt_duration(limit), "age": fmt_duration(as_of - m.at)}
    return None


def _pinned(pinned: list[Pinned], goal: str | None, drop) -> tuple[list[dict[str, Any]], list[Message]]:
    """(the pinned items as packed, the goals demoted to ordinary messages): an item with
    instruction-like text is dropped (``drop``); only the case sets the goal, so a pinned goal
    that is not the case's question becomes an ordinary user message."""
    from ..engine.injection_adapter import scan

    kept: list[dict[str, Any]] = []
    demoted: list[Message] = []
    for i, p in enumerate(pinned):
        ref = f"pinned[{i}]"
        hit = scan([(f"pinned[{i}].text", p.text)])
        if hit is not None:
            drop("working_memory", ref, "injection", "instruction_like_text",
                 {"field": hit[0], "pattern": hit[1], "matched": hit[2], "kind": p.kind})
            continue
        if p.kind == "goal" and goal is not None and not _same_goal(p.text, goal):
            demoted.append(Message(id=ref, role="user", text=p.text))
            continue
        kept.append({"ref": ref, "kind": p.kind, "text": p.text})
    return kept, demoted


def _message_item(m: Message, as_of: datetime, tz, drop) -> dict[str, Any]:
    """A recent message as packed: a tool message whose tool result is stale at as_of is
    cleared (its text leaves, its reference stays) and the clearing recorded with ``drop``."""
    item: dict[str, Any] = {"id": m.id, "role": m.role, "at": iso(m.at, tz) if m.at else None,
                            "text": m.text, "cleared": None}
    if m.tool_result is not None:
        item["tool_result"] = m.tool_result.result_id
        old = _stale(m.tool_result, as_of)
        if old is not None:
            item["text"] = ""
            item["cleared"] = {"reason": "stale", "max_age": old[0], "age": old[1]}
            drop("working_memory", m.id, "freshness", "stale_tool_result_cleared",
                 {"tool_result": m.tool_result.result_id, "max_age": old[0], "age": old[1]})
    return item


@dataclass
class MemoryGateContext:
    """The request a memory record is gated for."""

    tenant: str
    subject: str
    scopes: frozenset[str]
    purpose: str
    as_of: datetime
    cutoff: datetime            # min(as_of, known_at): the knowledge time
    tz: Any
    seen: set[str] = field(default_factory=set)     # memory ids admitted so far


def m_tenant(r: MemoryRecord, x: MemoryGateContext) -> Rejection | None:
    return Rejection("tenant", "other_tenant", {}) if checks.other_label(r.tenant_id, x.tenant) else None


def m_subject(r: MemoryRecord, x: MemoryGateContext) -> Rejection | None:
    return Rejection("subject", "other_subject", {}) if checks.other_label(r.subject_id, x.subject) else None


def m_scope(r: MemoryRecord, x: MemoryGateContext) -> Rejection | None:
    missing = checks.missing_scopes(r.scopes, x.scopes)
    return Rejection("scope", "missing_scope", {"needs_scopes": missing}) if missing else None


def m_purpose(r: MemoryRecord, x: MemoryGateContext) -> Rejection | None:
    if checks.purpose_denied(r.purposes, x.purpose, empty_allows=True):
        return Rejection("purpose", "purpose_not_allowed", {"allowed_purposes": sorted(r.purposes)})
    return None


def m_knowledge_time(r: MemoryRecord, x: MemoryGateContext) -> Rejection | None:
    if checks.after(r.created_at, x.cutoff):
        return Rejection("knowledge_time", "not_yet_written", {"cutoff": iso(x.cutoff, x.tz)})
    return None


def m_ttl(r: MemoryRecord, x: MemoryGateContext) -> Rejection | None:
    if checks.ended(r.expires_at, x.as_of):
        return Rejection("ttl", "expired", {"expires_at": iso(r.expires_at, x.tz)})
    return None


def m_review(r: MemoryRecord, x: MemoryGateContext) -> Rejection | None:
    return Rejection("review", "not_reviewed", {}) if r.review is None else None


def m_injection(r: MemoryRecord, x: MemoryGateContext) -> Rejection | None:
    from ..engine.injection_adapter import scan

    hit = scan([("text", r.text)] + ([("source", r.source)] if r.source else []))
    if hit is None:
        return None
    return Rejection("injection", "instruction_like_text", {"field": hit[0], "pattern": hit[1], "matched": hit[2]})


def m_duplicate(r: MemoryRecord, x: MemoryGateContext) -> Rejection | None:
    return Rejection("duplicate", "same_record_as_admitted", {}) if r.memory_id in x.seen else None


# The memory-record gates in their one order (docs/gates.md; tests/test_gates_table.py).
MEMORY_GATES: tuple[InputGate, ...] = (
    InputGate("tenant", m_tenant, True, "the record's `tenant_id` is not the request's", "none: required"),
    InputGate("subject", m_subject, True, "the record's `subject_id` is not the request's subject", "none: required"),
    InputGate("scope", m_scope, True, "it names a scope the subject lacks (`needs_scopes`)",
              "no `scopes`: none needed"),
    InputGate("purpose", m_purpose, True, "`purposes` is given and does not hold the request's purpose "
              "(`allowed_purposes`)", "no `purposes`: any purpose (its labels narrow, never widen)"),
    InputGate("knowledge_time", m_knowledge_time, False, "`created_at` is after min(as_of, known_at)",
              "equal: known"),
    InputGate("ttl", m_ttl, False, "`expires_at ≤ as_of`", "always set (`ctx remember --ttl`)"),
    InputGate("review", m_review, False, "it has no `review`", "none: rejected"),
    InputGate("injection", m_injection, False, "its `text` or `source` reads as an instruction", "every record scanned"),
    InputGate("duplicate", m_duplicate, False, "the same record (same `mem-` id) was recalled before",
              "the first kept"),
    InputGate("budget", None, False, "its block does not fit the memories' share of the evidence slot",
              "equal: fits"),
)
MEMORY_GATE_ORDER = [g.name for g in MEMORY_GATES]


@dataclass
class MessageGateContext:
    """The request a working-state message is gated for."""

    as_of: datetime
    cutoff: datetime            # min(as_of, known_at): the knowledge time
    tz: Any
    max_age: dict[str, timedelta]   # the playbook's age limit per role


@dataclass
class MessageCandidate:
    m: Message
    demoted: bool               # a pinned goal that is not the case's: no age applies


def w_knowledge_time(c: MessageCandidate, x: MessageGateContext) -> Rejection | None:
    """Written after as_of (or known_at): what the agent could not yet have known."""
    if c.m.at is not None and checks.after(c.m.at, x.cutoff):
        return Rejection("knowledge_time", "not_yet_written", {"cutoff": iso(x.cutoff, x.tz)})
    return None


def w_freshness(c: MessageCandidate, x: MessageGateContext) -> Rejection | None:
    old = None if c.demoted else _too_old(c.m, x.as_of, x.max_age)
    return None if old is None else Rejection("freshness", old.pop("reason"), old)


def w_injection(c: MessageCandidate, x: MessageGateContext) -> Rejection | None:
    """A tool message whose tool result is stale is cleared (its text leaves): nothing to scan."""
    from ..engine.injection_adapter import scan

    if c.m.tool_result is not None and _stale(c.m.tool_result, x.as_of) is not None:
        return None
    hit = scan([(f"messages.{c.m.id}.text", c.m.text)])
    if hit is None:
        return None
    return Rejection("injection", "instruction_like_text", {"field": hit[0], "pattern": hit[1], "matched": hit[2]})


# The working-state message gates in their one order (docs/gates.md; tests/test_gates_table.py).
# The state itself is withheld first when it is another tenant's or subject's (gates tenant,
# subject); pinned items and the summary are judged on their own (docs/agents.md).
MESSAGE_GATES: tuple[InputGate, ...] = (
    InputGate("knowledge_time", w_knowledge_time, False, "its `at` is after min(as_of, known_at)",
              "equal: known; no `at`: known"),
    InputGate("freshness", w_freshness, False, "`as_of − at > max_age` (its own, else the playbook's "
              "`memory_max_age` for its role; `undated` when an age applies and it has no `at`); a tool message "
              "is cleared instead when its tool result is stale", "no age: never stale; equal: fresh"),
    InputGate("injection", w_injection, False, "its text reads as an instruction (a cleared tool message is not "
              "scanned)", "every message scanned"),
    InputGate("budget", None, False, "it does not fit what is left of the memories' share, or a newer one did "
              "not (newest kept first)", "equal: fits"),
)


def gate_memory(state: WorkingState | None, records: list[MemoryRecord] | None, *, tenant_id: str,
                subject_id: str, scopes: list[str], purpose: str, as_of: datetime, known_at: datetime | None,
                budget: int, key: bytes, count: Callable[[str], int], goal: str | None = None,
                max_age: dict[str, timedelta] | None = None) -> MemoryGate:
    """Gate the working state and the recalled records for this request. ``budget``: the
    tokens the evidence slot holds for them. Pinned items (and the sections' headers) are always
    kept — charged, never dropped; the summary, the recent messages (newest first) and the
    records share ``MEMORY_SHARE`` of what is left after them. ``goal``: the case's question —
    a pinned ``goal`` that says anything else is demoted to an ordinary message (flagged
    ``demoted``), so a session cannot add a goal the case does not have. ``max_age``: the
    playbook's age limit per message role (a message's own ``max_age`` wins)."""
    from ..engine.injection_adapter import scan
    from ..engine import render

    tz = as_of.tzinfo
    g = MemoryGate()
    cutoff = min(as_of, known_at) if known_at else as_of

    def drop(section: str, ref: str, gate: str, reason: str, detail: dict[str, Any], *, withheld: bool = False):
        om = {"section": section, "ref": ref, "withheld": withheld, "gate": gate, "reason": reason, "detail": detail}
        g.omissions.append(om)

    left = budget        # replaced below once the pinned items are known
    restored: list[Message] = []     # the messages of a summary the claim checker refused
    if state is not None:
        w: dict[str, Any] = {"session_id": state.session_id, "pinned": [], "summary": None, "messages": [],
                             "messages_given": len(state.messages)}
        if checks.other_label(state.tenant_id, tenant_id) or checks.other_label(state.subject_id, subject_id):
            gate = "tenant" if checks.other_label(state.tenant_id, tenant_id) else "subject"
            ref = "wh-" + keyed_hex(key, "ctx-withheld-working-state", state.tenant_id, state.session_id)[:16]
            drop("working_memory", ref, gate, "other_tenant" if gate == "tenant" else "other_subject", {},
                 withheld=True)
            w = {"session_id": None, "pinned": [], "summary": None, "messages": [], "messages_given": 0}
        else:
            w["pinned"], demoted = _pinned(state.pinned, goal, drop)
            left = int((budget - count(render.working_memory_text(w))) * MEMORY_SHARE)
            if state.summary is not None:
                s = state.summary
                hit = scan([("summary.text", s.text)] + [(f"summary.omitted[{i}]", o) for i, o in enumerate(s.omitted)])
                if hit is not None:
                    drop("working_memory", "summary", "injection", "instruction_like_text",
                         {"field": hit[0], "pattern": hit[1], "matched": hit[2]})
                else:
                    codes = summary_violations(s)
                    if codes:
                        # the summary says what the messages it replaces do not: it is not packed,
                        # and those messages compete for the room as the oldest ones
                        drop("working_memory", "summary", "claims", "claim_violation", {"codes": codes})
                        restored = list(s.replaced)
                    else:
                        item = {"text": s.text, "replaces": list(s.replaces), "summarizer": s.summarizer.model_dump(),
                                "omitted": list(s.omitted), "checked": {m.id for m in s.replaced} == set(s.replaces)}
                        item["tokens"] = count(render.summary_block(item))
                        if item["tokens"] > left:
                            drop("working_memory", "summary", "budget", "over_budget",
                                 {"tokens": item["tokens"], "remaining": left})
                        else:
                            w["summary"] = item
                            left -= item["tokens"]
            kept: list[dict[str, Any]] = []
            full = False
            demoted_ids = {m.id for m in demoted}
            mctx = MessageGateContext(as_of=as_of, cutoff=cutoff, tz=tz, max_age=max_age or {})
            for m in reversed(demoted + restored + list(state.messages)):   # newest first: the oldest go first
                hit = checks.run_table(MESSAGE_GATES, MessageCandidate(m, m.id in demoted_ids), mctx)
                if hit is not None:
                    drop("working_memory", m.id, hit[1].gate, hit[1].reason, hit[1].detail)
                    continue
                item = _message_item(m, as_of, tz, drop)
                if m.id in demoted_ids:
                    item["demoted"] = "pinned_goal_not_the_cases"
                item["tokens"] = count(render.message_block(item))
                if full or checks.over_budget(item["tokens"], left):
                    drop("working_memory", m.id, "budget", "over_budget", {"tokens": item["tokens"], "remaining": left})
                    full = True     # an older message never jumps over a newer one that did not fit
                    continue
                kept.append(item)
                left -= item["tokens"]
            w["messages"] = list(reversed(kept))
        g.working = w
    if state is None or g.working["session_id"] is None:
        left = int(budget * MEMORY_SHARE)
    if records is not None:
        left -= count(render.episodic_memory_text([]))
        g.records = []
        rctx = MemoryGateContext(tenant=tenant_id, subject=subject_id, scopes=frozenset(scopes), purpose=purpose,
                                 as_of=as_of, cutoff=cutoff, tz=tz)
        for r in records:
            def withhold(gate: str, reason: str, detail: dict[str, Any], r=r):
                ref = "wh-" + keyed_hex(key, "ctx-withheld-memory", r.tenant_id, r.memory_id)[:16]
                drop("episodic_memory", ref, gate, reason, detail, withheld=True)

            hit = checks.run_table(MEMORY_GATES, r, rctx)
            if hit is not None:
                row, rej = hit
                if row.withholding:
                    withhold(rej.gate, rej.reason, rej.detail)
                else:
                    drop("episodic_memory", r.memory_id, rej.gate, rej.reason, rej.detail)
                continue
            rid = r.memory_id
            rctx.seen.add(rid)
            item = {"memory_id": rid, "subject_id": r.subject_id, "text": r.text,
                    "created_at": iso(r.created_at, tz), "expires_at": iso(r.expires_at, tz),
                    "reviewed_by": r.review.reviewed_by, "source": r.source, "trust_level": "reviewed_memory"}
            item["tokens"] = count(render.memory_block(item))
            if checks.over_budget(item["tokens"], left):
                drop("episodic_memory", rid, "budget", "over_budget", {"tokens": item["tokens"], "remaining": left})
                continue
            g.records.append(item)
            left -= item["tokens"]
    order = {"working_memory": WORKING_GATE_ORDER, "episodic_memory": MEMORY_GATE_ORDER}
    g.omissions.sort(key=lambda o: (o["section"], order[o["section"]].index(o["gate"]), o["ref"]))
    g.tokens = sum(count(t) for t in (render.working_memory_text(g.working), render.episodic_memory_text(g.records)))
    return g


def recorded(pack: dict[str, Any]) -> MemoryGate | None:
    """The memory gate of a pack as recorded (replay re-uses it: the working state and the
    records are the caller's inputs at that time, not objects of the store)."""
    if "memory_omissions" not in pack:
        return None
    from ..tokens import count

    g = MemoryGate(working=pack.get("working_memory"), records=pack.get("episodic_memory"),
                   omissions=list(pack["memory_omissions"]), conflicts=list(pack.get("memory_conflicts") or []))
    g.tokens = g.count_tokens(count)
    return g
