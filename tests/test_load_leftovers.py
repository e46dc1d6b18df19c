"""A load stopped by a signal (SIGTERM, SIGKILL) or a power cut leaves its temporary folder
beside the store (``ctx-load-*``, up to the size of the rows); the next load removes it —
only a folder ctx made (its name and its marker) whose load no longer runs. SIGTERM during a
load stops it as Ctrl-C does: one line, exit 143, no worker traceback, the folder removed
(issue 49 item 6)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

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


def _bulk_source(proj, n: int) -> None:
    """A source of ``n`` generated objects beside the bundled ones: a load long enough to stop."""
    text = (proj / "manifests" / "sources" / "partner-claims.yaml").read_text(encoding="utf-8")
    (proj / "manifests" / "sources" / "bulk-notes.yaml").write_text(
        text.replace("source_id: partner-claims", "source_id: bulk-notes")
        .replace("snapshot: sources/partner-claims", "snapshot: sources/bulk-notes"), encoding="utf-8")
    (proj / "sources" / "bulk-notes").mkdir()
    rng = random.Random(7)
    words = ["claim", "windscreen", "stone", "chip", "policy", "settled", "paid", "rule", "glass", "accident",
             "certificate", "photo", "evidence", "loss", "statement", "partner", "insurer"]
    with open(proj / "sources" / "bulk-notes" / "objects.jsonl", "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({
                "object_id": f"BULK-{i:06d}", "tenant_id": "tenant-other", "source_version": "bulk-1",
                "object_type": "case_snapshot", "subject_id": f"case:B-{i}", "title": f"Bulk note {i}",
                "content": " ".join(rng.choice(words) for _ in range(60)), "locator": f"bulk://{i}",
                "observed_at": "2026-07-20T18:00:00+08:00", "required_scopes": [], "supports": ["case_status"],
                "facts": {}, "keys": [f"B-{i}"]}) + "\n")


def _load_until_its_folder_appears(proj):
    env = {k: v for k, v in os.environ.items() if k != "CTX_DB"}
    p = subprocess.Popen([sys.executable, "-m", "ctxcli.cli.main", "load"], cwd=proj, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not any(m.read_text().endswith("\n") for m in (proj / ".ctx").glob("ctx-load-*/.ctx-load")):
        # made, and marked as ctx's (the marker written whole)
        assert p.poll() is None and time.monotonic() < deadline, p.communicate()
        time.sleep(0.01)
    return p


def test_sigterm_during_a_load_stops_it_as_ctrl_c_does_and_sigkill_leaves_what_the_next_load_removes(
        project_copy):
    _bulk_source(project_copy, 3000)
    ctx_dir = project_copy / ".ctx"
    p = _load_until_its_folder_appears(project_copy)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    assert (p.returncode, err.decode()) == (143, "ctx: terminated\n")      # no worker traceback
    assert sorted(x.name for x in ctx_dir.iterdir()) == ["ctx.duckdb.lock"]  # nothing published, nothing left
    # SIGKILL cannot be handled: its folder stays, and the next load removes it
    p = _load_until_its_folder_appears(project_copy)
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=60)
    left = [x.name for x in ctx_dir.glob("ctx-load-*")]
    assert len(left) == 1
    r = run_cli(["load"])
    assert r.exit_code == 0, r.stderr
    assert list(ctx_dir.glob("ctx-load-*")) == []


def test_a_forked_worker_gets_the_default_sigterm_back():
    """The parent's pool.terminate() sends SIGTERM to its workers: they end at once, without the
    parent's handler and its traceback per worker."""
    from ctxcli.util.signals import terminate_interrupts

    with terminate_interrupts():
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        pid = os.fork()
        if pid == 0:
            os._exit(0 if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL else 1)
        _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL      # restored after the block


def _swallowed_sigterm():
    """SIGTERM's handler running inside a finalizer: Python ignores the exception it raises."""
    import gc

    from ctxcli.util.signals import _on_term as on_term

    class Finalized:
        def __del__(self):
            on_term(signal.SIGTERM, None)

    x = Finalized()
    del x
    gc.collect()


def test_a_sigterm_swallowed_in_a_finalizer_still_stops_the_load_before_it_publishes(tmp_path, monkeypatch, capsys):
    import pytest

    from ctxcli.load.build import build_store
    from ctxcli.util import signals

    from .conftest import REPO

    monkeypatch.setattr(signals, "_RECEIVED", False)         # restored: later tests see no SIGTERM
    unraisable: list = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)     # what would print "Exception ignored in …"
    seen = []

    def progress(stage, done, total):
        seen.append(stage)
        if stage == "fts":                 # the last report before the store is published
            _swallowed_sigterm()

    with pytest.raises(signals.Terminated):
        build_store(REPO / "manifests", tmp_path / "ctx.duckdb", root=REPO, progress=progress)
    assert seen[-1] == "fts" and not (tmp_path / "ctx.duckdb").exists()       # nothing published
    assert list(tmp_path.iterdir()) == []        # no staging file, no temporary folder
    assert capsys.readouterr().err == "" and unraisable == []      # no "Exception ignored in …" block
    # and at the end of a block that never reports again
    monkeypatch.setattr(signals, "_RECEIVED", False)
    with pytest.raises(signals.Terminated):
        with signals.terminate_interrupts():
            _swallowed_sigterm()
    assert capsys.readouterr().err == "" and unraisable == []


