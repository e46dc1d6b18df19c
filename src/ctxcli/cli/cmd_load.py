"""ctx load, ctx sources."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit_json, handle_errors, parse_time

DbOpt = Annotated[Optional[str], typer.Option("--db", help="Store file, or a postgresql:// address for a team store "
                                              "(default: $CTX_DB or .ctx/ctx.duckdb).",
                                              metavar="PATH|URL", show_default=False)]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a stable JSON document instead of a table.")]


def register(app: typer.Typer) -> None:
    """A new sub-app per call: the start-up path and the full app may each register the module."""
    app.command("load")(load)
    sources_app = typer.Typer(name="sources", invoke_without_command=True, rich_markup_mode=None)
    sources_app.callback(invoke_without_command=True)(sources)
    sources_app.command("preview")(preview)
    sources_app.command("parsers")(parsers)
    app.add_typer(sources_app)


def load(
    *,
    manifests: Annotated[Optional[Path], typer.Option("--manifests", help="Folder holding sources/*.yaml "
                                                      "(default: ./manifests).", show_default=False)] = None,
    sources_dir: Annotated[Optional[Path], typer.Option("--sources", help="Folder that replaces `sources/` in "
                                                        "manifests' snapshot paths.", show_default=False)] = None,
    db: DbOpt = None,
    full: Annotated[bool, typer.Option("--full", help="Read every source again, even unchanged ones.")] = False,
    vectors: Annotated[bool, typer.Option("--vectors", help="Also store one vector per object for the hybrid "
                                          "strategy (needs the vectors extra; a playbook with `vectors: true` "
                                          "asks for them too).")] = False,
    keep_generations: Annotated[Optional[int], typer.Option("--keep-generations", help="How many generations of "
                                                            "a DuckDB store to keep after this load (default: "
                                                            "ctx.toml [generations] keep, else 3).",
                                                            show_default=False)] = None,
    verbose: Annotated[bool, typer.Option("--verbose", help="Print every warning, not one line per kind of "
                                          "warning (e.g. each relation on_dangling: skip left out).")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Validate every registered source and build the store, atomically.

    The new store is built beside the old one and swapped in only on success; any bad
    record is a one-line error naming file, line and field (exit 2), and the old store
    stays as it was; so is a field a manifest's mapping names that no record of its source has
    (at the manifest's line and column). Sources whose digest is unchanged since the previous load are not
    read again: their rows are copied from the old store (column "reused"), and a changed
    source's records whose text is unchanged keep what was derived from it (token counts,
    index terms, vectors); --full reads and derives every source. Each source's objects
    added, changed and removed since the old store are reported (+added ~changed -removed;
    --json: "added", "changed", "removed"). A changed source of ctx's own records or of
    Markdown files is read line by line / file by file: only lines and files that changed are
    parsed again (reported as "read again"; --json: "units"). A changed git source is read
    version by version, and only the commits after the last loaded one are walked when that
    commit is still in the tip's first-parent history (reported as "git history walked";
    --json: "units" → "cursor"). One load at a time: while another load holds the store's writer lock
    (<store>.lock), a second one exits 3 without touching anything. With --db postgresql://…
    the same store is published as a new generation of a team store (`ctx store init` first;
    docs/postgres.md). Vectors (the hybrid strategy's channel) are built only with --vectors
    or when a playbook says `vectors: true`; without the vectors extra that load exits 2
    naming the pip command.
    docs/postgres.md). A DuckDB store keeps its generations too, in <store>.generations/: the
    newest --keep-generations (ctx.toml [generations] keep, default 3), so `ctx replay`
    rebuilds a pack against the generation it was built on (`ctx store generations`).
    The build's DuckDB buffer pool is 2GB (it spills to a temporary folder beside the store);
    $CTX_LOAD_MEMORY_LIMIT (such as 4GB) sets it, and a build that runs out of it exits 3 with
    the store unchanged. Warnings (such as the relations a source with on_dangling: skip left
    out) are one line per kind, with how many and the first; --verbose prints each one, and
    --json lists each one under "warnings".
    Progress goes to stderr per phase (read, index, tables, fts): "of how many" and a
    percentage only where the total is known, and "done" only for a phase that finished.
    Ctrl-C (exit 130) and SIGTERM (exit 143) stop a load with one line, nothing published and
    its temporary folder removed.

    Example: ctx load --manifests manifests --db .ctx/ctx.duckdb
    """
    with handle_errors():
        import sys

        from .. import api
        from .console import console, safe, show, table

        progress = None
        if not as_json:
            progress = _progress_bar() if sys.stderr.isatty() else _plain_progress()
        try:
            res = api.load(manifests=manifests, sources=sources_dir, db=db,
                           progress=progress.update if progress else None, incremental=not full, vectors=vectors,
                           **({"keep_generations": keep_generations} if keep_generations is not None else {}))
        except BaseException:           # an error, Ctrl-C, SIGTERM: the phase running did not finish
            if progress:
                progress.close(finished=False)
            raise
        if progress:
            progress.close(finished=True)
        doc = {"db": res.db, "store_digest": res.store_digest, "objects": res.objects,
               "sources": [s.__dict__ for s in res.sources], "reused": res.reused,
               "generation": res.generation}
        if getattr(res, "pruned", None):
            doc["pruned_generations"] = res.pruned
        warnings = getattr(res, "warnings", [])
        if warnings:
            doc["warnings"] = warnings
        for w in warnings if verbose else res.warning_summary():
            sys.stderr.write(f"ctx: warning: {w}\n")
        if as_json:
            emit_json(doc)
            return
        t = table(f"Loaded {res.objects} objects into {safe(res.db)}",
                  ["source", "enabled", "objects", "sections", "entities", "relations", "tombstones", "dropped",
                   "reused"])
        for s in res.sources:
            t.add_row(safe(s.source_id), "yes" if s.enabled else "no", str(s.objects), str(s.sections),
                      str(s.entities), str(s.relations), str(s.tombstones), str(s.dropped),
                      "yes" if s.reused else "no")
        c = console()
        show(c, t)
        if res.reused:
            c.print(f"reused {len(res.reused)} unchanged source(s) from the previous store: {safe(', '.join(res.reused))}")
        moved = [f"{s.source_id} +{s.added} ~{s.changed} -{s.removed}" for s in res.sources
                 if s.added or s.changed or s.removed]
        if not getattr(res, "compared", True):
            c.print("no previous store to compare with: every object is new")
        else:
            c.print(f"changes since the previous store: {safe(', '.join(moved)) if moved else 'none'}")
        reread = [f"{s.source_id} {s.units['read']} of {s.units['of']} {s.units['unit']}(s)" for s in res.sources
                  if getattr(s, "units", None) and s.units["read"] < s.units["of"]]
        if reread and getattr(res, "compared", True):
            c.print(f"read again, the rest copied from the previous store: {safe(', '.join(reread))}")
        walked = [f"{s.source_id} {k['commits']} new commit(s) after {k['from'][:12]}" if k["used"]
                  else f"{s.source_id} whole ({k['reason']})" for s in res.sources
                  if (k := (getattr(s, "units", None) or {}).get("cursor"))]
        if walked and getattr(res, "compared", True):
            c.print(f"git history walked: {safe('; '.join(walked))}")
        c.print(f"store digest {res.store_digest}")
        if res.generation is not None and "(generation" not in res.db:     # a team store names it in db
            c.print(f"generation {res.generation}" + (f" (pruned {', '.join(map(str, res.pruned))})"
                                                      if getattr(res, "pruned", None) else ""))


