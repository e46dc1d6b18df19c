"""``ctx report``: one self-contained, deterministic HTML page per run.

Library code: :func:`load_run` reads a run folder or pack (verified by the post-mortem
library), :func:`render` returns the page as a string. Nothing here prints, exits or writes;
the CLI (``cli/cmd_report.py``) writes the file.
"""

from __future__ import annotations

from pathlib import Path

from .loader import Run, load_run, pack_path
from .render import GENERATOR, render

__all__ = ["GENERATOR", "Run", "is_report", "load_run", "pack_path", "render", "report_html"]


def report_html(path: Path | str, compare: Path | str | None = None) -> str:
    """The report page for a run folder or pack, optionally compared with another."""
    run = load_run(path)
    other = load_run(compare) if compare is not None else None
    return render(run, other)


def is_report(head: bytes) -> bool:
    """Whether the first bytes of a file are those of a page ``ctx report`` wrote."""
    return f'<meta name="generator" content="{GENERATOR}"'.encode() in head[:4096]
