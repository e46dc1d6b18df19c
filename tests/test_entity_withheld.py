"""Issue 48 item 6: a window's entity declared only by a source the subject may not read. The
entity's existence belongs to its declaring record, so the window does not match it — and the
gap says so ("withheld for access": the entity's declaring source is withheld, with what would
admit it), instead of "not found"; the source is never named. A subject who may read the
declaring source finds the changes, as before (docs/gates.md)."""

from __future__ import annotations

import json

import pytest

from ctxcli import api

CASE = "INC-2026-0811"
ENTITY = ('{"entity_key": "service:payment-gateway", "tenant_id": "tenant-gateway", "entity_type": "service", '
          '"name": "payment-gateway", "aliases": []}')


@pytest.fixture
def catalog(project_copy):
    """The bundled gateway tenant with payment-gateway declared by a service catalog that needs
    catalog:read (moved out of the incident store that declared it)."""
    inc = project_copy / "sources" / "gw-incidents" / "entities.jsonl"
    lines = inc.read_text(encoding="utf-8").splitlines()
    assert ENTITY in lines
    inc.write_text("\n".join(ln for ln in lines if ln != ENTITY) + "\n", encoding="utf-8")
    snap = project_copy / "sources" / "gw-catalog"
    snap.mkdir()
    (snap / "entities.jsonl").write_text(ENTITY + "\n", encoding="utf-8")
    (snap / "objects.jsonl").write_text("", encoding="utf-8")
    man = (project_copy / "manifests" / "sources" / "gw-incidents.yaml").read_text(encoding="utf-8")
    man = (man.replace("source_id: gw-incidents", "source_id: gw-catalog")
              .replace("required_scopes: [incident:read]", "required_scopes: [catalog:read]")
              .replace("snapshot: sources/gw-incidents", "snapshot: sources/gw-catalog"))
    (project_copy / "manifests" / "sources" / "gw-catalog.yaml").write_text(man, encoding="utf-8")
    api.load()
    return project_copy


def _run(scopes):
    return api.investigate(api.InvestigateOptions(case=CASE, subject_id="oncall-07", scopes=scopes))


def test_a_window_entity_of_a_withheld_source_is_a_withheld_gap_not_a_silent_not_found(catalog):
    res = _run(["incident:read", "deploy:read"])
    miss = {m["type"]: m for m in res.pack["missing"]}
    assert miss["recent_change"]["reason"] == "withheld_for_access"
    # (the full-text channel still finds the sensitive push: one candidate withheld by scope)
    assert miss["recent_change"]["withheld"] == {
        "count": 1, "needs_scopes": ["deploy:read_sensitive"], "allowed_purposes": [], "by_gate": {"scope": 1},
        "entity": {"key": "service:payment-gateway", "needs_scopes": ["catalog:read"], "allowed_purposes": []}}
    gap = {m["type"]: m for m in res.answer["missing_evidence"]}["recent_change"]
    assert (gap["reason"], gap["withheld_entity"]) == ("withheld_for_access", miss["recent_change"]["withheld"]["entity"])
    from ctxcli.answer.markdown import answer_markdown

    assert ("— withheld for access (entity service:payment-gateway is declared only by a source withheld from you: "
            "it needs scope catalog:read)\n") in answer_markdown(res.answer, res.pack)
    from ctxcli.engine.render import gap_reason

    assert gap_reason(miss["recent_change"]) == (
        "withheld for access (1 candidate(s) need scope deploy:read_sensitive; entity service:payment-gateway is "
        "declared only by a source withheld from you: it needs scope catalog:read); rejected by relevance")
    # the aggregate over the same entity says it too (and counts nothing)
    agg = {a["name"]: a for a in res.pack["aggregates"]}["service_changes_in_window"]
    assert (agg["value"], agg["withheld_entity"]) == (0, miss["recent_change"]["withheld"]["entity"])
    # the gap never names the declaring source (the pack's store digests list every source of the
    # tenant, as before), nor anything it holds
    for text in (json.dumps(res.pack["missing"]), json.dumps(res.answer)):
        assert "gw-catalog" not in text and "catalog" not in text.replace("catalog:read", "")


def test_a_subject_who_may_read_the_declaring_source_finds_the_changes(catalog):
    res = _run(["incident:read", "deploy:read", "catalog:read"])
    assert "recent_change" not in {m["type"] for m in res.pack["missing"]}
    assert all("withheld_entity" not in m for m in res.answer["missing_evidence"])
    agg = {a["name"]: a for a in res.pack["aggregates"]}["service_changes_in_window"]
    assert (agg["value"], "withheld_entity" in agg) == (2, False)
    assert [e["object_id"] for e in res.pack["evidence"] if "recent_change" in e["supports"]] == [
        "CHG-CFG-0811-07", "CHG-CFG-0811-05"]


def test_a_walk_from_a_seed_only_a_withheld_source_declares_says_so(store, monkeypatch):
    """The graph walk too: INC-SHOP-0901's seed incident is declared by the incident store, which
    the catalog reader may not read — the owner found by walking from it is a withheld gap that
    names the seed and the scope, where it was "not found"; the on-call engineer walks from it."""
    monkeypatch.setenv("CTX_SECRET", "test-secret-for-entity-withheld")
    res = api.investigate(api.InvestigateOptions(case="INC-SHOP-0901", variant="no-incident-read"))
    miss = {m["type"]: m for m in res.pack["missing"]}
    assert (miss["service_owner"]["reason"], miss["service_owner"]["withheld"]["entity"]) == (
        "withheld_for_access", {"key": "incident:INC-SHOP-0901", "needs_scopes": ["incident:read"],
                                "allowed_purposes": []})
    res = api.investigate(api.InvestigateOptions(case="INC-SHOP-0901"))
    assert "service_owner" not in {m["type"] for m in res.pack["missing"]}
    assert "withheld_entity" not in json.dumps(res.answer) and '"entity": {' not in json.dumps(res.pack["missing"])
