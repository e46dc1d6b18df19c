"""ctx handoff."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit_json, handle_errors



def register(app: typer.Typer) -> None:
    app.command("handoff")(handoff)


def _is_handoff(raw: bytes) -> bool:
    from ..agents.handoff import verify
    from ..write import json_of

    return verify(json_of(raw)) is None


def handoff(
    run: Annotated[Path, typer.Argument(help="A run folder written by `ctx investigate`, its pack.json, or `latest`.",
                                        show_default=False)],
    *,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the document here (a new file, or an earlier "
                                                "handoff) instead of printing it.", show_default=False)] = None,
) -> None:
    """Write the handoff document of a run for another agent: every finding (fact or
    inference) bound to its evidence ids and objects, the open uncertainties (hypotheses,
    unknowns, missing evidence types), the recommended next step, and the subject, scopes,
    clearance, purpose and as_of it is valid for, sealed with a content hash.

    Another agent's `build_context` (ctx serve) takes it as `handoff` and re-gates it for its
    own subject: only findings whose every object that subject may see are passed on.

    Example: ctx handoff latest --out handoff.json
    """
    with handle_errors():
        from .. import api
        from ..runs import pack_path
        from ..util.canon import pretty_bytes

        doc = api.handoff(pack_path(run))
        if out is None:
            emit_json(doc)
            return
        from ..write import write_output_file

        write_output_file(out, pretty_bytes(doc), "--out", "ctx handoff", _is_handoff)
        from .console import console, safe

        console().print(f"wrote {safe(out)}: {len(doc['findings'])} finding(s), "
                        f"{len(doc['uncertainties']['claims'])} open claim(s), next step {doc['next_step']['action']}")