class _progress_bar:
    """Progress on a terminal: per phase, what is done — of how many, the percentage and the
    time left only when the total is known; otherwise a pulsing bar and the count — and the
    rate. A phase is shown complete only once the next one starts or the load has finished."""

    def __init__(self, console=None) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.p = Progress(TextColumn("{task.description:<6}"), BarColumn(), TextColumn("{task.fields[count]}"),
                          TextColumn("{task.fields[pct]}"), TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                          transient=True, console=console)
        self.p.start()
        self.tasks: dict[str, int] = {}

    def _show(self, stage: str, done: int, total: int) -> None:
        task = self.p.tasks[self.tasks[stage]]
        rate = f"{task.speed:,.0f}/s" if task.speed else ""
        self.p.update(self.tasks[stage], completed=done, total=total or None, rate=rate,
                      count=f"{done:,}/{total:,}" if total else f"{done:,}" if done else "",
                      pct=f"{100 * done // total:>3d} %" if total else "")

    def _finish_others(self, stage: str | None) -> None:
        for name, tid in self.tasks.items():
            task = self.p.tasks[tid]
            if name != stage and task.total is None:      # no total, and it ended: a full bar, "done"
                n = int(task.completed)
                self.p.update(tid, total=max(n, 1), completed=max(n, 1), count=f"{n:,}" if n else "", pct="done")

    def update(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            self._finish_others(stage)
            self.tasks[stage] = self.p.add_task(stage, total=total or None, rate="", count="", pct="")
        self._show(stage, done, total)

    def close(self, finished: bool = True) -> None:
        if finished:
            self._finish_others(None)
        self.p.stop()


class _plain_progress:
    """Progress when stderr is not a terminal (a CI log, a pipe): nothing for a load shorter
    than ``every`` seconds (a short load, and a failed one, stays one line); after that one
    plain line every ``every`` seconds with the phase, what is done, the rate and the time, and
    one when each later phase ends."""

    def __init__(self, every: float = 30.0, stream=None, clock=None) -> None:
        import sys
        import time

        self.every, self.stream, self.clock = every, stream or sys.stderr, clock or time.monotonic
        self.begun = self.last = self.clock()
        self.stage: str | None = None
        self.stage_started = self.begun
        self.state = (0, 0)
        self.talking = False

    def _line(self, what: str) -> None:
        done, total = self.state
        secs = max(self.clock() - self.stage_started, 1e-9)
        if not done and not total:         # a phase without a count (the full-text index)
            self.stream.write(f"ctx load: {self.stage} {what} ({secs:.0f} s in this phase, "
                              f"{self.clock() - self.begun:.0f} s in all)\n")
            self.stream.flush()
            return
        of = f" of {total:,}" if total and total != done else ""
        self.stream.write(f"ctx load: {self.stage} {what}: {done:,}{of} ({done / secs:,.0f}/s in this phase, "
                          f"{self.clock() - self.begun:.0f} s in all)\n")
        self.stream.flush()

    def update(self, stage: str, done: int, total: int) -> None:
        now = self.clock()
        if stage != self.stage:
            if self.stage is not None and self.talking:
                self._line("done")
            self.stage, self.stage_started = stage, now
        self.state = (done, total)
        if now - self.last >= self.every:
            self.last, self.talking = now, True
            self._line("at")

    def close(self, finished: bool = True) -> None:
        """``finished`` false (an error, Ctrl-C, SIGTERM): the running phase is not said done."""
        if finished and self.stage is not None and self.talking:
            self._line("done")


def sources(ctx: typer.Context, *, db: DbOpt = None, as_json: JsonOpt = False,
            as_of: Annotated[Optional[str], typer.Option("--as-of", help="Measure snapshot ages at this time "
                                                         "(ISO 8601 with offset; default: now).",
                                                         show_default=False)] = None) -> None:
    """Show the source registry: owner, classification, trust, scopes, purposes, objects,
    snapshot age at --as-of against the source's refresh SLA (stale when older), and whether
    each source is enabled (--json adds the newest observation time and digests).
    `ctx sources preview SOURCE` shows what a manifest produces, without loading; `ctx sources
    parsers` lists the installed parsers and where each comes from.

    Example: ctx sources --json
    """
    if ctx.invoked_subcommand is not None:
        return
    with handle_errors():
        from .. import api
        from .console import console, safe, show, table

        when = parse_time(as_of, "--as-of")
        db_path, loaded = api.ensure_store(db)
        rows = api.sources(db_path, when)
        if as_json:
            emit_json({"sources": rows})
            return
        if loaded:
            console(stderr=True).print("no store found: loaded the project's sources first")
        t = table("Registered sources", ["source", "tenant", "owner", "class.", "trust", "scopes", "purposes",
                                         "objects", "age / SLA", "enabled"])
        for r in rows:
            t.add_row(safe(r["source_id"]), safe(r["tenant_id"] or "per record"), safe(r["owner_team"]),
                      r["classification"], r["trust_level"], safe(", ".join(r["required_scopes"])),
                      safe(", ".join(r["allowed_purposes"])), str(r["n_objects"]),
                      f"{r['freshness']['age'] or 'none'} / {safe(r['refresh_sla'])}"
                      + (" stale" if r["freshness"]["stale"] else ""), "yes" if r["enabled"] else "no")
        show(console(), t)


def parsers(*, as_json: JsonOpt = False) -> None:
    """List every installed parser a manifest's `parser:` may name, and where it comes from:
    bundled with ctx, or the distribution of a plugin that registers it in the `ctx.parsers`
    entry-point group (docs/authoring.md, "Write a parser plugin"). A name two distributions
    register is listed twice, marked "clash": a manifest naming it is refused.

    Example: ctx sources parsers --json
    """
    with handle_errors():
        from .. import api
        from .console import console, safe, show, table

        rows = api.parsers()
        if as_json:
            emit_json({"parsers": rows})
            return
        t = table("Installed parsers", ["parser", "from", "version", "entry point"])
        for r in rows:
            t.add_row(safe(r["parser"]) + (" (clash)" if r["clash"] else ""), safe(r["from"]), safe(r["version"]),
                      safe(r["entry_point"]))
        show(console(), t)


def preview(
    source: Annotated[str, typer.Argument(help="The source_id of a manifest in <manifests>/sources/.")],
    *,
    manifests: Annotated[Optional[Path], typer.Option("--manifests", help="Folder holding sources/*.yaml "
                                                      "(default: ./manifests).", show_default=False)] = None,
    sources_dir: Annotated[Optional[Path], typer.Option("--sources", help="Folder that replaces `sources/` in "
                                                        "manifests' snapshot paths.", show_default=False)] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="How many of each to show.")] = 5,
    as_json: JsonOpt = False,
) -> None:
    """Print the first objects a source's manifest produces — id, type, tenant, validity,
    facts, evidence types (the playbooks' rules applied), locator — and its first entities,
    relations and tombstones, without loading anything: change a mapping, look again. A bad
    record is the error `ctx load` would report (exit 2), and so is a field the mapping names
    that no record of the source has (at the manifest's line, with a did-you-mean). The source's masks (its redaction
    patterns and its parser's own, e.g. git e-mail addresses) are applied as for a subject
    without its unmasking scopes.

    Example: ctx sources preview claims-core --limit 3
    """
    with handle_errors():
        from .. import api
        from .console import console, safe, table

        doc = api.preview_source(source, manifests=manifests, sources=sources_dir, limit=limit)
        if as_json:
            emit_json(doc)
            return
        c = console()
        t = table(f"{doc['source_id']} (parser {doc['parser']}): first {len(doc['objects'])} object(s)",
                  ["object", "type", "tenant", "valid", "supports", "facts", "locator"])
        for o in doc["objects"]:
            valid = f"{o['valid_from'] or '…'} → {o['valid_to'] or '…'}"
            facts = ", ".join(f"{k}={v}" for k, v in sorted(o["facts"].items()))
            t.add_row(safe(o["object_id"]), safe(o["object_type"]), safe(o["tenant_id"]), valid,
                      safe(", ".join(o["supports"]) or "none"), safe(facts), safe(o["locator"]))
        c.print(t)
        if doc["masked"]:
            lifted = f" (lifted for {', '.join(doc['unless_scopes'])})" if doc["unless_scopes"] else ""
            c.print("masked as a load masks them" + lifted + ": "
                    + ", ".join(f"{safe(k)} ×{n}" for k, n in doc["masked"].items()))
        for kind, fmt in (("entities", lambda e: f"{e['entity_key']} ({e['entity_type']}) {e['name']}"),
                          ("relations", lambda r: f"{r['from']} -{r['type']}-> {r['to']}"
                                                  f" (evidence {r['evidence_object_id'] or 'none'})"),
                          ("tombstones", lambda t: f"{t['object_id']}: {t['reason']}")):
            if doc[kind]:
                c.print(f"{kind}: " + "; ".join(safe(fmt(x)) for x in doc[kind]))
