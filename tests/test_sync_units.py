"""Record-level sync (issue 29 item 7, load/sync.py): a reload of a changed source parses only
the JSONL lines and Markdown files that changed — the other units' objects are copied from the
live store — and the store, its sync file and the packs built from it equal a full load's."""

from __future__ import annotations

import json

import pytest

from ctxcli.load import sync
from ctxcli.load.build import build_store
from ctxcli.load.parsers.markdown import MarkdownParser
from ctxcli.load.parsers.records import RecordsParser
from ctxcli.load.parsers.table import TableParser

from .conftest import run_cli
from .test_incremental import _dump, _edit_jsonl
from .test_incremental_rows import ROWS, _csv, _project, _record


@pytest.fixture
def parsed(monkeypatch):
    """The units the records, markdown and table parsers parse: (source, line / file / row)."""
    seen: list[tuple[str, object]] = []
    real_rec, real_md = RecordsParser._rows, MarkdownParser._rows

    def rec(self, ls, raw, disp, line):
        seen.append((ls.manifest.source_id, line))
        return real_rec(self, ls, raw, disp, line)

    def md(self, ls, relname, p, disp):
        seen.append((ls.manifest.source_id, relname))
        return real_md(self, ls, relname, p, disp)
    real_tab = TableParser._row_objects

    def tab(self, ls, n, row, where):
        seen.append((ls.manifest.source_id, n))
        return real_tab(self, ls, n, row, where)
    monkeypatch.setattr(RecordsParser, "_rows", rec)
    monkeypatch.setattr(MarkdownParser, "_rows", md)
    monkeypatch.setattr(TableParser, "_row_objects", tab)
    return seen


def _same_as_full(root, live, tmp_path):
    full = tmp_path / "full.duckdb"
    if full.exists():
        full.unlink()
    res = build_store(root / "manifests", full, root=root, incremental=False)
    a, b = _dump(live), _dump(full)
    assert a.keys() == b.keys()
    for t in a:
        assert a[t] == b[t], t
    assert sync.path_of(live).read_bytes() == sync.path_of(full).read_bytes()
    return res


def test_a_reload_parses_only_the_changed_lines_and_files(tmp_path, parsed):
    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _project(root)
    build_store(root / "manifests", live, root=root)
    assert sorted(x for x in parsed if x[0] == "tickets") == [("tickets", i) for i in range(1, 6)]
    parsed.clear()

    # a changed line (2), a removed line (3), an added line (6); one markdown file changed
    t = root / "sources" / "tickets" / "objects.jsonl"
    rows = [_record(1), _record(2, "Ticket 2 of the checkout service: reopened."), _record(4), _record(5),
            _record(6)]
    t.write_text("".join(json.dumps(r) + "\n" for r in rows))
    b = root / "sources" / "wiki" / "b.md"
    b.write_text(b.read_text().replace("drain the node", "drain the node, then cordon it"))
    inc = build_store(root / "manifests", live, root=root)
    assert sorted(x for x in parsed if x[0] in ("tickets", "wiki")) == [
        ("tickets", 2), ("tickets", 5), ("wiki", "b.md")]       # line 5 holds the added T-6
    by = {s.source_id: s for s in inc.sources}
    assert (by["tickets"].added, by["tickets"].changed, by["tickets"].removed) == (1, 1, 1)
    assert by["tickets"].units == {"read": 2, "of": 5, "unit": "line"}
    assert by["wiki"].units == {"read": 1, "of": 2, "unit": "file"}
    assert (by["wiki"].added, by["wiki"].changed, by["wiki"].removed) == (0, 1, 0)
    parsed.clear()
    full = _same_as_full(root, live, tmp_path)
    assert {s.source_id: s.units["read"] for s in full.sources if s.units} == {"tickets": 5, "wiki": 2, "deploys": 8,
                                                                                "repo": 3}

    # a line moved up keeps its objects (new doc ids, as a full load numbers them)
    t.write_text("".join(json.dumps(r) + "\n" for r in [rows[4], *rows[:4]]))
    parsed.clear()
    build_store(root / "manifests", live, root=root)
    assert [x for x in parsed if x[0] == "tickets"] == []
    _same_as_full(root, live, tmp_path)


