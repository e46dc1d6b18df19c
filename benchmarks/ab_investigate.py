"""A/B of two ctx builds on one machine at one moment: in-process `api.investigate` over a
generated corpus's planted cases, p50/p95 of the channel and total timings (ms).

    python benchmarks/ab_investigate.py CORPUS_DIR STORE REPEAT

Run it with each build's venv on a store that build loaded, alternately, and compare ratios.
"""
import json, statistics, sys
from pathlib import Path
from ctxcli import api
corpus, db, reps = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
planted = [json.loads(l) for l in open(corpus / "planted.jsonl")]
cases, pbs = corpus / "examples" / "cases", corpus / "manifests" / "playbooks"
def run(p):
    return api.investigate(api.InvestigateOptions(case=str(cases / f"{p['case_id']}.yaml"), db=db, cases_dir=cases, playbooks_dir=pbs))
run(planted[0])
T = {}
for _ in range(reps):
    for p in planted:
        r = run(p)
        for k in ("channel.fulltext", "channel.structured", "channel.graph", "retrieve", "total"):
            T.setdefault(k, []).append(r.timings.get(k, 0) * 1000)
print(json.dumps({k: {"p50": round(statistics.median(v), 1), "p95": round(sorted(v)[int(0.95 * (len(v) - 1))], 1)} for k, v in T.items()}))
