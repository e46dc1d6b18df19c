"""Relations copied from the live store on a reload (issue 36, relsync): a copied relation gets
exactly the checks a parse makes, so the reload gives a full load's store, or its error word
for word. (Copying a changed source's unchanged relations.jsonl is not done yet: see
benchmarks/results/performance-history.md "Reload: an unchanged relations file is copied, not parsed".)"""

from __future__ import annotations

import json

import yaml


from .conftest import run_cli
from .test_incremental_rows import BASE, _record

PEOPLE = [{"entity_key": f"person:{n}", "tenant_id": "t1", "entity_type": "person", "name": n.title()}
          for n in ("ana", "bo", "cy")]
SERVICES = [{"entity_key": f"service:{n}", "tenant_id": "t1", "entity_type": "service", "name": n}
            for n in ("checkout", "ledger")]
# R-i: attested by ticket T-i
RELS = [{"relation_id": f"R-{i}", "tenant_id": "t1", "from": f"service:{s}", "type": "OWNED_BY", "to": f"person:{p}",
         "evidence_object_id": f"T-{i}", "source_version": "v1"}
        for i, s, p in ((1, "checkout", "ana"), (2, "ledger", "bo"), (3, "checkout", "cy"), (4, "ledger", "ana"))]


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _project(root, **tickets):
    """Two records sources: ``people`` (its entities) and ``tickets`` (objects T-1..T-5, its
    services, and relations.jsonl: service -> person, each attested by a ticket)."""
    ms = root / "manifests" / "sources"
    ms.mkdir(parents=True)
    for sid, extra in (("people", {}), ("tickets", tickets)):
        (ms / f"{sid}.yaml").write_text(yaml.safe_dump({
            **BASE, "source_id": sid, "snapshot": f"sources/{sid}", "source_type": "ticket_store",
            "parser": "records", "deletion_mode": "tombstone", **extra}))
        (root / "sources" / sid).mkdir(parents=True)
    _jsonl(root / "sources" / "people" / "objects.jsonl", [{**_record(9), "object_id": "P-9"}])
    _jsonl(root / "sources" / "people" / "entities.jsonl", PEOPLE)
    t = root / "sources" / "tickets"
    _jsonl(t / "objects.jsonl", [_record(i) for i in range(1, 6)])
    _jsonl(t / "entities.jsonl", SERVICES)
    _jsonl(t / "relations.jsonl", RELS)


def _load(root, db, *extra):
    r = run_cli(["load", "--manifests", root / "manifests", "--db", db, *extra])
    return r


def test_a_reused_sources_relation_whose_evidence_is_gone_fails_as_a_full_load_does(tmp_path):
    """tickets is unchanged (reused, reuse.copy_rows); the object its R-5 cites leaves people
    and a tombstone names it: that evidence is unknown, not deleted."""
    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _project(root)
    _jsonl(root / "sources" / "tickets" / "relations.jsonl",
           RELS + [{**RELS[0], "relation_id": "R-5", "evidence_object_id": "P-9"}])
    assert _load(root, live).exit_code == 0
    _jsonl(root / "sources" / "people" / "objects.jsonl", [])
    _jsonl(root / "sources" / "people" / "tombstones.jsonl", [
        {"object_id": "P-9", "tenant_id": "t1", "deleted_at": "2026-03-02T10:00:00+00:00", "reason": "gone"}])
    r = _load(root, live)
    assert r.exit_code == 2 and "relation R-5 cites unknown evidence object 'P-9'" in r.stderr
    full = _load(root, tmp_path / "full.duckdb", "--full")
    assert (full.exit_code, full.stderr) == (r.exit_code, r.stderr)
