"""Tool results as governed inputs.

A tool result is what an agent's tool call returned: the tool's name and version, the call's
arguments, the raw result *by reference* (sha256, size, where it lies) and a shaped form —
typed facts, limitations, the ids of the records it came from. Only the shaped form is
rendered to the model; the raw rows never are.

Every tool result is gated like evidence, in this order:

    tenant → scope → purpose → knowledge_time → freshness → injection → raw_check → duplicate → budget

The first three withhold (the omission is an opaque keyed reference and what it needs, never
the tool, its arguments or a digest of its content); the others exclude with a reason. What
passes is packed in the ``tool_results`` section with trust ``untrusted`` — or
``authoritative`` when the project's tool registry (:mod:`.registry`) says so.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Optional, Union

from pydantic import (AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, PrivateAttr, StringConstraints,
                      ValidationError, field_validator, model_serializer)
from typing_extensions import Annotated

from ..engine import checks
from ..engine.checks import InputGate, Rejection
from ..engine.gates import GATES as EVIDENCE_GATES
from ..models.manifest import Ident, Scope
from ..util.canon import canonical_bytes, keyed_hex, sha256_hex
from ..util.timeutil import iso
from .shape import MAX_RAW_FILE_BYTES

MAX_TOOL_RESULT_BYTES = 1_000_000       # a tool-result file (the raw result it names has no limit: only hashed)

Short = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Text = Annotated[str, StringConstraints(max_length=4000)]


def _duration(v: str | int) -> str | int:
    from ..util.timeutil import parse_duration

    parse_duration(v, what="max_age")      # a bad one fails here, with the field named
    return v


# '15m', '24h', '30d', '2w' or seconds: checked when the file is read, never at gate time
MaxAge = Annotated[Union[str, int], AfterValidator(_duration)]
Scalar = Union[str, int, float, bool, None]


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _drop_unset(handler, value, names: tuple[str, ...]) -> dict[str, Any]:
    """The dump without the optional fields added later when unset: a result without them keeps
    its id (``tr-``: the hash of its dump) and its pack bytes."""
    d = handler(value)
    for n in names:
        if d.get(n) is None:
            d.pop(n, None)
    return d


class RawRef(Closed):
    """Where the raw result lies and what it is: never rendered, kept retrievable."""

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)
    location: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    rows: Optional[int] = Field(None, ge=0, description="rows of the raw result (set by ctx tool-result shape)")

    @model_serializer(mode="wrap")
    def _dump(self, handler):
        return _drop_unset(handler, self, ("rows",))


class Shaped(Closed):
    """What the model sees of a tool result."""

    facts: dict[Short, Union[Scalar, list[Scalar]]] = Field(default_factory=dict)
    limitations: list[Text] = Field(default_factory=list)
    record_ids: list[Short] = Field(default_factory=list)
    verified: Optional[bool] = Field(None, description="true: ctx computed the facts from raw (ctx tool-result "
                                     "shape); judged again at gate time, never taken on the caller's word")

    @model_serializer(mode="wrap")
    def _dump(self, handler):
        return _drop_unset(handler, self, ("verified",))


@dataclass(frozen=True)
class LiveOrigin:
    """Where ctx fetched a live result itself (ctxcli.live): never on a caller's word, so never
    a field a tool-result file can set."""

    source_id: str
    request: str
    trust_level: str        # the source manifest's
    valid_from: datetime | None = None      # the record's, when the mapping names them
    valid_to: datetime | None = None


class ToolResult(Closed):
    """One tool result as an agent hands it in (or as ctx fetched it from a live API source)."""

    tool: Ident
    version: Short
    call_id: Short | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    tenant_id: Ident
    scopes: list[Scope] = Field(default_factory=list, description="scopes a subject needs to see the result")
    purposes: list[Ident] = Field(default_factory=list, description="purposes it may serve (empty: any)")
    observed_at: AwareDatetime
    max_age: MaxAge | None = Field(None, description="'15m', '24h', '30d' or seconds; older at as_of: stale")
    raw: RawRef
    shaped: Shaped
    _raw_path: Optional[Path] = PrivateAttr(None)     # the raw file on this host, when ctx may read it
    _live: Optional[LiveOrigin] = PrivateAttr(None)     # set by ctxcli.live only

    @field_validator("arguments")
    @classmethod
    def _json(cls, v):
        canonical_bytes(v)      # a value that is not JSON fails here, with the field named
        return v

    def result_id(self) -> str:
        return "tr-" + sha256_hex(canonical_bytes(self.model_dump(mode="json")))[:12]

    def max_age_td(self) -> timedelta | None:
        from ..util.timeutil import parse_duration

        return None if self.max_age is None else parse_duration(self.max_age, what="max_age")


def live_result(origin: LiveOrigin, fields: dict[str, Any]) -> ToolResult:
    """A tool result ctx fetched itself from a live API source (ctxcli.live), labelled by its
    manifest: packed with the manifest's trust and ``live`` (source, request)."""
    tr = ToolResult.model_validate(fields)
    tr._live = origin
    return tr


