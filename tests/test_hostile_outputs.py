"""Hostile inputs against what ctx writes and discloses (issue 12, items 1–4 and 7a).

The corpus of this file: ``--out`` targets ctx must not replace (``OUT_TARGETS``), PII
placed in every string field of an object (``PII``), and ids of other tenants, missing
objects and restricted tombstones given to ``explain-omissions --object``. Each test failed
on the code before the fix.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

from .conftest import run_cli


def _one_line_exit_2(r, *fragments: str) -> str:
    assert r.exit_code == 2, (r.exit_code, r.stdout[-400:], r.stderr)
    err = r.stderr
    assert err.startswith("ctx: error: ") and err.count("\n") == 1, repr(err)
    assert "Traceback" not in err
    for f in fragments:
        assert f in err, (f, err)
    return err


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes), symlinks as their target; not
    timings.json (wall clock)."""
    out: dict[str, bytes] = {}
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if rel == "timings.json":
            continue
        if rel == ".ctx-run":       # the marker lists timings.json when the run wrote one
            import json

            doc = json.loads(p.read_bytes())
            doc["files"] = [f for f in doc.get("files", []) if f != "timings.json"]
            out[rel] = json.dumps(doc, sort_keys=True).encode()
            continue
        if p.is_symlink():
            out[rel] = b"-> " + os.readlink(p).encode()
        elif p.is_file():
            out[rel] = p.read_bytes()
    return out


# ------------------------------------------------------------------------------ item 1: --out
RUN_FILES = [".ctx-run", "answer.json", "answer.md", "pack.json", "run.json", "trace.jsonl"]


def _t_file(tmp: Path) -> Path:
    (tmp / "notes.txt").write_text("my notes\n")
    return tmp / "notes.txt"


def _t_folder_with_files(tmp: Path) -> Path:
    d = tmp / "mine"
    d.mkdir()
    (d / "pack.json").write_text("{}\n")           # a ctx-like name is not enough
    (d / "thesis.tex").write_text("\\begin{document}\n")
    return d


def _t_symlink_to_run(tmp: Path) -> Path:
    target = tmp / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("keep\n")
    (tmp / "link").symlink_to(target)
    return tmp / "link"


def _t_run_folder_plus_user_file(tmp: Path) -> Path:
    r = run_cli(["investigate", "C-102", "--out", tmp / "run"])
    assert r.exit_code == 0, r.stderr
    (tmp / "run" / "my-analysis.md").write_text("findings\n")
    return tmp / "run"


def _t_forged_marker_subfolder(tmp: Path) -> Path:
    r = run_cli(["investigate", "C-102", "--out", tmp / "run"])
    assert r.exit_code == 0, r.stderr
    (tmp / "run" / "sub").mkdir()
    (tmp / "run" / "sub" / "data.csv").write_text("a,b\n")
    return tmp / "run"


def _t_ancestor_of_cwd(tmp: Path) -> Path:
    (tmp / "work").mkdir()
    os.chdir(tmp / "work")
    return tmp


# name -> (make the target under tmp_path, fragment of the message)
OUT_TARGETS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "regular_file": (_t_file, "exists and is not a folder"),
    "folder_with_other_files": (_t_folder_with_files, "is not a ctx run folder"),
    "symlink": (_t_symlink_to_run, "is a symbolic link"),
    "run_folder_plus_user_file": (_t_run_folder_plus_user_file, "'my-analysis.md', which ctx did not write"),
    "run_folder_plus_subfolder": (_t_forged_marker_subfolder, "'sub', which ctx did not write"),
    "ancestor_of_working_folder": (_t_ancestor_of_cwd, "contains the working folder"),
}


