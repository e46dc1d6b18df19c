"""parser: table on PostgreSQL (issue 29 item 3): a table or a read-only query of a database,
read through DuckDB's postgres extension from its PyPI wheel (never INSTALLed by name); the
rows join the source's digest, so a changed row is a changed source and an unchanged database
a reused one. A throw-away server runs on 127.0.0.1 (tests/pgserver.py)."""

from __future__ import annotations

import sys

import orjson
import pytest
import yaml

from ctxcli.errors import InputError
from ctxcli.load.build import build_store, collect

from . import pgserver

BIN = pgserver.find_bin()
pytestmark = [
    pytest.mark.skipif(BIN is None, reason="PostgreSQL is not installed (no initdb/pg_ctl on PATH or under "
                                           "/usr/lib/postgresql/*/bin): apt-get install -y postgresql"),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX server"),
]
BASE = {
    "source_id": "deploys", "tenant_id": "t1", "source_type": "deployment_log", "owner_team": "release",
    "classification": "internal", "trust_level": "authoritative", "required_scopes": [],
    "allowed_purposes": ["incident_review"], "refresh_sla": "24h", "deletion_mode": "none",
    "parser": "table", "parser_version": "1", "schema_version": 1, "enabled": True,
    "snapshot": "sources/deploys",
}
MAPPING = {
    "object_id": "deploy:{change_id}", "title": "Deployment {change_id} of {service}",
    "body": "{change_id} deployed {version} to {service}.", "keys": ["change_id"],
    "set": {"object_type": "deployment"}, "observed_at": "deployed_at", "timezone": "Europe/Berlin",
    "facts": {"service": "service", "replicas": {"from": "replicas", "type": "int"}}, "tenant_id": "tenant",
}


@pytest.fixture(scope="module")
def server():
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")
    pytest.importorskip("duckdb_extension_postgres_scanner",
                        reason="pip install duckdb-extension-postgres_scanner==1.5.5 (the test extra)")
    srv = pgserver.session_server(BIN)
    yield srv
    srv.stop()


@pytest.fixture
def db(server):
    import psycopg

    name = server.new_database()
    with psycopg.connect(server.url(name), autocommit=True) as c:
        c.execute("CREATE TABLE deploys(change_id text PRIMARY KEY, tenant text, service text, version text, "
                  "deployed_at timestamp, replicas integer)")
        c.execute("INSERT INTO deploys VALUES ('CHG-1', 't1', 'checkout', '1.2.0', '2026-03-01 10:00', 3), "
                  "('CHG-2', 't2', 'ledger', '9.9.9', '2026-03-01 11:00', 1), "
                  "('CHG-3', 't1', 'checkout', '1.2.1', '2026-03-02 09:30', 4)")
    return server.url(name)


def project(tmp_path, table: dict, **manifest):
    (tmp_path / "sources" / "deploys").mkdir(parents=True, exist_ok=True)
    (tmp_path / "manifests" / "sources").mkdir(parents=True, exist_ok=True)
    m = {**BASE, "table": table, "mapping": MAPPING, **manifest}
    (tmp_path / "manifests" / "sources" / "deploys.yaml").write_text(yaml.safe_dump(m, sort_keys=False))


def objects(tmp_path):
    loaded, _ = collect(tmp_path / "manifests", tmp_path, None)
    return [o for ls in loaded for o in ls.iter_objects()]


def test_a_postgresql_table_becomes_objects_of_the_sources_tenant_only(tmp_path, db):
    project(tmp_path, {"format": "postgres", "database": db, "table": "deploys"})
    obs = objects(tmp_path)
    assert [o["object_id"] for o in obs] == ["deploy:CHG-1", "deploy:CHG-3"]      # CHG-2 is tenant t2's
    o = obs[0]
    assert (o["title"], o["content"]) == ("Deployment CHG-1 of checkout", "CHG-1 deployed 1.2.0 to checkout.")
    assert o["observed_us"] == 1_772_355_600_000_000           # 2026-03-01 10:00 Europe/Berlin = 09:00Z
    assert orjson.loads(o["facts"]) == {"service": "checkout", "replicas": 3}
    assert o["locator"] == "postgres:deploys#row-1"


def test_a_read_only_query_and_its_refusals(tmp_path, db):
    project(tmp_path, {"format": "postgres", "database": db,
                       "query": "SELECT * FROM deploys WHERE replicas > 3"})
    assert [o["object_id"] for o in objects(tmp_path)] == ["deploy:CHG-3"]
    project(tmp_path, {"format": "postgres", "database": db, "query": "DELETE FROM deploys"})
    with pytest.raises(InputError, match="table.query must be one read-only SELECT statement"):
        objects(tmp_path)


def test_a_changed_row_is_a_changed_source_and_reloads_only_that_row(tmp_path, db):
    import psycopg

    project(tmp_path, {"format": "postgres", "database": db, "table": "deploys"})
    store = tmp_path / "s.duckdb"
    build_store(tmp_path / "manifests", store, root=tmp_path)
    again = build_store(tmp_path / "manifests", store, root=tmp_path)
    assert again.reused == ["deploys"]                              # the database did not change
    with psycopg.connect(db, autocommit=True) as c:
        c.execute("UPDATE deploys SET version = '1.2.2' WHERE change_id = 'CHG-3'")
    res = build_store(tmp_path / "manifests", store, root=tmp_path)
    assert res.reused == []
    assert [(s.added, s.changed, s.removed) for s in res.sources] == [(0, 1, 0)]


def test_a_password_in_the_manifest_is_refused_and_an_address_error_shows_none(tmp_path, server):
    project(tmp_path, {"format": "postgres", "database": server.url("nope", password="hunter22"), "table": "t"})
    with pytest.raises(InputError, match="a manifest never holds a password") as e:
        collect(tmp_path / "manifests", tmp_path, None)
    assert "hunter22" not in str(e.value)
    project(tmp_path, {"format": "postgres", "database": server.url("no_such_db"), "table": "t"})
    with pytest.raises(InputError, match="cannot open the PostgreSQL database") as e:
        objects(tmp_path)
    assert e.value.field == "table.database"
