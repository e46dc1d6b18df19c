"""ctx ledger verify: check the run ledger's hash chain."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .cmd_load import JsonOpt
from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    """A new sub-app per call: the start-up path and the full app may each register the module."""
    ledger_app = typer.Typer(name="ledger", help="The run ledger: one record per investigate, ask and "
                             "replay, chained with the store secret, beside the store.\n\nExample: ctx ledger verify",
                             no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(ledger_app)
    ledger_app.command("verify")(verify)


def _span(seqs: list[int]) -> str:
    return f"record {seqs[0]}" if len(seqs) == 1 else f"records {seqs[0]}-{seqs[-1]}"


def verify(*, db: Annotated[Optional[Path], typer.Option("--db", help="The store whose ledger to check "
                                                          "(default: the project's).", show_default=False)] = None,
           keyed: Annotated[bool, typer.Option("--keyed", help="Also exit 1 when records are not covered by the "
                                               "keyed chain (a ledger written before ctx keyed it).")] = False,
           as_json: JsonOpt = False) -> None:
    """Check the ledger (ledger.jsonl beside the store): every record's hash is its content's,
    keyed with the store secret (HMAC-SHA256), names the hash of the one before, and seq runs
    without a gap; every outbox event carries a record of the ledger (so deleting the newest
    records is found too). Records written before the chain was keyed (plain SHA-256) are
    sealed by the first keyed record after them; a ledger of such records only is reported as
    not keyed, never as intact. A commit left by a killed process is finished or undone first.
    Exit 0 intact (or consistent but not keyed), 1 edited, deleted or unverifiable records (each
    named by line and record number), or with --keyed records the keyed chain does not cover.

    Example: ctx ledger verify
    """
    with handle_errors():
        from ..errors import CheckFailed
        from ..ledger.idempotency import verify_ledger
        from .console import console, safe

        res = verify_ledger(db)
        fail = not res.ok or (keyed and not res.keyed)
        if as_json:
            emit_json({"ok": res.ok, "keyed": res.keyed, "records": res.records, "events": res.events,
                       "unkeyed_records": res.unkeyed, "unsealed_records": res.unsealed, "problems": res.problems})
        else:
            c = console()
            counts = f"{res.records} record(s), {res.events} outbox event(s)"
            if res.ok and res.unsealed:
                c.print(f"ledger consistent but NOT keyed: {counts}; {_span(res.unsealed)} chained with plain "
                        f"SHA-256 (written before ctx keyed its ledger): an edit re-chained by hand cannot be "
                        f"detected until the next run appends a keyed record that seals them")
            elif res.ok:
                sealed = f"; {_span(res.unkeyed)} (plain SHA-256, older) sealed by the keyed chain" if res.unkeyed else ""
                c.print(f"ledger intact: {counts}, chained with HMAC-SHA256 and the store secret{sealed}")
            for p in res.problems:
                c.print(safe(f"- {p}"))
        if fail:
            raise typer.Exit(CheckFailed.exit_code)
