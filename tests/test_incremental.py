"""Incremental load: reusing unchanged sources gives exactly the store a full load gives."""

from __future__ import annotations

import json

import duckdb

from ctxcli.load.build import build_store

from .conftest import run_cli


def _dump(db) -> dict[str, list]:
    """Every table of the store, every row, in a total order."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [t for (t,) in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in tables}
    finally:
        con.close()


def _load_both(proj, live, tmp_path, name):
    """Incremental load onto ``live``, and a full load of the same files into a fresh store."""
    inc = build_store(proj / "manifests", live, root=proj)
    full = build_store(proj / "manifests", tmp_path / f"full-{name}.duckdb", root=proj, incremental=False)
    assert inc.store_digest == full.store_digest
    a, b = _dump(live), _dump(tmp_path / f"full-{name}.duckdb")
    assert a.keys() == b.keys()
    for t in a:
        assert a[t] == b[t], t
    assert not full.reused
    return inc


def _edit_jsonl(path, fn):
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = fn(rows)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))


def test_incremental_load_equals_full_load(project_copy, tmp_path):
    proj, live = project_copy, tmp_path / "live.duckdb"
    first = build_store(proj / "manifests", live, root=proj)
    every = [s.source_id for s in first.sources]
    assert first.reused == []

    # nothing changed: every source reused
    res = _load_both(proj, live, tmp_path, "same")
    assert res.reused == every

    # a changed record in one source
    def retitle(rows):
        rows[1]["title"] = rows[1]["title"] + " (amended)"
        return rows
    _edit_jsonl(proj / "sources" / "claims-core" / "objects.jsonl", retitle)
    res = _load_both(proj, live, tmp_path, "changed")
    # a source that declares entity linking (shop-incidents) is read again by every load that
    # builds a new store: its links depend on the other sources' entities (load/link.py)
    assert res.reused == [s for s in every if s not in ("claims-core", "shop-incidents")]

    # a new tombstone in one source: its object, index entries and relations go
    tomb = proj / "sources" / "claims-documents" / "tombstones.jsonl"
    tomb.write_text(tomb.read_text() + json.dumps({
        "object_id": "DOC-C102-003", "tenant_id": "tenant-demo", "deleted_at": "2026-07-10T10:00:00+08:00",
        "reason": "withdrawn"}) + "\n")
    res = _load_both(proj, live, tmp_path, "tombstone")
    assert res.reused == [s for s in every if s not in ("claims-documents", "shop-incidents")]
    con = duckdb.connect(str(live), read_only=True)
    assert con.execute("SELECT count(*) FROM objects WHERE object_id = 'DOC-C102-003'").fetchone()[0] == 0
    con.close()

    # every tombstone line removed again: the deleted objects are back, as in a full load
    tomb.write_text("")
    res = _load_both(proj, live, tmp_path, "untombstone")
    assert res.reused == [s for s in every if s not in ("claims-documents", "shop-incidents")]

    # a source in the middle disappears: later sources' ids shift, rows still reused
    (proj / "manifests" / "sources" / "claims-handbook.yaml").unlink()
    res = _load_both(proj, live, tmp_path, "removed")
    assert "claims-handbook" not in [s.source_id for s in res.sources]
    assert "risk-signals" in res.reused


def test_collision_with_a_reused_source_reports_the_full_load_error(project_copy, tmp_path):
    proj = project_copy
    db = proj / ".ctx" / "ctx.duckdb"
    assert run_cli(["load", "--db", db]).exit_code == 0
    full_err = None
    # risk-signals gains an object id that claims-core (unchanged, reused) already has
    def dup(rows):
        r = dict(rows[0])
        r["object_id"] = "CASE-C-101"
        r["tenant_id"] = "tenant-demo"
        return rows + [r]
    _edit_jsonl(proj / "sources" / "risk-signals" / "objects.jsonl", dup)
    before = db.read_bytes()
    r = run_cli(["load", "--db", db])
    assert r.exit_code == 2
    r_full = run_cli(["load", "--full", "--db", tmp_path / "other.duckdb"])
    full_err = r_full.stderr
    assert r.stderr == full_err
    assert "duplicate object id 'CASE-C-101'" in r.stderr
    assert db.read_bytes() == before


def test_cli_says_which_sources_it_reused(project_copy):
    db = project_copy / ".ctx" / "ctx.duckdb"
    r = run_cli(["load", "--db", db, "--json"])
    assert json.loads(r.stdout)["reused"] == []
    r = run_cli(["load", "--db", db, "--json"])
    doc = json.loads(r.stdout)
    assert doc["reused"] == [s["source_id"] for s in doc["sources"]] and all(s["reused"] for s in doc["sources"])
    r = run_cli(["load", "--db", db])
    assert r.exit_code == 0
    assert "reused 20 unchanged source(s) from the previous store: claims-core, claims-documents" in r.stdout
    r = run_cli(["load", "--db", db, "--full", "--json"])
    assert json.loads(r.stdout)["reused"] == []


def test_worker_pool_in_small_batches_gives_the_same_store(project_copy, tmp_path, monkeypatch):
    """Token counts, shadow text, dedup hashes, vectors and the objects/doc_terms lines made by
    forked workers in many small batches (load/derive.py) give the store one process gives;
    and an incremental load with a changed record and a tombstone, made that way, equals a
    full load."""
    import ctxcli.load.build as build

    proj = project_copy
    monkeypatch.setenv("CTX_LOAD_WORKERS", "1")
    build_store(proj / "manifests", tmp_path / "one.duckdb", root=proj, incremental=False)
    monkeypatch.setenv("CTX_LOAD_WORKERS", "2")
    monkeypatch.setattr(build, "BATCH", 7)
    live = tmp_path / "live.duckdb"
    build_store(proj / "manifests", live, root=proj, incremental=False)
    a, b = _dump(tmp_path / "one.duckdb"), _dump(live)
    assert a.keys() == b.keys() and len(a["vectors"]) > 7 * 3
    for t in a:
        assert a[t] == b[t], t

    def retitle(rows):
        rows[-1]["title"] = rows[-1]["title"] + " (amended)"
        return rows
    _edit_jsonl(proj / "sources" / "claims-core" / "objects.jsonl", retitle)
    tomb = proj / "sources" / "claims-documents" / "tombstones.jsonl"
    tomb.write_text(tomb.read_text() + json.dumps({
        "object_id": "DOC-C102-003", "tenant_id": "tenant-demo", "deleted_at": "2026-07-10T10:00:00+08:00",
        "reason": "withdrawn"}) + "\n")
    res = _load_both(proj, live, tmp_path, "pool")
    assert "claims-core" not in res.reused and "claims-documents" not in res.reused and res.reused
