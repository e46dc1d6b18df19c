"""Store generations on the embedded store (issue 33 item 1): every load publishes one, the
newest N are kept, a pack names its generation, replay rebuilds against it."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Counting, run_cli
from .test_postmortem import _edit_record


def _load(*args) -> dict:
    r = run_cli(["load", "--json", *args])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)


def _retitle(proj: Path, n: int) -> None:
    _edit_record(proj, "sources/claims-rules/objects.jsonl", "RULE-MCS-2026.1",
                 lambda r: {**{k: v for k, v in r.items() if k != "content_hash"},
                            "title": f"{r['title']} (edit {n})"})


def test_week_old_pack_replays_byte_identical_on_its_generation_after_three_reloads(project_copy, tmp_path):
    (project_copy / "ctx.toml").write_text("[generations]\nkeep = 4\n", encoding="utf-8")
    assert _load()["generation"] == 1
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "old"])
    assert r.exit_code == 0, r.stderr
    pack = json.loads((tmp_path / "old" / "pack.json").read_text())
    assert pack["store"]["generation"] == 1
    for n in (1, 2, 3):
        _retitle(project_copy, n)
        assert _load()["generation"] == n + 1

    r = run_cli(["replay", tmp_path / "old", "--json", "--out", tmp_path / "again"])
    assert r.exit_code == 0, r.stdout
    doc = json.loads(r.stdout)
    assert doc["status"] == "identical" and doc["byte_identical"] is True
    assert doc["generation"] == {"recorded": 1, "kept": True, "used": 1, "current": 4, "current_differs": True,
                                 "sources_changed": ["claims-rules"]}
    for name in ("pack.json", "trace.jsonl", "answer.json"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "old" / name).read_bytes(), name

    r = run_cli(["replay", tmp_path / "old"])
    assert r.exit_code == 0
    assert ("rebuilt against generation 1 (the pack's); the current generation is 4: its sources claims-rules "
            "differ from the pack's") in r.stdout

    r = run_cli(["replay", tmp_path / "old", "--against", "current", "--json"])
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["status"] == "drifted" and doc["generation"]["used"] == 4
    assert [s["source_id"] for s in doc["store"]["sources_changed"]] == ["claims-rules"]


def test_prune_keeps_newest_and_replay_says_the_generation_is_gone(project_copy, tmp_path):
    _load()
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "old"]).exit_code == 0
    _retitle(project_copy, 1)
    _load()
    _retitle(project_copy, 2)
    assert _load()["generation"] == 3
    gens = project_copy / ".ctx" / "ctx.duckdb.generations"
    assert sorted(p.name for p in gens.iterdir()) == ["000001.duckdb", "000002.duckdb", "000003.duckdb"]
    (gens / "notes.txt").write_text("not ctx's")        # never removed: ctx did not write it

    r = run_cli(["store", "generations", "--json"])
    rows = json.loads(r.stdout)["generations"]
    assert [(g["generation"], g["current"]) for g in rows] == [(3, True), (2, False), (1, False)]
    assert rows[0]["extra_bytes"] == 0 and rows[1]["extra_bytes"] == rows[1]["bytes"] > 0

    r = run_cli(["store", "prune", "--keep", "1", "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout) == {"kept": [3], "dropped": [2, 1]}
    assert sorted(p.name for p in gens.iterdir()) == ["000003.duckdb", "notes.txt"]

    r = run_cli(["replay", tmp_path / "old"])
    assert r.exit_code == 1          # rebuilt on the current store: the edits are drift
    assert "generation 1 (the pack's) is no longer kept; rebuilt against the current generation 3" in r.stdout


def test_load_keeps_the_configured_number(project_copy):
    (project_copy / "ctx.toml").write_text("[generations]\nkeep = 2\n", encoding="utf-8")
    _load()
    for n in (1, 2):
        _retitle(project_copy, n)
        doc = _load()
    assert doc["generation"] == 3 and doc["pruned_generations"] == [1]
    _retitle(project_copy, 3)
    assert _load("--keep-generations", "1")["pruned_generations"] == [3, 2]
    gens = project_copy / ".ctx" / "ctx.duckdb.generations"
    assert [p.name for p in gens.iterdir()] == ["000004.duckdb"]
    # the live store is the newest generation's file: no copy
    assert (gens / "000004.duckdb").stat().st_ino == (project_copy / ".ctx" / "ctx.duckdb").stat().st_ino


def test_bad_keep_settings_are_one_line_errors(project_copy):
    (project_copy / "ctx.toml").write_text("[generations]\nkeep = 0\n", encoding="utf-8")
    r = run_cli(["load"])
    assert r.exit_code == 2 and "generations.keep: must be a whole number of at least 1" in r.stderr
    assert r.stderr.count("\n") == 1
    (project_copy / "ctx.toml").write_text("[generations]\nkept = 2\n", encoding="utf-8")
    r = run_cli(["load"])
    assert r.exit_code == 2 and "ctx.toml: generations.kept: unknown setting (known: keep)" in r.stderr
    (project_copy / "ctx.toml").write_text("[generations]\nkeep = 2\n", encoding="utf-8")
    r = run_cli(["load", "--keep-generations", "0"])
    assert r.exit_code == 2 and "--keep-generations must be a whole number of at least 1" in r.stderr


def test_bad_retention_settings_are_one_line_errors(project_copy):
    (project_copy / "ctx.toml").write_text("[retention]\ntext_days = -1\n", encoding="utf-8")
    r = run_cli(["erase", "--redact-text"])
    assert r.exit_code == 2, r.stderr
    assert "ctx.toml: retention.text_days: must be a whole number of days, 0 or more" in r.stderr
    (project_copy / "ctx.toml").write_text("[retention]\ntext_days = true\n", encoding="utf-8")
    r = run_cli(["erase", "--redact-text"])
    assert r.exit_code == 2 and "retention.text_days: must be a whole number of days" in r.stderr
    r = run_cli(["erase", "--redact-text", "--older-than", "-1"])
    assert r.exit_code == 2 and "--older-than must be a whole number of days, 0 or more" in r.stderr


def test_generation_is_outside_the_pack_hash(store, tmp_path):
    from ctxcli.util.packid import pack_hash

    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    pack = json.loads((tmp_path / "a" / "pack.json").read_text())
    assert pack["store"]["generation"] == 1
    other = {**pack, "store": {**pack["store"], "generation": 7}}
    assert pack_hash(other) == pack_hash(pack) == pack["content_hash"]
    r = run_cli(["replay", tmp_path / "a", "--against", "yesterday"])
    assert r.exit_code == 2 and "--against 'yesterday': must be one of built, current" in r.stderr


def test_a_reader_reads_the_small_tables_once_and_one_opened_after_a_load_reads_them_anew(project_copy):
    """A connection reads the store file it opened to its end, so open_store's reader reads the
    source registry once (each caller gets its own copy); a reader opened after a load that
    changed a source reads the new registry."""
    from ctxcli.store import open_store

    _load()
    db = project_copy / ".ctx" / "ctx.duckdb"
    st = open_store(db)
    ran: list[str] = []
    st.con = Counting(st.con, ran)
    try:
        first = st.source_governance()
        first.append(("changed by the caller",))
        assert st.source_governance() == first[:-1] and len(ran) == 1
        assert dict((r[0], r[5]) for r in first[:-1])["claims-rules"] == "claims-policy"
    finally:
        st.con = st.con.con
        st.close()
    m = project_copy / "manifests" / "sources" / "claims-rules.yaml"
    m.write_text(m.read_text().replace("owner_team: claims-policy", "owner_team: rules-desk"))
    _load()
    st = open_store(db)
    try:
        assert dict((r[0], r[5]) for r in st.source_governance())["claims-rules"] == "rules-desk"
    finally:
        st.close()
