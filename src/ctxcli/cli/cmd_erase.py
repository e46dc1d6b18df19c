"""ctx erase: record an erasure, and apply the recorded ones to every run folder already written."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .cmd_load import JsonOpt
from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    app.command("erase")(erase)


def erase(
    object_id: Annotated[Optional[str], typer.Argument(help="The id of the object to erase.",
                                                       show_default=False)] = None,
    *,
    reason: Annotated[Optional[str], typer.Option("--reason", help="Why (recorded in every pack it reaches).",
                                                  show_default=False)] = None,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="Only the object of this tenant (default: "
                                                  "every tenant's object with this id).", show_default=False)] = None,
    by: Annotated[Optional[str], typer.Option("--by", help="Who erases it (default: $USER).",
                                              show_default=False)] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Rewrite every run folder of the project that holds an "
                                        "erased object, and drop kept store generations that hold one.")] = False,
    redact_text: Annotated[bool, typer.Option("--redact-text", help="Retention: run folders older than the "
                                              "retention period (--older-than, else [retention] text_days in "
                                              "ctx.toml) keep only ids, hashes and decisions.")] = False,
    older_than: Annotated[Optional[int], typer.Option("--older-than", help="With --redact-text: the retention "
                                                      "period in days.", show_default=False)] = None,
    db: Annotated[Optional[Path], typer.Option("--db", help="The store whose ledger records the erasures "
                                               "(default: the project's).", show_default=False)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Record that an object must be erased (OBJECT_ID --reason …; every tombstone `ctx load`
    finds is recorded too), and with --apply remove the content of every erased object from
    the run folders already written: in each run folder ctx wrote under the runs folder or named
    in the ledger, the object's evidence text, title and facts are removed (its hashes kept),
    every other occurrence of its text, sentences, title or facts in the run's files becomes
    "[erased]", the pack records the erasure (who, when, why) and is sealed anew (keeping its
    id), and run.json is re-sealed (re-signed with $CTX_SIGNING_KEY when the run was signed with
    it, else marked re-sealed and unsigned). Kept store generations other than the live store
    that hold an erased object are removed; the live store keeps it until its source drops it
    (a tombstone) and `ctx load` runs. `ctx replay` of such a pack says "erased on …".
    A file ctx did not write inside a run folder is left as it is and reported ("skipped"); the
    folder's own files and every other folder are still rewritten. The plain digests of an
    erased text become digests keyed with the store secret. An erasure applies to every new
    run (investigate, ask, eval, the MCP tools, replay) from the moment it is recorded: the
    object, and any copy of its text under another id, is omitted as "erased" before its
    content is read.
    Retention: --redact-text removes every evidence text and title (hashes and decisions
    stay) from the run folders older than --older-than DAYS (else [retention] text_days in
    ctx.toml); `ctx investigate --no-text` writes packs that way from the start.

    Example: ctx erase DOC-C102-003 --reason "GDPR request 2026-118"
    """
    with handle_errors():
        from ..errors import UsageError
        from ..ledger import erasure
        from .console import console, safe

        if object_id is None and not apply and not redact_text:
            raise UsageError("give an OBJECT_ID with --reason to record an erasure, or --apply to apply them")
        out: dict = {}
        if redact_text:
            if object_id is not None or apply:
                raise UsageError("--redact-text applies the retention period alone (no OBJECT_ID, no --apply)")
            res = erasure.redact_text(db, older_than=older_than)
            if as_json:
                emit_json({"redacted": res["rewritten"]})
            else:
                console().print(f"retention: removed the evidence text of {len(res['rewritten'])} run folder(s)")
                for f in res["rewritten"]:
                    console().print(safe(f"  {f}"))
            return
        if object_id is not None:
            e, new = erasure.record(object_id, reason=reason or "", by=by, tenant=tenant, db=db)
            out["erasure"] = e
            out["new"] = new
        if apply:
            out["applied"] = erasure.apply(db)
        if as_json:
            emit_json(out)
            return
        c = console()
        if object_id is not None:
            e = out["erasure"]
            c.print(safe(f"erasure of {e['object_id']} " + ("recorded" if out["new"] else
                                                           f"already recorded on {e['at']}")
                         + ("" if apply else "; `ctx erase --apply` removes it from the run folders")))
        if apply:
            a = out["applied"]
            c.print(f"{a['erasures']} erasure(s): rewrote {len(a['rewritten'])} run folder(s)")
            for f in a["rewritten"]:
                c.print(safe(f"  {f}"))
            for sk in a["skipped"]:
                c.print(safe(f"skipped {sk['file']}: {sk['why']}"))
            if a["generations_dropped"]:
                c.print(f"removed store generation(s) {', '.join(map(str, a['generations_dropped']))}")
            if a["current_store_holds"]:
                c.print(safe(f"the live store still holds {', '.join(a['current_store_holds'])}: tombstone it in "
                             f"its source and run `ctx load`"))
