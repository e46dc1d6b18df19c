#!/usr/bin/env python3
"""ctx performance benchmark (issue 9): load, investigate, cold start, and the same retrieval
workload on PostgreSQL, over generated corpora of a chosen size.

    . /tmp/dev/bin/activate
    pip install "psycopg[binary]"                    # benchmark-only dependency, not a ctx dependency
    python benchmarks/run.py --sizes 10000 100000    # 1000000 on demand
    python benchmarks/run.py --sizes 10000 --no-pg   # skip PostgreSQL

Writes benchmarks/results/<date>-<size>.json and prints a summary. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CTX = shutil.which("ctx") or "ctx"


def pct(xs: list[float], p: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summ(xs: list[float], scale: float = 1000.0) -> dict:
    """p50/p95/max in milliseconds."""
    return {"n": len(xs), "p50_ms": round(pct(xs, 50) * scale, 2) if xs else None,
            "p95_ms": round(pct(xs, 95) * scale, 2) if xs else None,
            "max_ms": round(max(xs) * scale, 2) if xs else None}


def machine() -> dict:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        mem = next(l for l in open("/proc/meminfo") if l.startswith("MemTotal")).split(":")[1].strip()
    except (OSError, StopIteration):
        pass
    import duckdb

    vers = {"python": platform.python_version(), "duckdb": duckdb.__version__, "os": platform.platform()}
    try:
        from importlib.metadata import version

        for p in ("ctx", "tiktoken", "pydantic", "typer", "psycopg"):
            try:
                vers[p] = version(p)
            except Exception:
                pass
    except ImportError:
        pass
    pg = find_pg_bin()
    if pg:
        vers["postgresql"] = subprocess.run([str(pg / "postgres"), "--version"], capture_output=True,
                                            text=True).stdout.strip()
    return {"nproc": os.cpu_count(), "memory": mem, "cpu": cpu, "versions": vers}


# ---------------------------------------------------------------------------------- corpus
def ensure_corpus(size: int, work: Path, seed: int, planted: int) -> Path:
    out = work / f"corpus-{size}"
    meta = out / "corpus.json"
    if meta.exists():
        m = json.loads(meta.read_text())
        if m.get("requested_objects") == size and m.get("seed") == seed and m.get("planted") == planted:
            print(f"[{size}] reusing corpus {out}", flush=True)
            return out
    print(f"[{size}] generating corpus into {out}", flush=True)
    subprocess.run([sys.executable, str(HERE / "gen_corpus.py"), "--objects", str(size), "--out", str(out),
                    "--seed", str(seed), "--planted", str(planted)], check=True, stdout=subprocess.DEVNULL)
    return out


def time_v(cmd: list[str], **kw) -> tuple[float, int, subprocess.CompletedProcess]:
    """Wall seconds and peak RSS (KiB) of cmd under /usr/bin/time -v."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True, **kw)
    wall = time.perf_counter() - t0
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {p.stderr[-2000:]}")
    return wall, int(m.group(1)) if m else -1, p


STAGED = r"""
import json, sys, time
from pathlib import Path
from ctxcli import api
marks = {}
t0 = time.perf_counter()
def cb(stage, done, total):
    now = time.perf_counter() - t0
    m = marks.setdefault(stage, [now, now])
    m[1] = now
res = api.load(manifests=Path(sys.argv[1]), sources=Path(sys.argv[2]), db=Path(sys.argv[3]), progress=cb,
               vectors=True)     # the figures include the vectors (the vector rows need them)
end = time.perf_counter() - t0
try:
    from ctxcli.load.build import FULLTEXT_SECONDS
except ImportError:
    FULLTEXT_SECONDS = []
print(json.dumps({"marks": marks, "end": end, "objects": res.objects, "fulltext_statements_s": FULLTEXT_SECONDS}))
"""


def bench_load(corpus: Path, db: Path, size: int, staged: bool, vectors: bool = True,
               reloads: tuple[str, ...] = ()) -> dict:
    out: dict = {"vectors": vectors}
    if db.exists():
        db.unlink()
    wall, rss, p = time_v([CTX, "load", "--manifests", str(corpus / "manifests"), "--sources",
                           str(corpus / "sources"), "--db", str(db), "--json"] + (["--vectors"] if vectors else []),
                          cwd=corpus)
    res = json.loads(p.stdout)
    n = res["objects"]
    out["cli"] = {"wall_s": round(wall, 2), "peak_rss_mib": round(rss / 1024, 1), "objects_loaded": n,
                  "objects_in_files": size, "objects_per_s": round(size / wall, 1),
                  "store_bytes": db.stat().st_size, "store_mib": round(db.stat().st_size / 2**20, 1),
                  "corpus_mib": round(sum(f.stat().st_size for f in corpus.rglob("*") if f.is_file()) / 2**20, 1)}
    print(f"[{size}] ctx load: {wall:.1f}s, {size / wall:.0f} objects/s, peak RSS {rss / 1024:.0f} MiB", flush=True)
    if staged:
        db2 = db.with_name(db.stem + "-staged.duckdb")
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
            fh.write(STAGED)
        wall2, rss2, p2 = time_v([sys.executable, fh.name, str(corpus / "manifests"), str(corpus / "sources"),
                                  str(db2)], cwd=corpus)
        os.unlink(fh.name)
        r = json.loads(p2.stdout.strip().splitlines()[-1])
        mk = r["marks"]
        # stages as reported by the progress callback: read = manifests + parse/validate every source;
        # index = token counting + FTS shadow text; fts = index build + postings; the rest is
        # cross-source checks (between read and index) and writing/publishing (between index and fts, after fts)
        st = {}
        read_end = mk.get("read", [0, 0])[1]
        idx = mk.get("index", [read_end, read_end])
        fts = mk.get("fts", [idx[1], idx[1]])
        st["read_validate_s"] = round(idx[0] - 0.0, 2)  # from start until the first index batch is done
        st["index_tokens_fts_text_s"] = round(idx[1] - idx[0], 2)
        st["write_tables_s"] = round(fts[0] - idx[1], 2)
        st["fts_build_s"] = round(fts[1] - fts[0], 2)
        st["checkpoint_publish_s"] = round(r["end"] - fts[1], 2)
        st["note"] = ("read_validate_s runs from start to the end of the first 2048-object index batch "
                      "(the last 'read' callback fires before the last source is parsed)")
        out["staged"] = {"wall_s": round(wall2, 2), "peak_rss_mib": round(rss2 / 1024, 1), "stages": st,
                         "raw_marks": mk, "end_s": round(r["end"], 2),
                         "fulltext_statements_s": r.get("fulltext_statements_s", [])}
        db2.unlink(missing_ok=True)
        print(f"[{size}] staged load: {st}", flush=True)
    out["reload"] = bench_reload(corpus, db, size, out["cli"]["wall_s"], variants=reloads or RELOADS, vectors=vectors)
    return out


