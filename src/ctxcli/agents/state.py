"""``state_version``: the version of the caller's task state a pack was built for.

A pack built for an older state than the caller's current one is stale: the agent's goal,
approvals or findings may have moved on since. Versions that are both whole numbers compare
as numbers; any other two versions are the same state only when equal (a different one is
treated as newer: ctx cannot order them).
"""

from __future__ import annotations

from typing import Any


def check(recorded: str | None, current: str) -> dict[str, Any]:
    """{"recorded", "current", "stale", "sentence"} for a pack's ``state_version`` and the
    caller's current one."""
    if recorded is None:
        stale, why = True, "the pack records no state_version"
    elif recorded.isdigit() and current.isdigit():
        stale = int(current) > int(recorded)
        why = (f"the pack was built for state_version {recorded}; the current state is {current}" if stale else
               f"built for state_version {recorded}; the current state is {current}")
    else:
        stale = recorded != current
        why = (f"the pack was built for state_version {recorded!r}; the current state is {current!r}" if stale
               else f"built for the current state_version {current!r}")
    return {"recorded": recorded, "current": current, "stale": stale,
            "sentence": ("stale: " if stale else "current: ") + why}
