"""The typed library API. The CLI is a thin layer over these functions; tests and other
programs call them directly. Nothing here prints or exits: errors are CtxError subclasses."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from . import paths
from .errors import InputError, StoreError, UnknownCaseError, UsageError
from .models.case import CaseFile, Subject
from .models.playbook import Playbook
from .util.canon import obj_hash
from .util.pyd import input_error
from .util.yamlio import read_yaml_marked

_ID_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:@-")


# ---------------------------------------------------------------------------------- load
def preview_source(source_id: str, *, manifests: Path | None = None, sources: Path | None = None,
                   limit: int = 5) -> dict:
    """The first objects (and entities, relations, tombstones) a source's manifest produces,
    without loading (load/preview.py)."""
    from .load.preview import preview

    mdir = Path(manifests) if manifests is not None else paths.manifests_dir()
    return preview(mdir, mdir.resolve().parent, source_id, limit=limit,
                   sources_dir=Path(sources) if sources else None)


def load(*, manifests: Path | None = None, sources: Path | None = None, db: Path | None = None,
         progress=None, incremental: bool = True, keep_generations: int | None = None):
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
    kw = {"progress": progress} if progress else {}
    db_path = paths.db_path(db)
    if isinstance(db_path, str):    # a PostgreSQL store: build as for DuckDB, publish a generation
        from .store.pg_load import load_pg

        return load_pg(mdir, db_path, root=root, sources_dir=Path(sources) if sources else None,
                       incremental=incremental, **kw)
    if db_path.is_dir():
        raise UsageError(f"--db {db_path} is a folder, not a store file")
    from .store.generations import keep_setting, prune

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


def stale_sources(con) -> list[str]:
    """The sources whose manifest now differs from the one the store was loaded from — or that
    only one of them has — in the manifests folder the store was loaded from (recorded in its
    meta), else the project's. Empty when they agree, when that folder has no manifests any
    more, or when the store predates manifest digests."""
    import orjson

    from .load.parse import manifest_digest, read_manifests

    meta = con.meta()
    recorded = meta.get("manifest_digests")
    mdir = _manifests_of(meta)
    if recorded is None or not (mdir / "sources").is_dir():
        return []
    try:
        loaded = orjson.loads(recorded)
    except orjson.JSONDecodeError:
        loaded = {}
    now = {m.source_id: manifest_digest(m) for m, _, _ in read_manifests(mdir, mdir.resolve().parent)}
    return sorted(s for s in set(loaded) | set(now) if loaded.get(s) != now.get(s))


def _manifests_of(meta: dict[str, str]) -> Path:
    """The manifests folder a store was loaded from, when it still exists; else the project's."""
    loaded_from = meta.get("manifests_dir")
    if loaded_from and (Path(loaded_from) / "sources").is_dir():
        return Path(loaded_from)
    return paths.manifests_dir()


def require_current_manifests(con) -> None:
    """Refuse (exit 3, naming the sources) to run with permissions older than the manifests: a
    tightened ``required_scopes`` or a new mask takes effect only with ``ctx load``, so until
    then nothing is served from the store."""
    from .errors import StoreStaleError

    stale = stale_sources(con)
    if stale:
        shown = ", ".join(stale[:8]) + (f" and {len(stale) - 8} more" if len(stale) > 8 else "")
        raise StoreStaleError(f"the store was loaded before the manifests of {shown} changed: run `ctx load` so "
                              f"that their scopes, purposes, clearance and masks apply")


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
    """Create (or check) the team store at a postgresql:// address (store/pg_store.py)."""
    from .store.pg_store import init_store

    return init_store(_pg_address(db, "ctx store init"))


def store_generations(db: Path | str | None = None) -> list[dict[str, Any]]:
    """The kept generations of the store, newest first (a team store's or a DuckDB file's)."""
    addr = paths.db_path(db)
    if isinstance(addr, str):
        from .store.pg_store import generations

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
        from .store.pg_store import prune

        return prune(addr, keep)
    from .store import generations as gens
    from .store.db import writer_lock

    if not addr.is_file():
        raise StoreError(f"no store at {addr}; run `ctx load` first")
    with writer_lock(addr):
        return gens.prune(addr, keep)


