"""Committing a run: its run folder, its ledger record and its outbox event, all or none.

Three files cannot be renamed in one step, so a journal makes them one (as a database's log
does). Under the ledger lock (``flock`` on ``ledger.lock``):

1. the record (chained after the last one, keyed with the store secret: records.py) and its CloudEvents event are written to
   ``ledger.pending/<seq>.json`` with the hash of the run.json about to be written, and synced;
2. the run folder is written (staged, then renamed into place: write.write_run_folder);
3. the record is appended to ``ledger.jsonl``, then 4. the event to ``outbox.jsonl``;
5. the journal entry is removed.

Whoever takes the lock next finishes what a killed process left (:func:`recover`): a journal
entry whose run folder is in place (its run.json has the recorded hash) is rolled forward —
record and event appended where missing; one whose folder is not there is dropped (the run
never happened); a line cut short by the kill is cut off. A run without a folder (``ctx replay``
without --out) commits at step 3.

``$CTX_LEDGER_KILL_AT`` (``journal``, ``folder`` or ``ledger``) kills the process with SIGKILL
right after that step: the crash tests use it.
"""

from __future__ import annotations

import hashlib
import os
import signal
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from .records import (LEDGER_FILE, LOCK_FILE, OUTBOX_FILE, PENDING_DIR, chain, ensure_dir, line_of, read_lines,
                      read_raw, read_records, resolve)

KILL_ENV = "CTX_LEDGER_KILL_AT"
EVENT_TYPES = {"investigate": "dev.ctx.run.investigated", "ask": "dev.ctx.run.asked",
               "replay": "dev.ctx.run.replayed", "build_context": "dev.ctx.run.step_built"}


def _step(name: str) -> None:
    if os.environ.get(KILL_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _unwritable(d: Path, e: OSError) -> Exception:
    from ..errors import OutputError

    return OutputError(f"the run ledger {d / LEDGER_FILE}: cannot write there ({e.strerror or e}); the ledger "
                       f"lives beside the store")


def prepare(d: Path) -> None:
    """Create the ledger's folder (before its key is read: the store secret lives beside it)."""
    try:
        ensure_dir(d)
    except OSError as e:
        raise _unwritable(d, e) from None


@contextmanager
def locked(d: Path) -> Iterator[None]:
    """The ledger lock (writers wait for each other: a commit takes milliseconds)."""
    from filelock import FileLock

    lock = FileLock(d / LOCK_FILE, mode=0o644)     # waits; never follows a symbolic link
    try:
        ensure_dir(d)
        lock.acquire()
    except OSError as e:
        raise _unwritable(d, e) from None
    try:
        yield
    finally:
        lock.release()


def cloud_event(rec: dict[str, Any]) -> dict[str, Any]:
    """A CloudEvents 1.0 event (JSON format) of a ledger record; its id is the record's hash
    (hex: the keyed MAC, or the plain SHA-256 of a record written before the chain was keyed),
    unique per record and stable."""
    return {"specversion": "1.0", "id": rec["hash"].split(":", 1)[-1], "source": "urn:ctx:ledger",
            "type": EVENT_TYPES[rec["command"]], "subject": rec["run_id"], "time": rec["wall_time"],
            "datacontenttype": "application/json", "data": rec}


def append_synced(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _cut_partial(path: Path) -> None:
    """Drop a last line without its newline (a write cut short by a kill)."""
    raw = read_raw(path)
    if raw and not raw.endswith(b"\n"):
        with open(path, "r+b") as fh:
            fh.truncate(raw.rfind(b"\n") + 1)
            fh.flush()
            os.fsync(fh.fileno())


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _event_ids(d: Path) -> set[str]:
    import orjson

    out = set()
    for ln in read_lines(d / OUTBOX_FILE):
        try:
            ev = orjson.loads(ln)
        except orjson.JSONDecodeError:
            continue
        if isinstance(ev, dict) and isinstance(ev.get("id"), str):
            out.add(ev["id"])
    return out


def recover(d: Path) -> list[str]:
    """Finish or undo what a killed commit left (call with the lock held). Returns what it did."""
    import orjson

    did: list[str] = []
    _cut_partial(d / LEDGER_FILE)
    _cut_partial(d / OUTBOX_FILE)
    pend = d / PENDING_DIR
    if not pend.is_dir():
        return did
    for p in sorted(pend.glob("*.json")):
        try:
            j = orjson.loads(p.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            j = None            # the journal entry itself was cut short: nothing after it happened
        if isinstance(j, dict):
            rec, ev = j["record"], j["event"]
            have = {r.get("hash") for r in read_records(d)}
            folder = resolve(j.get("folder"))
            in_place = folder is None or _run_json_hash(folder) == j.get("run_json")
            if rec["hash"] in have or in_place:
                if rec["hash"] not in have:
                    last = read_records(d)
                    if (last[-1]["hash"] if last else None) == rec["prev"]:
                        append_synced(d / LEDGER_FILE, line_of(rec))
                        did.append(f"recorded run {rec['run_id']} (record {rec['seq']}) left by a killed process")
                if ev["id"] not in _event_ids(d) and rec["hash"] in {r.get("hash") for r in read_records(d)}:
                    append_synced(d / OUTBOX_FILE, line_of(ev))
        os.unlink(p)
    return did


def _run_json_hash(folder: Path) -> str | None:
    try:
        return _sha((folder / "run.json").read_bytes())
    except OSError:
        return None


def commit(d: Path, rec: dict[str, Any], folder: Path | None, run_json: bytes | None,
           write: Callable[[], None] | None, *, key: bytes,
           check: Callable[[list[dict[str, Any]]], Any] = None) -> Any:
    """Write the run folder (``write()``), its record (chained with the store secret ``key``)
    and its event as one step; returns the chained record, or what ``check(records)`` returns
    when it returns something (an earlier run that makes this one unnecessary: nothing is
    written then)."""
    from ..util.canon import canonical_bytes

    with locked(d):
        recover(d)
        records = read_records(d)
        if check is not None:
            found = check(records)
            if found is not None:
                return found
        full = chain(rec, records[-1] if records else None, key)
        ev = cloud_event(full)
        pend = d / PENDING_DIR
        ensure_dir(pend)
        jp = pend / f"{full['seq']:09d}.json"
        from ..write import write_file_atomic

        write_file_atomic(jp, canonical_bytes({"record": full, "event": ev, "folder": full["folder"],
                                               "run_json": _sha(run_json) if run_json is not None else None}))
        _step("journal")
        if write is not None:
            try:
                write()
            except BaseException:
                os.unlink(jp)
                raise
        _step("folder")
        append_synced(d / LEDGER_FILE, line_of(full))
        _step("ledger")
        append_synced(d / OUTBOX_FILE, line_of(ev))
        os.unlink(jp)
        return full


def records(d: Path) -> list[dict[str, Any]]:
    """The ledger's records, after finishing what a killed commit left."""
    if not (d / LEDGER_FILE).exists() and not (d / PENDING_DIR).is_dir():
        return []
    with locked(d):
        recover(d)
        return read_records(d)
