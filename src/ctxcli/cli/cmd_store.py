"""ctx store init | generations | prune: operating a team store on PostgreSQL."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .cmd_load import DbOpt, JsonOpt
from .common import emit_json, handle_errors

store_app = typer.Typer(name="store", help="Operate a team store on PostgreSQL: create it, list its generations, "
                        "prune old ones.\n\nExample: ctx store init postgresql://ctx@db.internal/ctx",
                        no_args_is_help=True, rich_markup_mode=None)


def register(app: typer.Typer) -> None:
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
    """List the generations of a team store: number, store digest, objects, when published,
    and which one readers use now.

    Example: ctx store generations --db postgresql://ctx@127.0.0.1:5432/ctx
    """
    with handle_errors():
        from .. import api
        from .console import console, show, table

        rows = api.store_generations(db)
        if as_json:
            emit_json({"generations": rows})
            return
        t = table("Generations", ["generation", "current", "objects", "published", "store digest"])
        for r in rows:
            t.add_row(str(r["generation"]), "yes" if r["current"] else "", str(r["objects"]), r["published_at"],
                      r["store_digest"])
        show(console(), t)


def prune(*, keep: Annotated[int, typer.Option("--keep", help="How many of the newest generations to keep "
                                                "(at least 1; the current one is always kept).")] = 3,
          db: DbOpt = None, as_json: JsonOpt = False) -> None:
    """Drop old generations of a team store, keeping the newest --keep (packs built on a dropped
    generation no longer replay identically). One writer at a time: while a load or another
    prune runs, exit 3. Waits for investigations still reading a generation it drops.

    Example: ctx store prune --keep 2 --db postgresql://ctx@127.0.0.1:5432/ctx
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
