#!/usr/bin/env python3
"""The BM25 and graph steps on a DuckDB store, before and after issue 36's fourth pass,
interleaved in one process (benchmarks/results/performance-history.md, "BM25 and graph steps,
fourth pass").

    python benchmarks/bm25_graph.py --corpus /tmp/ctx-bench/10k --db /tmp/ctx-bench/10k.duckdb \\
        [--cases 20] [--reps 3] [--tantivy]

Runs ``--cases`` planted investigations of a corpus made by gen_corpus.py against a store
loaded from it, records every ``bm25`` and ``graph_hits`` call they make (arguments and
results), then replays them: each BM25 call through the SQL form (``bm25_sql``, the build
before) and the term lists (``bm25``), each graph_hits call through the previous two
statements (object_keys, then objects by doc id: kept here as the reference) and the one
subject_docs probe, alternating call by call. Every replay must give the recorded result
(gated) and both forms the same result ungated and at limit 3,000. Prints JSON: p50 / p95 of
CPU time (``time.process_time``, both DuckDB threads) and wall time per call, and their ratios.
With ``--tantivy`` (``pip install tantivy``; never a ctx dependency) each call's queries also
run one by one through benchmarks/tantivy_ref.py.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path


def record(corpus: Path, db: Path, n: int, methods: tuple[str, ...] = ("bm25", "graph_hits")) -> list[tuple]:
    """``(method, args, kwargs, result)`` of every call of the store's ``methods`` while the
    corpus's first ``n`` planted cases are investigated."""
    from ctxcli import api
    from ctxcli.store.duckdb_store import DuckDBStore

    calls: list[tuple] = []
    saved = {}
    for name in methods:
        orig = saved[name] = getattr(DuckDBStore, name)

        def wrap(self, *a, _o=orig, _n=name, **kw):
            r = _o(self, *a, **kw)
            calls.append((_n, a, kw, r))
            return r
        setattr(DuckDBStore, name, wrap)
    try:
        planted = [json.loads(x) for x in (corpus / "planted.jsonl").read_text().splitlines()][:n]
        cases, pbs = corpus / "examples" / "cases", corpus / "manifests" / "playbooks"
        for p in planted:
            api.investigate(api.InvestigateOptions(case=str(cases / f"{p['case_id']}.yaml"), db=db,
                                                   cases_dir=cases, playbooks_dir=pbs))
    finally:
        for name, orig in saved.items():
            setattr(DuckDBStore, name, orig)
    return calls


def graph_hits_before(st, keys, *, tenant, readable, as_of_us):
    """graph_hits as the build before ran it: the object_keys probe, then the objects by doc id."""
    from ctxcli.store import duckdb_store as D
    from ctxcli.store.base import Found

    params: dict = {"tenant": tenant}
    pairs = sorted({(key, doc) for key, _, kind, doc in D._same_tenant(st.con.execute(
        D._KEYS_SQL.format(keys=D.in_list(keys, "e", params)), params).fetchall(), tenant, 1) if kind == "s"})
    if not pairs:
        return Found([], [])
    about, held = st._about(sorted({d for _, d in pairs}), tenant, readable, as_of_us)
    rows = {r[0]: r for r in about}
    asked, acc = set(keys), {}
    for subject, sup, _, src, scopes, purposes, n in held:
        if subject in asked:
            k = (subject, tuple(sup or ()), src, tuple(scopes or ()), tuple(purposes or ()))
            acc[k] = acc.get(k, 0) + int(n)
    return Found([(key, doc, rows[doc][2], rows[doc][5]) for key, doc in pairs if doc in rows],
                 sorted(((k, list(sup), src, list(sc), list(pu), n) for (k, sup, src, sc, pu), n in acc.items()),
                        key=repr))


def stats(cpu: list[float], wall: list[float], digits: int = 2) -> dict:
    q = lambda v, p: round(sorted(v)[min(len(v) - 1, int(len(v) * p))] * 1000, digits)  # noqa: E731
    return {"cpu_p50_ms": round(statistics.median(cpu) * 1000, digits), "cpu_p95_ms": q(cpu, 0.95),
            "wall_p50_ms": round(statistics.median(wall) * 1000, digits), "wall_p95_ms": q(wall, 0.95),
            "n": len(cpu)}


def replay(db: Path, calls: list[tuple], reps: int) -> dict:
    import duckdb

    from ctxcli.store.duckdb_store import DuckDBStore

    con = duckdb.connect(str(db), read_only=True, config={"threads": "2"})
    st = DuckDBStore(con)
    forms = {"bm25": (("sql (before)", st.bm25_sql), ("term lists (after)", st.bm25)),
             "graph_hits": (("keys + objects (before)", lambda *a, **k: graph_hits_before(st, *a, **k)),
                            ("subject_docs (after)", st.graph_hits))}
    checked = 0
    for name, a, kw, want in calls:
        for _, fn in forms[name]:
            if fn(*a, **kw) != want:
                raise SystemExit(f"{name}: a replay differs from the recorded result")
        variants = [{**kw, "readable": None}] + ([{**kw, "readable": None, "limit": 3000}] if name == "bm25" else [])
        for v in variants:
            if forms[name][0][1](*a, **v) != forms[name][1][1](*a, **v):
                raise SystemExit(f"{name}: the two forms differ")
        checked += 1 + len(variants)
    cpu: dict = {}
    wall: dict = {}
    for _ in range(reps):
        for name, a, kw, _ in calls:
            for label, fn in forms[name]:
                c0, w0 = time.process_time(), time.perf_counter()
                fn(*a, **kw)
                cpu.setdefault((name, label), []).append(time.process_time() - c0)
                wall.setdefault((name, label), []).append(time.perf_counter() - w0)
    con.close()
    out: dict = {"identical_results_checked": checked}
    for name, pair in forms.items():
        (b, _), (f, _) = pair
        if (name, b) not in cpu:
            continue
        out[name] = {b: stats(cpu[(name, b)], wall[(name, b)]), f: stats(cpu[(name, f)], wall[(name, f)]),
                     "cpu_p50_ratio_after_over_before": round(statistics.median(cpu[(name, f)])
                                                              / statistics.median(cpu[(name, b)]), 3)}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--tantivy", action="store_true")
    args = ap.parse_args(argv)
    calls = record(args.corpus, args.db, args.cases)
    res = {"db": str(args.db), "cases": args.cases, "reps": args.reps,
           "calls": {k: sum(c[0] == k for c in calls) for k in ("bm25", "graph_hits")},
           **replay(args.db, calls, args.reps)}
    if args.tantivy:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import tantivy_ref

        qs = [{"tenant": kw["tenant"], "evidence_type": e, "terms": list(t), "limit": kw["limit"],
               "readable": kw["readable"], "as_of_us": kw["as_of_us"]}
              for name, a, kw, _ in calls if name == "bm25" for e, t in a[0] if t]
        res["tantivy_side_by_side"] = tantivy_ref.side_by_side(args.db, qs)
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
