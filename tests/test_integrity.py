"""Integrity and robustness of run folders and packs (issue 12, items 8, 9, 11, 13 and 14).

The hostile-input corpus of this file: RUN_TAMPERING (edits of a run folder's files),
the forged-pack cases (a changed amount with the pack hash, then every hash, recomputed),
NOT_REGULAR (a FIFO, /dev/zero, a folder as the pack), and the failing devices and stores
of item 13 (--out naming a folder or `.`, no space left,
a read-only store folder, a store overwritten with random bytes or truncated).

Every case asserts what a user sees: the exit code, one line on stderr naming the file,
nothing on stdout, and nothing of theirs changed.
"""

from __future__ import annotations

import copy
import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctxcli.util.canon import content_hash, obj_hash, pretty_bytes

from .conftest import REPO, run_cli

KEY = "k" * 16 + "0123456789abcdef0123456789abcdef"     # 48 bytes
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


# ------------------------------------------------------------------------------ helpers
def seal(body: dict) -> dict:
    """What a forger does: the content hash and pack id recomputed (written out here, not
    imported from ctx, so the test does not trust the code it tests)."""
    body = {k: v for k, v in body.items() if k not in ("content_hash", "pack_id")}
    # as documented: store.backend and store.generation (where the store is) are outside the hash
    hashed = {**body, "store": {k: v for k, v in body["store"].items() if k not in ("backend", "generation")}}
    h = obj_hash(hashed)
    return {**body, "content_hash": h, "pack_id": "pk-" + h.split(":")[1][:16]}


def one_line(r, code: int, *fragments: str) -> str:
    assert r.exit_code == code, (r.exit_code, r.stdout[-400:], r.stderr)
    err = r.stderr
    assert err.startswith("ctx: error: ") and err.count("\n") == 1, repr(err)
    assert "Traceback" not in err and "internal error" not in err
    for f in fragments:
        assert f in err, (f, err)
    return err


def investigate(out: Path, *args, env: dict | None = None) -> Path:
    r = run_cli(["investigate", "C-102", "--out", out, *args], env=env)
    assert r.exit_code == 0, r.stderr
    return out / "pack.json"


@pytest.fixture
def run(store, tmp_path) -> Path:
    """A fresh C-102 run folder; returns its pack.json."""
    return investigate(tmp_path / "run")


def rewrite_json(path: Path, fn) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    fn(data)
    path.write_bytes(pretty_bytes(data))


def forge_amount(pack: dict, *, text_hash: bool) -> dict:
    """The issue's example: the claim amount 128000 changed to 138000 in the risk signal's
    evidence text (and its fact), the pack hash recomputed; the item's text_hash too when asked."""
    p = copy.deepcopy(pack)
    item = next(i for i in p["evidence"] if i["object_id"] == "SIG-C102-AMOUNT")
    assert "128000" in item["text"]
    item["text"] = item["text"].replace("128000", "138000")
    if text_hash:
        item["text_hash"] = content_hash(item["text"])
    from ctxcli.engine.render import section_texts
    from ctxcli.tokens import count

    secs = [{"section": n, "slot": sl, "trust": tr, "tokens": count(t)} for n, sl, tr, t in section_texts(p)]
    p["slots"]["sections"] = secs                    # recounted, so the rendering matches the forged pack
    p["slots"]["total_tokens"] = sum(x["tokens"] for x in secs)
    return seal({k: v for k, v in p.items() if k not in ("content_hash", "pack_id")})


# ------------------------------------------------------------------------------ item 8: run.json
def test_run_folder_records_the_hashes_of_its_files(run, tmp_path):
    folder = run.parent
    assert sorted(x.name for x in folder.iterdir()) == [".ctx-run", "answer.json", "answer.md", "pack.json",
                                                        "run.json", "timings.json", "trace.jsonl"]
    doc = json.loads((folder / "run.json").read_text())
    pack = json.loads(run.read_text())
    assert doc["schema_version"] == "ctx.run/1"
    assert (doc["pack_id"], doc["pack_content_hash"]) == (pack["pack_id"], pack["content_hash"])
    import hashlib

    assert doc["files"] == {n: "sha256:" + hashlib.sha256((folder / n).read_bytes()).hexdigest()
                            for n in ("answer.json", "answer.md", "trace.jsonl")}
    assert "signature" not in doc
    # deterministic: a second run writes the same bytes
    again = investigate(tmp_path / "again")
    assert (again.parent / "run.json").read_bytes() == (folder / "run.json").read_bytes()
    r = run_cli(["replay", run])
    assert r.exit_code == 0 and "identical" in r.stdout


