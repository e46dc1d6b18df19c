"""Stored injection verdicts (issue 53 item 4), before/after: the bundled store loaded into a
temporary folder (load time printed), then ``ctx investigate C-102`` in-process REPEAT times with
the detector's in-process memo cleared before each run (so each run pays the detector as a
fresh process does; a warm ``ctx serve`` keeps the memo), p50 and min of the run's ``total`` and
``gates`` timings (ms), the detector scans per run and the verdicts the load stored.

    python benchmarks/verdicts_ab.py [REPEAT]

Run it with each build on ``PYTHONPATH`` (e.g. ``PYTHONPATH=/other/tree/src``), alternately.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(reps: int) -> dict:
    os.environ["CTX_ROOT"] = str(REPO)
    os.environ.setdefault("CTX_SECRET", "verdicts-ab-fixed-secret")
    from ctxcli import api
    from ctxcli.engine import injection_adapter as ia
    from ctxcli.load.build import build_store

    scans = [0]
    real = ia._scan

    def counting(fields):
        scans[0] += 1
        return real(fields)

    ia._scan = counting
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ctx.duckdb"
        t0 = time.perf_counter()
        build_store(REPO / "manifests", db, root=REPO)
        load_s = time.perf_counter() - t0
        import duckdb

        con = duckdb.connect(str(db), read_only=True)
        try:        # (the load scans in its worker processes: counted here only as stored rows)
            stored = con.execute("SELECT count(*) FROM injection_verdicts").fetchone()[0]
        except duckdb.Error:
            stored = 0          # a build without stored verdicts
        finally:
            con.close()
        case = str(REPO / "examples" / "cases" / "C-102.yaml")
        api.investigate(api.InvestigateOptions(case=case, db=db))      # imports, encodings, detector set-up
        tot, gates, per = [], [], []
        for _ in range(reps):
            ia.memo_clear()
            scans[0] = 0
            r = api.investigate(api.InvestigateOptions(case=case, db=db))
            tot.append(r.timings["total"] * 1000)
            gates.append(r.timings.get("gates", 0) * 1000)
            per.append(scans[0])
    return {"ctxcli": str(Path(ia.__file__).parents[2]), "load_s": round(load_s, 2), "stored_verdicts": stored,
            "investigate_ms": {"p50": round(statistics.median(tot), 1), "min": round(min(tot), 1)},
            "gates_ms": {"p50": round(statistics.median(gates), 1), "min": round(min(gates), 1)},
            "scans_per_run": sorted(set(per))}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)))
