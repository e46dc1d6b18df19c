"""The recorded erasures, as every run reads them: the erasure gate's input.

``erasures.jsonl`` (beside the ledger: next to a DuckDB store file, in the project's ``.ctx/``
for a PostgreSQL store) holds one erasure a line: ``ctx erase`` and every tombstone a load
finds append to it (ledger/erasure.py). Each run (investigate, ask, eval, the MCP tools,
replay) reads it when it starts, so an erasure applies to every run from the moment it is
recorded. An erasure names an object id (of one tenant, or of any) and, when the store held
the object as it was recorded, the object's content and duplicate hashes *keyed* with the
store secret (``content_keys``): a copy of the text under another id (the duplicates ctx
links by ``dedup_hash``) is erased with it, and the file holds no plain digest of the text.

The file is checked line by line: a line that is not a complete erasure is exit 2 naming the
line (an erasure is never dropped silently).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError

ERASURES_FILE = "erasures.jsonl"
MAX_BYTES = 64 * 1024 * 1024
_HINT = "fix or remove that line (each line is one JSON erasure with object_id, reason, by, at)"


def erasures_dir(address: Path | str | None) -> Path | None:
    """Where the erasures of the store at ``address`` are recorded; None for no store file."""
    from . import paths
    from .store import is_postgres

    if address is None:
        return None
    if is_postgres(address):
        return paths.root() / ".ctx"
    return Path(address).parent


def read(d: Path) -> list[dict[str, Any]]:
    """The erasures recorded in folder ``d`` (none when the file does not exist)."""
    import orjson

    from .util.safeio import NotReadable, read_regular

    p = d / ERASURES_FILE
    try:
        raw = read_regular(p, MAX_BYTES, follow=False)
    except NotReadable as e:
        if str(e) == "no such file":
            return []
        raise InputError(f"{e}: ctx records erasures in a regular file", file=str(p)) from None
    out = []
    lines = raw.split(b"\n")
    if lines[-1]:
        raise InputError(f"line {len(lines)}: incomplete (no newline: truncated?); {_HINT}", file=str(p))
    for i, ln in enumerate(lines[:-1], 1):
        if not ln.strip():
            continue
        try:
            e = orjson.loads(ln)
        except orjson.JSONDecodeError:
            raise InputError(f"line {i}: not a JSON erasure (edited or truncated?); {_HINT}", file=str(p)) from None
        if not isinstance(e, dict) or not isinstance(e.get("object_id"), str) or not e["object_id"] \
                or not isinstance(e.get("tenant_id"), (str, type(None))) \
                or not isinstance(e.get("content_keys", []), list):
            raise InputError(f"line {i}: not an erasure (it needs object_id and tenant_id); {_HINT}", file=str(p))
        out.append(e)
    return out


@dataclass(frozen=True)
class Erased:
    """The erasures that apply to one tenant's run: ids, and keyed content hashes."""

    key: bytes | None = None
    ids: dict[str, dict[str, Any]] = field(default_factory=dict)       # object id -> its erasure
    keys: dict[str, dict[str, Any]] = field(default_factory=dict)      # keyed content hash -> erasure

    def __bool__(self) -> bool:
        return bool(self.ids or self.keys)

    def match(self, object_id: str, content_hash: str | None, dedup_hash: str | None) -> tuple[str, dict] | None:
        """("object_id" | "content", the erasure) when the object is erased, else None."""
        if object_id in self.ids:
            return "object_id", self.ids[object_id]
        if self.keys and self.key is not None:
            from .util.canon import sealed_hash

            for h in (content_hash, dedup_hash):
                if h and sealed_hash(h, key=self.key) in self.keys:
                    return "content", self.keys[sealed_hash(h, key=self.key)]
        return None


def content_keys(con, object_id: str, tenant: str | None, key: bytes) -> list[str]:
    """The keyed content and duplicate hashes of the object ``object_id`` (of ``tenant``, or of
    any tenant when None) as the store ``con`` holds it; empty when it holds none."""
    from .util.canon import sealed_hash

    out = set()
    for t, _oid, ch, dh in con.object_hashes([object_id]):
        if tenant is None or t == tenant:
            out.update(sealed_hash(h, key=key) for h in (ch, dh) if h)
    return sorted(out)


def held(con, erasures: list[dict[str, Any]], key: bytes | None,
         keys: dict[int, set[str]] | None = None) -> list[str]:
    """The object ids of the ``erasures`` the store ``con`` still holds: the object itself (of
    its tenant, or of any), or a copy of its text under another id (an object whose keyed
    content or duplicate hash is one of the erasure's: ``keys[id(e)]``, else its recorded
    ``content_keys``)."""
    from .util.canon import sealed_hash

    out: list[str] = []
    stored: dict[str, set[str | None]] | None = None
    for e in erasures:
        oid, tenant = e["object_id"], e.get("tenant_id")
        if con.holds_object(oid, tenant):
            out.append(oid)
            continue
        mine = keys.get(id(e)) if keys is not None else set(e.get("content_keys") or [])
        if not mine or key is None:
            continue
        if stored is None:          # every keyed hash the store holds -> the tenants holding it
            stored = {}
            for t, ch, dh in con.content_hashes():
                for h in (ch, dh):
                    if h:
                        stored.setdefault(sealed_hash(h, key=key), set()).add(t)
        if any(k in stored and (tenant is None or tenant in stored[k]) for k in mine):
            out.append(oid)
    return sorted(set(out))


def for_run(con, tenant: str, key: bytes | None, address: Path | str | None = None) -> Erased:
    """The erasures applying to ``tenant``'s run on the store ``con`` (read now from the file
    beside it): their ids, their recorded keyed hashes, and the keyed hashes of the erased
    objects the store still holds (duplicates of them are erased too)."""
    d = erasures_dir(address if address is not None else _address(con))
    if d is None:
        return Erased(key=key)
    mine = [e for e in read(d) if e.get("tenant_id") in (None, tenant)]
    if not mine:
        return Erased(key=key)
    ids: dict[str, dict[str, Any]] = {}
    for e in mine:
        ids.setdefault(e["object_id"], e)
    keys: dict[str, dict[str, Any]] = {}
    for e in mine:
        for k in e.get("content_keys") or []:
            if isinstance(k, str):
                keys.setdefault(k, e)
    if key is not None:
        from .util.canon import sealed_hash

        for t, oid, ch, dh in con.object_hashes(sorted(ids)):
            if t == tenant:
                for h in (ch, dh):
                    if h:
                        keys.setdefault(sealed_hash(h, key=key), ids[oid])
    return Erased(key=key, ids=ids, keys=keys)


def _address(con) -> Path | str | None:
    if getattr(con, "backend", None) == "duckdb":
        return getattr(con, "path", None)
    return getattr(con, "raw_address", None)