@pytest.mark.parametrize("cmd", ["investigate", "replay"])
@pytest.mark.parametrize("name", sorted(OUT_TARGETS))
def test_out_refuses_what_ctx_did_not_write(store, tmp_path, monkeypatch, name, cmd):
    monkeypatch.chdir(tmp_path)
    make, fragment = OUT_TARGETS[name]
    pack = tmp_path / "base" / "pack.json"
    assert run_cli(["investigate", "C-102", "--out", pack.parent]).exit_code == 0
    target = make(tmp_path)
    before = _tree(tmp_path)
    args = ["investigate", "C-102"] if cmd == "investigate" else ["replay", pack]
    r = run_cli([*args, "--out", target])
    _one_line_exit_2(r, f"--out {target}:", fragment)
    assert _tree(tmp_path) == before                      # nothing written, nothing removed
    assert not [p for p in tmp_path.iterdir() if p.name.endswith((".staging", ".old"))]


@pytest.mark.parametrize("cmd", ["investigate", "replay"])
def test_out_never_replaces_the_project_root(project_copy, store, tmp_path, cmd):
    pack = tmp_path / "base" / "pack.json"
    assert run_cli(["investigate", "C-102", "--db", store, "--out", pack.parent]).exit_code == 0
    before = _tree(project_copy)
    args = ["investigate", "C-102"] if cmd == "investigate" else ["replay", pack]
    r = run_cli([*args, "--db", store, "--out", project_copy])
    _one_line_exit_2(r, f"--out {project_copy}:")
    assert _tree(project_copy) == before
    assert (project_copy / "manifests" / "sources").is_dir()


@pytest.mark.parametrize("spelling", [".", "..", "./"])
def test_out_dot_is_refused(store, tmp_path, monkeypatch, spelling):
    (tmp_path / "cwd").mkdir()                           # an empty working folder is still refused
    monkeypatch.chdir(tmp_path / "cwd")
    r = run_cli(["investigate", "C-102", "--out", spelling])
    _one_line_exit_2(r, "--out ")
    assert list((tmp_path / "cwd").iterdir()) == []


def test_out_replaces_missing_empty_and_its_own_run_folder(store, tmp_path):
    # missing
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "a"])
    assert r.exit_code == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(RUN_FILES + ["timings.json"])
    marker = json.loads((tmp_path / "a" / ".ctx-run").read_text())
    assert marker["schema_version"] == "ctx.run/1"
    assert [f for f in marker["files"] if f != "timings.json"] == RUN_FILES[1:]
    first = _tree(tmp_path / "a")
    # its own run folder, replaced by an identical one (byte for byte, marker included)
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "a"])
    assert r.exit_code == 0, r.stderr
    assert _tree(tmp_path / "a") == first
    # an empty folder
    (tmp_path / "empty").mkdir()
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "empty"])
    assert r.exit_code == 0, r.stderr
    assert _tree(tmp_path / "empty") == first
    # replay over a run folder ctx wrote
    r = run_cli(["replay", tmp_path / "a" / "pack.json", "--out", tmp_path / "empty"])
    assert r.exit_code == 0, r.stderr
    assert _tree(tmp_path / "empty") == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "empty"]    # no .old or .staging left


# ------------------------------------------------------------------------------ items 2 and 3: masks and digests
DOCS = "sources/claims-documents/objects.jsonl"      # masked (phone, resident id) unless pii:read

# Phone numbers placed in every string field of objects that end up admitted, rejected as a
# duplicate, rejected by relevance, and in an object id (a section heading is part of a
# Markdown object's id, title and locator the same way).
PII = {
    "admitted.title": "13811112222", "admitted.locator": "13822223333", "admitted.fact": "13833334444",
    "admitted.fact_list": "13844445555", "admitted.content": "13912345678",
    "duplicate.title": "13855556666", "duplicate.fact": "13866667777", "duplicate.source_version": "13877778888",
    "relevance.title": "13888889999", "relevance.locator": "13899990000",
    "relevance_id.object_id": "13700001111", "relevance_id.subject_id": "13700002222",
}


def _records(proj: Path) -> list[dict]:
    return [json.loads(x) for x in (proj / DOCS).read_text(encoding="utf-8").splitlines()]