def ensure_store(db: Path | None = None) -> tuple[Path, bool]:
    """The store path; when the project's own store (ctx.toml ``store``, $CTX_DB or the default)
    does not exist yet, load the project's sources first. A store named with ``db`` (--db) is
    never created here: a mistyped path is an error, not a new empty store with a new key.
    Returns (path, loaded_now)."""
    p = paths.db_path(db)
    if isinstance(p, str) or p.exists():     # a PostgreSQL store is never loaded implicitly
        return p, False
    if db is not None:
        raise StoreError(f"no store at {_display(p)}: build it with `ctx load --db {_display(p)}`, "
                         "or leave out --db to use the project's store")
    if not (paths.manifests_dir() / "sources").is_dir():
        raise StoreError(f"no store at {_display(p)} and no manifests/sources to load from in {paths.root()}: "
                         + NO_PROJECT_HINT)
    load(db=p)
    return p, True


NO_PROJECT_HINT = ("run `ctx init` for a new project (or `ctx init --example claims` for the bundled example), "
                   "then `ctx load`")


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
        rep.problems += store_problems()
    return rep


def store_problems(db: Path | str | None = None) -> list:
    """``ctx check``'s view of the store: one problem per source whose manifest changed since the
    store was loaded (its new scopes, purposes, clearance or masks do not apply until `ctx load`).
    Nothing when there is no store or it cannot be opened now (busy, damaged: `ctx load` says)."""
    from .check import Problem
    from .errors import CtxError
    from .store import open_store

    addr = paths.db_path(db)
    if not isinstance(addr, str) and not addr.exists():
        return []
    try:
        con = open_store(addr)
    except CtxError:
        return []
    try:
        with con.errors():
            stale = stale_sources(con)
            mdir = _manifests_of(con.meta())
    except CtxError:
        return []
    finally:
        con.close()
    files = {}
    from .load.parse import read_manifests

    for m, disp, _ in read_manifests(mdir, mdir.resolve().parent):
        files[m.source_id] = disp
    return [Problem(file=files.get(s, f"source {s}"), line=None, column=None,
                    message=(f"source {s} changed since the store was loaded ({addr}): run `ctx load` so that its "
                             f"scopes, purposes, clearance and masks apply" if s in files else
                             f"the store holds source {s}, which no manifest declares any more: run `ctx load`"))
            for s in stale]


def paths_root() -> Path:
    return paths.root()


# ---------------------------------------------------------------------------------- cases
def _safe_id(value: str, what: str) -> str:
    if not value or not set(value) <= _ID_OK or value.startswith("."):
        raise UsageError(f"{what} {value!r} is not a valid id")
    return value


def _display(path: Path) -> str:
    """A path as shown in messages: relative to the project root when inside it."""
    try:
        return Path(path).resolve().relative_to(paths.root().resolve()).as_posix()
    except ValueError:
        return str(path)


def read_case(case_id: str, cases_dir: Path | None = None, *, by_id: bool = False) -> tuple[CaseFile, str]:
    """The case file for ``case_id`` (or a path to a case file; with ``by_id``, only an id
    resolved under the project's cases folder)."""
    case, disp, _ = _read_case(case_id, cases_dir, by_id=by_id)
    return case, disp


