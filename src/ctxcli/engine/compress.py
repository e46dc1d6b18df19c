"""Evidence compression: placeholder for issue 8 — no compression is attempted yet."""

from __future__ import annotations

from typing import Any


def try_compress(item: dict[str, Any], o, remaining: int, pb, count) -> dict[str, Any] | None:
    return None
