"""Parsers as plugins (issue 49.10): the ``ctx.parsers`` entry-point group. A tiny parser
package is "installed" the way pip leaves one in site-packages (the module and its .dist-info:
METADATA, entry_points.txt, RECORD) into a folder on PYTHONPATH; the package is the one
docs/authoring.md shows ("Write a parser plugin", its ``<!-- plugin: PATH -->`` blocks), so
the guide's example is what runs here. Its records must be checked and governed like any
source's; a broken or clashing plugin is one line naming it, never a traceback."""

from __future__ import annotations

import hashlib
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .conftest import REPO, run_cli

CTX = str(Path(sys.executable).parent / "ctx")
GUIDE = REPO / "docs" / "authoring.md"
BLOCK = re.compile(r"<!-- plugin: (?P<path>\S+) -->\n```[a-z]*\n(?P<body>.*?)\n```", re.S)
SCAFFOLD = REPO / "src" / "ctxcli" / "scaffold" / "empty"
MANIFEST = "manifests/sources/expense-notes.yaml"
MODULES = ("ctx_tiny_parser", "ctx_other_parser")
BUNDLED_NAMES = "api, git, json-export, markdown, records, table"


def guide() -> dict[str, str]:
    return {m["path"]: m["body"] + "\n" for m in BLOCK.finditer(GUIDE.read_text(encoding="utf-8"))}


def install(site: Path, code: str | None = None, *, dist: str = "ctx-tiny-parser", version: str = "0.1",
            module: str = "ctx_tiny_parser", entry: str | None = None) -> Path:
    """``module`` and ``dist``'s .dist-info in ``site``, as pip leaves them; the code and the
    entry point are the guide's unless given."""
    g = guide()
    if entry is None:
        (name, value), = tomllib.loads(g["pyproject.toml"])["project"]["entry-points"]["ctx.parsers"].items()
        entry = f"{name} = {value}"
    pkg = site / module
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text(code if code is not None else g["ctx_tiny_parser/__init__.py"])
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[ctx.parsers]\n{entry}\n")
    (info / "INSTALLER").write_text("pip\n")
    rows = []
    for p in sorted([pkg / "__init__.py", info / "METADATA", info / "entry_points.txt", info / "INSTALLER"]):
        digest = base64.urlsafe_b64encode(hashlib.sha256(p.read_bytes()).digest()).rstrip(b"=").decode()
        rows.append(f"{p.relative_to(site).as_posix()},sha256={digest},{p.stat().st_size}")
    (info / "RECORD").write_text("\n".join([*rows, f"{info.name}/RECORD,,"]) + "\n")
    return site


def project(tmp_path: Path, parser: str = "tiny") -> Path:
    """The `ctx init` example with the guide's notes source and the playbook's note type."""
    proj = tmp_path / "proj"
    shutil.copytree(SCAFFOLD, proj)
    g = guide()
    for path in (MANIFEST, "sources/expense-notes/notes.txt"):
        (proj / path).parent.mkdir(parents=True, exist_ok=True)
        (proj / path).write_text(g[path])
    m = proj / MANIFEST
    m.write_text(m.read_text().replace("parser: tiny\n", f"parser: {parser}\n"))
    pb = proj / "manifests" / "playbooks" / "expense-review.yaml"
    pb.write_text(pb.read_text().replace("evidence_types:\n", "evidence_types:\n" + g["evidence_types"], 1))
    return proj


