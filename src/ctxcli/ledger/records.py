"""Ledger records: what one run was, hash-chained; reading and verifying the chain."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..util.canon import canonical_bytes

LEDGER_SCHEMA = "ctx.ledger/1"
LEDGER_FILE = "ledger.jsonl"
OUTBOX_FILE = "outbox.jsonl"
PENDING_DIR = "ledger.pending"
LOCK_FILE = "ledger.lock"
COMMANDS = ("investigate", "ask", "replay")
MAX_FILE_BYTES = 1 << 30      # ~1 million runs of ~1.1 KB each
HINT = "`ctx ledger verify` names what is wrong; move the file aside to start a new ledger"


def ledger_dir(db=None) -> Path:
    """Where the ledger lives: beside a DuckDB store file, else in the project's .ctx/."""
    from .. import paths
    from ..store import is_postgres

    addr = paths.db_path(db)
    if is_postgres(addr):
        return paths.root() / ".ctx"
    return Path(addr).parent


def record_hash(rec: dict[str, Any]) -> str:
    body = {k: v for k, v in rec.items() if k != "hash"}
    return "sha256:" + hashlib.sha256(canonical_bytes(body)).hexdigest()


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def file_hashes(files: dict[str, bytes]) -> dict[str, str]:
    return {n: "sha256:" + hashlib.sha256(b).hexdigest() for n, b in sorted(files.items())}


def display(folder: Path | None) -> str | None:
    """A run folder as the ledger names it: relative to the project root when inside it."""
    if folder is None:
        return None
    from .. import paths

    p = Path(folder).absolute()
    try:
        return p.relative_to(paths.root().absolute()).as_posix()
    except ValueError:
        return str(p)


def resolve(folder: str | None) -> Path | None:
    if folder is None:
        return None
    from .. import paths

    p = Path(folder)
    return p if p.is_absolute() else paths.root() / p


