"""ctx schema."""

from __future__ import annotations

import sys
from typing import Annotated, Optional

import typer

from .common import handle_errors


def register(app: typer.Typer) -> None:
    app.command("schema")(schema)


def schema(
    name: Annotated[Optional[str], typer.Argument(help="pack, answer, timings, case, playbook, source-manifest, "
                                                  "source-mapping, record.KIND (object, entity, relation, tombstone, "
                                                  "front-matter) or trace.EVENT (e.g. trace.run_started). Omit to "
                                                  "list them.",
                                                  show_default=False)] = None,
) -> None:
    """Print the JSON Schema (draft 2020-12) of a file ctx reads or writes, as shipped with ctx;
    without NAME, list the schema names. The schemas are generated from ctx's models and
    tests validate every bundled run's files against them.

    Example: ctx schema trace.run_started
    """
    with handle_errors():
        from ..errors import UsageError
        from ..schemas import names, path

        known = names()
        if name is None:
            sys.stdout.write("".join(n + "\n" for n in known))
            return
        if name not in known:
            raise UsageError(f"no schema {name!r} (known: {', '.join(known)})")
        sys.stdout.buffer.write(path(name).read_bytes())