def _plant_pii(proj: Path) -> None:
    recs = {r["object_id"]: r for r in _records(proj)}
    a = recs["DOC-C102-001"]
    assert PII["admitted.content"] in a["content"]          # the bundled record already carries one
    a["title"] += f" · tel {PII['admitted.title']}"
    a["locator"] += f"/tel-{PII['admitted.locator']}"
    a["facts"]["contact_phone"] = PII["admitted.fact"]
    a["facts"]["witness_phones"] = [f"tel {PII['admitted.fact_list']}", "none"]
    d = recs["DOC-C102-001-REEXPORT"]
    d["title"] += f" {PII['duplicate.title']}"
    d["facts"]["contact_phone"] = PII["duplicate.fact"]
    d["source_version"] = f"dms-{PII['duplicate.source_version']}"
    r = recs["DOC-C101-001"]
    r["title"] += f" {PII['relevance.title']}"
    r["locator"] += f"?tel={PII['relevance.locator']}"
    extra = dict(r, object_id=f"DOC-C101-{PII['relevance_id.object_id']}", subject_id=f"case:{PII['relevance_id.subject_id']}",
                 title="Loss statement — claim C-101 (second copy)", content=r["content"] + " Second copy.")
    extra.pop("content_hash", None)
    lines = [json.dumps(x, ensure_ascii=False) for x in recs.values()] + [json.dumps(extra, ensure_ascii=False)]
    (proj / DOCS).write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture
def pii_project(project_copy):
    _plant_pii(project_copy)
    r = run_cli(["load"])
    assert r.exit_code == 0, r.stderr
    return project_copy


def _plain_hashes(db: Path) -> dict[str, str]:
    """Plain content hashes (hex) of the masked source's objects whose text the masks change,
    as the store holds them."""
    import re

    from ctxcli.store.db import open_reader

    con = open_reader(db)
    try:
        rows = con.execute("SELECT object_id, content_hash, content FROM objects "
                           "WHERE source_id = 'claims-documents'").fetchall()
    finally:
        con.close()
    pii = re.compile(r"(?<![0-9])1[3-9][0-9]{9}(?![0-9])|(?<![0-9])[1-9][0-9]{16}[0-9Xx](?![0-9A-Za-z])")
    out = {oid: h.split(":", 1)[1] for oid, h, text in rows if pii.search(text)}
    assert {"DOC-C102-001", "DOC-C102-001-REEXPORT", "DOC-C102-002"} <= set(out)
    return out


def _plain_snapshot_digests(db: Path) -> dict[str, str]:
    """The store's plain store and source digests (they digest whole snapshots, masked text included)."""
    from ctxcli.store.db import open_reader, store_meta

    con = open_reader(db)
    try:
        out = {"store": store_meta(con)["store_digest"].split(":")[1]}
        rows = con.execute("SELECT source_id, digest FROM sources").fetchall()
        out.update({"source " + s: d.split(":")[-1] for s, d in rows})
    finally:
        con.close()
    return out


def _all_outputs(run: Path, tmp: Path, extra: list[list[str]]) -> dict[str, bytes]:
    """Every file of the run folder and the stdout/stderr of every post-mortem command on it."""
    out = {p.name: p.read_bytes() for p in run.iterdir()}
    pack = run / "pack.json"
    cmds = [["render", pack], ["render", pack, "--format", "messages", "--json"],
            ["explain-omissions", pack], ["explain-omissions", pack, "--json"],
            ["replay", pack], ["replay", pack, "--json"], ["replay", pack, "--out", tmp / "replayed"],
            ["diff", pack, pack, "--json"], *extra]
    for args in cmds:
        r = run_cli(args)
        assert r.exit_code == 0, (args, r.stdout[-300:], r.stderr)
        out[" ".join(map(str, args))] = r.stdout_bytes + r.stderr_bytes
    out.update({"replayed/" + p.name: p.read_bytes() for p in (tmp / "replayed").iterdir()})
    return out


