"""The bundled payment-incident domain in the forms a company has its data: the runbook
repository as a git bundle with its version history, deployments as a CSV export, ownership as
a CSV with validity columns, the service catalog as SQLite, the incident store as a nested JSON
export — manifests, mappings and playbook rules only, no ctx-format objects (the cases'
outcomes are checked by tests/test_incident.py and ctx eval)."""

from __future__ import annotations

import importlib.util
import sqlite3

from dulwich.bundle import read_bundle

from ctxcli.load.build import collect

from .conftest import REPO

RAW = {"pay-deployments": "deployments.csv", "pay-org": "ownership.csv", "pay-service-catalog": "catalog.sqlite",
       "pay-incidents": "incidents.json", "pay-runbooks": "runbooks.bundle"}
H = 3_600_000_000


def _make_raw():
    spec = importlib.util.spec_from_file_location("make_raw", REPO / "examples" / "raw-payment" / "make_raw.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_payment_sources_are_raw_with_no_ctx_records():
    for sid, fname in RAW.items():
        folder = REPO / "sources" / sid
        assert (folder / fname).is_file()
        assert not (folder / "objects.jsonl").exists() and not list(folder.rglob("*.md")), sid


def _commits(bundle):
    with open(bundle, "rb") as fh:
        b = read_bundle(fh)
        return dict(b.references)


def test_make_raw_makes_the_checked_in_bundle_and_catalog(tmp_path):
    mod = _make_raw()
    ids = mod.runbooks(tmp_path / "rb.bundle")
    assert len(ids) == 3
    assert _commits(tmp_path / "rb.bundle") == _commits(REPO / "sources" / "pay-runbooks" / "runbooks.bundle")
    mod.catalog(tmp_path / "c.sqlite")
    q = "SELECT * FROM services ORDER BY name"
    rows = [sqlite3.connect(p).execute(q).fetchall()
            for p in (tmp_path / "c.sqlite", REPO / "sources" / "pay-service-catalog" / "catalog.sqlite")]
    assert rows[0] == rows[1] and len(rows[0]) == 3


def test_runbook_history_gives_versions_valid_from_commit_to_commit():
    loaded, _ = collect(REPO / "manifests", REPO, None)
    (ls,) = [x for x in loaded if x.manifest.source_id == "pay-runbooks"]
    steps = {o["object_id"]: o for o in ls.iter_objects() if o["section"] == "steps"}
    v3, v4, v5 = (steps[f"RB-PAY-RECOVERY-v{i}#steps"] for i in (3, 4, 5))
    assert v3["valid_to_us"] == v4["valid_from_us"] and v4["valid_to_us"] == v5["valid_from_us"]
    assert v5["valid_to_us"] is None
    assert v4["valid_from_us"] == 1_782_813_600_000_000          # 2026-06-30T18:00+08:00, its commit
    assert (v4["supersedes"], v5["supersedes"]) == ("RB-PAY-RECOVERY-v3#steps", "RB-PAY-RECOVERY-v4#steps")
    assert v4["locator"].startswith(f"runbooks/payment-recovery.md@{v4['source_version'][:12]}#steps:L")
    assert v4["supports"] == ["runbook"]                              # by the playbook's rule
