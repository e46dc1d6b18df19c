"""ctx command line entry point (``ctx`` runs ``run``). Typer lives in ``app`` and the command
modules only; each command parses its arguments, calls the library API (``ctxcli.api``),
renders, and maps errors to exit codes (0 ok, 1 check failed, 2 bad input or usage, 3 store busy).

This module imports nothing heavy, so that start-up costs only what the command needs:
``ctx --help`` (on a terminal of 80 columns or more) and ``ctx --version`` are answered here
without Typer, and ``ctx <command> …`` builds an application holding only that command's
module (``app.build``). Anything else (a narrow terminal, shell completion, an unknown
command, options before the command) goes to the full application."""

from __future__ import annotations

import os
import sys

# Command (or group) name -> the module in cli/ that registers it. Only a speed-up: a name
# missing here is still found by the full application. tests/test_startup.py checks each
# entry against what its module registers.
COMMANDS = {
    "init": "cmd_init", "runs": "cmd_runs", "load": "cmd_load", "sources": "cmd_load",
    "investigate": "cmd_investigate", "replay": "cmd_postmortem", "explain-omissions": "cmd_postmortem",
    "diff": "cmd_postmortem", "render": "cmd_render", "eval": "cmd_eval", "ask": "cmd_ask",
    "validate-answer": "cmd_ask", "serve": "cmd_serve", "scan": "cmd_scan", "report": "cmd_report",
    "check": "cmd_check", "schema": "cmd_schema", "store": "cmd_store", "audit-call": "cmd_audit",
    "handoff": "cmd_handoff", "receive-handoff": "cmd_handoff", "tool-result": "cmd_tool_result",
    "remember": "cmd_memory", "forget": "cmd_memory", "ledger": "cmd_ledger",
    "erase": "cmd_erase",
}


def _completing() -> bool:
    """A shell-completion request (Typer reads ``_<PROG>_COMPLETE``): the full application answers it."""
    return any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)


def _named_ctx() -> bool:
    """Typer calls the program ``ctx`` (the installed script, not ``python -m …``), as in the stored help."""
    main = sys.modules.get("__main__")
    return getattr(main, "__package__", None) in (None, "") and os.path.basename(sys.argv[0]) == "ctx"


def _answered_here(args: list[str]) -> bool:
    if args not in (["--version"], ["--help"]) or _completing():
        return False
    if args == ["--version"]:
        from .. import version_line

        sys.stdout.write(version_line() + "\n")
        return True
    import shutil

    # Typer's help is 78 columns wide on any terminal of 80 columns or more.
    if _named_ctx() and shutil.get_terminal_size().columns >= 80:
        from .top_help import TEXT

        sys.stdout.write(TEXT)
        return True
    return False


BROKEN_PIPE = 141      # errors.ExitCode.BROKEN_PIPE (not imported: this module stays light)


def _closed_pipe() -> None:
    """The reader of stdout closed it: what is still buffered goes to the null device, quietly."""
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, sys.stdout.fileno())
    os.close(fd)
    raise SystemExit(BROKEN_PIPE)


def run() -> None:
    args = sys.argv[1:]
    try:
        if _answered_here(args):
            sys.stdout.flush()
            return
    except BrokenPipeError:
        _closed_pipe()
    from .app import COMMAND_MODULES, build

    module = COMMANDS.get(args[0]) if args and not _completing() else None
    try:
        build((module,) if module else COMMAND_MODULES)()
    except SystemExit as e:
        # Click answers a closed pipe outside ctx's error handler (--help, usage) with exit 1
        # and a PacifyFlushWrapper around stdout: the same code as everywhere else
        if e.code == 1 and type(sys.stdout).__name__ == "PacifyFlushWrapper":
            raise SystemExit(BROKEN_PIPE) from None
        raise


def __getattr__(name: str):
    if name == "app":     # the full application (tests: ``from ctxcli.cli.main import app``)
        from . import app as app_module

        return app_module.app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    run()
