"""The agent-loop tools of ``ctx serve`` (docs/agents.md), as plain functions like
:mod:`ctxcli.serve.tools`: ``add_tool_result`` stores a tool result under the server's runs
folder and says how the gates judge it for the server's subject; ``investigate`` takes the
stored ids (``tool_results``) and packs them.

Stored: ``<runs>/tool-results/<tr-id>.json`` (the tool result, canonical JSON) and the raw
result at ``<runs>/tool-results/raw/<sha256>`` (content-addressed; never rendered to a model).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .config import ServeConfig

RESULT_ID_RE = re.compile(r"^tr-[0-9a-f]{12}$")
MAX_RAW_BYTES = 5_000_000


def _folder(cfg: ServeConfig) -> Path:
    return cfg.runs_dir / "tool-results"


def _write_new(path: Path, data: bytes) -> None:
    """Content-addressed: an existing file of the same name holds the same bytes; written atomically."""
    if path.is_file():
        return
    import os
    import tempfile

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_results(cfg: ServeConfig, ids: list[str], *, tenant: str) -> list[Any]:
    """The stored tool results ``ids`` (from ``add_tool_result``), in the order given: only those
    added for a case of ``tenant`` (the run's); another tenant's id is answered as unknown."""
    from ..agents.tool_results import parse_tool_result
    from ..util.jsonstrict import loads as loads_strict

    out = []
    for rid in ids:
        if not isinstance(rid, str) or not RESULT_ID_RE.match(rid):
            raise UsageError(f"tool result {rid!r} is not a tool result id (tr-…)")
        f = _folder(cfg) / f"{rid}.json"
        if not f.is_file() or not _owner_mark(cfg, tenant, rid).is_file():
            raise UsageError(f"unknown tool result {rid}: add it with add_tool_result first")
        tr = parse_tool_result(loads_strict(f.read_bytes()), file=f"tool result {rid}")
        if tr.result_id() != rid:
            raise UsageError(f"tool result {rid} does not match its stored content")
        raw = _folder(cfg) / "raw" / tr.raw.sha256
        if raw.is_file():       # the raw-vs-shaped check reads it (content-addressed: never another's bytes)
            tr._raw_path = raw
        out.append(tr)
    return out


def _owner_mark(cfg: ServeConfig, tenant: str, rid: str) -> Path:
    """The mark that ``rid`` was added for a case of ``tenant``: only that tenant's runs take it."""
    return _folder(cfg) / "owners" / tenant / rid


def add_tool_result(cfg: ServeConfig, *, case: str, tool: str, version: str | None, shaped: dict[str, Any] | None,
                    observed_at: str, raw: str, arguments: dict[str, Any] | None = None,
                    call_id: str | None = None, max_age: str | None = None, data_tenant: str | None = None,
                    needs_scopes: list[str] | None = None, allowed_purposes: list[str] | None = None,
                    as_of: str | None = None) -> dict[str, Any]:
    """Store one tool result and judge it for this server's subject on ``case``. Without
    ``shaped``, ctx shapes ``raw`` as the project's tool registry declares for ``tool``
    (``ctx tool-result shape``); given by hand, the gates check it against ``raw``."""
    from .identity import case_options, ran_as_case, read_own_case
    from ..agents.tool_results import parse_tool_result
    from ..util.canon import canonical_bytes
    from .. import api

    c = read_own_case(cfg, case)
    blob = raw.encode("utf-8")
    if len(blob) > MAX_RAW_BYTES:
        raise UsageError(f"raw is {len(blob)} bytes, over the {MAX_RAW_BYTES}-byte limit")
    sha = hashlib.sha256(blob).hexdigest()
    raw_file = _folder(cfg) / "raw" / sha
    _write_new(raw_file, blob)       # content-addressed: the same bytes whatever the gates decide
    rows = None
    if shaped is None:
        from ..agents.registry import read_registry
        from ..agents.shape import shape_file

        spec = read_registry().get(tool)
        if spec is None or spec.shape is None:
            raise UsageError(f"give shaped, or declare a shape for {tool!r} in the project's tool registry")
        facts, lims, rows = shape_file(raw_file, spec.shape, display="raw")
        shaped = {"facts": facts, "limitations": lims, "verified": True}
        version = version or spec.version
    if version is None:
        raise UsageError("give version (the tool registry declares none for this tool)")
    doc = {"tool": tool, "version": version, "call_id": call_id, "arguments": dict(arguments or {}),
           "tenant_id": data_tenant or c.tenant_id, "scopes": list(needs_scopes or []),
           "purposes": list(allowed_purposes or []), "observed_at": observed_at, "max_age": max_age,
           "raw": {"sha256": sha, "size": len(blob), "location": f"tool-results/raw/{sha}",
                   **({"rows": rows} if rows is not None else {})}, "shaped": shaped}
    tr = parse_tool_result(doc, file="add_tool_result")
    tr._raw_path = raw_file
    rid = tr.result_id()
    opts = case_options(cfg, case, as_of, None, None, None)
    opts.tool_results = [tr]
    g = api.gate_tool_results(opts)
    _write_new(_folder(cfg) / f"{rid}.json", canonical_bytes(tr.model_dump(mode="json")))
    _write_new(_owner_mark(cfg, c.tenant_id, rid), b"")     # whose runs may use it (load_results)
    out: dict[str, Any] = {"result_id": rid, "raw": tr.raw.model_dump(mode="json")}
    if rows is not None:
        out["shaped"] = shaped
    if g.items:
        out.update(status="admitted", trust=g.items[0]["trust_level"], tokens=g.items[0]["tokens"])
    else:
        om = g.omissions[0]
        out.update(status="withheld" if om["withheld"] else "excluded", gate=om["gate"], reason=om["reason"],
                   detail=om["detail"])
    out["use"] = "pass result_id in investigate's tool_results"
    out["ran_as"] = ran_as_case(cfg, case, as_of=as_of)
    return out


def handoff(cfg: ServeConfig, *, pack_id: str) -> dict[str, Any]:
    """The handoff document of a pack this server serves (``ctx handoff``), sealed with the
    store secret."""
    from .. import api
    from .identity import run_dir

    from ..postmortem import load_pack
    from .identity import ran_as_request

    path = run_dir(cfg, pack_id) / "pack.json"
    # ran_as is this call's echo, not part of the sealed document: build_context drops it
    return {**api.handoff(path, db=cfg.db), "ran_as": ran_as_request(load_pack(path).request)}


# ------------------------------------------------------------------------------ working memory
SESSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def _session_path(cfg: ServeConfig, session_id: str) -> Path:
    if not isinstance(session_id, str) or not SESSION_RE.match(session_id):
        raise UsageError(f"session_id {session_id!r} must be 1 to 128 letters, digits, '.', '_' or '-'")
    return cfg.runs_dir / "sessions" / f"{session_id}.json"


def _owner(cfg: ServeConfig, case: str) -> tuple[str, str]:
    """(tenant, subject) of the server's runs on ``case``: whose session and memory it is."""
    from .identity import read_own_case

    c = read_own_case(cfg, case)
    return c.tenant_id, cfg.subject_id or c.subject.id


def _ran_as_owner(tenant: str, subject: str) -> dict[str, Any]:
    """Whose session or memory a call wrote: no run, so no variant and no as_of."""
    return {"tenant": tenant, "subject": subject, "variant": None, "as_of": None}


def load_session(cfg: ServeConfig, session_id: str):
    """The stored working state of ``session_id``; an unknown one is a usage error."""
    from ..agents.memory import parse_working_state
    from ..util.jsonstrict import loads as loads_strict

    p = _session_path(cfg, session_id)
    if not p.is_file():
        raise UsageError(f"unknown session {session_id}: start it with update_working_state")
    return parse_working_state(loads_strict(p.read_bytes()), file=f"session {session_id}")


def update_working_state(cfg: ServeConfig, *, case: str, session_id: str, messages: list[dict[str, Any]] | None = None,
                         pinned: list[dict[str, Any]] | None = None, summary: dict[str, Any] | None = None
                         ) -> dict[str, Any]:
    """Add messages and pinned items to the session's working state, or roll its summary: a
    new summary replaces the previous one, its ``replaces`` are added to the previous one's, and
    the messages it replaces leave the recent list. The session belongs to the tenant and subject
    of this server's runs on ``case``; another's is refused as unknown."""
    import os

    from ..agents.memory import parse_working_state
    from ..util.canon import canonical_bytes

    tenant, subject = _owner(cfg, case)
    p = _session_path(cfg, session_id)
    if p.is_file():
        st = load_session(cfg, session_id)
        if (st.tenant_id, st.subject_id) != (tenant, subject):
            raise UsageError(f"unknown session {session_id}: start it with update_working_state")
        doc = st.model_dump(mode="json")
    else:
        doc = {"schema_version": "ctx.working-state/1", "session_id": session_id, "tenant_id": tenant,
               "subject_id": subject, "pinned": [], "summary": None, "messages": []}
    doc["pinned"] += list(pinned or [])
    doc["messages"] += list(messages or [])
    if summary is not None:
        known = {m["id"] for m in doc["messages"] if isinstance(m, dict)} | set(
            (doc["summary"] or {}).get("replaces", []))
        given = list(summary.get("replaces") or []) if isinstance(summary, dict) else []
        unknown = [i for i in given if i not in known]
        if unknown:
            raise UsageError(f"summary.replaces: no message {unknown[0]!r} in session {session_id}")
        prev = list((doc["summary"] or {}).get("replaces", []))
        summary = {**summary, "replaces": prev + [i for i in given if i not in prev]}
        doc["summary"] = summary
        doc["messages"] = [m for m in doc["messages"] if not (isinstance(m, dict) and m.get("id") in given)]
    st = parse_working_state(doc, file="update_working_state")
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_bytes(canonical_bytes(st.model_dump(mode="json")))
    os.replace(tmp, p)
    return {"session_id": session_id, "pinned": len(st.pinned), "messages": len(st.messages),
            "summary_replaces": list(st.summary.replaces) if st.summary else [],
            "use": "pass session_id in investigate's session_id", "ran_as": _ran_as_owner(tenant, subject)}


def remember(cfg: ServeConfig, *, case: str, text: str, ttl: str, reviewed_by: str | None, at: str | None = None,
             needs_scopes: list[str] | None = None, allowed_purposes: list[str] | None = None,
             source: str | None = None) -> dict[str, Any]:
    """A durable memory record for the subject of this server's runs on ``case`` (refused
    without ``reviewed_by``; it always expires after ``ttl``)."""
    from .. import api
    from ..util.timeutil import parse_option_time

    tenant, subject = _owner(cfg, case)
    res = api.remember(tenant_id=tenant, subject_id=subject, text=text, ttl=ttl, reviewed_by=reviewed_by,
                       at=parse_option_time(at, "at"), scopes=needs_scopes, purposes=allowed_purposes,
                       source=source, folder=cfg.runs_dir / "memory")
    return {"memory_id": res["memory_id"], "expires_at": res["expires_at"],
            "use": "investigate with recall: true gates it on every use", "ran_as": _ran_as_owner(tenant, subject)}


def forget(cfg: ServeConfig, *, case: str, memory_id: str) -> dict[str, Any]:
    """Delete one of this subject's memory records (another's is answered as unknown)."""
    from .. import api

    tenant, subject = _owner(cfg, case)
    mine = [r for r in api.recall(folder=cfg.runs_dir / "memory") if r.memory_id == memory_id
            and (r.tenant_id, r.subject_id) == (tenant, subject)]
    if not mine or not api.forget(memory_id, folder=cfg.runs_dir / "memory"):
        raise UsageError(f"unknown memory record {memory_id}")
    return {"memory_id": memory_id, "deleted": True, "ran_as": _ran_as_owner(tenant, subject)}
