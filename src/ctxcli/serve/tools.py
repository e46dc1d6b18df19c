"""The tools of ``ctx serve`` as plain functions over the library API.

Each takes the server's :class:`ServeConfig` and the tool's arguments, and returns a
JSON-ready dict or raises a :class:`~ctxcli.errors.CtxError` with the same one-line message
the CLI prints. Nothing here knows about MCP; :mod:`ctxcli.serve.server` wires these in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..util.timeutil import parse_option_time
from .config import ServeConfig
from .identity import (PACK_ID_RE, case_options, case_options_read, ran_as_case, ran_as_request, ran_as_server,
                       read_own_case, run_dir, serves)

RUN_FILES = ("pack.json", "trace.jsonl", "answer.json", "answer.md")


def _adhoc_options(cfg: ServeConfig, *, playbook: str, seeds: list[str] | None, params: dict[str, Any] | None,
                   question: str | None, as_of: str | None, known_at: str | None, variant: str | None,
                   budget: int | None):
    """InvestigateOptions of an ad-hoc run: the playbook, seeds, params and question from the call;
    the tenant, subject, scopes, clearance and purpose only from the server's configuration."""
    from .. import api

    if variant is not None:
        raise UsageError("variant needs a case: an ad-hoc run (playbook) has no variants")
    for what, value, flag in (("subject", cfg.subject_id, "--subject"), ("tenant", cfg.tenant, "--tenant"),
                              ("purpose", cfg.purpose, "--purpose")):
        if value is None:
            raise UsageError(f"an ad-hoc run needs this server's fixed {what}: start ctx serve with {flag}")
    if as_of is None:
        raise UsageError("as_of is required with playbook: an ad-hoc run has no case file to take it from")
    if not seeds:
        raise UsageError("seeds is required with playbook: the entity keys the investigation starts from")
    if not cfg.scopes:
        raise UsageError("an ad-hoc run needs this server's fixed scopes: start ctx serve with --scope")
    from ..request_policy import refuse_out_of_limits

    refuse_out_of_limits({"budget": "budget"}, budget=budget)     # the limits of --budget (models/request.py)
    spec = api.AdhocSpec(playbook=playbook, seeds=list(seeds), tenant_id=cfg.tenant, question=question,
                         params=dict(params or {}))
    return api.InvestigateOptions(
        adhoc=spec, as_of=parse_option_time(as_of, "as_of"), known_at=parse_option_time(known_at, "known_at"),
        subject_id=cfg.subject_id, scopes=list(cfg.scopes), clearance=cfg.clearance, purpose=cfg.purpose,
        budget=budget, db=cfg.db, playbooks_dir=cfg.playbooks_dir)


def list_packs(cfg: ServeConfig) -> list[str]:
    if not cfg.runs_dir.is_dir():
        return []
    return sorted(p.name for p in cfg.runs_dir.iterdir()
                  if PACK_ID_RE.match(p.name) and (p / "pack.json").is_file() and serves(cfg, p))


def _write(cfg: ServeConfig, res) -> Path:
    from .. import api
    from ..run_manifest import signing_key

    # with $CTX_SIGNING_KEY set only signed runs are read back (run_manifest.py): sign what we write
    return api.write_outputs(res, cfg.runs_dir / res.pack["pack_id"], sign=signing_key(required=False) is not None,
                             db=cfg.db)      # recorded in the ledger of the store it served


def _claims(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"claim_id": c["claim_id"], "status": c["status"], "text": c["text"], "evidence": list(c["evidence"])}
            for c in answer["claims"]]


def _run_options(cfg: ServeConfig, *, case: str | None, playbook: str | None, seeds: list[str] | None,
                 params: dict[str, Any] | None, question: str | None, as_of: str | None, known_at: str | None,
                 variant: str | None, budget: int | None, tool_results: list[str] | None, session_id: str | None,
                 recall: bool):
    """The options of an ``investigate`` or ``build_context`` call, and the case as read (None ad
    hoc): exactly one of ``case`` and ``playbook`` (+ ``seeds``); the identity always the
    server's; the call's tool results (of the run's tenant only), working state and recalled
    memory attached for their gates."""
    from .. import api

    if case is not None and playbook is not None:
        raise UsageError("case and playbook cannot be combined: a case names its own playbook")
    if playbook is not None:
        opts = _adhoc_options(cfg, playbook=playbook, seeds=seeds, params=params, question=question, as_of=as_of,
                              known_at=known_at, variant=variant, budget=budget)
        tenant, read = cfg.tenant, None
    elif case is None:
        raise UsageError("give a case, or a playbook with seeds for an ad-hoc run")
    else:
        extra = [k for k, v in (("seeds", seeds), ("params", params), ("question", question)) if v is not None]
        if extra:
            raise UsageError(f"{extra[0]} needs playbook: a case names its own {extra[0]}")
        opts, read = case_options_read(cfg, case, as_of, known_at, variant, budget)
        tenant = read[0].tenant_id
    if tool_results:
        from .agent_tools import load_results

        opts.tool_results = load_results(cfg, list(tool_results), tenant=tenant)
    if session_id is not None:
        from .agent_tools import load_session

        opts.working_state = load_session(cfg, session_id)
    if recall:
        opts.memory_records = api.recall(folder=cfg.runs_dir / "memory")
    return opts, read


