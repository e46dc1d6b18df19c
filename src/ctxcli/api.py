"""The typed library API. The CLI is a thin layer over these functions; tests and other
programs call them directly. Nothing here prints or exits: errors are CtxError subclasses."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import paths
from .errors import InputError, StoreError, UsageError
from .models.case import CaseFile
from .paths import display
# the public names of the project's files and of the request policy (their home modules)
from .request_policy import (ADHOC_PREFIX, AdhocSpec, InvestigateOptions, adhoc_case, adhoc_case_id, case_from_request,
                     case_of, make_request, refuse_out_of_limits)
from .project import (NO_PROJECT_HINT, loaded_digests, playbook_hash, read_case, read_case_marked, read_checked,
                      read_playbook, require_current_manifests, stale_sources)
from .project import manifests_of


# ---------------------------------------------------------------------------------- load
def preview_source(source_id: str, *, manifests: Path | None = None, sources: Path | None = None,
                   limit: int = 5) -> dict:
    """The first objects (and entities, relations, tombstones) a source's manifest produces,
    without loading (load/preview.py)."""
    from .load.preview import preview

    mdir = Path(manifests) if manifests is not None else paths.manifests_dir()
    return preview(mdir, mdir.resolve().parent, source_id, limit=limit,
                   sources_dir=Path(sources) if sources else None)


def parsers() -> list[dict[str, Any]]:
    """Every installed parser (the ``ctx.parsers`` entry points, load/parsers/): its name, where
    it comes from (``bundled``, or the distribution of a plugin), that distribution's version
    and the entry point's ``module:attribute``. A name two distributions register has a row
    for each (a manifest naming it is refused)."""
    from .load.parsers import installed

    return [{"parser": name, "from": "bundled" if o.bundled else o.dist, "version": o.version,
             "entry_point": o.value, "clash": len(found) > 1}
            for name, found in sorted(installed().items()) for o in sorted(found, key=lambda o: o.dist)]


def load(*, manifests: Path | None = None, sources: Path | None = None, db: Path | None = None,
         progress=None, incremental: bool = True, vectors: bool = False, keep_generations: int | None = None):
    from .load.build import build_store
    from .store.db import writer_lock

    mdir = Path(manifests) if manifests is not None else paths.manifests_dir()
    root = mdir.resolve().parent
    from .load.parse import require_manifests

    require_manifests(mdir, root)   # before the store's folder and lock file are made
    if (mdir / "playbooks").is_dir():  # the checks of `ctx check` run first: a typo fails loudly
        from .check import check_paths

        probs = check_paths([mdir / "playbooks"], root=root, manifests_dir=mdir).problems
        if probs:
            raise probs[0].error()
    from .load.vectors import requested

    why = requested(mdir / "playbooks", root, vectors)
    if why:             # asked for vectors without the extra: one line, before anything is made
        from .embed.model import require

        require(why)
    kw = {"progress": progress} if progress else {}
    if vectors:
        kw["vectors"] = True
    db_path = paths.db_path(db)
    if isinstance(db_path, str):    # a PostgreSQL store: build as for DuckDB, publish a generation
        from .load.postgres import load_pg

        return load_pg(mdir, db_path, root=root, sources_dir=Path(sources) if sources else None,
                       incremental=incremental, **kw)
    if db_path.is_dir():
        raise UsageError(f"--db {db_path} is a folder, not a store file")
    from .paths import keep_setting
    from .store.generations import prune

    keep = keep_setting(keep_generations)
    with writer_lock(db_path):   # a second concurrent load exits 3 before touching anything
        try:
            res = build_store(mdir, db_path, root=root, sources_dir=Path(sources) if sources else None,
                              incremental=incremental, **kw)
        except OSError as e:    # reading inputs is checked in load/; what is left is writing the store
            from .errors import StoreUnusableError

            raise StoreUnusableError(f"cannot write the store {db_path}: {e.strerror or e} "
                                     f"(the previous store, if any, is unchanged)") from None
        store_key(db_path)      # the store secret, created beside a new store (kept across reloads)
        if res.generation is not None:
            res.pruned = prune(db_path, keep)["dropped"]
            from .ledger.erasure import record_load_tombstones

            record_load_tombstones(db_path)     # a tombstone is an erasure (ctx erase --apply)
    return res


def store_key(db: Path, *, create: bool = True) -> bytes | None:
    """The store secret of ``db`` ($CTX_SECRET or the key file beside it, created when
    missing unless ``create`` is false): every opaque reference and keyed digest uses it."""
    from .store.secret import store_key as _key

    return _key(db, create=create)


def _pg_address(db, what: str) -> str:
    addr = paths.db_path(db)
    if not isinstance(addr, str):
        raise UsageError(f"{what} works on a team store (a postgresql:// address); {addr} is a DuckDB file: "
                         f"`ctx load --db {addr}` creates and replaces it")
    return addr


def store_init(db: Path | str | None = None) -> dict[str, Any]:
    """Create (or check) the team store at a postgresql:// address (store/pg/admin.py)."""
    from .store.pg.admin import init_store

    return init_store(_pg_address(db, "ctx store init"))


