"""ctx check."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    app.command("check")(check)


def check(
    paths: Annotated[Optional[list[Path]], typer.Argument(
        help="Manifests, playbooks, case files or folders of them (default: the project's manifests/ "
             "and examples/cases/).", show_default=False)] = None,
    *,
    as_json: Annotated[bool, typer.Option("--json", help="Print a stable JSON document instead of lines.")] = False,
) -> None:
    """Validate manifests, playbooks and case files without loading anything.

    Every name used in expr, when, claim texts and uses must be defined before use; evidence
    types referenced must exist; path templates must use edge types the sources declare; every
    required type needs a retrieval route; a case's playbook, purpose, seeds and params must
    resolve. Each problem is one line file:line:column: message. A case whose subject's
    clearance is below the classification of every source of one of its evidence types, and
    rules of one playbook that give one object two evidence types, get a "warning:" line
    (warnings do not fail the check). Without paths the store is compared with the manifests:
    a source whose manifest changed since `ctx load`, or that no manifest declares any more, is
    a problem; one whose manifest was added since is a "note:" line (not loaded yet). Exit 0
    clean (warnings and notes allowed), 1 problems found, 2 unusable input (no such path, not a
    manifest/playbook/case).

    Every field a source manifest's mapping names must be a column, record key or front-matter
    key of some record of its source: else one problem at the manifest's line, with a
    did-you-mean.

    Example: ctx check manifests/playbooks examples/cases/C-102.yaml
    """
    with handle_errors():
        import sys

        from .. import api

        rep = api.check(list(paths or []))
        if as_json:
            emit_json(rep.to_json())
        else:
            for p in rep.problems:
                sys.stdout.write(f"{p}\n")
            for w in rep.warnings:
                sys.stdout.write(f"warning: {w}\n")
            for n in rep.notes:
                sys.stdout.write(f"note: {n}\n")
            sys.stderr.write(f"checked {len(rep.checked)} file(s): "
                             + (f"{len(rep.problems)} problem(s)" if rep.problems else "no problems")
                             + (f", {len(rep.warnings)} warning(s)" if rep.warnings else "")
                             + (f", {len(rep.notes)} note(s)\n" if rep.notes else "\n"))
        if rep.problems:
            from ..errors import ExitCode

            raise typer.Exit(ExitCode.FAILED)