RELOADS = ("one_source_changed", "change_reverted", "nothing_changed", "one_percent_changed", "one_percent_reverted")


def _amend_one_percent(corpus: Path) -> tuple[dict[Path, bytes], int, int]:
    """Every 100th record of every source's objects.jsonl gets its title amended: 1 % of the
    records, spread over all sources. Returns the original bytes per file and the counts."""
    originals: dict[Path, bytes] = {}
    changed = total = 0
    for f in sorted((corpus / "sources").glob("*/objects.jsonl")):
        data = f.read_bytes()
        originals[f] = data
        lines = data.decode().splitlines()
        for i in range(0, len(lines), 100):
            rec = json.loads(lines[i])
            if "title" in rec:
                rec["title"] = str(rec["title"]) + " (amended)"
                lines[i] = json.dumps(rec, ensure_ascii=False)
                changed += 1
        total += len(lines)
        f.write_text("\n".join(lines) + "\n")
    return originals, changed, total


def bench_reload(corpus: Path, db, size: int, full_wall: float, variants=RELOADS, vectors: bool = True) -> dict:
    """`ctx load` onto the store just built after one record of one source changed (a title
    amended in gen-risk-signals), then again after the change is reverted; once with no
    change at all; then after 1 % of every source's records changed (issue 36's row) and
    again after that change is reverted. Each says which sources it reused."""
    src = corpus / "sources" / "gen-risk-signals" / "objects.jsonl"
    original = src.read_bytes()
    lines = original.decode().splitlines()
    rec = json.loads(lines[0])
    rec["title"] = rec["title"] + " (amended)"
    out: dict = {}
    cmd = [CTX, "load", "--manifests", str(corpus / "manifests"), "--sources", str(corpus / "sources"),
           "--db", str(db), "--json"] + (["--vectors"] if vectors else [])
    originals: dict[Path, bytes] = {}
    try:
        src.write_text("\n".join([json.dumps(rec, ensure_ascii=False)] + lines[1:]) + "\n")
        for name in RELOADS:
            if name == "change_reverted":
                src.write_bytes(original)
            if name == "one_percent_changed" and name in variants:
                originals, changed, total = _amend_one_percent(corpus)
                out["one_percent_records"] = {"changed": changed, "records": total}
            if name == "one_percent_reverted":
                for f, data in originals.items():
                    f.write_bytes(data)
            if name not in variants:
                continue
            wall, rss, p = time_v(cmd, cwd=corpus)
            doc = json.loads(p.stdout)
            out[name] = {"wall_s": round(wall, 2), "peak_rss_mib": round(rss / 1024, 1),
                         "share_of_full_load": round(wall / full_wall, 3),
                         "reused": doc.get("reused"), "sources": len(doc["sources"])}
            print(f"[{size}] reload ({name}): {wall:.1f}s = {wall / full_wall:.0%} of a full load, "
                  f"reused {len(doc.get('reused') or [])}/{len(doc['sources'])}", flush=True)
    finally:
        src.write_bytes(original)
        for f, data in originals.items():
            f.write_bytes(data)
    return out


def exhaustive_bm25(con, qterms: set[str], batch: int = 20_000) -> tuple[dict, dict, dict, dict]:
    """What an exhaustive BM25 needs, counted independently of ctx's postings from every
    object's shadow text (objects.fts_text, terms separated by single spaces), streamed in
    batches so that memory stays bounded at 1M objects (an unnest of every word in DuckDB
    spilled ~60 GB there): per tenant N and avgdl, per (tenant, term) df, per (tenant, term)
    the documents with the term's tf, and every document's length and supports."""
    from collections import Counter

    n: dict[str, int] = {}
    total: dict[str, int] = {}
    df: dict[tuple[str, str], int] = {}
    tfs: dict[tuple[str, str], list[tuple[int, int]]] = {}
    docs: dict[int, tuple[int, tuple[str, ...]]] = {}
    cur = con.cursor()
    cur.execute("SELECT tenant_id, doc_id, supports, fts_text FROM objects")
    while rows := cur.fetchmany(batch):
        for tenant, doc, supports, text in rows:
            words = text.split(" ") if text else []
            n[tenant] = n.get(tenant, 0) + 1
            total[tenant] = total.get(tenant, 0) + len(words)
            hit = qterms.intersection(words)
            if not hit:
                continue
            c = Counter(words)
            docs[doc] = (len(words), tuple(supports or ()))
            for t in hit:
                df[(tenant, t)] = df.get((tenant, t), 0) + 1
                tfs.setdefault((tenant, t), []).append((doc, c[t]))
    cur.close()
    stats = {t: (n[t], total[t] / n[t]) for t in n}
    return stats, df, tfs, docs