def _answer_action(folder: Path) -> None:
    rewrite_json(folder / "answer.json", lambda a: a["recommended_action"].update(action="approve_claim"))


def _answer_md_action(folder: Path) -> None:
    p = folder / "answer.md"
    text = p.read_text(encoding="utf-8")
    assert "**route_to_human_reviewer**" in text
    p.write_text(text.replace("**route_to_human_reviewer**", "**approve_claim**"), encoding="utf-8")


def _trace_drop_first(folder: Path) -> None:
    p = folder / "trace.jsonl"
    lines = p.read_bytes().splitlines(keepends=True)
    assert json.loads(lines[0])["event"] == "run_started"
    p.write_bytes(b"".join(lines[1:]))


def _trace_append_forged(folder: Path) -> None:
    p = folder / "trace.jsonl"
    with p.open("ab") as fh:
        fh.write(b'{"event":"answer_validated","action":"approve_claim","seq":9999,"verdict":"complete"}\n')


def _run_json_deleted(folder: Path) -> None:
    (folder / "run.json").unlink()


def _trace_deleted(folder: Path) -> None:
    (folder / "trace.jsonl").unlink()


def _run_json_of_another_pack(folder: Path) -> None:
    rewrite_json(folder / "run.json", lambda d: d.update(pack_id="pk-0000000000000000"))


def _run_json_signature_stub(folder: Path) -> None:
    rewrite_json(folder / "run.json", lambda d: d.update(signature={"alg": "none", "value": ""}))


# name, mutation, the file the error names, a fragment of the message
RUN_TAMPERING = [
    ("answer_json_action", _answer_action, "answer.json", "tampered: the file hashes to"),
    ("answer_md_action", _answer_md_action, "answer.md", "tampered: the file hashes to"),
    ("trace_first_event_deleted", _trace_drop_first, "trace.jsonl", "tampered: the file hashes to"),
    ("trace_forged_event_appended", _trace_append_forged, "trace.jsonl", "tampered: the file hashes to"),
    ("trace_deleted", _trace_deleted, "trace.jsonl", "tampered: no such file"),
    ("run_json_deleted", _run_json_deleted, "run.json", "missing: trace.jsonl, answer.json, answer.md"),
    ("run_json_of_another_pack", _run_json_of_another_pack, "run.json", "records pack 'pk-0000000000000000'"),
    ("run_json_bad_signature", _run_json_signature_stub, "run.json", "bad signature"),
]


@pytest.mark.parametrize("name,mutate,file,fragment", RUN_TAMPERING, ids=[t[0] for t in RUN_TAMPERING])
@pytest.mark.parametrize("cmd", ["replay", "render", "explain-omissions", "diff"])
def test_tampered_run_folder_is_refused(run, name, mutate, file, fragment, cmd):
    mutate(run.parent)
    r = run_cli([cmd, run] + ([run] if cmd == "diff" else []))
    err = one_line(r, 2, f"{run.parent / file}: ", fragment)
    assert r.stdout == ""
    assert "identical" not in err