_FORK_CHECK = """
import json, signal
from ctxcli.load.derive import start_pool

def handler(signum, frame):
    raise KeyboardInterrupt

signal.signal(signal.SIGTERM, handler)
pool = start_pool(vectors=False)
masks = []
for p in pool._pool:
    with open(f"/proc/{p.pid}/status", encoding="utf-8") as fh:
        masks.append(int(next(x for x in fh.read().splitlines() if x.startswith("SigCgt:")).split()[1], 16))
print(json.dumps({"parent_handler_back": signal.getsignal(signal.SIGTERM) is handler,
                  "workers_catching_sigterm": sum(bool(m & (1 << (signal.SIGTERM - 1))) for m in masks),
                  "workers": len(masks)}), flush=True)
pool.terminate()
pool.join()
"""


def test_load_workers_are_forked_with_the_default_sigterm(monkeypatch):
    """The load's SIGTERM handler is Python's; a worker forked with it would ignore
    pool.terminate() while stuck before its first bytecode (a lock another thread held at the
    fork). Workers are forked with the default action, and the parent's handler comes back.
    Checked in a process of its own, killed with its workers after 60 s: a worker that does
    catch SIGTERM can leave ``pool.terminate()`` waiting for ever."""
    import threading

    monkeypatch.setenv("CTX_LOAD_WORKERS", "2")
    p = subprocess.Popen([sys.executable, "-c", _FORK_CHECK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, start_new_session=True)

    def kill() -> None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(60, kill)
    timer.start()
    try:
        # the line comes before terminate(): a wrong one is not waited on (a worker catching
        # SIGTERM can leave terminate() hanging until the timer)
        first = p.stdout.readline()
        want = {"parent_handler_back": True, "workers_catching_sigterm": 0, "workers": 2}
        if not first.strip() or json.loads(first) != want:
            kill()
        out, err = p.communicate()
    finally:
        timer.cancel()
    assert json.loads(first or "{}") == want, err[-2000:]
    assert p.returncode == 0, err[-2000:]


def test_a_batch_reaches_a_worker_as_a_file_and_the_task_only_names_it(tmp_path, monkeypatch):
    """A task larger than the pipe's buffer leaves the pool's task-handler thread mid-write when
    Ctrl-C stops the workers, and Pool.terminate() then waits for it for ever (a hang seen in
    the suite). Each task sent to a worker is a few hundred bytes naming a spooled batch; the
    spooled files are gone once the load ends, and the store is the one a single process makes."""
    import pickle
    from multiprocessing.pool import Pool

    import duckdb

    import ctxcli.load.build as build
    from ctxcli.load.build import build_store

    from .conftest import REPO

    monkeypatch.setenv("CTX_LOAD_WORKERS", "1")
    build_store(REPO / "manifests", tmp_path / "one.duckdb", root=REPO)
    sizes: list[int] = []
    spooled: list[int] = []         # batch files waiting as each task is sent
    real = Pool.apply_async

    def recorded(self, func, args=(), *rest, **kw):
        sizes.append(len(pickle.dumps((func, args))))
        spooled.append(len(list(tmp_path.rglob("batch-*.pickle"))))
        return real(self, func, args, *rest, **kw)

    monkeypatch.setattr(Pool, "apply_async", recorded)
    monkeypatch.setenv("CTX_LOAD_WORKERS", "2")
    monkeypatch.setattr(build, "BATCH", 16)
    build_store(REPO / "manifests", tmp_path / "two.duckdb", root=REPO)
    assert len(sizes) > 10 and max(sizes) < 1024, sizes
    # a worker removes the file it has read: no more wait than tasks in flight (2 × 2 workers + 1)
    assert max(spooled) <= 5 and spooled[0] == 1, spooled
    assert list(tmp_path.rglob("batch-*")) == []
    one = duckdb.connect(str(tmp_path / "one.duckdb"), read_only=True)
    two = duckdb.connect(str(tmp_path / "two.duckdb"), read_only=True)
    for q in ("SELECT doc_id, tokens, dedup_hash, fts_text FROM objects ORDER BY doc_id",
              "SELECT * FROM postings ORDER BY ALL", "SELECT * FROM vectors ORDER BY ALL"):
        assert one.execute(q).fetchall() == two.execute(q).fetchall(), q
