"""ctx report: one self-contained HTML page per run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    app.command("report")(report)


def report(
    run: Annotated[Path, typer.Argument(help="A run folder written by `ctx investigate`, its pack.json, or "
                                        "`latest` (the newest run).",
                                        show_default=False)],
    *,
    compare: Annotated[Optional[Path], typer.Option("--compare", help="Another run folder or pack.json: show "
                                                    "the `ctx diff` of this run against it, side by side.",
                                                    show_default=False, metavar="OTHER")] = None,
    db: Annotated[Optional[str], typer.Option("--db", help="With --compare: the store both runs were built on; "
                                              "its secret matches an object withheld in one run to its id in the "
                                              "other, as `ctx diff` does (default: $CTX_DB or .ctx/ctx.duckdb; "
                                              "never created).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="The HTML file to write (default: report.html "
                                                "beside the pack). An existing file is replaced only if ctx "
                                                "report wrote it.", show_default=False,
                                                metavar="FILE.html")] = None,
    audit: Annotated[Optional[Path], typer.Option("--audit", help="A `ctx audit-call --json` document made for "
                                                  "this run's subject: shown as the page's audit section.",
                                                  show_default=False, metavar="AUDIT.json")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary (file written, pack id, size, "
                                          "sha256, notes) instead of one line.")] = False,
) -> None:
    """Write one self-contained HTML page for a run: verdict, action and claims with their
    epistemic status; every cited evidence id linked to its evidence card (source, trust,
    locator, validity, observed time, tokens, transformations, the text as packed); the token
    budget by slot and evidence type; omissions by gate in gate order with the facts that
    decided them and what would have admitted them; the retrieval of each round; the trace as
    a timeline; with --compare, the `ctx diff` against another run side by side (the same
    comparison, counts and reasons as `ctx diff` with the same --db); with --audit, the spans
    of a `ctx audit-call --json` document made for this run's subject (an audit made for any
    other subject, scopes, clearance or purpose is refused, exit 2).

    The pack is verified first (a tampered pack is refused, exit 2); trace.jsonl and
    answer.json beside it are shown only when they belong to it. The page has no script and
    loads nothing (no network, no fonts); withheld objects appear only as opaque references.
    On a phone its tables become stacked rows and ids wrap only after a separator; printed, it
    has a layout of its own (A4, tables with their headings, no navigation). The same run
    always gives the same bytes.

    Example: ctx report runs/default --compare runs/restricted
    """
    with handle_errors():
        from ..report import load_run, pack_path, render, write_report
        from ..util.canon import sha256_hex

        a = load_run(run)
        b = load_run(compare) if compare is not None else None
        key = None
        if b is not None:       # what `ctx diff` matches withheld objects with
            from .. import api, paths

            key = api.store_key(paths.db_path(db), create=False)
        target = Path(out) if out is not None else pack_path(run).parent / "report.html"
        section = None
        if audit is not None:       # refused (exit 2) unless made for this run's subject
            from ..report.audit import read_audit

            section = read_audit(audit, a.pack)
        page = render(a, b, key=key, audit=section).encode("utf-8")
        write_report(target, page, "--out" if out is not None else "report")
        doc = {"out": str(target), "pack_id": a.lp.pack_id, "compare": b.lp.pack_id if b else None,
               "bytes": len(page), "sha256": "sha256:" + sha256_hex(page), "notes": a.notes}
        if as_json:
            emit_json(doc)
            return
        from .console import console, safe

        c = console()
        what = f"{len(a.pack['evidence'])} evidence, {len(a.pack['omissions'])} omissions"
        if b is not None:
            what += f", compared with {b.lp.pack_id}"
        c.print(f"wrote {safe(target)}: {safe(a.lp.pack_id)} ({what}; {len(page) // 1024} KB)")
        for n in a.notes:
            c.print("note: " + safe(n))
