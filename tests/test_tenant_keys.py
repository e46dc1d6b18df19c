"""Every cache and record key that holds tenant data includes the tenant (issue 50 item 6): two
tenants with colliding ids — the same object id, entity key, subject id or idempotency key in
both — never see each other's linker names, audit verdicts, erasures or recorded runs.

The bundled data has colliding entity keys (case:C-102 in tenant-demo and tenant-other); the
tests that need a colliding *object* id add one to the other tenant's source."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from .conftest import REPO, run_cli

DEP = "DEP-release-2026.07.23.1"          # tenant-demo's release record (INC-2026-0723)
OTHER_TEXT = ("Tenant-other rollout note: ledger shard 7 moved to the southern region for the "
              "merchant ACME-991 after the rotation drill; keep the old bundle until 2026-08-01.")


# ------------------------------------------------------------------------------ the linker
def test_the_linker_reads_each_tenants_own_names_for_a_colliding_entity_key():
    """service:gw is "Alpha Gateway" in tenant a and "Beta Gateway" in tenant b: an object of b
    naming "Alpha Gateway" links nothing (a's name), one naming "Beta Gateway" links; the same
    the other way round — whichever tenant's object is linked first."""
    from types import SimpleNamespace

    from ctxcli.load.link import Linker

    lk = Linker()
    for tenant, name in (("a", "Alpha Gateway"), ("b", "Beta Gateway")):
        lk.add_entity({"tenant_id": tenant, "entity_type": "service", "entity_key": "service:gw", "name": name,
                       "aliases": []})
    linking = SimpleNamespace(entity_types=["service"], fields=["content"], accept=0.9, candidate=0.75,
                              margin=0.05, fuzzy=False, relation="MENTIONS")

    def linked(tenant: str, text: str) -> list[tuple[str, str]]:
        o = {"tenant_id": tenant, "object_id": "N-1", "subject_id": "incident:I-1", "title": "", "content": text,
             "keys": [], "source_version": "v1"}
        links, _ = lk.scan(o, linking, "notes")
        return [(x["tenant_id"], x["to"]) for x in links]

    assert linked("a", "the Alpha Gateway failed") == [("a", "service:gw")]
    assert linked("b", "the Alpha Gateway failed") == []
    assert linked("b", "the Beta Gateway failed") == [("b", "service:gw")]
    assert linked("a", "the Beta Gateway failed") == []


# ------------------------------------------------------------------------------ idempotency keys
def test_an_idempotency_key_belongs_to_one_tenant(store, tmp_path, monkeypatch):
    """The same subject id and key in two tenants' runs: each tenant's run is its own (neither
    refused as another request nor handed the other tenant's run)."""
    db = tmp_path / "st" / "ctx.duckdb"
    db.parent.mkdir()
    shutil.copyfile(store, db)
    monkeypatch.setenv("CTX_DB", str(db))
    who = ["--subject", "desk-1", "--scope", "case:read", "--scope", "fraud:read", "--clearance", "confidential",
           "--idempotency-key", "k-1", "--json"]
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "demo", *who])
    assert r.exit_code == 0, r.output
    r = run_cli(["investigate", "PARTNER-C-102", "--out", tmp_path / "other", *who])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout).get("repeated") is not True
    assert json.loads((tmp_path / "other" / "pack.json").read_text())["request"]["tenant_id"] == "tenant-other"
    recs = [json.loads(x) for x in (db.parent / "ledger.jsonl").read_text().splitlines()]
    assert [(x["tenant_id"], x["subject"], x["idempotency_key"]) for x in recs] == [
        ("tenant-demo", "desk-1", "k-1"), ("tenant-other", "desk-1", "k-1")]
    # each tenant's key repeats its own run
    for case, rec in (("PARTNER-C-102", recs[1]), ("C-102", recs[0])):
        r = run_cli(["investigate", case, "--out", tmp_path / "again", *who])
        assert r.exit_code == 0 and json.loads(r.stdout)["run_id"] == rec["run_id"], r.output
        assert not (tmp_path / "again").exists()


# ------------------------------------------------------------------------------ erasures
OID = "DOC-C102-001"        # tenant-demo's document of claim C-102


def _evidence(out: Path) -> list[str]:
    return [e["object_id"] for e in json.loads((out / "pack.json").read_text())["evidence"]]


