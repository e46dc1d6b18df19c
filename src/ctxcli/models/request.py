"""The limits of an investigation request, checked in one place.

``ctx investigate`` checks its flags with :func:`request_problem`, and ``ctx replay`` checks
the request recorded in a pack with the same function, so a pack cannot ask a rebuild for
anything the command line would refuse (``max_rounds: 100``, a budget of 10**9, a subject
id with a newline in it).
"""

from __future__ import annotations

from typing import Any

from .manifest import IDENT_RE, SCOPE_RE

BUDGET_MIN, BUDGET_MAX = 64, 2_000_000
MAX_ROUNDS_MIN, MAX_ROUNDS_MAX = 1, 5
STRATEGIES = ("full", "topk", "governed", "dynamic", "hybrid")

# field -> the flag that sets it on the command line
FLAGS = {"subject": "--subject", "scopes": "--scope", "budget": "--budget", "max_rounds": "--max-rounds",
         "strategy": "--strategy"}


def _int_in(v: Any, lo: int, hi: int) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def request_problem(*, subject: Any = None, scopes: Any = None, budget: Any = None, max_rounds: Any = None,
                    strategy: Any = None) -> tuple[str, str] | None:
    """The first value out of bounds as ``(field, message)``, or None. ``None`` arguments are
    not given and not checked."""
    if subject is not None and not (isinstance(subject, str) and IDENT_RE.fullmatch(subject)):
        return "subject", f"{subject!r} is not a valid id"
    if scopes is not None:
        if not isinstance(scopes, list):
            return "scopes", f"{scopes!r} is not a list of scopes"
        for sc in scopes:
            if not (isinstance(sc, str) and SCOPE_RE.fullmatch(sc)):
                return "scopes", f"{sc!r} is not a valid scope"
    if budget is not None and not _int_in(budget, BUDGET_MIN, BUDGET_MAX):
        return "budget", f"{budget!r} is not a whole number of tokens from {BUDGET_MIN} to {BUDGET_MAX}"
    if max_rounds is not None and not _int_in(max_rounds, MAX_ROUNDS_MIN, MAX_ROUNDS_MAX):
        return "max_rounds", f"{max_rounds!r} is not a whole number from {MAX_ROUNDS_MIN} to {MAX_ROUNDS_MAX}"
    if strategy is not None and strategy not in STRATEGIES:
        return "strategy", f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})"
    return None
