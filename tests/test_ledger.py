"""The run ledger, idempotency keys and the outbox (issue 33 items 2-4)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, run_cli


@pytest.fixture
def own_store(bundled_store, tmp_path, monkeypatch) -> Path:
    """A private copy of the bundled store: its ledger (beside it) starts empty."""
    db = tmp_path / "st" / "ctx.duckdb"
    db.parent.mkdir()
    shutil.copyfile(bundled_store, db)
    monkeypatch.setenv("CTX_DB", str(db))
    return db


def _records(db: Path) -> list[dict]:
    p = db.parent / "ledger.jsonl"
    return [json.loads(ln) for ln in p.read_text().splitlines()] if p.exists() else []


def _events(db: Path) -> list[dict]:
    p = db.parent / "outbox.jsonl"
    return [json.loads(ln) for ln in p.read_text().splitlines()] if p.exists() else []


def _inv(out: Path, *args):
    return run_cli(["investigate", "C-102", "--out", out, *args])


def test_every_run_appends_one_chained_record_and_event(own_store, tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_SIGNING_KEY", "k" * 40)
    assert _inv(tmp_path / "a", "--sign").exit_code == 0
    assert _inv(tmp_path / "b", "--variant", "restricted", "--sign").exit_code == 0
    assert run_cli(["replay", tmp_path / "a"]).exit_code == 0
    recs = _records(own_store)
    assert [(r["seq"], r["command"], r["subject"]) for r in recs] == [
        (1, "investigate", "investigator-01"), (2, "investigate", "intern-07"), (3, "replay", "investigator-01")]
    a = recs[0]
    pack = json.loads((tmp_path / "a" / "pack.json").read_text())
    assert a["pack_id"] == pack["pack_id"] and a["prev"] is None and recs[1]["prev"] == a["hash"]
    assert a["run_id"] == "run-" + a["request_hash"].split(":")[1][:16]
    assert a["scopes"] == pack["request"]["subject"]["scopes"] and a["clearance"] == "confidential"
    assert a["purpose"] == "claim_review" and a["as_of"] == pack["request"]["as_of"] and a["verdict"] == "complete"
    assert a["signer_key_id"].startswith("hk-") and a["folder"] == str(tmp_path / "a")
    import hashlib

    from ctxcli.api import store_key
    from ctxcli.util.canon import key_id, sealed_hash

    plain = "sha256:" + hashlib.sha256((tmp_path / "a" / "answer.json").read_bytes()).hexdigest()
    assert a["files"]["answer.json"] == sealed_hash(plain, key=store_key(own_store))     # keyed: no plain digest
    assert a["chain"] == "hmac-sha256" and a["chain_key"] == key_id(store_key(own_store))
    assert a["hash"].startswith("hmac-sha256:")
    assert recs[2]["replay_of"] == pack["pack_id"] and recs[2]["replay_status"] == "identical"
    evs = _events(own_store)
    assert [e["type"] for e in evs] == ["dev.ctx.run.investigated", "dev.ctx.run.investigated",
                                        "dev.ctx.run.replayed"]
    assert evs[0]["specversion"] == "1.0" and evs[0]["subject"] == a["run_id"] and evs[0]["data"] == a
    assert evs[0]["id"] == a["hash"].split(":")[1] and evs[0]["datacontenttype"] == "application/json"
    assert len({e["id"] for e in evs}) == 3

    r = run_cli(["runs", "--ledger", "--subject", "intern-07", "--json"])
    assert [x["seq"] for x in json.loads(r.stdout)] == [2]
    r = run_cli(["runs", "--ledger", "--command", "replay", "--json"])
    assert [x["seq"] for x in json.loads(r.stdout)] == [3]
    r = run_cli(["ledger", "verify"])
    assert r.exit_code == 0 and "ledger intact: 3 record(s), 3 outbox event(s)" in r.stdout


def _rechain(lines: list[bytes], edit) -> list[bytes]:
    """The ledger with ``edit`` applied to every record and the whole chain recomputed as an
    attacker without the store secret can: plain SHA-256 (``chain`` dropped) or keyed with a
    guessed secret; the outbox is rewritten to match."""
    import hashlib

    from ctxcli.util.canon import canonical_bytes

    out, prev = [], None
    for ln in lines:
        rec = edit(json.loads(ln))
        rec["prev"] = prev
        body = {k: v for k, v in rec.items() if k != "hash"}
        rec["hash"] = "sha256:" + hashlib.sha256(canonical_bytes(body)).hexdigest()
        prev = rec["hash"]
        out.append(canonical_bytes(rec) + b"\n")
    return out


def _outbox_of(lines: list[bytes]) -> bytes:
    from ctxcli.ledger.commit import cloud_event
    from ctxcli.util.canon import canonical_bytes

    return b"".join(canonical_bytes(cloud_event(json.loads(ln))) + b"\n" for ln in lines)


def test_an_edited_and_rechained_record_is_detected_signed_or_not(own_store, tmp_path, monkeypatch):
    """Issue 46 item 8: the chain is keyed with the store secret, so a record edited and
    re-chained without it — keyed by a guess, or downgraded to plain SHA-256 — is found."""
    import hmac

    from ctxcli.util.canon import canonical_bytes

    monkeypatch.setenv("CTX_SIGNING_KEY", "k" * 40)
    assert _inv(tmp_path / "a", "--sign").exit_code == 0
    assert _inv(tmp_path / "b", "--variant", "restricted").exit_code == 0
    lp, op = own_store.parent / "ledger.jsonl", own_store.parent / "outbox.jsonl"
    good, good_ev = lp.read_bytes(), op.read_bytes()
    lines = good.splitlines(keepends=True)

    def promote(rec):
        if rec["seq"] == 2:
            rec["verdict"], rec["clearance"] = "complete", "restricted"
        return rec

    # keyed again with a guessed secret (the attacker knows the scheme, not the key)
    out, prev = [], None
    for ln in lines:
        rec = promote(json.loads(ln))
        rec["prev"] = prev
        body = {k: v for k, v in rec.items() if k != "hash"}
        mac = hmac.new(b"g" * 32, b"ctx-ledger-record\0" + canonical_bytes(body), "sha256").hexdigest()
        rec["hash"] = prev = "hmac-sha256:" + mac
        out.append(canonical_bytes(rec) + b"\n")
    lp.write_bytes(b"".join(out))
    op.write_bytes(_outbox_of(out))
    r = run_cli(["ledger", "verify"])
    assert r.exit_code == 1 and "ledger.jsonl line 1: record 1 was edited" in r.stdout and "intact" not in r.stdout

    # re-chained with plain SHA-256 under the keyed scheme's own fields
    forged = _rechain(lines, promote)
    lp.write_bytes(b"".join(forged))
    op.write_bytes(_outbox_of(forged))
    r = run_cli(["ledger", "verify"])
    assert r.exit_code == 1 and "ledger.jsonl line 1: record 1 was edited" in r.stdout and "intact" not in r.stdout

    # only the edited record and those after it downgraded to plain SHA-256
    tail = _rechain(lines, lambda rec: {k: v for k, v in promote(rec).items() if k not in ("chain", "chain_key")})
    first = lines[0]
    rec2 = json.loads(tail[1])
    rec2["prev"] = json.loads(first)["hash"]
    import hashlib

    rec2["hash"] = "sha256:" + hashlib.sha256(canonical_bytes({k: v for k, v in rec2.items() if k != "hash"})).hexdigest()
    forged = [first, canonical_bytes(rec2) + b"\n"]
    lp.write_bytes(b"".join(forged))
    op.write_bytes(_outbox_of(forged))
    r = run_cli(["ledger", "verify"])
    assert r.exit_code == 1 and "record 2 is chained with plain SHA-256 after keyed records" in r.stdout

    # the whole ledger downgraded: never "intact"; --keyed refuses it
    forged = _rechain(lines, lambda rec: {k: v for k, v in promote(rec).items() if k not in ("chain", "chain_key")})
    lp.write_bytes(b"".join(forged))
    op.write_bytes(_outbox_of(forged))
    r = run_cli(["ledger", "verify"])
    assert r.exit_code == 0 and "intact" not in r.stdout and "NOT keyed" in r.stdout
    assert run_cli(["ledger", "verify", "--keyed"]).exit_code == 1

    # another store secret: said as such, not as an edit
    lp.write_bytes(good)
    op.write_bytes(good_ev)
    assert run_cli(["ledger", "verify", "--keyed"]).exit_code == 0
    monkeypatch.setenv("CTX_SECRET", "another-secret-of-this-store")
    r = run_cli(["ledger", "verify", "--json"])
    doc = json.loads(r.stdout)
    assert r.exit_code == 1 and all("keyed with another store secret" in p for p in doc["problems"])
    assert not any("edited" in p for p in doc["problems"])


def test_a_ledger_written_before_the_chain_was_keyed_verifies_as_not_keyed_then_sealed(own_store, tmp_path):
    """An honest ledger of plain SHA-256 records (written by an older ctx) is no tamper alarm and
    no "intact": it is named not keyed; the next run's keyed record seals it; an edit to a plain
    record is still found by its own hash."""
    for v in (None, "restricted"):
        assert _inv(tmp_path / f"r{v}", *(["--variant", v] if v else [])).exit_code == 0
    lp, op = own_store.parent / "ledger.jsonl", own_store.parent / "outbox.jsonl"
    old = _rechain(lp.read_bytes().splitlines(keepends=True),
                   lambda rec: {k: v for k, v in rec.items() if k not in ("chain", "chain_key")})
    lp.write_bytes(b"".join(old))
    op.write_bytes(_outbox_of(old))
    r = run_cli(["ledger", "verify", "--json"])
    doc = json.loads(r.stdout)
    assert r.exit_code == 0 and doc["ok"] and not doc["keyed"] and doc["unsealed_records"] == [1, 2]
    r = run_cli(["ledger", "verify"])
    assert r.exit_code == 0 and "NOT keyed" in r.stdout and "records 1-2 chained with plain SHA-256" in r.stdout
    assert run_cli(["ledger", "verify", "--keyed"]).exit_code == 1

    assert _inv(tmp_path / "r3", "--variant", "restricted", "--replace").exit_code == 0
    recs = _records(own_store)
    assert [r.get("chain") for r in recs] == [None, None, "hmac-sha256"] and recs[2]["prev"] == recs[1]["hash"]
    r = run_cli(["ledger", "verify", "--keyed"])
    assert r.exit_code == 0 and "ledger intact: 3 record(s)" in r.stdout and "records 1-2 (plain SHA-256" in r.stdout

    lines = lp.read_bytes().splitlines(keepends=True)
    lp.write_bytes(lines[0].replace(b'"verdict":"complete"', b'"verdict":"refused"') + lines[1] + lines[2])
    r = run_cli(["ledger", "verify"])
    assert r.exit_code == 1 and "ledger.jsonl line 1: record 1 was edited" in r.stdout


def test_the_first_run_beside_a_store_folder_not_yet_made_creates_ledger_and_key_together(store, tmp_path):
    """api.write_outputs without a db keys its record for the default store ($CTX_DB), whose
    folder may not exist yet: the ledger's folder is made first, then its secret, then the record."""
    from ctxcli import api

    res = api.investigate(api.InvestigateOptions(case="C-102", db=store))
    fresh = tmp_path / "fresh" / "ctx.duckdb"
    api.write_outputs(res, tmp_path / "out", db=fresh)
    recs = _records(fresh)
    assert [r["chain"] for r in recs] == ["hmac-sha256"] and (fresh.parent / "secret.key").is_file()
    r = run_cli(["ledger", "verify", "--keyed", "--db", fresh])
    assert r.exit_code == 0 and "ledger intact: 1 record(s)" in r.stdout