def store_generations(db: Path | str | None = None) -> list[dict[str, Any]]:
    """The kept generations of the store, newest first (a team store's or a DuckDB file's)."""
    addr = paths.db_path(db)
    if isinstance(addr, str):
        from .store.pg.admin import generations

        return generations(addr)
    from .store import generations as gens

    if not addr.is_file():
        raise StoreError(f"no store at {addr}; run `ctx load` first")
    return gens.listing(addr)


def store_prune(db: Path | str | None = None, *, keep: int) -> dict[str, Any]:
    """Drop all but the newest ``keep`` generations (never the current one). On a DuckDB file,
    under the writer lock: while a load runs, exit 3."""
    addr = paths.db_path(db)
    if isinstance(addr, str):
        from .store.pg.admin import prune

        return prune(addr, keep)
    from .store import generations as gens
    from .store.db import writer_lock

    if not addr.is_file():
        raise StoreError(f"no store at {addr}; run `ctx load` first")
    with writer_lock(addr):
        return gens.prune(addr, keep)


def ensure_store(db: Path | None = None) -> tuple[Path, bool]:
    """The store path; when the project's own store (ctx.toml ``store`` or the default) does not
    exist yet, load the project's sources first. A store named with ``db`` (--db) or $CTX_DB is
    never created here: a mistyped path is an error, not a second, empty store with a new key
    (``ctx load`` builds one where either names). Returns (path, loaded_now)."""
    import os

    p = paths.db_path(db)
    if isinstance(p, str) or p.exists():     # a PostgreSQL store is never loaded implicitly
        return p, False
    if db is not None:
        raise StoreError(f"no store at {display(p)}: build it with `ctx load --db {display(p)}`, "
                         "or leave out --db to use the project's store")
    if os.environ.get("CTX_DB"):
        raise StoreError(f"no store at {display(p)} (named by $CTX_DB): build it with `ctx load`, "
                         "or unset CTX_DB to use the project's store")
    if not (paths.manifests_dir() / "sources").is_dir():
        raise StoreError(f"no store at {display(p)} and no manifests/sources to load from in {paths.root()}: "
                         + NO_PROJECT_HINT)
    load(db=p)
    return p, True


def sources(db: Path | None = None, as_of=None) -> list[dict[str, Any]]:
    """The source registry, each source with its snapshot age at ``as_of`` (default: now)
    against its refresh SLA (``freshness``: engine/freshness.py)."""
    from datetime import datetime as _dt, timezone as _tz

    from .engine.freshness import source_ages
    from .store import open_store
    from .util.timeutil import dt_to_us

    as_of = as_of or _dt.now(_tz.utc)
    con = open_store(paths.db_path(db))
    try:
        cols = ["source_id", "tenant_id", "source_type", "owner_team", "classification", "trust_level",
                "required_scopes", "allowed_purposes", "refresh_sla", "max_age_s", "enabled", "n_objects",
                "n_sections", "n_entities", "n_relations", "n_tombstones", "newest_observed_us", "digest"]
        with con.errors():
            rows = con.source_rows(cols)
            ages = {a["source_id"]: a for a in source_ages(con, None, dt_to_us(as_of), as_of.tzinfo)}
    finally:
        con.close()
    out = []
    from .util.timeutil import us_to_dt
    from datetime import timezone

    for r in rows:
        d = dict(zip(cols, r))
        d["required_scopes"] = list(d["required_scopes"] or [])
        d["allowed_purposes"] = list(d["allowed_purposes"] or [])
        nu = d.pop("newest_observed_us")
        d["newest_observed_at"] = us_to_dt(nu, timezone.utc).isoformat() if nu is not None else None
        a = ages[d["source_id"]]
        d["freshness"] = {"as_of": as_of.isoformat(), "snapshot_observed_at": a["snapshot_observed_at"],
                          "age_s": a["age_s"], "age": a["age"], "refresh_sla_s": a["refresh_sla_s"],
                          "stale": a["stale"]}
        out.append(d)
    return out


# ---------------------------------------------------------------------------------- check
def check(paths: list[Path] | None = None):
    """Static checks of manifests, playbooks and case files (:mod:`ctxcli.check`)."""
    from .check import check_paths

    rep = check_paths([Path(p) for p in paths or []], root=paths_root())
    if not paths:       # the whole project: is the store loaded from these manifests?
        probs, notes = store_problems()
        rep.problems += probs
        rep.notes += notes
    return rep


