"""A load reports every problem at once (up to a limit), each with its position; a dangling
reference fails the load unless the manifest says ``on_dangling: skip``."""

from __future__ import annotations

import json

import yaml

from ctxcli.store.db import open_reader

from .conftest import run_cli

BASE = {
    "source_id": "ops", "tenant_id": "t1", "source_type": "ops_log", "owner_team": "ops",
    "classification": "internal", "trust_level": "operational", "required_scopes": [],
    "allowed_purposes": ["incident_review"], "refresh_sla": "24h", "deletion_mode": "none",
    "parser": "records", "parser_version": "1", "schema_version": 1, "enabled": True,
    "snapshot": "sources/ops",
}


def obj(i, **kw):
    return {"object_id": f"O-{i}", "source_version": "1", "object_type": "note", "title": f"n{i}",
            "content": "text", "locator": f"ops://{i}", "observed_at": "2026-01-01T00:00:00Z", **kw}


def project(tmp_path, monkeypatch, objects, relations=(), entities=(), **manifest):
    snap = tmp_path / "sources" / "ops"
    snap.mkdir(parents=True)
    for name, recs in (("objects.jsonl", objects), ("relations.jsonl", relations), ("entities.jsonl", entities)):
        if recs:
            (snap / name).write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in recs))
    (tmp_path / "manifests" / "sources").mkdir(parents=True)
    (tmp_path / "manifests" / "sources" / "ops.yaml").write_text(yaml.safe_dump({**BASE, **manifest}))
    monkeypatch.setenv("CTX_ROOT", str(tmp_path))
    return tmp_path / "s.duckdb"


def load(tmp_path, db):
    return run_cli(["load", "--manifests", tmp_path / "manifests", "--db", db])


def test_every_bad_record_is_reported_in_one_load(tmp_path, monkeypatch):
    db = project(tmp_path, monkeypatch, [obj(1), "{not json", obj(3, observed_at="2026-01-01T00:00:00"),
                                         obj(4), obj(1)])
    r = load(tmp_path, db)
    assert r.exit_code == 2
    assert r.stderr.splitlines() == [
        "ctx: error: sources/ops/objects.jsonl:2: invalid JSON: unexpected character, expected a string key",
        "ctx: error: sources/ops/objects.jsonl:3: observed_at: observed_at '2026-01-01T00:00:00' has no timezone "
        "offset (naive timestamps are not accepted)",
        "ctx: error: sources/ops/objects.jsonl:5: object_id: duplicate object id 'O-1' (first at "
        "sources/ops/objects.jsonl:1)",
    ]
    assert not db.exists()


def test_the_report_stops_at_the_limit(tmp_path, monkeypatch):
    db = project(tmp_path, monkeypatch, ["[]"] * 70)
    r = load(tmp_path, db)
    lines = r.stderr.splitlines()
    assert r.exit_code == 2 and len(lines) == 51
    assert lines[-1] == "ctx: error: … stopped after 50 problems"


ENTS = [{"entity_key": "svc:a", "entity_type": "svc", "name": "a"}]
RELS = [{"relation_id": "R1", "from": "svc:a", "type": "USES", "to": "svc:ghost", "source_version": "1"},
        {"relation_id": "R2", "from": "svc:a", "type": "USES", "to": "svc:a", "evidence_object_id": "O-9",
         "source_version": "1"}]


def test_a_dangling_reference_fails_the_load_by_default(tmp_path, monkeypatch):
    db = project(tmp_path, monkeypatch, [obj(1)], RELS, ENTS)
    r = load(tmp_path, db)
    assert r.exit_code == 2
    assert r.stderr.splitlines() == [
        "ctx: error: sources/ops/relations.jsonl:1: to: relation R1 points to unknown entity 'svc:ghost'",
        "ctx: error: sources/ops/relations.jsonl:2: evidence_object_id: relation R2 cites unknown evidence "
        "object 'O-9'"]


def test_on_dangling_skip_loads_the_rest_and_says_what_it_skipped(tmp_path, monkeypatch):
    db = project(tmp_path, monkeypatch, [obj(1)], RELS + [{"relation_id": "R3", "from": "svc:a", "type": "USES",
                                                            "to": "svc:a", "source_version": "1"}],
                 ENTS, on_dangling="skip")
    r = load(tmp_path, db)
    assert r.exit_code == 0, r.stderr
    assert r.stderr.splitlines() == [
        "ctx: warning: skipped (on_dangling: skip): sources/ops/relations.jsonl:1: to: relation R1 points to "
        "unknown entity 'svc:ghost'",
        "ctx: warning: skipped (on_dangling: skip): sources/ops/relations.jsonl:2: evidence_object_id: relation "
        "R2 cites unknown evidence object 'O-9'"]
    con = open_reader(db)
    try:
        assert con.execute("SELECT relation_id FROM relations").fetchall() == [("R3",)]
    finally:
        con.close()


def test_on_dangling_skip_says_one_line_per_kind_and_each_row_with_verbose(tmp_path, monkeypatch):
    """Three relations to unknown entities are one line; the one citing an unknown object (the
    only one of its kind) is itself; --verbose and --json give each."""
    ghosts = [{"relation_id": f"G{i}", "from": "svc:a", "type": "USES", "to": f"svc:ghost{i}",
               "source_version": "1"} for i in (1, 2, 3)]
    db = project(tmp_path, monkeypatch, [obj(1)], ghosts + [RELS[1]], ENTS, on_dangling="skip")
    r = load(tmp_path, db)
    assert r.exit_code == 0, r.stderr
    assert r.stderr.splitlines() == [
        "ctx: warning: skipped (on_dangling: skip): 3 relations of ops naming an unknown entity, the first "
        "sources/ops/relations.jsonl:1: to: relation G1 points to unknown entity 'svc:ghost1' (each one: --verbose)",
        "ctx: warning: skipped (on_dangling: skip): sources/ops/relations.jsonl:4: evidence_object_id: relation "
        "R2 cites unknown evidence object 'O-9'"]
    each = [f"ctx: warning: skipped (on_dangling: skip): sources/ops/relations.jsonl:{i}: to: relation G{i} points "
            f"to unknown entity 'svc:ghost{i}'" for i in (1, 2, 3)] + [
        "ctx: warning: skipped (on_dangling: skip): sources/ops/relations.jsonl:4: evidence_object_id: relation "
        "R2 cites unknown evidence object 'O-9'"]
    r = run_cli(["load", "--manifests", tmp_path / "manifests", "--db", db, "--full", "--verbose"])
    assert r.exit_code == 0 and r.stderr.splitlines() == each, r.stderr
    r = run_cli(["load", "--manifests", tmp_path / "manifests", "--db", db, "--full", "--json"])
    assert json.loads(r.stdout)["warnings"] == [w.removeprefix("ctx: warning: ") for w in each]
