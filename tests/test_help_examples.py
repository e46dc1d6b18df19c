"""Every command's --help ends with an example that runs as written (issue 31.4), here against
the bundled claims example project with two runs in it (runs/default, runs/restricted)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

CTX = str(Path(sys.executable).parent / "ctx")
# Examples that need something this test does not start, and where they are run instead.
ELSEWHERE = {
    "ask": "a model endpoint (tests/test_ask.py runs ctx ask against the scripted server)",
    "validate-answer": "a model answer from ctx ask (tests/test_ask.py)",
    "serve": "a long-running server (tests/test_serve.py, through the MCP client)",
    "store init": "a PostgreSQL server (tests/test_postgres.py)",
    "audit-call": "the incident example's recorded agent request (tests/test_audit_call.py)",
    "receive-handoff": "a handoff of the incident example's run (tests/test_handoff.py)",
    "tool-result": "the agent example's retail rows (tests/test_tool_shape.py)",
    "tool-result shape": "the agent example's retail rows (tests/test_tool_shape.py)",
}
# Exit codes the examples are documented to give on this project (1: the check found a difference;
# forget: no record of that id in a fresh project).
EXIT = {"diff": 1, "scan": 1, "forget": 1}


def examples() -> dict[str, str]:
    from typer.main import get_command

    from ctxcli.cli.main import app

    out: dict[str, str] = {}

    def walk(cmd, prefix: str) -> None:
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            text = sub.help or ""
            m = re.search(r"Example: (.*?)(?:\n\s*\n|\Z)", text, re.S)
            assert m, f"`ctx {prefix}{name} --help` has no example"
            out[prefix + name] = " ".join(m.group(1).split())
            walk(sub, prefix + name + " ")

    walk(get_command(app), "")
    return out


EXAMPLES = examples()


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(NO_COLOR="1", COLUMNS="200", PATH=str(Path(CTX).parent) + os.pathsep + env.get("PATH", ""))
    return env


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    proj = tmp_path_factory.mktemp("examples")
    for args in (["init", "--example", "claims"], ["load"], ["investigate", "C-102", "--out", "runs/default"],
                 ["investigate", "C-102", "--variant", "restricted", "--out", "runs/restricted"]):
        r = subprocess.run([CTX, *args], cwd=proj, env=_env(), capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (args, r.stderr)
    return proj


def test_every_example_is_either_run_here_or_named_elsewhere():
    assert set(ELSEWHERE) <= set(EXAMPLES)
    for name, ex in EXAMPLES.items():
        assert ex.startswith("ctx "), (name, ex)


@pytest.mark.parametrize("name", sorted(set(EXAMPLES) - set(ELSEWHERE)))
def test_the_help_example_runs_as_written(project, name, tmp_path):
    example = EXAMPLES[name]
    cwd = tmp_path if name == "init" else project       # `ctx init my-project` wants a folder of its own
    if name == "erase":     # a recorded erasure applies to every later run: keep it out of the shared project
        import shutil

        cwd = tmp_path / "proj"
        shutil.copytree(project, cwd, symlinks=True)
    if "&&" in example:
        cmd = ["bash", "-c", example]
    else:
        cmd = shlex.split(example)
        cmd[0] = CTX
    r = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=600)
    assert r.returncode == EXIT.get(name, 0), f"{example}: exit {r.returncode}: {r.stderr[-400:]}"
    assert "Traceback" not in r.stderr
