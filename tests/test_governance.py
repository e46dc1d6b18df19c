"""Governance rules that must hold on data nobody here wrote (issue 28): supersession as a
temporal rule, tenant-scoped pack metadata and drift, clearance-aware gap reasons, freshness
with the knowledge-time cut-off, and the second paths a mutation test found blind. Each test
here fails when the bug it names is planted (see tests/mutants.py)."""

from __future__ import annotations

import dataclasses
import json

from ctxcli import api
from ctxcli.util.timeutil import parse_ts

from .conftest import run_cli


def _run(case="C-102", **kw):
    return api.investigate(api.InvestigateOptions(case=case, **kw))


# ------------------------------------------------------------------------------ freshness (item 6)
def test_a_source_is_not_fresh_because_of_observations_known_at_excludes(store):
    """claims-core's every object was observed on 2026-07-22 from 18:00: known at noon that day,
    nothing of it was known, so at as_of it has no snapshot — stale, not 17h 55m old."""
    fresh = {s["source_id"] for s in _run().pack["stale_sources"]}
    assert "claims-core" not in fresh
    res = _run(known_at=parse_ts("2026-07-22T12:00:00+08:00"))
    stale = {s["source_id"]: s for s in res.pack["stale_sources"]}
    assert stale["claims-core"] == {"source_id": "claims-core", "refresh_sla": "24h", "refresh_sla_s": 86400,
                                    "snapshot_observed_at": None, "age_s": None, "age": None}
    # claims-documents' newest observation before the cut-off is the same as without it
    assert stale["claims-documents"]["snapshot_observed_at"] == "2026-07-18T02:00:00+08:00"
    assert res.answer["stale_sources"] == res.pack["stale_sources"]


# ------------------------------------------------------------------------------ supersession (item 2)
def _edit_jsonl(path, edit):
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    rows = edit(rows)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _open_ended(oid):
    def edit(rows):
        for r in rows:
            if r["object_id"] == oid:
                r["valid_to"] = None
        return rows
    return edit


def test_a_superseded_version_without_an_end_date_is_rejected_not_admitted_beside_its_replacement(project_copy,
                                                                                                  tmp_path):
    """Rule 2025.4 without its valid_to: 2026.1, which supersedes it, is in force at as_of, so
    2025.4 is rejected (superseded_before_as_of, naming 2026.1), not admitted beside it as a
    conflict."""
    _edit_jsonl(project_copy / "sources" / "claims-rules" / "objects.jsonl", _open_ended("RULE-MCS-2025.4"))
    res = _run()
    om = {o["ref"]: o for o in res.pack["omissions"]}
    assert "RULE-MCS-2025.4" not in {e["object_id"] for e in res.pack["evidence"]}
    o = om["RULE-MCS-2025.4"]
    assert (o["gate"], o["reason"]) == ("validity", "superseded_before_as_of")
    assert o["detail"] == {"valid_from": "2025-10-01T00:00:00+08:00", "valid_to": None,
                           "as_of": "2026-07-23T12:00:00+08:00",
                           "replacement": {"object_id": "RULE-MCS-2026.1", "version": "rules-2026.07.01"}}
    assert res.answer["verdict"] == "complete"
    claims = {c["claim_id"]: c for c in res.answer["claims"]}
    assert claims["applicable_rule_version"]["facts"]["rule_version"] == "2026.1"
    out = tmp_path / "o"
    assert run_cli(["investigate", "C-102", "--out", out]).exit_code == 0
    r = run_cli(["explain-omissions", out / "pack.json", "--json"])
    by_id = {o.get("object_id"): o for g in json.loads(r.stdout)["gates"] for o in g["omissions"]}
    assert by_id["RULE-MCS-2025.4"]["sentence"] == (
        "superseded: RULE-MCS-2026.1 (version rules-2026.07.01) replaces it and is in force at as_of "
        "2026-07-23T12:00:00+08:00")