def test_a_pack_copied_out_of_its_run_folder_is_read_alone(run, tmp_path):
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(run, alone / "pack.json")
    assert run_cli(["replay", alone / "pack.json"]).exit_code == 0
    # a reformatted pack is the same pack: run.json records its content hash, not its bytes
    rewrite_json(run, lambda d: None)
    run.write_text(json.dumps(json.loads(run.read_text())))
    r = run_cli(["replay", run, "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["byte_identical"] is False


def test_replay_out_writes_a_verifiable_run_folder(run, tmp_path):
    r = run_cli(["replay", run, "--out", tmp_path / "rebuilt"])
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "rebuilt" / "run.json").read_bytes() == (run.parent / "run.json").read_bytes()


# ------------------------------------------------------------------------------ item 9: text_hash, signature
@pytest.mark.parametrize("cmd", ["render", "explain-omissions", "replay", "diff"])
def test_forged_amount_with_pack_hash_recomputed_is_refused(run, tmp_path, cmd):
    forged = forge_amount(json.loads(run.read_text()), text_hash=False)
    p = tmp_path / "forged.json"                      # a pack alone: only its own hashes protect it
    p.write_bytes(pretty_bytes(forged))
    r = run_cli([cmd, p] + ([p] if cmd == "diff" else []))
    one_line(r, 2, f"{p}: evidence[", "tampered: the text of evidence", "(SIG-C102-AMOUNT)", "text_hash")
    assert r.stdout == "" and "138000" not in r.stderr


def test_forgery_with_every_hash_recomputed_passes_unsigned_but_not_signed(store, tmp_path, monkeypatch):
    # unsigned: checksums only, so a complete forgery of a pack alone renders (documented limit)
    pack = investigate(tmp_path / "plain")
    forged = forge_amount(json.loads(pack.read_text()), text_hash=True)
    alone = tmp_path / "forged.json"
    alone.write_bytes(pretty_bytes(forged))
    r = run_cli(["render", alone])
    assert r.exit_code == 0 and "138000" in r.stdout
    # in its run folder, even unsigned, run.json no longer matches the pack
    pack.write_bytes(pretty_bytes(forged))
    one_line(run_cli(["render", pack]), 2, f"{pack.parent / 'run.json'}: ", "tampered: it records pack")
    # signed: recomputing run.json's pack entry too does not help without the key
    monkeypatch.setenv("CTX_SIGNING_KEY", KEY)
    signed = investigate(tmp_path / "signed", "--sign")
    assert json.loads((signed.parent / "run.json").read_text())["signature"]["alg"] == "hmac-sha256"
    for cmd in ("replay", "render", "explain-omissions"):
        assert run_cli([cmd, signed]).exit_code == 0, cmd
    forged = forge_amount(json.loads(signed.read_text()), text_hash=True)
    signed.write_bytes(pretty_bytes(forged))
    rewrite_json(signed.parent / "run.json",
                 lambda d: d.update(pack_id=forged["pack_id"], pack_content_hash=forged["content_hash"]))
    for cmd in ("replay", "render", "explain-omissions", "diff"):
        r = run_cli([cmd, signed] + ([signed] if cmd == "diff" else []))
        one_line(r, 2, f"{signed.parent / 'run.json'}: ", "bad signature: the run folder was changed after it "
                 "was signed")
        assert r.stdout == ""


def test_signed_answer_edit_with_run_json_rehashed_is_a_bad_signature(store, tmp_path, monkeypatch):
    import hashlib

    monkeypatch.setenv("CTX_SIGNING_KEY", KEY)
    pack = investigate(tmp_path / "s", "--sign")
    _answer_action(pack.parent)
    new = "sha256:" + hashlib.sha256((pack.parent / "answer.json").read_bytes()).hexdigest()
    rewrite_json(pack.parent / "run.json", lambda d: d["files"].update({"answer.json": new}))
    one_line(run_cli(["replay", pack]), 2, "run.json: bad signature")


def test_signature_keys(store, tmp_path, monkeypatch):
    # --sign without a key: exit 2 before anything is written
    one_line(run_cli(["investigate", "C-102", "--sign", "--out", tmp_path / "nokey"]), 2,
             "--sign: set CTX_SIGNING_KEY")
    assert not (tmp_path / "nokey").exists()
    monkeypatch.setenv("CTX_SIGNING_KEY", "short")
    one_line(run_cli(["investigate", "C-102", "--sign", "--out", tmp_path / "short"]), 2,
             "CTX_SIGNING_KEY is too short")
    monkeypatch.setenv("CTX_SIGNING_KEY", KEY)
    pack = investigate(tmp_path / "s", "--sign")
    run_json = (pack.parent / "run.json").read_bytes()
    assert KEY.encode() not in run_json
    assert investigate(tmp_path / "s2", "--sign").parent.joinpath("run.json").read_bytes() == run_json
    # verifying without the key: a clear message, exit 2
    monkeypatch.delenv("CTX_SIGNING_KEY")
    kid = json.loads(run_json)["signature"]["key_id"]
    for cmd in ("replay", "render", "explain-omissions"):
        one_line(run_cli([cmd, pack]), 2, f"the run is signed (key {kid}); set CTX_SIGNING_KEY to verify")
    # with another key: named as such
    monkeypatch.setenv("CTX_SIGNING_KEY", "x" * 40)
    one_line(run_cli(["replay", pack]), 2, f"bad signature: signed with key {kid}, CTX_SIGNING_KEY is key hk-")


# ------------------------------------------------------------------------------ item 11: request limits
@pytest.mark.parametrize("field,value,flag", [("max_rounds", 100, "--max-rounds"), ("budget", 10**9, "--budget"),
                                              ("max_rounds", 0, "--max-rounds")])
def test_replay_refuses_a_request_the_cli_would_refuse(run, tmp_path, field, value, flag):
    pack = json.loads(run.read_text())
    pack["request"][field] = value
    p = tmp_path / "resealed.json"
    p.write_bytes(pretty_bytes(seal({k: v for k, v in pack.items() if k not in ("content_hash", "pack_id")})))
    r = run_cli(["replay", p])
    err = one_line(r, 2, f"{p}: request.{field}: refused: {value}")
    assert r.stdout == ""
    cli = run_cli(["investigate", "C-102", flag, value, "--out", tmp_path / "x"])
    cli_err = one_line(cli, 2, f"{flag} {value}")
    # the same rule, word for word
    assert err.split("refused: ")[1].split(" (the command")[0] == cli_err.split(f"{flag} ")[1].strip()


def test_replay_refuses_a_subject_the_cli_would_refuse(run, tmp_path):
    pack = json.loads(run.read_text())
    pack["request"]["subject"]["id"] = "analyst\nroot"
    p = tmp_path / "subject.json"
    p.write_bytes(pretty_bytes(seal({k: v for k, v in pack.items() if k not in ("content_hash", "pack_id")})))
    one_line(run_cli(["replay", p]), 2, "request.subject.id: refused: 'analyst\\nroot' is not a valid id")
    one_line(run_cli(["investigate", "C-102", "--subject", "analyst\nroot"]), 2,
             "--subject 'analyst\\nroot' is not a valid id")


# ------------------------------------------------------------------------------ item 14: FIFO, /dev/zero
def _cli_subprocess(*args, timeout=60):
    env = {k: v for k, v in os.environ.items()}
    return subprocess.run([sys.executable, "-m", "ctxcli.cli.main", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=REPO)


@pytest.mark.parametrize("cmd", ["render", "replay", "explain-omissions", "diff"])
@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_pack_that_is_a_fifo_or_a_device_is_refused_at_once(tmp_path, cmd, kind):
    if kind == "fifo":
        p = tmp_path / "pack.json"
        os.mkfifo(p)
        what = "a FIFO"
    else:
        p = Path("/dev/zero")
        if not p.exists():
            pytest.skip("no /dev/zero")
        what = "a device"
    r = _cli_subprocess(cmd, p, *([p] if cmd == "diff" else []))   # a hang fails by the timeout
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"ctx: error: {p}: not a pack: not a regular file ({what})\n"
    assert r.stdout == ""


# ------------------------------------------------------------------------------ item 13: one line, not exit 70
# a NUL byte in a manifest's snapshot path: tests/test_bad_input.py, case snapshot_nul_byte


def test_render_out_naming_a_folder(run, tmp_path):
    folder = tmp_path / "target"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    one_line(run_cli(["render", run, "--out", folder]), 2,
             f"--out {folder}: exists and is not a regular file (a folder: name a file to write)")
    assert [x.name for x in folder.iterdir()] == ["keep.txt"]


def test_out_dot_is_one_line_and_touches_nothing(store, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("mine")
    monkeypatch.chdir(work)
    r = run_cli(["investigate", "C-102", "--out", "."])
    assert r.exit_code == 2, r.stderr
    one_line(r, 2)
    assert sorted(x.name for x in work.iterdir()) == ["notes.txt"]
    assert (work / "notes.txt").read_text() == "mine"


def _enospc(*_a, **_k):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_no_space_left_when_writing_a_run_folder_or_rendering(run, tmp_path, monkeypatch):
    monkeypatch.setattr(os, "fsync", _enospc)            # the disk fills at the first flush
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "full"])
    # the first write of a run is its ledger journal (beside the store): refused there, nothing written
    one_line(r, 2, "ledger.pending/", ": cannot write there (No space left on device); nothing was written")
    assert not (tmp_path / "full").exists()
    assert [x.name for x in tmp_path.iterdir() if x.name.startswith(".full")] == []
    out = tmp_path / "render.md"
    one_line(run_cli(["render", run, "--out", out]), 2, f"{out}: cannot write there (No space left on device)")
    assert [x.name for x in tmp_path.iterdir() if "render" in x.name] == []


def test_no_space_left_while_replacing_a_run_folder_keeps_the_old_one(run, tmp_path, monkeypatch):
    before = {p.name: p.read_bytes() for p in run.parent.iterdir()}
    real = os.replace
    calls = []

    def replace(src, dst):
        calls.append((src, dst))
        if len(calls) == 2:                          # the swap of the new folder in
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    one_line(run_cli(["investigate", "C-102", "--out", run.parent]), 2, "No space left on device")
    monkeypatch.setattr(os, "replace", real)
    assert {p.name: p.read_bytes() for p in run.parent.iterdir()} == before


def _good_load(project_copy) -> Path:
    assert run_cli(["load"]).exit_code == 0
    return project_copy / ".ctx" / "ctx.duckdb"


def test_no_space_left_during_load_keeps_the_store(project_copy, monkeypatch):
    db = _good_load(project_copy)
    before = db.read_bytes()
    monkeypatch.setattr(os, "fsync", _enospc)
    r = run_cli(["load", "--full"])    # a load that writes (an unchanged project is a no-op)
    one_line(r, 3, f"cannot write the store {db}: No space left on device (the previous store, if any, is "
                   f"unchanged)")
    monkeypatch.undo()
    assert db.read_bytes() == before
    # the store, its generations, its sync file (load/sync.py), its secret and its writer lock file (kept
    # between loads, no data), the erasures the first load's tombstones recorded (and the ledger lock):
    # no staging leftovers
    assert sorted(x.name for x in db.parent.iterdir()) == ["ctx.duckdb", "ctx.duckdb.generations", "ctx.duckdb.lock",
                                                           "ctx.duckdb.sync", "erasures.jsonl", "ledger.lock",
                                                           "secret.key"]
    assert [x.name for x in (db.parent / "ctx.duckdb.generations").iterdir()] == ["000001.duckdb"]


def test_no_space_on_a_real_tiny_filesystem(project_copy, tmp_path):
    """The same through the kernel, where a tmpfs can be mounted (root on Linux)."""
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    if not ROOT or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mnt)],
                                  capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        r = run_cli(["load", "--db", mnt / "ctx.duckdb"])
        one_line(r, 3, f"{mnt / 'ctx.duckdb'}")
        assert not (mnt / "ctx.duckdb").exists()
        _good_load(project_copy)
        (mnt / "filler").write_bytes(b"\0" * (256 * 1024 - 8192))
        r = run_cli(["investigate", "C-102", "--out", mnt / "run"])
        one_line(r, 2, "No space left on device")
        assert not (mnt / "run").exists()
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


