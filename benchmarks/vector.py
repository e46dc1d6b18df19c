"""Vector channel benchmark (issue #22): embedding time at load, store size and the vector
step's latency on the synthetic corpus of gen_corpus.py.

For each size: generate (or reuse) the corpus, load it in process (the time of the vectors
step is measured by wrapping load/vectors.write_vectors), report the store file size and the
vectors table's share of it (DuckDB storage info), then time the exact cosine step
(engine/vector.vector_search) for the motor playbook's evidence types — one statement of six
queries, as a hybrid round plans it — per tenant (p50/p95 over repeated runs, warm).

    python benchmarks/vector.py --sizes 10000 100000 --work /tmp/ctx-bench
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUESTIONS = ["Which documents are still missing before the claim can be paid?",
             "Was the claim amount unusually high for such a short policy?",
             "Which rules applied when the claim was filed, and does it need a manual review?"]


def corpus(n: int, work: Path) -> Path:
    out = work / f"corpus-{n}"
    if not (out / "manifests").is_dir():
        subprocess.run([sys.executable, str(REPO / "benchmarks" / "gen_corpus.py"), "--objects", str(n),
                        "--out", str(out)], check=True)
    return out


def run(n: int, work: Path, reps: int) -> dict:
    import duckdb

    from ctxcli.embed import load_model
    from ctxcli.load import build as B
    from ctxcli.load import vectors as V

    root = corpus(n, work)
    db = work / f"vector-{n}.duckdb"
    for p in (db, Path(str(db) + ".wal")):
        if p.exists():
            p.unlink()
    t0 = time.perf_counter()
    model = load_model()
    t_model = time.perf_counter() - t0
    seen: dict = {}
    real = V.write_vectors

    def timed(con, model, prior=None, first=None, progress=None, **kw):
        # since the load embeds in its workers (load/derive.py), this step mostly reads the
        # streamed vectors ("streamed"); "embedded" counts only what it embedded itself
        t = time.perf_counter()
        r = real(con, model, prior, first, progress, **kw)
        seen.update(r, seconds=time.perf_counter() - t)
        return r

    V.write_vectors = timed
    t0 = time.perf_counter()
    res = B.build_store(root / "manifests", db, root=root, incremental=False)
    t_load = time.perf_counter() - t0
    V.write_vectors = real

    from ctxcli.store.duckdb_store import DuckDBStore

    con = duckdb.connect(str(db), read_only=True)
    store = DuckDBStore(con, db)
    blocks = dict(con.execute("SELECT table_name, count(DISTINCT block_id) FROM pragma_storage_info('vectors') "
                              "CROSS JOIN (SELECT 'vectors' AS table_name) GROUP BY ALL").fetchall())
    block_size = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]
    tenants = [r[0] for r in con.execute("SELECT tenant_id, count(*) FROM vectors GROUP BY 1 ORDER BY 2 DESC")
               .fetchall()]
    per_tenant = dict(con.execute("SELECT tenant_id, count(*) FROM vectors GROUP BY 1").fetchall())
    lat = step_latency(store, root, tenants, reps)
    # the query vector alone (pure Python, per query)
    t = time.perf_counter()
    for q in QUESTIONS * 10:
        model.embed(q)
    t_query_vec = (time.perf_counter() - t) / (len(QUESTIONS) * 10)
    con.close()
    out = {
        "objects": res.objects, "vectors": sum(per_tenant.values()), "tenants": per_tenant,
        "model_load_s": round(t_model, 3), "load_s": round(t_load, 2),
        "embed_step_s": round(seen["seconds"], 2), "embedded": seen["embedded"], "streamed": seen.get("streamed"),
        "embed_docs_per_s": round(seen["embedded"] / seen["seconds"]) if seen["seconds"] and seen["embedded"] else None,
        "store_bytes": db.stat().st_size, "vectors_table_bytes": blocks.get("vectors", 0) * block_size,
        "query_vector_ms": round(t_query_vec * 1000, 3),
        "vector_step_ms": summarise(lat, per_tenant),
    }
    return out


def step_latency(store, root: Path, tenants: list[str], reps: int) -> dict[str, list[float]]:
    """Seconds per vector step (one statement of one query per evidence type of the motor
    playbook, as a hybrid round plans it) for the largest and the smallest tenant, warm."""
    from ctxcli.engine.plan import make_plan
    from ctxcli.engine.vector import vector_search
    from ctxcli.models.playbook import Playbook
    from ctxcli.util.yamlio import read_yaml

    pb_path = root / "manifests" / "playbooks" / "motor-claim-review.yaml"
    raw = read_yaml(pb_path, display=str(pb_path))
    for et in raw["evidence_types"]:       # the benchmark declares the channel on every type
        et["retrieve"]["vector"] = {"object_types": []}
    pb = Playbook.model_validate(raw)
    lat: dict[str, list[float]] = {}
    for tenant in (tenants[0], tenants[-1]):
        times = []
        for i in range(reps):
            plan = make_plan(pb, round_no=1, target_types=[e.type for e in pb.evidence_types], seeds=[],
                             business_keys=[], channels=("vector",), question=QUESTIONS[i % len(QUESTIONS)])
            t = time.perf_counter()
            hits = vector_search(store, plan.queries, tenant=tenant)
            times.append(time.perf_counter() - t)
            assert hits
        lat[tenant] = times
    return lat


def summarise(lat: dict[str, list[float]], per_tenant: dict[str, int], queries: int = 6) -> dict:
    return {t: {"p50": round(statistics.median(v) * 1000, 1),
                "p95": round(sorted(v)[max(0, int(len(v) * 0.95) - 1)] * 1000, 1),
                "tenant_vectors": per_tenant[t], "queries": queries} for t, v in lat.items()}


def on_store(db: Path, root: Path, reps: int, sample: int = 20000) -> dict:
    """The vector rows for a store ``ctx load`` already built (benchmarks/run.py): vectors per
    tenant, the vectors table's bytes, the step latency, the query vector's cost, and the
    embedding rate measured on the first ``sample`` objects of the corpus in this process
    (model.embed_many in batches of 512, as the load does), so the embedding share of the load
    can be stated without a second load."""
    import duckdb
    import orjson

    from ctxcli.embed import load_model
    from ctxcli.load.vectors import embed_text
    from ctxcli.store.duckdb_store import DuckDBStore

    t0 = time.perf_counter()
    model = load_model()
    t_model = time.perf_counter() - t0
    texts: list[str] = []
    for f in sorted((root / "sources").glob("*/objects.jsonl")):
        with open(f, "rb") as fh:
            for line in fh:
                o = orjson.loads(line)
                texts.append(embed_text(o.get("title"), o.get("content")))
                if len(texts) >= sample:
                    break
        if len(texts) >= sample:
            break
    t = time.perf_counter()
    for i in range(0, len(texts), 512):
        model.embed_many(texts[i:i + 512])
    t_embed = time.perf_counter() - t
    con = duckdb.connect(str(db), read_only=True)
    try:
        store = DuckDBStore(con, db)
        block_size = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]
        blocks = con.execute("SELECT count(DISTINCT block_id) FROM pragma_storage_info('vectors')").fetchone()[0]
        per_tenant = dict(con.execute("SELECT tenant_id, count(*) FROM vectors GROUP BY 1").fetchall())
        tenants = sorted(per_tenant, key=lambda x: -per_tenant[x])
        lat = step_latency(store, root, tenants, reps)
    finally:
        con.close()
    t = time.perf_counter()
    for q in QUESTIONS * 10:
        model.embed(q)
    t_query_vec = (time.perf_counter() - t) / (len(QUESTIONS) * 10)
    rate = len(texts) / t_embed if t_embed else None
    n = sum(per_tenant.values())
    return {"vectors": n, "tenants": per_tenant, "model_load_s": round(t_model, 3),
            "embed_sample": len(texts), "embed_docs_per_s_one_process": round(rate) if rate else None,
            "embed_cpu_s_estimated": round(n / rate, 1) if rate else None,
            "vectors_table_bytes": blocks * block_size, "store_bytes": db.stat().st_size,
            "query_vector_ms": round(t_query_vec * 1000, 3), "vector_step_ms": summarise(lat, per_tenant)}


def standalone(n: int, work: Path, reps: int) -> dict:
    """The vectors step without the rest of the load (for sizes whose full load does not fit the
    session): every object of the corpus is embedded with Model.embed_many in batches of 512,
    written to a DuckDB file in the store's own schema and order (load/vectors.py), then the
    same latency runs as :func:`run`."""
    import duckdb
    import orjson

    from ctxcli.embed import load_model
    from ctxcli.load.vectors import embed_text
    from ctxcli.store.duckdb_store import DuckDBStore
    from ctxcli.store.schema import STEPS

    root = corpus(n, work)
    db = work / f"vectors-only-{n}.duckdb"
    if db.exists():
        db.unlink()
    model = load_model()
    con = duckdb.connect(str(db))
    con.execute(dict(STEPS)["0006_vectors"])
    t_embed = t_insert = 0.0
    doc = 0
    batch: list[dict] = []
    nd = work / f"vectors-only-{n}.ndjson"
    out = open(nd, "wb")

    def flush() -> None:
        nonlocal t_embed, t_insert
        t = time.perf_counter()
        vecs = model.embed_many([embed_text(o.get("title"), o.get("content")) for o in batch])
        t_embed += time.perf_counter() - t
        t = time.perf_counter()
        for o, v in zip(batch, vecs):
            if v is not None:
                out.write(orjson.dumps({"tenant_id": o["tenant_id"], "doc_id": o["_doc"],
                                        "object_type": o["object_type"], "supports": o.get("supports") or [],
                                        "vec": v}) + b"\n")
        t_insert += time.perf_counter() - t
        batch.clear()

    for f in sorted((root / "sources").glob("*/objects.jsonl")):
        with open(f, "rb") as fh:
            for line in fh:
                o = orjson.loads(line)
                doc += 1
                o["_doc"] = doc
                batch.append(o)
                if len(batch) >= 512:
                    flush()
    if batch:
        flush()
    out.close()
    con.execute("CREATE TEMP TABLE v AS SELECT * FROM read_json(?, format='newline_delimited', columns={"
                "'tenant_id': 'VARCHAR', 'doc_id': 'INTEGER', 'object_type': 'VARCHAR', 'supports': 'VARCHAR[]', "
                "'vec': 'FLOAT[256]'})", [str(nd)])
    nd.unlink()
    t = time.perf_counter()
    con.execute("INSERT INTO vectors SELECT * FROM v ORDER BY tenant_id, doc_id")
    con.execute("DROP TABLE v")
    con.execute("CHECKPOINT")
    t_sort = time.perf_counter() - t
    block_size = con.execute("SELECT block_size FROM pragma_database_size()").fetchone()[0]
    blocks = con.execute("SELECT count(DISTINCT block_id) FROM pragma_storage_info('vectors')").fetchone()[0]
    per_tenant = dict(con.execute("SELECT tenant_id, count(*) FROM vectors GROUP BY 1").fetchall())
    con.execute("CREATE TABLE meta(key VARCHAR, value VARCHAR)")
    con.execute("INSERT INTO meta VALUES ('embedding_weights_sha256', ?)", [model.weights_sha256])
    con.close()
    con = duckdb.connect(str(db), read_only=True, config={"threads": "2"})
    store = DuckDBStore(con, db)
    tenants = sorted(per_tenant, key=lambda t: -per_tenant[t])
    lat = step_latency(store, root, tenants, reps)
    con.close()
    return {"objects": doc, "vectors": sum(per_tenant.values()), "tenants": per_tenant,
            "embed_s": round(t_embed, 1), "embed_docs_per_s": round(doc / t_embed),
            "insert_s": round(t_insert, 1), "sort_checkpoint_s": round(t_sort, 1),
            "vectors_table_bytes": blocks * block_size, "file_bytes": db.stat().st_size,
            "vector_step_ms": summarise(lat, per_tenant)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    ap.add_argument("--work", type=Path, default=Path("/tmp/ctx-bench"))
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--out", type=Path, default=None, help="also write the results as JSON")
    ap.add_argument("--standalone", action="store_true", help="time only the vectors step (no full load)")
    a = ap.parse_args()
    a.work.mkdir(parents=True, exist_ok=True)
    fn = standalone if a.standalone else run
    results = {str(n): fn(n, a.work, a.reps) for n in a.sizes}
    text = json.dumps(results, indent=2)
    print(text)
    if a.out:
        a.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