def test_supersession_counts_only_versions_in_force_and_known(project_copy):
    """Before 2026.1 is in force (as_of 2025-11-15), or before it was recorded (known_at
    2025-12-01; it was observed on 2025-12-15), the open-ended 2025.4 is the version in force."""
    _edit_jsonl(project_copy / "sources" / "claims-rules" / "objects.jsonl", _open_ended("RULE-MCS-2025.4"))
    early = _run(variant="as-of-2025")
    assert "RULE-MCS-2025.4" in {e["object_id"] for e in early.pack["evidence"]}
    known = _run(known_at=parse_ts("2025-12-01T00:00:00+08:00"))
    assert "RULE-MCS-2025.4" in {e["object_id"] for e in known.pack["evidence"]}
    om = {o["ref"]: o for o in known.pack["omissions"]}
    assert om["RULE-MCS-2026.1"]["gate"] == "knowledge_time"


def test_a_chain_of_open_ended_versions_is_superseded_by_the_one_in_force(project_copy):
    """2025.4 and 2026.1 both without an end date, as_of after 2026.3 comes into force: both
    older versions are superseded by 2026.3 (along the chain)."""
    path = project_copy / "sources" / "claims-rules" / "objects.jsonl"
    _edit_jsonl(path, _open_ended("RULE-MCS-2025.4"))
    _edit_jsonl(path, _open_ended("RULE-MCS-2026.1"))
    res = _run(as_of=parse_ts("2026-11-02T12:00:00+08:00"))
    om = {o["ref"]: o for o in res.pack["omissions"]}
    for oid in ("RULE-MCS-2025.4", "RULE-MCS-2026.1"):
        assert om[oid]["reason"] == "superseded_before_as_of"
        assert om[oid]["detail"]["replacement"]["object_id"] == "RULE-MCS-2026.3"


# ------------------------------------------------------------------------------ tenant-scoped store metadata (item 3)
def _retitle(oid, suffix=" (amended)"):
    def edit(rows):
        for r in rows:
            if r["object_id"] == oid:
                r["title"] += suffix
        return rows
    return edit


def test_a_pack_names_only_its_tenants_sources_and_another_tenants_change_is_no_drift(project_copy, tmp_path):
    db = project_copy / ".ctx" / "ctx.duckdb"
    assert run_cli(["load", "--db", db]).exit_code == 0
    out = tmp_path / "o"
    assert run_cli(["investigate", "C-102", "--out", out]).exit_code == 0
    pack = json.loads((out / "pack.json").read_text())
    demo = sorted(p.stem for p in (project_copy / "manifests" / "sources").glob("*.yaml")
                  if "tenant_id: tenant-demo" in p.read_text())
    assert sorted(pack["store"]["sources"]) == demo
    blob = (out / "pack.json").read_text() + (out / "trace.jsonl").read_text()
    assert "partner-claims" not in blob and "pay-tenant-other-ops" not in blob

    # one of tenant-other's rows changes: the store digest changes, this tenant's pack does not drift
    before = json.loads(run_cli(["load", "--db", db, "--json"]).stdout)["store_digest"]
    _edit_jsonl(project_copy / "sources" / "partner-claims" / "objects.jsonl", _retitle("OTHER-CASE-C-102"))
    assert json.loads(run_cli(["load", "--db", db, "--json"]).stdout)["store_digest"] != before
    r = run_cli(["replay", out / "pack.json"])
    assert r.exit_code == 0, r.stdout
    assert ": identical — " in r.stdout and "partner-claims" not in r.stdout

    # one of its own sources changes: drift, named
    _edit_jsonl(project_copy / "sources" / "pay-wiki" / "objects.jsonl",
                lambda rows: _retitle(rows[0]["object_id"])(rows))
    assert run_cli(["load", "--db", db]).exit_code == 0
    r = run_cli(["replay", out / "pack.json", "--json", "--against", "current"])
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert [s["source_id"] for s in doc["store"]["sources_changed"]] == ["pay-wiki"]


