"""Issue 46 item 1: a recorded erasure applies to every new run from the moment it is recorded
(by object id and by content: a copy of the text under another id), `erase --apply` skips and
reports a file ctx did not write, and every digest of an erased text left in a run folder is
keyed with the store secret."""

from __future__ import annotations

import json
import re
from pathlib import Path

from .conftest import Counting, run_cli

OID = "DOC-C102-001"
COPY = "DOC-C102-001-REEXPORT"


def _texts(pack: Path, oid: str) -> tuple[list[str], list[str]]:
    """(strings of the object's text a run folder must not hold, its plain digests)."""
    item = next(e for e in json.loads(pack.read_text())["evidence"] if e["object_id"] == oid)
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", item["text"]) if len(s.strip()) >= 30]
    return [item["text"], *sentences], [h for h in (item["content_hash"], item["text_hash"]) if h.startswith("sha256:")]


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def _assert_clean(root: Path, strings: list[str], digests: list[str]) -> None:
    for p in _files(root):
        data = p.read_bytes()
        for s in strings + digests:
            assert s.encode() not in data, (p, s[:50])


def test_a_recorded_erasure_applies_to_the_next_run_by_id_and_by_content(project_copy, tmp_path):
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "before"]).exit_code == 0
    strings, digests = _texts(tmp_path / "before" / "pack.json", OID)
    before = json.loads((tmp_path / "before" / "pack.json").read_text())
    assert [o["gate"] for o in before["omissions"] if o["object_id"] == COPY] == ["duplicate"]

    r = run_cli(["erase", OID, "--reason", "GDPR request 118"])
    assert r.exit_code == 0
    # the erasure file holds no plain digest of the text: its copies are found by keyed hashes
    rec = (project_copy / ".ctx" / "erasures.jsonl").read_text()
    assert all(d not in rec for d in digests) and '"content_keys":["hmac-sha256:' in rec

    # no --apply yet: the next run omits it (and its re-export) before reading its text
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "after"])
    assert r.exit_code == 0, r.stderr
    pack = json.loads((tmp_path / "after" / "pack.json").read_text())
    assert OID not in [e["object_id"] for e in pack["evidence"]]
    assert COPY not in [e["object_id"] for e in pack["evidence"]]
    erased = {o["object_id"]: o for o in pack["omissions"] if o["gate"] == "erasure"}
    assert sorted(erased) == [OID, COPY]
    assert erased[OID]["reason"] == "erased" and erased[OID]["detail"]["matched"] == "object_id"
    assert erased[COPY]["detail"]["matched"] == "content" and erased[COPY]["detail"]["copy_of"] == OID
    assert {o["title"] for o in erased.values()} == {"[erased]"}
    assert all(o["content_hash"].startswith("hmac-sha256:") for o in erased.values())
    _assert_clean(tmp_path / "after", strings, digests)
    r = run_cli(["explain-omissions", tmp_path / "after"])
    assert r.exit_code == 0 and f"{COPY}" in r.stdout and "erased on" in r.stdout

    # replay of the pack built before: rebuilt without it, and says so
    r = run_cli(["replay", tmp_path / "before"])
    assert r.exit_code == 1
    assert f"evidence removed: {OID} (source claims-documents) was admitted as" in r.stdout
    assert "now rejected by erasure (erased)" in r.stdout

    # the erasure of another tenant's object does not touch this tenant's runs
    (project_copy / ".ctx" / "erasures.jsonl").write_text(rec.replace('"tenant_id":null', '"tenant_id":"tenant-b"'))
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "other"]).exit_code == 0
    again = json.loads((tmp_path / "other" / "pack.json").read_text())
    assert OID in [e["object_id"] for e in again["evidence"]]


def test_the_mcp_step_applies_the_erasure_too(project_copy, tmp_path):
    from ctxcli import api

    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["erase", OID, "--reason", "r"]).exit_code == 0
    step = api.build_step(api.InvestigateOptions(case="C-102"), goal_types=["document_status"], held=[],
                          step_budget=None)
    assert OID not in [i["object_id"] for i in step.evidence]
    assert {o["object_id"]: o["gate"] for o in step.omissions if o.get("object_id") in (OID, COPY)} == {
        OID: "erasure", COPY: "erasure"}