def test_masks_reach_every_string_and_no_plain_digest_of_masked_text(pii_project, tmp_path):
    run = tmp_path / "run"
    r = run_cli(["investigate", "C-102", "--out", run])
    assert r.exit_code == 0, r.stderr
    pack = json.loads((run / "pack.json").read_text())
    ids = [f"DOC-C101-{PII['relevance_id.object_id']}", "DOC-C102-001", "DOC-C102-001-REEXPORT", "DOC-C101-001"]
    objects = [["explain-omissions", run / "pack.json", "--object", oid, *j] for oid in ids for j in ([], ["--json"])]
    outputs = _all_outputs(run, tmp_path, objects)
    outputs["investigate"] = r.stdout_bytes + r.stderr_bytes
    plain = _plain_hashes(pii_project / ".ctx" / "ctx.duckdb")
    plain.update(_plain_snapshot_digests(pii_project / ".ctx" / "ctx.duckdb"))
    for where, blob in outputs.items():
        for oid in ids:                            # the id a caller typed may be echoed back to them
            if where.endswith(("--object " + oid, "--object " + oid + " --json")):
                blob = blob.replace(oid.encode(), b"<asked>")
        for field, phone in PII.items():
            assert phone.encode() not in blob, (field, where)
        for oid, h in plain.items():               # no plain digest of a masked object's text, nor 48 bits of it
            assert h[:12].encode() not in blob, (oid, where)

    asked = run_cli(["explain-omissions", run / "pack.json", "--object", ids[0], "--json"])
    assert json.loads(asked.stdout)["status"] == "omitted"    # found in the pack by its masked id
    # Not vacuous: the objects were admitted / rejected where the test means them to be.
    ev = {e["object_id"]: e for e in pack["evidence"]}
    om = {o["ref"]: o for o in pack["omissions"]}
    assert "[PHONE REDACTED]" in ev["DOC-C102-001"]["title"] and "[PHONE REDACTED]" in ev["DOC-C102-001"]["locator"]
    assert ev["DOC-C102-001"]["facts"]["contact_phone"] == "[PHONE REDACTED]"
    assert ev["DOC-C102-001"]["facts"]["witness_phones"] == ["tel [PHONE REDACTED]", "none"]
    assert om["DOC-C102-001-REEXPORT"]["gate"] == "duplicate"
    assert om["DOC-C102-001-REEXPORT"]["title"].endswith("[PHONE REDACTED]")
    assert om["DOC-C102-001-REEXPORT"]["source_version"] == "dms-[PHONE REDACTED]"
    assert om["DOC-C101-001"]["gate"] == "relevance" and om["DOC-C101-001"]["title"].endswith("[PHONE REDACTED]")
    hidden = om["DOC-C101-[PHONE REDACTED]"]
    assert hidden["gate"] == "relevance" and hidden["detail"]["subject_id"] == "case:[PHONE REDACTED]"
    # Every digest of masked text is keyed; the evidence id derives from the keyed one.
    (tr,) = ev["DOC-C102-001"]["transformations"]
    assert tr["kind"] == "redaction" and tr["before_hash"].startswith("hmac-sha256:")
    assert ev["DOC-C102-001"]["content_hash"] == tr["before_hash"]
    assert om["DOC-C102-001-REEXPORT"]["content_hash"].startswith("hmac-sha256:")
    # A subject who may read the raw text gets it, with the plain hash.
    raw = tmp_path / "raw"
    r = run_cli(["investigate", "C-102", "--subject", "auditor-9", "--scope", "case:read", "--scope", "policy:read",
                 "--scope", "document:read", "--scope", "risk:read", "--scope", "pii:read", "--clearance", "confidential",
                 "--out", raw])
    assert r.exit_code == 0, r.stderr
    blob = (raw / "pack.json").read_bytes()
    for field in ("admitted.title", "admitted.locator", "admitted.fact", "duplicate.title", "relevance.title"):
        assert PII[field].encode() in blob, field
    assert plain["DOC-C102-001"].encode() in blob


