"""ctx's Typer application: the top-level callback (``--version``) and the command modules.

``build(modules)`` makes an application holding only the given command modules: ``ctx
<command>`` registers just the module of that command (``main.run``), so it does not pay for
importing and converting the other twenty. ``app`` (built on first use) holds every command:
tests, shell completion, and ``ctx --help`` wherever its stored text does not apply."""

from __future__ import annotations

import importlib
import importlib.util

import typer

HELP = ("ctx builds governed, replayable Context Packs: what a model may see for an investigation, and why.\n\n"
        "Example: ctx investigate C-102 --as-of 2026-07-23T12:00:00+08:00")

# In the order of `ctx --help` (commands first, then groups, in the order they are registered).
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
    "cmd_tool_result",
    "cmd_memory",
    "cmd_ledger",
    "cmd_erase",
)


def _version(value: bool) -> None:
    if value:
        from .. import version_line

        typer.echo(version_line())
        raise typer.Exit()


def _main(version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                       help="Print the ctx version and builder version, then exit.")) -> None:
    """ctx builds governed, replayable Context Packs: what a model may see for an investigation, and why.

    Example: ctx investigate C-102 --as-of 2026-07-23T12:00:00+08:00"""


def build(modules: tuple[str, ...] = COMMAND_MODULES) -> typer.Typer:
    """A new application with the commands of ``modules`` (names in cli/); each module
    registers its commands (modules are light: Typer only, the work is imported inside)."""
    app = typer.Typer(name="ctx", help=HELP, no_args_is_help=True, add_completion=True,
                      pretty_exceptions_enable=False, rich_markup_mode=None)
    app.callback()(_main)
    for name in modules:
        if importlib.util.find_spec(f"{__package__}.{name}") is None:
            continue
        importlib.import_module(f"{__package__}.{name}").register(app)
    return app


def render_help() -> str:
    """``ctx --help`` as Typer prints it on a terminal of 80 columns or more (what
    ``top_help.TEXT`` must equal; tests/test_startup.py compares them)."""
    from typer.main import get_command

    group = get_command(__getattr__("app"))
    # Typer wraps at min(terminal columns, 80) - 2 = 78 on any terminal of 80 columns or more.
    with group.make_context("ctx", ["--help"], resilient_parsing=True, terminal_width=78) as ctx:
        return group.get_help(ctx) + "\n"


def __getattr__(name: str):
    if name == "app":
        app = globals().get("_app")
        if app is None:
            app = globals()["_app"] = build()
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_TOP_HELP_DOC = '''"""`ctx --help` as Typer prints it on a terminal of 80 columns or more, for ``main.run`` to print
without importing Typer. Generated from the application; tests/test_startup.py fails when it
differs from Typer's rendering. Regenerate after changing a command's help:

    python -c "from ctxcli.cli.app import write_top_help; write_top_help()"
"""
'''


def write_top_help() -> None:
    """Rewrite cli/top_help.py from Typer's rendering (a developer's step, never run by ctx)."""
    from pathlib import Path

    text = render_help()
    assert '"""' not in text and "\\" not in text, "the help text cannot be stored as a plain literal"
    (Path(__file__).parent / "top_help.py").write_text(_TOP_HELP_DOC + '\nTEXT = """\\\n' + text + '"""\n',
                                                       encoding="utf-8")
