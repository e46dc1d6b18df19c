"""Concurrency and crashes: readers during a rebuild, a writer holding the store, and loads
and investigations killed with SIGKILL at several points.

Every command runs as a real process (``python -c "from ctxcli.cli.main import run; run()"``).
The store is the bundled example corpus in a private project copy.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxcli.load.build import build_store
from ctxcli.store.db import open_reader, store_meta

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and rename semantics")

CTX = [sys.executable, "-c", "from ctxcli.cli.main import run; run()"]
OUT_FILES = ("pack.json", "trace.jsonl", "answer.json", "answer.md", "run.json", ".ctx-run")   # and timings.json


def _env(proj: Path, db: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(CTX_ROOT=str(proj), CTX_DB=str(db), NO_COLOR="1", COLUMNS="200", PYTHONUNBUFFERED="1")
    return env


def _start(args: list, proj: Path, db: Path) -> subprocess.Popen:
    return subprocess.Popen([*CTX, *map(str, args)], cwd=proj, env=_env(proj, db), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _finish(p: subprocess.Popen, timeout: float = 60) -> tuple[int, str, str]:
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _digest(db: Path) -> str:
    con = open_reader(db)
    try:
        meta = store_meta(con)
        n = con.execute("SELECT count(*) FROM objects").fetchone()[0]
    finally:
        con.close()
    return f"{meta['store_digest']}/{n}"


def _assert_clean_exit(code: int, out: str, err: str) -> None:
    assert "Traceback" not in out + err, err
    assert "internal error" not in err, err
    if code == 3:
        assert err.count("\n") == 1 and err.startswith("ctx: error: ") and "busy" in err, err
    else:
        assert code == 0, (code, err)


@pytest.fixture
def loaded(project_copy) -> tuple[Path, Path]:
    db = project_copy / ".ctx" / "ctx.duckdb"
    build_store(project_copy / "manifests", db, root=project_copy)
    return project_copy, db


def test_readers_during_a_rebuild_get_the_same_pack_or_store_busy(loaded, tmp_path):
    proj, db = loaded
    digest = _digest(db)
    load = _start(["load", "--db", db], proj, db)
    time.sleep(0.3)
    readers = [_start(["investigate", "C-102", "--out", tmp_path / f"o{i}"], proj, db) for i in range(4)]
    results = [_finish(p) for p in readers]
    code, out, err = _finish(load)
    assert code == 0, err
    assert "Traceback" not in out + err
    packs = set()
    for i, (code, out, err) in enumerate(results):
        _assert_clean_exit(code, out, err)
        if code == 0:
            packs.add((tmp_path / f"o{i}" / "pack.json").read_bytes())
    assert len(packs) <= 1
    # At least one reader must have got through, and the rebuilt store is the same store.
    assert packs
    assert _digest(db) == digest


def test_a_writer_holding_the_store_makes_readers_busy_not_crash(loaded, tmp_path):
    proj, db = loaded
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True);"
                               " time.sleep(60)", str(db)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        for args in (["investigate", "C-102", "--out", tmp_path / "o"], ["sources"], ["sources", "--json"]):
            code, out, err = _finish(_start(args, proj, db))
            assert code == 3, (args, code, err)
            _assert_clean_exit(code, out, err)
            assert "store busy" in err or "is busy" in err
        assert not (tmp_path / "o").exists()
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.6, 1.0, 1.6])
def test_a_killed_load_leaves_the_previous_store_usable(loaded, delay):
    proj, db = loaded
    digest = _digest(db)
    p = _start(["load", "--db", db], proj, db)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    # The store is there, opens read-only and is the same store (either the old file or, if the
    # load finished before the kill, an identical rebuild).
    assert db.is_file()
    assert _digest(db) == digest
    # Whatever the killed load left beside the store does not stop the next one.
    code, out, err = _finish(_start(["load", "--db", db, "--json"], proj, db))
    assert code == 0, err
    assert _digest(db) == digest


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "timings.json"}


@pytest.mark.parametrize("delay", [0.2, 0.8, 1.4, 2.0])
def test_a_killed_investigation_leaves_the_complete_folder_or_none(loaded, tmp_path, delay):
    proj, db = loaded
    out = tmp_path / "runs" / "o"
    code, _, err = _finish(_start(["investigate", "C-102", "--out", out], proj, db))
    assert code == 0, err
    ref = _tree(out)
    assert sorted(ref) == sorted(OUT_FILES)

    p = _start(["investigate", "C-102", "--out", out], proj, db)
    time.sleep(delay)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    # The folder is the complete previous (or identical new) one, or it is gone; never partial.
    if out.exists():
        assert _tree(out) == ref
    # No visible folder beside it holds a partial pack.json.
    for d in out.parent.iterdir():
        if d.name.startswith("."):
            continue
        assert d == out
    # A fresh run afterwards works and writes the same bytes.
    code, _, err = _finish(_start(["investigate", "C-102", "--out", out], proj, db))
    assert code == 0, err
    assert _tree(out) == ref


def test_a_stale_wal_of_a_killed_writer_is_not_replayed_onto_a_new_store(loaded):
    proj, db = loaded
    writer = subprocess.run(
        [sys.executable, "-c", "import duckdb, os, sys; c = duckdb.connect(sys.argv[1]); "
                               "c.execute(\"SET checkpoint_threshold='1TB'\"); "
                               "c.execute(\"UPDATE objects SET title = 'STALE-WAL'\"); os._exit(0)", str(db)],
        capture_output=True)
    assert writer.returncode == 0, writer.stderr
    assert Path(str(db) + ".wal").exists()
    code, out, err = _finish(_start(["load", "--db", db, "--json"], proj, db))
    assert code == 0, err
    con = open_reader(db)
    try:
        stale = con.execute("SELECT count(*) FROM objects WHERE title = 'STALE-WAL'").fetchone()[0]
    finally:
        con.close()
    assert stale == 0



# A real load (api.load, the code path of `ctx load`) that stops inside the load, holding the
# writer lock, until it reads a line on stdin (issue 12, item 15).
_HOLDING_LOAD = """
import sys
from pathlib import Path
from ctxcli import api
held = []
def progress(stage, done, total):
    if not held:
        held.append(1)
        print("holding", flush=True)
        sys.stdin.readline()
