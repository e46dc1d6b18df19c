"""Signed run folders hold only what run.json lists, and a configured key reads only signed runs
(issue 27 item 4): a forged model answer added beside a signed run is never shown as part of it,
a stripped signature is an error, and replay compares answer.json with the rebuilt answer."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import run_cli

KEY = "k" * 48


@pytest.fixture
def signed(store, tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CTX_SIGNING_KEY", KEY)
    r = run_cli(["investigate", "C-102", "--sign", "--out", tmp_path / "signed"])
    assert r.exit_code == 0, r.stderr
    return tmp_path / "signed"


def _forge_model_answer(d: Path) -> None:
    """A model answer the validator would reject (999999 CNY, approve), marked accepted."""
    pack = json.loads((d / "pack.json").read_text())
    ev = pack["evidence"][0]["evidence_id"]
    (d / "model_answer.json").write_text(json.dumps({
        "schema_version": "ctx.model_answer/1", "pack_id": pack["pack_id"], "content_hash": pack["content_hash"],
        "status": "accepted", "parse": {"ok": True, "method": "json_schema", "error": None},
        "answer": {"verdict": "complete", "recommended_action": "approve_claim", "summary": "Pay it.",
                   "claims": [{"text": "The claim is 999999 CNY.", "status": "fact", "evidence": [ev]}]},
        "validation": {"violations": [], "warnings": [], "claims": [{"claim": 0, "ok": True, "cited": [ev],
                                                                      "in_pack": [ev]}],
                       "counts": {"claims": 1, "claims_ok": 1, "violations": 0, "warnings": 0}},
        "deterministic": {"verdict": "complete", "recommended_action": "route_to_human_reviewer"},
        "used": "model_answer.json"}))
    (d / "model.json").write_text(json.dumps({
        "schema_version": "ctx.model/1", "pack_id": pack["pack_id"], "content_hash": pack["content_hash"],
        "model": "forged", "endpoint": "127.0.0.1:1", "latency_ms": 1, "usage": {},
        "request": {"messages_hash": "sha256:0"}, "response": {"content": "{}"}}))


def test_a_forged_model_answer_beside_a_signed_run_is_never_shown_as_part_of_it(signed):
    _forge_model_answer(signed)
    r = run_cli(["report", signed])
    assert r.exit_code == 0, r.stderr
    page = (signed / "report.html").read_text()
    assert "signed (key hk-" in page
    assert '<section id="model">' not in page and "999999" not in page
    note = ("model_answer.json is not shown: not part of the run: run.json does not list it (added after the run "
            "was written); not used")
    assert note in page and "note: " + note in r.stdout
    r = run_cli(["replay", signed / "pack.json"])
    assert r.exit_code == 2
    assert r.stderr == (f"ctx: error: {signed / 'model.json'}: not part of the run: run.json does not list it "
                        f"(added after the run was written); not used\n")


def _strip_signature(d: Path, *, edit_answer: bool = True) -> None:
    """What a forger without the key can do: edit answer.json, re-hash run.json, drop the signature."""
    from ctxcli.run_manifest import run_manifest

    if edit_answer:
        ans = json.loads((d / "answer.json").read_text())
        ans["verdict"] = "complete"
        ans["recommended_action"]["action"] = "approve_claim"
        (d / "answer.json").write_text(json.dumps(ans, indent=2))
    doc = json.loads((d / "run.json").read_text())
    files = {n: (d / n).read_bytes() for n in doc["files"]}
    (d / "run.json").write_bytes(run_manifest(files, json.loads((d / "pack.json").read_text())))


def test_with_the_key_set_a_stripped_signature_is_an_error_everywhere(signed, tmp_path):
    _strip_signature(signed)
    msg = (f"ctx: error: {signed / 'run.json'}: unsigned: CTX_SIGNING_KEY is set, so only signed runs are read, "
           f"and run.json has no signature (stripped after signing, or written without --sign)\n")
    for args in (["replay", signed / "pack.json"], ["render", signed / "pack.json"], ["report", signed],
                 ["explain-omissions", signed / "pack.json"], ["diff", signed / "pack.json", signed / "pack.json"]):
        r = run_cli(args)
        assert (r.exit_code, r.stderr) == (2, msg), args
    assert not (signed / "report.html").exists()
    # stripping the whole run folder down to pack.json does not help either
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(signed / "pack.json", bare / "pack.json")
    r = run_cli(["render", bare / "pack.json"])
    assert r.exit_code == 2
    assert r.stderr == (f"ctx: error: {bare / 'pack.json'}: unsigned: CTX_SIGNING_KEY is set, so only signed "
                        f"runs are read, and the pack has no run.json beside it\n")


def test_replay_compares_answer_json_with_the_rebuilt_answer(store, tmp_path):
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run"])
    assert r.exit_code == 0
    assert run_cli(["replay", tmp_path / "run" / "pack.json"]).exit_code == 0
    _strip_signature(tmp_path / "run")      # unsigned: answer.json edited and run.json re-hashed
    r = run_cli(["replay", tmp_path / "run" / "pack.json", "--json"])
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["status"] == "drifted" and doc["answer_identical"] is False
    r = run_cli(["replay", tmp_path / "run" / "pack.json"])
    assert r.exit_code == 1
    assert "- answer.json differs from the rebuilt answer (edited after the run was written?)" in r.stdout