def bench_rank_agreement(db: Path, results: list, max_queries: int = 0) -> dict:
    """Top-k agreement of ctx's BM25 with an exhaustive BM25 computed independently
    (exhaustive_bm25: term frequencies counted from every object's shadow text, per tenant,
    every document holding a query term scored), for every full-text query of the planted
    cases' packs: the same Okapi formula (k1 1.2, b 0.75), scores rounded to 9 places, ties
    by doc id."""
    import math

    import duckdb

    from ctxcli.engine.plan import Query
    from ctxcli.engine.retrieve import bm25
    from ctxcli.store.duckdb_store import DuckDBStore

    con = duckdb.connect(str(db), read_only=True)
    try:
        qs = [(pack["request"]["tenant_id"], q) for _, pack, _ in results for rnd in pack["rounds"]
              for q in rnd["queries"] if q["channel"] == "fulltext" and q["terms"]]
        if max_queries:
            qs = qs[:max_queries]
        t0 = time.perf_counter()
        stats, df, tfs, docs = exhaustive_bm25(con, {t for _, q in qs for t in q["terms"]})
        prep = time.perf_counter() - t0
        overlaps, exact, differ = [], 0, []
        for tenant, q in qs:
            k = q["limit"]
            got = [d for _, d, _ in bm25(DuckDBStore(con), [Query(q["query_id"], "fulltext", q["evidence_type"], k,
                                                                  terms=tuple(q["terms"]))], tenant=tenant,
                                         readable=None, as_of_us=0, lim=k).hits]
            n, avgdl = stats[tenant]
            score: dict[int, float] = {}
            for t in dict.fromkeys(q["terms"]):
                f = df.get((tenant, t), 0)
                if not f:
                    continue
                idf = math.log(((n - f + 0.5) / (f + 0.5)) + 1)
                for doc, tf in tfs[(tenant, t)]:
                    dl, supports = docs[doc]
                    if q["evidence_type"] in supports:
                        score[doc] = score.get(doc, 0.0) + idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))
            want = [d for d, _ in sorted(score.items(), key=lambda x: (-round(x[1], 9), x[0]))[:k]]
            top = min(20, k)
            overlaps.append(len(set(got[:top]) & set(want[:top])) / max(1, min(top, len(want))))
            exact += got == want
            if got != want and len(differ) < 5:
                differ.append({"query_id": q["query_id"], "ctx": got[:top], "exhaustive": want[:top]})
        return {"queries": len(overlaps), "top20_overlap_mean": round(statistics.mean(overlaps), 4) if overlaps else None,
                "top20_overlap_min": round(min(overlaps), 4) if overlaps else None,
                "identical_ranked_lists": exact, "exhaustive_prep_s": round(prep, 1), "first_differences": differ,
                "note": "ctx scores every matching document of the tenant (no pruning): agreement is expected to be 1"}
    finally:
        con.close()


def fulltext_queries(db: Path, results: list) -> list[dict]:
    """The planted cases' full-text queries with the request's tenant, access and as_of (for
    timing BM25 by itself, benchmarks/tantivy_ref.py)."""
    import duckdb

    from ctxcli.engine.gates import Access
    from ctxcli.engine.retrieve import readable_for
    from ctxcli.store.duckdb_store import DuckDBStore
    from ctxcli.util.timeutil import dt_to_us

    con = duckdb.connect(str(db), read_only=True)
    out = []
    try:
        st = DuckDBStore(con)
        for _, pack, _ in results:
            req = pack["request"]
            subj = req["subject"]
            access = Access(frozenset(subj["scopes"]), req["purpose"], *([subj["clearance"]] if subj.get("clearance") else []))
            readable = readable_for(st, req["tenant_id"], access)
            as_of_us = dt_to_us(datetime.fromisoformat(req["as_of"]))
            for rnd in pack["rounds"]:
                for q in rnd["queries"]:
                    if q["channel"] == "fulltext" and q["terms"]:
                        out.append({"tenant": req["tenant_id"], "evidence_type": q["evidence_type"],
                                    "terms": list(q["terms"]), "limit": q["limit"], "readable": readable,
                                    "as_of_us": as_of_us})
    finally:
        con.close()
    return out


# ---------------------------------------------------------------------------------- investigate
def check_answer(res, p: dict) -> list[str]:
    a = res.answer
    cl = {c["claim_id"]: c for c in a["claims"]}

    def fact(cid, f):
        return (cl.get(cid) or {}).get("facts", {}).get(f)

    errs = []
    want = {"verdict": ("complete", a["verdict"]), "action": (p["action"], a["recommended_action"]["action"]),
            "rule_set": (p["rule_set"], fact("applicable_rule_version", "rule_set")),
            "rule_version": (p["rule_version"], fact("applicable_rule_version", "rule_version")),
            "claim_amount": (p["claim_amount"], fact("claim_amount", "claim_amount")),
            "policy_tenure_days": (p["policy_tenure_days"], fact("policy_tenure", "policy_tenure_days")),
            "missing_documents": (p["missing_documents"], fact("documents_satisfied", "missing_documents")),
            "review_amount_threshold": (p["review_amount_threshold"],
                                        fact("manual_review_required", "review_amount_threshold")),
            "case_status": (p["case_status"], fact("current_case_status", "case_status"))}
    for k, (exp, got) in want.items():
        if exp != got:
            errs.append(f"{k}: expected {exp!r}, got {got!r}")
    cited = {e["object_id"] for e in res.pack["evidence"]}
    for oid in p["must_cite"]:
        if oid not in cited:
            errs.append(f"not cited: {oid}")
    for oid in p["must_not_cite"]:
        if oid in cited:
            errs.append(f"cited but must not be: {oid}")
    return errs


