"""Where ctx finds things: the project root (CTX_ROOT or the working folder) and the store."""

from __future__ import annotations

import os
from pathlib import Path


def root() -> Path:
    env = os.environ.get("CTX_ROOT")
    return Path(env) if env else Path.cwd()


def db_path(explicit: Path | None = None) -> Path:
    if explicit is not None:
        return Path(explicit)
    env = os.environ.get("CTX_DB")
    return Path(env) if env else root() / ".ctx" / "ctx.duckdb"


def manifests_dir() -> Path:
    return root() / "manifests"


def playbooks_dir() -> Path:
    return root() / "manifests" / "playbooks"


def cases_dir() -> Path:
    return root() / "examples" / "cases"