def test_verify_detects_an_edited_or_deleted_record(own_store, tmp_path):
    for v in (None, "restricted", None):
        assert _inv(tmp_path / f"r{v}", *(["--variant", v] if v else [])).exit_code == 0
    lp = own_store.parent / "ledger.jsonl"
    good = lp.read_bytes()
    lines = good.splitlines(keepends=True)
    assert len(lines) == 3

    lp.write_bytes(lines[0] + lines[1].replace(b'"verdict":"insufficient_evidence"', b'"verdict":"complete"')
                   + lines[2])
    r = run_cli(["ledger", "verify"])
    assert r.exit_code == 1 and "ledger.jsonl line 2: record 2 was edited" in r.stdout

    lp.write_bytes(lines[0] + lines[2])
    r = run_cli(["ledger", "verify", "--json"])
    assert r.exit_code == 1
    assert "ledger.jsonl line 2: record 2 before record 3 is missing (deleted?)" in json.loads(r.stdout)["problems"]

    lp.write_bytes(lines[0] + lines[1])     # the newest record deleted: its outbox event remains
    r = run_cli(["ledger", "verify"])
    assert r.exit_code == 1 and "the event of record 3 has no record in ledger.jsonl (deleted?)" in r.stdout

    lp.write_bytes(good)
    assert run_cli(["ledger", "verify"]).exit_code == 0


