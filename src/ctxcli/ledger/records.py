"""Ledger records: what one run was, chained; reading and verifying the chain.

The chain is keyed: each record's ``hash`` is HMAC-SHA256 with the store secret
(store/secret.py: ``$CTX_SECRET``, ``secret.key`` beside a DuckDB store, ``ctx_meta.secret`` of a
team store) of its canonical JSON, which names the previous record's hash (``prev``), so a
record edited and re-chained without the secret no longer verifies. A record says how it is
chained (``chain``: ``hmac-sha256``, and ``chain_key``: the public id of the secret); a record
without ``chain`` was written before the chain was keyed (plain SHA-256) and is verified as such:
a keyed record after it seals it (its MAC covers ``prev``), a plain record after a keyed one is a
downgrade (reported), and a ledger of plain records only is reported as not keyed, never as
intact. The digests of the run's files a record lists are keyed the same way (no plain digest of
a file to confirm a guess of its content against)."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from ..util.canon import canonical_bytes

LEDGER_SCHEMA = "ctx.ledger/1"
LEDGER_FILE = "ledger.jsonl"
OUTBOX_FILE = "outbox.jsonl"
PENDING_DIR = "ledger.pending"
LOCK_FILE = "ledger.lock"
COMMANDS = ("investigate", "ask", "replay", "build_context")     # build_context: an MCP step (serve)
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


CHAIN = "hmac-sha256"        # how new records are chained (a record without ``chain``: plain SHA-256)


def record_hash(rec: dict[str, Any], key: bytes | None = None) -> str:
    """The hash a record must carry: keyed with the store secret ``key`` when the record says
    ``chain: hmac-sha256``, else (a record written before the chain was keyed) plain SHA-256."""
    body = {k: v for k, v in rec.items() if k != "hash"}
    if rec.get("chain") == CHAIN:
        if key is None:
            raise ValueError("a keyed ledger record needs the store secret")
        from ..util.canon import keyed_hex

        return "hmac-sha256:" + keyed_hex(key, "ctx-ledger-record", canonical_bytes(body).decode("utf-8"))
    return "sha256:" + hashlib.sha256(canonical_bytes(body)).hexdigest()


def ledger_key(db=None, *, create: bool = True) -> bytes | None:
    """The store secret that keys the ledger beside the store ``db``."""
    from .. import paths
    from ..store import is_postgres
    from ..store.secret import store_key

    addr = paths.db_path(db)
    return store_key(addr if is_postgres(addr) else Path(addr), create=create)


def now_utc() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def file_hashes(files: dict[str, bytes], key: bytes | None = None) -> dict[str, str]:
    """The digest of each file: keyed with the store secret ``key`` when given (a ledger record)."""
    from ..util.canon import sealed_hash

    plain = {n: "sha256:" + hashlib.sha256(b).hexdigest() for n, b in sorted(files.items())}
    return plain if key is None else {n: sealed_hash(h, key=key) for n, h in plain.items()}


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
                extra: dict[str, Any] | None = None, key: bytes | None = None) -> dict[str, Any]:
    """The ledger record of a run, without its place in the chain (seq, prev, hash); its
    files' digests keyed with the store secret ``key``."""
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
           "verdict": (answer or {}).get("verdict"), "folder": display(folder), "files": file_hashes(files, key),
           "signer_key_id": signer, "wall_time": now_utc()}
    if extra:
        rec.update(extra)
    return rec


def chain(rec: dict[str, Any], prev: dict[str, Any] | None, key: bytes) -> dict[str, Any]:
    """``rec`` as the next record after ``prev``: its seq, the previous hash and its own,
    keyed with the store secret ``key``."""
    from ..util.canon import key_id

    out = {**rec, "seq": (prev["seq"] + 1) if prev else 1, "prev": prev["hash"] if prev else None,
           "chain": CHAIN, "chain_key": key_id(key)}
    out["hash"] = record_hash(out, key)
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
    unkeyed: list[int] = field(default_factory=list)      # records chained with plain SHA-256
    unsealed: list[int] = field(default_factory=list)     # ... that no keyed record follows

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def keyed(self) -> bool:
        """Every record is covered by the keyed chain (an edit re-chained without the secret shows)."""
        return not self.unsealed