NO_RUNS = {"written": False, "reason": "this server was started with --no-runs"}


def investigate(cfg: ServeConfig, *, case: str | None = None, as_of: str | None = None,
                known_at: str | None = None, variant: str | None = None, budget: int | None = None,
                include_messages: bool = False, playbook: str | None = None, seeds: list[str] | None = None,
                params: dict[str, Any] | None = None, question: str | None = None,
                tool_results: list[str] | None = None, session_id: str | None = None,
                recall: bool = False) -> dict[str, Any]:
    """A case by id, or an ad-hoc run (``playbook`` + ``seeds``, optional ``params`` and
    ``question``) whose tenant, subject and purpose are the server's; ``tool_results``: ids from
    ``add_tool_result`` (serve/agent_tools.py), gated and packed in the tool_results section;
    ``session_id``: a working state kept with ``update_working_state``; ``recall``: gate the
    durable memory records for this run."""
    from .. import api

    opts, _ = _run_options(cfg, case=case, playbook=playbook, seeds=seeds, params=params, question=question,
                           as_of=as_of, known_at=known_at, variant=variant, budget=budget, tool_results=tool_results,
                           session_id=session_id, recall=recall)
    res = api.investigate(opts)
    d = None if cfg.no_runs else _write(cfg, res)
    pid = res.pack["pack_id"]
    out: dict[str, Any] = {
        "pack_id": pid, "content_hash": res.pack["content_hash"], "case_id": res.pack["request"]["case_id"],
        "verdict": res.answer["verdict"], "action": res.answer["recommended_action"]["action"],
        "claims": _claims(res.answer),
        "missing_types": [{"type": m["type"], "reason": m["reason"]} for m in res.answer["missing_evidence"]],
        "stop_reason": res.pack["state"]["stop_reason"],
        **({"tool_results": [{"result_id": i["result_id"], "trust": i["trust_level"], "tokens": i["tokens"]}
                             for i in res.pack["tool_results"]],
            "tool_omissions": [{k: o[k] for k in ("ref", "gate", "reason", "withheld")}
                               for o in res.pack["tool_omissions"]]} if "tool_results" in res.pack else {}),
        **({"memory": _memory_summary(res.pack)} if "memory_omissions" in res.pack else {}),
        "resources": {"pack": f"ctx://packs/{pid}", "trace": f"ctx://packs/{pid}/trace",
                      "answer": f"ctx://packs/{pid}/answer", "messages": f"ctx://packs/{pid}/messages"},
    }
    out["run"] = NO_RUNS if d is None else {"written": True, "folder": d.name}
    out["ran_as"] = ran_as_request(res.pack["request"])
    if include_messages:
        import orjson

        out["messages"] = (orjson.loads(api.render_pack(d / "pack.json", "messages").data) if d is not None
                           else api.pack_messages(res.pack))
    return out


def _memory_summary(pack: dict[str, Any]) -> dict[str, Any]:
    """What the memory gates kept (by reference) and dropped (gate and reason; withheld: keyed ref)."""
    w = pack.get("working_memory")
    out: dict[str, Any] = {}
    if w is not None:
        out["working_memory"] = {"pinned": [p["kind"] for p in w["pinned"]],
                                 "summary_replaces": w["summary"]["replaces"] if w["summary"] else [],
                                 "messages": [m["id"] for m in w["messages"]],
                                 "cleared": [m["id"] for m in w["messages"] if m["cleared"]]}
    if pack.get("episodic_memory") is not None:
        out["episodic_memory"] = [r["memory_id"] for r in pack["episodic_memory"]]
    if pack.get("memory_conflicts"):     # records that contradict admitted evidence: conflicts only
        out["conflicts"] = [{"memory_id": r["memory_id"], "reason": r["conflict"]["code"],
                             "evidence": r["conflict"].get("evidence") or []} for r in pack["memory_conflicts"]]
    out["omissions"] = [{k: o[k] for k in ("section", "ref", "gate", "reason", "withheld")}
                        for o in pack["memory_omissions"]]
    return out


