"""Recording runs in the ledger, idempotency keys, and the one-request-per-run-folder rule.

* ``--idempotency-key K``: the first run with K is recorded with it. The same K with the same
  request (its request hash) returns that run without retrieving again; the same K with a
  different request is refused (exit 2, naming both request hashes). A key belongs to one
  tenant and subject: another subject's K is another key (its run is never returned, its
  request hash never named).
* Without a key, a run folder ctx wrote for one request is not overwritten by another request
  unless ``--replace`` is given (exit 2, naming both request hashes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from ..engine.trace import request_hash
from ..errors import UsageError
from .records import ledger_dir, ledger_key, make_record

MAX_KEY = 200


def check_key(key: str | None) -> None:
    if key is None:
        return
    if not key.strip() or len(key) > MAX_KEY or any(ord(c) < 32 for c in key):
        raise UsageError(f"--idempotency-key: give 1 to {MAX_KEY} printable characters")


def _conflict(key: str, recorded: str, now: str) -> UsageError:
    if recorded == now:     # the same request with other inputs (tool results, working state, memory)
        return UsageError(f"--idempotency-key {key!r} was used for request {recorded} with other inputs (tool "
                          "results, working state or memory records): a different request needs another key")
    return UsageError(f"--idempotency-key {key!r} was used for request {recorded}; this request is {now}: "
                      f"a different request needs another key")


def _same(prior: dict[str, Any], request_hash: str, inputs: str | None) -> bool:
    return prior.get("request_hash") == request_hash and prior.get("inputs_sha256") == inputs


def owner(req: dict[str, Any]) -> tuple[Any, Any]:
    """Whose key it is: the request's tenant and subject."""
    return req.get("tenant_id"), (req.get("subject") or {}).get("id")


def find_key(records: list[dict[str, Any]], key: str, command: str, who: tuple[Any, Any]) -> dict[str, Any] | None:
    """The first run recorded with ``key`` for ``command`` by ``who`` (tenant, subject): ask and
    investigate have their own keys, and so has every subject."""
    for r in records:
        if r.get("idempotency_key") == key and r.get("command") == command and \
                (r.get("tenant_id"), r.get("subject")) == who:
            return r
    return None


def lookup(key: str | None, req: dict[str, Any], *, command: str, db=None,
           inputs: str | None = None) -> dict[str, Any] | None:
    """The recorded run for ``key`` when it was this request (``req``, as the pack records it)
    with these inputs (``inputs``: the digest of an agent's tool results, working state and
    memory records, None without any); UsageError when it was another of the same subject."""
    if key is None:
        return None
    from .commit import records

    rh = request_hash(req)
    prior = find_key(records(ledger_dir(db)), key, command, owner(req))
    if prior is not None and not _same(prior, rh, inputs):
        raise _conflict(key, prior["request_hash"], rh)
    return prior


def folder_request(out: Path) -> str | None:
    """The request hash of the pack in a run folder ctx wrote, or None (no folder, no pack)."""
    import orjson

    from ..write import marker_files

    out = Path(out)
    if marker_files(out) is None or not (out / "pack.json").is_file():
        return None
    try:
        pack = orjson.loads((out / "pack.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    req = pack.get("request") if isinstance(pack, dict) else None
    return request_hash(req) if isinstance(req, dict) else None


def check_folder(out: Path | None, request_hash: str, *, replace: bool) -> None:
    """Refuse (exit 2) to write ``request_hash`` into a run folder holding another request."""
    if out is None or replace:
        return
    held = folder_request(out)
    if held is not None and held != request_hash:
        raise UsageError(f"--out {out}: holds the run of another request ({held}); this request is "
                         f"{request_hash}: give --replace to overwrite it, or another --out")


def record(command: str, pack: dict[str, Any], answer: dict[str, Any] | None, *, out: Path | None,
           files: dict[str, bytes], write: Callable[[], None] | None, db=None, key: str | None = None,
           replace: bool = True, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write the run folder (``write``) and append its ledger record and outbox event, all or none.
    Returns the record (with ``"repeated": True`` when ``key`` names this request's earlier run:
    nothing was written then)."""
    from .commit import commit, prepare

    rh = request_hash(pack["request"])
    check_folder(out, rh, replace=replace)
    prepare(ledger_dir(db))
    secret = ledger_key(db)
    rec = make_record(command, pack, answer, folder=out, files=files, idempotency_key=key, extra=extra, key=secret)

    def earlier(records: list[dict[str, Any]]) -> dict[str, Any] | None:
        if key is None:
            return None
        prior = find_key(records, key, command, owner(pack["request"]))
        if prior is None:
            return None
        if not _same(prior, rh, rec.get("inputs_sha256")):
            raise _conflict(key, prior["request_hash"], rh)
        return {**prior, "repeated": True}      # another process ran it meanwhile

    return commit(ledger_dir(db), rec, out, files.get("run.json"), write, key=secret, check=earlier)


FILTERS = ("case_id", "subject", "command", "verdict", "pack_id", "run_id", "idempotency_key")


def ledger_runs(db=None, **filters: str | None) -> list[dict[str, Any]]:
    """The ledger's records, newest first, those matching every given filter (exact values)."""
    from .commit import records

    want = {k: v for k, v in filters.items() if v is not None}
    bad = sorted(set(want) - set(FILTERS))
    if bad:
        raise ValueError(f"unknown filter {bad[0]}")
    rows = [r for r in records(ledger_dir(db)) if all(r.get(k) == v for k, v in want.items())]
    return list(reversed(rows))


def verify_ledger(db=None):
    """Finish what a killed commit left, then check the chain (records.verify) with the store
    secret (read only when a keyed record needs it)."""
    from .commit import locked, recover
    from .records import verify

    d = ledger_dir(db)

    def key_of() -> bytes | None:
        return ledger_key(db, create=False)

    if not d.is_dir():
        return verify(d, key_of)
    with locked(d):
        recover(d)
        return verify(d, key_of)
