"""One agent step through MCP (issue 36): ``build_context`` calls to a warm ``ctx serve`` (stdio),
timed in this process around the MCP SDK's own client call (request out, JSON-RPC over the
pipe, the server's tool, the structured result back and parsed).

    python benchmarks/agent_step.py --root CORPUS_DIR --db STORE [--calls 60] [--warmup 5]
    python benchmarks/agent_step.py --root . --db .ctx/ctx.duckdb --cases C-102   # the bundled data

CORPUS_DIR is a ctx project (``benchmarks/gen_corpus.py`` output, or this repository): its
``examples/cases`` hold the cases. Each step asks for a pair of the case playbook's evidence
types (cycling through the playbook's types, so the steps differ) over the cases in turn.
The server is started once, before the clock; ``--warmup`` steps are made and not counted
(the first step of a fresh server also builds the encoding and the detector's patterns: it is
reported apart as ``first_step_ms``). Prints one JSON document: p50 / p95 / min / max in ms,
and the server's CPU per timed step (``server_cpu_ms_per_step``: its user + system time over
the timed steps, from /proc, divided by their number; 0 where /proc is missing).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _steps(root: Path, cases: list[str], per_step: int) -> list[tuple[str, list[str]]]:
    """(case id, evidence types) for each step, in order: per case, its playbook's types taken
    ``per_step`` at a time."""
    from ctxcli import api
    from ctxcli.models.case import CaseFile
    from ctxcli.util.yamlio import read_yaml

    out: list[tuple[str, list[str]]] = []
    for cid in cases:
        f = root / "examples" / "cases" / f"{cid}.yaml"
        case = CaseFile.model_validate(read_yaml(f, display=f.name))
        pb, _ = api.read_playbook(case.playbook, root / "manifests" / "playbooks")
        types = [e.type for e in pb.evidence_types]
        for i in range(0, len(types), per_step):
            out.append((cid, types[i:i + per_step]))
    return out


def _case_ids(root: Path, limit: int) -> list[str]:
    planted = root / "planted.jsonl"
    if planted.exists():
        ids = [json.loads(line)["case_id"] for line in planted.read_text(encoding="utf-8").splitlines() if line]
    else:
        ids = sorted(p.stem for p in (root / "examples" / "cases").glob("*.yaml"))
    return ids[:limit]


def _children_cpu_s() -> float:
    """User + system CPU seconds of this process's live children (the server), from /proc
    (Linux; 0.0 elsewhere)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for d in Path("/proc").glob("[0-9]*"):
        try:
            f = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(f[1]) == os.getpid():
            total += int(f[11]) + int(f[12])
    return total / tick


def _pct(v: list[float], q: float) -> float:
    s = sorted(v)
    return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, required=True, help="the ctx project (corpus) folder")
    ap.add_argument("--db", type=Path, required=True, help="the store file")
    ap.add_argument("--cases", nargs="*", help="case ids (default: planted.jsonl's, else every case)")
    ap.add_argument("--max-cases", type=int, default=10)
    ap.add_argument("--types-per-step", type=int, default=2)
    ap.add_argument("--calls", type=int, default=60, help="timed steps")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    a = ap.parse_args(argv)

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    root, db = a.root.resolve(), a.db.resolve()
    steps = _steps(root, a.cases or _case_ids(root, a.max_cases), a.types_per_step)
    runs = Path(tempfile.mkdtemp(prefix="ctx-agent-step-"))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("CTX_")},
           "CTX_ROOT": str(root), "CTX_DB": str(db), "NO_COLOR": "1"}
    server = StdioServerParameters(command=sys.executable, args=["-m", "ctxcli.cli.main", "serve", "--runs", str(runs)],
                                   env=env, cwd=str(root))

    async def session() -> dict:
        times, first, items, errors = [], None, [], 0
        t_open = time.perf_counter()
        async with Client(server, read_timeout_seconds=300) as c:
            opened = time.perf_counter() - t_open
            cpu0 = None
            for i in range(a.warmup + a.calls):
                if i == a.warmup:
                    cpu0 = _children_cpu_s()
                cid, types = steps[i % len(steps)]
                t0 = time.perf_counter()
                res = await c.call_tool("build_context", {"case": cid, "types": types})
                dt = (time.perf_counter() - t0) * 1000
                if res.is_error:
                    errors += 1
                    print(f"error on {cid} {types}: {res.content[0].text}", file=sys.stderr)
                if first is None:
                    first = dt
                if i >= a.warmup:
                    times.append(dt)
                    sc = res.structured_content or {}
                    items.append(len(sc.get("result", sc).get("items", [])))
            server_cpu = _children_cpu_s() - cpu0
        return {"server_cpu_ms_per_step": round(server_cpu * 1000 / max(1, len(times)), 1),
                "session_open_ms": round(opened * 1000, 1), "first_step_ms": round(first, 1), "steps": len(times),
                "distinct_steps": len(steps), "errors": errors, "items_per_step_p50": statistics.median(items),
                "p50_ms": round(statistics.median(times), 1), "p95_ms": round(_pct(times, 0.95), 1),
                "min_ms": round(min(times), 1), "max_ms": round(max(times), 1)}

    out = anyio.run(session)
    out.update({"db": str(db), "root": str(root), "types_per_step": a.types_per_step})
    print(json.dumps(out, indent=2))
    return 1 if out["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
