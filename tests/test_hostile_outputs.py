"""Hostile inputs against what ctx writes and discloses (issue 12, items 1–4 and 7a).

The corpus of this file: ``--out`` targets ctx must not replace (``OUT_TARGETS``), PII
placed in every string field of an object (``PII``), and ids of other tenants, missing
objects and restricted tombstones given to ``explain-omissions --object``. Each test failed
on the code before the fix.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

from .conftest import REPO, run_cli


def _one_line_exit_2(r, *fragments: str) -> str:
    assert r.exit_code == 2, (r.exit_code, r.stdout[-400:], r.stderr)
    err = r.stderr
    assert err.startswith("ctx: error: ") and err.count("\n") == 1, repr(err)
    assert "Traceback" not in err
    for f in fragments:
        assert f in err, (f, err)
    return err


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes), symlinks as their target."""
    out: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_symlink():
            out[rel] = b"-> " + os.readlink(p).encode()
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


# ------------------------------------------------------------------------------ item 1: --out
RUN_FILES = [".ctx-run", "answer.json", "answer.md", "pack.json", "trace.jsonl"]


def _t_file(tmp: Path) -> Path:
    (tmp / "notes.txt").write_text("my notes\n")
    return tmp / "notes.txt"


def _t_folder_with_files(tmp: Path) -> Path:
    d = tmp / "mine"
    d.mkdir()
    (d / "pack.json").write_text("{}\n")           # a ctx-like name is not enough
    (d / "thesis.tex").write_text("\\begin{document}\n")
    return d


def _t_symlink_to_run(tmp: Path) -> Path:
    target = tmp / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("keep\n")
    (tmp / "link").symlink_to(target)
    return tmp / "link"


def _t_run_folder_plus_user_file(tmp: Path) -> Path:
    r = run_cli(["investigate", "C-102", "--out", tmp / "run"])
    assert r.exit_code == 0, r.stderr
    (tmp / "run" / "my-analysis.md").write_text("findings\n")
    return tmp / "run"


def _t_forged_marker_subfolder(tmp: Path) -> Path:
    r = run_cli(["investigate", "C-102", "--out", tmp / "run"])
    assert r.exit_code == 0, r.stderr
    (tmp / "run" / "sub").mkdir()
    (tmp / "run" / "sub" / "data.csv").write_text("a,b\n")
    return tmp / "run"


def _t_ancestor_of_cwd(tmp: Path) -> Path:
    (tmp / "work").mkdir()
    os.chdir(tmp / "work")
    return tmp


# name -> (make the target under tmp_path, fragment of the message)
OUT_TARGETS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "regular_file": (_t_file, "exists and is not a folder"),
    "folder_with_other_files": (_t_folder_with_files, "is not a ctx run folder"),
    "symlink": (_t_symlink_to_run, "is a symbolic link"),
    "run_folder_plus_user_file": (_t_run_folder_plus_user_file, "'my-analysis.md', which ctx did not write"),
    "run_folder_plus_subfolder": (_t_forged_marker_subfolder, "'sub', which ctx did not write"),
    "ancestor_of_working_folder": (_t_ancestor_of_cwd, "contains the working folder"),
}


@pytest.mark.parametrize("cmd", ["investigate", "replay"])
@pytest.mark.parametrize("name", sorted(OUT_TARGETS))
def test_out_refuses_what_ctx_did_not_write(store, tmp_path, monkeypatch, name, cmd):
    monkeypatch.chdir(tmp_path)
    make, fragment = OUT_TARGETS[name]
    pack = tmp_path / "base" / "pack.json"
    assert run_cli(["investigate", "C-102", "--out", pack.parent]).exit_code == 0
    target = make(tmp_path)
    before = _tree(tmp_path)
    args = ["investigate", "C-102"] if cmd == "investigate" else ["replay", pack]
    r = run_cli([*args, "--out", target])
    _one_line_exit_2(r, f"--out {target}:", fragment)
    assert _tree(tmp_path) == before                      # nothing written, nothing removed
    assert not [p for p in tmp_path.iterdir() if p.name.endswith((".staging", ".old"))]


@pytest.mark.parametrize("cmd", ["investigate", "replay"])
def test_out_never_replaces_the_project_root(project_copy, store, tmp_path, cmd):
    pack = tmp_path / "base" / "pack.json"
    assert run_cli(["investigate", "C-102", "--db", store, "--out", pack.parent]).exit_code == 0
    before = _tree(project_copy)
    args = ["investigate", "C-102"] if cmd == "investigate" else ["replay", pack]
    r = run_cli([*args, "--db", store, "--out", project_copy])
    _one_line_exit_2(r, f"--out {project_copy}:")
    assert _tree(project_copy) == before
    assert (project_copy / "manifests" / "sources").is_dir()


@pytest.mark.parametrize("spelling", [".", "..", "./"])
def test_out_dot_is_refused(store, tmp_path, monkeypatch, spelling):
    (tmp_path / "cwd").mkdir()                           # an empty working folder is still refused
    monkeypatch.chdir(tmp_path / "cwd")
    r = run_cli(["investigate", "C-102", "--out", spelling])
    _one_line_exit_2(r, "--out ")
    assert list((tmp_path / "cwd").iterdir()) == []


def test_out_replaces_missing_empty_and_its_own_run_folder(store, tmp_path):
    # missing
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "a"])
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == RUN_FILES
    marker = json.loads((tmp_path / "a" / ".ctx-run").read_text())
    assert marker["schema_version"] == "ctx.run/1" and marker["files"] == RUN_FILES[1:]
    first = _tree(tmp_path / "a")
    # its own run folder, replaced by an identical one (byte for byte, marker included)
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "a"])
    assert r.exit_code == 0, r.stderr
    assert _tree(tmp_path / "a") == first
    # an empty folder
    (tmp_path / "empty").mkdir()
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "empty"])
    assert r.exit_code == 0, r.stderr
    assert _tree(tmp_path / "empty") == first
    # replay over a run folder ctx wrote
    r = run_cli(["replay", tmp_path / "a" / "pack.json", "--out", tmp_path / "empty"])
    assert r.exit_code == 0, r.stderr
    assert _tree(tmp_path / "empty") == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "empty"]    # no .old or .staging left
