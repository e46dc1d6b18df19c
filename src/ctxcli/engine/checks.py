"""The checks every gate table is built from (docs/gates.md).

Each input kind has one ordered gate table: stored evidence (:data:`ctxcli.engine.gates.GATES`),
tool results (:data:`ctxcli.agents.tool_results.TOOL_GATES`), memory records
(:data:`ctxcli.agents.memory.MEMORY_GATES`) and working-state messages
(:data:`ctxcli.agents.memory.MESSAGE_GATES`). Their rows call the predicates below, so a
boundary (``>`` or ``>=``, an empty list allowing or denying) is written once for every kind.

Defaults, one per check:

- tenant, subject: the input's own label must equal the request's; nothing else passes.
- scope: every scope the input names must be among the subject's; none named: nothing missing.
- purpose: the request's purpose must be among the allowed ones. Stored objects deny by default
  (an object without ``allowed_purposes`` serves no purpose: the manifest grants access). An input
  the caller hands in (tool result, memory record) with empty ``purposes`` serves any purpose: its
  labels can narrow what the request may see, never widen it — the request's own scopes, tenant
  and subject still apply, and a tool result naming an object the subject may not see is
  withheld like that object.
- knowledge time: known when observed (written) *at or before* the cutoff; one microsecond after
  is not yet known.
- freshness: fresh while the age is *at most* ``max_age``; no ``max_age``: never stale.
- validity, TTL: in force from its start (inclusive) to its end (exclusive): ``end <= at`` is over.
- duplicate: the second of two equal inputs is dropped, the first kept.
- budget: an item fits while its tokens are *at most* what is left.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Collection


@dataclass
class Rejection:
    gate: str
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)


def other_label(own: str, asked: str) -> bool:
    """Tenant and subject: the input belongs to another one than the request's."""
    return own != asked


def missing_scopes(needs: Collection[str], has: Collection[str]) -> list[str]:
    """The scopes ``needs`` names that ``has`` lacks, sorted (empty: none missing)."""
    return sorted(set(needs) - set(has))


def purpose_denied(allowed: Collection[str], purpose: str, *, empty_allows: bool) -> bool:
    """Whether ``purpose`` may not be served. ``empty_allows``: an empty list serves any purpose
    (caller-supplied inputs: their labels only narrow); else it serves none (stored objects)."""
    if not allowed:
        return not empty_allows
    return purpose not in allowed


def after(at: Any, cutoff: Any) -> bool:
    """Knowledge time and not-yet-valid: ``at`` lies after ``cutoff`` (equal is not after)."""
    return at > cutoff


def ended(end: Any, at: Any) -> bool:
    """Validity's end and a TTL: over at ``at`` when ``end <= at`` (None: never ends)."""
    return end is not None and end <= at


def too_old(observed: Any, at: Any, max_age: Any) -> bool:
    """Freshness: older than ``max_age`` at ``at`` (equal is still fresh; None: never stale)."""
    return max_age is not None and at - observed > max_age


def over_budget(tokens: int, left: int) -> bool:
    """Budget: ``tokens`` do not fit in ``left`` (equal fits)."""
    return tokens > left


@dataclass(frozen=True)
class InputGate:
    """One row of a caller-supplied input's gate table (tool results, memory, messages)."""

    name: str                 # as recorded in omissions (a row may reject under another gate: ``rejects_as``)
    check: Callable[[Any, Any], Rejection | None] | None   # None: decided while packing
    withholding: bool         # a rejection here withholds the input: an opaque keyed reference only
    rejects: str              # docs/gates.md: when it rejects
    default: str              # docs/gates.md: its default (what passes when a label is absent)


def run_table(table: tuple[InputGate, ...], item: Any, ctx: Any) -> tuple[InputGate, Rejection] | None:
    """The first row of ``table`` that rejects ``item``, with its rejection (None: all passed)."""
    for row in table:
        if row.check is None:
            continue
        r = row.check(item, ctx)
        if r is not None:
            return row, r
    return None


def markdown(table: tuple[InputGate, ...]) -> str:
    """The table as docs/gates.md shows it (tests/test_gates_table.py holds the page to it)."""
    lines = ["| # | gate | withholds | rejects when | default |", "|---|---|---|---|---|"]
    for i, g in enumerate(table, 1):
        lines.append(f"| {i} | {g.name} | {'yes' if g.withholding else 'no'} | {g.rejects} | {g.default} |")
    return "\n".join(lines)
