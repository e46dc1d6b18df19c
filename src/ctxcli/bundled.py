"""The example data that ships with ctx: the repository's own manifests/, sources/ and
examples/cases/, declared per example in examples/examples.yaml.

In a built wheel they lie inside the package (``ctxcli/_bundled``, copied there by setup.py's
build step); in a clone or an editable install they are read from the repository itself, so the
data exists once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import InputError, UsageError

_PACKAGE = Path(__file__).resolve().parent
DECLARATION = "examples/examples.yaml"


def bundle_root() -> Path:
    """The folder holding manifests/, sources/ and examples/ of the bundled examples."""
    inside = _PACKAGE / "_bundled"
    if (inside / DECLARATION).is_file():
        return inside
    repo = _PACKAGE.parents[1]          # src/ctxcli -> the repository
    if (repo / DECLARATION).is_file():
        return repo
    raise InputError("this installation of ctx carries no example data (no ctxcli/_bundled): reinstall ctx")


def examples() -> dict[str, dict[str, Any]]:
    """The declared examples, by name."""
    from .util.yamlio import read_yaml

    root = bundle_root()
    data = read_yaml(root / DECLARATION, display=DECLARATION)
    if not isinstance(data, dict):
        raise InputError("must be a mapping of example names", file=DECLARATION)
    return data


def example_files(name: str) -> list[str]:
    """Every file (relative to the bundle root) that makes up example ``name``, sorted."""
    from .util.yamlio import read_yaml

    known = examples()
    if name not in known:
        raise UsageError(f"no example {name!r} (known: {', '.join(sorted(known))})")
    ex, root = known[name], bundle_root()
    rels: set[str] = set(example_files(ex["extends"])) if ex.get("extends") else set()
    for extra in ex.get("files", []):       # files or folders an example adds, as they are
        p = root / str(extra)
        found = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else []
        if not found:
            raise InputError(f"example {name!r} names a missing file {extra}", file=DECLARATION)
        rels.update(x.relative_to(root).as_posix() for x in found)
    for sid in ex.get("sources", []):
        m = f"manifests/sources/{sid}.yaml"
        manifest = read_yaml(root / m, display=m)
        rels.add(m)
        snap = root / str(manifest["snapshot"])
        files = [snap] if snap.is_file() else sorted(p for p in snap.rglob("*") if p.is_file())
        rels.update(p.relative_to(root).as_posix() for p in files)
    rels.update(f"manifests/playbooks/{p}.yaml" for p in ex.get("playbooks", []))
    rels.update(f"examples/cases/{c}.yaml" for c in ex.get("cases", []))
    missing = sorted(r for r in rels if not (root / r).is_file())
    if missing:
        raise InputError(f"example {name!r} names a missing file {missing[0]}", file=DECLARATION)
    return sorted(r for r in rels if "__pycache__" not in r)


def example_cases(name: str) -> list[str]:
    """The cases of example ``name`` (an example that extends another has that one's)."""
    ex = examples()[name]
    return list(ex.get("cases") or (example_cases(ex["extends"]) if ex.get("extends") else []))