def test_a_unit_whose_object_a_tombstone_deleted_is_parsed_again(tmp_path, parsed):
    """A tombstoned object's row is not in the live store: its line cannot be copied."""
    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _project(root)
    tomb = root / "sources" / "tickets" / "tombstones.jsonl"
    tomb.write_text(json.dumps({"object_id": "T-4", "tenant_id": "t1", "deleted_at": "2026-03-02T10:00:00+00:00",
                                "reason": "filed twice"}) + "\n")
    build_store(root / "manifests", live, root=root)
    tomb.write_text("")                        # T-4 is back: its line must be read again
    parsed.clear()
    inc = build_store(root / "manifests", live, root=root)
    assert [x for x in parsed if x[0] == "tickets"] == [("tickets", 4)]
    assert {s.source_id: (s.added, s.removed) for s in inc.sources}["tickets"] == (1, 0)
    _same_as_full(root, live, tmp_path)


def test_a_changed_manifest_or_a_stale_sync_file_parses_the_source_whole(tmp_path, parsed):
    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _project(root)
    build_store(root / "manifests", live, root=root)
    m = root / "manifests" / "sources" / "tickets.yaml"
    m.write_text(m.read_text().replace("required_scopes: []", "required_scopes:\n- ops:read"))
    parsed.clear()
    build_store(root / "manifests", live, root=root)
    assert len([x for x in parsed if x[0] == "tickets"]) == 5        # the manifest shapes every row
    _same_as_full(root, live, tmp_path)
    # a sync file that does not describe the live store (another source digest) is not trusted
    doc = json.loads(sync.path_of(live).read_bytes())
    doc["sources"]["tickets"]["digest"] = "sha256:0"
    sync.path_of(live).write_bytes(json.dumps(doc).encode())
    _edit_jsonl(root / "sources" / "tickets" / "objects.jsonl", lambda rs: rs[:-1])
    parsed.clear()
    build_store(root / "manifests", live, root=root)
    assert len([x for x in parsed if x[0] == "tickets"]) == 4
    _same_as_full(root, live, tmp_path)


def test_an_incremental_store_gives_the_full_loads_pack_byte_for_byte(project_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_SECRET", "sync-test-secret")
    proj = project_copy
    live = tmp_path / "live.duckdb"
    build_store(proj / "manifests", live, root=proj)

    def retitle(rows):
        rows[1]["title"] = rows[1]["title"] + " (amended)"
        return rows
    _edit_jsonl(proj / "sources" / "claims-core" / "objects.jsonl", retitle)
    md = proj / "sources" / "claims-handbook" / "motor-claims-handbook-2026.md"
    md.write_text(md.read_text() + "\nAppendix: call the adjuster before noon.\n")
    csv = proj / "sources" / "pay-deployments" / "deployments.csv"
    lines = csv.read_text().splitlines(True)
    lines[2] = lines[2].replace("webhook retry backoff tuning", "webhook retry backoff tuning (reviewed)")
    csv.write_text("".join(lines))
    _add_runbook_commit(proj, tmp_path)
    inc = build_store(proj / "manifests", live, root=proj)
    by = {s.source_id: s for s in inc.sources}
    assert by["claims-core"].units["read"] == 1 and by["claims-handbook"].units == {"read": 1, "of": 2,
                                                                                      "unit": "file"}
    assert by["pay-deployments"].units == {"read": 1, "of": 4, "unit": "row"}
    # the runbook bundle: one more commit, walked from the last loaded one (tests/test_sync_git.py)
    assert by["pay-runbooks"].units["cursor"]["used"] and by["pay-runbooks"].units["cursor"]["commits"] == 1
    assert by["pay-runbooks"].units["read"] < by["pay-runbooks"].units["of"]
    assert by["pay-runbooks"].added > 0 and not by["pay-runbooks"].reused
    full = tmp_path / "full.duckdb"          # loaded twice, so that both are generation 2 (in the pack)
    build_store(proj / "manifests", full, root=proj, incremental=False)
    res = build_store(proj / "manifests", full, root=proj, incremental=False)
    assert res.store_digest == inc.store_digest and res.generation == inc.generation == 2
    packs = []
    for db in (live, full):
        out = tmp_path / f"out-{db.stem}"
        files = {}
        for case in ("C-102", "PAY-RESTORE-01"):
            r = run_cli(["investigate", case, "--db", db, "--out", out / case])
            assert r.exit_code == 0, r.stderr
            files.update({(case, f): (out / case / f).read_bytes() for f in ("pack.json", "trace.jsonl", "answer.json")})
        packs.append(files)
    assert packs[0] == packs[1]


def _add_runbook_commit(proj, tmp_path):
    """The bundled runbook bundle (examples/raw-payment/make_raw.py) with one more commit: a v6
    of the runbook, effective after v5."""
    import importlib.util
    import shutil

    from .conftest import REPO

    spec = importlib.util.spec_from_file_location("make_raw", REPO / "examples" / "raw-payment" / "make_raw.py")
    make_raw = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_raw)
    here = tmp_path / "raw"
    shutil.copytree(REPO / "examples" / "raw-payment" / "runbook-versions", here / "runbook-versions")
    v5 = (here / "runbook-versions" / "payment-recovery.v5.md").read_text()
    v6 = v5.replace("version: v5", "version: v6").replace("RB-PAY-RECOVERY-v5", "RB-PAY-RECOVERY-v6")
    front = v6.split("---\n", 2)[1]
    eff = next(line for line in front.splitlines() if line.startswith("effective:"))
    v6 = v6.replace(eff, "effective: 2026-09-01T00:00:00+08:00") + "\nv6: page the database on-call first.\n"
    (here / "runbook-versions" / "payment-recovery.v6.md").write_text(v6)
    make_raw.HERE = here
    ids = make_raw.runbooks(proj / "sources" / "pay-runbooks" / "runbooks.bundle")
    assert len(ids) == 4


