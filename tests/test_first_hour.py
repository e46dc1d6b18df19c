"""The first hour, second pass (issue 49 item 5, the small items of finding 9): a --param error
names what the playbook declares, pydantic's documentation link never reaches an MCP or CLI
error, `ctx … | head -1` ends with exit 141, no message, no traceback, and `ctx runs` lists run
folders written with --out inside the project. (explain-omissions of an id found nowhere, exit
1: tests/test_postmortem.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, run_cli

CTX = str(Path(sys.executable).parent / "ctx")


@pytest.mark.parametrize("args,message", [
    (["C-102", "--param", "nope=1"],
     "parameter nope is not declared by playbook motor-claim-review (it declares no parameters)"),
    (["INC-2026-0811", "--param", "nope=1"],
     "parameter nope is not declared by playbook payment-change-window (declares: service)"),
    (["C-102", "--param", "NAME"], "--param 'NAME': expected NAME=VALUE with a lower-case NAME "
                                   "(playbook motor-claim-review declares no parameters)"),
    (["C-102", "--param", "name"], "--param 'name': expected NAME=VALUE with a lower-case NAME "
                                   "(playbook motor-claim-review declares no parameters)"),
    # a declared name without '=' is refused too, before it could take the value '' (issue 50 item 9)
    (["INC-2026-0811", "--param", "service"], "--param 'service': expected NAME=VALUE with a lower-case NAME "
                                              "(playbook payment-change-window declares: service)"),
    (["INC-2026-0811", "--param", "service=checkout", "--param", "Service=x"],
     "--param 'Service=x': expected NAME=VALUE with a lower-case NAME (playbook payment-change-window declares: "
     "service)"),
])
def test_a_param_error_names_what_the_playbook_declares(store, tmp_path, args, message):
    r = run_cli(["investigate", *args, "--out", tmp_path / "o"])
    assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"ctx: error: {message}\n")
    assert not (tmp_path / "o").exists()


def test_mcp_argument_errors_are_one_line_without_pydantics_link(tmp_path):
    from .test_serve_inputs import _server, _session

    res = _session(_server(tmp_path), [("investigate", {"case": 5}),
                                       ("investigate", {"case": "C-102", "recall": "maybe"}),
                                       ("replay", {})])
    assert [r.content[0].text for r in res] == [
        "ctx: error: argument 'case': Input should be a valid string",
        "ctx: error: argument 'recall': Input should be a valid boolean, unable to interpret input",
        "ctx: error: argument 'pack_id': missing field"]
    audit = (tmp_path / "audit.jsonl").read_text()
    assert audit.count('"status":"refused"') == 3 and "pydantic" not in audit


def test_cli_errors_never_carry_pydantics_link(capsys):
    import typer
    from pydantic import BaseModel, ValidationError

    from ctxcli.cli.common import handle_errors
    from ctxcli.errors import InputError

    class M(BaseModel):
        n: int

    try:
        M(n="x")
    except ValidationError as e:
        err = e
    assert "errors.pydantic.dev" in str(err)
    for exc, code in ((InputError(str(err), file="f.yaml"), 2), (err, 70)):
        with pytest.raises(typer.Exit) as ex:
            with handle_errors():
                raise exc
        assert ex.value.exit_code == code
        text = capsys.readouterr().err
        assert text.count("\n") == 1 and "Input should be a valid integer" in text, text
        assert "pydantic.dev" not in text and "For further information" not in text, text


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pipes")
@pytest.mark.parametrize("args", [["investigate", "C-102"], ["investigate", "C-102", "--json"],
                                  ["schema", "pack"], ["--help"], ["investigate", "--help"], ["--version"]])
def test_a_closed_pipe_ends_with_141_and_no_traceback(store, tmp_path, args):
    """`ctx investigate … | head -1`: the reader closes the pipe; ctx stops with 141 (128 +
    SIGPIPE, README "Exit codes"), nothing on stderr."""
    env = {**os.environ, "CTX_ROOT": str(REPO), "CTX_DB": str(store), "NO_COLOR": "1"}
    if args[0] == "investigate" and "--help" not in args:
        args = [*args, "--out", str(tmp_path / "o")]
    r, w = os.pipe()
    os.close(r)              # the reader is gone before ctx starts: no race with a fast command
    try:
        p = subprocess.Popen([CTX, *args], cwd=tmp_path, env=env, stdout=w, stderr=subprocess.PIPE)
    finally:
        os.close(w)
    err = p.stderr.read().decode()
    assert (p.wait(timeout=300), err) == (141, "")
    if "--out" in args:
        assert (tmp_path / "o" / "pack.json").is_file()          # the run itself is complete


def test_ctx_runs_lists_run_folders_written_with_out_inside_the_project(project_copy, bundled_store, tmp_path,
                                                                        monkeypatch):
    """`ctx runs` and `latest` name every run folder of the project: under its runs folder, and
    written with --out anywhere else inside it (noted in .ctx/run-folders); never one outside."""
    import json

    monkeypatch.setenv("CTX_DB", str(bundled_store))
    monkeypatch.chdir(project_copy)
    for out, extra in (("runs/default", []), ("sub/deeper/mine", ["--variant", "restricted"]),
                       (str(tmp_path / "outside"), [])):
        r = run_cli(["investigate", "C-102", "--out", out, *extra])
        assert r.exit_code == 0, r.stderr
    r = run_cli(["runs", "--json"])
    assert r.exit_code == 0, r.stderr
    assert [e["folder"] for e in json.loads(r.stdout)] == ["sub/deeper/mine", "runs/default"]
    assert (project_copy / ".ctx" / "run-folders").read_text() == "sub/deeper/mine\n"
    r = run_cli(["explain-omissions", "latest", "--json"])      # latest: the newest, wherever it is
    assert r.exit_code == 0 and json.loads(r.stdout)["pack_id"] == json.loads(
        (project_copy / "sub" / "deeper" / "mine" / "pack.json").read_text())["pack_id"]
    # written again: noted once; a noted folder that is gone, or a line leading out, is not listed
    assert run_cli(["investigate", "C-102", "--variant", "restricted", "--out", "sub/deeper/mine"]).exit_code == 0
    with open(project_copy / ".ctx" / "run-folders", "a") as fh:
        fh.write(f"../outside\n{tmp_path / 'outside'}\ngone/run\n")
    r = run_cli(["runs", "--json"])
    assert [e["folder"] for e in json.loads(r.stdout)] == ["sub/deeper/mine", "runs/default"]
    assert (project_copy / ".ctx" / "run-folders").read_text() == f"sub/deeper/mine\n../outside\n{tmp_path / 'outside'}\ngone/run\n"
