"""A load stopped by a signal (SIGTERM, SIGKILL) or a power cut leaves its temporary folder
beside the store (``ctx-load-*``, up to the size of the rows); the next load removes it —
only a folder ctx made (its name and its marker) whose load no longer runs (issue 49 item 6,
the part that is done: SIGTERM itself is not handled yet)."""

from __future__ import annotations

import os
import subprocess
import sys

from .conftest import run_cli


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _leftover(folder, name, pid=None, marker=True):
    d = folder / name
    d.mkdir(parents=True)
    (d / "objects.ndjson").write_text("{}\n")
    if marker:
        (d / ".ctx-load").write_text(f"ctx load temporary folder; pid {pid}\n")
    return d


def test_the_next_load_removes_only_the_leftover_folders_ctx_made(project_copy, tmp_path):
    ctx_dir = project_copy / ".ctx"
    dead = _dead_pid()
    gone = _leftover(ctx_dir, "ctx-load-abcd1234", dead)
    live = _leftover(ctx_dir, "ctx-load-live5678", os.getpid())          # a load still running
    unmarked = _leftover(ctx_dir, "ctx-load-nomark00", marker=False)      # not ctx's
    other = _leftover(ctx_dir, "ctx-loader-abcd1234", dead)               # not ctx's name
    target = _leftover(tmp_path, "mine", dead)
    (ctx_dir / "ctx-load-link0000").symlink_to(target)                   # never followed
    r = run_cli(["load"])
    assert r.exit_code == 0, r.stderr
    assert not gone.exists()
    assert live.is_dir() and unmarked.is_dir() and other.is_dir()
    assert (ctx_dir / "ctx-load-link0000").is_symlink() and (target / "objects.ndjson").is_file()
    # the load's own temporary folder was marked, and removed when it finished
    assert sorted(p.name for p in ctx_dir.glob("ctx-load-*")) == [
        "ctx-load-link0000", "ctx-load-live5678", "ctx-load-nomark00"]


def test_a_load_marks_its_temporary_folder(project_copy, monkeypatch):
    from ctxcli.load import build

    seen = []
    real = build._mark_tmp
    monkeypatch.setattr(build, "_mark_tmp", lambda d: (real(d), seen.append(open(os.path.join(d, ".ctx-load")).read())))
    assert run_cli(["load"]).exit_code == 0
    assert seen == [f"ctx load temporary folder; pid {os.getpid()}\n"]