def make_record(command: str, pack: dict[str, Any], answer: dict[str, Any] | None, *, folder: Path | None,
                files: dict[str, bytes], idempotency_key: str | None = None,
                extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ledger record of a run, without its place in the chain (seq, prev, hash)."""
    import orjson

    from ..engine.trace import request_hash, run_id_for

    req = pack.get("request") or {}
    subj = req.get("subject") or {}
    rh = request_hash(req)
    signer = None
    if "run.json" in files:
        try:
            sig = orjson.loads(files["run.json"]).get("signature")
            signer = sig.get("key_id") if isinstance(sig, dict) else None
        except (orjson.JSONDecodeError, AttributeError):
            signer = None
    rec = {"schema_version": LEDGER_SCHEMA, "command": command, "run_id": run_id_for(rh), "request_hash": rh,
           "idempotency_key": idempotency_key, "pack_id": pack.get("pack_id"), "case_id": req.get("case_id"),
           "variant": req.get("variant"), "tenant_id": req.get("tenant_id"), "subject": subj.get("id"),
           "scopes": list(subj.get("scopes") or []), "clearance": subj.get("clearance"),
           "purpose": req.get("purpose"), "as_of": req.get("as_of"),
           "generation": (pack.get("store") or {}).get("generation"),
           "verdict": (answer or {}).get("verdict"), "folder": display(folder), "files": file_hashes(files),
           "signer_key_id": signer, "wall_time": now_utc()}
    if extra:
        rec.update(extra)
    return rec


def chain(rec: dict[str, Any], prev: dict[str, Any] | None) -> dict[str, Any]:
    """``rec`` as the next record after ``prev``: its seq, the previous hash and its own."""
    out = {**rec, "seq": (prev["seq"] + 1) if prev else 1, "prev": prev["hash"] if prev else None}
    out["hash"] = record_hash(out)
    return out


def line_of(rec: dict[str, Any]) -> bytes:
    return canonical_bytes(rec) + b"\n"


def read_raw(path: Path) -> bytes:
    """The bytes of a ledger or outbox file (empty when there is none). Anything but a regular
    file — a FIFO, a device, a folder, a symbolic link — or one over ``MAX_FILE_BYTES`` is an
    InputError (exit 2) naming it: never a hang, never followed."""
    from ..errors import InputError
    from ..util.safeio import NotReadable, read_regular

    try:
        return read_regular(path, MAX_FILE_BYTES, follow=False)
    except NotReadable as e:
        if str(e) == "no such file":
            return b""
        raise InputError(f"{e}: ctx keeps its run ledger and outbox in regular files; move it aside to start a "
                         "new ledger", file=str(path)) from None


def read_lines(path: Path) -> list[bytes]:
    """The complete lines of a JSONL file (a last line without its newline is not complete)."""
    return read_raw(path).split(b"\n")[:-1]


def read_records(d: Path) -> list[dict[str, Any]]:
    """The ledger's records as written (their hashes unverified: ``verify``). A line that is not
    a record — not JSON, or without an integer ``seq`` and a ``hash`` — is an InputError (exit 2)
    naming the line: the next record could not be chained after it, and nothing is dropped."""
    import orjson

    from ..errors import InputError

    p = d / LEDGER_FILE
    out = []
    for i, ln in enumerate(read_lines(p), 1):
        try:
            rec = orjson.loads(ln)
        except orjson.JSONDecodeError:
            raise InputError(f"line {i}: not JSON (edited or truncated?); {HINT}", file=str(p)) from None
        seq = rec.get("seq") if isinstance(rec, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(rec.get("hash"), str):
            raise InputError(f"line {i}: not a ledger record (it needs seq and hash); {HINT}", file=str(p))
        out.append(rec)
    return out


@dataclass
class Verified:
    records: int
    events: int
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(d: Path) -> Verified:
    """Check the chain: every line parses, every record's hash is its content's, each names the
    one before it, seq runs 1, 2, 3 … without a gap; and every outbox event carries a record
    of the ledger (so deleting the newest records is found too)."""
    import orjson

    lp = d / LEDGER_FILE
    problems: list[str] = []
    prev = None
    by_seq: dict[int, str] = {}
    n = 0
    for i, ln in enumerate(read_lines(lp), 1):
        n += 1
        try:
            rec = orjson.loads(ln)
        except orjson.JSONDecodeError:
            problems.append(f"{lp.name} line {i}: not JSON (edited?)")
            prev = None
            continue
        if not isinstance(rec, dict):
            problems.append(f"{lp.name} line {i}: not a record")
            continue
        seq = rec.get("seq")
        want_seq = (prev["seq"] + 1) if prev else 1
        if rec.get("hash") != record_hash(rec):
            problems.append(f"{lp.name} line {i}: record {seq} was edited (its content no longer hashes to "
                            f"{str(rec.get('hash'))[:19]}…)")
        elif seq != want_seq or rec.get("prev") != (prev["hash"] if prev else None):
            if isinstance(seq, int) and seq > want_seq:
                gone = f"record {want_seq}" if seq == want_seq + 1 else f"records {want_seq}-{seq - 1}"
                problems.append(f"{lp.name} line {i}: {gone} before record {seq} is missing (deleted?)")
            else:
                problems.append(f"{lp.name} line {i}: record {seq} does not follow record "
                                f"{prev['seq'] if prev else 'none'} (reordered or copied?)")
        if isinstance(seq, int):
            by_seq[seq] = str(rec.get("hash"))
        prev = rec
    events = 0
    op = d / OUTBOX_FILE
    for i, ln in enumerate(read_lines(op), 1):
        events += 1
        try:
            ev = orjson.loads(ln)
        except orjson.JSONDecodeError:
            problems.append(f"{op.name} line {i}: not JSON (edited?)")
            continue
        data = ev.get("data") if isinstance(ev, dict) else None
        if not isinstance(data, dict):
            problems.append(f"{op.name} line {i}: not a ctx event")
            continue
        seq = data.get("seq")
        if seq not in by_seq:
            problems.append(f"{op.name} line {i}: the event of record {seq} has no record in {lp.name} (deleted?)")
        elif by_seq[seq] != data.get("hash"):
            problems.append(f"{op.name} line {i}: the event of record {seq} carries another record than "
                            f"{lp.name} (edited?)")
    return Verified(records=n, events=events, problems=problems)


def ensure_dir(d: Path) -> None:
    os.makedirs(d, exist_ok=True)
