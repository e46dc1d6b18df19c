"""ctx ledger verify: check the run ledger's hash chain."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .cmd_load import JsonOpt
from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    """A new sub-app per call: the start-up path and the full app may each register the module."""
    ledger_app = typer.Typer(name="ledger", help="The run ledger: one hash-chained record per investigate, ask and "
                             "replay, beside the store.\n\nExample: ctx ledger verify",
                             no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(ledger_app)
    ledger_app.command("verify")(verify)


def verify(*, db: Annotated[Optional[Path], typer.Option("--db", help="The store whose ledger to check "
                                                          "(default: the project's).", show_default=False)] = None,
           as_json: JsonOpt = False) -> None:
    """Check the ledger (ledger.jsonl beside the store): every record hashes to its recorded
    hash, names the hash of the one before, and seq runs without a gap; every outbox event
    carries a record of the ledger (so deleting the newest records is found too). A commit
    left by a killed process is finished or undone first. Exit 0 intact, 1 edited or deleted
    records (each named by line and record number).

    Example: ctx ledger verify
    """
    with handle_errors():
        from ..errors import CheckFailed
        from ..ledger.runs import verify_ledger
        from .console import console, safe

        res = verify_ledger(db)
        if as_json:
            emit_json({"ok": res.ok, "records": res.records, "events": res.events, "problems": res.problems})
        else:
            c = console()
            if res.ok:
                c.print(f"ledger intact: {res.records} record(s), {res.events} outbox event(s)")
            for p in res.problems:
                c.print(safe(f"- {p}"))
        if not res.ok:
            raise typer.Exit(CheckFailed.exit_code)