def test_a_tampered_masked_object_shows_only_keyed_integrity_hashes(pii_project, tmp_path):
    import duckdb

    db = pii_project / ".ctx" / "ctx.duckdb"
    con = duckdb.connect(str(db))
    con.execute("UPDATE objects SET content = content || ' Call 13512340000.' WHERE object_id = 'DOC-C102-002'")
    con.close()
    run = tmp_path / "run"
    assert run_cli(["investigate", "C-102", "--out", run]).exit_code == 0
    om = {o["ref"]: o for o in json.loads((run / "pack.json").read_text())["omissions"]}
    d = om["DOC-C102-002"]["detail"]
    assert om["DOC-C102-002"]["gate"] == "integrity"
    assert d["registered"].startswith("hmac-sha256:") and d["actual"].startswith("hmac-sha256:")
    assert d["registered"] != d["actual"]
    plain = _plain_hashes(db)["DOC-C102-002"]
    for where, blob in _all_outputs(run, tmp_path, []).items():
        if where.startswith(("replay", "replayed")):
            continue
        assert plain[:12].encode() not in blob and b"13512340000" not in blob, where


# ------------------------------------------------------------------------------ item 2: the store secret
def _read_key(db: Path) -> bytes:
    return bytes.fromhex((db.parent / "secret.key").read_text().strip())


def test_store_secret_is_created_once_private_and_keeps_packs_byte_identical(project_copy, tmp_path):
    db = project_copy / ".ctx" / "ctx.duckdb"
    assert run_cli(["load"]).exit_code == 0
    kf = db.parent / "secret.key"
    assert kf.is_file() and (kf.stat().st_mode & 0o777) == 0o600
    key = kf.read_bytes()
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    assert run_cli(["load"]).exit_code == 0                    # a reload keeps the secret
    assert kf.read_bytes() == key
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "b"]).exit_code == 0
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
    r = run_cli(["replay", tmp_path / "a" / "pack.json"])
    assert r.exit_code == 0 and "identical" in r.stdout and "byte for byte" in r.stdout
    pack = json.loads((tmp_path / "a" / "pack.json").read_text())
    from ctxcli.util.canon import key_id

    assert pack["store"]["key_id"] == key_id(_read_key(db))
    assert key.strip().decode() not in (tmp_path / "a" / "pack.json").read_text()


def test_a_different_secret_changes_every_keyed_value_and_replay_says_so(store, tmp_path, monkeypatch):
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    monkeypatch.setenv("CTX_SECRET", "another secret, long enough")
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "b"]).exit_code == 0
    a, b = (json.loads((tmp_path / x / "pack.json").read_text()) for x in "ab")
    assert a["answer"] == b["answer"] or a["answer"]["verdict"] == b["answer"]["verdict"]
    assert {o["ref"] for o in a["omissions"] if o["withheld"]}.isdisjoint(o["ref"] for o in b["omissions"] if o["withheld"])
    redacted = [e["object_id"] for e in a["evidence"] if e["content_hash"].startswith("hmac-sha256:")]
    assert redacted
    for oid in redacted:
        ea = next(e for e in a["evidence"] if e["object_id"] == oid)
        eb = next(e for e in b["evidence"] if e["object_id"] == oid)
        assert ea["content_hash"] != eb["content_hash"] and ea["evidence_id"] != eb["evidence_id"]
        assert ea["text"] == eb["text"]
    r = run_cli(["replay", tmp_path / "a" / "pack.json"])     # CTX_SECRET still set: another secret
    assert r.exit_code == 1 and "store secret changed: hk-" in r.stdout, r.stdout
    monkeypatch.delenv("CTX_SECRET")
    assert run_cli(["replay", tmp_path / "a" / "pack.json"]).exit_code == 0


@pytest.mark.parametrize("content,fragment", [
    (b"not a key\n", "not a ctx secret key"),
    (b"", "not a ctx secret key"),
    (None, "not a ctx secret key"),                          # a folder named secret.key
])
def test_a_bad_key_file_is_one_line_and_never_replaced(store, tmp_path, monkeypatch, content, fragment):
    db = tmp_path / "s" / "ctx.duckdb"
    db.parent.mkdir()
    shutil.copy(store, db)
    kf = db.parent / "secret.key"
    if content is None:
        kf.mkdir()
    else:
        kf.write_bytes(content)
    monkeypatch.setenv("CTX_DB", str(db))
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "o"])
    assert r.exit_code in (2, 3) and r.stderr.count("\n") == 1, r.stderr
    assert str(kf) in r.stderr and fragment in r.stderr
    assert kf.is_dir() if content is None else kf.read_bytes() == content
    assert not (tmp_path / "o").exists()