def test_a_copy_survives_neither_tombstone_nor_reload(project_copy, tmp_path):
    """The issue's sequence: erase, tombstone, reload, apply: the re-export stays out."""
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["erase", OID, "--reason", "r"]).exit_code == 0
    tomb = project_copy / "sources" / "claims-documents" / "tombstones.jsonl"
    tomb.write_text(tomb.read_text() + json.dumps({"object_id": OID, "tenant_id": "tenant-demo",
                                                   "deleted_at": "2026-07-24T09:00:00+08:00",
                                                   "reason": "wrong claim"}) + "\n")
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["erase", "--apply"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    pack = json.loads((tmp_path / "a" / "pack.json").read_text())
    assert COPY not in [e["object_id"] for e in pack["evidence"]]
    assert [(o["gate"], o["detail"]["copy_of"]) for o in pack["omissions"] if o["object_id"] == COPY] == [
        ("erasure", OID)]


def test_a_tombstone_alone_erases_the_copies_from_the_previous_generation(project_copy, tmp_path):
    assert run_cli(["load"]).exit_code == 0
    tomb = project_copy / "sources" / "claims-documents" / "tombstones.jsonl"
    tomb.write_text(tomb.read_text() + json.dumps({"object_id": OID, "tenant_id": "tenant-demo",
                                                   "deleted_at": "2026-07-24T09:00:00+08:00",
                                                   "reason": "wrong claim"}) + "\n")
    assert run_cli(["load"]).exit_code == 0
    line = [ln for ln in (project_copy / ".ctx" / "erasures.jsonl").read_text().splitlines() if OID in ln]
    assert len(line) == 1 and '"content_keys":["hmac-sha256:' in line[0]
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    pack = json.loads((tmp_path / "a" / "pack.json").read_text())
    assert COPY not in [e["object_id"] for e in pack["evidence"]]


def test_apply_skips_and_reports_a_foreign_file_and_keys_the_digests(project_copy, tmp_path):
    assert run_cli(["load"]).exit_code == 0
    runs = project_copy / "runs"
    assert run_cli(["investigate", "C-102", "--out", runs / "a"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--out", runs / "b"]).exit_code == 0
    strings, digests = _texts(runs / "a" / "pack.json", OID)
    assert run_cli(["render", runs / "a", "--out", runs / "a" / "rendered.txt"]).exit_code == 0
    foreign = (runs / "a" / "rendered.txt").read_bytes()
    assert strings[1].encode() in foreign
    assert run_cli(["erase", OID, "--reason", "r"]).exit_code == 0
    r = run_cli(["erase", "--apply", "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)["applied"]
    assert sorted(doc["rewritten"]) == ["runs/a", "runs/b"]
    assert doc["skipped"] == [{"file": "runs/a/rendered.txt",
                               "why": "not written by ctx: left as it is (it may still hold erased text)"}]
    assert (runs / "a" / "rendered.txt").read_bytes() == foreign        # never overwritten
    (runs / "a" / "rendered.txt").unlink()
    for folder in ("a", "b"):
        _assert_clean(runs / folder, strings, digests)
    item = next(e for e in json.loads((runs / "a" / "pack.json").read_text())["evidence"] if e["object_id"] == OID)
    assert item["text_hash"].startswith("hmac-sha256:") and item["content_hash"].startswith("hmac-sha256:")
    r = run_cli(["replay", runs / "a"])
    assert "tampered" not in r.stdout + r.stderr and f"erased: {OID}" in r.stdout
    r = run_cli(["erase", "--apply"])
    assert r.exit_code == 0 and "rewrote 0 run folder(s)" in r.stdout


def test_a_bad_erasures_file_is_exit_2_naming_the_line(project_copy, tmp_path):
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["erase", OID, "--reason", "r"]).exit_code == 0
    p = project_copy / ".ctx" / "erasures.jsonl"
    good = p.read_bytes()
    for bad, why in ((good[:-5], "incomplete (no newline: truncated?)"), (good + b"\xff\xfe\n", "not a JSON erasure"),
                     (good + b'{"seq": 1}\n', "not an erasure")):
        p.write_bytes(bad)
        r = run_cli(["investigate", "C-102", "--out", tmp_path / "x"])
        assert r.exit_code == 2, r.stdout
        assert r.stderr.count("\n") == 1 and "erasures.jsonl: line " in r.stderr and why in r.stderr, r.stderr
    p.unlink()
    import os

    os.mkfifo(p)
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "x"])
    assert r.exit_code == 2 and "not a regular file (a FIFO)" in r.stderr


def _objects(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write_objects(path: Path, rows: list[dict]) -> None:
    """The rows, each with the content hash of its (edited) content, as the source records it."""
    from ctxcli.util.canon import content_hash

    path.write_text("".join(json.dumps(dict(r, content_hash=content_hash(r["content"]))) + "\n" for r in rows),
                    encoding="utf-8")


def test_a_near_copy_differing_in_case_and_spacing_is_erased_by_its_duplicate_hash(project_copy, tmp_path):
    """The re-export with its text upper-cased and its spaces doubled has another content hash
    but the same duplicate hash: the erasure reaches it (matched content, copy of the original)."""
    docs = project_copy / "sources" / "claims-documents" / "objects.jsonl"
    rows = _objects(docs)
    for r in rows:
        if r["object_id"] == COPY:
            r["content"] = r["content"].upper().replace(" ", "  ")
    _write_objects(docs, rows)
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["erase", OID, "--reason", "r"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    pack = json.loads((tmp_path / "a" / "pack.json").read_text())
    assert [(o["gate"], o["detail"]["matched"], o["detail"].get("copy_of")) for o in pack["omissions"]
            if o["object_id"] == COPY] == [("erasure", "content", OID)]


def test_another_tenants_object_under_the_same_id_never_widens_an_erasure(project_copy, tmp_path):
    """tenant-other holds an object with the erased id (its text that of tenant-demo's identity
    document) and a copy of the erased text. Erasing tenant-demo's DOC-C102-001 keeps the identity
    document in C-102's pack, and once tenant-demo's object and re-export are tombstoned,
    `erase --apply` says the live store no longer holds it: the other tenant's copy is not its."""
    docs = project_copy / "sources" / "claims-documents" / "objects.jsonl"
    mine = {r["object_id"]: r for r in _objects(docs)}
    partner = project_copy / "sources" / "partner-claims" / "objects.jsonl"
    rows = _objects(partner)
    base = rows[0]
    rows += [dict(base, object_id=OID, title="Partner document", content=mine["DOC-C102-002"]["content"]),
             dict(base, object_id="OTHER-COPY-OF-001", title="Partner copy", content=mine[OID]["content"])]
    _write_objects(partner, rows)
    assert run_cli(["load"]).exit_code == 0
    assert run_cli(["erase", OID, "--tenant", "tenant-demo", "--reason", "r"]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    pack = json.loads((tmp_path / "a" / "pack.json").read_text())
    assert "DOC-C102-002" in [e["object_id"] for e in pack["evidence"]]
    assert sorted(o["object_id"] for o in pack["omissions"] if o["gate"] == "erasure") == [OID, COPY]
    r = run_cli(["erase", "--apply", "--json"])
    assert json.loads(r.stdout)["applied"]["current_store_holds"] == [OID]      # its own object, still loaded
    tomb = project_copy / "sources" / "claims-documents" / "tombstones.jsonl"
    tomb.write_text(tomb.read_text() + "".join(
        json.dumps({"object_id": o, "tenant_id": "tenant-demo", "deleted_at": "2026-07-24T09:00:00+08:00",
                    "reason": "erased"}) + "\n" for o in (OID, COPY)))
    assert run_cli(["load"]).exit_code == 0
    r = run_cli(["erase", "--apply", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["applied"]["current_store_holds"] == []


def test_the_erased_ids_reach_the_store_lookup_as_text_whatever_they_hold(store):
    """The erasure gate looks the erased ids up in the store (their hashes): ids holding a quote,
    a NUL or a backslash find nothing and break nothing; real ids of two tenants are each found,
    once, in (tenant, id) order."""
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        odd = ["it's", "a\x00b", "back\\slash", "CASE-C-102' OR '1'='1"]
        got = st.object_hashes(sorted(["OTHER-CASE-C-102", "CASE-C-102", *odd]))
        assert [(t, oid) for t, oid, _, _ in got] == [("tenant-demo", "CASE-C-102"), ("tenant-other", "OTHER-CASE-C-102")]
        assert all(ch for _, _, ch, _ in got)
        assert st.object_hashes(odd) == [] and st.object_hashes([]) == []
    finally:
        st.close()


def test_a_reader_looks_the_same_erasures_up_once(store):
    """Every run reads the recorded erasures and looks their ids up in the store; a reader (a
    warm server's kept one, or one run's) does so once for the same ids, and again for others,
    with the answer read without its memo each time."""
    from ctxcli.store import open_store
    from ctxcli.store.duckdb_store import DuckDBStore

    st = open_store(store)
    ran: list[str] = []
    raw = st.con
    st.con = Counting(raw, ran)
    try:
        for ids, statements in ((["CASE-C-102"], 1), (["CASE-C-102"], 0), (["OTHER-CASE-C-102"], 1),
                                (["CASE-C-102"], 1), (["CASE-C-102", "it's"], 1)):
            ran.clear()
            assert st.object_hashes(ids) == DuckDBStore(raw).object_hashes(ids)
            assert len(ran) == statements, (ids, ran)
    finally:
        st.con = raw
        st.close()
