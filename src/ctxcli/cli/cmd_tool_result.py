"""ctx tool-result shape: a tool's raw rows shaped by ctx as the tool registry declares."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit_json, handle_errors, parse_time


def register(app: typer.Typer) -> None:
    """A new sub-app per call: the start-up path and the full app may each register the module."""
    tr_app = typer.Typer(name="tool-result", help="Tool results an agent hands in: shape a tool's raw rows into "
                         "verified facts as the tool registry declares.\n\n"
                         "Example: ctx tool-result shape examples/agent/retail/sales-store_001-2026-07-08.csv "
                         "--tool sales.query --registry examples/agent/retail/tools.yaml --tenant tenant-retail "
                         "--observed-at 2026-09-02T09:00:00+07:00",
                         no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(tr_app)
    tr_app.command("shape")(shape)


def _is_tool_result(raw: bytes) -> bool:
    from ..write import json_of

    doc = json_of(raw)
    return isinstance(doc, dict) and "tool" in doc and "shaped" in doc


def shape(
    raw: Annotated[Path, typer.Argument(help="The tool's raw result: a JSON array, JSON lines, CSV or Parquet file.",
                                        show_default=False)],
    *,
    tool: Annotated[str, typer.Option("--tool", help="The tool's name in the registry; its `shape` declares the "
                                      "shaping.", show_default=False)],
    tenant: Annotated[str, typer.Option("--tenant", help="Whose data the result is (tenant_id).",
                                        show_default=False)],
    observed_at: Annotated[str, typer.Option("--observed-at", help="When the tool observed it, ISO-8601 with "
                                             "offset.", show_default=False)],
    registry: Annotated[Optional[Path], typer.Option("--registry", help="The tool registry (default: the "
                                                     "project's manifests/tools.yaml).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the tool result here (a new file, or an "
                                                "earlier tool result) instead of printing it; raw.path is then "
                                                "relative to its folder.", show_default=False)] = None,
    tool_version: Annotated[Optional[str], typer.Option("--tool-version", help="The tool's version (default: the "
                                                        "registry's `version`).", show_default=False)] = None,
    call_id: Annotated[Optional[str], typer.Option("--call-id", help="The agent's id of the call.",
                                                   show_default=False)] = None,
    arguments: Annotated[Optional[str], typer.Option("--arguments", help="The call's arguments, a JSON object.",
                                                     show_default=False)] = None,
    max_age: Annotated[Optional[str], typer.Option("--max-age", help="Older than this at as_of is stale: 15m, "
                                                   "24h, 30d.", show_default=False)] = None,
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="A scope a subject needs to see it; "
                                                       "repeat.", show_default=False)] = None,
    purpose: Annotated[Optional[list[str]], typer.Option("--purpose", help="A purpose it may serve; repeat "
                                                         "(none: any).", show_default=False)] = None,
) -> None:
    """Shape a tool's raw result as the tool registry declares for --tool (filters, group_by,
    sum/count/min/max/avg, a period comparison with percentage change, a row limit, fixed
    limitations), computed by DuckDB over the raw rows. Writes a tool-result document for
    `ctx investigate --tool-result`: the facts (`verified: true`), the limitations, and the
    raw result by reference (path, sha256, row count); the raw rows never reach a model.

    Example: ctx tool-result shape examples/agent/retail/sales-store_001-2026-07-08.csv --tool sales.query --registry examples/agent/retail/tools.yaml --tenant tenant-retail --observed-at 2026-09-02T09:00:00+07:00
    """
    with handle_errors():
        from .. import api
        from ..errors import UsageError

        parse_time(observed_at, "--observed-at")
        if registry is not None and not registry.is_file():
            raise UsageError(f"--registry {registry}: no such file")
        if not raw.is_file():
            raise UsageError(f"{raw}: no such file")
        args = None
        if arguments is not None:
            from ..write import json_of

            args = json_of(arguments.encode("utf-8"))
            if not isinstance(args, dict):
                raise UsageError("--arguments must be a JSON object")
        doc = api.shape_tool_result(raw, tool=tool, tenant_id=tenant, observed_at=observed_at, registry=registry,
                                    out_dir=out.parent if out is not None else None, version=tool_version,
                                    call_id=call_id, arguments=args, max_age=max_age, scopes=scope, purposes=purpose)
        if out is None:
            emit_json(doc)
            return
        from ..util.canon import pretty_bytes
        from ..write import write_output_file

        write_output_file(out, pretty_bytes(doc), "--out", "ctx tool-result shape", _is_tool_result)
        from .console import console, safe

        console().print(f"wrote {safe(out)}: {len(doc['shaped']['facts'])} fact(s) from {doc['raw']['rows']} raw "
                        f"row(s)")
