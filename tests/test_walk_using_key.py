"""The graph walk as one ``WITH RECURSIVE … USING KEY`` statement (benchmarks/walk_using_key.py,
issue 51 item 7) is measured, not shipped: this keeps the measured statement giving the hop
walk's rows, so that the figures in benchmarks/results/performance-history.md can be taken
again."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from .graph_walks import chain_walks

REPO = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("walk_using_key", REPO / "benchmarks" / "walk_using_key.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_measured_statement_walks_as_the_hop_walk(store):
    """Every one- and two-hop chain of the bundled graph, from every entity, at two valid
    times, two fan-out caps, the confidence and inferred-edge rules and two access sets: the
    same rows in the same order (the benchmark checks the form without the key too)."""
    from ctxcli.store import open_store

    bench = _bench()
    d = open_store(store)
    try:
        access = [r[0] for r in d.relation_access()]
        sources = sorted({r[0] for r in d.source_access()})
        n = 0
        for tenant in ("tenant-demo", "tenant-shop"):
            edges, seeds, starts, steps_of = chain_walks(d, tenant)
            for least, inferred in ((0.0, True), (0.99, True), (0.0, False)):
                steps = steps_of(least, inferred)
                for as_of in (1_780_000_000_000_000, 2**62):
                    for hops, fanout in ((2, 1), (2, 50)):
                        for acc, readable in ((access, sources), (access[::2], sources[1:])):
                            kw = dict(steps=steps, starts=starts, seeds=seeds, tenant=tenant, max_hops=hops,
                                      as_of_us=as_of, fanout=fanout, readable=readable, access_ok=acc)
                            want = d.walk(**kw)
                            assert bench.walk_using_key(d, **kw) == want, (tenant, least, inferred, as_of, hops, fanout)
                            n += len(want)
        assert n > 100
        assert bench.walk_using_key(d, using_key=False, **kw) == want
    finally:
        d.close()
