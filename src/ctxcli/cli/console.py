"""The one place that renders for people (Rich). Honors NO_COLOR and non-TTY output; every
string from data is escaped so markup or control characters in a title never reach the
terminal raw."""

from __future__ import annotations

import os
import sys
from typing import Any


def console(stderr: bool = False):
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            """Rich exits 1 on a closed pipe; ctx's error handler gives it its own code (141)."""
            self.quiet = True
            raise BrokenPipeError

    stream = sys.stderr if stderr else sys.stdout
    tty = stream.isatty()
    # Piped into a log or a postmortem document: wide tables rather than 80-column folding.
    width = None if tty or os.environ.get("COLUMNS") else 160
    return _Console(file=stream, no_color=bool(os.environ.get("NO_COLOR")), highlight=False,
                    soft_wrap=not tty, emoji=False, width=width)


def safe(text: Any) -> str:
    """Data text made safe for the terminal: control characters escaped, Rich markup escaped."""
    from rich.markup import escape

    from ..engine.render import clean

    return escape(clean(str(text)))


def table(title: str, columns: list[str]):
    """A table whose cells wrap between words; a single word longer than its column (an id, a
    path) is folded rather than cut off. See :func:`show` for terminals too narrow for it."""
    from rich.table import Table

    t = Table(title=title, show_lines=False, title_justify="left")
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


def _longest_word(text: Any) -> int:
    from rich.text import Text

    plain = text.plain if isinstance(text, Text) else Text.from_markup(str(text)).plain
    return max((len(w) for w in plain.split()), default=0)


def show(c, t) -> None:
    """Print table ``t``; when the console is too narrow to show every column without breaking
    a word (a terminal of 80 columns, ``COLUMNS=80``), print each row as a block of
    ``column: value`` lines instead, so nothing is cut mid-word."""
    need = 1 + sum(3 + max(_longest_word(col.header), *(_longest_word(x) for x in col.cells), 1)
                   for col in t.columns)
    if need <= c.width:
        c.print(t)
        return
    from rich.markup import escape
    from rich.text import Text

    if t.title:
        c.print(t.title)
    heads = [Text.from_markup(str(col.header)).plain for col in t.columns]
    rows = list(zip(*(list(col.cells) for col in t.columns)))
    for row in rows:
        cells = [x.plain if isinstance(x, Text) else Text.from_markup(str(x)).plain for x in row]
        c.print(f"• {escape(heads[0])}: {escape(cells[0])}")
        for h, v in zip(heads[1:], cells[1:]):
            c.print(f"    {escape(h)}: {escape(' '.join(v.split()))}")
