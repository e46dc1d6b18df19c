"""Erasure that reaches run folders already written (issue 33 item 5)."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import run_cli

OID = "DOC-C102-003"
KEY = "s" * 40


def _strings(pack: Path, oid: str) -> list[str]:
    item = next(e for e in json.loads(pack.read_text())["evidence"] if e["object_id"] == oid)
    return [item["text"], item["title"], *[s for s in item["text"].split(". ") if len(s) > 20]]


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_erase_apply_removes_every_string_and_replay_says_erased(project_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_SIGNING_KEY", KEY)
    assert run_cli(["load"]).exit_code == 0
    runs = project_copy / "runs"
    assert run_cli(["investigate", "C-102", "--sign"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--sign", "--out", tmp_path / "elsewhere"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--variant", "restricted", "--sign"]).exit_code == 0
    (first,) = [p for p in runs.iterdir() if "restricted" not in p.name]
    strings = _strings(first / "pack.json", OID)
    before = {p: p.read_bytes() for p in _files(tmp_path / "elsewhere")}
    assert any(s.encode() in b for s in strings for b in before.values())
    pack_id = json.loads((first / "pack.json").read_text())["pack_id"]

    r = run_cli(["erase", OID, "--reason", "GDPR request 118", "--by", "dpo@example.org"])
    assert r.exit_code == 0 and f"erasure of {OID} recorded" in r.stdout
    r = run_cli(["erase", "--apply", "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)["applied"]
    assert sorted(doc["rewritten"]) == sorted([str(tmp_path / "elsewhere"), f"runs/{first.name}"])
    assert doc["current_store_holds"] == [OID]

    # grep: no file of any run folder holds a string of the erased object
    for root in (runs, tmp_path / "elsewhere"):
        for p in _files(root):
            data = p.read_bytes()
            for s in strings:
                assert s.encode() not in data, (p, s[:40])
    pack = json.loads((first / "pack.json").read_text())
    item = next(e for e in pack["evidence"] if e["object_id"] == OID)
    assert item["text"] == "" and item["title"] == "[erased]" and item["text_hash"].startswith("hmac-sha256:")
    assert item["erased"]["by"] == "dpo@example.org" and item["erased"]["reason"] == "GDPR request 118"
    assert pack["pack_id"] == pack_id and pack["erasure"]["erased"][0]["object_id"] == OID
    run = json.loads((first / "run.json").read_text())
    assert run["resealed"]["after"] == "erasure" and run["signature"]["key_id"].startswith("hk-")

    r = run_cli(["replay", first])
    # the erasure applies to the rebuild too (issue 46): the object is omitted, so the pack drifts
    assert r.exit_code == 1, r.stderr
    assert "drifted" in r.stdout and "answer.json differs from the rebuilt answer (content erased from it)" in r.stdout
    assert "tampered" not in r.stdout + r.stderr
    assert f"erased: {OID} (cited as {item['evidence_id']}) was erased on " in r.stdout
    assert "GDPR request 118" in r.stdout
    r = run_cli(["replay", first, "--json"])
    assert json.loads(r.stdout)["erased"][0]["object_id"] == OID
    # the pack is still verified: an edit after the erasure is tampering
    p = first / "pack.json"
    p.write_text(p.read_text().replace('"GDPR request 118"', '"no reason"'))
    r = run_cli(["replay", first])
    assert r.exit_code == 2 and "tampered" in r.stderr
    # applying again changes nothing more
    r = run_cli(["erase", "--apply", "--json"])
    assert json.loads(r.stdout)["applied"]["rewritten"] == []


def test_without_the_key_the_run_is_marked_resealed_unsigned(project_copy, tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_SIGNING_KEY", KEY)
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--sign", "--out", tmp_path / "a"]).exit_code == 0
    monkeypatch.delenv("CTX_SIGNING_KEY")
    assert run_cli(["erase", OID, "--reason", "r"]).exit_code == 0
    assert run_cli(["erase", "--apply"]).exit_code == 0
    run = json.loads((tmp_path / "a" / "run.json").read_text())
    assert "signature" not in run and "no key to sign it again" in run["resealed"]["unsigned"]
    r = run_cli(["replay", tmp_path / "a"])
    assert r.exit_code == 1 and "was erased on" in r.stdout      # drifted: the rebuild omits it (issue 46)
    r = run_cli(["render", tmp_path / "a"])      # fewer tokens than recorded: not render drift
    assert r.exit_code == 0 and "[erased]" in r.stdout
    monkeypatch.setenv("CTX_SIGNING_KEY", KEY)      # only signed runs are read then: this one no longer is
    r = run_cli(["replay", tmp_path / "a"])
    assert r.exit_code == 2 and "unsigned" in r.stderr


def test_erase_drops_kept_generations_holding_the_object(project_copy, tmp_path):
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    tomb = project_copy / "sources" / "claims-documents" / "tombstones.jsonl"
    tomb.write_text(tomb.read_text() + json.dumps({"object_id": OID, "tenant_id": "tenant-demo",
                                                   "deleted_at": "2026-07-24T09:00:00+08:00",
                                                   "reason": "Filed under the wrong claim."}) + "\n")
    assert run_cli(["load"]).exit_code == 0      # the tombstone is recorded as an erasure
    erasures = [json.loads(ln) for ln in (project_copy / ".ctx" / "erasures.jsonl").read_text().splitlines()]
    assert any(e["object_id"] == OID and e["via"] == "tombstone" for e in erasures)
    r = run_cli(["erase", "--apply", "--json"])
    doc = json.loads(r.stdout)["applied"]
    assert doc["generations_dropped"] == [1] and doc["current_store_holds"] == []
    gens = project_copy / ".ctx" / "ctx.duckdb.generations"
    assert [p.name for p in gens.iterdir()] == ["000002.duckdb"]
    r = run_cli(["replay", tmp_path / "a"])
    assert r.exit_code == 1 and "generation 1 (the pack's) is no longer kept" in r.stdout
    assert "was erased on 2026-07-24T01:00:00+00:00 by ctx load (tombstone): Filed under the wrong claim." in r.stdout


def test_erase_needs_a_reason(store):
    r = run_cli(["erase", OID])
    assert r.exit_code == 2 and "--reason" in r.stderr
    r = run_cli(["erase"])
    assert r.exit_code == 2 and "--apply" in r.stderr


def _texts(folder: Path) -> list[str]:
    return [e["text"] for e in json.loads((folder / "pack.json").read_text())["evidence"]]


def test_no_text_packs_and_the_retention_period(store, tmp_path, monkeypatch):
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "full"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--no-text", "--out", tmp_path / "bare"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--no-text", "--out", tmp_path / "bare2"]).exit_code == 0
    for name in ("pack.json", "trace.jsonl", "answer.json", "run.json"):     # deterministic
        assert (tmp_path / "bare" / name).read_bytes() == (tmp_path / "bare2" / name).read_bytes(), name
    assert set(_texts(tmp_path / "bare")) == {""} and all(_texts(tmp_path / "full"))
    full = json.loads((tmp_path / "full" / "pack.json").read_text())
    bare = json.loads((tmp_path / "bare" / "pack.json").read_text())
    assert [e["text_hash"] for e in bare["evidence"]] == [e["text_hash"] for e in full["evidence"]]
    assert bare["answer"] == full["answer"] and bare["pack_id"] == full["pack_id"]
    for text in _texts(tmp_path / "full"):
        for p in _files(tmp_path / "bare"):
            assert text.encode() not in p.read_bytes(), p
    r = run_cli(["replay", tmp_path / "bare"])
    assert r.exit_code == 0 and "written without text (--no-text)" in r.stdout



def test_retention_redacts_run_folders_older_than_the_period(project_copy):
    assert run_cli(["load"]).exit_code == 0
    runs = project_copy / "runs"
    assert run_cli(["investigate", "C-102", "--out", runs / "old"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--variant", "restricted", "--out", runs / "new"]).exit_code == 0
    import os
    import time

    week = time.time() - 8 * 86400
    os.utime(runs / "old" / "pack.json", (week, week))
    (project_copy / "ctx.toml").write_text("[retention]\ntext_days = 7\n", encoding="utf-8")
    r = run_cli(["erase", "--redact-text", "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["redacted"] == ["runs/old"]
    assert set(_texts(runs / "old")) == {""} and all(_texts(runs / "new"))
    r = run_cli(["replay", runs / "old"])
    assert r.exit_code == 0 and "retention: evidence text is kept 7 day(s)" in r.stdout
