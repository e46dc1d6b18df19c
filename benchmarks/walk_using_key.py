#!/usr/bin/env python3
"""The graph walk on a DuckDB store as one ``WITH RECURSIVE … USING KEY`` statement against the
hop-by-hop walk (issue 51 item 7), interleaved call by call in one process.

    python benchmarks/walk_using_key.py --corpus CORPUS_DIR --db STORE [--cases 20] [--reps 5] \\
        [--all-templates] [--threads 2]

Runs ``--cases`` planted investigations of a corpus made by gen_corpus.py against a store
loaded from it and records every ``walk`` call they make (arguments and result), then replays
each call through ``DuckDBStore.walk`` (the hop walk: seeds, one edge probe per hop, entity
keys) and through :func:`walk_using_key` (one statement), alternating call by call. Every
replay of both forms must give the recorded rows (template id, depth, entity path, relation
ids, key of the last entity), in order; so must all forms agree at fan-out caps 1 and 2, at
max_hops 1, and with fewer readable sources or authorised access rows. With
``--all-templates`` the same walks run again with every path template of the playbook (the
planted plans walk two one-hop templates; this adds the two-hop case -> ruleset ->
document_type). The same statement without the key (a plain recursive CTE, UNION ALL) is
timed beside it. Prints JSON: p50 / p95 of CPU time (``time.process_time``, both DuckDB
threads) and wall time per call, and each statement's ratio over the hop walk; the order of
the forms rotates call by call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# The walk as one statement: the seeds (a MATERIALIZED probe of entities(entity_key), then the
# tenant and readable-source filter on its few rows, as _SEEDS_SQL), then per hop the
# template's step, the authorised edges valid at as_of (_EDGES_SQL's predicates), the cycle
# check, the confidence and inferred-edge rules, and the fan-out cap per (template, path)
# ordered by (target, relations, relation id) as QUALIFY; each walk row keyed by (template,
# path, relations). The last edge's tenant, access id and validity come back with each row,
# so Python can check them again.
_WALK_KEY = """
WITH RECURSIVE
steps(tid, step, edge, to_type, least, inferred) AS (VALUES {steps}),
starts(tid, start_type) AS (VALUES {starts}),
seed AS MATERIALIZED (SELECT entity_id, entity_type, tenant_id, source_id FROM entities
                      WHERE entity_key IN ({keys})),