def _read_case(case_id: str, cases_dir: Path | None = None, *, by_id: bool = False):
    """With ``by_id`` (``ctx serve``: the caller is not the operator) a path is never taken,
    whether or not it exists, and a case file that is a symlink leading out of the cases
    folder is refused without naming its target."""
    cdir = Path(cases_dir) if cases_dir else paths.cases_dir()
    p = Path(case_id)
    if not by_id and p.suffix in (".yaml", ".yml") and os.path.lexists(p):
        path = p     # a FIFO or folder is reported by read_yaml ("not a regular file")
    else:
        _safe_id(case_id, "case")
        path = cdir / f"{case_id}.yaml"
        if not os.path.lexists(path):
            known = sorted(x.stem for x in cdir.glob("*.yaml")) if cdir.is_dir() else []
            hint = (f" (known: {', '.join(known[:12])})" if known else
                    "" if paths.is_project() else f"; {paths.root()} is not a ctx project: {NO_PROJECT_HINT}")
            raise UnknownCaseError(f"unknown case {case_id!r}: no {_display(path)}{hint}")
        if by_id and Path(os.path.realpath(cdir)) not in Path(os.path.realpath(path)).parents:
            raise InputError("case file is a symlink that leads outside the cases folder",
                             file=f"{_display(cdir)}/{case_id}.yaml")     # the link, never its target
    disp = _display(path)
    marks = read_yaml_marked(path, display=disp)
    data = marks.data
    if not isinstance(data, dict):
        raise InputError("a case file must be a YAML mapping", file=disp)
    try:
        return CaseFile.model_validate(data), disp, marks
    except ValidationError as e:
        raise input_error(e, file=disp, marks=marks) from None


def read_checked(case_id: str, cases_dir: Path | None = None, playbooks_dir: Path | None = None, *,
                 by_id: bool = False):
    """(case, playbook, playbook hash) after the static checks of ``ctx check`` passed: a typo
    in a name fails here, loudly, instead of turning a claim unknown at run time."""
    from .check import case_problems

    case, disp, marks = _read_case(case_id, cases_dir, by_id=by_id)
    pb, pb_hash = read_playbook(case.playbook, playbooks_dir)
    probs = case_problems(case, marks, disp, pb)
    if probs:
        raise probs[0].error()
    return case, pb, pb_hash


def read_playbook(playbook_id: str, playbooks_dir: Path | None = None) -> tuple[Playbook, str]:
    from .answer import expr

    _safe_id(playbook_id, "playbook")
    pdir = Path(playbooks_dir) if playbooks_dir else paths.playbooks_dir()
    path = pdir / f"{playbook_id}.yaml"
    if not os.path.lexists(path):   # a FIFO or folder is reported by read_yaml ("not a regular file")
        raise InputError(f"unknown playbook {playbook_id!r}: no {_display(path)} (playbooks are read from "
                         f"the project root {paths.root()}; set CTX_ROOT to the project folder)", field="playbook")
    disp = _display(path)
    real_root = Path(os.path.realpath(pdir)).parent.parent    # the folder holding manifests/playbooks
    if real_root not in Path(os.path.realpath(path)).parents:
        raise InputError("playbook is a symlink that leads outside the project root", file=disp)
    marks = read_yaml_marked(path, display=disp)
    data = marks.data
    if not isinstance(data, dict):
        raise InputError("a playbook must be a YAML mapping", file=disp)
    try:
        pb = Playbook.model_validate(data)
    except ValidationError as e:
        raise input_error(e, file=disp, marks=marks) from None
    if pb.playbook_id != playbook_id:
        ln, col = marks.find("playbook_id") or (None, None)
        raise InputError(f"playbook_id {pb.playbook_id!r} differs from the file name", file=disp,
                         line=ln, column=col, field="playbook_id")
    for where, src in ([(f"facts.{f.name}.expr", f.expr) for f in pb.facts if f.expr]
                       + [(f"claims.{c.id}.when", c.when) for c in pb.claims if c.when]
                       + [(f"decision.rules.{r.id}.when", r.when) for r in pb.decision.rules]):
        try:
            expr.parse(src)
        except expr.ExprError as e:
            ln, col = marks.find(where) or (None, None)
            raise InputError(str(e), file=disp, line=ln, column=col, field=where) from None
    from .check import playbook_problems

    probs = playbook_problems(pb, marks, disp)
    if probs:
        raise probs[0].error()
    return pb, playbook_hash(pb)


