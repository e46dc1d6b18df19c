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


def load_results(cfg: ServeConfig, ids: list[str]) -> list[Any]:
    """The stored tool results ``ids`` (from ``add_tool_result``), in the order given."""
    from ..agents.tool_results import parse_tool_result
    from ..util.jsonstrict import loads as loads_strict

    out = []
    for rid in ids:
        if not isinstance(rid, str) or not RESULT_ID_RE.match(rid):
            raise UsageError(f"tool result {rid!r} is not a tool result id (tr-…)")
        f = _folder(cfg) / f"{rid}.json"
        if not f.is_file():
            raise UsageError(f"unknown tool result {rid}: add it with add_tool_result first")
        tr = parse_tool_result(loads_strict(f.read_bytes()), file=f"tool result {rid}")
        if tr.result_id() != rid:
            raise UsageError(f"tool result {rid} does not match its stored content")
        out.append(tr)
    return out


def add_tool_result(cfg: ServeConfig, *, case: str, tool: str, version: str, shaped: dict[str, Any],
                    observed_at: str, raw: str, arguments: dict[str, Any] | None = None,
                    call_id: str | None = None, max_age: str | None = None, data_tenant: str | None = None,
                    needs_scopes: list[str] | None = None, allowed_purposes: list[str] | None = None,
                    as_of: str | None = None) -> dict[str, Any]:
    """Store one tool result and judge it for this server's subject on ``case``."""
    from .tools import _options, _read_own_case
    from ..agents.tool_results import parse_tool_result
    from ..util.canon import canonical_bytes
    from .. import api

    c = _read_own_case(cfg, case)
    blob = raw.encode("utf-8")
    if len(blob) > MAX_RAW_BYTES:
        raise UsageError(f"raw is {len(blob)} bytes, over the {MAX_RAW_BYTES}-byte limit")
    sha = hashlib.sha256(blob).hexdigest()
    doc = {"tool": tool, "version": version, "call_id": call_id, "arguments": dict(arguments or {}),
           "tenant_id": data_tenant or c.tenant_id, "scopes": list(needs_scopes or []),
           "purposes": list(allowed_purposes or []), "observed_at": observed_at, "max_age": max_age,
           "raw": {"sha256": sha, "size": len(blob), "location": f"tool-results/raw/{sha}"}, "shaped": shaped}
    tr = parse_tool_result(doc, file="add_tool_result")
    rid = tr.result_id()
    opts = _options(cfg, case, as_of, None, None, None)
    opts.tool_results = [tr]
    g = api.gate_tool_results(opts)
    _write_new(_folder(cfg) / "raw" / sha, blob)
    _write_new(_folder(cfg) / f"{rid}.json", canonical_bytes(tr.model_dump(mode="json")))
    out: dict[str, Any] = {"result_id": rid, "raw": {"sha256": sha, "size": len(blob),
                                                     "location": f"tool-results/raw/{sha}"}}
    if g.items:
        out.update(status="admitted", trust=g.items[0]["trust_level"], tokens=g.items[0]["tokens"])
    else:
        om = g.omissions[0]
        out.update(status="withheld" if om["withheld"] else "excluded", gate=om["gate"], reason=om["reason"],
                   detail=om["detail"])
    out["use"] = "pass result_id in investigate's tool_results"
    return out


def handoff(cfg: ServeConfig, *, pack_id: str) -> dict[str, Any]:
    """The handoff document of a pack this server serves (``ctx handoff``)."""
    from .. import api
    from .tools import run_dir

    return api.handoff(run_dir(cfg, pack_id) / "pack.json")