def store_problems(db: Path | str | None = None) -> tuple[list, list]:
    """``ctx check``'s view of the store: (problems, notes). A problem per source whose manifest
    changed since the store was loaded (its new scopes, purposes, clearance or masks do not apply
    until `ctx load`) or that the store holds but no manifest declares any more; a note per source
    whose manifest was added since (not loaded yet: nothing of it is in the store). Nothing when
    there is no store or it cannot be opened now (busy, damaged: `ctx load` says)."""
    from .check import Problem
    from .errors import CtxError
    from .store import open_store

    addr = paths.db_path(db)
    if not isinstance(addr, str) and not addr.exists():
        return [], []
    try:
        con = open_store(addr)
    except CtxError:
        return [], []
    try:
        with con.errors():
            stale = stale_sources(con)
            mdir = manifests_of(con.meta())
            held = set(loaded_digests(con.meta()))
    except CtxError:
        return [], []
    finally:
        con.close()
    files = {}
    from .load.parse import read_manifests

    for m, disp, _ in read_manifests(mdir, mdir.resolve().parent):
        files[m.source_id] = disp
    probs, notes = [], []
    for s in stale:
        if s in files and s not in held:
            notes.append(Problem(file=files[s], line=None, column=None,
                                 message=f"source {s} is not loaded yet ({addr}): `ctx load` loads it"))
        else:
            probs.append(Problem(file=files.get(s, f"source {s}"), line=None, column=None, message=(
                f"source {s} changed since the store was loaded ({addr}): run `ctx load` so that its scopes, "
                f"purposes, clearance and masks apply" if s in files else
                f"the store holds source {s}, which no manifest declares any more: run `ctx load`")))
    return probs, notes


def paths_root() -> Path:
    return paths.root()


# ---------------------------------------------------------------------------------- investigate
def store_info(con, key: bytes | None = None, *, tenant: str, clearance: str) -> dict[str, Any]:
    """The store section of a pack, as its tenant and subject may know the store (:func:`ctxcli.pipeline.store_info`)."""
    from .pipeline import store_info as section

    return section(con, key, tenant=tenant, clearance=clearance)


@dataclass
class InvestigateResult:
    pack: dict[str, Any]
    answer: dict[str, Any]
    trace: list[dict[str, Any]]
    case: CaseFile
    timings: dict[str, float] = field(default_factory=dict)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    store_loaded_now: bool = False
    ledger: dict[str, Any] | None = None    # the run's ledger record, once written (write_outputs)
    warnings: list[str] = field(default_factory=list)   # one line each: a live request that failed


def case_json(case: CaseFile) -> bytes:
    """case.json of an ad-hoc run folder: the synthesised case in the form of a case file (JSON
    is YAML: saved as ``examples/cases/<id>.yaml`` it runs as a case)."""
    from .util.canon import pretty_bytes

    d = case.model_dump(mode="json", exclude_defaults=True)
    d["as_of"] = case.as_of.isoformat()
    d["subject"] = {"id": case.subject.id, "scopes": list(case.subject.scopes),
                    "clearance": case.subject.clearance.value}
    return pretty_bytes(d)


def with_rerank(pb, pb_hash: str, on: bool):
    """The playbook with its reranker switched ``on`` or off (``ctx eval --rerank``), and its hash:
    off over a playbook without a ``rerank`` block changes nothing; on without one uses the
    default weights. The pack's playbook hash is the changed playbook's."""
    from .models.playbook import Rerank

    if pb.rerank is None and not on:
        return pb, pb_hash
    if pb.rerank is not None and pb.rerank.enabled == on:
        return pb, pb_hash
    spec = (pb.rerank or Rerank()).model_copy(update={"enabled": on})
    pb = pb.model_copy(update={"rerank": spec})
    return pb, playbook_hash(pb)


def investigate(opts: InvestigateOptions) -> InvestigateResult:
    from .pipeline import investigate as run_pipeline
    from .store import open_store
    from .tokens import warm_up

    warm_up()
    case, pb, pb_hash = case_of(opts)
    if opts.rerank is not None:
        pb, pb_hash = with_rerank(pb, pb_hash, opts.rerank)
    req = make_request(case, pb, opts, adhoc=opts.adhoc is not None)
    db, loaded = ensure_store(opts.db)
    key = store_key(db)
    con = open_store(db)
    try:
        with con.errors():
            req, warnings = with_live(require_current_manifests(con), req, opts)
            res = run_pipeline(con, pb, pb_hash, req, store_info(con, key, tenant=req.tenant_id,
                                                                 clearance=req.clearance), key=key,
                               clock=opts.clock)
    finally:
        con.close()
    return InvestigateResult(pack=res.pack, answer=res.answer, trace=res.trace, case=case, timings=res.timings,
                             candidates=res.candidates, store_loaded_now=loaded, warnings=warnings)


def refetch_live(pack: dict[str, Any]) -> list[dict[str, Any]]:
    """``ctx replay --live``: each response the pack recorded from a live API source, asked for
    again with the project's manifests as they are now (ctxcli.live.refetch)."""
    from .live import allowed_hosts, api_sources, refetch

    mdir = paths.manifests_dir()
    srcs = api_sources(mdir) if (mdir / "sources").is_dir() else []
    return refetch(pack, srcs, allowed=allowed_hosts())


