"""The one place that renders for people (Rich). Honors NO_COLOR and non-TTY output; every
string from data is escaped so markup or control characters in a title never reach the
terminal raw."""

from __future__ import annotations

import os
import sys
from typing import Any


def console(stderr: bool = False):
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    tty = stream.isatty()
    # Piped into a log or a postmortem document: wide tables rather than 80-column folding.
    width = None if tty or os.environ.get("COLUMNS") else 160
    return Console(file=stream, no_color=bool(os.environ.get("NO_COLOR")), highlight=False,
                   soft_wrap=not tty, emoji=False, width=width)


def safe(text: Any) -> str:
    """Data text made safe for the terminal: control characters escaped, Rich markup escaped."""
    from rich.markup import escape

    from ..engine.render import clean

    return escape(clean(str(text)))


def table(title: str, columns: list[str]):
    from rich.table import Table

    t = Table(title=title, show_lines=False, title_justify="left")
    for c in columns:
        t.add_column(c, overflow="fold")
    return t