def build_context(cfg: ServeConfig, *, types: list[str], case: str | None = None, held: list[str] | None = None,
                  step_budget: int | None = None, as_of: str | None = None, known_at: str | None = None,
                  variant: str | None = None, handoff: dict[str, Any] | None = None,
                  playbook: str | None = None, seeds: list[str] | None = None, params: dict[str, Any] | None = None,
                  question: str | None = None, tool_results: list[str] | None = None,
                  session_id: str | None = None, recall: bool = False) -> dict[str, Any]:
    """One agent step: the newly admitted evidence of the types the step needs.

    Runs one round of the same stages and gates as ``investigate`` (``api.build_step``) for
    ``types`` only, on a case or ad hoc (``playbook`` + ``seeds``, the server's identity);
    items whose evidence id is in ``held`` are dropped as duplicates (``already_held``) and the
    rest are packed within ``step_budget`` evidence tokens (default: the playbook's evidence
    allocation). ``tool_results``, ``session_id`` and ``recall`` go through the tool-result and
    memory gates as in a pack. Omissions are reported as in a pack: withheld ones only as opaque
    references with what they need. ``handoff``: another agent's handoff document, passed on
    only as far as this subject may see it. The step is written as a run (step.json and
    trace.jsonl under the runs folder, and a ledger record) unless the server has --no-runs.
    """
    from .. import api

    if not types:
        raise UsageError("types: name at least one evidence type the step needs")
    # the case is read once per step (here), the playbook once (in api.build_step)
    opts, read = _run_options(cfg, case=case, playbook=playbook, seeds=seeds, params=params, question=question,
                              as_of=as_of, known_at=known_at, variant=variant, budget=None,
                              tool_results=tool_results, session_id=session_id, recall=recall)
    step = api.build_step(opts, goal_types=list(types), held=list(held or []), step_budget=step_budget,
                          case_read=read)
    step_budget = step.step_budget
    items = [{"evidence_id": ev["evidence_id"], "object_id": ev["object_id"], "type": ev["selected_for"],
              "source_id": ev["source_id"], "title": ev["title"], "locator": ev["locator"],
              "observed_at": ev["observed_at"], "tokens": ev["tokens"], "text": ev["text"]}
             for ev in step.evidence]
    doc = api.step_document(step, goal_types=list(types), held=list(held or []))
    out: dict[str, Any] = {
        "step_id": doc["step_id"], "case_id": step.request["case_id"], "types": list(types),
        "step_budget": step_budget, "items": items, "tokens": step.tokens,
        "covered_types": step.covered, "missing_types": step.missing,
        "gaps": [{k: g[k] for k in ("type", "required", "reason", "rejected_by", "withheld") if k in g}
                 for g in step.gaps],
        "omissions": [{k: o[k] for k in ("gate", "reason", "ref", "withheld", "detail") if k in o}
                      for o in step.omissions],
        "trace_events": len(step.trace)}
    if step.tools is not None:
        out["tool_results"] = [{"result_id": i["result_id"], "trust": i["trust_level"], "tokens": i["tokens"]}
                               for i in step.tools.items]
        out["tool_omissions"] = [{k: o[k] for k in ("ref", "gate", "reason", "withheld")}
                                 for o in step.tools.omissions]
    if step.memory is not None:
        out["memory"] = _memory_summary({"working_memory": step.memory.working,
                                         "episodic_memory": step.memory.records,
                                         "memory_conflicts": step.memory.conflicts,
                                         "memory_omissions": step.memory.omissions})
    if handoff is not None:     # another agent's handoff, re-gated for this server's subject (agents/handoff.py)
        if isinstance(handoff, dict):       # as the handoff tool returned it: its ran_as echo is not sealed
            handoff = {k: v for k, v in handoff.items() if k != "ran_as"}
        out["handoff"] = api.receive_handoff(opts, handoff)
    if cfg.no_runs:
        out["run"] = NO_RUNS
    else:
        d = cfg.runs_dir / doc["step_id"]
        api.write_step(step, doc, d, db=cfg.db)
        out["run"] = {"written": True, "folder": d.name}     # the same inputs: the same result
    out["ran_as"] = ran_as_request(doc["request"])
    return out


def explain_omission(cfg: ServeConfig, *, pack_id: str, object_id: str | None = None,
                     gate: str | None = None) -> dict[str, Any]:
    from ..postmortem import explain_object, explain_omissions, load_pack

    if object_id is not None and gate is not None:
        raise UsageError("gate and object_id cannot be combined")
    lp = load_pack(run_dir(cfg, pack_id) / "pack.json")
    if object_id is not None:
        return {**explain_object(lp, object_id, cfg.db).to_json(), "ran_as": ran_as_request(lp.request)}
    return {**explain_omissions(lp, gate).to_json(), "ran_as": ran_as_request(lp.request)}


