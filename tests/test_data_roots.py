"""Data where it lives (issue 48 item 5): ctx.toml's ``[data.roots]`` names folders outside the
project; a manifest's ``snapshot: "@name/path"`` reads inside one of them only (no ``..``, no
absolute path, no symlinked folder or file leading out), refused alike by ``ctx check``,
``ctx sources preview`` and ``ctx load``; every message and output names the root, never where
it lies on this machine; a changed file under the root is picked up by the next load."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import REPO, run_cli

SCAFFOLD = REPO / "src" / "ctxcli" / "scaffold" / "empty"
MANIFEST = "manifests/sources/travel-policy.yaml"
AT = f"{MANIFEST}:16:1: snapshot: "        # the line of `snapshot:` in the scaffold's manifest


def _project(tmp_path: Path, monkeypatch, root_value: str | None = None) -> tuple[Path, Path]:
    """(the project, the data root): the scaffold project with its travel policy moved to a
    folder outside the project, read through the data root ``policies``."""
    proj, data = tmp_path / "proj", tmp_path / "elsewhere" / "drop"
    shutil.copytree(SCAFFOLD, proj)
    data.mkdir(parents=True)
    shutil.move(proj / "sources" / "travel-policy", data / "travel-policy")
    _snapshot(proj, '"@policies/travel-policy"')
    with open(proj / "ctx.toml", "a", encoding="utf-8") as fh:
        fh.write(f'\n[data.roots]\npolicies = "{root_value or data}"\n')
    monkeypatch.setenv("CTX_ROOT", str(proj))
    monkeypatch.setenv("CTX_DB", str(proj / ".ctx" / "ctx.duckdb"))
    return proj, data


def _snapshot(proj: Path, value: str) -> None:
    p = proj / MANIFEST
    text = p.read_text(encoding="utf-8")
    old = next(ln for ln in text.splitlines() if ln.startswith("snapshot:"))
    p.write_text(text.replace(old, f"snapshot: {value}"), encoding="utf-8")


def _run_files(proj: Path) -> dict[str, str]:
    (run,) = (proj / "runs").iterdir()
    return {n: (run / n).read_text(encoding="utf-8") for n in ("pack.json", "trace.jsonl", "run.json", "answer.json")}


def _policy_locators(pack: str) -> list[str]:
    return sorted(e["locator"] for e in json.loads(pack)["evidence"] if e["source_id"] == "travel-policy")


@pytest.mark.parametrize("relative", [False, True], ids=["absolute-root", "relative-root"])
def test_a_source_in_a_data_root_loads_and_answers_and_no_output_names_the_folder(tmp_path, monkeypatch, relative):
    proj, data = _project(tmp_path, monkeypatch, "../elsewhere/drop" if relative else None)
    assert run_cli(["check"]).exit_code == 0
    r = run_cli(["load"])
    assert r.exit_code == 0, r.output
    r = run_cli(["investigate", "EXP-7", "--json"])
    assert r.exit_code == 0, r.output
    ans = json.loads(r.output)["answer"]
    assert (ans["verdict"], ans["recommended_action"]["action"]) == ("complete", "ask_finance_approval")
    files = _run_files(proj)
    for name, text in files.items():
        for machine in (str(data), str(data.resolve()), "elsewhere"):
            assert machine not in text, (name, machine)
    # the locators are those of the same source inside the project, byte for byte
    assert _policy_locators(files["pack.json"]) == ["travel-policy.md#hotel-nights:L15-L18"]


def test_locators_of_a_project_source_are_unchanged(tmp_path, monkeypatch):
    """The other side: the scaffold as `ctx init` writes it (no data root) gives the same locator."""
    proj = tmp_path / "proj"
    shutil.copytree(SCAFFOLD, proj)
    monkeypatch.setenv("CTX_ROOT", str(proj))
    monkeypatch.setenv("CTX_DB", str(proj / ".ctx" / "ctx.duckdb"))
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["investigate", "EXP-7", "--json"]).exit_code == 0
    assert _policy_locators(_run_files(proj)["pack.json"]) == ["travel-policy.md#hotel-nights:L15-L18"]


def _escape(kind: str, proj: Path, data: Path) -> tuple[str, str]:
    """Set up one way out of the data root: (the message every command gives, its file prefix)."""
    if kind == "dotdot":
        _snapshot(proj, '"@policies/../../proj/sources/expense-ledger"')
        return AT, "snapshot path must stay inside data root 'policies'"
    if kind == "absolute":
        _snapshot(proj, f'"@policies/{proj / "sources" / "expense-ledger"}"')
        return AT, "snapshot path must stay inside data root 'policies'"
    if kind == "symlinked-folder":
        (data / "ledger").symlink_to(proj / "sources" / "expense-ledger", target_is_directory=True)
        _snapshot(proj, '"@policies/ledger"')
        return AT, "snapshot path escapes data root 'policies' (through a symlink?)"
    if kind == "symlinked-folder-component":
        (data / "all").symlink_to(proj / "sources", target_is_directory=True)
        _snapshot(proj, '"@policies/all/expense-ledger"')
        return AT, "snapshot path escapes data root 'policies' (through a symlink?)"
    if kind == "symlinked-file":
        (data / "travel-policy" / "leak.md").symlink_to(proj / "sources" / "expense-ledger" / "objects.jsonl")
        return "@policies/travel-policy/leak.md: ", "file is a symlink that leads outside the snapshot folder"
    if kind == "unknown-root":
        _snapshot(proj, '"@polices/travel-policy"')
        return AT, "unknown data root 'polices' (did you mean 'policies'?)"
    assert kind == "unknown-root-far"
    _snapshot(proj, '"@exports/travel-policy"')
    return AT, "unknown data root 'exports' (ctx.toml [data.roots] names: policies)"


@pytest.mark.parametrize("kind", ["dotdot", "absolute", "symlinked-folder", "symlinked-folder-component",
                                  "symlinked-file", "unknown-root", "unknown-root-far"])
def test_every_way_out_of_a_data_root_is_refused_alike_by_check_preview_and_load(tmp_path, monkeypatch, kind):
    proj, data = _project(tmp_path, monkeypatch)
    where, message = _escape(kind, proj, data)
    line = where + message
    r = run_cli(["load"])
    assert (r.exit_code, r.output) == (2, f"ctx: error: {line}\n")
    r = run_cli(["sources", "preview", "travel-policy"])
    assert (r.exit_code, r.output) == (2, f"ctx: error: {line}\n")
    r = run_cli(["check", proj / MANIFEST])
    assert (r.exit_code, r.output) == (1, f"{line}\nchecked 1 file(s): 1 problem(s)\n")
    assert not (proj / ".ctx" / "ctx.duckdb").exists()


def test_a_data_root_without_the_escape_is_read(tmp_path, monkeypatch):
    """The other side of the symlink rules: a symlink that stays inside the root is followed."""
    proj, data = _project(tmp_path, monkeypatch)
    (data / "current").symlink_to(data / "travel-policy", target_is_directory=True)
    _snapshot(proj, '"@policies/current"')
    r = run_cli(["sources", "preview", "travel-policy", "--json"])
    assert r.exit_code == 0, r.output
    assert [o["locator"] for o in json.loads(r.output)["objects"]][:1] == ["travel-policy.md#hotel-nights:L15-L18"]


def test_a_bad_row_under_a_data_root_is_named_by_the_root(tmp_path, monkeypatch):
    proj, data = _project(tmp_path, monkeypatch)
    (data / "travel-policy" / "broken.md").write_text("---\ndoc_id: [\n---\n", encoding="utf-8")
    r = run_cli(["load"])
    assert r.exit_code == 2
    assert r.output.startswith("ctx: error: @policies/travel-policy/broken.md")
    assert str(data) not in r.output


def test_a_changed_file_under_a_data_root_is_picked_up_by_the_next_load(tmp_path, monkeypatch):
    proj, data = _project(tmp_path, monkeypatch)
    assert run_cli(["load"]).exit_code == 0

    def policy() -> dict:
        r = run_cli(["load", "--json"])
        assert r.exit_code == 0, r.output
        (s,) = (s for s in json.loads(r.output)["sources"] if s["source_id"] == "travel-policy")
        return {k: s[k] for k in ("reused", "changed", "added", "removed")}

    assert policy() == {"reused": True, "changed": 0, "added": 0, "removed": 0}
    doc = data / "travel-policy" / "travel-policy.md"
    text = doc.read_text(encoding="utf-8")
    assert "at most 400 EUR" in text
    doc.write_text(text.replace("at most 400 EUR", "at most 420 EUR"), encoding="utf-8")
    assert policy() == {"reused": False, "changed": 1, "added": 0, "removed": 0}


@pytest.mark.parametrize("toml, message", [
    ('[data.roots]\n"bad name" = "x"\n', "ctx.toml: data.roots.bad name: a root name takes letters, digits, '-' and '_'"),
    ('[data.roots]\npolicies = 3\n', "ctx.toml: data.roots.policies: must be a folder path (a non-empty string)"),
    ('[data]\nroot = "x"\n', "ctx.toml: data.root: unknown setting (known: roots)"),
    ('[data]\nroots = "x"\n', 'ctx.toml: data.roots must be a table of name = "folder"'),
])
def test_bad_data_roots_are_one_line_usage_errors(tmp_path, monkeypatch, toml, message):
    proj, _ = _project(tmp_path, monkeypatch)
    text = (proj / "ctx.toml").read_text(encoding="utf-8")
    (proj / "ctx.toml").write_text(text[:text.index("[data.roots]")] + toml, encoding="utf-8")
    r = run_cli(["load"])
    assert (r.exit_code, r.output) == (2, f"ctx: error: {message}\n")


def test_a_data_root_that_is_not_a_folder_is_refused(tmp_path, monkeypatch):
    proj, data = _project(tmp_path, monkeypatch, "../nowhere")
    r = run_cli(["load"])
    assert (r.exit_code, r.output) == (2, f"ctx: error: {AT}data root 'policies' (ctx.toml data.roots.policies) "
                                          "is not a folder\n")