def test_idempotency_key_same_request_returns_recorded_run(own_store, tmp_path):
    assert _inv(tmp_path / "a", "--idempotency-key", "req-1").exit_code == 0
    before = (tmp_path / "a" / "pack.json").stat().st_mtime_ns
    own_store.write_bytes(b"not a store any more")     # nothing is retrieved: the store is not even opened
    r = _inv(tmp_path / "a", "--idempotency-key", "req-1", "--json")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["repeated"] is True and doc["run_id"] == _records(own_store)[0]["run_id"]
    r = _inv(tmp_path / "elsewhere", "--idempotency-key", "req-1")
    assert r.exit_code == 0 and "this request already ran as run-" in r.stdout and "not run again" in r.stdout
    assert not (tmp_path / "elsewhere").exists()
    assert (tmp_path / "a" / "pack.json").stat().st_mtime_ns == before
    assert len(_records(own_store)) == 1       # nothing retrieved, nothing recorded again


def test_idempotency_conflict_exits_2_naming_both_hashes(own_store, tmp_path):
    assert _inv(tmp_path / "a", "--idempotency-key", "req-1").exit_code == 0
    first = _records(own_store)[0]["request_hash"]
    r = _inv(tmp_path / "b", "--idempotency-key", "req-1", "--as-of", "2026-03-20T12:00:00+08:00")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert first in r.stderr and "this request is sha256:" in r.stderr
    other = r.stderr.split("this request is ")[1].split(":", 2)
    assert other[0] == "sha256" and other[1][:64] != first.split(":")[1]
    assert not (tmp_path / "b").exists() and len(_records(own_store)) == 1


