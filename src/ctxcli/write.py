"""Writing outputs atomically: a run folder appears complete or not at all."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .util.canon import canonical_bytes


def trace_bytes(trace: list[dict[str, Any]]) -> bytes:
    return b"".join(canonical_bytes(e) + b"\n" for e in trace)


def write_file_atomic(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        from .errors import UsageError

        raise UsageError(f"{path}: cannot write there ({e.strerror})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_run_folder(out: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` into a staging folder beside ``out`` and swap it in.

    If ``out`` exists it is moved aside first and removed after the swap; a process killed
    between the two renames leaves no ``out`` (and a ``.old`` folder), never a half folder.
    """
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".staging", dir=out.parent))
    except OSError as e:
        from .errors import UsageError

        raise UsageError(f"--out {out}: cannot write there ({e.strerror})") from None
    try:
        for name, data in files.items():
            with open(staging / name, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.{os.getpid()}.old"
            os.replace(out, old)
        os.replace(staging, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

