"""Referring to runs: a run folder, its pack.json, or ``latest``; and the list of the project's runs.

Every command that reads a run accepts any of the three. The project's runs are the run folders
under its runs folder (ctx.toml ``runs``, default runs/) and those written with ``--out``
elsewhere inside the project, which ctx notes in ``.ctx/run-folders`` as it writes them
(:func:`note_run_folder`); ``latest`` is the one whose pack.json was written last. The list
reads each run folder's marker, pack, answer and run manifest; nothing is verified here
(``ctx replay`` verifies), so the list says only what the files claim."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import UsageError

LATEST = "latest"
MAX_DEPTH = 3                      # runs/<name>/ and runs/serve/<name>/ …
MAX_PACK_BYTES = 64 * 1024 * 1024
NOTED = ".ctx/run-folders"         # run folders written with --out inside the project, one a line
MAX_NOTED_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class RunEntry:
    folder: str            # relative to the project root when inside it
    written_at: str        # pack.json's modification time, UTC
    case_id: str | None
    variant: str | None
    subject: str | None
    as_of: str | None
    verdict: str | None
    signed: bool
    pack_id: str | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_folders(base: Path) -> list[Path]:
    from .write import RUN_MARKER

    out: list[Path] = []
    if not base.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(base):
        depth = len(Path(dirpath).relative_to(base).parts)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if depth < MAX_DEPTH else []
        if RUN_MARKER in filenames and "pack.json" in filenames:
            out.append(Path(dirpath))
    return out


def _is_run(folder: Path) -> bool:
    from .write import RUN_MARKER

    return (folder / RUN_MARKER).is_file() and (folder / "pack.json").is_file()


def note_run_folder(folder: Path) -> None:
    """Note a run folder written inside the project but outside its runs folder (``--out``), so
    ``ctx runs`` and ``latest`` find it; nothing for one under the runs folder (found there) or
    outside the project (not the project's)."""
    from . import paths

    here, root, runs = (Path(os.path.abspath(p)) for p in (folder, paths.root(), paths.runs_dir()))
    if root not in here.parents or here == runs or runs in here.parents:
        return                      # outside the project, or under its runs folder
    line = here.relative_to(root).as_posix()
    if "\n" in line or "\r" in line:
        return
    if line in _noted_lines():
        return
    note = paths.root() / NOTED
    try:
        note.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(note, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (line + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:                 # a read-only project: the run folder is written all the same
        pass


def _noted_lines() -> list[str]:
    from . import paths

    note = paths.root() / NOTED
    try:
        if note.is_symlink() or not note.is_file() or note.stat().st_size > MAX_NOTED_BYTES:
            return []
        return list(dict.fromkeys(x for x in note.read_text(encoding="utf-8", errors="replace").splitlines() if x))
    except OSError:
        return []


def _noted_folders() -> list[Path]:
    """The noted run folders that are still run folders inside the project."""
    from . import paths

    root = Path(os.path.realpath(paths.root()))
    out = []
    for line in _noted_lines():
        f = paths.root() / line          # an absolute line, "..", a symlink: judged where it really is
        real = Path(os.path.realpath(f))
        if root in real.parents and _is_run(f):
            out.append(f)
    return out


def _project_runs(base: Path | None) -> list[Path]:
    """The run folders under ``base`` (default: the runs folder, and then also those noted)."""
    from . import paths

    if base is not None:
        return run_folders(base)
    found = run_folders(paths.runs_dir())
    seen = {os.path.realpath(f) for f in found}
    return found + [f for f in _noted_folders() if os.path.realpath(f) not in seen]


def _mtime(folder: Path) -> float:
    try:
        return (folder / "pack.json").stat().st_mtime
    except OSError:
        return 0.0


def latest(base: Path | None = None) -> Path:
    """The newest run folder (by pack.json's modification time; ties by name)."""
    from . import paths

    folders = _project_runs(base)
    if not folders:
        raise UsageError(f"no runs yet under {paths.display(base or paths.runs_dir())}: `latest` names the newest run "
                         "folder there (run `ctx investigate` first)")
    return max(folders, key=lambda f: (_mtime(f), f.as_posix()))


def pack_path(ref: Path | str) -> Path:
    """RUN_DIR, PACK.json or ``latest``: the pack file a command reads."""
    if str(ref) == LATEST and not os.path.lexists(ref):
        return latest() / "pack.json"
    p = Path(ref)
    if p.is_dir():
        inner = p / "pack.json"
        if not inner.exists():
            raise UsageError(f"{ref}: a folder without pack.json (give a run folder, a pack.json or `latest`)")
        return inner
    return p


def run_folder(ref: Path | str) -> Path:
    return pack_path(ref).parent


def _json(path: Path) -> Any:
    import orjson

    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_PACK_BYTES:
            return None
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def list_runs(base: Path | None = None, *, case: str | None = None) -> list[RunEntry]:
    """The project's run folders (:func:`_project_runs`), newest first."""
    from .paths import display
    from .run_manifest import RUN_FILE

    out = []
    for f in _project_runs(base):
        pack = _json(f / "pack.json")
        pack = pack if isinstance(pack, dict) else {}
        req = pack.get("request") if isinstance(pack.get("request"), dict) else {}
        subj = req.get("subject") if isinstance(req.get("subject"), dict) else {}
        ans = _json(f / "answer.json")
        run = _json(f / RUN_FILE)
        entry = RunEntry(
            folder=display(f),
            written_at=datetime.fromtimestamp(_mtime(f), timezone.utc).isoformat(timespec="seconds"),
            case_id=req.get("case_id"), variant=req.get("variant"), subject=subj.get("id"),
            as_of=req.get("as_of"), verdict=ans.get("verdict") if isinstance(ans, dict) else None,
            signed=isinstance(run, dict) and isinstance(run.get("signature"), dict),
            pack_id=pack.get("pack_id"))
        if case is None or entry.case_id == case:
            out.append((_mtime(f), entry))
    out.sort(key=lambda t: (-t[0], t[1].folder))
    return [e for _, e in out]