def ctx(args, proj: Path, site: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(NO_COLOR="1", COLUMNS="200")
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return subprocess.run([CTX, *map(str, args)], cwd=proj, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def plugins(monkeypatch):
    """In-process: a fresh look at the entry points after a test puts a site folder on sys.path."""
    from ctxcli.load import parsers

    monkeypatch.setattr(parsers, "_FOUND", None)
    monkeypatch.setattr(parsers, "_LOADED", {})
    for name in [n for n in sys.modules if n.startswith(MODULES)]:
        monkeypatch.delitem(sys.modules, name)

    def put(site: Path) -> Path:
        monkeypatch.syspath_prepend(str(site))
        monkeypatch.setattr(parsers, "_FOUND", None)
        return site

    yield put
    for name in [n for n in sys.modules if n.startswith(MODULES)]:
        del sys.modules[name]


def cli(args, proj: Path, monkeypatch):
    monkeypatch.setenv("CTX_ROOT", str(proj))
    monkeypatch.delenv("CTX_DB", raising=False)
    return run_cli(args)


# --- the bundled parsers are registered the same way -------------------------------------------

def test_pyproject_registers_the_bundled_parsers_as_the_in_tree_table_says():
    from ctxcli.load.parsers import BUNDLED

    doc = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert doc["project"]["entry-points"]["ctx.parsers"] == BUNDLED
    for name, value in BUNDLED.items():        # each names a Parser of that name
        from importlib import import_module

        module, attr = value.split(":")
        assert getattr(import_module(module), attr).__name__ == attr, name


def test_the_bundled_parsers_come_from_the_distribution_metadata_when_it_has_them(tmp_path, plugins):
    """An install of this project (editable or a wheel) carries the entry points: the lookup
    finds the bundled parsers there, not in the in-tree fallback (which would add them again)."""
    from ctxcli.load import parsers

    site = tmp_path / "site"
    info = site / "ctx_investigator-9.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ctx-investigator\nVersion: 9.9\n")
    (info / "entry_points.txt").write_text("[ctx.parsers]\n" + "".join(
        f"{k} = {v}\n" for k, v in parsers.BUNDLED.items()))
    plugins(site)
    found = parsers.installed()
    assert {k: [(o.dist, o.version, o.bundled) for o in v] for k, v in found.items()} == {
        k: [("ctx-investigator", "9.9", True)] for k in parsers.BUNDLED}
    assert type(parsers.get("records")).__name__ == "RecordsParser"


def test_without_metadata_the_bundled_parsers_come_from_the_in_tree_table(plugins, monkeypatch):
    import importlib.metadata

    from ctxcli.load import parsers

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [])
    assert sorted(parsers.installed()) == sorted(parsers.BUNDLED)
    assert all(o.bundled and o.dist == "ctx-investigator" for v in parsers.installed().values() for o in v)


def test_help_does_not_look_up_entry_points():
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "ctxcli.cli.main", "--help"], capture_output=True,
                       text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=120)
    assert r.returncode == 0
    assert "ctxcli.load.parsers" not in r.stderr


# --- an installed plugin, end to end ------------------------------------------------------------

def test_an_installed_plugin_loads_and_its_records_are_governed_like_any_other(tmp_path):
    site = install(tmp_path / "site")
    proj = project(tmp_path)
    r = ctx(["sources", "parsers", "--json"], proj, site)
    assert r.returncode == 0, r.stderr
    rows = {p["parser"]: p for p in json.loads(r.stdout)["parsers"]}
    assert sorted(rows) == ["api", "git", "json-export", "markdown", "records", "table", "tiny"]
    assert rows["tiny"] == {"parser": "tiny", "from": "ctx-tiny-parser", "version": "0.1",
                            "entry_point": "ctx_tiny_parser:parse", "clash": False}
    assert {rows[n]["from"] for n in rows if n != "tiny"} == {"bundled"}
    r = ctx(["sources", "parsers"], proj, site)
    assert "│ tiny        │ ctx-tiny-parser │ 0.1     │ ctx_tiny_parser:parse" in r.stdout

    r = ctx(["load", "--json"], proj, site)
    assert r.returncode == 0, r.stderr
    notes = next(s for s in json.loads(r.stdout)["sources"] if s["source_id"] == "expense-notes")
    assert notes["objects"] == 2

    def cited(proj, site=site) -> dict[str, dict]:
        r = ctx(["investigate", "EXP-7", "--json"], proj, site)
        assert r.returncode == 0, r.stderr
        pack = json.loads(Path(json.loads(r.stdout)["pack"]).read_text())
        return {e["object_id"]: e for e in pack["evidence"]}, r.stdout + json.dumps(pack)

    got, text = cited(proj)
    assert (got["EXP-7-N1"]["source_id"], got["EXP-7-N1"]["locator"]) == ("expense-notes", "notes.txt#L1")
    assert "EXP-7-N2" not in text            # audit:read, which analyst-4 lacks: withheld, not even named
    assert "Internal audit" not in text
    case = proj / "examples" / "cases" / "EXP-7.yaml"
    case.write_text(case.read_text().replace("scopes: [expense:read, policy:read]",
                                             "scopes: [expense:read, policy:read, audit:read]"))
    got, _ = cited(proj)
    assert got["EXP-7-N2"]["locator"] == "notes.txt#L4"     # a subject holding the scope reads it
    # a run reads the store, not the sources: it needs no plugin (and looks up no entry point)
    got, _ = cited(proj, site=None)
    assert {"EXP-7-N1", "EXP-7-N2"} <= set(got)


