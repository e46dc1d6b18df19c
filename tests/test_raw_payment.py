"""The payment-incident domain with five sources in raw form (examples/raw-payment/: a CSV
export of deployments, an ownership CSV with validity, the service catalog as SQLite, the
incident store's nested JSON export, the runbook repository as a git bundle with its version
history; evidence types by playbook rule): the same objects, and every payment-incident case keeps its verdict,
action, claims and evidence."""

from __future__ import annotations

import shutil

import orjson
import pytest
import yaml

from ctxcli import api
from ctxcli.load.build import build_store, collect
from ctxcli.models.case import CaseFile
from ctxcli.util.yamlio import read_yaml

from .conftest import REPO

RAW = REPO / "examples" / "raw-payment"
SOURCES = {"pay-deployments": "deployments.csv", "pay-org": "ownership.csv", "pay-service-catalog": "catalog.sqlite",
           "pay-incidents": "incidents.json", "pay-runbooks": "runbooks.bundle"}
PB = "manifests/playbooks/payment-incident-review.yaml"
SAME = ("object_id", "tenant_id", "object_type", "subject_id", "title", "content", "content_hash", "valid_from_us",
        "valid_to_us", "observed_us", "required_scopes", "allowed_purposes", "supports", "facts", "keys",
        "supersedes", "source_version")


def overlay(proj):
    for sid, fname in SOURCES.items():
        if sid == "pay-runbooks":
            shutil.rmtree(proj / "sources" / sid / "payment-recovery")
        else:
            (proj / "sources" / sid / "objects.jsonl").unlink()
        shutil.copy(RAW / sid / fname, proj / "sources" / sid / fname)
        shutil.copy(RAW / "manifests" / f"{sid}.yaml", proj / "manifests" / "sources" / f"{sid}.yaml")
    rules = yaml.safe_load((RAW / "evidence-rules.yaml").read_text())
    pb = yaml.safe_load((proj / PB).read_text())
    for et in pb["evidence_types"]:
        if et["type"] in rules:
            et["match"] = rules[et["type"]]
    (proj / PB).write_text(yaml.safe_dump(pb, sort_keys=False, allow_unicode=True))


def _objects(root):
    loaded, _ = collect(root / "manifests", root, None)
    out = {}
    for ls in loaded:
        if ls.manifest.source_id not in SOURCES:
            continue
        for o in ls.iter_objects():
            o = {k: o[k] for k in SAME}
            if ls.manifest.source_id == "pay-runbooks":     # git: the version is the commit, provenance facts
                o.pop("source_version")
                o["facts"] = orjson.dumps({k: v for k, v in orjson.loads(o["facts"]).items()
                                           if not k.startswith("git_")}, option=orjson.OPT_SORT_KEYS).decode()
            out[o["object_id"]] = o
    return out


def test_the_raw_forms_give_the_same_objects(project_copy):
    want = _objects(REPO)
    overlay(project_copy)
    got = _objects(project_copy)
    assert got == want
    for sid in SOURCES:
        assert not (project_copy / "sources" / sid / "objects.jsonl").exists()
    assert not list((project_copy / "sources" / "pay-runbooks").rglob("*.md"))


def _outcomes(case_files):
    out = {}
    for f in case_files:
        case = CaseFile.model_validate(read_yaml(f, display=f.name))
        for v in [None, *case.variants]:
            res = api.investigate(api.InvestigateOptions(case=str(f), variant=v))
            out[(case.case_id, v)] = (res.answer["verdict"], res.answer.get("action"),
                                      [(c["claim_id"], c["status"]) for c in res.answer["claims"]],
                                      sorted(e["object_id"] for e in res.pack["evidence"]),
                                      # withheld objects are named by a digest keyed with the store's own secret
                                      sorted(o["ref"] if not o["ref"].startswith("wh-") else "wh-"
                                             for o in res.pack["omissions"]))
    return out


@pytest.mark.parametrize("case", ["INC-2026-0723", "PAY-RESTORE-01"])
def test_every_payment_case_keeps_its_outcome(case, project_copy, bundled_store, monkeypatch):
    files = [REPO / "examples" / "cases" / f"{case}.yaml"]
    monkeypatch.setenv("CTX_ROOT", str(REPO))
    monkeypatch.setenv("CTX_DB", str(bundled_store))
    before = _outcomes(files)
    overlay(project_copy)
    db = project_copy / ".ctx" / "ctx.duckdb"
    build_store(project_copy / "manifests", db, root=project_copy)
    monkeypatch.setenv("CTX_ROOT", str(project_copy))
    monkeypatch.setenv("CTX_DB", str(db))
    after = _outcomes([project_copy / "examples" / "cases" / f"{case}.yaml"])
    for k in before:
        for i, name in enumerate(("verdict", "action", "claims", "evidence", "omissions")):
            assert after[k][i] == before[k][i], (k, name, sorted(set(after[k][i]) ^ set(before[k][i]))
                                                 if isinstance(before[k][i], list) else None)
