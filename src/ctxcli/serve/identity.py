"""Who a call of ``ctx serve`` runs as: the server's fixed tenant, subject, scopes, clearance
and purpose, never the caller's (docs/serve.md). The case a tool names is read only under the
server's cases folder and of its tenant; a pack is served only when it was made for the identity
this server gives a run of it. Shared by serve/tools.py and serve/agent_tools.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..util.timeutil import parse_option_time
from .config import ServeConfig

PACK_ID_RE = re.compile(r"^pk-[0-9a-f]{8,64}$")


def ran_as_request(request: dict[str, Any]) -> dict[str, Any]:
    """The tenant, subject, variant and as_of a run (a pack's or a step's request) ran with."""
    return {"tenant": request.get("tenant_id"), "subject": (request.get("subject") or {}).get("id"),
            "variant": request.get("variant"), "as_of": request.get("as_of")}


def ran_as_server(cfg: ServeConfig) -> dict[str, Any]:
    """A call on neither a case nor a pack: the server's fixed tenant and subject."""
    return {"tenant": cfg.tenant, "subject": cfg.subject_id, "variant": None, "as_of": None}


def ran_as_case(cfg: ServeConfig, case: str, *, variant: str | None = None, as_of: str | None = None,
                known_at: str | None = None) -> dict[str, Any]:
    """What a call on ``case`` runs as: the request this server makes of it (tenant, subject,
    variant, as_of), exactly as investigate would."""
    from .. import api

    opts = case_options(cfg, case, as_of, known_at, variant, None)
    c, pb, _ = api.read_checked(opts.case, opts.cases_dir, opts.playbooks_dir, by_id=True)
    req = api.make_request(c, pb, opts)
    return {"tenant": req.tenant_id, "subject": req.subject_id, "variant": req.variant,
            "as_of": req.as_of.isoformat()}


def read_own_case(cfg: ServeConfig, case: str):
    """A case of this server: an id resolved under the project's cases folder (never a path the
    caller names), of the server's tenant when it has one."""
    return read_own_case_marked(cfg, case)[0]


def read_own_case_marked(cfg: ServeConfig, case: str):
    """:func:`read_own_case` as ``api.read_case_marked`` returns it (case, display name, marks)."""
    from .. import api

    from ..errors import UnknownCaseError

    if cfg.tenant is None:
        return api.read_case_marked(case, cfg.cases_dir, by_id=True)
    # a server fixed to one tenant: another tenant's case is "unknown" exactly as a missing one
    # (same message; no list of case ids, which would name other tenants' cases)
    unknown = UnknownCaseError(f"unknown case {case!r} (the list_cases tool names this server's cases)")
    try:
        read = api.read_case_marked(case, cfg.cases_dir, by_id=True)
    except UnknownCaseError:
        raise unknown from None
    if read[0].tenant_id != cfg.tenant:
        raise unknown
    return read


def case_options(cfg: ServeConfig, case: str, as_of: str | None, known_at: str | None, variant: str | None,
             budget: int | None):
    """InvestigateOptions with the subject and purpose fixed by the server, never by the caller."""
    return case_options_read(cfg, case, as_of, known_at, variant, budget)[0]


def case_options_read(cfg: ServeConfig, case: str, as_of: str | None, known_at: str | None, variant: str | None,
                  budget: int | None):
    """:func:`case_options` and the case as it read it (``api.read_case_marked``)."""
    from .. import api

    read = read_own_case_marked(cfg, case)
    c = read[0]
    if variant is not None:
        var = c.variants.get(variant)
        if var is not None and cfg.subject_id is None and (var.subject is not None or var.purpose is not None):
            raise UsageError(f"variant {variant!r} of case {c.case_id} declares its own subject or purpose; this "
                             f"server's subject is fixed by its configuration (start it with --subject to choose)")
        if var is not None:
            _refuse_other_identity(cfg, c.case_id, variant, var)
    from ..request_policy import refuse_out_of_limits

    refuse_out_of_limits({"budget": "budget"}, budget=budget)     # the limits of --budget (models/request.py)
    return api.InvestigateOptions(
        case=case, as_of=parse_option_time(as_of, "as_of"), known_at=parse_option_time(known_at, "known_at"),
        subject_id=cfg.subject_id, scopes=list(cfg.scopes) if cfg.scopes is not None else None,
        clearance=cfg.clearance, purpose=cfg.purpose, budget=budget, variant=variant, db=cfg.db,
        cases_dir=cfg.cases_dir, playbooks_dir=cfg.playbooks_dir, case_by_id=True), read