walk(tid, depth, node, path, rels, ten, aid, vf, vt, evf, evt, conf, method) USING KEY (tid, path, rels) AS (
  SELECT s.tid, 0, e.entity_id, [e.entity_id], []::VARCHAR[], e.tenant_id, NULL::INTEGER, NULL::BIGINT,
         NULL::BIGINT, NULL::BIGINT, NULL::BIGINT, NULL::DOUBLE, e.source_id
  FROM seed e JOIN starts s ON s.start_type = e.entity_type
  WHERE e.tenant_id = $tenant AND list_contains(CAST($readable AS VARCHAR[]), e.source_id)
  UNION
  SELECT w.tid, w.depth + 1, r.dst, list_append(w.path, r.dst), list_append(w.rels, r.relation_id),
         r.tenant_id, r.access_id, r.valid_from_us, r.valid_to_us, r.ev_valid_from_us, r.ev_valid_to_us,
         r.confidence, r.extraction_method
  FROM walk w
  JOIN steps st ON st.tid = w.tid AND st.step = w.depth + 1
  JOIN relations r ON r.src = w.node AND r.rel_type = st.edge AND r.dst_type = st.to_type
  WHERE w.depth < {max_hops} AND r.tenant_id = $tenant AND r.dst IS NOT NULL
    AND list_contains(CAST($access_ok AS INTEGER[]), r.access_id)
    AND {links}
    AND NOT list_contains(w.path, r.dst)
    AND r.confidence >= st.least AND (st.inferred OR r.extraction_method IS NULL)
  QUALIFY row_number() OVER (PARTITION BY w.tid, w.path ORDER BY r.dst, w.rels, r.relation_id) <= {fanout}
)
SELECT w.tid, w.depth, w.path, w.rels, e.entity_key, w.ten, w.aid, w.vf, w.vt, w.evf, w.evt, w.conf, w.method
FROM walk w JOIN entities e ON e.entity_id = w.node
"""


def walk_using_key(st, *, steps, starts, seeds, tenant, max_hops, as_of_us, fanout, readable, access_ok,
                   known_us: int | None = None, using_key: bool = True) -> list[tuple]:
    """DuckDBStore.walk's rows from one statement (_WALK_KEY; ``using_key=False``: the same
    statement as a plain recursive CTE, UNION ALL without a key)."""
    from ctxcli.store.access import links_at
    from ctxcli.store.duckdb_bm25 import Literals
    from ctxcli.store.duckdb_store import in_list

    if not seeds or not starts:
        return []
    lit = Literals()
    step_of = {(tid, step): (edge, to, float(least), bool(inferred)) for tid, step, edge, to, least, inferred in steps}
    if not step_of:
        step_of = {("", -1): ("", "", 0.0, False)}     # VALUES needs a row; step -1 is never taken
    steps_sql = ", ".join(f"({lit.str(t)}, {int(s)}, {lit.str(e)}, {lit.str(to)}, '{least!r}'::DOUBLE, {str(inf).lower()})"
                          for (t, s), (e, to, least, inf) in step_of.items())
    starts_sql = ", ".join(f"({lit.str(t)}, {lit.str(s)})" for t, s in starts)
    known = as_of_us if known_us is None else known_us
    params: dict[str, Any] = {"tenant": tenant, "readable": sorted(set(readable)), "access_ok": sorted(set(access_ok)),
                              "asof": as_of_us, "known": known}
    sql = _WALK_KEY.format(steps=steps_sql, starts=starts_sql, keys=in_list(list(seeds), "k", params),
                           max_hops=int(max_hops), fanout=int(fanout), links=links_at("r."))
    if not using_key:
        sql = sql.replace(" USING KEY (tid, path, rels)", "").replace("\n  UNION\n", "\n  UNION ALL\n")
    rows = lit.run(st.con, lit.inline(sql, params)).fetchall()
    out = [(tid, d, list(path), list(rels), key) for tid, d, path, rels, key, *_ in rows]
    out.sort(key=lambda r: (r[0], r[1], r[2], r[3]))
    return out


def record(corpus: Path, db: Path, n: int) -> list[tuple]:
    """``(kwargs, rows)`` of every hop walk while the corpus's first ``n`` planted cases are
    investigated (the recorder of benchmarks/bm25_graph.py)."""
    return [(kw, r) for _, _, kw, r in _bm25_graph().record(corpus, db, n, methods=("walk",))]


def _bm25_graph():  # noqa: ANN202
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bm25_graph

    return bm25_graph


def all_templates(corpus: Path, calls: list[tuple]) -> list[tuple]:
    """The recorded walks again with every path template of the corpus's playbook (the planted
    plans walk two one-hop templates; this adds the two-hop case -> ruleset -> document_type),
    their results taken from the hop walk when replayed."""
    import yaml

    pb = yaml.safe_load((corpus / "manifests" / "playbooks" / "motor-claim-review.yaml").read_text())
    tmpl = pb["path_templates"]
    steps = [(t["id"], i, s["edge"], s["to"], t.get("min_confidence") or 0.0, t.get("inferred", True))
             for t in tmpl for i, s in enumerate(t["steps"], 1)]
    starts = [(t["id"], t["start"]) for t in tmpl]
    return [({**kw, "steps": steps, "starts": starts}, None) for kw, _ in calls]


def replay(db: Path, calls: list[tuple], reps: int, threads: int = 2) -> dict:
    import duckdb

    from ctxcli.store.duckdb_store import DuckDBStore

    con = duckdb.connect(str(db), read_only=True, config={"threads": str(threads)})
    st = DuckDBStore(con)
    forms = (("hop walk", st.walk),
             ("one statement, USING KEY", lambda **kw: walk_using_key(st, **kw)),
             ("one statement, UNION ALL (no key)", lambda **kw: walk_using_key(st, using_key=False, **kw)))
    calls = [(kw, st.walk(**kw) if want is None else want) for kw, want in calls]
    checked = 0
    for kw, want in calls:
        for label, fn in forms:
            if fn(**kw) != want:
                raise SystemExit(f"walk: {label} differs from the recorded result")
        for v in ({"fanout": 1}, {"fanout": 2}, {"max_hops": 1}, {"readable": kw["readable"][1:]},
                  {"access_ok": kw["access_ok"][::2]}):
            ref = forms[0][1](**{**kw, **v})
            for label, fn in forms[1:]:
                if fn(**{**kw, **v}) != ref:
                    raise SystemExit(f"walk: {label} differs from the hop walk at {v}")
        checked += 6
    cpu: dict = {}
    wall: dict = {}
    for i in range(reps):
        for j, (kw, _) in enumerate(calls):
            k = (i + j) % len(forms)
            for label, fn in forms[k:] + forms[:k]:        # each form first in turn
                c0, w0 = time.process_time(), time.perf_counter()
                fn(**kw)
                cpu.setdefault(label, []).append(time.process_time() - c0)
                wall.setdefault(label, []).append(time.perf_counter() - w0)
    con.close()
    base = forms[0][0]
    out: dict = {"identical_results_checked": checked, "rows_per_call": sorted(len(r) for _, r in calls)}
    for label, _ in forms:
        out[label] = _bm25_graph().stats(cpu[label], wall[label], digits=3)
        if label != base:
            out[label]["cpu_p50_ratio_over_hop_walk"] = round(statistics.median(cpu[label])
                                                              / statistics.median(cpu[base]), 3)
            out[label]["wall_p50_ratio_over_hop_walk"] = round(statistics.median(wall[label])
                                                               / statistics.median(wall[base]), 3)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--cases", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads (ctx opens a store with 2)")
    ap.add_argument("--all-templates", action="store_true",
                    help="also replay the walks with every template of the playbook (two hops)")
    args = ap.parse_args(argv)
    calls = record(args.corpus, args.db, args.cases)
    res = {"db": str(args.db), "cases": args.cases, "reps": args.reps, "walk_calls": len(calls),
           "threads": args.threads,
           "planted walks": replay(args.db, calls, args.reps, args.threads)}
    if args.all_templates:
        res["every template of the playbook"] = replay(args.db, all_templates(args.corpus, calls), args.reps,
                                                         args.threads)
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
