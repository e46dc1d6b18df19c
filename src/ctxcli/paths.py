"""Where ctx finds things: the project root and the store.

The root is ``$CTX_ROOT`` when set, else the nearest folder at or above the working folder that
holds a ``ctx.toml`` (as pip and pytest find ``pyproject.toml``), else the working folder. Every
relative path of a project — manifests/, sources/, examples/cases/, the store, the runs folder —
is relative to the root, wherever the command runs."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

PROJECT_FILE = "ctx.toml"
DEFAULT_STORE = ".ctx/ctx.duckdb"
DEFAULT_RUNS = "runs"
_PROJECT_KEYS = {"store", "runs"}


def find_project(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding a ctx.toml, or None."""
    here = start.resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_FILE).is_file():
            return folder
    return None


_PINNED: list[Path] = []


def root() -> Path:
    env = os.environ.get("CTX_ROOT")
    if env:
        return Path(env)
    if _PINNED:
        return _PINNED[-1]
    cwd = Path.cwd()
    return find_project(cwd) or cwd


@contextmanager
def project_of(path: Path | str) -> Iterator[Path]:
    """Within the block, the root is the project that holds ``path`` (a run's pack: replay
    and explain-omissions read its case, playbook and store from its own project, wherever
    the command runs); unchanged when $CTX_ROOT is set or no ctx.toml lies above ``path``."""
    found = None if os.environ.get("CTX_ROOT") else find_project(Path(path).parent)
    if found is not None:
        _PINNED.append(found)
    try:
        yield root()
    finally:
        if found is not None:
            _PINNED.pop()


def is_project(folder: Path | None = None) -> bool:
    """Whether ``folder`` (default: the root) looks like a ctx project: a ctx.toml or a manifests/ folder."""
    f = folder or root()
    return (f / PROJECT_FILE).is_file() or (f / "manifests").is_dir()


def toml_table(name: str, folder: Path | None = None) -> dict[str, Any]:
    """The ``[name]`` table of the root's ctx.toml ({} without the file or the table); a file
    that is not TOML, or a ``name`` that is not a table, is a usage error."""
    from .errors import UsageError

    p = (folder or root()) / PROJECT_FILE
    if not p.is_file():
        return {}
    import tomllib

    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as e:
        raise UsageError(f"{PROJECT_FILE}: not valid TOML ({e})") from None
    sect = data.get(name, {})
    if not isinstance(sect, dict):
        raise UsageError(f"{PROJECT_FILE}: [{name}] must be a table")
    return sect


def project_settings(folder: Path | None = None) -> dict[str, Any]:
    """The ``[project]`` table of the root's ctx.toml ({} without one); a bad value is a usage error."""
    from .errors import UsageError

    sect = toml_table("project", folder)
    bad = sorted(set(sect) - _PROJECT_KEYS)
    if bad:
        raise UsageError(f"{PROJECT_FILE}: project.{bad[0]}: unknown setting (known: {', '.join(sorted(_PROJECT_KEYS))})")
    for k, v in sect.items():
        if not isinstance(v, str) or not v.strip() or "\x00" in v:
            raise UsageError(f"{PROJECT_FILE}: project.{k}: must be a non-empty string")
    return sect