def _refuse_other_identity(cfg: ServeConfig, case_id: str, variant: str, var) -> None:
    """A variant that names a subject (id, scopes, clearance) or purpose other than this
    server's fixed ones would change who the run is for: refused, never run as the server's
    subject under the variant's name."""
    from ..models.manifest import DEFAULT_CLEARANCE

    subj = var.subject
    other = None
    if subj is not None and cfg.subject_id is not None:
        if subj.id != cfg.subject_id:
            other = f"subject {subj.id}"
        elif cfg.scopes is not None and sorted(set(subj.scopes)) != sorted(set(cfg.scopes)):
            other = f"scopes {', '.join(sorted(set(subj.scopes))) or '(none)'}"
        elif subj.clearance.value != (cfg.clearance or DEFAULT_CLEARANCE):
            other = f"clearance {subj.clearance.value}"
    if other is None and var.purpose is not None and cfg.purpose is not None and var.purpose != cfg.purpose:
        other = f"purpose {var.purpose}"
    if other is not None:
        raise UsageError(f"variant {variant!r} of case {case_id} runs with {other}, not this server's: start a "
                         f"server with that identity to run it")


def run_dir(cfg: ServeConfig, pack_id: str) -> Path:
    """The run folder of a pack this server may serve: one whose request has the identity this
    server gives a run of it (:func:`serves`). Any other pack in the runs folder, as a missing
    one, is "unknown": a server never confirms that a pack of another subject exists."""
    if not isinstance(pack_id, str) or not PACK_ID_RE.match(pack_id):
        raise UsageError(f"pack_id {pack_id!r} is not a pack id (pk-…)")
    d = cfg.runs_dir / pack_id
    if not (d / "pack.json").is_file() or not serves(cfg, d):
        raise UsageError(f"unknown pack {pack_id}: this server has written no run folder for it")
    return d


def identity_of(request: dict[str, Any]) -> tuple[Any, ...]:
    """What a pack was made for: subject, scopes, clearance, purpose and tenant."""
    subj = request.get("subject") or {}
    return (subj.get("id"), tuple(sorted(subj.get("scopes") or [])), subj.get("clearance"), request.get("purpose"),
            request.get("tenant_id"))


def own_identity(cfg: ServeConfig, request: dict[str, Any]) -> tuple[Any, ...] | None:
    """The identity this server gives a run of the pack's case (and variant), or of an ad-hoc
    run; None when it would not run it at all (another tenant, no such case, an ad-hoc run
    without the server's fixed identity)."""
    from .. import api
    from ..errors import CtxError
    from ..models.manifest import DEFAULT_CLEARANCE

    if request.get("adhoc") is True:
        if cfg.subject_id is None or cfg.tenant is None or cfg.purpose is None or not cfg.scopes:
            return None
        return (cfg.subject_id, tuple(cfg.scopes), cfg.clearance or DEFAULT_CLEARANCE, cfg.purpose, cfg.tenant)
    try:
        opts = case_options(cfg, str(request.get("case_id")), None, None, request.get("variant"), None)
        case, pb, _ = api.read_checked(opts.case, opts.cases_dir, opts.playbooks_dir, by_id=True)
        req = api.make_request(case, pb, opts)
    except CtxError:
        return None
    return (req.subject_id, tuple(sorted(set(req.scopes))), req.clearance, req.purpose, req.tenant_id)


def serves(cfg: ServeConfig, folder: Path) -> bool:
    """Whether this server may serve the run folder: its pack verifies and was made for the
    subject, scopes, clearance, purpose and tenant this server gives a run of its case."""
    from ..errors import CtxError
    from ..postmortem import load_pack

    try:
        lp = load_pack(folder / "pack.json")
    except CtxError:
        return False
    own = own_identity(cfg, lp.request)
    return own is not None and own == identity_of(lp.request)
