"""A manifest change (a tightened required_scopes, a new mask) takes effect only with `ctx load`;
until then nothing runs on the store with the old permissions, and `ctx check` says why
(issue 27 item 13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .conftest import REPO, run_cli

STALE = ("ctx: error: the store was loaded before the manifests of risk-signals changed: run `ctx load` so that "
         "their scopes, purposes, clearance and masks apply\n")


def _tighten(project) -> None:
    m = project / "manifests" / "sources" / "risk-signals.yaml"
    text = m.read_text()
    assert "required_scopes: [risk:read]\n" in text
    m.write_text(text.replace("required_scopes: [risk:read]\n", "required_scopes: [risk:read, fraud:read]\n"))


def test_a_tightened_manifest_stops_every_run_until_ctx_load(project_copy, tmp_path):
    assert run_cli(["load"]).exit_code == 0
    before = run_cli(["investigate", "C-102", "--out", tmp_path / "before"])
    assert before.exit_code == 0, before.stderr
    # a comment is not a change of the manifest's content
    m = project_copy / "manifests" / "sources" / "risk-signals.yaml"
    m.write_text("# reviewed\n" + m.read_text())
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "comment"]).exit_code == 0
    r = run_cli(["check"])
    assert r.exit_code == 0 and r.stderr.endswith("no problems\n"), r.stdout + r.stderr
    _tighten(project_copy)
    for args in (["investigate", "C-102", "--out", tmp_path / "after"], ["replay", tmp_path / "before" / "pack.json"]):
        r = run_cli(args)
        assert (r.exit_code, r.stderr) == (3, STALE), args
    assert not (tmp_path / "after").exists()
    r = run_cli(["check"])
    assert r.exit_code == 1
    db = project_copy / ".ctx" / "ctx.duckdb"
    assert r.stdout == (f"manifests/sources/risk-signals.yaml: source risk-signals changed since the store was "
                        f"loaded ({db}): run `ctx load` so that its scopes, purposes, clearance and masks apply\n")
    assert "no problems" not in r.stderr
    # the MCP server refuses to start (exit 3, before it serves anything)
    env = {**os.environ, "CTX_ROOT": str(project_copy), "CTX_DB": str(db), "NO_COLOR": "1"}
    p = subprocess.run([sys.executable, "-m", "ctxcli.cli.main", "serve", "--runs", str(tmp_path / "runs")],
                       cwd=REPO, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert (p.returncode, p.stderr) == (3, STALE)
    # after `ctx load` the tightened scope applies: the risk signals are withheld from the case's subject
    assert run_cli(["load"]).exit_code == 0
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "loaded"])
    assert r.exit_code == 0, r.stderr
    pack = json.loads((tmp_path / "loaded" / "pack.json").read_text())
    assert not any(e["source_id"] == "risk-signals" for e in pack["evidence"])
    assert any(e["source_id"] == "risk-signals"
               for e in json.loads((tmp_path / "before" / "pack.json").read_text())["evidence"])
    assert run_cli(["check"]).exit_code == 0


def test_a_removed_or_added_manifest_counts_too(project_copy, tmp_path):
    assert run_cli(["load"]).exit_code == 0
    src = project_copy / "manifests" / "sources" / "external-mailbox.yaml"
    src.rename(tmp_path / "external-mailbox.yaml")
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "o"])
    assert r.exit_code == 3
    assert r.stderr.startswith("ctx: error: the store was loaded before the manifests of external-mailbox changed")
    r = run_cli(["check"])
    assert r.exit_code == 1 and "the store holds source external-mailbox, which no manifest declares any more" \
        in r.stdout
    # added, not loaded yet: a note, not a problem (issue 48 item 7)
    src.write_text((tmp_path / "external-mailbox.yaml").read_text())
    new = project_copy / "manifests" / "sources" / "ops-notes.yaml"
    new.write_text(src.read_text().replace("source_id: external-mailbox", "source_id: ops-notes")
                   .replace("snapshot: sources/external-mailbox", "snapshot: sources/ops-notes"))
    (project_copy / "sources" / "ops-notes").mkdir()
    (project_copy / "sources" / "ops-notes" / "objects.jsonl").write_text(json.dumps({
        "object_id": "NOTE-1", "source_version": "1", "object_type": "note", "title": "n", "content": "text",
        "locator": "notes://1", "observed_at": "2026-01-01T00:00:00Z"}) + "\n")
    db = project_copy / ".ctx" / "ctx.duckdb"
    note = f"note: manifests/sources/ops-notes.yaml: source ops-notes is not loaded yet ({db}): `ctx load` loads it\n"
    r = run_cli(["check"])
    assert (r.exit_code, r.stdout, r.stderr) == (0, note, "checked 36 file(s): no problems, 1 note(s)\n")
    doc = json.loads(run_cli(["check", "--json"]).stdout)
    assert doc["ok"] is True and doc["problems"] == [] and [n["file"] for n in doc["notes"]] == [
        "manifests/sources/ops-notes.yaml"]
    # a changed manifest beside it is still a problem
    _tighten(project_copy)
    r = run_cli(["check"])
    assert r.exit_code == 1 and r.stdout.endswith(note) and r.stdout.startswith(
        "manifests/sources/risk-signals.yaml: source risk-signals changed since the store was loaded"), r.stdout
    assert r.stderr == "checked 36 file(s): 1 problem(s), 1 note(s)\n"


def _count_manifest_reads(monkeypatch) -> list[int]:
    """Every validation of the manifests folder (``load.parse.read_manifests``), counted."""
    from ctxcli import project
    from ctxcli.load import parse

    project._DIGESTS.clear()
    reads: list[int] = []
    real = parse.read_manifests
    monkeypatch.setattr(parse, "read_manifests", lambda *a, **k: reads.append(1) or real(*a, **k))
    return reads


def test_unchanged_manifests_are_not_validated_again_and_an_edit_is_seen(project_copy, tmp_path, monkeypatch):
    """One process (a warm server, or these in-process CLI runs) keeps the manifests' digests
    while their files are unchanged; the next call after an edit reads them again and refuses."""
    from ctxcli.util import yamlio

    assert run_cli(["load"]).exit_code == 0
    monkeypatch.setattr(yamlio, "_SETTLED_NS", 0)      # the files just copied count as settled
    reads = _count_manifest_reads(monkeypatch)
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    assert len(reads) == 1
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "b"]).exit_code == 0
    assert len(reads) == 1                              # unchanged: not read nor validated again
    _tighten(project_copy)
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "c"])
    assert (r.exit_code, r.stderr) == (3, STALE) and len(reads) == 2


def test_manifests_changed_in_the_last_seconds_are_not_kept(project_copy, tmp_path, monkeypatch):
    """A file changed within the settling time is read again at every call (two writes within
    one clock tick could look alike), so an edit right after a call is still seen."""
    from ctxcli.util import yamlio

    assert run_cli(["load"]).exit_code == 0
    monkeypatch.setattr(yamlio, "_SETTLED_NS", 10**18)  # nothing settles
    reads = _count_manifest_reads(monkeypatch)
    for i in range(2):
        assert run_cli(["investigate", "C-102", "--out", tmp_path / f"o{i}"]).exit_code == 0
    assert len(reads) == 2
    _tighten(project_copy)
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "after"])
    assert (r.exit_code, r.stderr) == (3, STALE)


def _init_claims(where, monkeypatch):
    monkeypatch.delenv("CTX_ROOT")
    monkeypatch.delenv("CTX_DB")
    monkeypatch.chdir(where)
    assert run_cli(["init", "--example", "claims", "p"]).exit_code == 0
    monkeypatch.chdir(where / "p")
    assert run_cli(["load"]).exit_code == 0
    return where / "p"


def test_a_copied_project_checks_its_own_manifests_not_the_originals(tmp_path, monkeypatch):
    """`cp -r p q && cd q`, tighten a manifest: the copy's store is stale (exit 3, as in place);
    the original, untouched, still runs (issue 49 item 2)."""
    import shutil

    p = _init_claims(tmp_path, monkeypatch)
    q = tmp_path / "q"
    shutil.copytree(p, q, symlinks=True)
    monkeypatch.chdir(q)
    assert run_cli(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "q0"]).exit_code == 0
    _tighten(q)
    r = run_cli(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "q1"])
    assert (r.exit_code, r.stderr) == (3, STALE)
    r = run_cli(["check"])
    assert r.exit_code == 1 and r.stdout.startswith("manifests/sources/risk-signals.yaml: source risk-signals "
                                                    "changed since the store was loaded"), r.stdout
    monkeypatch.chdir(p)
    assert run_cli(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "p1"]).exit_code == 0
    _tighten(p)          # in place: the same exit 3
    r = run_cli(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "p2"])
    assert (r.exit_code, r.stderr) == (3, STALE)


def test_a_store_loaded_from_manifests_outside_the_project_is_compared_with_those(tmp_path, monkeypatch):
    """Loaded with --manifests from a folder outside the project: that folder is what the store
    is compared with (the project's own manifests differ and do not make it stale)."""
    other = _init_claims(tmp_path, monkeypatch)
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("CTX_ROOT", str(REPO))
    db = tmp_path / "x.duckdb"
    assert run_cli(["load", "--manifests", other / "manifests", "--db", db]).exit_code == 0
    assert run_cli(["investigate", "C-102", "--db", db, "--out", tmp_path / "a"]).exit_code == 0
    _tighten(other)
    r = run_cli(["investigate", "C-102", "--db", db, "--out", tmp_path / "b"])
    assert (r.exit_code, r.stderr) == (3, STALE)