# --- errors: one line each, exit 2 ---------------------------------------------------------------

def test_a_manifest_naming_an_unknown_parser_gets_a_did_you_mean_over_the_installed_names(tmp_path, plugins,
                                                                                        monkeypatch):
    site = install(tmp_path / "site")
    proj = project(tmp_path, parser="tinny")
    r = ctx(["load"], proj, site)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"ctx: error: {MANIFEST}:11:1: parser: no installed parser is named 'tinny' "
                        f"(did you mean 'tiny'? installed: {BUNDLED_NAMES}, tiny)\n")
    r = cli(["load"], proj, monkeypatch)        # nothing installed: no near name
    assert (r.exit_code, r.stderr) == (2, f"ctx: error: {MANIFEST}:11:1: parser: no installed parser is named "
                                          f"'tinny' (installed: {BUNDLED_NAMES})\n")
    plugins(site)
    r = cli(["check"], proj, monkeypatch)       # ctx check reports it among its problems (exit 1)
    assert (r.exit_code, r.stderr) == (1, "checked 5 file(s): 1 problem(s)\n")
    assert r.stdout == (f"{MANIFEST}:11:1: parser: no installed parser is named 'tinny' "
                        f"(did you mean 'tiny'? installed: {BUNDLED_NAMES}, tiny)\n")
    r = cli(["check", str(proj / MANIFEST)], proj, monkeypatch)   # one file: its own check says it
    assert (r.exit_code, r.stderr) == (1, "checked 1 file(s): 1 problem(s)\n")
    assert r.stdout == (f"{MANIFEST}:11:1: parser: no installed parser is named 'tinny' "
                        f"(did you mean 'tiny'? installed: {BUNDLED_NAMES}, tiny)\n")


def test_two_distributions_registering_one_name_is_an_error_naming_both(tmp_path, plugins, monkeypatch):
    site = install(tmp_path / "site")
    install(site, "def parse(source):\n    return []\n", dist="ctx-other-parser", version="0.2",
            module="ctx_other_parser", entry="tiny = ctx_other_parser:parse")
    plugins(site)
    proj = project(tmp_path)
    r = cli(["load"], proj, monkeypatch)
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == (f"ctx: error: {MANIFEST}:11:1: parser: parser 'tiny' is registered by two distributions, "
                        f"ctx-other-parser and ctx-tiny-parser (uninstall one)\n")
    r = cli(["sources", "parsers"], proj, monkeypatch)
    assert r.exit_code == 0
    assert [ln.split("│")[1:3] for ln in r.stdout.splitlines() if "clash" in ln] == [
        [" tiny (clash) ", " ctx-other-parser "], [" tiny (clash) ", " ctx-tiny-parser  "]]


def hide_ctx_metadata(monkeypatch):
    """As when ctx runs from a source tree: its own distribution registers no entry point,
    the plugins installed beside it still do."""
    import importlib.metadata

    from ctxcli.load import parsers

    real = importlib.metadata.entry_points
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [
        ep for ep in real(group=group) if ep.dist is None or ep.dist.name != "ctx-investigator"])
    monkeypatch.setattr(parsers, "_FOUND", None)
    monkeypatch.setattr(parsers, "_LOADED", {})


@pytest.mark.parametrize("metadata", ["installed", "source tree"])
def test_a_plugin_reusing_a_bundled_name_is_refused_for_that_name(tmp_path, plugins, monkeypatch, metadata):
    plugins(install(tmp_path / "site", entry="records = ctx_tiny_parser:parse"))
    if metadata == "source tree":
        hide_ctx_metadata(monkeypatch)
    r = cli(["load"], project(tmp_path), monkeypatch)
    assert r.exit_code == 2
    assert r.stderr == ("ctx: error: manifests/sources/expense-ledger.yaml:14:1: parser: parser 'records' is "
                        "registered by two distributions, ctx-investigator and ctx-tiny-parser (uninstall one)\n")


