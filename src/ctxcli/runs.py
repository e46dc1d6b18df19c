"""Referring to runs: a run folder, its pack.json, or ``latest``; and the list of the project's runs.

Every command that reads a run accepts any of the three. ``latest`` is the run folder under the
project's runs folder (ctx.toml ``runs``, default runs/) whose pack.json was written last. The
list reads each run folder's marker, pack, answer and run manifest; nothing is verified here
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


def _run_folders(base: Path) -> list[Path]:
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


def _mtime(folder: Path) -> float:
    try:
        return (folder / "pack.json").stat().st_mtime
    except OSError:
        return 0.0


def latest(base: Path | None = None) -> Path:
    """The newest run folder (by pack.json's modification time; ties by name)."""
    from . import paths

    base = base or paths.runs_dir()
    folders = _run_folders(base)
    if not folders:
        raise UsageError(f"no runs yet under {_display(base)}: `latest` names the newest run folder there "
                         "(run `ctx investigate` first)")
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


def _display(p: Path) -> str:
    from .paths import display

    return display(p)


def _json(path: Path) -> Any:
    import orjson

    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_PACK_BYTES:
            return None
        return orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None


def list_runs(base: Path | None = None, *, case: str | None = None) -> list[RunEntry]:
    """The run folders under the runs folder, newest first."""
    from . import paths
    from .runfolder import RUN_FILE

    base = base or paths.runs_dir()
    out = []
    for f in _run_folders(base):
        pack = _json(f / "pack.json")
        pack = pack if isinstance(pack, dict) else {}
        req = pack.get("request") if isinstance(pack.get("request"), dict) else {}
        subj = req.get("subject") if isinstance(req.get("subject"), dict) else {}
        ans = _json(f / "answer.json")
        run = _json(f / RUN_FILE)
        entry = RunEntry(
            folder=_display(f),
            written_at=datetime.fromtimestamp(_mtime(f), timezone.utc).isoformat(timespec="seconds"),
            case_id=req.get("case_id"), variant=req.get("variant"), subject=subj.get("id"),
            as_of=req.get("as_of"), verdict=ans.get("verdict") if isinstance(ans, dict) else None,
            signed=isinstance(run, dict) and isinstance(run.get("signature"), dict),
            pack_id=pack.get("pack_id"))
        if case is None or entry.case_id == case:
            out.append((_mtime(f), entry))
    out.sort(key=lambda t: (-t[0], t[1].folder))
    return [e for _, e in out]
