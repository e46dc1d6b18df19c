"""BM25's top-``limit`` per query (a bounded top-n, and the query terms found through the
term index) is exactly what the previous plan gave — every matching document scored, sorted in
a window by (score desc, doc id): the same documents, in the same order, with the same scores,
across tenants, evidence types past the mask's bits, repeated terms and tied scores."""

from __future__ import annotations

import random

import duckdb
import pytest

from ctxcli.load.build import write_term_lists
from ctxcli.store import duckdb_bm25, duckdb_store
from ctxcli.store.access import WIDEN_CAP
from ctxcli.store.duckdb_store import DuckDBStore
from ctxcli.store.schema import MASK_BITS, STEPS

from .conftest import Counting

TYPES = [f"type{i:02d}" for i in range(MASK_BITS + 3)]      # the last four share the overflow bit
TENANTS = ["t-big", "t-mid", "t-small"]
VOCAB = [f"w{i:03d}" for i in range(300)]

# The previous plan's ranking, kept for limits past max_by's: a window over every scored
# document (the reference).
WINDOW = duckdb_store._BM25_RANKED


def _insert(con, table: str, rows: list[tuple]) -> None:
    """Rows as SQL literals (numbers, plain ASCII words, lists of them), in chunks."""
    def lit(v):
        if isinstance(v, str):
            return f"'{v}'"
        if isinstance(v, list):
            return "[" + ", ".join(map(lit, v)) + "]::VARCHAR[]"
        return str(v)
    for i in range(0, len(rows), 5000):
        con.execute(f"INSERT INTO {table} VALUES " + ", ".join(
            "(" + ", ".join(map(lit, r)) + ")" for r in rows[i:i + 5000]))


def _store(seed: int, index: bool) -> duckdb.DuckDBPyConnection:
    """An in-memory store with the full-text tables filled as load/build.py fills them:
    Zipf-distributed terms, short and long documents, documents with high term frequencies of
    common terms, exact duplicates (ties), and evidence types past the mask's bits."""
    rng = random.Random(seed)
    con = duckdb.connect()
    for _, sql in STEPS:
        con.execute(sql)
    weights = [1 / (r + 1) ** 1.1 for r in range(len(VOCAB))]
    bits = {t: i for i, t in enumerate(TYPES)}
    docs, doc = [], 0
    for tno, (tenant, size) in enumerate(zip(TENANTS, (900, 400, 60)), 1):
        base: list[tuple[dict, list[str]]] = []
        for _i in range(size):
            if base and rng.random() < 0.15:
                tf, sup = rng.choice(base)                      # a duplicate: its scores tie
            else:
                n = rng.choice([1, 3, 8, 30, 120])
                words = rng.choices(VOCAB, weights=weights, k=n)
                if rng.random() < 0.1:
                    words += [rng.choice(VOCAB[:5])] * rng.randint(5, 40)   # a common term, very often
                tf = {}
                for w in words:
                    tf[w] = tf.get(w, 0) + 1
                sup = sorted(rng.sample(TYPES, rng.choice([1, 1, 2, 3])))
                if rng.random() < 0.3:
                    sup = sorted(set(sup) | {rng.choice(TYPES[-4:])})
                base.append((tf, sup))
            docs.append((doc, tno, tenant, tf, sup))
            doc += 1
    con.execute("INSERT INTO support_bits SELECT * FROM (VALUES " +
                ", ".join(f"('{t}', {b})" for t, b in bits.items()) + ")")
    termid = {w: i + 1 for i, w in enumerate(VOCAB)}
    post, objs = [], []
    for tno, tenant in enumerate(TENANTS, 1):
        mine = [d for d in docs if d[1] == tno]
        dls = [sum(d[3].values()) for d in mine]
        con.execute("INSERT INTO tenants VALUES (?, ?, ?, ?)", [tno, tenant, len(mine), sum(dls) / len(mine)])
        df: dict[str, int] = {}
        for d in mine:
            for w in d[3]:
                df[w] = df.get(w, 0) + 1
        _insert(con, "term_stats", [(tno, w, termid[w], c) for w, c in sorted(df.items())])
        for (did, _, _, tf, sup), dl in zip(mine, dls):
            mask = 0
            for t in sup:
                mask |= 1 << min(bits[t], MASK_BITS)
            post += [(tno, termid[w], did, c, dl, mask) for w, c in tf.items()]
            objs.append((did, tenant, sup))
    post.sort(key=lambda p: (p[0], p[1], p[2]))
    _insert(con, "postings", post)
    _insert(con, "objects(doc_id, tenant_id, supports)", objs)
    if index:
        con.execute("CREATE INDEX term_stats_term ON term_stats(term)")
    write_term_lists(con)
    return con


