"""``ctx report``: one self-contained, deterministic HTML page per run.

Library code: :func:`load_run` reads a run folder or pack (verified by the post-mortem
library), :func:`render` returns the page as a string. :func:`write_report` writes it atomically
(never over a file ctx did not write). Nothing here prints or exits.
"""

from __future__ import annotations

from pathlib import Path

from .loader import Run, load_run, pack_path
from .output import is_report, write_report
from .render import GENERATOR, render

__all__ = ["GENERATOR", "Run", "is_report", "load_run", "pack_path", "render", "report_html", "write_report"]


def report_html(path: Path | str, compare: Path | str | None = None, *, key: bytes | None = None) -> str:
    """The report page for a run folder or pack, optionally compared with another (``key``: the
    store secret that matches withheld objects across the two, as ``ctx diff`` uses it)."""
    run = load_run(path)
    other = load_run(compare) if compare is not None else None
    return render(run, other, key=key)
