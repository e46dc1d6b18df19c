"""Canonical JSON and content hashes: sorted keys, compact separators, UTF-8."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import orjson

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def canonical_bytes(obj: Any) -> bytes:
    return orjson.dumps(obj, option=_OPTS)


def pretty_bytes(obj: Any) -> bytes:
    """Stable, human-diffable JSON (sorted keys, 2-space indent, trailing newline)."""
    return orjson.dumps(obj, option=_OPTS | orjson.OPT_INDENT_2) + b"\n"


def json_list(xs) -> str:
    """A list as one JSON text, for a statement parameter read with ``from_json``: DuckDB's
    Python binding converts a list parameter element by element, ~0.5 ms each (5,000 ids:
    2.6 s, against 0.05 s as text)."""
    return orjson.dumps(list(xs)).decode()


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def content_hash(text: str) -> str:
    """The registered form of a content hash: ``sha256:<hex>`` of the UTF-8 text."""
    return "sha256:" + sha256_hex(text)


def obj_hash(obj: Any) -> str:
    return "sha256:" + sha256_hex(canonical_bytes(obj))


def keyed_hex(key: bytes, *parts: str) -> str:
    """HMAC-SHA256 under the store secret ``key`` of the NUL-joined ``parts``, in hex."""
    return hmac.new(key, "\0".join(parts).encode("utf-8"), hashlib.sha256).hexdigest()


def opaque_ref(tenant_id: str, object_id: str, *, key: bytes) -> str:
    """An opaque, stable reference for an object the subject may not see, keyed with the
    store secret: without the key a guessed id cannot be checked against it."""
    return "wh-" + keyed_hex(key, "ctx-withheld", tenant_id, object_id)[:16]


def sealed_hash(digest: str, *, key: bytes) -> str:
    """A digest of text the subject may not read, as it may be shown to them: the plain
    digest keyed with the store secret (equal texts stay equal, guesses cannot be tested)."""
    return "hmac-sha256:" + keyed_hex(key, "ctx-sealed-digest", digest)


def key_id(key: bytes) -> str:
    """A public name of a store secret (tells two secrets apart, reveals nothing of either)."""
    return "hk-" + keyed_hex(key, "ctx-key-id")[:16]