def test_from_a_source_tree_with_a_plugin_installed_the_bundled_parsers_are_still_there(tmp_path, plugins,
                                                                                      monkeypatch):
    from ctxcli.load import parsers

    plugins(install(tmp_path / "site"))
    hide_ctx_metadata(monkeypatch)
    found = parsers.installed()
    assert sorted(found) == sorted([*parsers.BUNDLED, "tiny"])
    assert [(o.dist, o.bundled) for o in found["records"]] == [("ctx-investigator", True)]
    assert [(o.dist, o.bundled) for o in found["tiny"]] == [("ctx-tiny-parser", False)]


def test_a_plugin_that_raises_is_one_line_naming_the_plugin_the_source_and_the_manifest(tmp_path):
    site = install(tmp_path / "site", "def parse(source):\n    yield from []\n    raise ValueError('bad\\nnote')\n")
    proj = project(tmp_path)
    r = ctx(["load"], proj, site)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == (f"ctx: error: {MANIFEST}: parser: parser plugin tiny (ctx-tiny-parser 0.1) raised "
                        f"ValueError: bad note (source expense-notes)\n")
    assert not (proj / ".ctx" / "ctx.duckdb").exists()


@pytest.mark.parametrize(("code", "said"), [
    ("import not_a_module_anywhere\n",
     "cannot be imported from ctx_tiny_parser:parse: ModuleNotFoundError: No module named 'not_a_module_anywhere'"),
    ("PARSE = 1\n", "cannot be imported from ctx_tiny_parser:parse: AttributeError: module 'ctx_tiny_parser' has "
                    "no attribute 'parse'"),
    ("parse = 'a text'\n", "ctx_tiny_parser:parse is not a callable"),
])
def test_a_plugin_that_cannot_be_imported_is_one_line(tmp_path, plugins, monkeypatch, code, said):
    plugins(install(tmp_path / "site", code))
    r = cli(["load"], project(tmp_path), monkeypatch)
    assert r.exit_code == 2
    sep = ": " if said.startswith("ctx_") else " "
    assert r.stderr == f"ctx: error: {MANIFEST}: parser: parser plugin tiny (ctx-tiny-parser 0.1){sep}{said}\n"


# In-process (the same code path, without a subprocess per case): what a plugin may not do.

PLUGIN = '''
ITEMS = {items}


def parse(source):
    for item in ITEMS:
        if item.get("record") == "PATH":
            item = dict(item, record={{"p": str(source.path("../../manifests/sources/expense-notes.yaml"))}})
        yield item


parse.versions = ("1", "2")
'''
OBJ = {"object_id": "N-1", "subject_id": "expense:EXP-7", "observed_at": "2026-10-01T09:00:00Z", "object_type": "note",
       "title": "t", "content": "c", "locator": "notes.txt#L1", "source_version": "1"}


def run_plugin(tmp_path, plugins, monkeypatch, items, manifest_edit=None):
    site = install(tmp_path / "site", PLUGIN.format(items=repr(items)))
    plugins(site)
    proj = project(tmp_path)
    if manifest_edit:
        m = proj / MANIFEST
        m.write_text(manifest_edit(m.read_text()))
    return cli(["load"], proj, monkeypatch), proj


@pytest.mark.parametrize(("item", "said"), [
    ({"kind": "object", "file": "../../manifests/sources/expense-notes.yaml", "line": 1, "record": OBJ},
     "yielded item 1 from file '../../manifests/sources/expense-notes.yaml', not a file of the snapshot folder "
     "sources/expense-notes"),
    ({"kind": "object", "file": "/etc/passwd", "line": 1, "record": OBJ},
     "yielded item 1 from file '/etc/passwd', not a file of the snapshot folder sources/expense-notes"),
    ({"kind": "document", "file": "notes.txt", "line": 1, "record": OBJ},
     "yielded item 1 of kind 'document' (known: object, entity, relation, tombstone)"),
    ({"kind": "object", "file": "notes.txt", "line": 0, "record": OBJ},
     "yielded item 1 at line 0 (a line is a number from 1, or None)"),
    ({"kind": "object", "file": "notes.txt", "line": 1, "record": OBJ, "source_id": "expense-ledger"},
     "yielded item 1, not a mapping of kind, file, line and record"),
    ({"kind": "object", "file": "notes.txt", "line": 1, "record": ["N-1"]},
     "yielded item 1 whose record is a list, not a mapping"),
    ({"kind": "object", "file": "notes.txt", "line": 1, "record": "PATH"},
     "asked for '../../manifests/sources/expense-notes.yaml', not a file of the snapshot folder sources/expense-notes"),
])
def test_an_item_outside_the_contract_is_one_line_naming_the_plugin(tmp_path, plugins, monkeypatch, item, said):
    r, proj = run_plugin(tmp_path, plugins, monkeypatch, [item])
    assert r.exit_code == 2
    tail = "" if said.startswith("asked") else " (source expense-notes)"
    assert r.stderr == f"ctx: error: {MANIFEST}: parser: parser plugin tiny (ctx-tiny-parser 0.1) {said}{tail}\n"
    assert not (proj / ".ctx" / "ctx.duckdb").exists()


