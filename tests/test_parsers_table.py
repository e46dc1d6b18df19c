"""parser: table — rows of CSV, TSV, Parquet, JSON(L), Excel and SQLite mapped onto objects,
entities and relations; shared multi-tenant tables; time zones; positions in errors."""

from __future__ import annotations

import sqlite3

import orjson
import pytest
import yaml

from ctxcli.errors import InputError
from ctxcli.load.build import build_store, collect
from ctxcli.store.db import open_reader

BASE = {
    "source_id": "deploys", "tenant_id": "t1", "source_type": "deployment_log", "owner_team": "release",
    "classification": "internal", "trust_level": "authoritative", "required_scopes": [],
    "allowed_purposes": ["incident_review"], "refresh_sla": "24h", "deletion_mode": "none",
    "parser": "table", "parser_version": "1", "schema_version": 1, "enabled": True,
    "snapshot": "sources/deploys",
}
MAPPING = {
    "object_id": "deploy:{change_id}", "title": "Deployment {change_id} of {service}",
    "body": "{change_id} deployed {version} to {service} at {deployed_at}.",
    "keys": ["change_id"], "set": {"object_type": "deployment"}, "subject_id": "change:{change_id}",
    "observed_at": "deployed_at", "valid_from": "deployed_at", "timezone": "Europe/Berlin",
    "facts": {"service": "service", "replicas": {"from": "replicas", "type": "int"}},
    "tenant_id": "tenant",
    "entity": {"key": "change:{change_id}", "type": "change", "name": "{change_id}"},
    "relations": [{"type": "DEPLOYED_TO", "from": "change:{change_id}", "to": "service:{service}"}],
}
CSV = """change_id,tenant,service,version,deployed_at,replicas
CHG-1,t1,checkout,1.2.0,2026-03-01 10:00:00,3
CHG-2,t2,ledger,9.9.9,2026-03-01 11:00:00,1
CHG-3,t1,checkout,1.2.1,2026-03-02T09:30:00+00:00,4
"""
SERVICES = [{"entity_key": "service:checkout", "entity_type": "service", "name": "checkout"},
            {"entity_key": "service:ledger", "entity_type": "service", "name": "ledger"}]