def _raw_file(given: str, base: Path | None, *, file: str) -> tuple[bytes, Path]:
    """The bytes of ``raw.path``: a regular file (no FIFO, device, folder or final symbolic
    link; at most ``MAX_RAW_FILE_BYTES``, read in chunks) inside the tool-result file's folder
    or the project — never any other file of the host."""
    from .. import paths
    from ..errors import InputError
    from ..util.safeio import NotReadable, read_regular

    p = Path(given)
    p = p if p.is_absolute() or base is None else base / p
    real = p.parent.resolve() / p.name
    roots = [r.resolve() for r in ([base] if base is not None else []) + [paths.root()]]
    if p.name in ("", ".", "..") or not any(real.is_relative_to(r) for r in roots):
        raise InputError(f"the raw result {given} is outside the tool result's folder and the project",
                         file=file, field="raw.path")
    try:
        return read_regular(real, MAX_RAW_FILE_BYTES, follow=False), real
    except NotReadable as e:
        raise InputError(f"cannot read the raw result {given}: {e}", file=file, field="raw.path") from None


def parse_tool_result(data: Any, *, file: str, base: Path | None = None) -> ToolResult:
    """A ToolResult from a parsed file or tool call. ``raw`` may be ``{path: FILE}`` (relative
    to ``base``; inside it or the project): ctx hashes it and records its size and the path as
    given."""
    from ..errors import InputError
    from ..util.pyd import input_error

    real = None
    if isinstance(data, dict) and isinstance(data.get("raw"), dict) and "path" in data["raw"] \
            and set(data["raw"]) <= {"path", "sha256", "rows"}:
        given = data["raw"]["path"]
        if not isinstance(given, str) or not given:
            raise InputError("raw.path must be a file path", file=file, field="raw.path")
        blob, real = _raw_file(given, base, file=file)
        sha = hashlib.sha256(blob).hexdigest()
        if data["raw"].get("sha256", sha) != sha:
            raise InputError(f"the raw result {given} does not have the sha256 recorded for it (changed since it "
                             "was shaped?)", file=file, field="raw.sha256")
        data = {**data, "raw": {"sha256": sha, "size": len(blob), "location": given,
                                **({"rows": data["raw"]["rows"]} if "rows" in data["raw"] else {})}}
    try:
        tr = ToolResult.model_validate(data)
        tr._raw_path = real
        return tr
    except ValidationError as e:
        raise input_error(e, file=file) from None
    except ValueError as e:     # canonical_bytes of an argument that is not JSON
        raise InputError(str(e), file=file, field="arguments") from None


def read_tool_result(path: Path) -> ToolResult:
    """``ctx investigate --tool-result FILE``: a YAML or JSON tool-result file."""
    from ..paths import display as _display
    from ..util.yamlio import loads_yaml, read_text

    disp = _display(path)
    data = loads_yaml(read_text(path, display=disp, limit=MAX_TOOL_RESULT_BYTES), file=disp)
    return parse_tool_result(data, file=disp, base=path.parent)