def test_a_pack_does_not_name_sources_above_the_subjects_clearance(store, tmp_path):
    """Cleared for internal, the subject does not know of the confidential sources: the pack
    names none of them (source_discovered names them only by an opaque reference)."""
    res = _run(clearance="internal")
    listed = set(res.pack["store"]["sources"])
    assert listed and not listed & {"claims-core", "claims-documents", "risk-signals", "pay-incidents",
                                    "pay-postmortems"}
    assert "claims-rules" in listed
    assert res.pack["store"]["digest"] != _run().pack["store"]["digest"]


# ------------------------------------------------------------------------------ clearance-aware gap reasons (item 4)
def test_gaps_blocked_by_clearance_say_so_not_not_found_or_another_scope(store):
    """Cleared for internal, the investigator cannot see the confidential case record and risk
    signals: the case record is withheld (not "not found"), and the amount signal's gap names
    the clearance that blocks most of it, not only the fraud:read scope of the SIU note."""
    from ctxcli.engine.render import gap_reason, gaps_text

    res = _run(clearance="internal")
    missing = {m["type"]: m for m in res.pack["missing"]}
    case = missing["case_status"]
    assert case["reason"] == "withheld_for_access"
    assert case["withheld"]["needs_clearance"] == "confidential"
    assert set(case["withheld"]["by_gate"]) == {"classification"} and case["withheld"]["needs_scopes"] == []
    assert gap_reason(case) == (f"withheld for access ({case['withheld']['count']} candidate(s) need clearance "
                                f"confidential)")
    amount = missing["claim_amount_signal"]["withheld"]
    assert amount["needs_scopes"] == ["fraud:read"] and amount["needs_clearance"] == "confidential"
    by = amount["by_gate"]
    assert by["classification"] > by["scope"] >= 1 and sum(by.values()) == amount["count"]
    assert (f"({amount['count']} candidate(s): {by['scope']} need scope fraud:read; {by['classification']} need "
            f"clearance confidential)") in gaps_text(res.pack)
    assert {m["type"]: m["reason"] for m in res.answer["missing_evidence"]}["case_status"] == "withheld_for_access"
    # cleared for confidential, the same subject sees them all: no clearance in any gap
    assert all("needs_clearance" not in (m.get("withheld") or {}) for m in _run().pack["missing"])


def test_check_warns_when_a_subject_is_cleared_below_every_source_of_an_evidence_type(project_copy):
    path = project_copy / "examples" / "cases" / "C-102.yaml"
    r = run_cli(["check", path])
    assert r.exit_code == 0 and "warning" not in r.stdout
    text = path.read_text()
    path.write_text(text.replace("  clearance: confidential\n", "  clearance: internal\n", 1))
    r = run_cli(["check", path])
    assert r.exit_code == 0, r.stdout
    lines = r.stdout.splitlines()
    assert len(lines) == 3
    assert lines[0] == ("warning: examples/cases/C-102.yaml:15:3: subject investigator-01 is cleared for internal, below the "
                        "classification of every source of evidence type case_status: claims-core (confidential); "
                        "the classification gate will withhold all of it")
    assert "evidence type claim_amount_signal: risk-signals (confidential)" in lines[1]
    assert "evidence type policy_tenure_signal: risk-signals (confidential)" in lines[2]
    # document_status is also in claims-rules (internal): no warning for it
    assert "document_status" not in r.stdout
    doc = json.loads(run_cli(["check", path, "--json"]).stdout)
    assert doc["ok"] is True and len(doc["warnings"]) == 3 and doc["warnings"][0]["line"] == 15


# ------------------------------------------------------------------------------ second paths (item 7)
def test_an_edited_manifest_is_not_the_same_source_on_reload(project_copy):
    """Only pay-wiki's manifest changes (its owner team): the reload does not reuse it, and the
    registry shows the edit."""
    db = project_copy / ".ctx" / "ctx.duckdb"
    assert run_cli(["load", "--db", db]).exit_code == 0
    m = project_copy / "manifests" / "sources" / "pay-wiki.yaml"
    text = m.read_text(encoding="utf-8")
    team = next(ln for ln in text.splitlines() if ln.startswith("owner_team:"))
    m.write_text(text.replace(team, "owner_team: edited-team"), encoding="utf-8")
    doc = json.loads(run_cli(["load", "--db", db, "--json"]).stdout)
    # (shop-incidents declares entity linking: read again whenever a new store is built)
    assert "pay-wiki" not in doc["reused"] and "shop-incidents" not in doc["reused"]
    assert len(doc["reused"]) == len(doc["sources"]) - 2
    rows = {s["source_id"]: s for s in json.loads(run_cli(["sources", "--db", db, "--json"]).stdout)["sources"]}
    assert rows["pay-wiki"]["owner_team"] == "edited-team"