def project(tmp_path, files: dict[str, str | bytes], table: dict, mapping=MAPPING, **manifest):
    snap = tmp_path / "sources" / "deploys"
    snap.mkdir(parents=True)
    for name, data in files.items():
        (snap / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    (tmp_path / "manifests" / "sources").mkdir(parents=True)
    m = {**BASE, "table": table, "mapping": mapping, **manifest}
    (tmp_path / "manifests" / "sources" / "deploys.yaml").write_text(yaml.safe_dump(m, sort_keys=False))


def loaded(tmp_path):
    return collect(tmp_path / "manifests", tmp_path, None)[0]


def objects(tmp_path):
    return [o for ls in loaded(tmp_path) for o in ls.iter_objects()]


def test_csv_rows_become_objects_of_the_sources_tenant_only(tmp_path):
    project(tmp_path, {"deployments.csv": CSV}, {"file": "deployments.csv"})
    obs = objects(tmp_path)
    assert [o["object_id"] for o in obs] == ["deploy:CHG-1", "deploy:CHG-3"]      # CHG-2 is tenant t2's
    a = obs[0]
    assert a["title"] == "Deployment CHG-1 of checkout"
    assert a["content"] == "CHG-1 deployed 1.2.0 to checkout at 2026-03-01 10:00:00."
    assert a["observed_us"] == 1_772_355_600 * 1_000_000         # 10:00 in Berlin = 09:00Z
    assert orjson.loads(a["facts"]) == {"replicas": 3, "service": "checkout"}
    assert a["keys"] == ["CHG-1"]
    assert a["locator"] == "deployments.csv#row-1"
    assert obs[1]["observed_us"] == 1_772_443_800 * 1_000_000    # an aware value keeps its offset


def test_no_message_or_row_of_another_tenant_leaks(tmp_path):
    bad = CSV.replace("CHG-2,t2,ledger,9.9.9,2026-03-01 11:00:00,1", "CHG-2,t2,SECRET-LEDGER,9.9.9,not a time,x")
    project(tmp_path, {"deployments.csv": bad}, {"file": "deployments.csv"})
    obs = objects(tmp_path)
    assert [o["object_id"] for o in obs] == ["deploy:CHG-1", "deploy:CHG-3"]
    assert "SECRET" not in repr(obs)


def test_a_shared_table_without_a_source_tenant_gives_each_row_its_own(tmp_path):
    project(tmp_path, {"deployments.csv": CSV}, {"file": "deployments.csv"}, tenant_id=None)
    assert [(o["tenant_id"], o["object_id"]) for o in objects(tmp_path)] == [
        ("t1", "deploy:CHG-1"), ("t2", "deploy:CHG-2"), ("t1", "deploy:CHG-3")]


def test_naive_time_without_a_zone_names_row_and_column(tmp_path):
    project(tmp_path, {"deployments.csv": CSV}, {"file": "deployments.csv"},
            mapping={k: v for k, v in MAPPING.items() if k != "timezone"})
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == ("sources/deploys/deployments.csv:2: row 1: column 'deployed_at': naive time "
                            "'2026-03-01T10:00:00' and the mapping declares no timezone")


def test_a_naive_typed_time_without_a_zone_names_row_and_column(tmp_path):
    """Parquet keeps its own types: a naive TIMESTAMP column needs the mapping's zone too."""
    import duckdb

    project(tmp_path, {"deployments.csv": CSV}, {"file": "d.parquet"},
            mapping={k: v for k, v in MAPPING.items() if k != "timezone"})
    duckdb.sql(f"COPY (SELECT change_id, tenant, service, version, replicas, "
               f"strptime(replace(deployed_at, 'T', ' ')[:19], '%Y-%m-%d %H:%M:%S') AS deployed_at "
               f"FROM read_csv('{tmp_path}/sources/deploys/deployments.csv', all_varchar=true)) "
               f"TO '{tmp_path}/sources/deploys/d.parquet' (FORMAT parquet)")
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == ("sources/deploys/d.parquet: row 1: column 'deployed_at': naive time "
                            "'2026-03-01T10:00:00' and the mapping declares no timezone")


def test_a_bad_typed_fact_names_row_line_and_column(tmp_path):
    project(tmp_path, {"deployments.csv": CSV.replace(",4\n", ",four\n")}, {"file": "deployments.csv"})
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == "sources/deploys/deployments.csv:4: facts.replicas: row 3: column 'replicas': 'four' is not a int"


def test_a_missing_column_in_a_template_is_an_error(tmp_path):
    project(tmp_path, {"deployments.csv": CSV.replace("CHG-3,t1,checkout,", "CHG-3,t1,,")}, {"file": "deployments.csv"})
    with pytest.raises(InputError, match=r"deployments.csv:4: object_id|deployments.csv:4: title: row 3: column 'service'"):
        objects(tmp_path)


def test_a_blank_column_in_a_template_is_an_error(tmp_path):
    """Blank (white space only) is empty, in a template as in a plain field."""
    project(tmp_path, {"deployments.csv": CSV.replace("CHG-3,t1,checkout,", "CHG-3,t1,\t ,")}, {"file": "deployments.csv"})
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == ("sources/deploys/deployments.csv:4: title: row 3: column 'service' (in the title "
                            "template 'Deployment {change_id} of {service}') is missing or empty (write "
                            "{service?} if it may be, or {service|default})")


def test_entities_and_relations_from_columns_load_into_the_graph(tmp_path):
    ents = "\n".join(orjson.dumps(e).decode() for e in SERVICES) + "\n"
    project(tmp_path, {"deployments.csv": CSV, "entities.jsonl": ents}, {"file": "deployments.csv"})
    db = tmp_path / "s.duckdb"
    build_store(tmp_path / "manifests", db, root=tmp_path)
    con = open_reader(db)
    try:
        ents = con.execute("SELECT tenant_id, entity_key FROM entities ORDER BY entity_key").fetchall()
        rels = con.execute("SELECT relation_id, rel_type, evidence_object_id FROM relations ORDER BY 1").fetchall()
    finally:
        con.close()
    assert ents == [("t1", "change:CHG-1"), ("t1", "change:CHG-3"), ("t1", "service:checkout"), ("t1", "service:ledger")]
    assert rels == [("deploy:CHG-1:DEPLOYED_TO:service:checkout", "DEPLOYED_TO", "deploy:CHG-1"),
                    ("deploy:CHG-3:DEPLOYED_TO:service:checkout", "DEPLOYED_TO", "deploy:CHG-3")]


def test_tsv_jsonl_and_parquet_read_the_same_rows(tmp_path):
    import duckdb

    tsv = CSV.replace(",", "\t")
    jsonl = "".join(orjson.dumps(dict(zip(CSV.split("\n")[0].split(","), ln.split(",")))).decode() + "\n"
                    for ln in CSV.strip().split("\n")[1:])
    for i, (name, data) in enumerate((("d.tsv", tsv), ("d.jsonl", jsonl))):
        sub = tmp_path / str(i)
        project(sub, {name: data}, {"file": name})
        assert [o["object_id"] for o in objects(sub)] == ["deploy:CHG-1", "deploy:CHG-3"]
    sub = tmp_path / "pq"
    project(sub, {"deployments.csv": CSV}, {"file": "d.parquet"})
    duckdb.sql(f"COPY (SELECT * FROM read_csv('{sub}/sources/deploys/deployments.csv', all_varchar=true)) "
               f"TO '{sub}/sources/deploys/d.parquet' (FORMAT parquet)")
    assert [o["object_id"] for o in objects(sub)] == ["deploy:CHG-1", "deploy:CHG-3"]


def test_sqlite_table_and_read_only_query(tmp_path):
    db = tmp_path / "catalog.sqlite"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE deploys (change_id TEXT, tenant TEXT, service TEXT, version TEXT, deployed_at TEXT, "
              "replicas INTEGER)")
    for ln in CSV.strip().split("\n")[1:]:
        c.execute("INSERT INTO deploys VALUES (?,?,?,?,?,?)", ln.split(","))
    c.commit()
    c.close()
    data = db.read_bytes()
    project(tmp_path / "a", {"catalog.sqlite": data}, {"file": "catalog.sqlite", "table": "deploys"})
    assert [o["locator"] for o in objects(tmp_path / "a")] == ["catalog.sqlite:deploys#row-1", "catalog.sqlite:deploys#row-3"]
    project(tmp_path / "b", {"catalog.sqlite": data},
            {"file": "catalog.sqlite", "query": "SELECT * FROM deploys WHERE service = 'checkout' ORDER BY change_id DESC"})
    assert [o["object_id"] for o in objects(tmp_path / "b")] == ["deploy:CHG-3", "deploy:CHG-1"]
    project(tmp_path / "c", {"catalog.sqlite": data}, {"file": "catalog.sqlite", "query": "DELETE FROM deploys"})
    with pytest.raises(InputError, match="table.query must be one read-only SELECT statement"):
        objects(tmp_path / "c")


def test_excel_sheet(tmp_path):
    import duckdb

    from ctxcli.load.parsers.table import _ext_file

    project(tmp_path, {"deployments.csv": CSV}, {"file": "d.xlsx", "sheet": "Sheet1"})
    con = duckdb.connect()
    con.execute(f"LOAD '{_ext_file('duckdb_extension_excel', 'excel')}'")
    con.execute(f"COPY (SELECT * FROM read_csv('{tmp_path}/sources/deploys/deployments.csv', all_varchar=true)) "
                f"TO '{tmp_path}/sources/deploys/d.xlsx' (FORMAT xlsx, HEADER true, SHEET 'Sheet1')")
    con.close()
    assert [o["object_id"] for o in objects(tmp_path)] == ["deploy:CHG-1", "deploy:CHG-3"]


def test_a_table_without_mapping_is_refused_with_the_manifest_field(tmp_path):
    project(tmp_path, {"deployments.csv": CSV}, {"file": "deployments.csv"}, mapping=None)
    with pytest.raises(InputError, match="mapping: parser table needs a mapping"):
        loaded(tmp_path)


def test_row_groups_keep_keys_and_column_names_for_long_tables(tmp_path):
    """table.row_groups (issue 29 item 3): consecutive rows of one key become one object of at
    most `rows` rows — header + rows, so every value keeps its column, and every row's key."""
    csv = ("service,minute,errors,tenant\n"
           "checkout,10:00,3,t1\ncheckout,10:01,5,t1\ncheckout,10:02,9,t1\n"
           "ledger,10:00,0,t2\nledger,10:01,1,t1\n")
    mapping = {"object_id": "errors:{service}", "title": "Errors of {service}", "keys": ["{service}@{minute}"],
               "tenant_id": "tenant", "observed_at": "minute", "set": {"object_type": "error_rates",
                                                                      "observed_at": "2026-03-01T10:00:00Z"},
               "facts": {"service": "service"}}
    mapping.pop("observed_at")
    project(tmp_path, {"errors.csv": csv}, {"file": "errors.csv", "row_groups": {
        "by": ["service"], "rows": 2, "columns": ["minute", "errors"]}}, mapping=mapping)
    obs = objects(tmp_path)
    assert [(o["object_id"], o["locator"]) for o in obs] == [
        ("errors:checkout#rows-1-2", "errors.csv#rows-1-2"), ("errors:checkout#rows-3-3", "errors.csv#rows-3-3"),
        ("errors:ledger#rows-5-5", "errors.csv#rows-5-5")]           # row 4 is tenant t2's
    assert obs[0]["content"] == "minute | errors\n10:00 | 3\n10:01 | 5"
    assert obs[0]["keys"] == ["checkout@10:00", "checkout@10:01"]
    assert orjson.loads(obs[0]["facts"]) == {"service": "checkout"}
    assert obs[0]["source_version"].startswith("rows:") and obs[0]["source_version"] != obs[1]["source_version"]
    # a reload (row groups are read whole): a group whose text changed is derived again, one
    # whose text did not keeps its derived values; the store equals a full load's
    from .test_incremental import _dump

    live, full = tmp_path / "live.duckdb", tmp_path / "full.duckdb"
    build_store(tmp_path / "manifests", live, root=tmp_path)
    (tmp_path / "sources" / "deploys" / "errors.csv").write_text(csv.replace("10:01,5,t1", "10:01,7,t1"))
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert (inc.sources[0].added, inc.sources[0].changed, inc.sources[0].removed) == (0, 1, 0)
    build_store(tmp_path / "manifests", full, root=tmp_path, incremental=False)
    a, b = _dump(live), _dump(full)
    assert a.keys() == b.keys() and all(a[t] == b[t] for t in a)


def test_row_groups_refuse_relations_and_name_a_missing_key_column(tmp_path):
    project(tmp_path, {"deploys.csv": CSV}, {"file": "deploys.csv", "row_groups": {"by": ["service"]}})
    with pytest.raises(InputError, match="a group of rows attests no relation"):
        loaded(tmp_path)
    m = {k: v for k, v in MAPPING.items() if k != "relations"}
    (tmp_path / "sources").rename(tmp_path / "old")
    (tmp_path / "manifests").rename(tmp_path / "oldm")
    project(tmp_path, {"deploys.csv": CSV}, {"file": "deploys.csv", "row_groups": {"by": ["team"]}}, mapping=m)
    with pytest.raises(InputError, match="'team' \\(table.row_groups.by\\) is not a column"):
        objects(tmp_path)


@pytest.mark.parametrize("query,named", [
    ("SELECT d.*, (SELECT content FROM read_text('{secret}')) AS s FROM deploys d", "calls the table function read_text()"),
    ("SELECT * FROM deploys WHERE change_id IN (SELECT file FROM glob('/etc/*'))", "calls the table function glob()"),
    ("SELECT * FROM read_csv('{secret}')", "calls the table function read_csv()"),
    ("SELECT d.*, current_setting('home_directory') AS h FROM deploys d", "calls current_setting()"),
    ("SELECT * FROM system.main.duckdb_settings()", "calls the table function duckdb_settings()"),
])
def test_a_table_query_reads_only_its_declared_database(tmp_path, query, named):
    """Issue 46 item 3: a query calling a file or host function is refused, naming the function,
    before anything is read; the store never holds the host file's content."""
    secret = tmp_path / "secret.key"
    secret.write_text("TOP-SECRET-46\n")
    db = tmp_path / "catalog.sqlite"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE deploys (change_id TEXT, tenant TEXT, service TEXT, version TEXT, deployed_at TEXT, "
              "replicas INTEGER)")
    for ln in CSV.strip().split("\n")[1:]:
        c.execute("INSERT INTO deploys VALUES (?,?,?,?,?,?)", ln.split(","))
    c.commit()
    c.close()
    project(tmp_path / "p", {"catalog.sqlite": db.read_bytes()},
            {"file": "catalog.sqlite", "query": query.format(secret=secret)})
    with pytest.raises(InputError) as ei:
        objects(tmp_path / "p")
    assert named in str(ei.value) and "may read only the tables of its declared database" in str(ei.value)
    assert ei.value.field == "table.query"


def test_a_table_query_runs_with_external_access_off(tmp_path, monkeypatch):
    """The second line: were the parser check skipped, DuckDB itself refuses to read a file."""
    from ctxcli.load.parsers import table

    monkeypatch.setattr(table, "_check_query", lambda *a: None)
    secret = tmp_path / "secret.key"
    secret.write_text("TOP-SECRET-46\n")
    db = tmp_path / "catalog.sqlite"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE deploys (change_id TEXT, tenant TEXT, service TEXT, version TEXT, deployed_at TEXT, "
              "replicas INTEGER)")
    for ln in CSV.strip().split("\n")[1:]:
        c.execute("INSERT INTO deploys VALUES (?,?,?,?,?,?)", ln.split(","))
    c.commit()
    c.close()
    project(tmp_path / "p", {"catalog.sqlite": db.read_bytes()},
            {"file": "catalog.sqlite", "query": f"SELECT d.*, (SELECT content FROM read_text('{secret}')) AS s "
                                                "FROM deploys d"})
    with pytest.raises(InputError, match="file system operations are disabled"):
        objects(tmp_path / "p")


def _wide(n: int, sep: str = ",") -> str:
    """CSV's columns plus padding columns up to ``n`` in all."""
    head = CSV.splitlines()
    pad = [f"x{i}" for i in range(n - 6)]
    return "\n".join(sep.join(line.split(",") + (pad if i == 0 else ["" for _ in pad]))
                     for i, line in enumerate(head)) + "\n"


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_a_table_is_capped_at_2048_columns_before_duckdb_reads_it(tmp_path, fmt, monkeypatch):
    """2,048 columns load; 2,049 are refused from the header line alone (one line, the file and
    line named), before DuckDB is asked to read the file; so is a header longer than 1 MB."""
    import duckdb

    from ctxcli.load.parsers import table

    sep = "\t" if fmt == "tsv" else ","
    project(tmp_path, {f"d.{fmt}": _wide(2048, sep)}, {"file": f"d.{fmt}"})
    assert [o["object_id"] for o in objects(tmp_path)] == ["deploy:CHG-1", "deploy:CHG-3"]
    calls = []
    real = duckdb.connect
    monkeypatch.setattr(duckdb, "connect", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    (tmp_path / "sources" / "deploys" / f"d.{fmt}").write_text(_wide(2049, sep))
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == f"sources/deploys/d.{fmt}:1: 2049 columns, over the 2048-column limit"
    assert calls == []
    (tmp_path / "sources" / "deploys" / f"d.{fmt}").write_text("a" * (1024 * 1024 + 1) + "\nb\n")
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == f"sources/deploys/d.{fmt}:1: the header line is longer than 1 MB"
    assert table.MAX_COLUMNS == 2048


def test_a_json_table_over_2048_columns_is_refused(tmp_path):
    rows = [{"change_id": "CHG-1", "tenant": "t1", "service": "checkout", "version": "1",
             "deployed_at": "2026-03-01 10:00:00", "replicas": 3, **{f"x{i}": i for i in range(n)}}
            for n in (2043,)]
    project(tmp_path, {"d.json": orjson.dumps(rows)}, {"file": "d.json"})
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == "sources/deploys/d.json: 2049 columns, over the 2048-column limit"
    rows[0].pop("x0")
    (tmp_path / "sources" / "deploys" / "d.json").write_bytes(orjson.dumps(rows))
    assert [o["object_id"] for o in objects(tmp_path)] == ["deploy:CHG-1"]
