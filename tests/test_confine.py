"""One confinement check for every file-backed source (issue 50 item 6): a file reached through a
symlinked *folder* that leads outside the snapshot is refused — one line, exit 2, nothing of the
outside file in the store — for each parser kind; a symlinked folder that stays inside is
allowed, as a symlinked file that stays inside is."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest
import yaml

from ctxcli.errors import InputError
from ctxcli.load.parsers.common import confined

from . import test_parsers_git as G
from . import test_parsers_json_export as J
from . import test_parsers_markdown as M
from . import test_parsers_table as T
from .conftest import run_cli
from .gitrepo import make_repo

SECRET = "OUTSIDE-SECRET-7731"


def _table(tmp: Path, folder: Path) -> str:
    T.project(tmp, {}, {"file": "link/d.csv"}, mapping={k: v for k, v in T.MAPPING.items() if k != "relations"})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "d.csv").write_text(T.CSV.replace("checkout,1.2.0", f"checkout,{SECRET}"))
    return "sources/deploys"


def _json(tmp: Path, folder: Path) -> str:
    J.project(tmp, json_export={"file": "link/x.json", "records": "export.tickets", "nested": J.NESTED})
    folder.mkdir(parents=True, exist_ok=True)
    export = {"export": {"tickets": [{**J.EXPORT["export"]["tickets"][0], "summary": SECRET}]}}
    (folder / "x.json").write_bytes(orjson.dumps(export))
    return "sources/incidents"


def _git(tmp: Path, folder: Path) -> str:
    G.project(tmp, [(G.T0, {"a.md": G.doc("alice", "## Steps\ninside\n")})], git={"path": "link"})
    make_repo(folder, [(G.T0, {"b.md": G.doc("alice", f"## Steps\n{SECRET}\n")})])
    return "sources/runbooks"


def _markdown(tmp: Path, folder: Path) -> str:
    snap = tmp / "sources" / "wiki"
    snap.mkdir(parents=True)
    (snap / "a.md").write_text(M.DOC)
    (tmp / "manifests" / "sources").mkdir(parents=True)
    mapping = {**M.MAPPING, "keys": ["{id}"]}
    (tmp / "manifests" / "sources" / "wiki.yaml").write_text(yaml.safe_dump({**M.BASE, "mapping": mapping}))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "b.md").write_text(M.DOC.replace("RB-1", "RB-2").replace("Page the owner.", SECRET))
    return "sources/wiki"


KINDS = {"table": _table, "json-export": _json, "git": _git, "markdown": _markdown}


def _load(tmp: Path):
    db = tmp / ".ctx" / "ctx.duckdb"
    return run_cli(["load", "--manifests", tmp / "manifests", "--db", db]), db


def _store_text(tmp: Path) -> bytes:
    ctx = tmp / ".ctx"
    return b"".join(p.read_bytes() for p in sorted(ctx.rglob("*")) if p.is_file()) if ctx.exists() else b""


@pytest.mark.parametrize("kind", KINDS)
def test_a_symlinked_folder_leading_outside_is_refused_and_nothing_of_it_is_stored(tmp_path, kind):
    proj = tmp_path / "proj"
    snap = KINDS[kind](proj, tmp_path / "outside")
    os.symlink(tmp_path / "outside", proj / snap / "link")
    r, db = _load(proj)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr == f"ctx: error: {snap}/link: folder is a symlink that leads outside the snapshot folder\n"
    assert r.stdout == ""
    assert not db.exists()
    assert SECRET.encode() not in _store_text(proj)


@pytest.mark.parametrize("kind", KINDS)
def test_a_symlinked_folder_staying_inside_is_followed_where_the_manifest_names_it(tmp_path, kind):
    proj = tmp_path / "proj"
    snap = KINDS[kind](proj, tmp_path / "proj" / "sources" / "shared")
    os.symlink(proj / "sources" / "shared", proj / snap / "link")
    # the symlinked folder (inside the project, outside the snapshot) is refused as well …
    r, db = _load(proj)
    assert r.exit_code == 2 and r.stderr.startswith(f"ctx: error: {snap}/link: folder is a symlink that leads outside")
    # … and one inside the snapshot is not
    os.unlink(proj / snap / "link")
    shutil.move(proj / "sources" / "shared", proj / snap / "real")
    os.symlink(proj / snap / "real", proj / snap / "link")
    r, db = _load(proj)
    assert r.exit_code == 0, r.stderr
    stored = _store_text(proj)
    if kind == "markdown":  # the walk reads the folder once, by its own name, not through the link
        assert SECRET.encode() in stored and b"link/b.md" not in stored
    else:                   # the file the manifest names through the link is read
        assert SECRET.encode() in stored


NAMED = {"table": ("deploys", "table", "file"), "json-export": ("incidents", "json_export", "file"),
         "git": ("runbooks", "git", "path")}


@pytest.mark.parametrize("how", ["absolute", "dotdot"])
@pytest.mark.parametrize("kind", NAMED)
def test_a_named_file_outside_the_snapshot_is_refused_by_the_shared_check(tmp_path, kind, how):
    proj = tmp_path / "proj"
    snap = KINDS[kind](proj, tmp_path / "outside")
    name, block, key = NAMED[kind]
    target = {"table": "d.csv", "json-export": "x.json", "git": ""}[kind]
    value = str(tmp_path / "outside" / target) if how == "absolute" else f"../../../outside/{target}"
    m = proj / "manifests" / "sources" / f"{name}.yaml"
    data = yaml.safe_load(m.read_text())
    data[block][key] = value.rstrip("/")
    m.write_text(yaml.safe_dump(data, sort_keys=False))
    assert (proj / snap / value.rstrip("/")).resolve().exists()     # the file is there to be read
    r, db = _load(proj)
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr == (f"ctx: error: manifests/sources/{name}.yaml: {block}.{key}: {block}.{key} "
                        "must stay inside the snapshot folder\n")
    assert not db.exists() and SECRET.encode() not in _store_text(proj)


def test_a_snapshot_reached_through_a_symlinked_folder_outside_the_project_is_refused(tmp_path):
    proj = tmp_path / "proj"
    _markdown(proj, tmp_path / "unused")
    shutil.move(proj / "sources" / "wiki", tmp_path / "elsewhere")
    os.symlink(tmp_path, proj / "sources" / "up")
    m = proj / "manifests" / "sources" / "wiki.yaml"
    m.write_text(m.read_text().replace("snapshot: sources/wiki", "snapshot: sources/up/elsewhere"))
    r, db = _load(proj)
    assert r.exit_code == 2
    assert r.stderr == ("ctx: error: manifests/sources/wiki.yaml: snapshot: snapshot escapes the project root "
                        "(through a symlink?)\n")
    assert not db.exists()


def test_confined_resolves_every_folder_on_the_way(tmp_path):
    base, out = tmp_path / "snap", tmp_path / "out"
    (base / "real" / "deep").mkdir(parents=True)
    (out / "deep").mkdir(parents=True)
    (base / "real" / "deep" / "f").write_text("in")
    (out / "deep" / "f").write_text("out")
    os.symlink(out, base / "away")
    os.symlink(base / "real", base / "near")
    with pytest.raises(InputError) as e:
        confined(base, "away/deep/f", file="m.yaml", field="table.file")
    assert str(e.value) == "m.yaml: table.file: table.file escapes the snapshot folder (through a symlink?)"
    assert confined(base, "near/deep/f", file="m.yaml", field="table.file") == Path(os.path.realpath(base / "real/deep/f"))
    for bad in ("../out/deep/f", str(out / "deep" / "f")):
        with pytest.raises(InputError) as e:
            confined(base, bad, file="m.yaml", field="table.file")
        assert str(e.value) == "m.yaml: table.file: table.file must stay inside the snapshot folder"