def _random_queries(rng: random.Random) -> list[tuple[str, list[str]]]:
    out = []
    for _ in range(rng.randint(1, 4)):
        common = rng.sample(VOCAB[:12], rng.randint(0, 5))
        rare = rng.sample(VOCAB[12:], rng.randint(0, 4))
        terms = common + rare + (rng.sample(common, 1) if common and rng.random() < 0.2 else [])
        out.append((rng.choice(TYPES + ["type-unknown"]), terms or [rng.choice(VOCAB)]))
    return out


@pytest.fixture(autouse=True, params=["numpy", "plain"])
def scorer(request, monkeypatch):
    """Every case on each scorer of the term lists' form (duckdb_bm25.plain_scoring): numpy's,
    and plain Python's for a small tenant while numpy is not loaded."""
    monkeypatch.setattr(duckdb_bm25, "plain_scoring", lambda n: request.param == "plain")
    return request.param


@pytest.fixture(scope="module")
def stores():
    cons = [_store(1, index=True), _store(2, index=False)]
    yield cons
    for c in cons:
        c.close()


def _reference(con, qs, tenant, lim, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(duckdb_store, "_BM25_TOP", WINDOW)
        return DuckDBStore(con).bm25_sql(qs, tenant=tenant, readable=None, as_of_us=0, limit=lim).hits


def test_top_n_equals_the_window_ranking_on_random_queries(stores, monkeypatch):
    rng = random.Random(17)
    compared = ties = overflow = 0
    for con in stores:
        st = DuckDBStore(con)
        for _ in range(150):
            qs, tenant, lim = _random_queries(rng), rng.choice(TENANTS + ["t-none"]), rng.choice([1, 3, 10, 20, 50])
            want = _reference(con, qs, tenant, lim, monkeypatch)
            assert st.bm25(qs, tenant=tenant, readable=None, as_of_us=0, limit=lim).hits == want, (qs, tenant, lim)
            assert st.bm25_sql(qs, tenant=tenant, readable=None, as_of_us=0, limit=lim).hits == want, (qs, tenant, lim)
            compared += len(want)
            ties += sum(a[0] == b[0] and a[2] == b[2] for a, b in zip(want, want[1:]))
            overflow += any(TYPES.index(e) >= MASK_BITS for e, _ in qs if e in TYPES)
    # the comparison covered many ranked hits, tied scores inside the lists, overflow types
    assert compared > 1500 and ties > 100 and overflow > 20, (compared, ties, overflow)


def test_ties_at_the_cut_go_to_the_smaller_doc_id(stores, monkeypatch):
    """A limit that cuts through a run of equal scores keeps the run's smallest doc ids."""
    con = stores[0]
    st = DuckDBStore(con)
    rng = random.Random(5)
    cut = 0
    for _ in range(300):
        qs, tenant = _random_queries(rng)[:1], rng.choice(TENANTS)
        full = _reference(con, qs, tenant, 10_000, monkeypatch)
        for k in range(1, len(full)):
            if full[k - 1][2] == full[k][2]:         # a tie between ranks k and k+1: cut there
                got = st.bm25(qs, tenant=tenant, readable=None, as_of_us=0, limit=k).hits
                assert got == full[:k]
                cut += 1
                break
    assert cut > 30


def test_other_tenants_terms_never_reach_the_query(stores):
    """The term lookup probes the term index, then keeps the query tenant's rows inside the
    statement: a term only another tenant holds matches nothing, and a shared term is weighted
    by the query tenant's own document frequency (on both forms of the step)."""
    import math

    con = stores[0]
    con.execute("INSERT INTO objects(doc_id, tenant_id, supports) VALUES (5000, 't-mid', ['type00']), "
                "(5001, 't-big', ['type00']), (5002, 't-mid', ['type00']), (5003, 't-small', ['type00'])")
    con.execute("INSERT INTO term_stats VALUES (2, 'only-mid', 99998, 1), (1, 'shared', 99999, 5), "
                "(2, 'shared', 99999, 300), (3, 'shared', 99999, 40)")
    con.execute("INSERT INTO postings VALUES (2, 99998, 5000, 3, 10, 1), (1, 99999, 5001, 2, 20, 1), "
                "(2, 99999, 5002, 2, 20, 1), (3, 99999, 5003, 2, 20, 1), (2, 99999, 5000, 1, 10, 1)")
    write_term_lists(con)
    try:
        st = DuckDBStore(con)
        for bm25 in (st.bm25, st.bm25_sql):
            assert bm25([(TYPES[0], ["only-mid"])], tenant="t-big", readable=None, as_of_us=0, limit=10).hits == []
            assert [d for _, d, _ in bm25([(TYPES[0], ["only-mid"])], tenant="t-mid", readable=None, as_of_us=0,
                                          limit=10).hits] == [5000]
            for tno, tenant, doc, df in ((1, "t-big", 5001, 5), (2, "t-mid", 5002, 300), (3, "t-small", 5003, 40)):
                n, avgdl = con.execute("SELECT num_docs, avgdl FROM tenants WHERE tenant_no = ?", [tno]).fetchone()
                idf = math.log((n - df + 0.5) / (df + 0.5) + 1)
                want = idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 20 / avgdl))
                got = bm25([(TYPES[0], ["shared"])], tenant=tenant, readable=None, as_of_us=0, limit=10).hits[0]
                assert got[1] == doc and math.isclose(got[2], want, rel_tol=1e-9), (tenant, got, want)
    finally:
        con.execute("DELETE FROM term_stats WHERE termid >= 99998")
        con.execute("DELETE FROM postings WHERE termid >= 99998")
        con.execute("DELETE FROM objects WHERE doc_id >= 5000")
        write_term_lists(con)


