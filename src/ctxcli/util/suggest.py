"""The one did-you-mean: the closest known name to a misspelt one."""

from __future__ import annotations

import difflib
from typing import Iterable


def did_you_mean(name: str, known: Iterable[str], cutoff: float = 0.75) -> str:
    """`` (did you mean X?)`` for the known name closest to ``name``, or "" when none is close."""
    m = difflib.get_close_matches(name, sorted(known), n=1, cutoff=cutoff)
    return f" (did you mean {m[0]}?)" if m else ""
