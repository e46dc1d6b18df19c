"""The layers of src/ctxcli (docs/modules.md), as a test: an ``ast`` walk over every module that
also sees the imports inside functions (kept there for start-up time, and invisible to a
linter that reads only the top of a file).

A module may import its own layer and the layers below it, never one above; the engine never
imports the answer layer; nothing above ``store/`` (and ``load/``, which builds the store)
imports duckdb or psycopg."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Top to bottom. A module belongs to the layer of the longest prefix that names it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("front ends", ("ctxcli.cli", "ctxcli.serve", "ctxcli.evaluate", "ctxcli.eval_junit")),
    ("api", ("ctxcli.api",)),
    ("below the api", ("ctxcli.postmortem", "ctxcli.answer.ask", "ctxcli.report", "ctxcli.runs", "ctxcli.otel",
                       "ctxcli.scaffold", "ctxcli.ledger")),
    ("pipeline", ("ctxcli.pipeline", "ctxcli.policy")),
    ("project", ("ctxcli.project", "ctxcli.check", "ctxcli.params", "ctxcli.agents", "ctxcli.schemas")),
    ("engine / answer", ("ctxcli.engine", "ctxcli.answer", "ctxcli.load", "ctxcli.embed", "ctxcli.injection")),
    ("files", ("ctxcli.paths", "ctxcli.write", "ctxcli.runfolder", "ctxcli.erasures")),
    ("store", ("ctxcli.store",)),
    ("util", ("ctxcli.util", "ctxcli.models", "ctxcli.errors", "ctxcli.tokens", "ctxcli.bundled",
              "ctxcli")),
]

# Known upward imports, each with the reason it stays for now. Keep this list short.
ALLOWED: set[tuple[str, str]] = set()

DB_DRIVERS = ("duckdb", "psycopg", "psycopg_pool")
DB_ALLOWED = ("ctxcli.store", "ctxcli.load")     # load/ writes the DuckDB file it builds


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, src: Path = SRC) -> list[tuple[str, int]]:
    """Every ctxcli module (or package) ``path`` imports, anywhere in the file, with its line;
    ``from . import x`` names ``x`` when it is a module. Non-ctxcli imports are returned as is."""
    name = module_name(path, src)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                is_module = (src / sub.replace(".", "/")).with_suffix(".py").is_file() or (
                    src / sub.replace(".", "/")).is_dir()
                out.append((sub if is_module else target, node.lineno))
    return out


def layer_of(module: str) -> int:
    best, rank = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank is not None, f"{module} is in no layer: add it to LAYERS (and docs/modules.md)"
    return rank


def modules(src: Path = SRC) -> list[Path]:
    return sorted((src / "ctxcli").rglob("*.py"))


def violations(src: Path = SRC) -> list[str]:
    out = []
    for path in modules(src):
        me = module_name(path, src)
        mine = layer_of(me)
        for target, line in imports(path, src):
            where = f"src/{path.relative_to(src).as_posix()}:{line}: {me} imports {target}"
            if target.split(".")[0] in DB_DRIVERS and not me.startswith(DB_ALLOWED):
                out.append(f"{where} (a database driver above store/)")
            if not target.startswith("ctxcli"):
                continue
            if (me, target) in ALLOWED:
                continue
            theirs = layer_of(target)
            if theirs < mine:
                out.append(f"{where} ({LAYERS[mine][0]} imports {LAYERS[theirs][0]}, a layer above it)")
            if me.startswith("ctxcli.engine") and target.startswith("ctxcli.answer"):
                out.append(f"{where} (the engine never imports the answer layer)")
    return out


def test_no_module_imports_a_layer_above_its_own():
    assert violations() == []


def test_every_module_is_in_a_layer():
    for path in modules():
        layer_of(module_name(path))


def test_the_walk_sees_imports_inside_functions(tmp_path):
    """An upward import hidden in a function body is found, as one at the top of the file."""
    fake = tmp_path / "ctxcli"
    (fake / "engine").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "api.py").write_text("")
    (fake / "answer").mkdir()
    (fake / "answer" / "__init__.py").write_text("")
    (fake / "engine" / "__init__.py").write_text("")
    (fake / "engine" / "plan.py").write_text("import os\n\n\ndef f():\n    from .. import api\n"
                                             "    from ..answer import expr\n    import duckdb\n")
    assert violations(tmp_path) == [
        "src/ctxcli/engine/plan.py:5: ctxcli.engine.plan imports ctxcli.api (engine / answer imports api, a layer above it)",
        "src/ctxcli/engine/plan.py:6: ctxcli.engine.plan imports ctxcli.answer (the engine never imports the answer layer)",
        "src/ctxcli/engine/plan.py:7: ctxcli.engine.plan imports duckdb (a database driver above store/)",
    ]


@pytest.mark.parametrize("module, layer", [("ctxcli.answer.ask", "below the api"), ("ctxcli.answer.expr",
                                                                                   "engine / answer"),
                                           ("ctxcli.project", "project"), ("ctxcli", "util")])
def test_the_longest_prefix_decides(module, layer):
    assert LAYERS[layer_of(module)][0] == layer


def test_docs_module_map_is_the_layer_table():
    """docs/modules.md lists the same layers, in the same order, with the same modules."""
    import re

    doc = (SRC.parent / "docs" / "modules.md").read_text(encoding="utf-8")
    rows = [r for r in doc.split("## Layers, top to bottom", 1)[1].split("\n## ", 1)[0].splitlines()
            if r.startswith("| ") and not r.startswith("| layer") and not r.startswith("|---")]
    documented = []
    for row in rows:
        name, mods = (c.strip() for c in row.strip("|").split("|")[:2])
        names = tuple("ctxcli." + m.removesuffix("/").removesuffix(".py").replace("/", ".")
                      for m in re.findall(r"`([^`]+)`", mods))
        documented.append((name, names))
    assert documented == [(n, tuple(p for p in prefixes if p != "ctxcli")) for n, prefixes in LAYERS]