def with_live(manifests: list, req, opts: InvestigateOptions):
    """The request with the live channel's results before the caller's tool results, and its
    request records (ctxcli.live); one warning line per failed request. ``manifests``: the
    store's manifests as :func:`require_current_manifests` read them. Unchanged (no warning)
    when they hold no API source the subject may use."""
    import dataclasses
    from datetime import datetime, timezone

    from .live import allowed_hosts, fetch_live

    srcs = [(m, disp) for m, disp, _ in manifests if m.parser == "api"]
    if not srcs:
        return req, []
    cutoff = min(req.as_of, req.known_at) if req.known_at else req.as_of
    live = fetch_live(srcs, tenant=req.tenant_id, scopes=list(req.scopes), purpose=req.purpose,
                      clearance=req.clearance, case_id=req.case_id, params=dict(req.params), cutoff=cutoff,
                      now=opts.now or datetime.now(timezone.utc), allowed=allowed_hosts())
    if not live.requests:
        return req, []
    return dataclasses.replace(req, tool_results=live.results + list(req.tool_results),
                               live_requests=live.requests), live.warnings()


def build_step(opts: InvestigateOptions, *, goal_types: list[str], held: list[str], step_budget: int | None,
               case_read: tuple | None = None):
    """One step of an agent (the MCP ``build_context`` tool): the evidence of ``goal_types``
    not already ``held`` (evidence ids), through the same stages and gates as
    :func:`investigate`, within ``step_budget`` evidence tokens (None: the playbook's evidence
    allocation). Returns an ``engine.builder.Step`` (new items, omissions, covered and missing
    types, trace, the step budget). ``case_read``: the case as :func:`read_case_marked` read
    it earlier in this call (``opts.case``), so the case and the playbook are read once per step."""
    from .engine.builder import build_step as engine_step
    from .store import open_store
    from .tokens import warm_up

    warm_up()
    if case_read is not None and opts.adhoc is None:
        case, pb, _ = read_checked(opts.case, opts.cases_dir, opts.playbooks_dir, by_id=opts.case_by_id,
                                   read=case_read)
    else:
        case, pb, _ = case_of(opts)
    if step_budget is None:
        from .engine.builder import budget_for

        step_budget = budget_for(pb, pb.budget.total_tokens)["evidence"]
    req = make_request(case, pb, opts, adhoc=opts.adhoc is not None)
    known = [et.type for et in pb.evidence_types]
    bad = [t for t in goal_types if t not in known]
    if bad:
        raise UsageError(f"evidence type {bad[0]!r} is not in playbook {pb.playbook_id} (known: {', '.join(known)})")
    if step_budget <= 0:
        raise UsageError(f"step budget {step_budget} leaves no room for evidence")
    db, _ = ensure_store(opts.db)
    key = store_key(db)
    con = open_store(db)
    try:
        from .pipeline import with_params

        pb, req = with_params(pb, req)
        with con.errors():
            req, _ = with_live(require_current_manifests(con), req, opts)
            step = engine_step(con, pb, req, goal_types=list(goal_types), held=list(held),
                               step_budget=step_budget, key=key)
            # the step's tool results and memory through the same gates as a pack's (pipeline.py)
            from .pipeline import gate_memory, gate_tools

            step.tools = gate_tools(pb, req, key, con=con)
            step.memory = gate_memory(pb, req, key, step.tools)
            if step.memory is not None:     # a recalled record the step's evidence contradicts: conflicts only
                from .tokens import count

                step.memory = step.memory.against(step.evidence, count)
            step.request = req.to_json()
            return step
    finally:
        con.close()


def step_document(step, *, goal_types: list[str], held: list[str]) -> dict[str, Any]:
    """The step pack of a ``build_step`` result: its request, goal, what was admitted and
    omitted (evidence, tool results, memory), keyed by ``step_id`` = sha256 of the rest, so the
    same inputs give the same bytes."""
    from .util.canon import canonical_bytes, sha256_hex

    doc: dict[str, Any] = {
        "schema_version": "ctx.step/1", "request": step.request, "goal_types": list(goal_types),
        "held": sorted(set(held)), "step_budget": step.step_budget, "tokens": step.tokens,
        "evidence": step.evidence, "omissions": step.omissions, "covered_types": step.covered,
        "missing_types": step.missing, "gaps": step.gaps}
    if step.tools is not None:
        doc["tool_results"] = step.tools.items
        doc["tool_omissions"] = step.tools.omissions
    if step.memory is not None:
        doc["working_memory"] = step.memory.working
        doc["episodic_memory"] = step.memory.records
        doc["memory_omissions"] = step.memory.omissions
        if step.memory.conflicts:
            doc["memory_conflicts"] = step.memory.conflicts
    doc["step_id"] = "st-" + sha256_hex(canonical_bytes(doc))[:32]
    return doc


def write_step(step, doc: dict[str, Any], out: Path, *, db: Path | str | None = None,
               command: str = "build_context") -> dict[str, Any]:
    """Write a step's run folder (step.json, trace.jsonl) and its ledger record, all or none."""
    from .ledger.idempotency import record
    from .util.canon import pretty_bytes
    from .write import trace_bytes, write_run_folder

    files = {"step.json": pretty_bytes(doc), "trace.jsonl": trace_bytes(step.trace)}
    return record(command, {"pack_id": doc["step_id"], "request": doc["request"]}, None, out=out, files=files,
                  db=db, write=lambda: write_run_folder(out, files))


