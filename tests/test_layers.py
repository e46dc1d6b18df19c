"""The layers of src/ctxcli (docs/modules.md), as a test: an ``ast`` walk over every module that
also sees the imports inside functions (kept there for start-up time, and invisible to a
linter that reads only the top of a file).

A module may import its own layer and the layers below it, never one above; the engine never
imports the answer layer; nothing above ``store/`` (and ``load/``, which builds the store)
imports duckdb or psycopg.

No two modules import each other, directly or round a longer circle (a function-level import
closes a circle as well as one at the top), and no module imports another's private name
(a leading underscore, not a dunder): what two modules share lives where both can import it,
under a public name. The known exceptions are listed below with their reasons; the test fails
on a new one and on a listed one that no longer occurs, so the lists only shrink."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

# Top to bottom. A module belongs to the layer of the longest prefix that names it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("front ends", ("ctxcli.cli", "ctxcli.serve", "ctxcli.evaluate")),
    ("api", ("ctxcli.api",)),
    ("below the api", ("ctxcli.postmortem", "ctxcli.answer.ask", "ctxcli.report", "ctxcli.run_list", "ctxcli.otel",
                       "ctxcli.scaffold", "ctxcli.ledger")),
    ("pipeline", ("ctxcli.pipeline", "ctxcli.request_policy")),
    ("project", ("ctxcli.project", "ctxcli.check", "ctxcli.params", "ctxcli.agents", "ctxcli.schemas", "ctxcli.live")),
    ("engine / answer", ("ctxcli.engine", "ctxcli.answer", "ctxcli.load", "ctxcli.embed", "ctxcli.injection")),
    ("files", ("ctxcli.paths", "ctxcli.write", "ctxcli.run_manifest", "ctxcli.erasures")),
    ("store", ("ctxcli.store",)),
    ("util", ("ctxcli.util", "ctxcli.models", "ctxcli.errors", "ctxcli.tokens", "ctxcli.bundled",
              "ctxcli")),
]

# Known upward imports, each with the reason it stays for now. Keep this list short.
ALLOWED: set[tuple[str, str]] = set()

# Known import circles (the modules of each), each with the reason it stays for now.
ALLOWED_CYCLES: dict[frozenset[str], str] = {
}

# Known imports of another module's private name, (importer, module.name), each with its reason.
ALLOWED_PRIVATE: dict[tuple[str, str], str] = {
}

DB_DRIVERS = ("duckdb", "psycopg", "psycopg_pool")
DB_ALLOWED = ("ctxcli.store", "ctxcli.load")     # load/ writes the DuckDB file it builds


def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _from_target(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from … import`` statement reads from (relative ones resolved)."""
    if node.level:
        base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))
    return node.module or ""


def _is_module(name: str, src: Path) -> bool:
    p = src / name.replace(".", "/")
    return p.with_suffix(".py").is_file() or p.is_dir()


