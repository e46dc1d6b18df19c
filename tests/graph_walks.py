"""Walk requests over every one- and two-hop chain of a store's graph, for the tests that hold
two walks to the same rows (DuckDB against PostgreSQL; the hop walk against the measured
one-statement walk)."""

from __future__ import annotations

from typing import Callable


def chain_walks(d, tenant: str) -> tuple[list[tuple], list[str], list[tuple], Callable[[float, bool], list[tuple]]]:
    """``(edges, seeds, starts, steps)`` of ``tenant``'s graph in the store ``d``: its distinct
    (source type, relation type, target type) edges, its entity keys, one path template per one-
    and two-hop chain of edges (``starts``), and ``steps(least_confidence, inferred)`` the
    templates' steps."""
    edges = d.con.execute("SELECT DISTINCT src_type, rel_type, dst_type FROM relations WHERE tenant_id = ? "
                          "ORDER BY ALL", [tenant]).fetchall()
    seeds = [e for (e,) in d.con.execute("SELECT DISTINCT entity_key FROM entities WHERE tenant_id = ? "
                                         "ORDER BY 1", [tenant]).fetchall()]
    chains = [[e] for e in edges] + [[a, b] for a in edges for b in edges if a[2] == b[0]]
    starts = [(f"t{i}", ch[0][0]) for i, ch in enumerate(chains)]

    def steps(least: float, inferred: bool) -> list[tuple]:
        return [(f"t{i}", j, e[1], e[2], least, inferred) for i, ch in enumerate(chains) for j, e in enumerate(ch, 1)]

    return edges, seeds, starts, steps