def test_a_term_list_row_of_another_tenant_is_never_used(stores):
    """term_lists is keyed by '<tenant_no> <term>'; a row whose key names the query's tenant but
    which belongs to another (a damaged store) is dropped by the statement's tenant predicate,
    and the row's documents never reach the list."""
    con = stores[0]
    st = DuckDBStore(con)
    q = [(TYPES[0], [VOCAB[0], VOCAB[1]])]
    want = st.bm25(q, tenant="t-big", readable=None, as_of_us=0, limit=10)
    con.execute("INSERT INTO term_lists VALUES ('1 zzother', 2, 1, [(951::BIGINT << 32) | 7])")
    try:
        assert st.bm25([(TYPES[0], [VOCAB[0], VOCAB[1], "zzother"])], tenant="t-big", readable=None, as_of_us=0,
                       limit=10) == want
    finally:
        con.execute("DELETE FROM term_lists WHERE tkey = '1 zzother'")


def test_a_term_list_naming_a_document_the_tenant_does_not_hold_is_refused(stores):
    """A term list of the query's tenant whose postings name a document outside that tenant (a
    damaged store) stops the step with a store error; nothing of it is ranked."""
    from ctxcli.errors import StoreError

    con = stores[0]
    st = DuckDBStore(con)
    con.execute("INSERT INTO term_lists VALUES ('1 zzbroken', 1, 1, [(100000::BIGINT << 32) | 3])")
    try:
        with pytest.raises(StoreError, match="names a document its tenant does not hold"):
            st.bm25([(TYPES[0], [VOCAB[0], "zzbroken"])], tenant="t-big", readable=None, as_of_us=0, limit=10)
    finally:
        con.execute("DELETE FROM term_lists WHERE tkey = '1 zzbroken'")