def test_ctx_secret_must_not_be_trivially_short(store, tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_SECRET", "short")
    _one_line_exit_2(run_cli(["investigate", "C-102", "--out", tmp_path / "o"]), "CTX_SECRET must be at least 16")


def test_concurrent_first_use_agrees_on_one_secret(store, tmp_path):
    import threading

    from ctxcli.store.secret import store_key

    db = tmp_path / "c" / "ctx.duckdb"
    db.parent.mkdir()
    got: list[bytes] = []
    threads = [threading.Thread(target=lambda: got.append(store_key(db))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 1 and len(got[0]) == 32
    assert sorted(p.name for p in db.parent.iterdir()) == ["secret.key"]     # no temporary file left


# ------------------------------------------------------------------------------ item 7a: keyed opaque refs
def test_opaque_refs_are_keyed_and_a_guessed_id_cannot_be_confirmed(store, tmp_path):
    import hashlib

    from ctxcli.util.canon import opaque_ref

    assert run_cli(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "r"]).exit_code == 0
    pack = json.loads((tmp_path / "r" / "pack.json").read_text())
    # withheld records are never candidates (docs/gates.md): their refs come from
    # explain-omissions --object, which names a withheld object only by its keyed ref
    refs = set()
    for oid in ("SIU-NOTE-C102", "RULE-MCS-2026.1", "DOC-C102-001", "SIG-C102-AMOUNT"):
        r = run_cli(["explain-omissions", tmp_path / "r" / "pack.json", "--object", oid, "--json"])
        x = json.loads(r.stdout)
        assert x["status"] == "withheld", oid
        refs.add(x["ref"])
    assert len(refs) == 4 and all(r.startswith("wh-") and len(r) == 19 for r in refs)
    tenant = pack["request"]["tenant_id"]
    # The unkeyed formula of before confirms nothing any more...
    unkeyed = {"wh-" + hashlib.sha256(f"ctx-withheld\0{tenant}\0{oid}".encode()).hexdigest()[:16]
               for oid in ("SIU-NOTE-C102", "RULE-MCS-2026.1", "DOC-C102-001", "SIG-C102-AMOUNT")}
    assert refs.isdisjoint(unkeyed)
    # ... nor does any key but the store's; with the store's key the refs are the object ids'.
    trace = (tmp_path / "r" / "trace.jsonl").read_text()
    assert opaque_ref(tenant, "SIU-NOTE-C102", key=b"x" * 32) not in refs
    mine = opaque_ref(tenant, "SIU-NOTE-C102", key=_read_key(store))
    assert mine in refs and mine not in trace and "SIU-NOTE-C102" not in trace


def test_diff_and_replay_match_withheld_refs_across_runs_on_the_same_store(store, tmp_path, monkeypatch):
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "b"]).exit_code == 0
    r = run_cli(["diff", tmp_path / "a" / "pack.json", tmp_path / "b" / "pack.json", "--json"])
    d = json.loads(r.stdout)
    moved = {c["key"]: c for c in d["evidence"]["only_a"]}
    # withheld inside B's statements, the rule was never B's candidate: no ref to match
    assert moved["RULE-MCS-2026.1"]["b_state"] == ("not a candidate; withheld for access there: policy_version "
                                                   "at least 3 by scope")
    # Without the store's secret the same (and nothing crashes).
    monkeypatch.setenv("CTX_DB", str(tmp_path / "elsewhere" / "ctx.duckdb"))
    r = run_cli(["diff", tmp_path / "a" / "pack.json", tmp_path / "b" / "pack.json", "--json"])
    d = json.loads(r.stdout)
    assert "RULE-MCS-2026.1" in {c["key"] for c in d["evidence"]["only_a"]}
    assert {c["b_state"].split(";")[0] for c in d["evidence"]["only_a"]} == {"not a candidate"}
    assert not (tmp_path / "elsewhere").exists()                               # diff never creates a secret
    r = run_cli(["diff", tmp_path / "a" / "pack.json", tmp_path / "b" / "pack.json", "--db", store, "--json"])
    assert json.loads(r.stdout)["evidence"]["only_a"] == list(moved.values())