def gate_tool_results(opts: InvestigateOptions):
    """The request's tool results (``opts.tool_results``) through the tool-result gates, as
    :func:`investigate` would pack them (``agents.tool_results.ToolGate``); None without any."""
    from .pipeline import gate_tools, with_params

    case, pb, _ = case_of(opts)
    req = make_request(case, pb, opts, adhoc=opts.adhoc is not None)
    from .store import open_store

    db, _ = ensure_store(opts.db)
    pb, req = with_params(pb, req)
    con = open_store(db)
    try:
        with con.errors():
            return gate_tools(pb, req, store_key(db), con=con)
    finally:
        con.close()


def shape_tool_result(raw: Path, *, tool: str, tenant_id: str, observed_at: str, registry: Path | None = None,
                      out_dir: Path | None = None, version: str | None = None, call_id: str | None = None,
                      arguments: dict[str, Any] | None = None, max_age: str | None = None,
                      scopes: list[str] | None = None, purposes: list[str] | None = None) -> dict[str, Any]:
    """``ctx tool-result shape``: a tool-result document whose facts ctx computed from ``raw`` as
    the tool registry (``registry``, default the project's ``manifests/tools.yaml``) declares for
    ``tool``; ``raw.path`` is relative to ``out_dir`` (where the document goes)."""
    from .agents.registry import read_registry
    from .agents.tool_results import shape_tool_result as shape

    return shape(raw, tool=tool, registry=read_registry(registry), tenant_id=tenant_id, observed_at=observed_at,
                 version=version, out_dir=out_dir, call_id=call_id, arguments=arguments, max_age=max_age,
                 scopes=scopes, purposes=purposes)


def audit_call(path: Path, *, case: str | None = None, variant: str | None = None, tenant: str | None = None,
               subject_id: str | None = None, scopes: list[str] | None = None, clearance: str | None = None,
               purpose: str | None = None, as_of=None, known_at=None, db: Path | None = None) -> dict[str, Any]:
    """``ctx audit-call``: a recorded agent request (OpenAI-style chat or OTLP/JSON GenAI trace)
    checked span by span against the store for one subject (a case's, or the one given)."""
    from .models.manifest import CLEARANCE_LEVELS, DEFAULT_CLEARANCE
    from .util import jsonstrict
    from .util.safeio import NotReadable, read_regular

    disp = display(path)
    if case is not None:
        extra = [f for f, v in (("--tenant", tenant), ("--purpose", purpose)) if v is not None]
        if extra:
            raise UsageError(f"{extra[0]} cannot be combined with --case: the case names its own")
        who = audit_subject(InvestigateOptions(case=case, variant=variant, subject_id=subject_id, scopes=scopes,
                                               clearance=clearance, as_of=as_of, known_at=known_at, db=db))
    else:
        from .agents.audit import AuditSubject

        for flag, v in (("--tenant", tenant), ("--subject", subject_id), ("--purpose", purpose), ("--as-of", as_of)):
            if v is None:
                raise UsageError(f"give --case, or {flag} (with --tenant, --subject, --scope, --purpose, --as-of)")
        if clearance is not None and clearance not in CLEARANCE_LEVELS:
            raise UsageError(f"--clearance {clearance!r} is not one of {', '.join(CLEARANCE_LEVELS)}")
        who = AuditSubject(tenant, subject_id, sorted(set(scopes or [])), clearance or DEFAULT_CLEARANCE, purpose,
                           as_of, known_at)
    try:
        raw = read_regular(path, 50_000_000)
    except NotReadable as e:
        raise InputError(str(e), file=disp) from None
    try:
        data = jsonstrict.loads(raw)
    except ValueError as e:
        raise InputError(f"not JSON: {e}", file=disp) from None
    return audit_request(data, who, name=disp, db=db)


def audit_subject(opts: InvestigateOptions):
    """The subject, scopes, clearance, purpose and times a case (with ``opts``) audits for."""
    from .agents.audit import AuditSubject

    c, pb, _ = case_of(opts)
    req = make_request(c, pb, opts)
    return AuditSubject(req.tenant_id, req.subject_id, list(req.scopes), req.clearance, req.purpose, req.as_of,
                        req.known_at)


def audit_request(data: Any, who, *, name: str, db: Path | str | None = None) -> dict[str, Any]:
    """The audit document of a parsed request ``data`` (named ``name`` in messages) for ``who``:
    ``ctx audit-call`` and the MCP ``audit_call`` tool."""
    from .agents.audit import AUDIT_SCHEMA, audit, counts, read_spans
    from .store import open_store

    try:
        fmt, spans = read_spans(data)
    except ValueError as e:
        raise InputError(str(e), file=name) from None
    dbp, _ = ensure_store(db)
    key = store_key(dbp)
    con = open_store(dbp)
    try:
        with con.errors():
            require_current_manifests(con)
            rows = audit(con, spans, who, key=key)
    finally:
        con.close()
    return {"schema_version": AUDIT_SCHEMA, "file": name, "format": fmt, "subject": who.to_json(),
            "counts": counts(rows), "spans": rows}


