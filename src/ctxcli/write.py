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


def _cannot_write(what: str, e: OSError):
    """A failed write as one line (exit 2): no space left, read-only, a folder in the way."""
    from .errors import OutputError

    return OutputError(f"{what}: cannot write there ({e.strerror or e}); nothing was written")


def write_file_atomic(path: Path, data: bytes) -> None:
    path = Path(path)
    if path.is_dir():
        from .errors import OutputError

        raise OutputError(f"{path} is a folder; name a file to write")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise _cannot_write(str(path), e) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise _cannot_write(str(path), e) from None
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
        raise _cannot_write(f"--out {out}", e) from None
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
        try:
            os.replace(staging, out)
        except OSError:
            if old is not None:          # put the previous run folder back
                os.replace(old, out)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except OSError as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise _cannot_write(f"--out {out}", e) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise

