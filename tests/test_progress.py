"""Progress of long loads when stderr is not a terminal (issue 31.5): silent for a short load,
then one plain line per interval and per finished phase; Ctrl-C leaves workers quiet."""

from __future__ import annotations

import io

from ctxcli.cli.cmd_load import _plain_progress


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_short_load_prints_nothing():
    out, clock = io.StringIO(), Clock()
    p = _plain_progress(every=30, stream=out, clock=clock)
    for i in range(10):
        clock.t += 1
        p.update("read", i, 10)
    p.update("index", 500, 500)
    p.close()
    assert out.getvalue() == ""


def test_a_long_load_prints_a_line_per_interval_and_per_finished_phase():
    out, clock = io.StringIO(), Clock()
    p = _plain_progress(every=30, stream=out, clock=clock)
    p.update("read", 0, 4)
    clock.t += 31
    p.update("read", 3, 4)            # 31 s in: the first line
    clock.t += 10
    p.update("read", 4, 4)            # not yet another interval
    clock.t += 1
    p.update("index", 0, 0)           # read ended: a line for it
    clock.t += 29
    p.update("index", 58_000, 58_000)  # 30 s after the last line
    p.close()
    assert out.getvalue().splitlines() == [
        "ctx load: read at: 3 of 4 (0/s in this phase, 31 s in all)",
        "ctx load: read done: 4 (0/s in this phase, 42 s in all)",
        "ctx load: index at: 58,000 (2,000/s in this phase, 71 s in all)",
        "ctx load: index done: 58,000 (2,000/s in this phase, 71 s in all)",
    ]


def test_ctrl_c_during_a_load_prints_one_line_and_no_worker_traceback(tmp_path):
    """SIGINT to the whole process group (as a terminal's Ctrl-C) once the worker pool runs."""
    import os
    import signal
    import subprocess
    import sys
    import time
    from pathlib import Path

    from .conftest import REPO

    # A corpus large enough that the load is still running well after its pool starts (the
    # bundled data can finish within the half second below on a quiet machine).
    corpus = tmp_path / "corpus"
    subprocess.run([sys.executable, str(REPO / "benchmarks" / "gen_corpus.py"), "--objects", "5000",
                    "--out", str(corpus)], check=True, stdout=subprocess.DEVNULL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(CTX_ROOT=str(corpus), CTX_DB=str(tmp_path / "ctx.duckdb"), NO_COLOR="1")
    # Ctrl-C as at a terminal: a test run started as a background job (`pytest … &` from a
    # script) has SIGINT ignored, and a child would inherit that and finish its load (exit 0).
    proc = subprocess.Popen([str(Path(sys.executable).parent / "ctx"), "load"], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    for _ in range(6000):                      # bounded: at most ~60 s of polling
        if proc.poll() is not None or (children.exists() and children.read_text().split()):
            break
        time.sleep(0.01)
    if proc.poll() is not None:
        import pytest

        pytest.skip("the load finished before its worker pool started (a one-core machine runs no pool)")
    time.sleep(0.5)                            # the workers are in their task loop by now
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:           # workers that took the interrupt can hang the pool
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError("ctx load did not stop within 120 s of Ctrl-C") from None
    assert proc.returncode == 130, err
    assert err.endswith("ctx: interrupted\n"), err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert not (tmp_path / "ctx.duckdb").exists()


def test_no_phase_claims_a_total_it_does_not_know_nor_is_full_before_it_ends(tmp_path):
    """Issue 49 item 7: `index` counts the objects read (its total is known only at the end),
    `tables` counts its steps, `fts` is one statement (no count); a phase is at its total only
    in its last report."""
    from ctxcli.load.build import build_store

    from .conftest import REPO

    calls: list[tuple[str, int, int]] = []
    build_store(REPO / "manifests", tmp_path / "ctx.duckdb", root=REPO, progress=lambda *a: calls.append(a))
    phases = list(dict.fromkeys(c[0] for c in calls))
    assert phases == ["read", "index", "tables", "fts"]
    by = {p: [(d, t) for s, d, t in calls if s == p] for p in phases}
    assert by["index"] and all(t == 0 for _, t in by["index"])
    assert by["tables"] == [(i, 7) for i in range(8)]          # the bundled store has vectors: 7 steps
    assert by["fts"] == [(0, 0)]
    n = len(list((REPO / "manifests" / "sources").glob("*.yaml")))
    assert by["read"][-1] == (n, n) and all(d < t for d, t in by["read"][:-1])


def test_the_bar_shows_no_percentage_without_a_total_and_done_only_after_a_phase_ends():
    from rich.console import Console

    from ctxcli.cli.cmd_load import _progress_bar

    def fields(bar):
        return {t.description: (t.fields["count"], t.fields["pct"], t.total) for t in bar.p.tasks}

    bar = _progress_bar(console=Console(file=io.StringIO(), force_terminal=False))
    bar.update("read", 4, 4)
    bar.update("index", 500, 0)
    assert fields(bar) == {"read": ("4/4", "100 %", 4), "index": ("500", "", None)}
    bar.update("tables", 3, 7)
    assert fields(bar) == {"read": ("4/4", "100 %", 4), "index": ("500", "done", 500), "tables": ("3/7", " 42 %", 7)}
    bar.update("fts", 0, 0)
    bar.close(finished=False)        # Ctrl-C, SIGTERM, an error during the index: never "done"
    assert fields(bar)["fts"] == ("", "", None) and fields(bar)["tables"] == ("3/7", " 42 %", 7)
    bar = _progress_bar(console=Console(file=io.StringIO(), force_terminal=False))
    bar.update("fts", 0, 0)
    bar.close(finished=True)
    assert fields(bar) == {"fts": ("", "done", 1)}


def test_an_interrupted_load_never_says_its_phase_is_done(monkeypatch):
    from ctxcli import api
    from ctxcli.cli import cmd_load

    from .conftest import run_cli

    real = cmd_load._plain_progress
    monkeypatch.setattr(cmd_load, "_plain_progress", lambda: real(every=0))      # a line for every report

    def load(*, progress, **kw):
        progress("fts", 0, 0)
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "load", load)
    r = run_cli(["load"])
    lines = r.stderr.splitlines()
    assert r.exit_code == 130 and lines[-1] == "ctx: interrupted", r.stderr
    assert len(lines) == 2 and lines[0].startswith("ctx load: fts at (0 s in this phase, ")
