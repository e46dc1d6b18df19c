from __future__ import annotations

from ctxcli.load.fts_text import query_terms, terms
from ctxcli.store.db import open_reader

from .conftest import REPO, run_cli


def _ft(con, text, tenant="tenant-demo"):
    rows = con.execute(
        "SELECT o.object_id FROM postings p JOIN term_stats d ON d.termid = p.termid AND d.tenant_no = p.tenant_no "
        "JOIN objects o ON o.doc_id = p.doc_id WHERE list_contains(?, d.term) AND o.tenant_id = ? "
        "GROUP BY o.object_id HAVING count(DISTINCT d.term) = len(?) ORDER BY o.object_id",
        [query_terms(text), tenant, query_terms(text)]).fetchall()
    return [r[0] for r in rows]


def test_tokenizer_keeps_identifiers_and_cjk_bigrams():
    assert terms("C-102") == ["c_102", "c", "102"]
    assert terms("ACCIDENT_CERTIFICATE") == ["accident_certificate", "accident", "certificate"]
    assert terms("2026.1") == ["2026_1", "2026", "1"]
    assert terms("事故认定") == ["事故", "故认", "认定"]


def test_load_counts_per_source(store):
    con = open_reader(store)
    try:
        counts = dict(con.execute("SELECT source_id, n_objects FROM sources").fetchall())
        n = con.execute("SELECT count(*) FROM objects").fetchone()[0]
    finally:
        con.close()
    assert counts["claims-rules"] == 6
    assert counts["claims-core"] == 7        # CASE-C-101 … CASE-C-106 and AUDIT-C102-STATUS-HISTORY
    assert sum(counts.values()) == n


def test_fulltext_finds_identifiers_and_chinese(store):
    con = open_reader(store)
    try:
        assert "CASE-C-102" in _ft(con, "C-102")
        assert "RULE-MCS-2026.1" in _ft(con, "ACCIDENT_CERTIFICATE")
        assert "DOC-C102-003" in _ft(con, "事故")
    finally:
        con.close()


def test_other_tenant_case_is_stored_separately(store):
    con = open_reader(store)
    try:
        rows = con.execute("SELECT tenant_id, entity_key FROM entities WHERE entity_key = 'case:C-102' "
                           "ORDER BY tenant_id").fetchall()
    finally:
        con.close()
    assert rows == [("tenant-demo", "case:C-102"), ("tenant-other", "case:C-102")]


def test_tombstoned_object_is_gone_everywhere(store):
    con = open_reader(store)
    try:
        assert con.execute("SELECT count(*) FROM objects WHERE object_id = 'DOC-C102-009'").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM relations WHERE evidence_object_id = 'DOC-C102-009'").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM tombstones WHERE object_id = 'DOC-C102-009'").fetchone()[0] == 1
    finally:
        con.close()


def test_store_digest_is_stable(tmp_path):
    from ctxcli.load.build import build_store

    a = build_store(REPO / "manifests", tmp_path / "a.duckdb", root=REPO)
    b = build_store(REPO / "manifests", tmp_path / "b.duckdb", root=REPO)
    assert a.store_digest == b.store_digest


def test_cli_load_json(tmp_path):
    r = run_cli(["load", "--db", tmp_path / "s.duckdb", "--json"])
    assert r.exit_code == 0
    assert '"store_digest": "sha256:' in r.stdout


def test_detector_flags_exactly_the_bundled_attacks():
    """Over every bundled object and document: the two planted attacks are flagged, no rule,
    runbook, policy or case text is."""
    import json

    from ctxcli.injection import scan_fields

    flagged = []
    for p in sorted((REPO / "sources").rglob("*")):
        if p.name == "objects.jsonl":
            for line in p.read_text(encoding="utf-8").splitlines():
                d = json.loads(line)
                fields = [("title", d["title"]), ("content", d["content"])]
                fields += [(k, v) for k, v in d.get("facts", {}).items() if isinstance(v, str)]
                if scan_fields(fields):
                    flagged.append(d["object_id"])
        elif p.suffix == ".md":
            if scan_fields([("content", p.read_text(encoding="utf-8"))]):
                flagged.append(p.name)
    assert flagged == ["MAIL-7781", "WIKI-PAYAPI-OPS-NOTES"]


def test_sources_command_table_and_json(store):
    import json

    r = run_cli(["sources", "--json"])
    assert r.exit_code == 0
    rows = {s["source_id"]: s for s in json.loads(r.stdout)["sources"]}
    assert rows["external-mailbox"]["trust_level"] == "untrusted"
    assert rows["claims-rules"]["required_scopes"] == ["policy:read"]
    assert rows["partner-claims"]["tenant_id"] == "tenant-other"
    r = run_cli(["sources"])
    assert r.exit_code == 0
    assert "external-mailbox" in r.stdout and "untrusted" in r.stdout


def test_failed_load_leaves_previous_store_untouched(project_copy, tmp_path):
    db = tmp_path / "s.duckdb"
    assert run_cli(["load", "--manifests", project_copy / "manifests", "--db", db]).exit_code == 0
    before, sync_before = db.read_bytes(), (tmp_path / "s.duckdb.sync").read_bytes()
    # the last source alphabetically breaks after every other source has been read
    bad = project_copy / "sources" / "risk-signals" / "objects.jsonl"
    bad.write_text(bad.read_text() + '{"object_id": "X"\n')
    r = run_cli(["load", "--manifests", project_copy / "manifests", "--db", db])
    assert r.exit_code == 2
    assert r.stderr.startswith("ctx: error: sources/risk-signals/objects.jsonl:")
    assert db.read_bytes() == before and (tmp_path / "s.duckdb.sync").read_bytes() == sync_before
    # Only the store, its generations, its sync file (load/sync.py), its secret and its writer lock
    # file (kept between loads; it holds no data), and the erasures the first load's tombstones
    # recorded (with the ledger's lock).
    assert sorted(x.name for x in tmp_path.iterdir()) == ["erasures.jsonl", "ledger.lock", "proj", "s.duckdb",
                                                          "s.duckdb.generations", "s.duckdb.lock", "s.duckdb.sync",
                                                          "secret.key"]
    assert [x.name for x in (tmp_path / "s.duckdb.generations").iterdir()] == ["000001.duckdb"]
