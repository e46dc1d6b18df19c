"""Single-file outputs (`render --out`, `eval --out`, `investigate --otel-out`) follow the rule of
run folders: they replace only a file the same command wrote, never anything else (issue 27 item 12)."""

from __future__ import annotations

import os
import shutil

import pytest

from .conftest import REPO, run_cli

MINE = b"my notes, not ctx's\n"


@pytest.fixture
def run(store, tmp_path):
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run"])
    assert r.exit_code == 0, r.stderr
    return tmp_path / "run"


def _targets(tmp_path):
    user = tmp_path / "notes.md"
    user.write_bytes(MINE)
    link = tmp_path / "link.md"
    os.symlink(user, link)
    return user, link


def test_render_out_never_replaces_a_file_ctx_render_did_not_write(run, tmp_path):
    user, link = _targets(tmp_path)
    for fmt in ("markdown", "messages"):
        r = run_cli(["render", run / "pack.json", "--format", fmt, "--out", user])
        assert r.exit_code == 2
        assert r.stderr == f"ctx: error: --out {user}: exists and was not written by ctx render; not replacing it\n"
        r = run_cli(["render", run / "pack.json", "--format", fmt, "--out", link])
        assert r.exit_code == 2 and r.stderr == f"ctx: error: --out {link}: exists and is not a regular file\n"
    # a file that merely starts like a rendering but is a JSON list of something else
    lookalike = tmp_path / "list.json"
    lookalike.write_bytes(b'[\n  {\n    "content": "x",\n    "role": "system"\n  }\n]\n')
    r = run_cli(["render", run / "pack.json", "--format", "messages", "--out", lookalike])
    assert r.exit_code == 2 and "was not written by ctx render" in r.stderr
    assert user.read_bytes() == MINE and lookalike.read_bytes().startswith(b"[")
    # an earlier rendering (either format) is replaced
    out = tmp_path / "ctx.md"
    assert run_cli(["render", run / "pack.json", "--out", out]).exit_code == 0
    md = out.read_bytes()
    r = run_cli(["render", run / "pack.json", "--format", "messages", "--out", out])
    assert r.exit_code == 0, r.stderr
    msgs = out.read_bytes()
    assert msgs.startswith(b"[") and msgs != md
    assert run_cli(["render", run / "pack.json", "--out", out]).exit_code == 0 and out.read_bytes() == md


def test_otel_out_never_replaces_a_file_ctx_did_not_write_and_is_refused_before_the_run(store, tmp_path):
    pytest.importorskip("opentelemetry.sdk")
    user, link = _targets(tmp_path)
    for target, why in ((user, "exists and was not written by ctx --otel-out; not replacing it"),
                        (link, "exists and is not a regular file")):
        r = run_cli(["investigate", "C-102", "--out", tmp_path / "run", "--otel-out", target])
        assert r.exit_code == 2
        assert r.stderr == f"ctx: error: --otel-out {target}: {why}\n"
        assert not (tmp_path / "run").exists()            # refused before any work
    assert user.read_bytes() == MINE
    spans = tmp_path / "spans.json"
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a", "--otel-out", spans]).exit_code == 0
    first = spans.read_bytes()
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "b", "--otel-out", spans])
    assert r.exit_code == 0, r.stderr                     # its own earlier spans are replaced
    assert b'"resourceSpans"' in spans.read_bytes() and first


def test_eval_out_never_replaces_a_file_ctx_eval_did_not_write(store, tmp_path):
    user, link = _targets(tmp_path)
    case = tmp_path / "cases" / "C-104.yaml"
    case.parent.mkdir()
    shutil.copy(REPO / "examples" / "cases" / "C-104.yaml", case)
    for target, why in ((user, "exists and was not written by ctx eval; not replacing it"),
                        (link, "exists and is not a regular file")):
        r = run_cli(["eval", case, "--out", target])
        assert r.exit_code == 2
        assert r.stderr == f"ctx: error: --out {target}: {why}\n"
    assert user.read_bytes() == MINE
    out = tmp_path / "eval.json"
    r = run_cli(["eval", case, "--json", "--out", out])
    assert r.exit_code in (0, 1), r.stderr
    r = run_cli(["eval", case, "--json", "--out", out])      # its own earlier report is replaced
    assert r.exit_code in (0, 1), r.stderr
    assert out.read_text() == r.stdout
