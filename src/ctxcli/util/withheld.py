"""What a pack's candidate statements withheld, read from its rounds (no ids: counts per gate)."""

from __future__ import annotations

from typing import Any

ACCESS_GATES = ("tenant", "scope", "classification", "purpose")     # in gate order (engine/gates.py)


def withheld_counts(pack: dict[str, Any]) -> dict[str, int]:
    """gate -> the most matches any one query of the pack's rounds withheld by it (the
    statements apply the access rules and count what they withhold, never naming it; the same
    record found by several queries cannot be told apart, so this is a lower bound)."""
    out: dict[str, int] = {}
    for rnd in pack.get("rounds", []):
        for counts in (rnd.get("withheld") or {}).values() if isinstance(rnd, dict) else ():
            for gate, n in counts.items():
                out[gate] = max(out.get(gate, 0), int(n))
    return {g: out[g] for g in sorted(out, key=lambda g: (ACCESS_GATES.index(g) if g in ACCESS_GATES else 99, g))}