def handoff(pack_path: Path | str, *, db: Path | str | None = None) -> dict[str, Any]:
    """``ctx handoff``: the handoff document of a verified run (its pack and answer.json),
    sealed with the store secret (HMAC-SHA256)."""
    from .agents.handoff import make
    from .errors import PackError
    from .postmortem.packfile import load_pack

    lp = load_pack(pack_path)
    raw = lp.run_file("answer.json") if lp.run is not None else None
    if raw is None:
        raise PackError("a handoff needs the run's answer.json (a run folder ctx wrote)", file=lp.display)
    import orjson

    dbp, _ = ensure_store(db)
    return make(lp.data, orjson.loads(raw), key=store_key(dbp))


MAX_HANDOFF_BYTES = 5_000_000


def read_handoff(path: Path) -> Any:
    """A handoff file as parsed JSON (a regular file of at most 5 MB); InputError naming it."""
    from .util import jsonstrict
    from .util.safeio import NotReadable, read_regular

    disp = display(path)
    try:
        raw = read_regular(path, MAX_HANDOFF_BYTES)
    except NotReadable as e:
        raise InputError(str(e), file=disp) from None
    try:
        return jsonstrict.loads(raw)
    except ValueError as e:
        raise InputError(f"not JSON: {e}", file=disp) from None


def receive_handoff(opts: InvestigateOptions, doc: Any) -> dict[str, Any]:
    """What of handoff ``doc`` the subject of ``opts`` (its case's, or the one given) may be
    handed, re-gated at its as_of; UsageError for a document that is not an intact handoff
    sealed with this store's secret (refused whole)."""
    from .agents.audit import AuditSubject, Judge
    from .agents.handoff import receive, verify
    from .answer.schema import actions
    from .store import open_store

    db, _ = ensure_store(opts.db)
    key = store_key(db)
    bad = verify(doc, key)
    if bad is not None:
        raise UsageError(f"handoff: {bad}")
    case, pb, _ = case_of(opts)
    req = make_request(case, pb, opts, adhoc=opts.adhoc is not None)
    who = AuditSubject(req.tenant_id, req.subject_id, list(req.scopes), req.clearance, req.purpose, req.as_of,
                       req.known_at)
    con = open_store(db)
    try:
        with con.errors():
            require_current_manifests(con)
            return receive(Judge(con, who, key=key), doc, actions=actions(pb))
    finally:
        con.close()


def output_files(res: InvestigateResult, *, sign: bool = False) -> dict[str, bytes]:
    """The files of a run folder: pack.json, trace.jsonl, answer.json, answer.md and run.json
    (their hashes; signed with ``$CTX_SIGNING_KEY`` when ``sign``)."""
    from .answer.markdown import answer_markdown
    from .run_manifest import RUN_FILE, run_manifest, signing_key
    from .util.canon import pretty_bytes
    from .write import trace_bytes

    key = signing_key(required=True) if sign else None
    files = {"pack.json": pretty_bytes(res.pack), "trace.jsonl": trace_bytes(res.trace),
             "answer.json": pretty_bytes(res.answer),
             "answer.md": answer_markdown(res.answer, res.pack).encode("utf-8")}
    if res.pack["request"].get("adhoc"):     # the synthesised case of an ad-hoc run
        files["case.json"] = case_json(res.case)
    files[RUN_FILE] = run_manifest(files, res.pack, key)
    if res.timings:     # wall clock: not in run.json, ignored by replay and diff
        files["timings.json"] = timings_bytes(res)
    return files


TIMINGS_SCHEMA = "ctx.timings/1"


def timings_bytes(res: InvestigateResult) -> bytes:
    """timings.json: wall-clock seconds per stage, channel and query (``query.<query_id>`` is the
    latency of that ``retrieval_executed`` event). The only run file that differs between two
    runs of the same inputs; run.json does not list it, and replay and diff ignore it."""
    from .engine.trace import request_hash, run_id_for
    from .util.canon import pretty_bytes

    return pretty_bytes({"schema_version": TIMINGS_SCHEMA, "pack_id": res.pack["pack_id"],
                         "run": run_id_for(request_hash(res.pack["request"])),
                         "seconds": {k: round(v, 6) for k, v in sorted(res.timings.items())}})


def default_out_dir(res: InvestigateResult) -> Path:
    name = res.pack["request"]["case_id"]
    if res.pack["request"]["variant"]:
        name += "-" + res.pack["request"]["variant"]
    return paths.runs_dir() / f"{name}-{res.pack['pack_id'][3:11]}"


def write_outputs(res: InvestigateResult, out: Path | None = None, *, sign: bool = False,
                  command: str = "investigate", db: Path | str | None = None, idempotency_key: str | None = None,
                  replace: bool = True, extra: dict[str, Any] | None = None, no_text: bool = False) -> Path:
    """Write the run folder, its ledger record and outbox event, all or none (ledger/commit.py);
    ``replace`` false refuses a run folder holding another request (ledger/idempotency.py)."""
    from .ledger.idempotency import record
    from .write import write_run_folder

    out_dir = Path(out) if out is not None else default_out_dir(res)
    files = output_files(res, sign=sign)
    if no_text:     # ids, hashes and decisions only (ledger/erasure.py)
        from .ledger.erasure import without_text

        files = without_text(files)
    res.ledger = record(command, res.pack, res.answer, out=out_dir, files=files, db=db, key=idempotency_key,
                        replace=replace, extra=extra, write=lambda: write_run_folder(out_dir, files))
    from .run_list import note_run_folder

    note_run_folder(out_dir)         # --out inside the project: ctx runs and latest find it
    return out_dir


def inputs_digest(opts: InvestigateOptions) -> str | None:
    """sha256 of an agent's inputs to the run (tool results, working state, recalled memory
    records) as given, or None without any. The request hash leaves them out (a replay rebuilds
    the request from the pack), so the idempotency key is checked against both."""
    import orjson

    from .util.canon import sha256_hex

    parts = {"tool_results": [t.model_dump(mode="json") for t in opts.tool_results or []],
             "working_state": opts.working_state.model_dump(mode="json") if opts.working_state is not None else None,
             "memory_records": [r.model_dump(mode="json") for r in opts.memory_records]
             if opts.memory_records is not None else None}
    if not parts["tool_results"] and parts["working_state"] is None and parts["memory_records"] is None:
        return None
    return sha256_hex(orjson.dumps(parts, option=orjson.OPT_SORT_KEYS).decode())


def request_for(opts: InvestigateOptions) -> dict[str, Any]:
    """The request (as the pack records it, so its hash and run id) an investigation with
    ``opts`` will make, without reading the store: what idempotency keys and run folders are
    checked against."""
    from .pipeline import with_params

    case, pb, _ = case_of(opts)
    req = make_request(case, pb, opts, adhoc=opts.adhoc is not None)
    return with_params(pb, req)[1].to_json()


# ---------------------------------------------------------------------------------- render
@dataclass
class RenderResult:
    """A pack's model-visible context, rendered again and counted section by section."""

    format: str                          # markdown | messages
    data: bytes                          # the rendering
    sections: list[dict[str, Any]]       # section, slot, trust, tokens, recorded_tokens
    total_tokens: int
    drift: list[str]                     # differences from the pack's recorded counts

    @property
    def matches_pack(self) -> bool:
        return not self.drift



def ask_request(opts) -> dict[str, Any]:
    """The request a ``ctx ask`` (``answer.ask.AskOptions``) will record: the pack's (verified),
    or the case's as it would be built."""
    from .answer.ask import is_pack_path

    if is_pack_path(opts.target):
        from .postmortem.packfile import load_pack

        p = Path(opts.target)
        return load_pack(p / "pack.json" if p.is_dir() else p).request
    return request_for(InvestigateOptions(case=opts.target, as_of=opts.as_of, variant=opts.variant, db=opts.db))

def pack_messages(pack: dict[str, Any]) -> Any:
    """The model messages of a pack just built and not written (``ctx serve --no-runs``)."""
    from .engine.render import render_messages

    return render_messages(pack)


def render_pack(pack_path: Path | str, fmt: str = "markdown", encoding: str | None = None) -> RenderResult:
    """Verify a pack (the one pack reader: file checks, hashes, run folder, signature), render
    its model-visible context and count every section against the counts it records."""
    from .engine.render import render_markdown, render_messages, section_info, section_texts
    from .errors import PackError
    from .postmortem.packfile import load_pack
    from .tokens import count, encoding as get_encoding
    from .util.canon import pretty_bytes

    if fmt not in ("markdown", "messages"):
        raise UsageError(f"--format: unknown format {fmt!r} (known: markdown, messages)")
    lp = load_pack(pack_path)
    p = lp.data
    enc = encoding or p.get("encoding") or "cl100k_base"
    get_encoding(enc)                     # unknown encoding: one-line UsageError, exit 2
    if p.get("encoding") and enc != p["encoding"]:
        raise UsageError(f"--encoding: the pack was counted with {p['encoding']}; counts in {enc} cannot be "
                         f"checked against it")
    try:
        secs = section_texts(p)
        recorded = p["slots"]["sections"]
        recorded_total = p["slots"]["total_tokens"]
        messages = render_messages(p)
        data = render_markdown(p).encode("utf-8") if fmt == "markdown" else pretty_bytes(messages)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
        raise PackError(f"not a complete ctx pack ({type(e).__name__}: {e})", file=lp.display) from None
    sections = []
    drift: list[str] = []
    rec_by_pos = list(recorded) if isinstance(recorded, list) else []
    for i, (name, slot, trust, text) in enumerate(secs):
        n = count(text, enc)
        rec = rec_by_pos[i] if i < len(rec_by_pos) and isinstance(rec_by_pos[i], dict) else {}
        rn = rec.get("tokens")
        if rec.get("section") != name:
            drift.append(f"section {i + 1} is {name}, the pack records {rec.get('section')!r}")
        elif rn != n:
            drift.append(f"section {name} has {n} tokens, the pack records {rn}")
        sections.append({"section": name, "slot": slot, "trust": trust, **section_info(p, name), "tokens": n,
                         "recorded_tokens": rn})
    if len(rec_by_pos) != len(secs):
        drift.append(f"the pack records {len(rec_by_pos)} sections, the renderer has {len(secs)}")
    if fmt == "markdown":
        total = count(data.decode("utf-8"), enc)
    else:
        total = sum(count(m["content"], enc) for m in messages)
    if total != recorded_total:
        drift.append(f"the rendering has {total} tokens, the pack records {recorded_total}")
    if sum(s["tokens"] for s in sections) != total:
        drift.append(f"the sections sum to {sum(s['tokens'] for s in sections)} tokens but the whole "
                     f"rendering has {total}")
    if p.get("erasure"):    # content erased after the pack was built (ctx erase): fewer tokens than recorded
        drift = []
    return RenderResult(format=fmt, data=data, sections=sections, total_tokens=total, drift=drift)