def replay(cfg: ServeConfig, *, pack_id: str, state_version: str | None = None) -> dict[str, Any]:
    from ..postmortem import replay as pm_replay

    res = pm_replay(run_dir(cfg, pack_id) / "pack.json", cfg.db)
    out = res.to_json()
    if state_version is not None:      # the caller's current task state: an older pack is stale
        from ..agents.state import check

        out["state"] = check(res.pack.data.get("state_version"), state_version)
    out["ran_as"] = ran_as_request(res.pack.data["request"])
    return out


def diff(cfg: ServeConfig, *, pack_a: str, pack_b: str) -> dict[str, Any]:
    from ..postmortem import diff as pm_diff

    d = pm_diff(run_dir(cfg, pack_a) / "pack.json", run_dir(cfg, pack_b) / "pack.json")
    return {"a": pack_a, "b": pack_b, **d.to_json(), "ran_as": ran_as_server(cfg)}


def render(cfg: ServeConfig, *, pack_id: str, format: str = "messages") -> dict[str, Any]:
    from .. import api

    from ..postmortem import load_pack

    path = run_dir(cfg, pack_id) / "pack.json"
    r = api.render_pack(path, format)
    return {"pack_id": pack_id, "format": r.format, "total_tokens": r.total_tokens, "sections": r.sections,
            "matches_pack": r.matches_pack, "text": r.data.decode("utf-8"),
            "ran_as": ran_as_request(load_pack(path).request)}


def read_run_file(cfg: ServeConfig, pack_id: str, name: str) -> str:
    d = run_dir(cfg, pack_id)
    if name == "messages":
        from .. import api

        return api.render_pack(d / "pack.json", "messages").data.decode("utf-8")
    from ..errors import PackError
    from ..postmortem import load_pack

    lp = load_pack(d / "pack.json")            # verified before anything of the folder is served
    raw = lp.raw if name == "pack.json" else lp.run_file(name)    # only a file run.json lists and verifies
    if raw is None:
        raise PackError(f"no {name} in the run folder of {pack_id}")
    return raw.decode("utf-8")


def list_cases(cfg: ServeConfig) -> dict[str, Any]:
    """The project's cases this server runs: of its tenant when it has one (another tenant's case
    ids are never listed), with the playbook, question, as_of and variant names; a case file
    that does not parse is left out and counted, never shown."""
    from .. import paths
    from ..errors import UnknownCaseError

    cdir = Path(cfg.cases_dir) if cfg.cases_dir else paths.cases_dir()
    out, unreadable = [], 0
    for f in sorted(cdir.glob("*.yaml")) if cdir.is_dir() else []:
        try:
            c = read_own_case(cfg, f.stem)
        except (UsageError, UnknownCaseError):
            continue          # another tenant's case (or a name that is not an id): not this server's
        except Exception:     # noqa: BLE001 — a broken case file is reported by ctx check, not here
            unreadable += 1
            continue
        out.append({"case_id": c.case_id, "playbook": c.playbook, "question": c.question,
                    "as_of": c.as_of.isoformat(), "variants": sorted(c.variants)})
    return {"cases": out, "unreadable": unreadable, "ran_as": ran_as_server(cfg)}


def list_playbooks(cfg: ServeConfig) -> dict[str, Any]:
    """The project's playbooks: id, version, description, purposes, and each evidence type an
    answer needs (required or not, its judgment), for an ad-hoc investigate."""
    from .. import api, paths

    pdir = Path(cfg.playbooks_dir) if cfg.playbooks_dir else paths.playbooks_dir()
    out, unreadable = [], 0
    for f in sorted(pdir.glob("*.yaml")) if pdir.is_dir() else []:
        try:
            pb, _ = api.read_playbook(f.stem, cfg.playbooks_dir)
        except Exception:     # noqa: BLE001 — ctx check reports it
            unreadable += 1
            continue
        out.append({"playbook_id": pb.playbook_id, "version": pb.version, "description": pb.description,
                    "purposes": list(pb.purposes), "params": sorted(pb.params),
                    "evidence_types": [{"type": et.type, "required": et.required, "judgment": et.judgment}
                                       for et in pb.evidence_types]})
    return {"playbooks": out, "unreadable": unreadable, "ran_as": ran_as_server(cfg)}


def audit_call(cfg: ServeConfig, *, case: str, request: dict[str, Any], as_of: str | None = None,
               known_at: str | None = None, variant: str | None = None) -> dict[str, Any]:
    """``ctx audit-call`` over MCP: a recorded model request (an OpenAI chat request, or OTLP/JSON
    GenAI spans) judged span by span for this server's fixed subject on ``case``."""
    from .. import api

    opts = case_options(cfg, case, as_of, known_at, variant, None)
    out = api.audit_request(request, api.audit_subject(opts), name="request", db=opts.db)
    return {**out, "ran_as": ran_as_case(cfg, case, variant=variant, as_of=as_of, known_at=known_at)}
