"""Where ctx finds things: the project root (CTX_ROOT or the working folder) and the store."""

from __future__ import annotations

import os
from pathlib import Path


def root() -> Path:
    env = os.environ.get("CTX_ROOT")
    return Path(env) if env else Path.cwd()


def db_path(explicit: Path | str | None = None) -> Path | str:
    """The store address: ``explicit`` (--db), else $CTX_DB, else .ctx/ctx.duckdb under the root.
    A ``postgresql://`` (or ``postgres://``) address stays a string (a PostgreSQL store);
    anything else is a path (a DuckDB file)."""
    from .store import is_postgres

    value = explicit if explicit is not None else os.environ.get("CTX_DB") or None
    if value is None:
        return root() / ".ctx" / "ctx.duckdb"
    return value if is_postgres(value) else Path(value)


def manifests_dir() -> Path:
    return root() / "manifests"


def playbooks_dir() -> Path:
    return root() / "manifests" / "playbooks"


def cases_dir() -> Path:
    return root() / "examples" / "cases"