@pytest.mark.parametrize(("record", "said"), [
    ({**OBJ, "tenant_id": "globex"}, "tenant_id: tenant 'globex' differs from the source's tenant 'acme'"),
    ({**OBJ, "source_id": "expense-ledger"}, "source_id: unknown field"),
    ({**OBJ, "object_id": "bad id"}, "object_id: String should match pattern"),
    ({k: v for k, v in OBJ.items() if k != "observed_at"}, "observed_at: missing field"),
])
def test_a_bad_record_is_a_problem_at_its_file_and_line(tmp_path, plugins, monkeypatch, record, said):
    r, _ = run_plugin(tmp_path, plugins, monkeypatch,
                      [{"kind": "object", "file": "notes.txt", "line": 4, "record": record}])
    assert r.exit_code == 2
    assert r.stderr.startswith(f"ctx: error: sources/expense-notes/notes.txt:4: {said}"), r.stderr


def test_a_plugin_cannot_lower_the_manifests_scopes_or_tenant(tmp_path, plugins, monkeypatch):
    r, proj = run_plugin(tmp_path, plugins, monkeypatch, [
        {"kind": "object", "file": "notes.txt", "line": 1, "record": {**OBJ, "required_scopes": []}},
        {"kind": "object", "file": "notes.txt", "record": {**OBJ, "object_id": "N-2", "required_scopes": ["x:y"]}}])
    assert r.exit_code == 0, r.stderr
    import duckdb

    con = duckdb.connect(str(proj / ".ctx" / "ctx.duckdb"), read_only=True)
    rows = con.execute("SELECT object_id, tenant_id, required_scopes FROM objects WHERE source_id = 'expense-notes' "
                       "ORDER BY object_id").fetchall()
    assert rows == [("N-1", "acme", ["expense:read"]), ("N-2", "acme", ["expense:read", "x:y"])]


def test_a_plugins_versions_and_blocks_are_checked(tmp_path, plugins, monkeypatch):
    r, _ = run_plugin(tmp_path, plugins, monkeypatch, [],
                      lambda t: t.replace('parser_version: "1"', 'parser_version: "3"'))
    assert r.exit_code == 2
    assert r.stderr == f"ctx: error: {MANIFEST}: parser_version: parser tiny has no version '3' (known: ['1', '2'])\n"
    r, _ = run_plugin(tmp_path / "b", plugins, monkeypatch, [],
                      lambda t: t + "mapping: {object_id: id}\n")
    assert r.exit_code == 2
    assert "mapping: parser tiny is a plugin: its records carry ctx's own fields (no mapping)" in r.stderr


def test_a_new_version_of_a_plugin_reads_its_source_again(tmp_path, plugins, monkeypatch):
    from ctxcli.load.parse import parse_source, read_manifests
    from ctxcli.load import parsers

    site = install(tmp_path / "site")
    plugins(site)
    proj = project(tmp_path)
    m, disp, b = next(x for x in read_manifests(proj / "manifests", proj) if x[0].source_id == "expense-notes")
    before = parse_source(m, disp, b, proj, None).digest
    monkeypatch.setattr(parsers, "_LOADED", {})
    monkeypatch.setattr(parsers, "_FOUND", {"tiny": [parsers.origin("tiny")._replace(version="0.2")]})
    assert parse_source(m, disp, b, proj, None).digest != before
