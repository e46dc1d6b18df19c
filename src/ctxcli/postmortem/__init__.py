"""Post-mortems of packs: replay (verify, rebuild, itemise drift), explain omissions, diff.

Library code only: typed results, :mod:`ctxcli.errors` exceptions, no printing. The CLI
(``cli/cmd_postmortem.py``) renders the results and decides exit codes.
"""

from __future__ import annotations

from .compare import PackDiff, compare
from .explain import ObjectExplanation, OmissionReport, explain_object, explain_omissions
from .packfile import LoadedPack, load_pack, pack_hash
from .replay import Purged, ReplayResult, replay, replay_loaded

__all__ = ["LoadedPack", "ObjectExplanation", "OmissionReport", "PackDiff", "Purged", "ReplayResult", "compare",
           "diff", "explain_object", "explain_omissions", "load_pack", "pack_hash", "replay", "replay_loaded"]


def diff(path_a, path_b, key: bytes | None = None) -> PackDiff:
    """Verify both packs and compare them (``key``: the store secret, see :func:`compare`)."""
    return compare(load_pack(path_a).data, load_pack(path_b).data, key=key)