def strings(tr: ToolResult) -> list[tuple[str, str]]:
    """Every string of a tool result, named by field: what the injection scan reads."""
    out: list[tuple[str, str]] = [("tool", tr.tool), ("version", tr.version), ("raw.location", tr.raw.location)]
    if tr.call_id:
        out.append(("call_id", tr.call_id))

    def walk(name: str, v: Any) -> None:
        if isinstance(v, str):
            out.append((name, v))
        elif isinstance(v, dict):
            for k in sorted(v):
                out.append((f"{name} (names)", str(k)))
                walk(f"{name}.{k}", v[k])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(f"{name}[{i}]", x)

    walk("arguments", tr.arguments)
    walk("facts", tr.shaped.facts)
    walk("limitations", tr.shaped.limitations)
    walk("record_ids", tr.shaped.record_ids)
    return out


def named_ids(tr: ToolResult) -> list[str]:
    """The strings of a tool result that may name a stored object: its record ids, and every
    string value of its arguments and facts (in that order, each once)."""
    out: list[str] = list(tr.shaped.record_ids)

    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for k in sorted(v):
                walk(v[k])
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(tr.arguments)
    walk(tr.shaped.facts)
    return list(dict.fromkeys(x for x in out if 0 < len(x) <= 200))


def _names_withheld(tr: ToolResult, resolve: Callable[[str], str | None]) -> str | None:
    for x in named_ids(tr):
        gate = resolve(x)
        if gate is not None:
            return gate
    return None


@dataclass
class ToolGate:
    """What the tool-result gates kept and dropped, and the tokens of the rendered section."""

    items: list[dict[str, Any]] = field(default_factory=list)
    omissions: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0                 # the section (header and blocks); 0 with no item
    slot: str = "tools"             # the slot it is charged to: tools, or evidence when the playbook gives tools none
    reserve: int | None = None      # what the evidence slot set aside for it (None: ``tokens``)
    # result id -> (the registry's fit steps, the item as the gates admitted it): not packed
    fits: dict[str, tuple[list, dict[str, Any]]] = field(default_factory=dict)
    live: list[dict[str, Any]] = field(default_factory=list)    # the live channel's requests (ctxcli.live)

    def to_pack(self) -> dict[str, Any]:
        out = {"tool_results": self.items, "tool_omissions": self.omissions}
        if self.live:       # only when an API source was usable: other packs keep their bytes
            out["live_requests"] = self.live
        return out

    def reserved(self) -> int:
        """The tokens the evidence slot keeps for these results from optional evidence (required
        evidence may take them: :meth:`refit`)."""
        return self.tokens if self.reserve is None else self.reserve

    def refit(self, room: int, count: Callable[[str], int]) -> "ToolGate":
        """These results within ``room``: what the evidence slot has left once the evidence is
        packed. Required evidence comes first, so a result it left no room for is omitted
        ``over_budget`` (``after: required_evidence``), in order, as the gate packs them."""
        if self.slot != "evidence" or self.tokens <= room:
            return self
        from ..engine.render import tool_results_header

        g = ToolGate(omissions=list(self.omissions), slot=self.slot, reserve=self.reserved(), fits=self.fits,
                     live=self.live)
        used = count(tool_results_header(0))
        for item in self.items:
            if used + item["tokens"] > room:
                steps, given = self.fits.get(item["result_id"], ([], item))
                # tokens_before: the room the evidence slot kept for it (replay keeps it too: recorded())
                fitted = fit_item(given, room - used, steps, count, tokens_before=item["tokens"])
                if fitted is not None:
                    g.items.append(fitted)
                    used += fitted["tokens"]
                    continue
                g.omissions.append({"ref": item["result_id"], "withheld": False, "gate": "budget",
                                    "reason": "over_budget", "detail": {
                                        "tokens": item["tokens"], "remaining": room - used, "budget": room,
                                        "slot": self.slot, "after": "required_evidence"},
                                    "tool": item["tool"], "version": item["version"],
                                    "observed_at": item["observed_at"]})
                continue
            g.items.append(item)
            used += item["tokens"]
        if g.items:
            g.tokens = count(tool_results_header(len(g.items))) + sum(i["tokens"] for i in g.items)
        g.omissions.sort(key=lambda o: (TOOL_GATE_ORDER.index(o["gate"]), o["ref"]))
        return g


