"""ctx handoff."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .cmd_load import DbOpt
from .common import emit_json, handle_errors, parse_time



def register(app: typer.Typer) -> None:
    app.command("handoff")(handoff)
    app.command("receive-handoff")(receive_handoff)


def _is_handoff(raw: bytes) -> bool:
    from ..agents.handoff import looks_like
    from ..write import json_of

    return looks_like(json_of(raw))


def handoff(
    run: Annotated[Path, typer.Argument(help="A run folder written by `ctx investigate`, its pack.json, or `latest`.",
                                        show_default=False)],
    *,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the document here (a new file, or an earlier "
                                                "handoff) instead of printing it.", show_default=False)] = None,
    db: DbOpt = None,
) -> None:
    """Write the handoff document of a run for another agent: every finding (fact or
    inference) bound to its evidence ids and objects, the open uncertainties (hypotheses,
    unknowns, missing evidence types), the recommended next step, and the subject, scopes,
    clearance, purpose and as_of it is valid for, sealed with an HMAC under the store secret.

    Another agent's `build_context` (ctx serve) or `ctx receive-handoff` takes it and re-gates
    it for its own subject: only findings whose every object that subject may see, and whose
    text its view of those objects supports, are passed on.

    Example: ctx handoff latest --out handoff.json
    """
    with handle_errors():
        from .. import api
        from ..run_list import pack_path
        from ..util.canon import pretty_bytes

        doc = api.handoff(pack_path(run), db=db)
        if out is None:
            emit_json(doc)
            return
        from ..write import write_output_file

        write_output_file(out, pretty_bytes(doc), "--out", "ctx handoff", _is_handoff)
        from .console import console, safe

        console().print(f"wrote {safe(out)}: {len(doc['findings'])} finding(s), "
                        f"{len(doc['uncertainties']['claims'])} open claim(s), next step {doc['next_step']['action']}")


def receive_handoff(
    file: Annotated[Path, typer.Argument(help="A handoff document (ctx handoff, or the handoff tool).",
                                         show_default=False)],
    *,
    case: Annotated[str, typer.Option("--case", help="Receive it for this case's subject, purpose and as_of.",
                                      show_default=False)],
    variant: Annotated[Optional[str], typer.Option("--variant", help="A named variant of --case.",
                                                   show_default=False)] = None,
    subject: Annotated[Optional[str], typer.Option("--subject", help="The receiving subject (replaces the "
                                                   "case's).", show_default=False)] = None,
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="A scope of --subject; repeat.",
                                                       show_default=False)] = None,
    clearance: Annotated[Optional[str], typer.Option("--clearance", help="The clearance of --subject.",
                                                     show_default=False)] = None,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="The time the question is about (valid "
                                                 "time), ISO-8601 with offset.",
                                                 show_default=False)] = None,
    db: DbOpt = None,
) -> None:
    """Receive another agent's handoff for a subject: print (JSON) the findings, open
    claims, missing types and next step that subject may be handed, re-gated at its as_of.

    A handoff whose seal does not verify under this store's secret (edited after it was
    sealed, or sealed elsewhere) is refused whole: exit 2, nothing of it printed. A finding
    resting on an object the subject may not see is dropped and counted (`withheld`); one
    whose text carries a value the subject's masks hide, a value its cited objects do not
    hold, or instruction-like text is dropped with its reason (`dropped`).

    Example: ctx receive-handoff handoff.json --case INC-2026-0723 --subject worker-01 --scope incident:read
    """
    with handle_errors():
        from .. import api
        from ..errors import UsageError

        if scope and subject is None:
            raise UsageError("--scope needs --subject")
        doc = api.read_handoff(file)
        opts = api.InvestigateOptions(case=case, variant=variant, subject_id=subject,
                                      scopes=list(scope) if scope else None, clearance=clearance,
                                      as_of=parse_time(as_of, "--as-of"), db=db)
        emit_json(api.receive_handoff(opts, doc))
