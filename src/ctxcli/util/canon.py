"""Canonical JSON and content hashes: sorted keys, compact separators, UTF-8."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def canonical_bytes(obj: Any) -> bytes:
    return orjson.dumps(obj, option=_OPTS)


def pretty_bytes(obj: Any) -> bytes:
    """Stable, human-diffable JSON (sorted keys, 2-space indent, trailing newline)."""
    return orjson.dumps(obj, option=_OPTS | orjson.OPT_INDENT_2) + b"\n"


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def content_hash(text: str) -> str:
    """The registered form of a content hash: ``sha256:<hex>`` of the UTF-8 text."""
    return "sha256:" + sha256_hex(text)


def obj_hash(obj: Any) -> str:
    return "sha256:" + sha256_hex(canonical_bytes(obj))


def opaque_ref(tenant_id: str, object_id: str) -> str:
    """An opaque, stable reference for an object the subject may not see."""
    return "wh-" + sha256_hex(f"ctx-withheld\0{tenant_id}\0{object_id}")[:16]