# ------------------------------------------------------------------------------ item 4: indistinguishable ids
def _explain(pack: Path, oid: str, *extra) -> tuple[str, str]:
    out, codes = [], []
    for j in ([], ["--json"]):
        r = run_cli(["explain-omissions", pack, "--object", oid, *j, *extra])
        codes.append(r.exit_code)
        out.append(f"{r.exit_code} " + r.stdout.replace(oid, "<ID>"))
    # found nowhere the subject may know of: exit 1 (issue 49), in both forms; anything else 0
    assert codes == [1, 1] if json.loads(out[1][2:])["status"] == "not_found" else codes == [0, 0], codes
    return out[0], out[1]


@pytest.mark.parametrize("variant", [None, "restricted"])
def test_another_tenants_id_answers_exactly_like_a_missing_one(store, tmp_path, variant):
    args = ["--variant", variant] if variant else []
    assert run_cli(["investigate", "C-102", *args, "--out", tmp_path / "p"]).exit_code == 0
    pack = tmp_path / "p" / "pack.json"
    none = _explain(pack, "NO-SUCH-OBJECT-42")
    for other in ("OTHER-CASE-C-102", "OTHER-RULE-MCS-2024.2", "OTHER-SIG-C102-AMOUNT"):
        assert _explain(pack, other) == none
    assert json.loads(none[1][2:])["status"] == "not_found" and none[0].startswith("1 ")


def test_a_tombstone_in_a_source_the_subject_may_not_read_is_not_confirmed(store, tmp_path):
    assert run_cli(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "p"]).exit_code == 0
    pack = tmp_path / "p" / "pack.json"
    t_text, t_json = _explain(pack, "DOC-C102-009")           # tombstoned in claims-documents (document:read)
    assert (t_text, t_json) == _explain(pack, "NO-SUCH-OBJECT-42")
    for leak in ("2026-07-09", "claims-documents", "tombstoned on", "wrong claim"):
        assert leak not in t_text + t_json
    # A subject who may read the source still learns when and why it was deleted.
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "q"]).exit_code == 0
    doc = json.loads(_explain(tmp_path / "q" / "pack.json", "DOC-C102-009")[1][2:])
    assert doc["status"] == "tombstoned" and doc["source_id"] == "claims-documents" and "wrong claim" in doc["sentence"]


def test_replay_does_not_date_a_deletion_in_a_source_the_subject_may_no_longer_read(project_copy, tmp_path):
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "p"]).exit_code == 0
    tomb = project_copy / "sources" / "claims-documents" / "tombstones.jsonl"
    tomb.write_text(tomb.read_text() + json.dumps({"object_id": "DOC-C102-001", "tenant_id": "tenant-demo",
                                                   "deleted_at": "2026-07-20T08:00:00+08:00",
                                                   "reason": "moved to the SIU archive"}) + "\n")
    m = project_copy / "manifests" / "sources" / "claims-documents.yaml"
    m.write_text(m.read_text().replace("required_scopes: [document:read]", "required_scopes: [document:read, siu:read]"))
    assert run_cli(["load"]).exit_code == 0
    r = run_cli(["replay", tmp_path / "p" / "pack.json", "--json", "--against", "current"])
    assert r.exit_code == 1, r.stderr
    purged = {p["object_id"]: p for p in json.loads(r.stdout)["purged"]}
    assert purged["DOC-C102-001"]["how"] == "gone" and purged["DOC-C102-001"]["deleted_at"] is None
    assert "2026-07-20" not in r.stdout and "SIU archive" not in r.stdout
