#!/usr/bin/env python3
"""Where one warm in-process investigation's time goes (issue 36's bounding profiles).

    python benchmarks/profile_investigate.py --root CORPUS_DIR --db STORE [--cases 20]

CORPUS_DIR is a gen_corpus.py output (its planted.jsonl names the cases). One untimed
investigation first (imports, the encoding, the detector's patterns, the OS page cache), then
``--cases`` planted investigations under cProfile. Prints JSON: per investigation (mean over
the cases) the wall time, the pipeline's own stage timings, the time inside each store method
(cumulative, with its calls per investigation), the time in DuckDB's ``execute``/``fetch*``
calls altogether (the SQL engine's share), and the 25 ctx functions with the largest own time.
cProfile inflates Python-heavy parts (each Python call pays the profiler), so the stage
timings of the same runs are printed beside it; read the store rows as "at most".
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, required=True, help="the corpus folder (gen_corpus.py output)")
    ap.add_argument("--db", required=True, help="the store (file or postgresql:// address)")
    ap.add_argument("--cases", type=int, default=20)
    a = ap.parse_args(argv)

    from ctxcli import api

    root = a.root.resolve()
    cases_dir, pbs = root / "examples" / "cases", root / "manifests" / "playbooks"
    ids = [json.loads(x)["case_id"] for x in (root / "planted.jsonl").read_text().splitlines() if x][:a.cases]
    db = a.db if a.db.startswith("postgresql://") else Path(a.db)

    def one(cid: str):
        return api.investigate(api.InvestigateOptions(case=str(cases_dir / f"{cid}.yaml"), db=db,
                                                      cases_dir=cases_dir, playbooks_dir=pbs))

    one(ids[0])
    n = len(ids)
    # pass 1, no profiler: the pipeline's stage timings and each store method's own clock
    if isinstance(db, Path):
        from ctxcli.store.duckdb_store import DuckDBStore as Store
    else:
        from ctxcli.store.pg.reader import PgStore as Store  # type: ignore[no-redef]
    spent: dict[str, list[float]] = {}
    saved = {}
    for name in [m for m in vars(Store) if not m.startswith("_") and callable(getattr(Store, m))]:
        orig = saved[name] = getattr(Store, name)

        def timed(self, *args, _o=orig, _n=name, **kw):
            t = time.perf_counter()
            try:
                return _o(self, *args, **kw)
            finally:
                spent.setdefault(_n, []).append(time.perf_counter() - t)
        setattr(Store, name, timed)
    stages: dict[str, float] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        for cid in ids:
            res = one(cid)
            for k, v in res.timings.items():
                if not k.startswith("query."):
                    stages[k] = stages.get(k, 0.0) + v
    finally:
        for name, orig in saved.items():
            setattr(Store, name, orig)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    # pass 2, under cProfile: ctx's functions with the largest own time (inflated by the profiler)
    prof = cProfile.Profile()
    prof.enable()
    for cid in ids:
        one(cid)
    prof.disable()
    own: list[tuple[float, str, int]] = []
    other: list[tuple[float, str, int]] = []
    for (file, line, fn), (_cc, nc, tt, _ct, _callers) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
        if "/ctxcli/" in file:
            own.append((tt, f"{file.split('/ctxcli/')[1]}:{line}:{fn}", nc))
        else:
            other.append((tt, f"{file.rsplit('site-packages/', 1)[-1]}:{line}:{fn}", nc))
    own.sort(reverse=True)
    other.sort(reverse=True)
    store_ms = {k: {"calls_per_investigation": round(len(v) / n, 1), "ms": round(sum(v) / n * 1000, 2)}
                for k, v in sorted(spent.items(), key=lambda kv: -sum(kv[1]))}
    out = {
        "cases": n,
        "store": type(db).__name__ if not isinstance(db, Path) else "duckdb",
        "wall_ms_per_investigation": round(wall / n * 1000, 1),
        "cpu_ms_per_investigation": round(cpu / n * 1000, 1),
        "stage_ms_per_investigation": {k: round(v / n * 1000, 2) for k, v in sorted(stages.items())},
        "store_methods_ms_per_investigation": store_ms,
        "store_methods_total_ms": round(sum(sum(v) for v in spent.values()) / n * 1000, 2),
        "ctx_own_time_top_profiled": [{"fn": f, "ms": round(t / n * 1000, 2), "calls": round(c / n, 1)}
                                      for t, f, c in own[:25]],
        "outside_ctx_own_time_top_profiled": [{"fn": f, "ms": round(t / n * 1000, 2), "calls": round(c / n, 1)}
                                              for t, f, c in other[:15]],
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
