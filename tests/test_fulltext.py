"""Full text: exact BM25 per tenant, and the shadow-text tokenizer's fast path."""

from __future__ import annotations

import json
import math
import unicodedata
from collections import Counter

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxcli.engine.plan import Query
from ctxcli.load.build import build_store
from ctxcli.load.fts_text import query_terms, terms
from ctxcli.store.db import open_reader
from ctxcli.store.duckdb_store import DuckDBStore

from .conftest import run_cli

QUERIES = ["accident certificate claim", "事故 认定 document", "C-102 invoice repair amount",
           "rule threshold review", "payment incident error rollback"]
TYPES = ["claim_document", "rule", "case_snapshot", "incident", "runbook"]


def _queries() -> list[Query]:
    return [Query(f"q{i}-{t}", "fulltext", t, 20, text=text, terms=tuple(query_terms(text)))
            for i, text in enumerate(QUERIES) for t in TYPES]


def _ranked(con, tenant: str) -> dict[str, list[tuple[str, float]]]:
    qs = _queries()
    ids = dict(con.execute("SELECT doc_id, object_id FROM objects").fetchall())
    out: dict[str, list[tuple[str, float]]] = {q.query_id: [] for q in qs}
    found = DuckDBStore(con).bm25([(q.evidence_type, list(q.terms)) for q in qs], tenant=tenant, readable=None,
                                  as_of_us=0, limit=20)
    for qi, doc, score in found.hits:
        out[qs[qi].query_id].append((ids[doc], score))
    return out


def _exhaustive(con, tenant: str) -> dict[str, list[tuple[str, float]]]:
    """Okapi BM25 (k1 1.2, b 0.75) computed here from every object's shadow text."""
    docs = con.execute("SELECT object_id, fts_text, supports, doc_id FROM objects WHERE tenant_id = ?",
                       [tenant]).fetchall()
    tfs = {oid: Counter(text.split()) for oid, text, _, _ in docs}
    n = len(docs)
    avgdl = sum(sum(c.values()) for c in tfs.values()) / n
    df = Counter(t for c in tfs.values() for t in c)
    out = {}
    for q in _queries():
        scores = []
        for oid, _, supports, doc in docs:
            if q.evidence_type not in supports:
                continue
            c, dl = tfs[oid], sum(tfs[oid].values())
            s = sum(math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1) * c[t] * 2.2 / (c[t] + 1.2 * (0.25 + 0.75 * dl / avgdl))
                    for t in q.terms if c[t])
            if any(c[t] for t in q.terms):
                scores.append((round(s, 9), doc, oid))
        scores.sort(key=lambda x: (-x[0], x[1]))
        out[q.query_id] = [(oid, s) for s, _, oid in scores[:20]]
    return out


def test_bm25_is_exact_within_the_tenant(store):
    con = open_reader(store)
    try:
        for tenant in ("tenant-demo", "tenant-other"):
            got, want = _ranked(con, tenant), _exhaustive(con, tenant)
            assert any(got.values())
            for qid in want:
                assert [o for o, _ in got[qid]] == [o for o, _ in want[qid]], qid
                for (o1, s1), (o2, s2) in zip(got[qid], want[qid]):
                    assert math.isclose(s1, s2, rel_tol=1e-9, abs_tol=1e-8), (qid, o1, o2)
    finally:
        con.close()


def _strip_store(path) -> dict:
    """A pack without what names the store (its digest and the hashes derived from it)."""
    d = json.loads(path.read_bytes())
    for k in ("store", "pack_id", "content_hash"):
        d.pop(k, None)
    return d


def _strip_trace(path) -> list:
    """The trace without the pack link (the pack id names the store digest too) and the
    sealed pack's hashes."""
    out = []
    for line in path.read_bytes().splitlines():
        e = json.loads(line)
        for k in ("pack_id", "content_hash", "store"):
            e.pop(k, None)
        out.append(e)
    return out


def test_other_tenants_documents_never_change_a_tenants_scores_or_pack(project_copy, tmp_path):
    db = project_copy / ".ctx" / "ctx.duckdb"
    assert run_cli(["load", "--manifests", project_copy / "manifests", "--db", db]).exit_code == 0
    con = open_reader(db)
    before, other_before = _ranked(con, "tenant-demo"), _ranked(con, "tenant-other")
    con.close()
    assert run_cli(["investigate", "C-102", "--db", db, "--out", tmp_path / "a"]).exit_code == 0
    # tenant-other gains 60 documents full of tenant-demo's query terms
    objs = project_copy / "sources" / "partner-claims" / "objects.jsonl"
    rows = [json.loads(line) for line in objs.read_text().splitlines() if line.strip()]
    extra = []
    for i in range(60):
        r = dict(rows[i % len(rows)])
        r.pop("content_hash", None)
        r["object_id"] = f"EXTRA-{i:03d}"
        r["content"] = " ".join(QUERIES) + f" accident claim rule incident {i}"
        r["supports"] = TYPES
        extra.append(json.dumps(r, ensure_ascii=False))
    objs.write_text(objs.read_text().rstrip("\n") + "\n" + "\n".join(extra) + "\n")
    assert run_cli(["load", "--manifests", project_copy / "manifests", "--db", db]).exit_code == 0
    con = open_reader(db)
    after, other_after = _ranked(con, "tenant-demo"), _ranked(con, "tenant-other")
    con.close()
    assert after == before
    assert other_after != other_before          # the new documents do count in their own tenant
    assert run_cli(["investigate", "C-102", "--db", db, "--out", tmp_path / "b"]).exit_code == 0
    assert _strip_store(tmp_path / "b" / "pack.json") == _strip_store(tmp_path / "a" / "pack.json")
    assert _strip_trace(tmp_path / "b" / "trace.jsonl") == _strip_trace(tmp_path / "a" / "trace.jsonl")


