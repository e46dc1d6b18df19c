"""What identifies a pack: its schema version, its content hash and its ``pk-`` id.

Defined once here and used by the builder (which seals a pack), the pack reader (which
verifies one) and the run manifest (which records one).
"""

from __future__ import annotations

from typing import Any

from .canon import obj_hash

PACK_SCHEMA = "ctx.pack/1"          # the version this ctx writes
PACK_SCHEMAS = (PACK_SCHEMA,)       # the versions this ctx reads

_UNHASHED = ("content_hash", "pack_id")
STORE_WHERE = ("backend", "generation")      # where the store lives and which of its files: not content


def pack_hash(pack: dict[str, Any]) -> str:
    """The content hash a pack records: canonical JSON of everything but ``content_hash``,
    ``pack_id``, ``store.backend`` and ``store.generation`` (where the store lives is not what the
    pack says: the same inputs give the same pack id on the DuckDB and the PostgreSQL backend, and
    on any generation holding the same data)."""
    body = {k: v for k, v in pack.items() if k not in _UNHASHED}
    store = body.get("store")
    if isinstance(store, dict) and any(k in store for k in STORE_WHERE):
        body["store"] = {k: v for k, v in store.items() if k not in STORE_WHERE}
    return obj_hash(body)


def pack_id_for(content_hash: str) -> str:
    """The pack id for a content hash: ``pk-`` and the first 16 hex digits."""
    return "pk-" + content_hash.split(":", 1)[-1][:16]


def seal(pack: dict[str, Any]) -> dict[str, Any]:
    """Set ``content_hash`` and ``pack_id`` from the pack's content; returns the pack."""
    h = pack_hash(pack)
    pack["content_hash"] = h
    pack["pack_id"] = pack_id_for(h)
    return pack
