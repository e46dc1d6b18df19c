"""ctx runs."""

from __future__ import annotations

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
) -> None:
    """List the project's run folders, newest first: case, variant, subject, valid time,
    verdict, whether run.json is signed, and when the pack was written.

    Runs are found under the project's runs folder (ctx.toml `runs`, default runs/). The first
    row is what `latest` names in every command that reads a run (replay, explain-omissions,
    diff, render, report, validate-answer). Nothing is verified here: `ctx replay` verifies.

    Example: ctx runs --case C-102
    """
    with handle_errors():
        from .. import runs as _runs
        from .console import console, safe, show, table

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
