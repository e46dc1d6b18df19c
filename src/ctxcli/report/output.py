"""Writing the page: atomically, never over a file ctx did not write, and recorded in the run
folder's marker so that the folder stays one ctx may replace."""

from __future__ import annotations

import os
from pathlib import Path

from .render import GENERATOR

RUN_MARKER = ".ctx-run"          # the marker a run folder carries (the files ctx wrote into it)
_MARKER_MAX = 64 * 1024


def is_report(head: bytes) -> bool:
    """Whether the first bytes of a file are those of a page ``ctx report`` wrote."""
    return f'<meta name="generator" content="{GENERATOR}"'.encode() in head[:4096]


def check_target(target: Path, what: str = "--out") -> None:
    """Refuse (exit 2) a target that is a folder, a symlink, or a file ctx report did not write."""
    from ..write import check_output_file

    check_output_file(target, what, "ctx report", is_report)


def write_report(target: Path, page: bytes, what: str = "--out") -> None:
    """Write the page atomically; when it lands in a run folder, list it in the folder's marker."""
    from ..write import write_file_atomic

    check_target(target, what)
    write_file_atomic(target, page)
    _register(target)


def _register(target: Path) -> None:
    """Add the page to the ``.ctx-run`` marker of the folder it was written into, if that folder
    is a run folder: the marker lists the files ctx wrote there, and only such a folder may be
    replaced by a later ``--out``. A folder without a valid marker is left as it is."""
    import orjson

    from ..util.canon import pretty_bytes
    from ..write import write_file_atomic

    marker = target.parent / RUN_MARKER
    try:
        if marker.is_symlink() or not marker.is_file():
            return
        st = marker.stat()
        if st.st_size > _MARKER_MAX:
            return
        data = orjson.loads(marker.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files) or target.name in files:
        return
    data["files"] = sorted([*files, target.name])
    write_file_atomic(marker, pretty_bytes(data))
    os.chmod(marker, st.st_mode & 0o777)