def test_an_idempotency_key_belongs_to_one_subject(own_store, tmp_path):
    """Another subject (the restricted variant's intern-07) using the same key makes its own run:
    it is neither refused nor handed the first subject's run, and nothing names that request."""
    assert _inv(tmp_path / "a", "--idempotency-key", "req-1").exit_code == 0
    first = _records(own_store)[0]
    r = _inv(tmp_path / "b", "--idempotency-key", "req-1", "--variant", "restricted", "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc.get("repeated") is not True and first["request_hash"] not in r.output
    assert first["run_id"] not in r.output
    recs = _records(own_store)
    assert [(x["subject"], x["idempotency_key"]) for x in recs] == [("investigator-01", "req-1"), ("intern-07", "req-1")]
    # each subject's key repeats its own run
    r = _inv(tmp_path / "c", "--idempotency-key", "req-1", "--variant", "restricted", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["run_id"] == recs[1]["run_id"] and not (tmp_path / "c").exists()
    r = _inv(tmp_path / "d", "--idempotency-key", "req-1", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["run_id"] == first["run_id"]
    assert len(_records(own_store)) == 2


def test_another_request_into_a_run_folder_needs_replace(own_store, tmp_path):
    assert _inv(tmp_path / "a").exit_code == 0
    assert _inv(tmp_path / "a").exit_code == 0         # the same request again: fine
    pack = (tmp_path / "a" / "pack.json").read_bytes()
    r = _inv(tmp_path / "a", "--variant", "restricted")
    assert r.exit_code == 2 and "holds the run of another request" in r.stderr and "--replace" in r.stderr
    assert (tmp_path / "a" / "pack.json").read_bytes() == pack
    assert _inv(tmp_path / "a", "--variant", "restricted", "--replace").exit_code == 0
    assert json.loads((tmp_path / "a" / "pack.json").read_text())["request"]["variant"] == "restricted"


def _ctx(args, env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ctxcli.cli.main", *map(str, args)], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("step, all_three", [("journal", False), ("folder", True), ("ledger", True)])
def test_sigkill_between_steps_leaves_all_three_or_none(own_store, tmp_path, step, all_three):
    env = {**os.environ, "CTX_LEDGER_KILL_AT": step}
    out = tmp_path / "run"
    p = _ctx(["investigate", "C-102", "--out", out], env)
    assert p.returncode == -9, p.stderr
    env.pop("CTX_LEDGER_KILL_AT")
    v = _ctx(["ledger", "verify", "--json"], env)      # the next ledger user finishes or undoes the commit
    assert v.returncode == 0, v.stdout + v.stderr
    folder = (out / "run.json").exists()
    recs, evs = _records(own_store), _events(own_store)
    assert (folder, len(recs), len(evs)) == ((True, 1, 1) if all_three else (False, 0, 0))
    if all_three:
        assert evs[0]["data"] == recs[0] and recs[0]["files"]["pack.json"]
    assert not list((own_store.parent / "ledger.pending").glob("*"))
    # and the next run chains after whatever is there
    assert _ctx(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "next"], env).returncode == 0
    assert [r["seq"] for r in _records(own_store)] == ([1, 2] if all_three else [1])
    assert _ctx(["ledger", "verify"], env).returncode == 0


def test_idempotency_key_reused_with_other_agent_inputs_is_refused(own_store, tmp_path):
    """The request hash leaves an agent's inputs out, so the key is checked against them too:
    the same case with another tool result is another request, not the earlier run."""
    steps = REPO / "examples" / "agent" / "INC-2026-0723"
    one, two = steps / "01-pool-metrics.yaml", steps / "02-ticket-search.yaml"

    def inv(out, *args):
        return run_cli(["investigate", "INC-2026-0723", "--out", out, "--idempotency-key", "agent-1", *args])

    assert inv(tmp_path / "a", "--tool-result", one).exit_code == 0
    rec = _records(own_store)[0]
    assert len(rec["inputs_sha256"]) == 64 and int(rec["inputs_sha256"], 16) >= 0
    r = inv(tmp_path / "a", "--tool-result", one, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["repeated"] is True
    for args in (("--tool-result", two), ()):
        r = inv(tmp_path / "b", *args)
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
        assert (f"--idempotency-key 'agent-1' was used for request {rec['request_hash']} with other inputs "
                "(tool results, working state or memory records)") in r.stderr
        assert not (tmp_path / "b").exists()
    assert len(_records(own_store)) == 1
    assert inv(tmp_path / "c").exit_code == 2       # a run without inputs is not the one with them either
    assert run_cli(["investigate", "INC-2026-0723", "--out", tmp_path / "d"]).exit_code == 0
    assert "inputs_sha256" not in _records(own_store)[-1]      # runs without inputs record none


@pytest.mark.parametrize("name, make, says", [
    ("ledger.jsonl", lambda p: p.mkdir(), "ledger.jsonl: not a regular file (a folder): ctx keeps its run ledger"),
    ("ledger.jsonl", lambda p: os.mkfifo(p), "ledger.jsonl: not a regular file (a FIFO): ctx keeps its run ledger"),
    ("ledger.jsonl", lambda p: p.write_text('{"a": 1}\n'),
     "ledger.jsonl: line 1: not a ledger record (it needs seq and hash); `ctx ledger verify` names what is wrong"),
    ("ledger.jsonl", lambda p: p.write_text('{"seq": true, "hash": "x"}\n'), "line 1: not a ledger record"),
    ("ledger.jsonl", lambda p: p.write_text("not json\n"), "ledger.jsonl: line 1: not JSON (edited or truncated?)"),
    ("outbox.jsonl", lambda p: os.mkfifo(p), "outbox.jsonl: not a regular file (a FIFO)"),
])
def test_a_bookkeeping_file_that_is_not_a_ledger_is_one_line_exit_2_and_nothing_written(own_store, tmp_path, name,
                                                                                          make, says):
    """A FIFO, a folder or a line that is no record in place of the ledger or the outbox: every
    run that records stops at once with one line naming the file and the line (never a hang,
    never exit 70, never a line silently skipped), and writes no run folder."""
    target = own_store.parent / name
    make(target)
    r = _inv(tmp_path / "a")
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "a").exists()
    r = run_cli(["ledger", "verify"])
    if "line 1" in says:        # verify reads on and names the line (exit 1, edited)
        assert r.exit_code == 1 and "- ledger.jsonl line 1: " in r.stdout, r.output
    else:
        assert r.exit_code == 2 and says.split(":")[0] in r.stderr, r.output
