"""ctx store init | generations | prune: a store's generations (DuckDB file or team store on PostgreSQL)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .cmd_load import DbOpt, JsonOpt
from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    """A new sub-app per call: the start-up path and the full app may each register the module."""
    store_app = typer.Typer(name="store", help="Operate a store: list its generations, prune old ones (the project's "
                            "DuckDB file or a team store on PostgreSQL); create a team store.\n\n"
                            "Example: ctx store generations",
                            no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(store_app)
    store_app.command("init")(init)
    store_app.command("generations")(generations)
    store_app.command("prune")(prune)


def init(
    address: Annotated[Optional[str], typer.Argument(help="postgresql://user@host:port/database (password from "
                                                     "PGPASSFILE or PGPASSWORD; default: $CTX_DB).",
                                                     show_default=False)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create a team store in a PostgreSQL database: the ctx_meta schema (layout version,
    generations, the pointer readers follow, the store secret). Safe to run again: an existing
    store is checked (exit 3 if its layout is not this ctx's) and left as it is. Then publish
    data into it with `ctx load --db ADDRESS`. Passwords are never printed.

    Example: ctx store init postgresql://ctx@127.0.0.1:5432/ctx
    """
    with handle_errors():
        from .. import api
        from .console import console, safe

        res = api.store_init(address)
        if as_json:
            emit_json(res)
            return
        what = "created" if res["created"] else "already initialised"
        console().print(f"team store {safe(res['address'])}: {what} (layout {res['layout_version']}, "
                        f"{res['generations']} generation(s))")


def generations(*, db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """List the kept generations of the store, newest first, and which one readers use now.
    Every `ctx load` publishes one; a pack names the generation it was built on, and `ctx replay`
    rebuilds against it while it is kept. For a DuckDB file: its size and the bytes it takes
    beyond the live store (the current generation is the live file: 0). For a team store on
    PostgreSQL: store digest and objects.

    Example: ctx store generations
    """
    with handle_errors():
        from .. import api
        from .console import console, show, table

        rows = api.store_generations(db)
        if as_json:
            emit_json({"generations": rows})
            return
        if rows and "store_digest" in rows[0]:
            t = table("Generations", ["generation", "current", "objects", "published", "store digest"])
            for r in rows:
                t.add_row(str(r["generation"]), "yes" if r["current"] else "", str(r["objects"]), r["published_at"],
                          r["store_digest"])
        else:
            t = table("Generations", ["generation", "current", "bytes", "extra bytes", "published"])
            for r in rows:
                t.add_row(str(r["generation"]), "yes" if r["current"] else "", str(r["bytes"]),
                          str(r["extra_bytes"]), r["published_at"])
        show(console(), t)


def prune(*, keep: Annotated[int, typer.Option("--keep", help="How many of the newest generations to keep "
                                                "(at least 1; the current one is always kept).")] = 3,
          db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Drop old generations of the store, keeping the newest --keep (packs built on a dropped
    generation are then replayed against the current one). One writer at a time: while a load
    or another prune runs, exit 3. On a team store, waits for investigations still reading a
    generation it drops; a DuckDB reader keeps the file it opened until it closes it.

    Example: ctx store prune --keep 2
    """
    with handle_errors():
        from .. import api
        from .console import console

        res = api.store_prune(db, keep=keep)
        if as_json:
            emit_json(res)
            return
        console().print(f"kept generation(s) {', '.join(map(str, res['kept'])) or 'none'}; dropped "
                        f"{', '.join(map(str, res['dropped'])) or 'none'}")
