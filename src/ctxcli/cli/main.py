"""ctx command line. Typer lives here and in the command modules only; each command parses
its arguments, calls the library API (``ctxcli.api``), renders, and maps errors to exit
codes (0 ok, 1 check failed, 2 bad input or usage, 3 store busy)."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="ctx",
    help="ctx builds governed, replayable Context Packs: what a model may see for an investigation, and why.\n\n"
         "Example: ctx investigate C-102 --as-of 2026-07-23T12:00:00+08:00",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from .. import BUILDER_VERSION, __version__

        typer.echo(f"ctx {__version__} ({BUILDER_VERSION})")
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                       help="Print the ctx version and builder version, then exit.")) -> None:
    """ctx builds governed, replayable Context Packs: what a model may see for an investigation, and why.

    Example: ctx investigate C-102 --as-of 2026-07-23T12:00:00+08:00"""


COMMAND_MODULES = (
    "cmd_init",
    "cmd_runs",
    "cmd_load",
    "cmd_investigate",
    "cmd_postmortem",
    "cmd_render",
    "cmd_eval",
    "cmd_ask",
    "cmd_serve",
    "cmd_scan",
    "cmd_report",
    "cmd_check",
    "cmd_schema",
    "cmd_store",
    "cmd_audit",
    "cmd_handoff",
    "cmd_memory",
    "cmd_ledger",
    "cmd_erase",
)


def _register() -> None:
    """Each command module registers its commands; modules are light (Typer only)."""
    import importlib
    import importlib.util

    for name in COMMAND_MODULES:
        if importlib.util.find_spec(f"{__package__}.{name}") is None:
            continue
        importlib.import_module(f"{__package__}.{name}").register(app)


_register()


def run() -> None:
    app()


if __name__ == "__main__":
    run()