def bench_investigate(corpus: Path, db: Path, planted: list[dict], repeat: int) -> tuple[dict, list]:
    from ctxcli import api
    from ctxcli.engine import builder

    # per channel statement: ctx runs one SQL statement per channel and round (retrieve.run_plan);
    # older builds ran one statement per query (retrieve.run_query). Wrap whichever the builder uses.
    per_query: dict[str, list[float]] = {"structured": [], "fulltext": [], "graph": []}
    hook = "run_plan" if hasattr(builder, "run_plan") else "run_query"
    orig = getattr(builder, hook)

    def wrapped(con, *a, **kw):
        out = orig(con, *a, **kw)
        runs = out if isinstance(out, list) else [out]
        per_ch: dict[str, float] = {}
        for run in runs:
            per_ch[run.query.channel] = per_ch.get(run.query.channel, 0.0) + run.seconds
        for ch, sec in per_ch.items():
            per_query[ch].append(sec)
        return out

    setattr(builder, hook, wrapped)
    keys = ["channel.structured", "channel.fulltext", "channel.graph", "retrieve", "gates", "pack", "answer", "total"]
    tim: dict[str, list[float]] = {k: [] for k in keys + ["retrieve+gates+pack+answer", "api_wall"]}
    errors: dict[str, list[str]] = {}
    results = []
    cases = corpus / "examples" / "cases"
    pbs = corpus / "manifests" / "playbooks"
    try:
        # warm-up: imports, first tokenizer load, OS page cache
        api.investigate(api.InvestigateOptions(case=str(cases / f"{planted[0]['case_id']}.yaml"), db=db,
                                               cases_dir=cases, playbooks_dir=pbs))
        for k in per_query:
            per_query[k].clear()
        for rep in range(repeat):
            for p in planted:
                t0 = time.perf_counter()
                res = api.investigate(api.InvestigateOptions(case=str(cases / f"{p['case_id']}.yaml"), db=db,
                                                             cases_dir=cases, playbooks_dir=pbs))
                wall = time.perf_counter() - t0
                for k in keys:
                    tim[k].append(res.timings.get(k, 0.0))
                tim["retrieve+gates+pack+answer"].append(sum(res.timings.get(k, 0.0)
                                                             for k in ("retrieve", "gates", "pack", "answer")))
                tim["api_wall"].append(wall)
                if rep == 0:
                    e = check_answer(res, p)
                    if e:
                        errors[p["case_id"]] = e
                    results.append((p, res.pack, res.timings))
    finally:
        setattr(builder, hook, orig)
    out = {"per_investigation": {k: summ(v) for k, v in tim.items()},
           "per_query": {k: summ(v) for k, v in per_query.items()},
           "per_query_unit": "one channel statement per round" if hook == "run_plan" else "one query",
           "rounds_p50": statistics.median(len(r[1]["rounds"]) for r in results),
           "correct": len(planted) - len(errors), "planted": len(planted), "errors": errors}
    return out, results


def bench_cold(corpus: Path, db: Path, planted: list[dict], runs: int) -> dict:
    env = dict(os.environ, CTX_ROOT=str(corpus))
    walls = []
    with tempfile.TemporaryDirectory() as td:
        # one untimed run first: the source's bytecode is cached, as after any normal install
        subprocess.run([CTX, "investigate", str(corpus / "examples" / "cases" / f"{planted[0]['case_id']}.yaml"),
                        "--db", str(db), "--out", f"{td}/warm"], env=env, capture_output=True, cwd=corpus)
        for i in range(runs):
            p = planted[i % len(planted)]
            t0 = time.perf_counter()
            r = subprocess.run([CTX, "investigate", str(corpus / "examples" / "cases" / f"{p['case_id']}.yaml"),
                                "--db", str(db), "--out", f"{td}/run{i}"], env=env, capture_output=True, text=True,
                               cwd=corpus)
            walls.append(time.perf_counter() - t0)
            if r.returncode != 0:
                raise RuntimeError(r.stderr[-2000:])
    return summ(walls)


def bench_cli_basics(work: Path, runs: int) -> dict:
    out = {}
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([CTX, "--help"], capture_output=True, check=True)
        walls.append(time.perf_counter() - t0)
    out["ctx --help"] = summ(walls)
    db = work / "bundled.duckdb"
    if db.exists():
        db.unlink()
    subprocess.run([CTX, "load", "--db", str(db)], cwd=REPO, capture_output=True, check=True)
    walls = []
    with tempfile.TemporaryDirectory() as td:
        for i in range(runs):
            t0 = time.perf_counter()
            r = subprocess.run([CTX, "investigate", "C-102", "--db", str(db), "--out", f"{td}/r{i}"], cwd=REPO,
                               capture_output=True, text=True)
            walls.append(time.perf_counter() - t0)
            if r.returncode != 0:
                raise RuntimeError(r.stderr[-2000:])
    out["ctx investigate C-102 (bundled, store loaded)"] = summ(walls)
    # the floor issue 51 measures it against: a fresh Python that imports duckdb, timed the same way
    exe = Path(CTX).read_text(errors="replace").splitlines()[0]
    py = exe[2:].strip() if exe.startswith("#!") else sys.executable
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([py, "-c", "import duckdb"], capture_output=True, check=True)
        walls.append(time.perf_counter() - t0)
    out["python -c 'import duckdb' (the floor)"] = summ(walls)
    out["investigate / import duckdb (p50)"] = round(out["ctx investigate C-102 (bundled, store loaded)"]["p50_ms"]
                                                     / out["python -c 'import duckdb' (the floor)"]["p50_ms"], 2)
    # where the start-up time goes
    for name, cmd in (("help", [CTX, "--help"]),
                      ("investigate", [CTX, "investigate", "C-102", "--db", str(db), "--out", str(work / "it")])):
        r = subprocess.run([py, "-X", "importtime", CTX] + cmd[1:], cwd=REPO, capture_output=True, text=True)
        rows = []
        for line in r.stderr.splitlines():
            m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
            if m:
                rows.append((int(m.group(2)), len(m.group(3)), m.group(4)))
        top = sorted([x for x in rows if x[1] <= 2], reverse=True)[:12]
        out[f"importtime_{name}_top_ms"] = {n: round(us / 1000, 1) for us, _, n in top}
    shutil.rmtree(work / "it", ignore_errors=True)
    return out