def _base(fact: str) -> str:
    """The aggregate or field a fact is of: ``revenue`` of ``revenue.change[month=…]``."""
    return fact.split("[", 1)[0].split(".", 1)[0]


def _fit_step(facts: dict[str, Any], step) -> dict[str, Any]:
    if step.facts is not None:
        return {k: v for k, v in facts.items() if _base(k) in step.facts}
    if step.only == "compare":
        return {k: v for k, v in facts.items() if k.split("[", 1)[0].endswith((".change", ".pct_change"))}
    return {k: (v[:step.rows] if isinstance(v, list) else v) for k, v in facts.items()}


def fit_item(item: dict[str, Any], room: int, steps: list, count: Callable[[str], int], *,
             tokens_before: int | None = None) -> dict[str, Any] | None:
    """``item`` shaped further, by the registry's ``fit`` steps in order (each on what the one
    before left), until its block fits ``room`` tokens; None when no step makes it fit. The
    kept facts are a subset of the given ones (their raw check stands); the result says so in
    ``shaped_further`` and in a limitation the model reads."""
    from ..engine.render import tool_result_block

    facts = dict(item["facts"])
    given = len(facts)
    for n, step in enumerate(steps, 1):
        facts = _fit_step(facts, step)
        cut = sum(len(v) for v in facts.values() if isinstance(v, list)) < sum(
            len(v) for v in item["facts"].values() if isinstance(v, list))
        note = (f"shaped further by ctx to fit its room: {len(facts)} of {given} facts kept"
                + ("; lists cut" if cut else ""))
        new = {**item, "facts": facts, "limitations": [*item["limitations"], note],
               "shaped_further": {"steps": n, "facts_given": given, "facts_kept": len(facts),
                                  **({"tokens_before": tokens_before} if tokens_before is not None else {})},
               "tokens": 0}
        for k in ("verified_facts", "unverified_facts"):
            if k in item:
                new[k] = [f for f in item[k] if f in facts]
        new["tokens"] = count(tool_result_block(new))
        if new["tokens"] <= room:
            return new
    return None


@dataclass
class ToolGateContext:
    """The request a tool result is gated for."""

    tenant: str
    scopes: frozenset[str]
    purpose: str
    as_of: datetime
    cutoff: datetime            # min(as_of, known_at): the knowledge time
    tz: Any
    resolve: Callable[[str], str | None] | None
    registry: Any
    seen: dict[str, str] = field(default_factory=dict)     # result ids admitted so far


@dataclass
class ToolCandidate:
    """A tool result going through :data:`TOOL_GATES`; ``raw_check`` leaves its findings here."""

    tr: ToolResult
    spec: Any = None            # the registry's entry for its tool (None: unregistered)
    facts_check: Any = None     # what the raw check found (None: it did not run)