def test_a_limit_past_the_top_n_bound_ranks_everything(stores, monkeypatch):
    """Past _BM25_TOP_N_MAX (max_by takes fewer than a million) a limit still answers,
    with every matching document, in the same order as the bounded form."""
    st = DuckDBStore(stores[0])
    qs = [(TYPES[0], VOCAB[:6]), (TYPES[-1], VOCAB[3:9])]
    every = st.bm25(qs, tenant="t-big", readable=None, as_of_us=0, limit=10**7).hits
    assert every == _reference(stores[0], qs, "t-big", 10**7, monkeypatch)
    assert every == st.bm25(qs, tenant="t-big", readable=None, as_of_us=0, limit=duckdb_store._BM25_TOP_N_MAX // duckdb_store.WIDEN_CAP).hits
    assert len(every) > 50


def test_both_forms_widen_past_records_not_valid_at_as_of():
    """With access rules and validity, the term lists' form gives what the SQL form gives: the
    same readable hits widened past records not valid at as_of (up to limit × WIDEN_CAP), and
    the same withheld counts per access combination."""
    from ctxcli.store.access import Readable

    con = _store(3, index=True)
    try:
        con.execute("UPDATE objects SET source_id = CASE WHEN doc_id % 5 = 0 THEN 'src-b' ELSE 'src-a' END, "
                    "allowed_purposes = ['review'], required_scopes = CASE WHEN doc_id % 7 = 0 THEN ['x:read'] "
                    "ELSE [] END, valid_to_us = CASE WHEN doc_id % 3 = 0 THEN 100 END")
        write_term_lists(con)
        st = DuckDBStore(con)
        rd = Readable(scopes=("y:read",), purpose="review", sources=("src-a",))
        rng = random.Random(11)
        widened = withheld = 0
        for _ in range(60):
            qs, tenant, lim = _random_queries(rng), rng.choice(TENANTS), rng.choice([1, 3, 10])
            got = st.bm25(qs, tenant=tenant, readable=rd, as_of_us=500, limit=lim)
            assert got == st.bm25_sql(qs, tenant=tenant, readable=rd, as_of_us=500, limit=lim), (qs, tenant, lim)
            per = {}
            for qi, _, _ in got.hits:
                per[qi] = per.get(qi, 0) + 1
            widened += any(n > lim for n in per.values())
            withheld += bool(got.withheld)
            assert all(n <= 2 * lim for n in per.values())
        assert widened > 5 and withheld > 20, (widened, withheld)
    finally:
        con.close()


def test_a_valid_record_ranked_past_the_cap_is_still_found():
    """When most of the best-scoring records are not valid at as_of, the ``limit`` best valid
    ones are listed even if they rank past limit × WIDEN_CAP (the records not valid in between
    are left out), as the SQL form does."""
    from ctxcli.store.access import Readable

    con = _store(4, index=True)
    try:
        con.execute("UPDATE objects SET source_id = 'src-a', allowed_purposes = ['review'], required_scopes = [], "
                    "valid_to_us = CASE WHEN doc_id % 10 <> 0 THEN 100 END")
        write_term_lists(con)
        st = DuckDBStore(con)
        rd = Readable(scopes=(), purpose="review", sources=("src-a",))
        rng = random.Random(23)
        past = 0
        for _ in range(40):
            qs, tenant, lim = _random_queries(rng), rng.choice(TENANTS[:2]), rng.choice([1, 2, 3])
            got = st.bm25(qs, tenant=tenant, readable=rd, as_of_us=500, limit=lim)
            assert got == st.bm25_sql(qs, tenant=tenant, readable=rd, as_of_us=500, limit=lim), (qs, tenant, lim)
            every = st.bm25(qs, tenant=tenant, readable=rd, as_of_us=0, limit=10**6).hits   # all valid then
            rank = {(qi, doc): r for r, (qi, doc) in enumerate(((qi, doc) for qi, doc, _ in every), 1)}
            first = {qi: min(r for (q, _), r in rank.items() if q == qi) for qi, _ in rank}
            past += sum(doc % 10 == 0 and rank[qi, doc] - first[qi] + 1 > lim * WIDEN_CAP for qi, doc, _ in got.hits)
        assert past > 10, past
    finally:
        con.close()


def test_scores_round_half_away_from_zero_as_duckdb():
    """The term lists' scores are rounded as DuckDB's round(x, 9): half away from zero, at the
    exact halves too (numpy's own round goes to the even neighbour there)."""
    import numpy as np

    from ctxcli.store.duckdb_bm25 import round_place, round_places

    xs = [(k + 0.5) / 1e9 for k in (0, 1, 2, 3, 4, 10, 12, 2024, 4_000_000_002)] + [1.0000000025, 0.0000000005, 2.5e-9]
    con = duckdb.connect()
    want = [con.execute(f"SELECT round({x!r}::DOUBLE, 9)").fetchone()[0] for x in xs]
    assert round_places(np.array(xs)).tolist() == want
    assert [round_place(x) for x in xs] == want


def test_a_value_holding_nul_is_bound_not_written_into_the_statement(stores):
    """Values reach these statements as literals; one holding a NUL character (which a literal
    cannot carry) is bound as a parameter: it finds nothing and raises nothing."""
    st = DuckDBStore(stores[0])
    q = [(TYPES[0], [VOCAB[0]])]
    assert st.bm25(q, tenant="t-big\x00", readable=None, as_of_us=0, limit=5).hits == []
    assert st.bm25([(TYPES[0], [VOCAB[0], "a\x00b"])], tenant="t-big", readable=None, as_of_us=0, limit=5) == \
        st.bm25(q, tenant="t-big", readable=None, as_of_us=0, limit=5)
    assert st.graph_hits(["case:C-1\x00"], tenant="t-big", readable=None, as_of_us=0).hits == []


def test_the_steps_answer_the_same_under_a_statement_timeout(stores):
    """A playbook's statement timeout wraps the connection (every statement interruptible):
    BM25 from the term lists reads its results as numpy arrays through that wrapper too."""
    qs = [(TYPES[0], VOCAB[:6]), (TYPES[-1], VOCAB[3:9])]
    want = DuckDBStore(stores[0]).bm25(qs, tenant="t-big", readable=None, as_of_us=0, limit=10)
    st = DuckDBStore(stores[0])
    st.set_statement_timeout(30)
    assert st.bm25(qs, tenant="t-big", readable=None, as_of_us=0, limit=10) == want and want.hits


def test_a_later_round_reads_the_classes_and_documents_once(stores, monkeypatch):
    """With the store's memo (open_store's readers, a kept reader), a second BM25 call of the
    same request reads only the term lists: the access classes and the tenant's documents are
    the same statements. Another as_of reads the documents anew (their validity), another
    subject the classes (their access), another tenant both, another scorer the documents in
    its own form; every answer is the one read without the memo."""
    from ctxcli.store.access import Readable

    con = _store(5, index=True)
    con.execute("UPDATE objects SET source_id = CASE WHEN doc_id % 5 = 0 THEN 'src-b' ELSE 'src-a' END, "
                "allowed_purposes = ['review'], required_scopes = [], valid_to_us = CASE WHEN doc_id % 3 = 0 THEN 100 END")
    write_term_lists(con)
    ran: list[str] = []
    st, plain = DuckDBStore(Counting(con, ran), memo={}), DuckDBStore(con)
    q = [(TYPES[0], VOCAB[:6]), (TYPES[-1], VOCAB[3:9])]
    a, b = Readable(scopes=(), purpose="review", sources=("src-a",)), Readable(scopes=(), purpose="review", sources=("src-b",))
    calls = [("t-big", a, 50, "plain", 3), ("t-big", a, 50, "plain", 1), ("t-big", a, 500, "plain", 2),
             ("t-big", b, 500, "plain", 2), ("t-mid", b, 500, "plain", 3), ("t-mid", b, 500, "numpy", 2),
             ("t-mid", b, 500, "numpy", 1), ("t-big", a, 50, "plain", 3)]
    answers = set()
    try:
        for tenant, rd, as_of, scorer, statements in calls:
            monkeypatch.setattr(duckdb_bm25, "plain_scoring", lambda n, s=scorer: s == "plain")
            ran.clear()
            got = st.bm25(q, tenant=tenant, readable=rd, as_of_us=as_of, limit=10)
            assert len(ran) == statements, (tenant, as_of, scorer, ran)
            assert got == plain.bm25(q, tenant=tenant, readable=rd, as_of_us=as_of, limit=10) and got.hits
            answers.add(repr(got))
        assert len(answers) == 4          # each request answers differently (the two scorers alike)
    finally:
        con.close()