def test_the_known_at_boundary_is_inclusive():
    """An object observed exactly at known_at was known then; a microsecond later it was not."""
    from ctxcli.engine.gates import g_knowledge_time

    from .test_boundaries import AS_OF_US, CTX, obj

    c = dataclasses.replace(CTX, known_at_us=AS_OF_US - 10)
    assert g_knowledge_time(obj(observed_us=AS_OF_US - 10), c) is None
    rej = g_knowledge_time(obj(observed_us=AS_OF_US - 9), c)
    assert rej is not None and (rej.gate, rej.reason) == ("knowledge_time", "not_yet_known")


def test_duplicates_are_found_with_case_folded():
    """The duplicate gate compares content with case and white space folded: a re-export in
    capitals is the same text."""
    from ctxcli.load.parse import dedup_hash

    text = "Document LOSS_STATEMENT received for claim C-102."
    assert dedup_hash(text.upper()) == dedup_hash(text) == dedup_hash("  document loss_statement\treceived for "
                                                                         "claim c-102. ")
    assert dedup_hash(text) != dedup_hash(text + " Again.")


def test_a_re_export_in_capitals_is_rejected_by_the_duplicate_gate(project_copy):
    """DOC-C102-001-REEXPORT re-exported in capitals is still a duplicate of DOC-C102-001."""
    from ctxcli.util.canon import content_hash

    def shout(rows):
        orig = next(r for r in rows if r["object_id"] == "DOC-C102-001")
        for r in rows:
            if r["object_id"] == "DOC-C102-001-REEXPORT":
                r["content"] = orig["content"].upper()
                if r.get("content_hash"):
                    r["content_hash"] = content_hash(r["content"])
        return rows
    _edit_jsonl(project_copy / "sources" / "claims-documents" / "objects.jsonl", shout)
    res = _run()
    om = {o["ref"]: o for o in res.pack["omissions"]}
    assert om["DOC-C102-001-REEXPORT"]["gate"] == "duplicate"
    assert "DOC-C102-001" in {e["object_id"] for e in res.pack["evidence"]}


def test_a_custom_budget_keeps_the_response_reserve_out_of_evidence(store):
    """--budget 3000 with the playbook's 6000 (reserve 1000, instructions 500, goal state 450):
    the reserve scales to 500 and evidence gets the rest, 1550 — not the reserve too."""
    res = _run(budget=3000)
    assert res.pack["budget"] == {"total": 3000, "response_reserve": 500, "instructions": 500, "goal_state": 450,
                                  "tools": 0, "evidence": 1550}
    assert res.pack["slots"]["used"]["evidence"] <= 1550


def test_param_without_equals_is_a_usage_error(store):
    r = run_cli(["investigate", "C-102", "--param", "period"])
    assert r.exit_code == 2
    assert "--param 'period': expected NAME=VALUE with a lower-case NAME" in r.stderr


