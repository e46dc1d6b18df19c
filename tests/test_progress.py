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