def test_ctx_load_says_what_it_read_again(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    _project(root)
    monkeypatch.setenv("CTX_ROOT", str(root))
    db = tmp_path / "s.duckdb"
    assert run_cli(["load", "--manifests", root / "manifests", "--db", db]).exit_code == 0
    _edit_jsonl(root / "sources" / "tickets" / "objects.jsonl", lambda rs: rs[:2] + rs[3:])
    r = run_cli(["load", "--manifests", root / "manifests", "--db", db])
    assert r.exit_code == 0, r.stderr
    assert "changes since the previous store: tickets +0 ~0 -1" in r.stdout
    assert "read again, the rest copied from the previous store: tickets 0 of 4 line(s)" in r.stdout
    _edit_jsonl(root / "sources" / "tickets" / "objects.jsonl", lambda rs: rs[:1])
    r = run_cli(["load", "--manifests", root / "manifests", "--db", db, "--json"])
    doc = json.loads(r.stdout)
    assert {s["source_id"]: s["units"] for s in doc["sources"]}["tickets"] == {"read": 0, "of": 1, "unit": "line"}


def test_a_table_reload_maps_only_the_changed_rows(tmp_path, parsed):
    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _project(root)
    build_store(root / "manifests", live, root=root)
    csv = root / "sources" / "deploys" / "deploys.csv"
    # row 5 changed, the last row (8) removed
    rows = [(c, s, 50 if c == "CHG-5" else r) for c, s, r in ROWS[:-1]]
    csv.write_text(_csv(rows))
    parsed.clear()
    inc = build_store(root / "manifests", live, root=root)
    assert [x for x in parsed if x[0] == "deploys"] == [("deploys", 5)]
    by = {s.source_id: s for s in inc.sources}
    assert (by["deploys"].added, by["deploys"].changed, by["deploys"].removed) == (0, 1, 1)
    assert by["deploys"].units == {"read": 1, "of": 7, "unit": "row"}
    _same_as_full(root, live, tmp_path)
    # a removed first row moves every row after it: a row is known by its values, not its
    # number, so none is mapped again; each copied object takes its row's new locator, and
    # the report counts the one removed row only
    csv.write_text(_csv(rows[1:]))
    parsed.clear()
    inc = build_store(root / "manifests", live, root=root)
    assert [x for x in parsed if x[0] == "deploys"] == []
    by = {s.source_id: s for s in inc.sources}
    assert (by["deploys"].added, by["deploys"].changed, by["deploys"].removed, by["deploys"].units) == (
        0, 0, 1, {"read": 0, "of": 6, "unit": "row"})
    full = _same_as_full(root, live, tmp_path)
    assert {s.source_id: (s.added, s.changed, s.removed) for s in full.sources}["deploys"] == (6, 0, 0)
    import duckdb

    con = duckdb.connect(str(live), read_only=True)
    assert con.execute("SELECT object_id, locator FROM objects WHERE source_id = 'deploys' ORDER BY doc_id"
                       ).fetchall()[:2] == [("deploy:CHG-2", "deploys.csv#row-1"), ("deploy:CHG-3", "deploys.csv#row-2")]
    con.close()


def _shared_table(root, rows, services=("t1", "t2")):
    """A shared table (each row names its tenant) mapping an entity and a relation per row, the
    services it names in entities.jsonl beside it (test_parsers_table's mapping)."""
    from .test_parsers_table import MAPPING, SERVICES, project

    head = "change_id,tenant,service,version,deployed_at,replicas\n"
    csv = head + "".join(f"{r[0]},{r[1]},{r[2]},1.{r[0][4:]}.0,2026-03-0{1 + int(r[0][4:]) % 5} 10:00:00,"
                         f"{r[3] if len(r) > 3 else r[0][4:]}\n" for r in rows)
    ents = "".join(json.dumps({**e, "tenant_id": t}) + "\n" for t in services for e in SERVICES)
    snap = root / "sources" / "deploys"
    if not snap.exists():
        project(root, {}, {"file": "deployments.csv"}, mapping=MAPPING, tenant_id=None)
    (snap / "deployments.csv").write_text(csv)
    (snap / "entities.jsonl").write_text(ents)


SHARED = [(f"CHG-{i}", "t1" if i % 3 else "t2", "checkout" if i % 2 else "ledger") for i in range(1, 9)]


@pytest.fixture
def mapped(monkeypatch):
    """The rows whose entity and whose relations the table parser maps: (pass, row number)."""
    from ctxcli.load.parsers import table

    seen: list[tuple[str, int]] = []
    real_ent, real_rel = TableParser._row_entity, table.relations_of

    def ent(ls, em, row, where, seen_keys):
        seen.append(("entity", int(where.label.split()[-1])))
        return real_ent(ls, em, row, where, seen_keys)

    def rels(mp, row, fields, rec, tenant, where, n):
        seen.append(("relations", n))
        return real_rel(mp, row, fields, rec, tenant, where, n)
    monkeypatch.setattr(TableParser, "_row_entity", staticmethod(ent))
    monkeypatch.setattr(table, "relations_of", rels)
    return seen


def test_a_shared_table_reload_maps_entities_and_relations_of_changed_rows_only(tmp_path, parsed, mapped,
                                                                              monkeypatch):
    """A changed row, a deleted row, an added row and a row moved to another tenant: only those
    rows are mapped again — objects, entities and relations; the others' relations are the live
    store's — and the store equals a full load's, row for row. A row whose text is unchanged
    (a fact changed) keeps its derived values."""
    import ctxcli.load.derive as derive

    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _shared_table(root, SHARED)
    first = build_store(root / "manifests", live, root=root)
    assert (first.sources[0].objects, first.sources[0].relations) == (8, 8)
    assert sorted(mapped) == [("entity", n) for n in range(1, 9)] + [("relations", n) for n in range(1, 9)]
    rows = [r for r in SHARED if r[0] != "CHG-3"] + [("CHG-9", "t2", "ledger")]
    rows[1] = ("CHG-2", "t1", "checkout")          # was ledger: another relation, another body
    rows[3] = ("CHG-5", "t2", "checkout")          # was tenant t1's
    rows[5] = (*rows[5], 70)                       # CHG-7: its replicas fact only
    _shared_table(root, rows)
    parsed.clear()
    mapped.clear()
    derived: list[str] = []
    real = derive.derive

    def counting(rows, *a):
        derived.extend(f"{r['tenant_id']}/{r['object_id']}" for r in rows)
        return real(rows, *a)
    monkeypatch.setattr(derive, "derive", counting)
    monkeypatch.setenv("CTX_LOAD_WORKERS", "1")
    inc = build_store(root / "manifests", live, root=root)
    assert [n for sid, n in parsed if sid == "deploys"] == [2, 4, 6, 8]
    assert mapped == [("entity", 2), ("entity", 4), ("entity", 6), ("entity", 8), ("relations", 2),
                      ("relations", 4), ("relations", 6), ("relations", 8)]
    assert sorted(derived) == ["t1/deploy:CHG-2", "t2/deploy:CHG-5", "t2/deploy:CHG-9"]
    s = inc.sources[0]
    # by tenant and object id: CHG-9 and CHG-5 of t2 added, CHG-2 and CHG-7 changed, CHG-3 and
    # CHG-5 of t1 removed
    assert (s.added, s.changed, s.removed, s.units) == (2, 2, 2, {"read": 4, "of": 8, "unit": "row"})
    assert (s.objects, s.entities, s.relations) == (8, 12, 8)
    _same_as_full(root, live, tmp_path)


def test_a_copied_rows_relation_id_used_again_fails_as_a_full_load_does(tmp_path):
    """Another source declaring the id of a copied row's relation: the full load's duplicate."""
    import yaml

    from ctxcli.errors import LoadProblems

    from .test_incremental_rows import BASE

    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _shared_table(root, SHARED)
    build_store(root / "manifests", live, root=root)
    _shared_table(root, [("CHG-1", "t1", "ledger"), *SHARED[1:]])       # CHG-1 changed, CHG-2 … copied
    (root / "manifests" / "sources" / "tickets.yaml").write_text(yaml.safe_dump(
        {**BASE, "source_id": "tickets", "source_type": "ticket_store", "parser": "records",
         "deletion_mode": "none", "snapshot": "sources/tickets"}))
    (root / "sources" / "tickets").mkdir()
    (root / "sources" / "tickets" / "objects.jsonl").write_text(json.dumps(_record(1)) + "\n")
    (root / "sources" / "tickets" / "relations.jsonl").write_text(json.dumps(
        {"relation_id": "deploy:CHG-2:DEPLOYED_TO:service:ledger", "from": "service:checkout", "type": "CALLS",
         "to": "service:ledger", "source_version": "v1"}) + "\n")
    with pytest.raises(LoadProblems) as inc:
        build_store(root / "manifests", live, root=root)
    with pytest.raises(LoadProblems) as full:
        build_store(root / "manifests", tmp_path / "full.duckdb", root=root, incremental=False)
    assert str(inc.value) == str(full.value) == (
        "sources/tickets/relations.jsonl:1: relation_id: duplicate relation id 'deploy:CHG-2:DEPLOYED_TO:service:ledger'")


def test_a_copied_rows_relation_whose_entity_is_gone_fails_as_a_full_load_does(tmp_path, parsed):
    from ctxcli.errors import LoadProblems

    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _shared_table(root, SHARED)
    build_store(root / "manifests", live, root=root)
    _shared_table(root, SHARED, services=("t1",))       # t2's services are gone: CHG-3 and CHG-6 dangle
    with pytest.raises(LoadProblems) as inc:
        build_store(root / "manifests", live, root=root)
    with pytest.raises(LoadProblems) as full:
        build_store(root / "manifests", tmp_path / "full.duckdb", root=root, incremental=False)
    assert str(inc.value) == str(full.value)
    assert str(inc.value) == ("sources/deploys/deployments.csv:4: to: relation deploy:CHG-3:DEPLOYED_TO:service:checkout "
                              "points to unknown entity 'service:checkout' (and 1 more problem)")


def test_a_json_export_reload_maps_only_the_changed_record_and_its_items(tmp_path, monkeypatch):
    import copy

    import orjson

    from ctxcli.load.parsers import json_export

    from .test_parsers_json_export import EXPORT, project

    seen: list[int] = []
    real = json_export._record_items

    def counting(ls, disp, i, rec):
        seen.append(i)
        return real(ls, disp, i, rec)
    monkeypatch.setattr(json_export, "_record_items", counting)
    export = copy.deepcopy(EXPORT)
    t9 = copy.deepcopy(export["export"]["tickets"][0])
    t9["id"] = "INC-9"
    export["export"]["tickets"].append(t9)
    project(tmp_path, export)
    live = tmp_path / "live.duckdb"
    build_store(tmp_path / "manifests", live, root=tmp_path)
    export["export"]["tickets"][2]["timeline"][1]["text"] = "pool raised to 80"
    (tmp_path / "sources" / "incidents" / "incidents.json").write_bytes(orjson.dumps(export))
    seen.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    # the entity, objects and relation passes (this mapping declares entities and relations)
    # map INC-9 only
    assert seen == [3] + [3] + [3]
    s = inc.sources[0]
    # INC-9 and its three items: each one's version is the hash of what it was mapped from,
    # which holds its parent record
    assert (s.added, s.changed, s.removed, s.units) == (0, 4, 0, {"read": 1, "of": 3, "unit": "record"})
    _same_as_full(tmp_path, live, tmp_path)
    # the first record removed: the others move up, and a record's locator names its position
    del export["export"]["tickets"][0]
    (tmp_path / "sources" / "incidents" / "incidents.json").write_bytes(orjson.dumps(export))
    seen.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert inc.sources[0].units == {"read": 2, "of": 2, "unit": "record"}
    _same_as_full(tmp_path, live, tmp_path)


def test_a_json_export_reload_maps_entities_and_relations_of_changed_records_only(tmp_path, monkeypatch):
    """A changed record (another service: another relation), a removed one and an added one in
    a shared export: only those records are mapped again — objects, entities and relations; the
    others' relations are the live store's — and the store equals a full load's, row for row."""
    import copy

    import orjson

    from ctxcli.load.parsers import json_export

    from .test_parsers_json_export import EXPORT, project

    def ticket(n, service="checkout", org="t1"):
        t = copy.deepcopy(EXPORT["export"]["tickets"][0])
        t.update(id=f"INC-{n}", service=service, org=org, summary=f"Ticket {n}")
        return t
    seen: list[int] = []
    mapped: list[str] = []
    real_items, real_rels = json_export._record_items, json_export.relations_of

    def items(ls, disp, i, rec):
        seen.append(i)
        return real_items(ls, disp, i, rec)

    def rels(mp, view, fields, rec, tenant, where, n):
        mapped.append(where.label)
        return real_rels(mp, view, fields, rec, tenant, where, n)
    monkeypatch.setattr(json_export, "_record_items", items)
    monkeypatch.setattr(json_export, "relations_of", rels)
    export = copy.deepcopy(EXPORT)
    export["export"]["tickets"] += [ticket(9), ticket(10, "ledger"), ticket(11)]
    project(tmp_path, export)
    (tmp_path / "sources" / "incidents" / "entities.jsonl").write_text(
        "".join(json.dumps({"entity_key": f"service:{s}", "entity_type": "service", "name": s}) + "\n"
                for s in ("checkout", "ledger")))
    live = tmp_path / "live.duckdb"
    first = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert (first.sources[0].entities, first.sources[0].relations) == (6, 4)
    assert mapped == ["record 1", "record 3", "record 4", "record 5"]
    # INC-9 (record 3) changed, INC-11 (record 5) removed, INC-12 added in its place
    export["export"]["tickets"][2] = ticket(9, "ledger")
    export["export"]["tickets"][4] = ticket(12)
    (tmp_path / "sources" / "incidents" / "incidents.json").write_bytes(orjson.dumps(export))
    seen.clear()
    mapped.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert seen == [3, 5] + [3, 5] + [3, 5]          # the entity, objects and relation passes
    assert mapped == ["record 3", "record 5"]
    s = inc.sources[0]
    assert s.units == {"read": 2, "of": 5, "unit": "record"}
    assert (s.objects, s.entities, s.relations) == (16, 6, 4)
    _same_as_full(tmp_path, live, tmp_path)
    # a relation problem in a changed record after copied ones: the full load's message (a
    # nested export's relation names its item's number among the records and their items)
    from ctxcli.errors import LoadProblems

    export["export"]["tickets"][4] = ticket(12, "gone")
    (tmp_path / "sources" / "incidents" / "incidents.json").write_bytes(orjson.dumps(export))
    seen.clear()
    with pytest.raises(LoadProblems) as inc_err:
        build_store(tmp_path / "manifests", live, root=tmp_path)
    assert seen[:2] == [5, 5]           # read per unit: not a full load's fallback
    with pytest.raises(LoadProblems) as full_err:
        build_store(tmp_path / "manifests", tmp_path / "full2.duckdb", root=tmp_path, incremental=False)
    assert str(inc_err.value) == str(full_err.value)
    assert str(inc_err.value).startswith("sources/incidents/incidents.json:13: ")