def test_read_only_store_folder(project_copy, tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    if ROOT:      # root writes anywhere: make the folder refuse as a read-only file system would
        import tempfile

        def refuse(*_a, **_k):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS))

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
        monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    else:
        ro.chmod(0o555)
    try:
        r = run_cli(["load", "--db", ro / "ctx.duckdb"])
        one_line(r, 3, f"cannot write the store {ro / 'ctx.duckdb'}: ")
        assert [p for p in ro.iterdir() if p.name != "ctx.duckdb.lock"] == []   # the lock file holds no data
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize("how", ["random_bytes", "truncated", "zeroed_tail"])
def test_damaged_store_is_exit_3(bundled_store, tmp_path, how):
    pack = investigate(tmp_path / "good", "--db", bundled_store)
    db = tmp_path / "ctx.duckdb"
    shutil.copy(bundled_store, db)
    size = db.stat().st_size
    with open(db, "r+b") as fh:
        if how == "random_bytes":
            import random

            rnd = random.Random(12)
            fh.seek(size // 16)
            fh.write(bytes(rnd.getrandbits(8) for _ in range(size // 2)))
        elif how == "truncated":
            fh.truncate(size // 3)
        else:
            fh.seek(size // 4)
            fh.write(b"\0" * (size - size // 4))
    for args in (["investigate", "C-102", "--db", db, "--out", tmp_path / "run"], ["sources", "--db", db],
                 ["replay", pack, "--db", db], ["explain-omissions", pack, "--object", "NO-SUCH-ID", "--db", db]):
        r = run_cli(args)
        one_line(r, 3, str(db), "rebuild it with `ctx load`")
    assert not (tmp_path / "run").exists()
