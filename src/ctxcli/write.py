"""Writing outputs atomically: a run folder appears complete or not at all.

A run folder carries a marker file (:data:`RUN_MARKER`) naming the files ctx wrote into it.
``--out`` may replace only a folder that is missing, empty, or such a run folder holding
nothing but those files; anything else (the project root, the working folder, a folder with
other files, a regular file, a symbolic link) is refused before anything is written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .util.canon import canonical_bytes, pretty_bytes

RUN_MARKER = ".ctx-run"
RUN_MARKER_SCHEMA = "ctx.run/1"
_MARKER_MAX = 64 * 1024


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


# ------------------------------------------------------------------------------ single-file outputs
_RECOGNISE_MAX = 64 * 1024 * 1024


def check_output_file(target: Path, what: str, writer: str, is_ours) -> None:
    """Refuse (exit 2, one line) a single-file output that would replace what ctx did not write.

    The rule of run folders, for one file: ``target`` may be missing, or a regular file (never a
    symlink, a folder or a FIFO) that ``is_ours(bytes)`` recognises as an earlier output of the
    same command (``writer``: "ctx render", "ctx eval", …). Files over 64 MB are never recognised."""
    from .errors import UsageError

    target = Path(target)
    if not target.is_symlink() and target.is_dir():
        raise UsageError(f"{what} {target}: exists and is not a regular file (a folder: name a file to write)")
    if target.is_symlink() or (target.exists() and not target.is_file()):
        raise UsageError(f"{what} {target}: exists and is not a regular file")
    if not target.exists():
        return
    try:
        size = target.stat().st_size
        with open(target, "rb") as fh:
            head = fh.read(_RECOGNISE_MAX + 1)
    except OSError as e:
        raise UsageError(f"{what} {target}: cannot read it ({e.strerror})") from None
    if size > _RECOGNISE_MAX or len(head) > _RECOGNISE_MAX or not is_ours(head):
        raise UsageError(f"{what} {target}: exists and was not written by {writer}; not replacing it")


def write_output_file(target: Path, data: bytes, what: str, writer: str, is_ours) -> None:
    """:func:`check_output_file`, then :func:`write_file_atomic`."""
    check_output_file(target, what, writer, is_ours)
    write_file_atomic(target, data)


def json_of(raw: bytes):
    """The JSON value of ``raw``, or None when it is not JSON (a recogniser's helper)."""
    import orjson

    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def marker_bytes(names: list[str]) -> bytes:
    """The marker of a run folder: ctx's version and the files it wrote (deterministic)."""
    from . import __version__

    return pretty_bytes({"schema_version": RUN_MARKER_SCHEMA, "ctx_version": __version__,
                         "files": sorted(names)})


def marker_files(folder: Path) -> set[str] | None:
    """The file names a run folder's marker lists, or None when it has no valid marker."""
    import orjson

    p = folder / RUN_MARKER
    try:
        if p.is_symlink() or not p.is_file() or p.stat().st_size > _MARKER_MAX:
            return None
        data = orjson.loads(p.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(data, dict) or data.get("schema_version") != RUN_MARKER_SCHEMA:
        return None
    files = data.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) and f and "/" not in f and f not in (".", "..")
                                              for f in files):
        return None
    return set(files)


def check_out_dir(out: Path) -> set[str] | None:
    """Refuse (exit 2, one line naming the path) an ``--out`` that ctx may not replace.

    Returns None when ``out`` does not exist, else the names of the files in it (all of
    which ctx wrote), so the caller removes exactly those."""
    from .errors import UsageError

    def refuse(why: str) -> UsageError:
        return UsageError(f"--out {out}: {why}; give a new or empty folder, or a run folder ctx wrote")

    if out.name in ("", ".", ".."):
        raise refuse("names the working folder or its parent")
    if out.is_symlink():
        raise refuse("is a symbolic link")
    if not out.exists():
        return None
    if not out.is_dir():
        raise refuse("exists and is not a folder")
    here = out.resolve()
    from . import paths

    for protected, what in ((Path.cwd, "the working folder"), (paths.root, "the project root")):
        try:
            p = protected().resolve()
        except OSError:     # a working folder that no longer exists protects nothing
            continue
        if here == p or here in p.parents:
            raise refuse(f"is {what}" if here == p else f"contains {what}")
    try:
        entries = list(os.scandir(out))
    except OSError as e:
        raise refuse(f"cannot be read ({e.strerror})") from None
    if not entries:
        return set()
    allowed = marker_files(out)
    if allowed is None:
        raise refuse(f"is not empty and is not a ctx run folder (no valid {RUN_MARKER} marker)")
    for e in entries:
        if e.name == RUN_MARKER:
            continue
        if e.name not in allowed or e.is_symlink() or not e.is_file(follow_symlinks=False):
            raise refuse(f"holds {e.name!r}, which ctx did not write")
    return {e.name for e in entries}


def write_run_folder(out: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` (and the run marker) into a staging folder beside ``out`` and swap it in.

    ``out`` must pass :func:`check_out_dir`. If it exists it is moved aside first and its
    files (only those ctx wrote) are removed after the swap; a process killed between the two
    renames leaves no ``out`` (and a ``.old`` folder), never a half folder.
    """
    out = Path(out)
    if RUN_MARKER in files:
        raise ValueError(f"{RUN_MARKER} is written by write_run_folder itself")
    check_out_dir(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".staging", dir=out.parent))
    except OSError as e:
        raise _cannot_write(f"--out {out}", e) from None
    try:
        for name, data in {**files, RUN_MARKER: marker_bytes(list(files))}.items():
            with open(staging / name, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        old = None
        if out.exists() or out.is_symlink():
            # Checked again just before the swap: what is there now must still be ours.
            ours = check_out_dir(out) or set()
            old = out.parent / f".{out.name}.{os.getpid()}.old"
            os.replace(out, old)
        try:
            os.replace(staging, out)
        except OSError:
            if old is not None:          # put the previous run folder back
                os.replace(old, out)
            raise
        if old is not None:
            _remove_ours(old, ours)
    except OSError as e:
        shutil.rmtree(staging, ignore_errors=True)
        raise _cannot_write(f"--out {out}", e) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def add_to_run_folder(folder: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` into an existing folder, each atomically; when it is a run folder, its
    marker then lists them too (so ``--out`` may still replace it)."""
    if RUN_MARKER in files:
        raise ValueError(f"{RUN_MARKER} is written by add_to_run_folder itself")
    for name, data in files.items():
        write_file_atomic(folder / name, data)
    listed = marker_files(folder)
    if listed is not None:
        write_file_atomic(folder / RUN_MARKER, marker_bytes(sorted(listed | set(files))))


def _remove_ours(folder: Path, names: set[str]) -> None:
    """Remove the files ctx wrote, then the folder if that left it empty (a file that
    appeared meanwhile is left where it is, in the hidden ``.old`` folder)."""
    for name in names:
        try:
            os.unlink(folder / name)
        except OSError:
            pass
    try:
        os.rmdir(folder)
    except OSError:
        pass