# ---------------------------------------------------------------------------------- model (ctx ask)
def ask(target: str, **kw: Any):
    """Build (or read) a pack, ask an OpenAI-compatible model over it, validate the answer and
    write model.json and model_answer.json beside the deterministic answer. Keywords are those
    of :class:`ctxcli.answer.ask.AskOptions` (model, endpoint, as_of, variant, out, db, timeout,
    accept_disagreement)."""
    from .answer.ask import AskOptions, run_ask

    def build(opts: InvestigateOptions) -> tuple[InvestigateResult, dict[str, bytes], Path]:
        res = investigate(opts)
        return res, output_files(res), default_out_dir(res)

    return run_ask(AskOptions(target=target, **kw), build=build)


def validate_answer(pack: Path, answer: Path, db: Path | None = None, *,
                    accept_disagreement: bool = False) -> dict[str, Any]:
    """Validate a model answer produced elsewhere against a pack; returns the model_answer record.
    A verdict or action other than the deterministic one rejects it unless ``accept_disagreement``."""
    from .answer.ask import validate_answer_file

    return validate_answer_file(pack, answer, db, accept_disagreement=accept_disagreement)


def model_config(*, endpoint: str | None = None, model: str | None = None, timeout: float | None = None):
    """The model endpoint configuration from flags, environment and ctx.toml (never printed: it holds the key)."""
    from .answer.model import resolve_config

    return resolve_config(endpoint=endpoint, model=model, timeout=timeout)


def replay_model(lp, db: Path | None = None, *, re_ask: bool = False, endpoint: str | None = None,
                 model: str | None = None) -> dict[str, Any] | None:
    """Re-validate the recorded model exchange beside a loaded pack; optionally re-ask and diff."""
    from .answer.ask import replay_model as _replay_model

    return _replay_model(lp, db, re_ask=re_ask, endpoint=endpoint, model=model)


def remember(*, tenant_id: str, subject_id: str, text: str, ttl: str, reviewed_by: str | None, at=None,
             scopes: list[str] | None = None, purposes: list[str] | None = None, source: str | None = None,
             folder: Path | None = None) -> dict[str, Any]:
    """``ctx remember``: write one durable memory record (refused without ``reviewed_by``; it
    always expires after ``ttl``) to ``folder`` (default ``<runs>/memory/``). ``at``: when it is
    written (default now)."""
    from datetime import datetime, timezone

    from .agents.memory import new_record, write_record
    from .errors import UsageError
    from .util.timeutil import parse_duration

    try:
        life = parse_duration(ttl, what="--ttl")
    except ValueError as e:
        raise UsageError(str(e)) from None
    if life.total_seconds() <= 0:
        raise UsageError("--ttl must be longer than 0 seconds: a memory record always expires")
    rec = new_record(tenant_id=tenant_id, subject_id=subject_id, text=text, ttl=life, reviewed_by=reviewed_by,
                     created_at=at or datetime.now(timezone.utc), scopes=scopes, purposes=purposes, source=source)
    path = write_record(memory_folder(folder), rec)
    return {"memory_id": rec.memory_id, "expires_at": rec.expires_at.isoformat(), "path": str(path)}


def forget(memory_id: str, *, folder: Path | None = None) -> bool:
    """``ctx forget``: delete one durable memory record; False when there is none of that id."""
    from .agents.memory import delete_record

    return delete_record(memory_folder(folder), memory_id)


def recall(*, folder: Path | None = None) -> list[Any]:
    """Every durable memory record (``--recall``): each is gated on use, for the run's subject."""
    from .agents.memory import read_records

    return read_records(memory_folder(folder))


def memory_folder(folder: Path | None = None) -> Path:
    """The memory records' folder: the one given (--memories), else ``<runs>/memory``."""
    from . import paths
    from .agents.memory import store_dir

    return Path(folder) if folder is not None else store_dir(paths.runs_dir())