def _nodes(path: Path, src: Path):
    """(the module's package, every import statement anywhere in the file)."""
    name = module_name(path, src)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return package, [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def imports(path: Path, src: Path = SRC) -> list[tuple[str, int]]:
    """Every ctxcli module (or package) ``path`` imports, anywhere in the file, with its line;
    ``from . import x`` names ``x`` when it is a module. Non-ctxcli imports are returned as is."""
    package, nodes = _nodes(path, src)
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
            continue
        target = _from_target(node, package)
        for a in node.names:
            sub = f"{target}.{a.name}"
            out.append((sub if _is_module(sub, src) else target, node.lineno))
    return out


def private_imports(src: Path = SRC) -> dict[tuple[str, str], str]:
    """{(importer, module.name): where} of every use of another ctxcli module's private name:
    imported (``from .x import _y``) or read off the module imported by a name
    (``from ..engine import x as m`` … ``m._y``), at the top or inside a function; a dunder is
    not private."""
    out: dict[tuple[str, str], str] = {}

    def found(me: str, name: str, path: Path, line: int, how: str) -> None:
        out.setdefault((me, name), f"src/{path.relative_to(src).as_posix()}:{line}: {me} {how} {name}, "
                                   "a private name of another module")

    for path in modules(src):
        me = module_name(path, src)
        package, nodes = _nodes(path, src)
        aliases: dict[str, str] = {}        # a name bound to another ctxcli module -> that module
        for node in nodes:
            if isinstance(node, ast.Import):
                aliases.update({a.asname: a.name for a in node.names if a.asname and a.name.startswith("ctxcli")})
                continue
            target = _from_target(node, package)
            if not target.startswith("ctxcli") or target == me:
                continue
            for a in node.names:
                if a.name.startswith("_") and not a.name.startswith("__"):
                    found(me, f"{target}.{a.name}", path, node.lineno, "imports")
                elif _is_module(f"{target}.{a.name}", src) and f"{target}.{a.name}" != me:
                    aliases[a.asname or a.name] = f"{target}.{a.name}"
        if not aliases:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                    and node.attr.startswith("_") and not node.attr.startswith("__"):
                found(me, f"{aliases[node.value.id]}.{node.attr}", path, node.lineno, "reads")
    return out


def cycles(src: Path = SRC) -> dict[frozenset[str], str]:
    """{modules: the imports that close the circle} of every set of ctxcli modules that import
    one another round a circle (Tarjan's strongly connected components of the import graph,
    imports inside functions included)."""
    edges: dict[str, dict[str, str]] = {}
    for path in modules(src):
        me = module_name(path, src)
        mine = edges.setdefault(me, {})
        for target, line in imports(path, src):
            if target.startswith("ctxcli") and target != me:
                mine.setdefault(target, f"src/{path.relative_to(src).as_posix()}:{line}")
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: dict[frozenset[str], str] = {}

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges[v]:
            if w not in edges:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while not comp or v not in comp:
                comp.add(stack.pop())
            if len(comp) > 1:
                out[frozenset(comp)] = "; ".join(f"{where}: {a} imports {b}" for a in sorted(comp)
                                                 for b, where in sorted(edges[a].items()) if b in comp)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def unexplained(found: dict, allowed: dict, what: str) -> list[str]:
    """A line per ``found`` entry not in ``allowed`` and per ``allowed`` entry no longer found."""
    new = [f"{found[k]} ({what}: remove it, or add it to the list with its reason)" for k in found
           if k not in allowed]
    gone = [f"{sorted(k) if isinstance(k, frozenset) else k} is listed but no longer occurs: remove it from "
            f"the list" for k in allowed if k not in found]
    return sorted(new) + sorted(gone)


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


def test_no_import_cycles():
    assert unexplained(cycles(), ALLOWED_CYCLES, "an import circle") == []


def test_no_private_name_is_imported_across_modules():
    assert unexplained(private_imports(), ALLOWED_PRIVATE, "a private import") == []


def test_every_listed_exception_says_why():
    assert all(len(r) > 20 for r in [*ALLOWED_CYCLES.values(), *ALLOWED_PRIVATE.values()])


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in {"ctxcli/__init__.py": "", **files}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_a_circle_closed_inside_a_function_is_found_with_its_modules(tmp_path):
    src = _tree(tmp_path, {
        "ctxcli/load/__init__.py": "",
        "ctxcli/load/build.py": "from .reuse import copy_rows\nfrom . import parse\n",
        "ctxcli/load/reuse.py": "import os\n\n\ndef f():\n    from .build import json_list\n",
        "ctxcli/load/parse.py": "from ..util import canon\n",      # a chain, not a circle
        "ctxcli/util/__init__.py": "", "ctxcli/util/canon.py": "",
    })
    assert cycles(src) == {frozenset({"ctxcli.load.build", "ctxcli.load.reuse"}): (
        "src/ctxcli/load/build.py:1: ctxcli.load.build imports ctxcli.load.reuse; "
        "src/ctxcli/load/reuse.py:5: ctxcli.load.reuse imports ctxcli.load.build")}
    (src / "ctxcli/load/reuse.py").write_text("from ..util.canon import json_list\n")
    assert cycles(src) == {}


def test_a_longer_circle_through_a_package_is_one_entry(tmp_path):
    src = _tree(tmp_path, {
        "ctxcli/store/__init__.py": "def open_store():\n    from .pg.reader import open_pg\n",
        "ctxcli/store/readers.py": "def key():\n    from . import is_postgres\n",
        "ctxcli/store/pg/__init__.py": "",
        "ctxcli/store/pg/reader.py": "def open_pg():\n    from .. import readers\n",
    })
    assert list(cycles(src)) == [frozenset({"ctxcli.store", "ctxcli.store.pg.reader", "ctxcli.store.readers"})]


def test_a_private_name_of_another_module_is_found_at_the_top_and_inside_functions(tmp_path):
    src = _tree(tmp_path, {
        "ctxcli/ledger/__init__.py": "",
        "ctxcli/ledger/commit.py": "def _append():\n    pass\n",
        "ctxcli/ledger/erasure.py": ("from .commit import locked, _append\nfrom .. import __version__\n\n\n"
                                      "def f():\n    from ..run_manifest import _mac, key_id\n"
                                      "    from . import commit as _commit\n"),
        "ctxcli/run_manifest.py": "from .run_manifest import _self\n",      # its own name: not across modules
        "ctxcli/ledger/verdicts.py": ("from . import commit as c\nimport ctxcli.run_manifest as rm\n\n\n"
                                      "def g():\n    return c._append, rm.key_id, c.__name__, c.locked\n\n\n"
                                      "def h():\n    return rm._mac\n"),
    })
    assert private_imports(src) == {
        ("ctxcli.ledger.verdicts", "ctxcli.ledger.commit._append"):
            "src/ctxcli/ledger/verdicts.py:6: ctxcli.ledger.verdicts reads ctxcli.ledger.commit._append, "
            "a private name of another module",
        ("ctxcli.ledger.verdicts", "ctxcli.run_manifest._mac"):
            "src/ctxcli/ledger/verdicts.py:10: ctxcli.ledger.verdicts reads ctxcli.run_manifest._mac, "
            "a private name of another module",
        ("ctxcli.ledger.erasure", "ctxcli.ledger.commit._append"):
            "src/ctxcli/ledger/erasure.py:1: ctxcli.ledger.erasure imports ctxcli.ledger.commit._append, "
            "a private name of another module",
        ("ctxcli.ledger.erasure", "ctxcli.run_manifest._mac"):
            "src/ctxcli/ledger/erasure.py:6: ctxcli.ledger.erasure imports ctxcli.run_manifest._mac, "
            "a private name of another module",
    }


def test_the_lists_only_shrink():
    """A new entry fails, and so does a listed one that no longer occurs."""
    found = {("a", "b._c"): "where a imports b._c", ("d", "e._f"): "where d imports e._f"}
    allowed = {("a", "b._c"): "a reason", ("x", "y._z"): "a reason"}
    assert unexplained(found, allowed, "a private import") == [
        "where d imports e._f (a private import: remove it, or add it to the list with its reason)",
        "('x', 'y._z') is listed but no longer occurs: remove it from the list",
    ]
    assert unexplained(found, {**allowed, ("d", "e._f"): "r"}, "a private import") == [
        "('x', 'y._z') is listed but no longer occurs: remove it from the list"]
    circle = frozenset({"m.a", "m.b"})
    assert unexplained({}, {circle: "r"}, "an import circle") == [
        "['m.a', 'm.b'] is listed but no longer occurs: remove it from the list"]


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
