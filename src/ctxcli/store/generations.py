"""Generations of the embedded (DuckDB) store: every load publishes one, the last N are kept.

A generation is a numbered, read-only store file in ``<store>.generations/`` (``000001.duckdb``,
``000002.duckdb``, …). Publishing hard-links the finished staging file there under the next
number, then renames it onto the live path: the live store and its newest generation are one
file on disk (no copy), and an older generation costs exactly its own file once a later load
has replaced the live path. Where the file system has no hard links the file is copied.

The current generation is the one whose file is the live store's (same device and inode, else
the newest with the same size and bytes is not attempted: none). ``ctx store prune`` keeps the
newest N generations and never the live store's file; only files named as ctx names them are
ever removed. The vocabulary is the PostgreSQL store's (``generation``, ``current``, ``prune``).
"""

from __future__ import annotations

import os
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

SUFFIX = ".generations"
_NAME = re.compile(r"^(\d{6,})\.duckdb$")
DEFAULT_KEEP = 3


def folder(db: Path) -> Path:
    return Path(str(db) + SUFFIX)


def _numbered(db: Path) -> list[tuple[int, Path]]:
    d = folder(db)
    if not d.is_dir() or d.is_symlink():
        return []
    out = []
    for e in os.scandir(d):
        m = _NAME.match(e.name)
        if m and e.is_file(follow_symlinks=False):
            out.append((int(m.group(1)), Path(e.path)))
    return sorted(out)


def path_of(db: Path, generation: int) -> Path | None:
    """The file of a kept generation, or None when it is not (or no longer) kept."""
    return dict(_numbered(Path(db))).get(generation)


def current(db: Path) -> int | None:
    """The generation the live store file is, or None (a store loaded before generations)."""
    try:
        st = os.stat(db)
    except OSError:
        return None
    for n, p in reversed(_numbered(Path(db))):
        try:
            g = os.stat(p)
        except OSError:
            continue
        if (g.st_dev, g.st_ino) == (st.st_dev, st.st_ino):
            return n
    return None


def publish(staging: str | Path, db: Path, *, numbered: bool = True) -> int | None:
    """Make the finished ``staging`` store the next generation and the live store (one rename).

    The generation file is linked before the rename, so a process killed in between leaves the
    previous live store and one more kept generation, never a live store without its generation.
    Returns the new generation's number; with ``numbered`` false (a build that is published
    elsewhere, e.g. into a team store) only the rename, and None."""
    db = Path(db)
    if not numbered:
        os.replace(staging, db)
        _fsync_dir(db.parent)
        return None
    d = folder(db)
    d.mkdir(exist_ok=True)
    nums = _numbered(db)
    n = (nums[-1][0] + 1) if nums else 1
    target = d / f"{n:06d}.duckdb"
    try:
        os.link(staging, target)
    except OSError:                     # no hard links here (some network or FAT file systems)
        tmp = d / f".{n:06d}.duckdb.tmp"
        shutil.copyfile(staging, tmp)
        os.replace(tmp, target)
    os.replace(staging, db)
    _fsync_dir(d)
    _fsync_dir(db.parent)
    return n


def _fsync_dir(d: Path) -> None:
    try:
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def listing(db: Path) -> list[dict[str, Any]]:
    """The kept generations, newest first: number, current, bytes on disk (0 when the file is
    the live store's, which costs nothing more), published (the file's time, UTC)."""
    db = Path(db)
    cur = current(db)
    rows = []
    for n, p in reversed(_numbered(db)):
        st = p.stat()
        rows.append({"generation": n, "current": n == cur, "bytes": st.st_size,
                     "extra_bytes": 0 if n == cur else st.st_size,
                     "published_at": datetime.fromtimestamp(st.st_mtime, timezone.utc).isoformat(timespec="seconds"),
                     "file": str(p)})
    return rows


def prune(db: Path, keep: int) -> dict[str, list[int]]:
    """Remove all but the newest ``keep`` generations; the live store's file is always kept."""
    from ..errors import UsageError

    if keep < 1:
        raise UsageError("--keep must be at least 1 (the current generation is always kept)")
    db = Path(db)
    cur = current(db)
    nums = _numbered(db)
    newest = {n for n, _ in nums[-keep:]}
    kept, dropped = [], []
    for n, p in nums:
        if n in newest or n == cur:
            kept.append(n)
            continue
        try:
            os.unlink(p)
            dropped.append(n)
        except FileNotFoundError:
            pass
    if dropped:
        _fsync_dir(folder(db))
    return {"kept": sorted(kept, reverse=True), "dropped": sorted(dropped, reverse=True)}


def drop(db: Path, numbers) -> list[int]:
    """Remove the kept generations ``numbers`` (never the live store's file). Returns those removed."""
    db = Path(db)
    cur = current(db)
    files = dict(_numbered(db))
    dropped = []
    for n in sorted(set(numbers)):
        if n == cur or n not in files:
            continue
        try:
            os.unlink(files[n])
            dropped.append(n)
        except FileNotFoundError:
            pass
    if dropped:
        _fsync_dir(folder(db))
    return dropped
