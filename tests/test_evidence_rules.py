"""Evidence types by rule: playbook ``match`` rules assign evidence types at load, so snapshot
records need no ``supports`` (the bundled payment sources have none); ``ctx check`` reports a rule that matches nothing and a typo in a
record's ``supports``, each at file:line."""

from __future__ import annotations

import json

import yaml

from ctxcli import api
from ctxcli.load.build import build_store, collect
from ctxcli.store.db import open_reader

from .conftest import run_cli

PB = "manifests/playbooks/payment-incident-review.yaml"


def _add_rules(proj, rules):
    p = proj / PB
    pb = yaml.safe_load(p.read_text())
    for et in pb["evidence_types"]:
        if et["type"] in rules:
            et["match"] = rules[et["type"]]
    p.write_text(yaml.safe_dump(pb, sort_keys=False, allow_unicode=True))


def test_the_bundled_raw_sources_get_their_evidence_types_by_rule(store):
    con = open_reader(store)
    try:
        got = dict(con.execute("SELECT object_id, supports FROM objects WHERE source_id IN "
                               "('pay-deployments', 'pay-org') ORDER BY object_id").fetchall())
    finally:
        con.close()
    assert got == {"DEP-RR-2026-0723-01": ["competing_change"], "DEP-release-2026.07.09.1": ["release_event"],
                   "DEP-release-2026.07.16.1": ["release_event"], "DEP-release-2026.07.23.1": ["release_event"],
                   "OWN-PAYAPI-2025": ["service_owner"], "OWN-PAYAPI-2026-08": ["service_owner"]}


def test_without_its_rules_the_incident_loses_the_evidence_they_typed(project_copy, monkeypatch):
    p = project_copy / PB
    pb = yaml.safe_load(p.read_text())
    for et in pb["evidence_types"]:
        et.pop("match", None)
    p.write_text(yaml.safe_dump(pb, sort_keys=False, allow_unicode=True))
    db = project_copy / ".ctx" / "ctx.duckdb"
    build_store(project_copy / "manifests", db, root=project_copy)
    res = api.investigate(api.InvestigateOptions(case="INC-2026-0723"))
    assert res.answer["verdict"] == "insufficient_evidence"
    assert not {e["object_id"] for e in res.pack["evidence"]} & {"DEP-release-2026.07.23.1", "OWN-PAYAPI-2025"}


def test_a_rule_edit_changes_only_the_digest_of_the_sources_it_can_match(project_copy):
    def digests():
        loaded, _ = collect(project_copy / "manifests", project_copy, None)
        return {ls.manifest.source_id: ls.digest for ls in loaded}

    a = digests()
    _add_rules(project_copy, {"release_event": [{"sources": ["pay-deployments"], "object_types": ["release"],
                                                 "terms": ["production"]}]})
    b = digests()
    assert {k for k in a if a[k] != b[k]} == {"pay-deployments"}


def test_check_reports_a_rule_matching_nothing_and_a_supports_typo(project_copy):
    _add_rules(project_copy, {"release_event": [{"sources": ["pay-deployments"], "object_types": ["relase"]}]})
    p = project_copy / "sources" / "claims-core" / "objects.jsonl"
    lines = p.read_text().splitlines()
    o = json.loads(lines[1])
    o["supports"] = ["case_statu"]
    lines[1] = json.dumps(o)
    p.write_text("\n".join(lines) + "\n")
    r = run_cli(["check"])
    assert r.exit_code == 1
    pb_lines = (project_copy / PB).read_text().splitlines()
    bad = next(i for i, ln in enumerate(pb_lines, 1) if "relase" in ln)
    rule_line = max(i for i, ln in enumerate(pb_lines[:bad], 1) if ln.strip().startswith("- sources:"))
    col = pb_lines[rule_line - 1].index("sources") + 1
    assert (f"{PB}:{rule_line}:{col}: evidence type release_event: match rule 1 matches no object of the "
            f"registered sources") in r.stdout
    assert ("sources/claims-core/objects.jsonl:2: supports names unknown evidence type case_statu "
            "(did you mean case_status?)") in r.stdout
