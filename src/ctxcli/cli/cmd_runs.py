"""ctx runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    app.command("runs")(runs)


def runs(
    *,
    case: Annotated[Optional[str], typer.Option("--case", help="Only the runs of this case id.",
                                                show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a stable JSON list instead of a table.")] = False,
    ledger: Annotated[bool, typer.Option("--ledger", help="List the ledger's records (every investigate, ask and "
                                         "replay, with who, what and when) instead of the run folders.")] = False,
    subject: Annotated[Optional[str], typer.Option("--subject", help="With --ledger: only this subject's runs.",
                                                   show_default=False)] = None,
    command: Annotated[Optional[str], typer.Option("--command", help="With --ledger: only investigate, ask, "
                                                   "replay or build_context (a ctx serve step).",
                                                   show_default=False)] = None,
    verdict: Annotated[Optional[str], typer.Option("--verdict", help="With --ledger: only runs with this verdict.",
                                                   show_default=False)] = None,
    db: Annotated[Optional[Path], typer.Option("--db", help="With --ledger: the store whose ledger to read "
                                               "(default: the project's).", show_default=False)] = None,
) -> None:
    """List the project's run folders, newest first: case, variant, subject, valid time,
    verdict, whether run.json is signed, and when the pack was written.

    Runs are found under the project's runs folder (ctx.toml `runs`, default runs/) and, when
    written with --out elsewhere inside the project, where they were written (ctx notes them in
    .ctx/run-folders); a run folder outside the project is not listed. The first
    row is what `latest` names in every command that reads a run (replay, explain-omissions,
    diff, render, report, validate-answer). Nothing is verified here: `ctx replay` verifies.

    With --ledger, the ledger beside the store is read instead (filters --case, --subject,
    --command, --verdict): run id, command, subject, verdict, pack, generation and wall time of
    every recorded run, newest first; `ctx ledger verify` checks its hash chain.

    Example: ctx runs --case C-102
    """
    with handle_errors():
        from .. import run_list as _runs
        from .console import console, safe, show, table

        if ledger or subject or command or verdict:
            from ..errors import UsageError
            from ..ledger.records import COMMANDS
            from ..ledger.idempotency import ledger_runs

            if command is not None and command not in COMMANDS:
                raise UsageError(f"--command {command!r}: one of {', '.join(COMMANDS)}")
            recs = ledger_runs(db, case_id=case, subject=subject, command=command, verdict=verdict)
            if as_json:
                emit_json(recs)
                return
            if not recs:
                console(stderr=True).print("no runs recorded in the ledger")
                return
            t = table("Ledger (newest first)", ["seq", "run", "command", "case", "subject", "verdict", "pack",
                                                "generation", "wall time (UTC)"])
            for r in recs:
                t.add_row(str(r.get("seq")), safe(r.get("run_id") or "?"), safe(r.get("command") or "?"),
                          safe(r.get("case_id") or "?"), safe(r.get("subject") or "?"), safe(r.get("verdict") or "-"),
                          safe(r.get("pack_id") or "?"), str(r.get("generation") if r.get("generation") is not None
                                                             else "-"), safe(str(r.get("wall_time"))[:19]))
            show(console(), t)
            return

        rows = _runs.list_runs(case=case)
        if as_json:
            emit_json([r.to_json() for r in rows])
            return
        if not rows:
            console(stderr=True).print("no runs yet (ctx investigate writes them)")
            return
        t = table("Runs (newest first; the first is `latest`)",
                  ["folder", "case", "variant", "subject", "verdict", "signed", "written (UTC)"])
        for r in rows:
            t.add_row(safe(r.folder), safe(r.case_id or "?"), safe(r.variant or "-"), safe(r.subject or "?"),
                      safe(r.verdict or "?"), "yes" if r.signed else "no", r.written_at[:19].replace("T", " "))
        show(console(), t)