def test_evidence_types_past_the_mask_are_checked_against_objects(monkeypatch, tmp_path, store):
    """With a 1-bit mask every evidence type but the first shares the last bit; the results
    must be the same as with one bit per type."""
    from ctxcli.store import schema

    con = open_reader(store)
    want = _ranked(con, "tenant-demo")
    con.close()
    monkeypatch.setattr(schema, "MASK_BITS", 1)
    from .conftest import REPO

    db = tmp_path / "m.duckdb"
    build_store(REPO / "manifests", db, root=REPO)
    con = open_reader(db)
    try:
        assert con.execute("SELECT count(DISTINCT supports) FROM postings").fetchone()[0] <= 4
        assert _ranked(con, "tenant-demo") == want
    finally:
        con.close()


# The tokenizer's definition, written with the Unicode patterns only (no ASCII fast path).
_W = r"(?:(?!\p{Han})[\p{L}\p{N}])+"


def _reference_terms(text: str) -> list[str]:
    if text.isascii():
        text = text.lower()
    else:
        text = unicodedata.normalize("NFKC", text).casefold()
    comp = regex.findall(rf"{_W}(?:[-_.:/]{_W})+", text)
    part = regex.findall(_W, text)
    han = regex.findall(r"\p{Han}+", text)
    out = [j for j in (regex.sub(r"[-_.:/]", "_", c) for c in comp) if len(j) <= 64]
    out += [p for p in part if len(p) <= 64]
    for run in han:
        out += [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]
    return out


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aZ9-_.:/ \t\n\u00a0\u3000数据中心ßéİıＡⅣﬁ①²Ω\u0301")), max_size=40))
def test_terms_fast_path_matches_the_unicode_definition(text):
    assert terms(text) == _reference_terms(text)


# Chunks of mixed text (white space of every kind, the marker character itself, runs longer than
# a term may be, compounds across ASCII and non-ASCII chunks) against the same definition.
_CHUNK = st.sampled_from(["a", "Z9", "x" * 64, "y" * 65, "ab-cd", "a.b.", "-_", "数据", "中", "ﬁ", "é-a", "a-é",
                          "①", "Ⅳ", "\uffff", "ß", "\u0301", "ÉTÉ_2026"])
_SPACE = st.sampled_from([" ", "\t", "\n", "\x1c", "\x1f", "\x85", "\u00a0", "\u2028", "\u3000", "", "-", "."])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_CHUNK, _SPACE), max_size=12))
def test_terms_of_mixed_chunks_match_the_unicode_definition(parts):
    text = "".join(c + s for c, s in parts)
    assert terms(text) == _reference_terms(text)


# The load's per-object helpers against their definitions, on text of every kind of white space
# and format character (load/parse.py dedup_hash, util/masking.py normalise).
_TEXT = st.text(alphabet=st.sampled_from(list("aB9 \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\u00a0\u1680\u2000\u2028"
                                              "\u2029\u202f\u3000\u200b\u200d\u00ad\ufeff\u2060ßİ数\u2212\ud800")),
                max_size=40)


@settings(max_examples=300, deadline=None)
@given(_TEXT.map(lambda t: t.replace("\ud800", "")))
def test_dedup_hash_folds_white_space_as_its_definition(text):
    import re

    from ctxcli.load.parse import dedup_hash
    from ctxcli.util.canon import sha256_hex

    assert dedup_hash(text) == "sha256:" + sha256_hex(re.sub(r"\s+", " ", text).strip().casefold())


@settings(max_examples=300, deadline=None)
@given(_TEXT)
def test_mask_normalisation_drops_format_characters_as_its_definition(text):
    from ctxcli.util.masking import _DASHES, normalise

    if text.isascii():
        want = text
    else:
        t = unicodedata.normalize("NFKC", text).translate(_DASHES)
        t = "".join(c for c in t if unicodedata.category(c) != "Cf")
        want = t.encode("utf-8", "replace").decode("utf-8") if any(0xD800 <= ord(c) <= 0xDFFF for c in t) else t
    assert normalise(text) == want