def _item(out: Path) -> dict:
    return next(e for e in json.loads((out / "pack.json").read_text())["evidence"] if e["object_id"] == OID)


def test_an_erasure_is_recorded_and_applied_per_tenant(project_copy, tmp_path):
    """Erasing the id for tenant-other first does not stand for tenant-demo's erasure of the
    same id: both are recorded, and only tenant-demo's empties tenant-demo's run folders."""
    assert run_cli(["load"]).exit_code == 0
    runs = project_copy / "runs"            # inside the project: erase --apply rewrites them
    assert run_cli(["investigate", "C-102", "--out", runs / "before"]).exit_code == 0
    assert OID in _evidence(runs / "before")
    r = run_cli(["erase", OID, "--tenant", "tenant-other", "--reason", "other's request", "--apply"])
    assert r.exit_code == 0, r.output
    item = _item(runs / "before")                       # another tenant's erasure rewrote nothing here
    assert item["text"] and "erased" not in item and "erasure" not in json.loads((runs / "before" / "pack.json").read_text())
    assert run_cli(["investigate", "C-102", "--out", runs / "mid"]).exit_code == 0
    assert OID in _evidence(runs / "mid")
    r = run_cli(["erase", OID, "--tenant", "tenant-demo", "--reason", "GDPR request 118", "--json"])
    assert r.exit_code == 0, r.output
    recs = [json.loads(x) for x in (project_copy / ".ctx" / "erasures.jsonl").read_text().splitlines()]
    assert [(e["object_id"], e["tenant_id"], e["reason"]) for e in recs if e["object_id"] == OID] == [
        (OID, "tenant-other", "other's request"), (OID, "tenant-demo", "GDPR request 118")]
    assert run_cli(["investigate", "C-102", "--out", runs / "after"]).exit_code == 0
    assert OID not in _evidence(runs / "after")
    r = run_cli(["erase", "--apply"])
    assert r.exit_code == 0, r.output
    item = _item(runs / "before")                       # now rewritten: its own tenant's erasure
    assert item["text"] == "" and item["erased"]["reason"] == "GDPR request 118"


# ------------------------------------------------------------------------------ the audit
def _with_colliding_object(proj: Path) -> None:
    """Tenant-other gets an object whose id is tenant-demo's release record's."""
    from ctxcli.util.canon import content_hash

    p = proj / "sources" / "pay-tenant-other-ops" / "objects.jsonl"
    first = json.loads(p.read_text().splitlines()[0])
    o = {**first, "object_id": DEP, "title": "Rollout note", "content": OTHER_TEXT,
         "locator": f"pay-tenant-other-ops://{DEP}", "facts": {}, "keys": [], "content_hash": content_hash(OTHER_TEXT)}
    p.write_text(p.read_text() + json.dumps(o) + "\n")


def test_the_audit_judges_each_tenants_object_of_a_colliding_id_on_its_own(project_copy, tmp_path):
    """A transcript holding tenant-demo's release text, then tenant-other's text under the same
    object id: the first is admitted, the second withheld by tenant (never admitted because the
    same id was judged a moment before) — in either order."""
    _with_colliding_object(project_copy)
    assert run_cli(["load"]).exit_code == 0
    mine = json.loads((REPO / "examples" / "agent" / "audit" / "chat-request.json").read_text())["messages"][3]["content"]
    for order in ((mine, OTHER_TEXT), (OTHER_TEXT, mine)):
        f = tmp_path / "t.json"
        f.write_text(json.dumps({"messages": [{"role": "tool", "content": t} for t in order]}))
        r = run_cli(["audit-call", f, "--case", "INC-2026-0723", "--json"])
        assert r.exit_code == 1, r.output
        spans = json.loads(r.stdout)["spans"]
        got = {s["span"]: [(m["status"], m.get("gate"), m.get("object_id")) for m in s["matches"]] for s in spans}
        i_mine, i_other = (0, 1) if order[0] == mine else (1, 0)
        assert got[f"messages[{i_mine}].content"] == [("admitted", None, DEP)]
        assert got[f"messages[{i_other}].content"] == [("withheld", "tenant", None)]
        assert "ACME-991" not in r.stdout and "Rollout note" not in r.stdout