def playbook_hash(pb: Playbook) -> str:
    """The hash of a playbook's content. Fields added later (``params``, path-template
    ``seeds``, evidence rules ``match``) count only when used, so the hash of a playbook
    without them is unchanged."""
    d = pb.model_dump(mode="json", by_alias=True)
    if not d["params"]:
        del d["params"]
    for et in d["evidence_types"]:
        if not et["match"]:
            del et["match"]
    for t in d["path_templates"]:
        if not t["seeds"]:
            del t["seeds"]
    return obj_hash(d)


# ---------------------------------------------------------------------------------- investigate
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


ADHOC_PREFIX = "adhoc-"
# field of the synthesised case -> the flag that gives it
_ADHOC_FLAGS = {"tenant_id": "--tenant", "question": "--question", "seeds": "--seed", "business_keys": "--business-key",
                "params": "--param", "subject": "--subject", "purpose": "--purpose", "as_of": "--as-of"}


def _case_of(opts: InvestigateOptions) -> tuple[CaseFile, Playbook, str]:
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


def case_json(case: CaseFile) -> bytes:
    """case.json of an ad-hoc run folder: the synthesised case in the form of a case file (JSON
    is YAML: saved as ``examples/cases/<id>.yaml`` it runs as a case)."""
    from .util.canon import pretty_bytes

    d = case.model_dump(mode="json", exclude_defaults=True)
    d["as_of"] = case.as_of.isoformat()
    d["subject"] = {"id": case.subject.id, "scopes": list(case.subject.scopes),
                    "clearance": case.subject.clearance.value}
    return pretty_bytes(d)


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
    from .engine.builder import budget_for

    if budget_for(pb, budget)["evidence"] <= 0:
        raise UsageError(f"--budget {budget} leaves no room for evidence")
    return Request(case_id=case.case_id, tenant_id=case.tenant_id, question=case.question, purpose=purpose,
                   as_of=as_of, known_at=known_at, subject_id=sid, scopes=sorted(set(scopes)), budget=budget,
                   max_rounds=max_rounds, seeds=list(case.seeds), business_keys=list(case.business_keys),
                   variant=opts.variant, strategy=opts.strategy, params=params,  # type: ignore[arg-type]
                   clearance=clearance, goal_ref=case.goal_ref, state_version=case.state_version,
                   tools=list(case.tools), adhoc=adhoc)


def store_info(con, key: bytes | None = None, *, tenant: str, clearance: str) -> dict[str, Any]:
    """The store section of a pack, as the pack's tenant and subject may know the store:
    ``sources`` names only the sources of ``tenant`` (and per-record-tenant sources) whose
    classification the subject's ``clearance`` allows — those ``source_discovered`` names —
    and ``digest`` is the digest of that view (the store schema, those sources' digests and
    the embedding model), so a change to another tenant's source, or to one the subject may not
    know of, is no drift for this pack. With the store secret ``key``, the digests (plain
    digests of whole snapshots, masked text included) are keyed with it, and ``key_id`` names
    (never reveals) the secret."""
    from .models.manifest import clearance_rank
    from .util.canon import canonical_bytes, key_id, sealed_hash, sha256_hex

    meta = con.meta()
    known = {sid for sid, _en, _sc, _pu, level in con.tenant_sources(tenant)
             if not level or clearance_rank(level) <= clearance_rank(clearance)}
    srcs = {s: d for s, d in con.source_digests().items() if s in known}
    digest = "sha256:" + sha256_hex(canonical_bytes({
        "schema_version": meta["schema_version"], "sources": sorted(srcs.items()),
        "embedding": meta.get("embedding_weights_sha256")}))
    info = {"digest": digest, "schema_version": int(meta["schema_version"]), "sources": srcs}
    if "embedding_weights_sha256" in meta:      # the model the store's vectors were made with
        info["embedding"] = {"model": meta["embedding_model"], "version": meta["embedding_version"],
                             "weights_sha256": meta["embedding_weights_sha256"]}
    if key is not None:
        info["digest"] = sealed_hash(info["digest"], key=key)
        info["sources"] = {s: sealed_hash(d, key=key) for s, d in srcs.items()}
        info["key_id"] = key_id(key)
    info.update(con.describe())     # {"backend": "postgresql"} on a team store; nothing for DuckDB
    return info


