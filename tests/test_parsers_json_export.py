"""parser: json-export — tickets with nested timelines, findings and a root cause."""

from __future__ import annotations

import orjson
import pytest
import yaml

from ctxcli.errors import InputError
from ctxcli.load.build import build_store, collect
from ctxcli.store.db import open_reader

BASE = {
    "source_id": "incidents", "tenant_id": "t1", "source_type": "incident_store", "owner_team": "sre",
    "classification": "internal", "trust_level": "operational", "required_scopes": [],
    "allowed_purposes": ["incident_review"], "refresh_sla": "24h", "deletion_mode": "none",
    "parser": "json-export", "parser_version": "1", "schema_version": 1, "enabled": True,
    "snapshot": "sources/incidents",
}
EXPORT = {"export": {"tickets": [
    {"id": "INC-7", "org": "t1", "service": "checkout", "opened": "2026-07-23T10:05:00+08:00",
     "summary": "Checkout errors",
     "timeline": [{"at": "2026-07-23T10:02:00+08:00", "text": "first PAY-4097"},
                  {"at": "2026-07-23T10:09:00+08:00", "text": "pool raised"}],
     "root_cause": {"text": "pool exhausted", "confirmed": True}},
    {"id": "INC-8", "org": "t2", "service": "secret-svc", "opened": "bad", "summary": "other tenant",
     "timeline": [{"at": "x", "text": "SECRET"}]},
]}}
MAPPING = {"object_id": "{id}", "title": "{id}: {summary}", "body": "{summary}", "observed_at": "opened",
           "subject_id": "incident:{id}", "tenant_id": "org", "keys": ["id"], "set": {"object_type": "incident"},
           "entity": {"key": "incident:{id}", "type": "incident", "name": "{id}"},
           "relations": [{"type": "AFFECTS", "from": "incident:{id}", "to": "service:{service}"}]}
NESTED = [
    {"path": "timeline", "mapping": {"object_id": "{parent_id}-TL-{index}", "title": "{parent.id} timeline",
                                     "body": "{at}: {text}", "observed_at": "at", "valid_from": "at",
                                     "subject_id": "incident:{parent.id}", "set": {"object_type": "timeline_event"}}},
    {"path": "root_cause", "mapping": {"object_id": "{parent_id}-RC", "title": "{parent.id} root cause",
                                       "body": "{text}", "observed_at": "parent.opened",
                                       "facts": {"confirmed": {"from": "confirmed", "type": "bool"}},
                                       "set": {"object_type": "root_cause"}}},
]


def project(tmp_path, export=EXPORT, **manifest):
    snap = tmp_path / "sources" / "incidents"
    snap.mkdir(parents=True)
    (snap / "incidents.json").write_bytes(orjson.dumps(export))
    (snap / "entities.jsonl").write_text('{"entity_key": "service:checkout", "entity_type": "service", '
                                         '"name": "checkout"}\n')
    (tmp_path / "manifests" / "sources").mkdir(parents=True)
    m = {**BASE, "json_export": {"file": "incidents.json", "records": "export.tickets", "nested": NESTED},
         "mapping": MAPPING, **manifest}
    (tmp_path / "manifests" / "sources" / "incidents.yaml").write_text(yaml.safe_dump(m, sort_keys=False))


def objects(tmp_path):
    loaded, _ = collect(tmp_path / "manifests", tmp_path, None)
    return [o for ls in loaded for o in ls.iter_objects()]


def test_one_object_per_ticket_and_per_nested_item_linked_to_the_parent(tmp_path):
    project(tmp_path)
    obs = objects(tmp_path)
    assert [(o["object_id"], o["object_type"], o["locator"]) for o in obs] == [
        ("INC-7", "incident", "incidents.json#export.tickets[0]"),
        ("INC-7-TL-1", "timeline_event", "incidents.json#export.tickets[0].timeline[0]"),
        ("INC-7-TL-2", "timeline_event", "incidents.json#export.tickets[0].timeline[1]"),
        ("INC-7-RC", "root_cause", "incidents.json#export.tickets[0].root_cause[0]"),
    ]
    assert obs[1]["content"] == "2026-07-23T10:02:00+08:00: first PAY-4097"
    assert orjson.loads(obs[3]["facts"]) == {"confirmed": True, "parent_id": "INC-7"}
    assert "SECRET" not in repr(obs) and "secret-svc" not in repr(obs)     # t2's ticket is never read


def test_entities_and_relations_of_the_export_load(tmp_path):
    project(tmp_path)
    db = tmp_path / "s.duckdb"
    build_store(tmp_path / "manifests", db, root=tmp_path)
    con = open_reader(db)
    try:
        rels = con.execute("SELECT relation_id, evidence_object_id FROM relations").fetchall()
    finally:
        con.close()
    assert rels == [("INC-7:AFFECTS:service:checkout", "INC-7")]


def test_a_problem_names_the_record_and_item(tmp_path):
    bad = orjson.loads(orjson.dumps(EXPORT))
    bad["export"]["tickets"][0]["timeline"][1]["at"] = "2026-07-23 10:09"
    project(tmp_path, bad)
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == ("sources/incidents/incidents.json: record 1 timeline[1]: field 'at': naive time "
                            "'2026-07-23T10:09:00' and the mapping declares no timezone")


def test_records_path_must_be_an_array(tmp_path):
    project(tmp_path, {"export": {"tickets": {}}})
    with pytest.raises(InputError, match="json_export.records 'export.tickets' is not an array"):
        objects(tmp_path)
