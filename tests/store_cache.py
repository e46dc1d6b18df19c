"""A store built once per planted-bug run instead of once per pytest session.

The planted-bug runner (tests/mutants.py) runs one or a few tests per mutant in a fresh pytest
session, and a session that uses the bundled store (``bundled_store``) or the retail project
(``retail_project``) builds it first: 2–4 s of every such mutant's run. With
``TESTS_STORE_CACHE`` naming a folder, :func:`build` keeps each built store there under a key
that covers everything the build's result can depend on, and a later session whose key matches
copies it instead of building:

- the source of every ctxcli module the build can run: the import closure of
  ``ctxcli.load.build`` (every ``import`` and ``from … import`` in a module, at the top or inside a
  function; a module that imports by name with ``import_module`` brings its whole package), and
  every data file under ``src/ctxcli`` (schemas, word lists);
- ``pyproject.toml`` (the parsers' entry points), the build's inputs (every file under the given
  folders) and the absolute paths the store records.

A mutant in any module of the closure changes the key, so that run builds its own store; a mutant
anywhere else (the gates, the packer, the answer layer, the agents, the server) reuses the
unmutated one. After a build the cache also checks that the build imported no ctxcli module
outside the closure (:class:`ClosureError`): the key cannot silently fall behind the code.

Beside its key each entry records every ctxcli module loaded when its build ended, with its
sha256 (``modules.json``), and the key of everything else (inputs, data files, pyproject). A
session whose key misses still uses an entry when that other key is the same and every recorded
module is unchanged: the build ran no code outside those modules, so it would run the same code
again (a mutant in the PostgreSQL reader, say, is in the closure but never runs in a DuckDB
build).

The runner fills the cache from the unmutated tree first and then sets
``TESTS_STORE_CACHE_READ_ONLY``: a mutated build is used by its own session and never kept.
Without ``TESTS_STORE_CACHE`` (the suite, a developer's run) :func:`build` just builds.
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import sys
from pathlib import Path
from typing import Callable, Iterable

ENV = "TESTS_STORE_CACHE"
READ_ONLY = "TESTS_STORE_CACHE_READ_ONLY"    # set: use what is there, store nothing new
ROOT_MODULE = "ctxcli.load.build"


class ClosureError(AssertionError):
    """The build imported a ctxcli module that the cache key does not cover."""


def _modules(src: Path) -> dict[str, Path]:
    """Every module under ``src/ctxcli`` by dotted name (a package by its own name)."""
    out = {}
    for p in sorted((src / "ctxcli").rglob("*.py")):
        parts = list(p.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def _imported(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """The ctxcli modules that ``name`` (at ``path``) imports anywhere in its text."""
    text = path.read_text(encoding="utf-8")
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(text, filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)
    if "import_module(" in text:           # by name: the whole package it lives in
        found.update(m for m in mods if m == package or m.startswith(package + "."))
    return {m for m in found if m in mods}


def closure(src: Path, root_module: str = ROOT_MODULE) -> set[str]:
    """The ctxcli modules ``root_module`` can run: its imports, theirs, and every parent package."""
    mods = _modules(src)
    todo, seen = [root_module], set()
    while todo:
        m = todo.pop()
        if m in seen or m not in mods:
            continue
        seen.add(m)
        parts = m.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        todo.extend(_imported(m, mods[m], mods))
    return seen


def _digest_files(h, base: Path, files: Iterable[Path]) -> None:
    for p in sorted(files):
        h.update(str(p.relative_to(base)).encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())


def key(src: Path, inputs: Iterable[Path], extra: str, roots: Iterable[str] = (ROOT_MODULE,),
        files: Iterable[str] = ()) -> tuple[str, set[str]]:
    """(the cache key, the modules it covers) for a build from ``inputs`` with the code at ``src``:
    the closures of ``roots`` and the modules ``files`` (their own text only)."""
    mods = _modules(src)
    covered = set().union(*(closure(src, r) for r in roots))
    h = hashlib.sha256(extra.encode() + b"\0" + sys.version.encode())
    _digest_files(h, src, [mods[m] for m in covered | {f for f in files if f in mods}])
    _digest_files(h, src, [p for p in (src / "ctxcli").rglob("*")
                           if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts])
    pyproject = src.parent / "pyproject.toml"
    if pyproject.is_file():
        _digest_files(h, src.parent, [pyproject])
    for d in inputs:
        h.update(str(d).encode() + b"\0")
        _digest_files(h, d, [p for p in Path(d).rglob("*") if p.is_file() and "__pycache__" not in p.parts])
    return h.hexdigest()[:32], covered


MODULES = "modules.json"


def loaded_modules(src: Path) -> dict[str, str]:
    """{module: sha256 of its file} of every ctxcli module this process has loaded from ``src``."""
    mods = _modules(src)
    return {m: hashlib.sha256(mods[m].read_bytes()).hexdigest()
            for m in sorted(sys.modules) if (m == "ctxcli" or m.startswith("ctxcli.")) and m in mods}


def modules_unchanged(record: dict, src: Path, base: str) -> bool:
    """Whether ``record`` (an entry's modules.json) was built under ``base`` by modules that are
    all still as they were."""
    mods = _modules(src)
    return record.get("base") == base and all(
        m in mods and hashlib.sha256(mods[m].read_bytes()).hexdigest() == h for m, h in record["modules"].items())


def _record(src: Path, base: str) -> str:
    import json

    return json.dumps({"base": base, "modules": loaded_modules(src)}, indent=0, sort_keys=True)


def _same_run(cache: Path, pattern: str, src: Path, base: str) -> Path | None:
    """A record under ``cache`` matching ``pattern`` whose build ran only unchanged modules."""
    import json

    for rec in sorted(cache.glob(pattern)):
        if ".part" in rec.parent.name or ".part" in rec.name:      # still being stored
            continue
        try:
            if modules_unchanged(json.loads(rec.read_text(encoding="utf-8")), src, base):
                return rec
        except (OSError, ValueError, KeyError):
            continue
    return None


def copy_linked(src: Path, dst: Path, ignore: Callable | None = None) -> None:
    """``shutil.copytree(src, dst)`` keeping hard links: a DuckDB store's live file and its newest
    generation (``<store>.generations/``) are one file, which is how the store knows its current
    generation (store/generations.py); copied apart, a cached store would read as generation
    none."""
    first: dict[tuple[int, int], str] = {}

    def copy(s: str, d: str) -> str:
        st = os.stat(s)
        k = (st.st_dev, st.st_ino)
        if st.st_nlink > 1 and k in first:
            os.link(first[k], d)
        else:
            shutil.copy2(s, d)
            first[k] = d
        return d

    shutil.copytree(src, dst, dirs_exist_ok=True, ignore=ignore, copy_function=copy)


def build(folder: Path, make: Callable[[], object], *, name: str, inputs: Iterable[Path], extra: str = "",
          src: Path | None = None) -> None:
    """Fill ``folder`` (empty, or not yet there) with what ``make()`` writes into it — from the
    cache when ``TESTS_STORE_CACHE`` is set and holds this build's key. The store must not record
    ``folder``'s own path (a cached copy lands in another session's folder); every absolute path
    it records must be in ``inputs`` or ``extra``."""
    cache = os.environ.get(ENV)
    if not cache:
        make()
        return
    import ctxcli

    src = src or Path(ctxcli.__file__).resolve().parents[1]
    inputs = [Path(p).resolve() for p in inputs]
    k, covered = key(src, inputs, f"{name}\0{extra}")
    base, _ = key(src, inputs, f"{name}\0{extra}", roots=())
    entry = Path(cache) / f"{name}-{k}"
    if not entry.is_dir():
        rec = _same_run(Path(cache), f"{name}-*/{MODULES}", src, base)
        entry = rec.parent if rec is not None else entry
    if entry.is_dir():
        copy_linked(entry, folder, ignore=shutil.ignore_patterns(MODULES))
        return
    before = set(sys.modules)
    make()
    used = {m for m in set(sys.modules) - before if m.startswith("ctxcli.") or m == "ctxcli"}
    if used - covered:
        raise ClosureError(f"the store cache's key misses modules the build imported: {sorted(used - covered)}")
    if os.environ.get(READ_ONLY):
        return
    part = entry.with_name(entry.name + f".part{os.getpid()}")
    copy_linked(folder, part)
    (part / MODULES).write_text(_record(src, base), encoding="utf-8")
    try:
        part.rename(entry)
    except OSError:                         # another session stored the same key first
        shutil.rmtree(part, ignore_errors=True)


# The bundled corpus in PostgreSQL (tests/test_postgres.py's ``loaded_pg``): ``api.store_init``
# and ``api.load`` run these modules (and api.py's own two functions, so its text is in the key).
PG_ROOTS = ("ctxcli.load.build", "ctxcli.load.postgres", "ctxcli.store.pg.admin", "ctxcli.check",
            "ctxcli.load.parse", "ctxcli.store.db", "ctxcli.load.vectors", "ctxcli.embed.model")


def database(srv, make: Callable[[str], object], *, name: str, inputs: Iterable[Path]) -> str:
    """A fresh database on the test server ``srv`` (tests/pgserver.py) holding what ``make(db)``
    writes into it; with ``TESTS_STORE_CACHE`` a copy of a template database of the same key
    (``CREATE DATABASE … TEMPLATE``), kept on the server the runner shares."""
    db = srv.new_database()
    if not os.environ.get(ENV):
        make(db)
        return db
    import ctxcli

    src = Path(ctxcli.__file__).resolve().parents[1]
    inputs = [Path(p).resolve() for p in inputs]
    k, covered = key(src, inputs, f"{name}\0{srv.port}", PG_ROOTS, ("ctxcli.api",))
    base, _ = key(src, inputs, f"{name}\0{srv.port}", roots=())
    template = f"ctx_cache_{k[:24]}"
    cache = Path(os.environ[ENV])
    with srv.admin() as c:
        have = c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (template,)).fetchone()
        if not have:        # a template whose load ran only unchanged modules
            rec = _same_run(cache, f"{name}-*.{MODULES}", src, base)
            if rec is not None:
                template = f"ctx_cache_{rec.name[len(name) + 1:][:24]}"
                have = c.execute("SELECT 1 FROM pg_database WHERE datname = %s", (template,)).fetchone()
        if have:
            c.execute(f"DROP DATABASE {db}")
            c.execute(f"CREATE DATABASE {db} TEMPLATE {template}")
            return db
    before = set(sys.modules)
    make(db)
    used = {m for m in set(sys.modules) - before if m.startswith("ctxcli.") or m == "ctxcli"}
    if used - covered - {"ctxcli.api"}:
        raise ClosureError(f"the store cache's key misses modules the load imported: {sorted(used - covered)}")
    if os.environ.get(READ_ONLY):
        return db
    import psycopg

    try:
        with srv.admin() as c:
            c.execute(f"CREATE DATABASE {template} TEMPLATE {db}")
    except psycopg.Error:                   # still in use, or another session made it first
        return db
    rec = cache / f"{name}-{k[:24]}.{MODULES}"
    part = rec.with_name(rec.name + f".part{os.getpid()}")
    part.write_text(_record(src, base), encoding="utf-8")
    os.replace(part, rec)
    return db