def _keyed_problem(rec: dict[str, Any], seq: Any, key_of: Callable[[], bytes | None]) -> str | None:
    """Why a keyed record cannot be checked with this store secret, or None."""
    from ..util.canon import key_id

    key = key_of()
    if key is None:
        return (f"record {seq} is keyed with the store secret {rec.get('chain_key')}, which is not available here "
                f"(set $CTX_SECRET or use the store the ledger belongs to)")
    if rec.get("chain_key") != key_id(key):
        return (f"record {seq} is keyed with another store secret ({rec.get('chain_key')}; this one is "
                f"{key_id(key)}): it cannot be checked with this secret")
    return None


def _check_record(rec: dict[str, Any], prev: dict[str, Any] | None, keyed_before: bool,
                  key_of: Callable[[], bytes | None]) -> str | None:
    """What is wrong with one record after ``prev`` (its hash, its scheme, its link), or None."""
    seq = rec.get("seq")
    want_seq = (prev["seq"] + 1) if prev else 1
    scheme = rec.get("chain")
    if scheme not in (None, CHAIN):
        return f"record {seq} names an unknown chain {str(scheme)[:40]!r} (edited?)"
    if scheme is None and keyed_before:
        return f"record {seq} is chained with plain SHA-256 after keyed records (rewritten without the secret?)"
    if scheme == CHAIN:
        why = _keyed_problem(rec, seq, key_of)
        if why is not None:
            return why
    if rec.get("hash") != record_hash(rec, key_of() if scheme == CHAIN else None):
        return f"record {seq} was edited (its content no longer hashes to {str(rec.get('hash'))[:19]}…)"
    if seq != want_seq or rec.get("prev") != (prev["hash"] if prev else None):
        if isinstance(seq, int) and seq > want_seq:
            gone = f"record {want_seq}" if seq == want_seq + 1 else f"records {want_seq}-{seq - 1}"
            return f"{gone} before record {seq} is missing (deleted?)"
        return f"record {seq} does not follow record {prev['seq'] if prev else 'none'} (reordered or copied?)"
    return None


def verify(d: Path, key_of: Callable[[], bytes | None] = lambda: None) -> Verified:
    """Check the chain: every line parses, every record's hash is its content's (keyed with the
    store secret ``key_of()``, asked for only when a keyed record is met), each names the one
    before it, seq runs 1, 2, 3 … without a gap, no plain record follows a keyed one; and every
    outbox event carries a record of the ledger (so deleting the newest records is found too)."""
    import orjson

    lp = d / LEDGER_FILE
    problems: list[str] = []
    prev = None
    by_seq: dict[int, str] = {}
    unkeyed: list[int] = []
    keyed_before = False
    memo: list[bytes | None] = []

    def key() -> bytes | None:
        if not memo:
            memo.append(key_of())
        return memo[0]

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
        why = _check_record(rec, prev, keyed_before, key)
        if why is not None:
            problems.append(f"{lp.name} line {i}: {why}")
        if rec.get("chain") == CHAIN:
            keyed_before = True
        elif isinstance(seq, int):
            unkeyed.append(seq)
        if isinstance(seq, int):
            by_seq[seq] = str(rec.get("hash"))
        prev = rec
    events = _check_outbox(d, by_seq, problems)
    return Verified(records=n, events=events, problems=problems, unkeyed=unkeyed,
                    unsealed=[] if keyed_before else unkeyed)


def _check_outbox(d: Path, by_seq: dict[int, str], problems: list[str]) -> int:
    import orjson

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
            problems.append(f"{op.name} line {i}: the event of record {seq} has no record in {LEDGER_FILE} (deleted?)")
        elif by_seq[seq] != data.get("hash"):
            problems.append(f"{op.name} line {i}: the event of record {seq} carries another record than "
                            f"{LEDGER_FILE} (edited?)")
    return events


def ensure_dir(d: Path) -> None:
    os.makedirs(d, exist_ok=True)
