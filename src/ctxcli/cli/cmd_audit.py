"""ctx audit-call."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .cmd_load import DbOpt, JsonOpt
from .common import emit_json, handle_errors, parse_time


def register(app: typer.Typer) -> None:
    app.command("audit-call")(audit_call)


def audit_call(
    file: Annotated[Path, typer.Argument(help="A recorded agent request: an OpenAI-style chat request (JSON with "
                                         "messages) or an OTLP/JSON trace with GenAI spans.", show_default=False)],
    *,
    case: Annotated[Optional[str], typer.Option("--case", help="Audit for this case's subject, purpose and as_of.",
                                                show_default=False)] = None,
    variant: Annotated[Optional[str], typer.Option("--variant", help="A named variant of --case.",
                                                   show_default=False)] = None,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="Without --case: the tenant.",
                                                  show_default=False)] = None,
    subject: Annotated[Optional[str], typer.Option("--subject", help="The auditing subject (with --case: replaces "
                                                   "the case's).", show_default=False)] = None,
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="A scope of the subject; repeat.",
                                                       show_default=False)] = None,
    clearance: Annotated[Optional[str], typer.Option("--clearance", help="public, internal (default), confidential "
                                                     "or restricted.", show_default=False)] = None,
    purpose: Annotated[Optional[str], typer.Option("--purpose", help="Without --case: the purpose of use.",
                                                   show_default=False)] = None,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="The time the question is about (valid "
                                                 "time), ISO-8601 with offset.",
                                                 show_default=False)] = None,
    known_at: Annotated[Optional[str], typer.Option("--known-at", help="The time of knowledge: only objects "
                                                    "observed by then count as known (default: --as-of).", show_default=False)] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Audit a model call ctx did not build: map each span of a recorded request (message
    contents, tool-call arguments, tool results) to stored objects — by content hash, then by
    locator or object id, then by close text match — and judge it for a subject at as_of:
    admitted, withheld (another tenant, scope, clearance, purpose), invalid_at_as_of, stale,
    tampered, injection (the span or its object carries instructions) or unknown_origin. An
    assistant's own text is judged by the claim checker against what the call gave it before:
    unsupported when it states a false comparison, a cause or a value the call did not give.

    A span that matched an object the subject may not see is reported only by the gate and a
    reference keyed with the store secret (wh-…): never the object's id, source, tenant or text.
    Exit 1 when a span is withheld, injected, invalid, stale, tampered or unsupported; 0 when every span is
    admitted or of unknown origin; 2 for bad input.

    Example: ctx audit-call examples/agent/audit/chat-request.json --case INC-2026-0723
    """
    with handle_errors():
        from .. import api
        from ..errors import UsageError

        if case is None and variant is not None:
            raise UsageError("--variant needs --case")
        if scope and subject is None:
            raise UsageError("--scope needs --subject")
        doc = api.audit_call(file, case=case, variant=variant, tenant=tenant, subject_id=subject,
                             scopes=list(scope) if scope else (None if case else []), clearance=clearance,
                             purpose=purpose,
                             as_of=parse_time(as_of, "--as-of"), known_at=parse_time(known_at, "--known-at"), db=db)
        if as_json:
            emit_json(doc)
        else:
            _human(doc)
        if any(s["status"] not in ("admitted", "unknown_origin") for s in doc["spans"]):
            raise typer.Exit(1)


def _human(doc) -> None:
    from .console import console, safe, show, table

    c = console()
    w = doc["subject"]
    c.print(f"audit of {safe(doc['file'])} ({doc['format']}) for {safe(w['subject'])} · purpose {safe(w['purpose'])}"
            f" · as_of {w['as_of']}")
    t = table("Spans", ["span", "role", "status", "matched"])
    for s in doc["spans"]:
        ms = []
        for m in s["matches"]:
            if m["status"] == "withheld":
                ms.append(f"{m['ref']} (withheld by {m['gate']}, by {m['by']})")
            else:
                ms.append(f"{m['object_id']} ({m['status']}" + (f": {m['gate']} {m['reason']}" if m.get("gate") else "")
                          + f", by {m['by']})")
        if s.get("injection"):
            ms.append(f"injection in the span: {s['injection']['pattern']}")
        ms += [f"{v['code']}: {v['message']}" for v in s.get("output_check", [])]
        t.add_row(safe(s["span"]), safe(s["role"]), s["status"], safe("; ".join(ms)) or "-")
    show(c, t)
    c.print(" · ".join(f"{k} {v}" for k, v in doc["counts"].items()) or "no spans")
