"""tantivy as an outside reference for the BM25 step (issue 36): the same shadow texts
(objects.fts_text, terms separated by single spaces), one in-memory index per tenant (so N,
avgdl and df are the tenant's own, as in ctx), the same queries, top-20 side by side.

tantivy is not a ctx dependency and nothing in ctx or its tests imports it: install it into
the benchmark's environment (``pip install tantivy``); without it the row is skipped.
tantivy scores Okapi BM25 with k1 = 1.2, b = 0.75 like ctx, but stores each document's length
as a one-byte field norm (lossy above ~40 tokens), so its ranking is close to, not identical
with, exhaustive BM25: the overlap is reported beside the timings. tantivy applies no access
rule here; ctx is timed both ungated (no access rule, the exhaustive comparison) and gated as
the investigation ran (the pack's own request).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path


def _indexes(con, tantivy) -> dict:
    """tenant -> (searcher, schema) over every object of the tenant (empty texts included: they
    count in N and avgdl, as in ctx's tenants table)."""
    out = {}
    ws = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace()).build()
    for (tenant,) in con.execute("SELECT DISTINCT tenant_id FROM objects ORDER BY 1").fetchall():
        sb = tantivy.SchemaBuilder()
        sb.add_unsigned_field("doc_id", stored=True)
        sb.add_text_field("supports", tokenizer_name="raw", index_option="basic")
        sb.add_text_field("body", tokenizer_name="ws", index_option="freq")
        schema = sb.build()
        index = tantivy.Index(schema)
        index.register_tokenizer("ws", ws)
        w = index.writer(heap_size=200_000_000, num_threads=1)
        for doc_id, supports, text in con.execute(
                "SELECT doc_id, supports, coalesce(fts_text, '') FROM objects WHERE tenant_id = ? ORDER BY doc_id",
                [tenant]).fetchall():
            d = tantivy.Document()
            d.add_unsigned("doc_id", int(doc_id))
            for s in supports or []:
                d.add_text("supports", s)
            d.add_text("body", text)
            w.add_document(d)
        w.commit()
        w.wait_merging_threads()
        index.reload()
        out[tenant] = (index.searcher(), schema)
    return out


def _query(tantivy, schema, etype: str, terms: list[str]):
    Q, O = tantivy.Query, tantivy.Occur
    should = Q.boolean_query([(O.Should, Q.term_query(schema, "body", t)) for t in terms])
    return Q.boolean_query([(O.Must, Q.const_score_query(Q.term_query(schema, "supports", etype), 0.0)),
                            (O.Must, should)])


def side_by_side(db: Path, queries: list[dict], reps: int = 5) -> dict:
    """``queries``: dicts with tenant, evidence_type, terms, limit, readable, as_of_us (the planted
    cases' full-text queries). p50 per query of tantivy's top-20 and of ctx's (ungated and
    gated), and the top-20 overlap of tantivy with ctx's ungated (= exhaustive) list."""
    try:
        import tantivy
    except ImportError:
        return {"skipped": "tantivy is not installed (pip install tantivy: a benchmark-only reference)"}
    import duckdb

    from ctxcli.store.duckdb_store import DuckDBStore

    con = duckdb.connect(str(db), read_only=True, config={"threads": "2"})
    try:
        t0 = time.perf_counter()
        idx = _indexes(con, tantivy)
        build_s = time.perf_counter() - t0
        st = DuckDBStore(con)
        tt, cu, cg, overlaps = [], [], [], []
        for q in queries:
            k = min(20, q["limit"])
            searcher, schema = idx[q["tenant"]]
            query = _query(tantivy, schema, q["evidence_type"], q["terms"])
            for _ in range(reps):
                a = time.perf_counter()
                got = [searcher.doc(addr)["doc_id"][0] for _, addr in searcher.search(query, limit=k).hits]
                tt.append(time.perf_counter() - a)
                a = time.perf_counter()
                ung = st.bm25([(q["evidence_type"], q["terms"])], tenant=q["tenant"], readable=None,
                              as_of_us=q["as_of_us"], limit=k)
                cu.append(time.perf_counter() - a)
                a = time.perf_counter()
                st.bm25([(q["evidence_type"], q["terms"])], tenant=q["tenant"], readable=q["readable"],
                        as_of_us=q["as_of_us"], limit=k)
                cg.append(time.perf_counter() - a)
            want = [d for _, d, _ in ung.hits]
            overlaps.append(len(set(got) & set(want)) / max(1, len(want)))
        ms = lambda v: round(statistics.median(v) * 1000, 2)  # noqa: E731
        return {"queries": len(queries), "reps": reps, "index_build_s": round(build_s, 1),
                "tantivy_top20_p50_ms": ms(tt) if tt else None,
                "ctx_ungated_top20_p50_ms": ms(cu) if cu else None,
                "ctx_gated_top20_p50_ms": ms(cg) if cg else None,
                "ratio_ctx_gated_over_tantivy": round(statistics.median(cg) / statistics.median(tt), 1) if tt else None,
                "top20_overlap_tantivy_vs_exhaustive_mean": round(statistics.mean(overlaps), 4) if overlaps else None,
                "note": "one query per call, warm, same process; tantivy ungated, in memory, field norms one byte"}
    finally:
        con.close()
