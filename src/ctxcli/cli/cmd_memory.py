"""ctx remember, ctx forget: durable memory records (docs/agents.md, "Memory records")."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit_json, handle_errors, parse_time


def register(app: typer.Typer) -> None:
    app.command("remember")(remember)
    app.command("forget")(forget)


def remember(
    text: Annotated[str, typer.Argument(help="What to remember (scanned for injected instructions on every use).",
                                        show_default=False)],
    *,
    tenant: Annotated[str, typer.Option("--tenant", help="Whose data the record is.", show_default=False)],
    subject: Annotated[str, typer.Option("--subject", help="The subject it is remembered for: only that subject "
                                         "recalls it.", show_default=False)],
    ttl: Annotated[str, typer.Option("--ttl", help="How long it lives: '90m', '24h', '30d' or seconds. Required: "
                                     "a memory record always expires.", show_default=False)],
    reviewed_by: Annotated[Optional[str], typer.Option("--reviewed-by", help="Who reviewed the record. Required: "
                                                       "no memory is written without an explicit review.",
                                                       show_default=False)] = None,
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="A scope a subject needs to recall it; "
                                                       "repeat.", show_default=False)] = None,
    purpose: Annotated[Optional[list[str]], typer.Option("--purpose", help="A purpose it may serve; repeat "
                                                         "(none: any).", show_default=False)] = None,
    source: Annotated[Optional[str], typer.Option("--source", help="Where it came from (a pack id, a message id).",
                                                  show_default=False)] = None,
    at: Annotated[Optional[str], typer.Option("--at", help="When it is written (ISO 8601 with offset; default "
                                              "now).", show_default=False)] = None,
    memories: Annotated[Optional[Path], typer.Option("--memories", help="The memory records' folder (default: "
                                                     "<runs>/memory).", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the record's id, expiry and file as JSON.")] = False,
) -> None:
    """Write one durable memory record to <runs>/memory/: only with --reviewed-by, always
    with a --ttl. `ctx investigate --recall` gates every record on every use (tenant,
    subject, scope, purpose, written before as_of, not expired, reviewed, no injected
    instruction, budget) and packs what passes in the episodic_memory section; a record never
    overrides the current request. `ctx forget ID` deletes it.

    Example: ctx remember "db-pool alerts page the payments on-call first" --tenant tenant-demo --subject oncall-03 --ttl 30d --reviewed-by lead-01
    """
    with handle_errors():
        from .. import api

        res = api.remember(tenant_id=tenant, subject_id=subject, text=text, ttl=ttl, reviewed_by=reviewed_by,
                           at=parse_time(at, "--at"), scopes=scope, purposes=purpose, source=source,
                           folder=memories)
        if as_json:
            emit_json(res)
            return
        from .console import console, safe

        console().print(f"remembered {res['memory_id']} (expires {res['expires_at']})")
        console().print(f"  {safe(res['path'])}")


def forget(
    memory_id: Annotated[str, typer.Argument(help="The record's id (mem-…).", show_default=False)],
    *,
    memories: Annotated[Optional[Path], typer.Option("--memories", help="The memory records' folder (default: "
                                                     "<runs>/memory).", show_default=False)] = None,
) -> None:
    """Delete one durable memory record from <runs>/memory/ (exit 1 when there is none).

    Example: ctx forget mem-0123456789ab
    """
    with handle_errors():
        from .. import api
        from .console import console

        if not api.forget(memory_id, folder=memories):
            console().print(f"no memory record {memory_id}")
            raise typer.Exit(1)
        console().print(f"forgot {memory_id}")
