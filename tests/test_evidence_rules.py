"""Evidence types by rule: playbook ``match`` rules assign evidence types at load, so snapshot
records need no ``supports``; ``ctx check`` reports a rule that matches nothing and a typo in a
record's ``supports``, each at file:line."""

from __future__ import annotations

import json

import yaml

from ctxcli import api
from ctxcli.load.build import build_store, collect
from ctxcli.store.db import open_reader

from .conftest import REPO, run_cli

PB = "manifests/playbooks/payment-incident-review.yaml"
RULES = {"release_event": [{"sources": ["pay-deployments"], "object_types": ["release"]}],
         "competing_change": [{"sources": ["pay-deployments"], "facts": {"change_kind": "risk_rule"}}],
         "service_owner": [{"object_types": ["ownership"], "terms": ["owns", "owner"]}]}


def _strip_supports(proj, source):
    p = proj / "sources" / source / "objects.jsonl"
    lines = [json.loads(ln) for ln in p.read_text().splitlines() if ln.strip()]
    for o in lines:
        o.pop("supports", None)
        o.pop("content_hash", None)
    p.write_text("".join(json.dumps(o) + "\n" for o in lines))


def _add_rules(proj, rules):
    p = proj / PB
    pb = yaml.safe_load(p.read_text())
    for et in pb["evidence_types"]:
        if et["type"] in rules:
            et["match"] = rules[et["type"]]
    p.write_text(yaml.safe_dump(pb, sort_keys=False, allow_unicode=True))


def _outcome(res):
    return (res.answer["verdict"], res.answer.get("action"), sorted(e["object_id"] for e in res.pack["evidence"]),
            [(c["claim_id"], c["status"]) for c in res.answer["claims"]])


def test_rules_replace_supports_labels_with_the_same_investigation(project_copy, bundled_store, monkeypatch):
    monkeypatch.setenv("CTX_ROOT", str(REPO))
    monkeypatch.setenv("CTX_DB", str(bundled_store))
    before = api.investigate(api.InvestigateOptions(case="INC-2026-0723"))
    for s in ("pay-deployments", "pay-org"):
        _strip_supports(project_copy, s)
    _add_rules(project_copy, RULES)
    monkeypatch.setenv("CTX_ROOT", str(project_copy))
    db = project_copy / ".ctx" / "ctx.duckdb"
    monkeypatch.setenv("CTX_DB", str(db))
    build_store(project_copy / "manifests", db, root=project_copy)
    con = open_reader(db)
    try:
        got = dict(con.execute("SELECT object_id, supports FROM objects WHERE source_id IN "
                               "('pay-deployments', 'pay-org') ORDER BY object_id").fetchall())
    finally:
        con.close()
    assert got == {"DEP-RR-2026-0723-01": ["competing_change"], "DEP-release-2026.07.09.1": ["release_event"],
                   "DEP-release-2026.07.16.1": ["release_event"], "DEP-release-2026.07.23.1": ["release_event"],
                   "OWN-PAYAPI-2025": ["service_owner"], "OWN-PAYAPI-2026-08": ["service_owner"]}
    after = api.investigate(api.InvestigateOptions(case="INC-2026-0723"))
    assert _outcome(after) == _outcome(before)


def test_a_rule_edit_changes_only_the_digest_of_the_sources_it_can_match(project_copy):
    def digests():
        loaded, _ = collect(project_copy / "manifests", project_copy, None)
        return {ls.manifest.source_id: ls.digest for ls in loaded}

    a = digests()
    _add_rules(project_copy, {"release_event": [{"sources": ["pay-deployments"], "object_types": ["release"]}]})
    b = digests()
    assert {k for k in a if a[k] != b[k]} == {"pay-deployments"}


def test_check_reports_a_rule_matching_nothing_and_a_supports_typo(project_copy):
    _add_rules(project_copy, {"release_event": [{"sources": ["pay-deployments"], "object_types": ["relase"]}]})
    p = project_copy / "sources" / "pay-org" / "objects.jsonl"
    lines = p.read_text().splitlines()
    o = json.loads(lines[1])
    o["supports"] = ["service_ownr"]
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
    assert ("sources/pay-org/objects.jsonl:2: supports names unknown evidence type service_ownr "
            "(did you mean service_owner?)") in r.stdout
