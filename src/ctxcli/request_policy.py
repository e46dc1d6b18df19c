"""The request policy: who asks, with which clearance, for which purpose, within which limits.

Every investigation — ``ctx investigate`` (a case file or an ad-hoc run), ``ctx replay``
(the request a pack records), ``ctx serve`` (the server's fixed identity) and ``ctx eval``
— turns its options into an engine :class:`~ctxcli.engine.builder.Request` here and only here:

- **the subject**: ``--subject`` (or the server's), else the variant's subject, else the case's;
- **the scopes**: ``--scope``, else that subject's own; another subject named with
  ``--subject`` starts with none;
- **the clearance goes with the subject**: the case's (or variant's) subject keeps its own,
  another subject gets ``internal`` unless ``--clearance`` is given;
- **the purpose**: ``--purpose``, else the variant's, else the case's, and the playbook must
  serve it; ``as_of``, ``known_at``, budget and rounds likewise (flag, variant, case or playbook);
- **the limits** (:mod:`ctxcli.models.request`, the one place): subject and scope ids, budget
  and rounds in range, a known strategy — checked again on the resolved request, so no caller
  can pass what the command line refuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .errors import InputError, UsageError
from .models.case import CaseFile, Subject
from .models.playbook import Playbook
from .project import read_checked, read_playbook
from .util.canon import obj_hash


def refuse_out_of_limits(names: dict[str, str] | None = None, **values: Any) -> None:
    """UsageError for the first value outside the request limits (:func:`~ctxcli.models.request.request_problem`:
    ``subject``, ``scopes``, ``budget``, ``max_rounds``, ``strategy``; None is not given), naming the
    field as ``names`` does (default: the command line's flags)."""
    from .models.request import FLAGS, request_problem

    bad = request_problem(**values)
    if bad is not None:
        raise UsageError(f"{(names or FLAGS).get(bad[0], bad[0])} {bad[1]}")


@dataclass
class AdhocSpec:
    """The case of an ad-hoc run (``ctx investigate --playbook P --seed KEY``): no case file.
    The subject, purpose and as_of come from the :class:`InvestigateOptions` beside it."""

    playbook: str
    seeds: list[str]
    tenant_id: str | None = None
    question: str | None = None
    business_keys: list[str] | None = None   # None: the key part of each seed (``case:K-1`` -> ``K-1``)
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class InvestigateOptions:
    case: str | None = None          # a case id or case file; None with ``adhoc``
    as_of: datetime | None = None
    known_at: datetime | None = None
    now: datetime | None = None      # when live API sources are asked (ctxcli.live; default: the clock)
    subject_id: str | None = None
    scopes: list[str] | None = None
    clearance: str | None = None
    purpose: str | None = None
    budget: int | None = None
    max_rounds: int | None = None
    variant: str | None = None
    strategy: str = "dynamic"
    db: Path | None = None
    cases_dir: Path | None = None
    playbooks_dir: Path | None = None
    params: dict[str, Any] | None = None     # None: the case's (and variant's); replay passes the pack's
    extra_params: dict[str, Any] | None = None   # --param NAME=VALUE, over the case's and variant's
    adhoc: AdhocSpec | None = None   # an ad-hoc run: the case is synthesised (:func:`adhoc_case`)
    case_by_id: bool = False         # ``case`` is only an id under the cases folder, never a path (ctx serve)
    tool_results: list[Any] | None = None   # agents.tool_results.ToolResult: gated and packed (tool_results section)
    working_state: Any = None        # agents.memory.WorkingState (--memory): gated, packed in working_memory
    memory_records: list[Any] | None = None   # agents.memory.MemoryRecord recalled (--recall); None: no recall
    state_version: str | None = None  # the caller's task-state version (--state-version); None: the case's
    deadline_seconds: float | None = None   # --deadline: over the case's and the playbook's
    clock: Any = None                # what the deadline is measured with (tests); None: time.monotonic
    rerank: bool | None = None       # ctx eval --rerank: the reranker on/off over the playbook's (None: as it says)


ADHOC_PREFIX = "adhoc-"


# field of the synthesised case -> the flag that gives it
_ADHOC_FLAGS = {"tenant_id": "--tenant", "question": "--question", "seeds": "--seed", "business_keys": "--business-key",
                "params": "--param", "subject": "--subject", "purpose": "--purpose", "as_of": "--as-of"}


def case_of(opts: InvestigateOptions) -> tuple[CaseFile, Playbook, str]:
    """(case, playbook, playbook hash) of a run: the case file's, or the synthesised one."""
    if opts.adhoc is not None:
        return adhoc_case(opts)
    if not opts.case:
        raise UsageError("give a case id (or case file), or --playbook with --seed for an ad-hoc run")
    return read_checked(opts.case, opts.cases_dir, opts.playbooks_dir, by_id=opts.case_by_id)


def adhoc_case_id(spec: dict[str, Any]) -> str:
    """``adhoc-`` and the first 12 hex digits of the SHA-256 of the canonical JSON of what is
    investigated: playbook, tenant, seeds, business keys, params and question. Who asks, for
    which purpose and at which time are the request's, as with a case file: the same look by
    another subject or at another as_of keeps its case id."""
    keyed = {k: spec[k] for k in ("playbook", "tenant_id", "seeds", "business_keys", "params", "question")}
    return ADHOC_PREFIX + obj_hash(keyed).split(":", 1)[1][:12]


def adhoc_case(opts: InvestigateOptions) -> tuple[CaseFile, Playbook, str]:
    """The case of an ad-hoc run, synthesised from ``opts.adhoc`` and the request options, after
    the checks a case file gets (``ctx check``). Nothing is taken from a default: the tenant,
    subject, scopes, purpose and as_of must be given (UsageError naming the flag otherwise);
    the clearance defaults to ``internal`` and the question to the playbook's description."""
    from .check import case_problems
    from .models.manifest import CLEARANCE_LEVELS, DEFAULT_CLEARANCE, IDENT_RE

    spec = opts.adhoc
    assert spec is not None
    if opts.case:
        raise UsageError(f"a case id ({opts.case}) and --playbook cannot be combined: a case file names its own "
                         f"playbook")
    if opts.variant is not None:
        raise UsageError("--variant needs a case file: an ad-hoc run (--playbook) has no variants")
    if not spec.seeds:
        raise UsageError("--seed is required with --playbook: the entity keys the investigation starts from")
    for flag, value in (("--tenant", spec.tenant_id), ("--subject", opts.subject_id),
                        ("--scope", opts.scopes or None), ("--purpose", opts.purpose), ("--as-of", opts.as_of)):
        if value is None:
            raise UsageError(f"{flag} is required with --playbook: an ad-hoc run has no case file to take it from")
    if not IDENT_RE.match(spec.tenant_id or ""):
        raise UsageError(f"--tenant {spec.tenant_id!r} is not a valid id")
    clearance = opts.clearance or DEFAULT_CLEARANCE
    if clearance not in CLEARANCE_LEVELS:
        raise UsageError(f"--clearance {clearance!r} is not one of {', '.join(CLEARANCE_LEVELS)}")
    try:
        pb, pb_hash = read_playbook(spec.playbook, opts.playbooks_dir)
    except (InputError, UsageError) as e:
        if e.file is None:       # unknown or misnamed playbook: say which flag named it
            raise UsageError(f"--playbook: {e.detail}") from None
        raise
    from .params import refuse_malformed

    refuse_malformed(spec.params, pb)
    question = spec.question if spec.question is not None else (
        " ".join(pb.description.split()) or f"Ad-hoc review with playbook {pb.playbook_id}.")
    keys = spec.business_keys if spec.business_keys is not None else [s.split(":", 1)[1] for s in spec.seeds
                                                                       if ":" in s and s.split(":", 1)[1]]
    data: dict[str, Any] = {
        "playbook": pb.playbook_id, "tenant_id": spec.tenant_id, "seeds": list(dict.fromkeys(spec.seeds)),
        "business_keys": list(dict.fromkeys(keys)), "params": dict(sorted(spec.params.items())),
        "question": question}
    data = {"case_id": adhoc_case_id(data), **data, "purpose": opts.purpose, "as_of": opts.as_of,
            "subject": {"id": opts.subject_id, "scopes": sorted(set(opts.scopes or [])), "clearance": clearance}}
    try:
        case = CaseFile.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = [str(x) for x in err.get("loc", ())]
        flag = _ADHOC_FLAGS.get(loc[0], loc[0]) if loc else "--playbook"
        if loc[:2] == ["subject", "scopes"]:
            flag = "--scope"
        raise UsageError(f"{flag}: {err.get('msg', 'invalid')}"
                         + (f" ({'.'.join(loc[1:])})" if len(loc) > 1 and flag != "--scope" else "")) from None
    probs = case_problems(case, None, "", pb)
    if probs:
        raise UsageError(probs[0].message)
    return case, pb, pb_hash


def case_from_request(request: dict[str, Any], playbook_id: str) -> CaseFile:
    """The synthesised case of an ad-hoc run, read back from the request its pack records
    (``ctx replay``). Raises ValidationError when the request does not make a case."""
    subj = request.get("subject") or {}
    return CaseFile.model_validate({
        "case_id": request.get("case_id"), "tenant_id": request.get("tenant_id"), "playbook": playbook_id,
        "question": request.get("question"), "purpose": request.get("purpose"), "as_of": request.get("as_of"),
        "subject": {"id": subj.get("id"), "scopes": subj.get("scopes") or [],
                    **({"clearance": subj["clearance"]} if subj.get("clearance") else {})},
        "seeds": request.get("seeds"), "business_keys": request.get("business_keys") or [],
        "params": request.get("params") or {}})


def make_request(case: CaseFile, pb: Playbook, opts: InvestigateOptions, *, adhoc: bool = False):
    from .engine.builder import Request

    var = None
    if opts.variant:
        if opts.variant not in case.variants:
            raise UsageError(f"case {case.case_id} has no variant {opts.variant!r}"
                             + (f" (known: {', '.join(sorted(case.variants))})" if case.variants else ""))
        var = case.variants[opts.variant]
    subject: Subject = (var.subject if var and var.subject else case.subject)
    sid = opts.subject_id or subject.id
    scopes = opts.scopes if opts.scopes is not None else (
        list(subject.scopes) if opts.subject_id is None or opts.subject_id == subject.id else [])
    from .models.manifest import CLEARANCE_LEVELS, DEFAULT_CLEARANCE

    # The clearance goes with the subject: the case's (or variant's) subject keeps its own,
    # another subject named with --subject gets the default unless --clearance is given.
    if opts.clearance is not None:
        if opts.clearance not in CLEARANCE_LEVELS:
            raise UsageError(f"--clearance {opts.clearance!r} is not one of {', '.join(CLEARANCE_LEVELS)}")
        clearance = opts.clearance
    elif opts.subject_id is None or opts.subject_id == subject.id:
        clearance = subject.clearance.value
    else:
        clearance = DEFAULT_CLEARANCE
    purpose = opts.purpose or (var.purpose if var and var.purpose else case.purpose)
    if purpose not in pb.purposes:
        raise UsageError(f"purpose {purpose!r} is not served by playbook {pb.playbook_id} "
                         f"(serves: {', '.join(pb.purposes)})")
    as_of = opts.as_of or (var.as_of if var and var.as_of else case.as_of)
    known_at = opts.known_at or (var.known_at if var else None)
    budget = opts.budget or (var.budget if var and var.budget else pb.budget.total_tokens)
    max_rounds = opts.max_rounds or (var.max_rounds if var and var.max_rounds else pb.max_rounds)
    from .params import case_params

    params = case_params(case, var, pb, opts.params, opts.extra_params)
    from .models.request import STRATEGIES

    if opts.strategy not in STRATEGIES:
        raise UsageError(f"--strategy: unknown strategy {opts.strategy!r}")
    if opts.strategy == "hybrid":
        from .embed.model import require

        require("--strategy hybrid")
    refuse_out_of_limits(subject=sid, scopes=list(scopes), budget=budget, max_rounds=max_rounds)
    from .engine.builder import budget_for

    if budget_for(pb, budget)["evidence"] <= 0:
        raise UsageError(f"--budget {budget} leaves no room for evidence")
    inputs = var.inputs if var is not None and var.inputs is not None else case.inputs
    tool_results, working, records = opts.tool_results, opts.working_state, opts.memory_records
    if inputs is not None and tool_results is None and working is None and records is None:
        tool_results, working, records = read_inputs(inputs)
    return Request(case_id=case.case_id, tenant_id=case.tenant_id, question=case.question, purpose=purpose,
                   as_of=as_of, known_at=known_at, subject_id=sid, scopes=sorted(set(scopes)), budget=budget,
                   max_rounds=max_rounds, seeds=list(case.seeds), business_keys=list(case.business_keys),
                   variant=opts.variant, strategy=opts.strategy, params=params,  # type: ignore[arg-type]
                   clearance=clearance, goal_ref=case.goal_ref,
                   state_version=opts.state_version if opts.state_version is not None else case.state_version,
                   tools=_usable_tools(case, scopes, purpose), tool_results=list(tool_results or []),
                   working_state=working, memory_records=None if records is None else list(records), adhoc=adhoc,
                   deadline_seconds=opts.deadline_seconds if opts.deadline_seconds is not None
                   else var.deadline_seconds if var is not None and var.deadline_seconds is not None
                   else case.deadline_seconds)


def read_inputs(inputs) -> tuple[list[Any], Any, list[Any] | None]:
    """(tool results, working state, memory records) of a case's ``inputs`` (paths relative to
    the project root); a missing or bad file is an input error naming it."""
    from . import paths
    from .agents.memory import MAX_FILE_BYTES, parse_record, read_working_state
    from .agents.tool_results import read_tool_result
    from .util.yamlio import loads_yaml, read_text

    root = paths.root()
    tools = [read_tool_result(root / f) for f in inputs.tool_results]
    working = read_working_state(root / inputs.memory) if inputs.memory else None
    records = None
    if inputs.memory_records is not None:
        records = [parse_record(loads_yaml(read_text(root / f, display=f, limit=MAX_FILE_BYTES), file=f), file=f)
                   for f in inputs.memory_records]
    return tools, working, records


def _usable_tools(case: CaseFile, scopes: list[str], purpose: str) -> list[str]:
    """pack.tools: the case's tools the project's tool registry knows and this subject may use."""
    if not case.tools:
        return []
    from .agents.registry import read_registry, usable_tools

    return usable_tools(read_registry(), list(case.tools), list(scopes), purpose)
