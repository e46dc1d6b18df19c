"""The store's writer lock and the ledger's lock (filelock): a second writer is refused at
once (the store) or waits (the ledger); a lock file that is a symbolic link is never opened
through, so the file it points at is left as it was; the lock file stays after release."""

from __future__ import annotations

import threading
import time

import pytest

from ctxcli.errors import OutputError, StoreBusyError, StoreUnusableError
from ctxcli.ledger.commit import LOCK_FILE, locked
from ctxcli.store.db import writer_lock


def test_a_second_writer_of_the_store_is_busy_and_the_lock_file_stays(tmp_path):
    db = tmp_path / "s.duckdb"
    with writer_lock(db):
        with pytest.raises(StoreBusyError, match=f"store {db} is busy: another `ctx load` is writing it"):
            with writer_lock(db):
                pass
    with writer_lock(db):       # released: the next writer gets it
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.duckdb.lock"]


def test_a_symlinked_store_lock_is_refused_and_its_target_unchanged(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    db = tmp_path / "s.duckdb"
    (tmp_path / "s.duckdb.lock").symlink_to(target)
    with pytest.raises(StoreUnusableError, match=r"cannot write the store .*its lock file s\.duckdb\.lock"):
        with writer_lock(db):
            pass
    assert target.read_text() == "mine\n"


def test_a_symlinked_ledger_lock_is_refused_and_its_target_unchanged(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    (tmp_path / LOCK_FILE).symlink_to(target)
    with pytest.raises(OutputError, match="the run ledger .*: cannot write there"):
        with locked(tmp_path):
            pass
    assert target.read_text() == "mine\n"


def test_a_second_ledger_writer_waits_for_the_first(tmp_path):
    d = tmp_path
    order: list[str] = []
    held = threading.Event()

    def second() -> None:
        held.wait()
        with locked(d):
            order.append("second")

    t = threading.Thread(target=second)
    t.start()
    with locked(d):
        held.set()
        time.sleep(0.3)         # the second writer is waiting meanwhile (not a timing assertion)
        order.append("first")
    t.join(30)
    assert order == ["first", "second"]
