"""ctx serve: the MCP server for agents."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from .cmd_load import DbOpt
from .common import handle_errors


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)


def serve(
    *,
    transport: Annotated[Transport, typer.Option("--transport", help="stdio (an agent starts ctx as a "
                                                 "subprocess) or http (streamable HTTP at /mcp).")] = Transport.stdio,
    host: Annotated[str, typer.Option("--host", help="Address to listen on with --transport http.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port with --transport http.")] = 8765,
    auth_token: Annotated[Optional[str], typer.Option("--auth-token", envvar="CTX_SERVE_TOKEN",
                                                      help="Bearer token every HTTP request must carry (at least "
                                                      "32 characters; required off loopback; prefer the "
                                                      "environment variable, which `ps` does not show).",
                                                      show_default=False)] = None,
    allowed_host: Annotated[Optional[list[str]], typer.Option("--allowed-host", help="A Host header value "
                                                              "callers use (NAME or NAME:PORT); repeat. Loopback "
                                                              "names are always allowed on a loopback --host.",
                                                              show_default=False)] = None,
    db: DbOpt = None,
    subject: Annotated[Optional[str], typer.Option("--subject", help="Fixed subject id for every call (default: "
                                                   "each case's own subject).", show_default=False)] = None,
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="A scope of the fixed subject; repeat.",
                                                       show_default=False)] = None,
    purpose: Annotated[Optional[str], typer.Option("--purpose", help="Fixed purpose of use (default: each "
                                                   "case's purpose).", show_default=False)] = None,
    clearance: Annotated[Optional[str], typer.Option("--clearance", help="Highest source classification the "
                                                     "fixed subject may read: public, internal, confidential or "
                                                     "restricted (default: internal; needs --subject).",
                                                     show_default=False)] = None,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="Tenant of ad-hoc investigations (playbook + "
                                                  "seeds); a case file names its own.", show_default=False)] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help="YAML file with subject, scopes, purpose, "
                                                   "clearance, tenant, db, runs_dir, audit_log (flags win).",
                                                   show_default=False)] = None,
    runs: Annotated[Optional[Path], typer.Option("--runs", help="Folder for the run folders the server writes "
                                                 "(default: runs/serve/).", show_default=False)] = None,
    audit_log: Annotated[Optional[Path], typer.Option("--audit-log", help="JSON-lines audit log of every tool "
                                                      "call (default: <runs>/audit.jsonl).",
                                                      show_default=False)] = None,
    no_runs: Annotated[bool, typer.Option("--no-runs", help="Write no run folder and no ledger record for "
                                          "investigate and build_context calls (each result says so).")] = False,
) -> None:
    """Serve ctx to agents over the Model Context Protocol, read-only over the store.

    Tools: investigate (a case, or ad hoc: playbook + seeds), build_context (one agent step: a
    case or playbook + seeds, with tool results, a session's working state and recalled memory),
    explain_omission, replay, diff, render. Every investigate and build_context call is written
    as a run (a run folder under --runs and a ledger record) unless --no-runs is given.
    Resources: ctx://packs (the packs this server wrote), ctx://packs/{pack_id} and its /trace,
    /answer and /messages. The subject, scopes, clearance, purpose and the tenant of ad-hoc
    runs are fixed here, never by a tool argument; every call is appended to the audit log.
    The store must exist (`ctx load`): exit 2 for bad flags or no store, 3 when the store is
    busy, unusable, or loaded from older manifests than the project's (run `ctx load`).
    Over HTTP, a --host that is not a loopback address needs a bearer token (--auth-token or
    $CTX_SERVE_TOKEN; exit 2 without one), and only the listed Host headers are answered (the
    address itself and each --allowed-host).

    Example: ctx serve --transport stdio --subject investigator-01 --scope case:read --scope policy:read
    --clearance confidential --purpose claim_review --tenant tenant-demo
    """
    with handle_errors():
        from ..util.distribution import require_extra

        require_extra("serve", "mcp", "ctx serve")      # the MCP server stack, before any work
        from ..serve import load_config
        from ..serve.http import http_settings
        from ..serve.server import serve as run_server
        from ..store import keep_connections, open_store

        cfg = load_config(db=db, runs_dir=runs, audit_log=audit_log, subject_id=subject,
                          scopes=list(scope) if scope else None, purpose=purpose, config_file=config,
                          clearance=clearance, tenant=tenant, no_runs=no_runs)
        if transport is Transport.http:     # refused before the store is opened or anything listens
            http_settings(host, port, auth_token, list(allowed_host or []))
        keep_connections(cfg.db)            # the store stays open across tool calls (store/readers.py)
        con = open_store(cfg.db)            # fail now, with one line, if the store is missing or broken,
        try:                                # or loaded from older manifests (exit 3, naming the sources)
            from .. import api

            with con.errors():
                api.require_current_manifests(con)
        finally:
            con.close()
        run_server(cfg, transport=transport.value, host=host, port=port, auth_token=auth_token,
                   allowed_hosts=list(allowed_host or []))