# -- the graph walk
def _walk_project(root, rel: dict, rel_source: str) -> str:
    """The hostile plain corpus plus RULE-HIDDEN about ruleset:hidden, reachable from the case
    only through ``rel`` (registered by ``rel_source``, no attesting object)."""
    from ctxcli.load.build import build_store

    from .test_hostile import PLAIN, TENANT, _append, _obj, write_corpus

    cid = write_corpus(root, PLAIN)
    src = root / "sources"
    _append(src / "h-rules" / "entities.jsonl", [{"entity_key": "ruleset:hidden", "tenant_id": TENANT,
                                                  "entity_type": "ruleset", "name": "Hidden rules"}])
    _append(src / "h-rules" / "objects.jsonl", [_obj(
        "RULE-HIDDEN", subject="ruleset:hidden", etype="rule", title="Hidden guidance",
        content="Guidance for bound files: the limit is 1.", facts={"threshold": 1}, keys=["hg-1"])])
    (src / rel_source).mkdir(parents=True, exist_ok=True)
    _append(src / rel_source / "relations.jsonl", [{
        "relation_id": "REL-HIDDEN", "tenant_id": TENANT, "from": f"case:{cid}", "type": "BOUND_TO",
        "to": "ruleset:hidden", "source_version": "v1", **rel}])
    build_store(root / "manifests", root / ".ctx" / "ctx.duckdb", root=root)
    return cid


def _walked(res) -> bool:
    return any(c["object_id"] == "RULE-HIDDEN" and "graph" in c["channels"] for c in res.candidates)


def test_the_walk_checks_the_clearance_of_the_relations_own_source(tmp_path):
    """The relation is registered by h-secret (restricted; the subject holds its scope): not
    walked for a subject cleared for internal, walked for one cleared for restricted."""
    from .test_hostile import _investigate

    cid = _walk_project(tmp_path, {}, "h-secret")
    assert not _walked(_investigate(tmp_path, cid))
    assert _walked(_investigate(tmp_path, cid, clearance="restricted"))


RELATION_END = "2026-07-23T12:00:00+08:00"      # the case's as_of


def check_the_walk_stops_where_a_relation_ends(root, cid: str, db) -> None:
    """valid_to exactly at as_of: the relation has ended; one second earlier it has not. The
    same on both backends (test_postgres.py runs it on PostgreSQL)."""
    def investigate(**kw):
        return api.investigate(api.InvestigateOptions(case=cid, db=db, cases_dir=root / "examples" / "cases",
                                                      playbooks_dir=root / "manifests" / "playbooks", **kw))

    res = investigate()
    assert res.pack["request"]["as_of"] == RELATION_END
    assert not _walked(res) and "RULE-HIDDEN" not in {e["object_id"] for e in res.pack["evidence"]}
    assert _walked(investigate(as_of=parse_ts("2026-07-23T11:59:59+08:00")))
    # the same relation (no attesting record: its own end alone) in the window channel and in the
    # contradictions' statement, at the end and one microsecond before it
    from ctxcli.engine.gates import Access
    from ctxcli.engine.retrieve import readable_for, walk_access
    from ctxcli.store import open_store

    from .test_hostile import SCOPES, TENANT

    end = int(parse_ts(RELATION_END).timestamp()) * 1_000_000
    a = Access(frozenset(SCOPES), "review", "restricted")
    st = open_store(db)
    try:
        acc = walk_access(st, a)
        for at, linked in ((end - 1, True), (end, False)):
            w = {"entity": f"case:{cid}", "entity_type": None, "via": ["BOUND_TO"], "time": "observed_at",
                 "from_us": -(2 ** 62), "to_us": 2 ** 62, "anchor_us": at}
            hits = st.window([("w", "rule", [], w, 10)], tenant=TENANT, readable=readable_for(st, TENANT, a), as_of_us=at,
                             access_ok=acc["access_ok"], entity_sources=acc["readable"]).hits
            assert ("RULE-HIDDEN" in {r[1] for r in st.object_metadata([d for _, d, _ in hits])}) is linked, at
            among = st.relations_among([f"case:{cid}", "ruleset:hidden"], rel_types=["BOUND_TO"], tenant=TENANT,
                                       as_of_us=at, access_ok=acc["access_ok"])
            assert [r[0] for r in among] == (["REL-HIDDEN"] if linked else []), at
    finally:
        st.close()


def test_the_walk_does_not_follow_a_relation_that_ends_at_as_of(tmp_path):
    cid = _walk_project(tmp_path, {"valid_to": RELATION_END}, "h-core")
    check_the_walk_stops_where_a_relation_ends(tmp_path, cid, tmp_path / ".ctx" / "ctx.duckdb")
