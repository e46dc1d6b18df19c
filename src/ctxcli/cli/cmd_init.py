"""ctx init."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    app.command("init")(init)


def init(
    folder: Annotated[Path, typer.Argument(help="The project folder (created if missing).")] = Path("."),
    *,
    example: Annotated[Optional[str], typer.Option("--example", help="Write a bundled example project instead "
                                                   "of the empty one: claims, incident, or agent "
                                                   "(the incident example and the agent loop).",
                                                   metavar="NAME", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a stable JSON document instead of text.")] = False,
) -> None:
    """Start a ctx project: ctx.toml, manifests/ (sources and playbooks), sources/ and a case.

    Without --example the project is a small commented expense-review domain to edit
    (docs/authoring.md explains every file); --example claims or incident writes a bundled
    domain, and --example agent the incident domain with the agent loop's files (examples/agent/:
    tool results, a working state, a recorded external agent call; docs/agents.md). A
    .gitignore keeps the store, its secret.key and the run folders out of git. No existing file
    is ever overwritten: if one is in the way nothing is written (exit 2); a .gitignore already
    there is kept as it is.

    Example: ctx init my-project --example claims && cd my-project && ctx load && ctx investigate C-102
    """
    with handle_errors():
        import sys

        from ..scaffold import init_project

        res = init_project(folder, example)
        if as_json:
            emit_json({"root": str(res.root), "example": res.example, "files": res.files,
                       "kept": res.kept, "next_steps": res.next_steps})
            return
        what = f"the {res.example} example" if res.example else "a new project"
        steps = res.next_steps
        if Path(folder).resolve() != Path.cwd().resolve():
            steps = [f"cd {folder}", *steps]
        sys.stdout.write(f"wrote {what} into {res.root} ({len(res.files)} files)\n")
        if res.kept:
            from ..scaffold import GITIGNORE

            sys.stdout.write(f"kept the {GITIGNORE} that was there: make sure it ignores /.ctx/ (the store and "
                             "its secret.key) and /runs/\n")
        sys.stdout.write("next: " + " && ".join(steps) + "\n")
