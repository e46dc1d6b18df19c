"""ctx sources preview: what a manifest produces, without loading."""

from __future__ import annotations

import json

from .conftest import REPO, run_cli
from .test_parsers_table import CSV, project


def test_preview_prints_the_first_objects_of_a_table_source(tmp_path, monkeypatch):
    project(tmp_path, {"deployments.csv": CSV}, {"file": "deployments.csv"})
    monkeypatch.setenv("CTX_ROOT", str(tmp_path))
    r = run_cli(["sources", "preview", "deploys", "--manifests", tmp_path / "manifests", "--json", "--limit", "1"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["objects"] == [{
        "object_id": "deploy:CHG-1", "tenant_id": "t1", "object_type": "deployment", "subject_id": "change:CHG-1",
        "title": "Deployment CHG-1 of checkout", "valid_from": "2026-03-01T09:00:00+00:00", "valid_to": None,
        "observed_at": "2026-03-01T09:00:00+00:00", "source_version": doc["objects"][0]["source_version"],
        "supports": [], "facts": {"replicas": 3, "service": "checkout"}, "keys": ["CHG-1"],
        "locator": "deployments.csv#row-1", "supersedes": None}]
    assert doc["entities"] == [{"tenant_id": "t1", "entity_key": "change:CHG-1", "entity_type": "change",
                                "name": "CHG-1"}]
    assert not (tmp_path / "s.duckdb").exists() and not list(tmp_path.rglob("*.duckdb"))


def test_preview_of_a_bundled_source_in_the_terminal():
    r = run_cli(["sources", "preview", "pay-runbooks", "--limit", "2", "--manifests", REPO / "manifests"])
    assert r.exit_code == 0, r.stderr
    assert "pay-runbooks (parser git): first 2 object(s)" in r.stdout
    assert "RB-PAY-RECOVERY-v3#overview" in r.stdout and "runbooks/payment-recovery.md@" in r.stdout


def test_preview_of_an_unknown_source_and_of_a_bad_row(tmp_path, monkeypatch):
    project(tmp_path, {"deployments.csv": CSV.replace(",3\n", ",three\n")}, {"file": "deployments.csv"})
    monkeypatch.setenv("CTX_ROOT", str(tmp_path))
    r = run_cli(["sources", "preview", "nope", "--manifests", tmp_path / "manifests"])
    assert r.exit_code == 2 and r.stderr.startswith("ctx: error: no source 'nope' in ")
    r = run_cli(["sources", "preview", "deploys", "--manifests", tmp_path / "manifests"])
    assert r.exit_code == 2
    assert r.stderr == ("ctx: error: sources/deploys/deployments.csv:2: facts.replicas: row 1: column 'replicas': "
                        "'three' is not a int\n")


def test_preview_masks_git_emails_and_the_manifests_patterns_as_a_load_does(tmp_path, monkeypatch):
    # git author / committer e-mails are PII the git parser masks (parsers/git.py EMAIL_MASK)
    r = run_cli(["sources", "preview", "pay-runbooks", "--limit", "2", "--json", "--manifests", REPO / "manifests"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "@example.invalid" not in r.stdout
    assert doc["masked"] == {"git_email": 4}
    assert doc["objects"][0]["facts"]["git_author"] == "payments-core <[email redacted]>"
    r = run_cli(["sources", "preview", "pay-runbooks", "--limit", "2", "--manifests", REPO / "manifests"])
    assert r.exit_code == 0 and "@example.invalid" not in r.stdout
    assert "masked as a load masks them: git_email ×4" in r.stdout
    # a manifest's own pattern applies to every field shown, lifted only for its scopes
    red = {"patterns": [{"name": "chg", "regex": "CHG-[0-9]+", "replacement": "[change]"}],
           "unless_scopes": ["ops:raw"]}
    project(tmp_path, {"deployments.csv": CSV}, {"file": "deployments.csv"}, redaction=red)
    monkeypatch.setenv("CTX_ROOT", str(tmp_path))
    r = run_cli(["sources", "preview", "deploys", "--manifests", tmp_path / "manifests", "--json", "--limit", "1"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "CHG-1" not in json.dumps(doc["objects"])      # entities are not masked by a load either
    o = doc["objects"][0]
    assert (o["object_id"], o["subject_id"], o["title"], o["keys"], o["locator"]) == (
        "deploy:[change]", "change:[change]", "Deployment [change] of checkout", ["[change]"], "deployments.csv#row-1")
    assert doc["masked"] == {"chg": 4} and doc["unless_scopes"] == ["ops:raw"]