_ROOT_NAME_OK = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def data_roots(folder: Path | None = None) -> dict[str, Path]:
    """The data roots ``[data.roots]`` of the project's ctx.toml names (name -> folder; a relative
    folder is relative to the project folder): folders outside the project that a manifest's
    ``snapshot: "@name/…"`` may read (load/parse.py resolve_snapshot). A bad name, value or key
    is a one-line usage error naming the field."""
    from .errors import UsageError

    base = folder or root()
    sect = toml_table("data", base)
    bad = sorted(set(sect) - {"roots"})
    if bad:
        raise UsageError(f"{PROJECT_FILE}: data.{bad[0]}: unknown setting (known: roots)")
    roots = sect.get("roots", {})
    if not isinstance(roots, dict):
        raise UsageError(f"{PROJECT_FILE}: data.roots must be a table of name = \"folder\"")
    out: dict[str, Path] = {}
    for name, value in roots.items():
        if not name or not set(name) <= _ROOT_NAME_OK:
            raise UsageError(f"{PROJECT_FILE}: data.roots.{name}: a root name takes letters, digits, '-' and '_'")
        if not isinstance(value, str) or not value.strip() or any(ord(ch) < 32 for ch in value):
            raise UsageError(f"{PROJECT_FILE}: data.roots.{name}: must be a folder path (a non-empty string)")
        p = Path(value)
        out[name] = p if p.is_absolute() else base / p
    return out


def default_store() -> Path | str:
    """The project's own store: ``store`` in ctx.toml, else .ctx/ctx.duckdb under the root."""
    from .store import is_postgres

    value = project_settings().get("store", DEFAULT_STORE)
    if is_postgres(value):
        from .util.passwords import secret_keys

        held = secret_keys(value)
        if held:
            from .errors import InputError

            raise InputError(f"project.store: a project file never holds a {held[0]} (use PGPASSFILE or the libpq "
                             "environment)", file="ctx.toml")
        return value
    p = Path(value)
    return p if p.is_absolute() else root() / p


def db_path(explicit: Path | str | None = None) -> Path | str:
    """The store address: ``explicit`` (--db), else $CTX_DB, else the project's store (ctx.toml
    ``store``, default .ctx/ctx.duckdb under the root). A ``postgresql://`` (or ``postgres://``)
    address stays a string (a PostgreSQL store); anything else is a path (a DuckDB file)."""
    from .store import is_postgres

    value = explicit if explicit is not None else os.environ.get("CTX_DB") or None
    if value is None:
        return default_store()
    return value if is_postgres(value) else Path(value)


def runs_dir() -> Path:
    """Where run folders go when --out is not given: ``runs`` in ctx.toml, else runs/ under the root."""
    p = Path(project_settings().get("runs", DEFAULT_RUNS))
    return p if p.is_absolute() else root() / p


def manifests_dir() -> Path:
    return root() / "manifests"


def playbooks_dir() -> Path:
    return root() / "manifests" / "playbooks"


def cases_dir() -> Path:
    return root() / "examples" / "cases"


def display(path: Path | str) -> str:
    """A path as shown in messages: relative to the project root when inside it, else as given."""
    try:
        return Path(path).resolve().relative_to(root().resolve()).as_posix()
    except ValueError:
        return str(path)


def toml_count(section: str, key: str, explicit: int | None, *, flag: str, minimum: int,
               default: int | None, what: str) -> int | None:
    """A whole-number setting of ctx.toml: ``explicit`` (its command-line ``flag``) when given,
    else ``[section] key``, else ``default``; below ``minimum``, or any other key in the section,
    is a one-line UsageError naming the file and field."""
    from .errors import UsageError

    if explicit is not None:
        if explicit < minimum:
            raise UsageError(f"{flag} must be {what}")
        return explicit
    sect = toml_table(section)
    bad = sorted(set(sect) - {key})
    if bad:
        raise UsageError(f"{PROJECT_FILE}: {section}.{bad[0]}: unknown setting (known: {key})")
    v = sect.get(key, default)
    if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < minimum):
        raise UsageError(f"{PROJECT_FILE}: {section}.{key}: must be {what}")
    return v


def keep_setting(explicit: int | None = None) -> int:
    """How many generations a load keeps: ``explicit`` (--keep-generations), else
    ``[generations] keep`` in ctx.toml, else 3."""
    from .store.generations import DEFAULT_KEEP

    return toml_count("generations", "keep", explicit, flag="--keep-generations", minimum=1, default=DEFAULT_KEEP,
                      what="a whole number of at least 1 (the current generation is always kept)")
