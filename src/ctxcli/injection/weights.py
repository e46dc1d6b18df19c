"""What the detector's learned layers (learned.py: character n-grams; intent.py: intent
features) share: the checked read of a shipped weights file, its error, and a score with the
span it was found in. No numpy here: the intent layer does without it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..errors import CtxError


class WeightsError(CtxError):
    """A learned layer's shipped weights file is missing or does not match its recorded sha256
    (a damaged install); exit 3."""

    exit_code = 3


@dataclass(frozen=True)
class Score:
    """The highest score of a text (its strongest window or segment) and that span in the
    normal form."""

    score: float
    start: int
    end: int


def read_checked(path: Path, sha256: str, what: str) -> bytes:
    """The bytes of the weights file ``path`` once their sha256 is ``sha256``; ``what`` names the
    layer in the one-line error."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise WeightsError(f"{path.name}: cannot read {what}'s weights: {e}") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise WeightsError(f"{path.name}: sha256 does not match the recorded {sha256[:12]}…")
    return data
