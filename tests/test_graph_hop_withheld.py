"""Issue 48 item 6, the graph walk's next hop: a walk that passes its seed but whose next hop
leads to an entity only sources withheld from the subject declare stopped silently — the
evidence type read ``not_found`` though the path exists for a reader with more access. The gap
now says ``withheld_for_access`` with what would admit that entity's declaring source, naming
the seed, the hop and the relation type (the request and the playbook name those), never the
entity's key, id, name or source (docs/gates.md). On both backends.

The project (written here): hop-ops (scope incident:read) declares the incident, service
svc-a and the relations incident -MENTIONS-> svc-a -OWNED_BY-> the team; hop-people (scope
people:read) alone declares the team and holds the ownership record about it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxcli import api

from . import pgserver
from .conftest import REPO

SECRET = "test-secret-for-graph-hop-withheld"
TENANT = "tenant-hop"
HIDDEN = "team:hush-squad"      # B: the subject does not know it exists
T = "2026-09-01T10:00:00+00:00"


def _source(sid: str, scopes: list[str]) -> str:
    return (f"source_id: {sid}\ntenant_id: {TENANT}\nsource_type: service_catalog\nowner_team: ops\n"
            f"classification: internal\ntrust_level: authoritative\nrequired_scopes: [{', '.join(scopes)}]\n"
            "allowed_purposes: [incident_review]\nrefresh_sla: 30d\ndeletion_mode: none\nparser: records\n"
            f"parser_version: \"1\"\nschema_version: 1\nenabled: true\nsnapshot: sources/{sid}\n")


def _entity(key: str, name: str) -> dict:
    return {"entity_key": key, "tenant_id": TENANT, "entity_type": key.split(":")[0], "name": name, "aliases": []}


def _object(oid: str, otype: str, subject: str, content: str, supports: list[str], facts: dict) -> dict:
    return {"object_id": oid, "tenant_id": TENANT, "source_version": "v1", "object_type": otype,
            "subject_id": subject, "title": content[:40], "content": content, "locator": f"hop://{oid}",
            "valid_from": "2026-01-01T00:00:00+00:00", "valid_to": None, "observed_at": "2026-01-02T00:00:00+00:00",
            "required_scopes": [], "supports": supports, "facts": facts, "keys": [oid], "supersedes": None}


def _relation(rid: str, src: str, rtype: str, dst: str) -> dict:
    return {"relation_id": rid, "tenant_id": TENANT, "from": src, "type": rtype, "to": dst,
            "valid_from": "2026-01-01T00:00:00+00:00", "valid_to": None, "evidence_object_id": None,
            "source_version": "v1", "confidence": 1.0}


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def make_project(root: Path, *, owned_by: str = "hop-ops") -> Path:
    """The two-source project; ``owned_by``: the source that registers svc-a -OWNED_BY-> team
    (None: hop-ops registers svc-b -OWNED_BY-> team and svc-a -SUPPORTED_BY-> team instead,
    neither on the template's path; "expired": hop-ops registers it, ended before as_of)."""
    (root / "manifests" / "sources").mkdir(parents=True)
    (root / "manifests" / "playbooks").mkdir()
    shutil.copy(REPO / "manifests" / "playbooks" / "incident-owner-lookup.yaml", root / "manifests" / "playbooks")
    (root / "ctx.toml").write_text('[project]\nstore = ".ctx/ctx.duckdb"\nruns = "runs"\n', encoding="utf-8")
    (root / "manifests" / "sources" / "hop-ops.yaml").write_text(_source("hop-ops", ["incident:read"]), encoding="utf-8")
    (root / "manifests" / "sources" / "hop-people.yaml").write_text(_source("hop-people", ["people:read"]),
                                                                    encoding="utf-8")
    owner = [_relation("REL-HOP-OWNER", "service:svc-a" if owned_by else "service:svc-b", "OWNED_BY", HIDDEN)]
    if owned_by is None:
        owner.append(_relation("REL-HOP-SUPPORT", "service:svc-a", "SUPPORTED_BY", HIDDEN))
    if owned_by == "expired":
        owner[0]["valid_to"] = "2026-06-01T00:00:00+00:00"
    _jsonl(root / "sources" / "hop-ops" / "entities.jsonl",
           [_entity("incident:INC-HOP-1", "INC-HOP-1"), _entity("service:svc-a", "svc-a"),
            _entity("service:svc-b", "svc-b")])
    _jsonl(root / "sources" / "hop-ops" / "objects.jsonl", [_object(
        "INC-HOP-1", "incident", "incident:INC-HOP-1", "Customers could not complete payment: svc-a failed.",
        ["incident_record"], {"error_code": "HTTP-502"})])
    _jsonl(root / "sources" / "hop-ops" / "relations.jsonl",
           [_relation("REL-HOP-MENTIONS", "incident:INC-HOP-1", "MENTIONS", "service:svc-a")]
           + (owner if owned_by != "hop-people" else []))
    _jsonl(root / "sources" / "hop-people" / "entities.jsonl", [_entity(HIDDEN, "Hush Squad")])
    _jsonl(root / "sources" / "hop-people" / "objects.jsonl", [_object(
        "OWN-HOP-A", "ownership", HIDDEN, "Service svc-a is owned by team Hush Squad.", ["service_owner"],
        {"service": "svc-a", "owner_team": "hush-squad"})])
    _jsonl(root / "sources" / "hop-people" / "relations.jsonl", owner if owned_by == "hop-people" else [])
    return root


def _run(db, scopes: list[str]):
    from datetime import datetime

    spec = api.AdhocSpec(playbook="incident-owner-lookup", tenant_id=TENANT, seeds=["incident:INC-HOP-1"])
    return api.investigate(api.InvestigateOptions(adhoc=spec, db=db, subject_id="oncall-01", scopes=scopes,
                                                  purpose="incident_review", as_of=datetime.fromisoformat(T)))


GAP = {"from": "incident:INC-HOP-1", "hop": 2, "relation": "OWNED_BY", "needs_scopes": ["people:read"],
       "allowed_purposes": []}


def check_gap(db) -> None:
    """What the tests assert on either backend: the gap, its words, no trace of B."""
    from ctxcli.answer.markdown import answer_markdown
    from ctxcli.engine.render import gap_reason

    res = _run(db, ["incident:read"])
    miss = {m["type"]: m for m in res.pack["missing"]}
    assert miss["service_owner"]["reason"] == "withheld_for_access"
    assert miss["service_owner"]["withheld"] == {"count": 0, "needs_scopes": [], "allowed_purposes": [],
                                                 "by_gate": {}, "entity": GAP}
    gap = {m["type"]: m for m in res.answer["missing_evidence"]}["service_owner"]
    assert (gap["reason"], gap["withheld_entity"]) == ("withheld_for_access", GAP)
    assert gap_reason(miss["service_owner"]) == (
        "withheld for access (the entity OWNED_BY leads to at hop 2 from incident:INC-HOP-1 is declared only "
        "by a source withheld from you: it needs scope people:read)")
    assert ("withheld for access (the entity OWNED_BY leads to at hop 2 from incident:INC-HOP-1 is declared "
            "only by a source withheld from you: it needs scope people:read)") in answer_markdown(res.answer, res.pack)
    # B's key, name, records and source appear in no output file (the pack's store digests list
    # every source of the tenant, as before: the gap and the answer never name it)
    for name, data in api.output_files(res).items():
        text = data.decode("utf-8").lower()
        assert "hush" not in text and "own-hop-a" not in text, name
    assert "hop-people" not in json.dumps(res.pack["missing"]) + json.dumps(res.answer)
    # a reader of the people source walks the path and finds the owner
    res = _run(db, ["incident:read", "people:read"])
    assert "service_owner" not in {m["type"] for m in res.pack["missing"]}
    assert [e["object_id"] for e in res.pack["evidence"] if "service_owner" in e["supports"]] == ["OWN-HOP-A"]
    assert "withheld_entity" not in json.dumps(res.answer)


def test_a_walk_whose_next_hop_only_a_withheld_source_declares_is_a_withheld_gap(tmp_path, monkeypatch):
    _load(tmp_path, monkeypatch)
    check_gap(None)


NOT_FOUND = [None, "hop-people", "expired"]


def check_not_found(db) -> None:
    res = _run(db, ["incident:read"])
    miss = {m["type"]: m for m in res.pack["missing"]}
    assert (miss["service_owner"]["reason"], "withheld" in miss["service_owner"]) == ("not_found", False)
    assert "withheld_entity" not in json.dumps(res.answer)


def _load(tmp_path, monkeypatch, owned_by="hop-ops", db=None) -> Path:
    monkeypatch.setenv("CTX_SECRET", SECRET)
    root = make_project(tmp_path / "proj", owned_by=owned_by)
    monkeypatch.setenv("CTX_ROOT", str(root))
    monkeypatch.setenv("CTX_DB", str(root / ".ctx" / "ctx.duckdb"))
    if db is not None:
        api.store_init(db)
    api.load(manifests=root / "manifests", db=db)
    return root


@pytest.mark.parametrize("owned_by", NOT_FOUND)
def test_no_path_or_a_relation_the_subject_may_not_see_stays_not_found(tmp_path, monkeypatch, owned_by):
    """Without the relation on the template's path (another service's, or another relation
    type), when only the withheld source registers it (the subject may not know the relation
    exists), or when it ended before as_of, nothing is hinted at: ``not_found`` as before."""
    _load(tmp_path, monkeypatch, owned_by)
    check_not_found(None)


@pytest.fixture(scope="module")
def server():
    bindir = pgserver.find_bin()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (no initdb/pg_ctl): apt-get install -y postgresql")
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")
    srv = pgserver.session_server(bindir)
    yield srv
    srv.stop()


def test_a_withheld_next_hop_is_a_withheld_gap_on_postgresql(server, tmp_path, monkeypatch):
    url = server.url(server.new_database())
    _load(tmp_path, monkeypatch, db=url)
    check_gap(url)


@pytest.mark.parametrize("owned_by", NOT_FOUND)
def test_no_path_or_a_relation_the_subject_may_not_see_stays_not_found_on_postgresql(server, tmp_path, monkeypatch,
                                                                                    owned_by):
    url = server.url(server.new_database())
    _load(tmp_path, monkeypatch, owned_by, db=url)
    check_not_found(url)


def test_both_backends_return_the_same_withheld_edges(server, tmp_path, monkeypatch):
    """store.withheld_edges, the statement behind the gap, row for row on both backends."""
    from datetime import datetime

    from ctxcli.engine.gates import Access
    from ctxcli.engine.retrieve import walk_access
    from ctxcli.store import open_store

    url = server.url(server.new_database())
    root = _load(tmp_path, monkeypatch, db=url)
    api.load(manifests=root / "manifests")
    as_of = int(datetime.fromisoformat(T).timestamp()) * 1_000_000
    got = []
    for db in (root / ".ctx" / "ctx.duckdb", url):
        con = open_store(db)
        try:
            walk = walk_access(con, Access(frozenset({"incident:read"}), "incident_review", "confidential"))
            nodes = [path[-1] for _, _, path, _, _ in con.walk(
                steps=[("t", 1, "MENTIONS", "service", 0.0, True), ("t", 2, "OWNED_BY", "team", 0.0, True)],
                starts=[("t", "incident")], seeds=["incident:INC-HOP-1"], tenant=TENANT, max_hops=2,
                as_of_us=as_of, fanout=10, **walk)]
            got.append(con.withheld_edges(nodes, tenant=TENANT, as_of_us=as_of, access_ok=walk["access_ok"]))
        finally:
            con.close()
    assert len(got[0]) == 1 and got[0] == got[1]
    assert got[0][0][1:3] + got[0][0][4:] == ("OWNED_BY", "team", 1.0, None, HIDDEN)