def investigate(opts: InvestigateOptions) -> InvestigateResult:
    from .pipeline import investigate as run_pipeline
    from .store import open_store
    from .tokens import warm_up

    warm_up()
    case, pb, pb_hash = _case_of(opts)
    req = make_request(case, pb, opts, adhoc=opts.adhoc is not None)
    db, loaded = ensure_store(opts.db)
    key = store_key(db)
    con = open_store(db)
    try:
        with con.errors():
            require_current_manifests(con)
            res = run_pipeline(con, pb, pb_hash, req, store_info(con, key, tenant=req.tenant_id,
                                                                 clearance=req.clearance), key=key)
    finally:
        con.close()
    return InvestigateResult(pack=res.pack, answer=res.answer, trace=res.trace, case=case, timings=res.timings,
                             candidates=res.candidates, store_loaded_now=loaded)


def build_step(opts: InvestigateOptions, *, goal_types: list[str], held: list[str], step_budget: int):
    """One step of an agent (the MCP ``build_context`` tool): the evidence of ``goal_types``
    not already ``held`` (evidence ids), through the same stages and gates as
    :func:`investigate`, within ``step_budget`` evidence tokens. Returns an
    ``engine.builder.Step`` (new items, omissions, covered and missing types, trace)."""
    from .engine.builder import build_step as engine_step
    from .store import open_store
    from .tokens import warm_up

    warm_up()
    case, pb, _ = _case_of(opts)
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
            require_current_manifests(con)
            return engine_step(con, pb, req, goal_types=list(goal_types), held=list(held),
                               step_budget=step_budget, key=key)
    finally:
        con.close()


def output_files(res: InvestigateResult, *, sign: bool = False) -> dict[str, bytes]:
    """The files of a run folder: pack.json, trace.jsonl, answer.json, answer.md and run.json
    (their hashes; signed with ``$CTX_SIGNING_KEY`` when ``sign``)."""
    from .answer.markdown import answer_markdown
    from .runfolder import RUN_FILE, run_manifest, signing_key
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
    ``replace`` false refuses a run folder holding another request (ledger/runs.py)."""
    from .ledger.runs import record
    from .write import write_run_folder

    out_dir = Path(out) if out is not None else default_out_dir(res)
    files = output_files(res, sign=sign)
    if no_text:     # ids, hashes and decisions only (ledger/erasure.py)
        from .ledger.erasure import without_text

        files = without_text(files)
    res.ledger = record(command, res.pack, res.answer, out=out_dir, files=files, db=db, key=idempotency_key,
                        replace=replace, extra=extra, write=lambda: write_run_folder(out_dir, files))
    return out_dir


def request_hash_for(opts: InvestigateOptions) -> str:
    """The request hash (and so the run id) an investigation with ``opts`` will record, without
    reading the store: what idempotency keys and run folders are checked against."""
    from .engine.trace import request_hash
    from .pipeline import with_params

    case, pb, _ = _case_of(opts)
    req = make_request(case, pb, opts, adhoc=opts.adhoc is not None)
    return request_hash(with_params(pb, req)[1].to_json())


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


def render_pack(pack_path: Path | str, fmt: str = "markdown", encoding: str | None = None) -> RenderResult:
    """Verify a pack (the one pack reader: file checks, hashes, run folder, signature), render
    its model-visible context and count every section against the counts it records."""
    from .engine.render import render_markdown, render_messages, section_texts
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
        sections.append({"section": name, "slot": slot, "trust": trust, "tokens": n, "recorded_tokens": rn})
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

    return run_ask(AskOptions(target=target, **kw))


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