res = api.load(manifests=Path(sys.argv[1]), db=Path(sys.argv[2]), progress=progress)
print("done", res.store_digest, flush=True)
"""


def test_a_second_load_while_one_runs_exits_3_and_touches_nothing(loaded):
    proj, db = loaded
    digest = _digest(db)
    first = subprocess.Popen([sys.executable, "-c", _HOLDING_LOAD, str(proj / "manifests"), str(db)],
                             cwd=proj, env=_env(proj, db), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    try:
        assert first.stdout.readline().strip() == b"holding", first.stderr.read()
        before = (db.read_bytes(), db.stat().st_mtime_ns, sorted(os.listdir(db.parent)))
        assert db.name + ".lock" in before[2]
        code, out, err = _finish(_start(["load", "--db", db], proj, db))
        assert code == 3, (code, err)
        assert err == f"ctx: error: store {db} is busy: another `ctx load` is writing it; retry when it has finished\n"
        assert out == ""
        assert (db.read_bytes(), db.stat().st_mtime_ns, sorted(os.listdir(db.parent))) == before
        # The first load is unaffected and publishes its store.
        first.stdin.write(b"go\n")
        first.stdin.flush()
        rest, ferr = first.communicate(timeout=120)
        assert first.returncode == 0, ferr
        assert rest.decode().startswith("done sha256:")
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert _digest(db) == digest
    # With the lock released, the next load runs.
    code, out, err = _finish(_start(["load", "--db", db, "--json"], proj, db))
    assert code == 0, err


def test_two_loads_started_together_never_both_write(loaded):
    proj, db = loaded
    digest = _digest(db)
    procs = [_start(["load", "--db", db, "--json"], proj, db) for _ in range(2)]
    results = [_finish(p, timeout=120) for p in procs]
    for code, out, err in results:
        _assert_clean_exit(code, out, err)
    assert any(code == 0 for code, _, _ in results)
    assert _digest(db) == digest
    assert not [n for n in os.listdir(db.parent) if n.endswith((".staging", ".wal")) or n.startswith("ctx-load-")]