def t_tenant(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    return Rejection("tenant", "other_tenant", {}) if checks.other_label(c.tr.tenant_id, x.tenant) else None


def t_scope(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    missing = checks.missing_scopes(c.tr.scopes, x.scopes)
    return Rejection("scope", "missing_scope", {"needs_scopes": missing}) if missing else None


def t_purpose(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    if checks.purpose_denied(c.tr.purposes, x.purpose, empty_allows=True):
        return Rejection("purpose", "purpose_not_allowed", {"allowed_purposes": sorted(c.tr.purposes)})
    return None


def t_named_object(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    """Rejects under the withholding gate of the stored object it names (tenant … purpose)."""
    named = _names_withheld(c.tr, x.resolve) if x.resolve is not None else None
    return None if named is None else Rejection(named, "names_withheld_object", {})


def t_validity(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    """A live record's own validity (``mapping.valid_from`` / ``valid_to``), judged at as_of as
    a stored object's is: from is inclusive, to exclusive."""
    lv = c.tr._live
    if lv is None or (lv.valid_from is None and lv.valid_to is None):
        return None
    early = lv.valid_from is not None and checks.after(lv.valid_from, x.as_of)
    if early or checks.ended(lv.valid_to, x.as_of):
        return Rejection("validity", "not_yet_valid" if early else "expired", {
            "valid_from": iso(lv.valid_from, x.tz) if lv.valid_from else None,
            "valid_to": iso(lv.valid_to, x.tz) if lv.valid_to else None, "as_of": iso(x.as_of, x.tz)})
    return None


def t_knowledge_time(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    if checks.after(c.tr.observed_at, x.cutoff):
        return Rejection("knowledge_time", "not_yet_observed", {"cutoff": iso(x.cutoff, x.tz)})
    return None


def t_freshness(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    age = c.tr.max_age_td()
    if checks.too_old(c.tr.observed_at, x.as_of, age):
        from ..util.timeutil import fmt_duration

        return Rejection("freshness", "stale", {"max_age": fmt_duration(age),
                                                "age": fmt_duration(x.as_of - c.tr.observed_at)})
    return None


def t_injection(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    from ..engine.injection_adapter import scan

    hit = scan(strings(c.tr))
    if hit is None:
        return None
    fld, pattern, label = hit
    return Rejection("injection", "instruction_like_text", {"field": fld, "pattern": pattern, "matched": label})


def t_raw_check(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    if c.tr._live is not None:      # fetched and mapped by ctx from the manifest: no caller's shaping to check
        return None
    c.spec = spec = x.registry.get(c.tr.tool)
    if (spec is not None and spec.shape is not None) or c.tr.shaped.verified:
        from .shape import check_facts

        c.facts_check = fc = check_facts(c.tr, spec.shape if spec is not None else None)
        if fc.mismatch is not None:
            return Rejection("raw_check", "fact_disagrees_with_raw", fc.mismatch)
    return None


def t_duplicate(c: ToolCandidate, x: ToolGateContext) -> Rejection | None:
    rid = c.tr.result_id()
    if rid in x.seen:
        return Rejection("duplicate", "same_result_as_admitted", {"duplicate_of": x.seen[rid]})
    return None


# The tool-result gates in their one order (docs/gates.md; tests/test_gates_table.py).
TOOL_GATES: tuple[InputGate, ...] = (
    InputGate("tenant", t_tenant, True, "the result's `tenant_id` is not the request's", "none: required"),
    InputGate("scope", t_scope, True, "it names a scope the subject lacks (`needs_scopes`)",
              "no `scopes`: none needed"),
    InputGate("purpose", t_purpose, True, "`purposes` is given and does not hold the request's purpose "
              "(`allowed_purposes`)", "no `purposes`: any purpose (its labels narrow, never widen)"),
    InputGate("named_object", t_named_object, True, "a string it names is a stored object or entity this "
              "subject may not see; recorded under that object's gate (tenant, scope, classification, purpose)",
              "nothing named: passes"),
    InputGate("validity", t_validity, False, "a live record's `valid_from` is after as_of, or its `valid_to` is at "
              "or before it", "no validity: always valid"),
    InputGate("knowledge_time", t_knowledge_time, False, "`observed_at` is after min(as_of, known_at)",
              "equal: known"),
    InputGate("freshness", t_freshness, False, "`as_of − observed_at > max_age`", "no `max_age`: never stale"),
    InputGate("injection", t_injection, False, "a string of it (tool, arguments, facts, limitations, ids) "
              "reads as an instruction", "every result scanned"),
    InputGate("raw_check", t_raw_check, False, "a fact disagrees with the raw result (registered shape, or "
              "`verified: true`)", "neither: not checked"),
    InputGate("duplicate", t_duplicate, False, "the same result (same `tr-` id) was admitted before", "the first kept"),
    InputGate("budget", None, False, "its block does not fit what is left of its slot, even shaped further by "
              "the registry's `fit` steps", "equal: fits"),
)
# Omissions sort in this order: the stored-evidence table's withholding gates (a named object's
# gate may be classification), then this table's others.
TOOL_GATE_ORDER = ([g.name for g in EVIDENCE_GATES if g.withholding]
                   + [g.name for g in TOOL_GATES if not g.withholding])


def gate_tool_results(results: list[ToolResult], *, tenant_id: str, scopes: list[str], purpose: str,
                      as_of: datetime, known_at: datetime | None, budget: int, slot: str, registry, key: bytes,
                      count: Callable[[str], int], resolve: Callable[[str], str | None] | None = None,
                      live: list[dict[str, Any]] | None = None) -> ToolGate:
    """Gate ``results`` (in the order given) for this request and pack what passes within
    ``budget`` tokens (section header included). ``resolve``: the withholding gate of a stored
    object a string names when this subject may not see it (None: it may, or no such object);
    a result naming one in ``record_ids``, ``arguments`` or fact values is withheld by that gate:
    its labels can narrow access, never widen it. ``live``: the live channel's request records
    (packed as ``live_requests``)."""
    from ..engine.render import tool_result_block, tool_results_header

    tz = as_of.tzinfo
    g = ToolGate(slot=slot, live=list(live or []))
    cutoff = min(as_of, known_at) if known_at else as_of

    def withhold(tr: ToolResult, gate: str, reason: str, detail: dict[str, Any]) -> None:
        ref = "wh-" + keyed_hex(key, "ctx-withheld-tool-result", tr.tenant_id, tr.result_id())[:16]
        g.omissions.append({"ref": ref, "withheld": True, "gate": gate, "reason": reason, "detail": detail})

    def exclude(tr: ToolResult, gate: str, reason: str, detail: dict[str, Any]) -> None:
        g.omissions.append({"ref": tr.result_id(), "withheld": False, "gate": gate, "reason": reason,
                            "detail": detail, "tool": tr.tool, "version": tr.version,
                            "observed_at": iso(tr.observed_at, tz)})

    ctx = ToolGateContext(tenant=tenant_id, scopes=frozenset(scopes), purpose=purpose, as_of=as_of, cutoff=cutoff,
                          tz=tz, resolve=resolve, registry=registry)
    passed: list[tuple[ToolResult, dict[str, Any]]] = []
    for tr in results:
        cand = ToolCandidate(tr)
        hit = checks.run_table(TOOL_GATES, cand, ctx)
        if hit is not None:
            row, r = hit
            (withhold if row.withholding else exclude)(tr, r.gate, r.reason, r.detail)
            continue
        spec, fc, age = cand.spec, cand.facts_check, tr.max_age_td()
        rid = tr.result_id()
        ctx.seen[rid] = rid
        trust = tr._live.trust_level if tr._live is not None else (
            "authoritative" if spec and spec.authoritative else "untrusted")
        item = {"result_id": rid, "tool": tr.tool, "version": tr.version, "call_id": tr.call_id,
                "arguments": tr.arguments, "trust_level": trust, "observed_at": iso(tr.observed_at, tz),
                "max_age": None if age is None else str(tr.max_age), "raw": tr.raw.model_dump(mode="json"),
                "facts": tr.shaped.facts, "limitations": list(tr.shaped.limitations),
                "record_ids": list(tr.shaped.record_ids), "tokens": 0}
        if tr._live is not None:
            lv = tr._live
            item["live"] = {"source_id": lv.source_id, "request": lv.request}
            for k in ("valid_from", "valid_to"):        # recorded only when the mapping names them
                if getattr(lv, k) is not None:
                    item["live"][k] = iso(getattr(lv, k), tz)
        if fc is not None:      # the raw-vs-shaped check ran (or was asked for): which facts it vouches for
            item["verified_facts"] = fc.verified
            item["unverified_facts"] = fc.unverified
        item["tokens"] = count(tool_result_block(item))
        passed.append((tr, item))
    if passed:
        used = count(tool_results_header(0))
        for tr, item in passed:
            spec = registry.get(tr.tool)
            if spec is not None and spec.fit:
                g.fits[item["result_id"]] = (list(spec.fit), item)
            if checks.over_budget(used + item["tokens"], budget):
                fitted = fit_item(item, budget - used, list(spec.fit) if spec is not None else [], count)
                if fitted is None:
                    exclude(tr, "budget", "over_budget", {"tokens": item["tokens"], "remaining": budget - used,
                                                          "budget": budget, "slot": slot})
                    continue
                item = fitted
            g.items.append(item)
            used += item["tokens"]
        if g.items:
            g.tokens = count(tool_results_header(len(g.items))) + sum(i["tokens"] for i in g.items)
    g.omissions.sort(key=lambda o: (TOOL_GATE_ORDER.index(o["gate"]), o["ref"]))
    return g


def recorded(pack: dict[str, Any]) -> ToolGate | None:
    """The tool gate of a pack as recorded (replay re-uses it: tool results are the caller's
    inputs, not objects of the store, and a withheld one cannot be rebuilt from the pack)."""
    if "tool_results" not in pack:
        return None
    slot = "tools"
    for s in pack["slots"]["sections"]:
        if s["section"] == "tool_results":
            slot = s["slot"]
    for o in pack["tool_omissions"]:
        if o["gate"] == "budget" and o["detail"].get("slot"):     # also when none was packed
            slot = o["detail"]["slot"]
    g = ToolGate(items=list(pack["tool_results"]), omissions=list(pack["tool_omissions"]), slot=slot,
                 live=list(pack.get("live_requests") or []))
    if g.items:
        from ..engine.render import tool_results_header
        from ..tokens import count

        g.tokens = count(tool_results_header(len(g.items))) + sum(i["tokens"] for i in g.items)
    pushed = [o["detail"]["tokens"] for o in g.omissions if o["detail"].get("after") == "required_evidence"]
    # results shaped further once required evidence was packed: the room they had before
    before = [(i.get("shaped_further") or {}).get("tokens_before", i["tokens"]) for i in g.items]
    if pushed or before != [i["tokens"] for i in g.items]:
        # the reserve the run kept: the section as it was before required evidence took room
        from ..engine.render import tool_results_header
        from ..tokens import count

        g.reserve = count(tool_results_header(len(g.items) + len(pushed))) + sum(before) + sum(pushed)
    return g


def shape_tool_result(raw: Path, *, tool: str, registry, tenant_id: str, observed_at: str,
                      version: str | None = None, out_dir: Path | None = None, **labels: Any) -> dict[str, Any]:
    """A tool-result document (``ctx tool-result shape``): ``raw`` shaped as the registry declares
    for ``tool``, the raw kept by reference — ``raw.path`` relative to ``out_dir`` (where the
    document is written; default the current folder), its sha256 and row count."""
    import os

    from ..errors import InputError
    from ..paths import display as show
    from .shape import shape_file

    spec = registry.get(tool)
    if spec is None:
        names = ", ".join(t.name for t in registry.tools) or "none"
        raise InputError(f"tool {tool!r} is not in the tool registry (its tools: {names})", field="--tool")
    if spec.shape is None:
        raise InputError(f"tool {tool!r} has no shape declaration in the tool registry", field="--tool")
    disp = show(raw)
    from ..util.safeio import NotReadable, read_regular

    try:
        blob = read_regular(raw, MAX_RAW_FILE_BYTES, follow=False)
    except NotReadable as e:
        raise InputError(f"cannot read the raw result: {e}", file=disp) from None
    facts, lims, rows = shape_file(raw, spec.shape, display=disp)
    base = (out_dir or Path.cwd()).resolve()
    rel = Path(os.path.relpath(raw.resolve(), base)).as_posix()
    ver = version or spec.version
    if ver is None:
        raise InputError(f"tool {tool!r}: give --tool-version (the registry declares no version)", field="--tool-version")
    doc = {"tool": tool, "version": ver, **{k: v for k, v in labels.items() if v not in (None, [], {})},
           "tenant_id": tenant_id, "observed_at": observed_at,
           "raw": {"path": rel, "sha256": hashlib.sha256(blob).hexdigest(), "rows": rows},
           "shaped": {"facts": facts, "limitations": lims, "verified": True}}
    parse_tool_result(doc, file="the shaped tool result", base=base)     # what --tool-result will read
    return doc