# ---------------------------------------------------------------------------------- PostgreSQL
def find_pg_bin() -> Path | None:
    cands = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for c in cands:
        if (c / "initdb").exists():
            return c
    pc = shutil.which("pg_ctl")
    return Path(os.path.realpath(pc)).parent if pc else None


def free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class PG:
    """A throw-away PostgreSQL server on 127.0.0.1 in a temp dir (run as user postgres when root)."""

    def __init__(self, work: Path):
        self.bin = find_pg_bin()
        if self.bin is None:
            raise RuntimeError("PostgreSQL not found: apt-get install -y postgresql")
        self.dir = Path(tempfile.mkdtemp(prefix="ctx-bench-pg-", dir=work))
        self.port = free_port()
        self.as_root = os.geteuid() == 0

    def _run(self, args: list[str]) -> None:
        if self.as_root:
            args = ["runuser", "-u", "postgres", "--"] + args
        subprocess.run(args, check=True, capture_output=True)

    def start(self) -> None:
        if self.as_root:
            shutil.chown(self.dir, "postgres", "postgres")
        data = self.dir / "data"
        self._run([str(self.bin / "initdb"), "-D", str(data), "-U", "bench", "--auth=trust", "-E", "UTF8",
                   "--locale=C.UTF-8"])
        conf = ("listen_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\n"
                "shared_buffers = 2GB\nwork_mem = 64MB\nmaintenance_work_mem = 1GB\neffective_cache_size = 8GB\n"
                "max_parallel_workers_per_gather = 2\nmax_wal_size = 8GB\nfsync = off\nsynchronous_commit = off\n"
                "full_page_writes = off\njit = off\n" % (self.port, self.dir))
        with open(data / "postgresql.conf", "a") as fh:
            fh.write(conf)
        self._run([str(self.bin / "pg_ctl"), "-D", str(data), "-l", str(self.dir / "log"), "-w", "start"])

    def connect(self):
        import psycopg

        return psycopg.connect(host="127.0.0.1", port=self.port, user="bench", dbname="postgres", autocommit=True)

    def stop(self) -> None:
        try:
            self._run([str(self.bin / "pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


PG_SCHEMA = """
CREATE TABLE objects(doc_id integer PRIMARY KEY, object_id text, tenant_id text, object_type text, subject_id text,
  supports text[], keys text[], valid_from_us bigint, valid_to_us bigint, fts_text text);
CREATE TABLE entities(entity_id bigint PRIMARY KEY, tenant_id text, entity_key text, entity_type text);
CREATE TABLE relations(tenant_id text, relation_id text, src bigint, dst bigint, rel_type text, dst_type text,
  valid_from_us bigint, valid_to_us bigint);
"""
PG_INDEX = [
    "ALTER TABLE objects ADD COLUMN tsv tsvector",
    "UPDATE objects SET tsv = to_tsvector('simple', fts_text)",
    "CREATE INDEX objects_tsv ON objects USING gin(tsv)",
    "CREATE INDEX objects_subject ON objects(tenant_id, subject_id)",
    "CREATE INDEX objects_keys ON objects USING gin(keys)",
    "CREATE INDEX objects_oid ON objects(tenant_id, object_id)",
    "CREATE INDEX entities_key ON entities(tenant_id, entity_key)",
    "CREATE INDEX relations_src ON relations(src, rel_type)",
    "VACUUM ANALYZE",
]


def pg_arr(col: str) -> str:
    """DuckDB list -> PostgreSQL array literal."""
    return (f"'{{' || coalesce(array_to_string(list_transform({col}, x -> '\"' || replace(replace(x, '\\', '\\\\'), "
            f"'\"', '\\\"') || '\"'), ','), '') || '}}'")


def pg_load(pg: PG, db: Path, work: Path) -> dict:
    import duckdb

    exp = Path(tempfile.mkdtemp(prefix="ctx-bench-export-", dir=work))
    t0 = time.perf_counter()
    con = duckdb.connect(str(db), read_only=True)
    specs = {
        "objects": f"SELECT doc_id, object_id, tenant_id, object_type, subject_id, {pg_arr('supports')}, "
                   f"{pg_arr('keys')}, valid_from_us, valid_to_us, fts_text FROM objects",
        "entities": "SELECT entity_id, tenant_id, entity_key, entity_type FROM entities",
        "relations": "SELECT tenant_id, relation_id, src, dst, rel_type, dst_type, valid_from_us, valid_to_us "
                     "FROM relations",
    }
    for t, q in specs.items():
        con.execute(f"COPY ({q}) TO '{exp / (t + '.csv')}' (FORMAT csv, HEADER false)")
    con.close()
    export_s = time.perf_counter() - t0
    out = {"export_from_duckdb_s": round(export_s, 2)}
    c = pg.connect()
    t0 = time.perf_counter()
    c.execute(PG_SCHEMA)
    for t in specs:
        with c.cursor() as cur, cur.copy(f"COPY {t} FROM STDIN (FORMAT csv)") as cp, open(exp / f"{t}.csv", "rb") as fh:
            while chunk := fh.read(1 << 20):
                cp.write(chunk)
    out["copy_s"] = round(time.perf_counter() - t0, 2)
    t1 = time.perf_counter()
    for s in PG_INDEX:
        c.execute(s)
    out["index_s"] = round(time.perf_counter() - t1, 2)
    out["load_total_s"] = round(time.perf_counter() - t0, 2)
    out["db_mib"] = round(c.execute("SELECT pg_database_size('postgres')").fetchone()[0] / 2**20, 1)
    c.close()
    shutil.rmtree(exp, ignore_errors=True)
    return out


PG_STRUCTURED = """
SELECT doc_id FROM objects o
WHERE o.tenant_id = %(tenant)s AND %(etype)s = ANY(o.supports)
  AND (cardinality(%(otypes)s::text[]) = 0 OR o.object_type = ANY(%(otypes)s::text[]))
  AND (o.subject_id = ANY(%(seeds)s::text[]) OR o.keys && %(bkeys)s::text[] OR o.object_id = ANY(%(bkeys)s::text[]))
ORDER BY (o.subject_id = ANY(%(seeds)s::text[])) DESC, o.object_type, o.object_id
LIMIT %(lim)s
"""
PG_FULLTEXT = """
SELECT doc_id, ts_rank_cd(tsv, q) AS r FROM objects, websearch_to_tsquery('simple', %(q)s) q
WHERE tsv @@ q AND tenant_id = %(tenant)s AND %(etype)s = ANY(supports)
ORDER BY r DESC, doc_id LIMIT %(lim)s
"""
PG_SEEDS = "SELECT entity_id FROM entities WHERE tenant_id = %s AND entity_type = %s AND entity_key = ANY(%s::text[])"
PG_HOP = """
SELECT src, dst, relation_id FROM relations
WHERE src = ANY(%(frontier)s::bigint[]) AND rel_type = %(edge)s AND dst_type = %(to)s AND tenant_id = %(tenant)s
  AND (valid_from_us IS NULL OR valid_from_us <= %(asof)s) AND (valid_to_us IS NULL OR valid_to_us > %(asof)s)
ORDER BY src, dst
"""
PG_GRAPH_OBJ = """
SELECT o.doc_id FROM objects o JOIN entities e ON e.tenant_id = o.tenant_id AND e.entity_key = o.subject_id
WHERE o.tenant_id = %(tenant)s AND e.entity_id = ANY(%(ids)s::bigint[]) AND %(etype)s = ANY(o.supports)
ORDER BY o.doc_id LIMIT %(lim)s
"""


def pg_graph(c, q: dict, rnd: dict, templates: dict, tenant: str, asof: int) -> list[int]:
    reached: set[int] = set()
    for tid in q["templates"]:
        t = templates[tid]
        frontier = [r[0] for r in c.execute(PG_SEEDS, (tenant, t["start"], rnd["seeds"])).fetchall()]
        for _depth, st in enumerate(t["steps"][: rnd["max_hops"]], 1):
            if not frontier:
                break
            rows = c.execute(PG_HOP, {"frontier": frontier, "edge": st["edge"], "to": st["to"], "tenant": tenant,
                                      "asof": asof}).fetchall()
            per: dict[int, int] = {}
            nxt = []
            for src, dst, _ in rows:
                per[src] = per.get(src, 0) + 1
                if per[src] <= rnd["fanout_cap"]:
                    nxt.append(dst)
            frontier = sorted(set(nxt))
            reached.update(frontier)
    if not reached:
        return []
    return [r[0] for r in c.execute(PG_GRAPH_OBJ, {"tenant": tenant, "ids": sorted(reached),
                                                   "etype": q["evidence_type"], "lim": q["limit"]}).fetchall()]


def bench_pg(pg: PG, results: list, planted: list[dict], corpus: Path, repeat: int) -> dict:
    import yaml  # PyYAML is a ctx dependency (via its YAML reader); fall back to ctx's reader if absent

    pb = yaml.safe_load((corpus / "manifests" / "playbooks" / "motor-claim-review.yaml").read_text())
    templates = {t["id"]: t for t in pb["path_templates"]}
    c = pg.connect()
    per_ch: dict[str, list[float]] = {"structured": [], "fulltext": [], "graph": []}
    per_case: list[float] = []
    per_case_ch: dict[str, list[float]] = {"structured": [], "fulltext": [], "graph": []}
    misses: dict[str, list[str]] = {}
    oid = {}
    # warm-up
    for _ in range(1):
        for _p, pack, _ in results[:3]:
            _pg_case(c, pack, templates, {k: [] for k in per_ch})
    for rep in range(repeat):
        for p, pack, _ in results:
            t0 = time.perf_counter()
            mine: dict[str, list[float]] = {k: [] for k in per_ch}
            hits = _pg_case(c, pack, templates, mine)
            per_case.append(time.perf_counter() - t0)
            for k, v in mine.items():
                per_ch[k].extend(v)
                per_case_ch[k].append(sum(v))
            if rep == 0:
                ids = sorted(hits)
                rows = c.execute("SELECT object_id FROM objects WHERE doc_id = ANY(%s)", (ids,)).fetchall()
                got = {r[0] for r in rows}
                miss = [o for o in p["planted_objects"] if o not in got]
                if miss:
                    misses[p["case_id"]] = miss
                oid[p["case_id"]] = len(got)
    c.close()
    return {"per_query": {k: summ(v) for k, v in per_ch.items()}, "per_investigation_retrieval": summ(per_case),
            "per_investigation_channel": {k: summ(v) for k, v in per_case_ch.items()},
            "planted_objects_retrieved": len(results) - len(misses), "planted": len(results), "misses": misses}


def _pg_case(c, pack: dict, templates: dict, per_ch: dict) -> set[int]:
    req = pack["request"]
    tenant = req["tenant_id"]
    from datetime import datetime

    asof_dt = datetime.fromisoformat(req["as_of"])
    asof = int(asof_dt.timestamp()) * 1_000_000 + asof_dt.microsecond
    hits: set[int] = set()
    for rnd in pack["rounds"]:
        for q in rnd["queries"]:
            t0 = time.perf_counter()
            if q["channel"] == "structured":
                rows = c.execute(PG_STRUCTURED, {"tenant": tenant, "etype": q["evidence_type"],
                                                 "otypes": q["object_types"], "seeds": rnd["seeds"],
                                                 "bkeys": rnd["business_keys"], "lim": q["limit"]}).fetchall()
                ids = [r[0] for r in rows]
            elif q["channel"] == "fulltext":
                ids = [r[0] for r in c.execute(PG_FULLTEXT, {"q": " or ".join(q["terms"]), "tenant": tenant,
                                                             "etype": q["evidence_type"], "lim": q["limit"]}).fetchall()]
            else:
                ids = pg_graph(c, q, rnd, templates, tenant, asof)
            per_ch[q["channel"]].append(time.perf_counter() - t0)
            hits.update(ids)
    return hits


# ---------------------------------------------------------------------------------- main
def bench_ctx_pg_backend(pg: PG, db: Path, corpus: Path, planted: list[dict], repeat: int, duck_results: list,
                         duck_load: dict | None, reload: bool = False) -> dict:
    """ctx itself on the PostgreSQL store backend (issue 20): publish the DuckDB store just built
    as a generation (what `ctx load --db postgresql://…` does after the same build), then the
    same in-process investigations. The load rate counts the DuckDB build (from the load
    benchmark) plus the publish; packs are compared with the DuckDB backend's (same secret)."""
    from ctxcli.store.pg import admin as pg_admin
    from ctxcli.store.secret import store_key

    with pg.connect() as c:
        c.execute("CREATE DATABASE ctx_backend")
    url = f"postgresql://bench@127.0.0.1:{pg.port}/ctx_backend"
    pg_admin.init_store(url)
    import psycopg

    with psycopg.connect(url, autocommit=True) as c:     # the DuckDB store's secret, for comparable packs
        c.execute("UPDATE ctx_meta.secret SET key = %s", [store_key(db, create=False)])
    t0 = time.perf_counter()
    info = pg_admin.publish(url, db)
    publish_s = time.perf_counter() - t0
    inv, results = bench_investigate(corpus, url, planted, repeat)
    # the store description differs by design: the backend, and each store's own generation number
    def bare(pack: dict) -> dict:
        return {**pack, "store": {k: v for k, v in pack["store"].items() if k not in ("backend", "generation")}}

    same = sum(1 for (_, a, _), (_, b, _) in zip(duck_results, results) if bare(b) == bare(a))
    out = {"publish_s": round(publish_s, 2), "objects": info["objects"],
           "per_investigation": inv["per_investigation"], "per_query": inv["per_query"],
           "correct": inv["correct"], "planted": inv["planted"],
           "packs_identical_to_duckdb_backend": f"{same}/{len(results)}"}
    if duck_load and duck_load.get("cli", {}).get("wall_s"):
        total = duck_load["cli"]["wall_s"] + publish_s
        out["load_total_s"] = round(total, 2)
        out["load_objects_per_s"] = round(info["objects"] / total, 1)
        if reload:
            # `ctx load --db postgresql://…` after one record of one source changed: the current
            # generation is written back into the temporary build, unchanged sources reused.
            out["reload"] = bench_reload(corpus, url, "pg-backend", total, variants=("one_source_changed",),
                                         vectors=duck_load.get("vectors", True))
    return out


def ratio(a, b):
    return round(a / b, 3) if a is not None and b else None


def run_size(size: int, args, work: Path, mach: dict) -> dict:
    corpus = ensure_corpus(size, work, args.seed, args.planted)
    cmeta = json.loads((corpus / "corpus.json").read_text())
    planted = [json.loads(l) for l in open(corpus / "planted.jsonl")]
    db = work / f"store-{size}.duckdb"
    res: dict = {"size": size, "date": date.today().isoformat(), "machine": mach, "corpus": cmeta}
    prev = HERE / "results" / f"{res['date']}-{size}.json"
    if args.skip_load and db.exists():
        print(f"[{size}] reusing store {db}", flush=True)
        if prev.exists() and "load" in json.loads(prev.read_text()):
            res["load"] = json.loads(prev.read_text())["load"]
            res["load"]["note"] = "carried over from an earlier run of the same day (--skip-load)"
    else:
        res["load"] = bench_load(corpus, db, size, staged=not args.no_staged, vectors=not args.no_vector,
                                 reloads=tuple(args.reloads or ()))
    inv, results = bench_investigate(corpus, db, planted, args.repeat)
    res["investigate"] = inv
    print(f"[{size}] investigate: {json.dumps(inv['per_investigation'])}\n  per query: {inv['per_query']}\n"
          f"  correct {inv['correct']}/{inv['planted']}", flush=True)
    if size <= args.rank_agreement_max:
        res["bm25_rank_agreement"] = bench_rank_agreement(db, results, args.rank_agreement_queries)
        print(f"[{size}] BM25 rank agreement with exhaustive: {res['bm25_rank_agreement']}", flush=True)
    if not args.no_tantivy:
        sys.path.insert(0, str(HERE))
        import tantivy_ref

        res["bm25_vs_tantivy"] = tantivy_ref.side_by_side(db, fulltext_queries(db, results))
        print(f"[{size}] BM25 top-20, ctx and tantivy: {res['bm25_vs_tantivy']}", flush=True)
    res["cold_investigate"] = bench_cold(corpus, db, planted, args.cold_runs)
    print(f"[{size}] cold investigate: {res['cold_investigate']}", flush=True)
    if not args.no_agent_step:
        r = subprocess.run([sys.executable, str(HERE / "agent_step.py"), "--root", str(corpus), "--db", str(db),
                            "--calls", "60", "--warmup", "5"], capture_output=True, text=True)
        res["agent_step"] = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr[-2000:]}
        print(f"[{size}] agent step over MCP: {json.dumps(res['agent_step'])}", flush=True)
    if not args.no_vector:
        sys.path.insert(0, str(HERE))
        import vector

        res["vector"] = vector.on_store(db, corpus, reps=15)
        print(f"[{size}] vector channel: {json.dumps(res['vector'])}", flush=True)
    if not args.no_pg:
        pg = PG(work)
        try:
            pg.start()
            res["postgres"] = {"load": pg_load(pg, db, work)}
            print(f"[{size}] postgres load: {res['postgres']['load']}", flush=True)
            pg_n = args.pg_planted or len(results)
            res["postgres"].update(bench_pg(pg, results[:pg_n], planted[:pg_n], corpus, args.repeat))
            print(f"[{size}] postgres: {res['postgres']['per_query']} {res['postgres']['per_investigation_retrieval']}"
                  f" planted retrieved {res['postgres']['planted_objects_retrieved']}/{res['postgres']['planted']}", flush=True)
            res["ctx_on_postgres"] = bench_ctx_pg_backend(pg, db, corpus, planted, args.repeat, results,
                                                          res.get("load"), reload=not args.no_pg_reload)
            print(f"[{size}] ctx on the PostgreSQL backend: {json.dumps(res['ctx_on_postgres'])}", flush=True)
        finally:
            pg.stop()
        pq, cq = res["postgres"]["per_query"], inv["per_query"]
        pic, ppc = inv["per_investigation"], res["postgres"]["per_investigation_channel"]
        res["ratio_ctx_over_pg"] = {
            **{f"{ch}_per_investigation_p50": ratio(pic[f"channel.{ch}"]["p50_ms"], ppc[ch]["p50_ms"]) for ch in ppc},
            **{f"{ch}_per_investigation_p95": ratio(pic[f"channel.{ch}"]["p95_ms"], ppc[ch]["p95_ms"]) for ch in ppc},
            # per-query ratios only when ctx also runs one statement per query
            **({f"{ch}_query_p50": ratio(cq[ch]["p50_ms"], pq[ch]["p50_ms"]) for ch in cq}
               if inv.get("per_query_unit") == "one query" else {}),
            "retrieval_per_investigation_p50": ratio(inv["per_investigation"]["retrieve"]["p50_ms"],
                                                     res["postgres"]["per_investigation_retrieval"]["p50_ms"]),
            "retrieval_per_investigation_p95": ratio(inv["per_investigation"]["retrieve"]["p95_ms"],
                                                     res["postgres"]["per_investigation_retrieval"]["p95_ms"]),
            "end_to_end_ctx_vs_pg_retrieval_only_p50": ratio(
                inv["per_investigation"]["retrieve+gates+pack+answer"]["p50_ms"],
                res["postgres"]["per_investigation_retrieval"]["p50_ms"]),
        }
        if "load" in res:
            res["ratio_ctx_over_pg"]["load_time"] = ratio(res["load"]["cli"]["wall_s"],
                                                          res["postgres"]["load"]["load_total_s"])
        print(f"[{size}] ratio ctx/pg: {res['ratio_ctx_over_pg']}", flush=True)
    out = HERE / "results" / f"{res['date']}-{size}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"[{size}] wrote {out}", flush=True)
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="ctx benchmark (issue 9)")
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000])
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "ctx-bench")
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--planted", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=1, help="passes over the planted cases (in process)")
    ap.add_argument("--cold-runs", type=int, default=10)
    ap.add_argument("--no-pg", action="store_true")
    ap.add_argument("--no-staged", action="store_true", help="skip the second, in-process load with stage timings")
    ap.add_argument("--skip-load", action="store_true", help="reuse an existing store")
    ap.add_argument("--no-basics", action="store_true", help="skip ctx --help and bundled C-102 cold runs")
    ap.add_argument("--no-vector", action="store_true", help="skip the vector channel rows (issue 22)")
    ap.add_argument("--no-tantivy", action="store_true",
                    help="skip the tantivy BM25 reference (benchmarks/tantivy_ref.py; needs `pip install tantivy`)")
    ap.add_argument("--no-pg-reload", action="store_true",
                    help="skip the one-source reload on the PostgreSQL backend (it writes the whole generation "
                         "back into a temporary DuckDB build first)")
    ap.add_argument("--pg-planted", type=int, default=0,
                    help="plain PostgreSQL: run only the first N planted cases (its full text takes seconds per "
                         "investigation at 1M); 0 = all")
    ap.add_argument("--no-agent-step", action="store_true",
                    help="skip one agent step over MCP (benchmarks/agent_step.py against a warm ctx serve)")
    ap.add_argument("--reloads", nargs="+", choices=RELOADS, metavar="VARIANT",
                    help=f"the reloads to time after the load (default all: {', '.join(RELOADS)})")
    ap.add_argument("--rank-agreement-max", type=int, default=2_000_000,
                    help="compare BM25 top-k with an exhaustive BM25 at sizes up to this (default 2000000; "
                         "the reference streams the shadow text: ~50 s at 1M)")
    ap.add_argument("--rank-agreement-queries", type=int, default=0,
                    help="compare at most this many full-text queries with the exhaustive BM25 (0 = all)")
    a = ap.parse_args(argv)
    # Fresh-process figures are for an installed ctx, whose bytecode is cached: with
    # PYTHONDONTWRITEBYTECODE set, every process would compile ctx's source again (~0.4 s).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    a.work.mkdir(parents=True, exist_ok=True)
    mach = machine()
    print(json.dumps(mach), flush=True)
    if not a.no_basics:
        basics = bench_cli_basics(a.work, a.cold_runs)
        print(json.dumps(basics, indent=1), flush=True)
        out = HERE / "results" / f"{date.today().isoformat()}-cli.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps({"machine": mach, **basics}, indent=2) + "\n")
    for s in a.sizes:
        run_size(s, a, a.work, mach)
    return 0


if __name__ == "__main__":
    sys.exit(main())
