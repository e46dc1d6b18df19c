"""What every command shares: one error handler, time parsing, JSON output."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from datetime import datetime
from typing import Iterator

import typer

from ..errors import CtxError, ExitCode, one_line


@contextmanager
def handle_errors() -> Iterator[None]:
    """Map CtxError to one line on stderr and its exit code; never a traceback for user errors."""
    try:
        yield
    except typer.Exit:
        raise
    except CtxError as e:
        from ..util.passwords import mask

        lines = e.lines() if hasattr(e, "lines") else [str(e)]    # LoadProblems: one line per problem
        for line in lines:
            sys.stderr.write(f"ctx: error: {mask(line)}\n")
        raise typer.Exit(e.exit_code) from None
    except KeyboardInterrupt:
        _stopped()
    except BrokenPipeError:     # `ctx … | head -1`: the reader has what it wanted; no message, no traceback
        stdout_to_devnull()
        raise typer.Exit(ExitCode.BROKEN_PIPE) from None
    except Exception as e:  # a bug in ctx, not a user error
        if _interrupted(e):
            _stopped()
        if os.environ.get("CTX_DEBUG"):
            raise
        from ..util.passwords import mask

        sys.stderr.write(f"ctx: internal error: {one_line(mask(type(e).__name__ + ': ' + str(e)))} "
                         f"(set CTX_DEBUG=1 for a traceback)\n")
        raise typer.Exit(ExitCode.INTERNAL) from None


def _stopped() -> None:
    """Ctrl-C: one line, exit 130; SIGTERM during a load (util/signals.py): one line, exit 143."""
    from ..util.signals import terminated

    if terminated():
        sys.stderr.write("ctx: terminated\n")
        raise typer.Exit(ExitCode.TERMINATED) from None
    sys.stderr.write("ctx: interrupted\n")
    raise typer.Exit(ExitCode.INTERRUPTED) from None


def stdout_to_devnull() -> None:
    """Point stdout at the null device: what is still buffered for a closed pipe is dropped
    quietly at exit (Python would otherwise report the BrokenPipeError while flushing)."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError):       # no real stdout (a test's captured stream): nothing to flush
        pass


def _interrupted(e: BaseException) -> bool:
    """DuckDB turns a Ctrl-C that arrives during a statement into an exception of its own."""
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(e, getattr(duckdb, "InterruptException", ())):
        return True
    return isinstance(e, RuntimeError) and str(e).strip() == "Query interrupted"


def parse_time(value: str | None, option: str) -> datetime | None:
    from ..util.timeutil import parse_option_time

    return parse_option_time(value, option)


def emit_json(obj) -> None:
    from ..util.canon import pretty_bytes

    sys.stdout.buffer.write(pretty_bytes(obj))
    sys.stdout.flush()


def show_repeated(rec: dict, key: str | None, as_json: bool) -> None:
    """The recorded run of an idempotency key, as the answer to its repeated request."""
    from .console import console, safe

    if as_json:
        emit_json({"repeated": True, "idempotency_key": key, "run_id": rec["run_id"],
                   "request_hash": rec["request_hash"], "pack_id": rec["pack_id"], "out": rec["folder"],
                   "verdict": rec["verdict"], "recorded_at": rec["wall_time"]})
        return
    console().print(safe(f"idempotency key {key!r}: this request already ran as {rec['run_id']} at "
                         f"{rec['wall_time']} (pack {rec['pack_id']}, verdict {rec['verdict']}, folder "
                         f"{rec['folder']}); not run again"))
