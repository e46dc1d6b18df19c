"""docs/authoring.md "Bring your own data": its manifests (blocks marked ``<!-- byo: NAME -->``)
load a git bundle of runbooks and a CSV of deployments as the guide says."""

from __future__ import annotations

import re

import orjson
import yaml

from ctxcli.load.build import build_store
from ctxcli.models.playbook import EvidenceType
from ctxcli.store.db import open_reader

from .conftest import REPO
from .gitrepo import make_repo

GUIDE = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
BYO = dict(re.findall(r"<!-- byo: (\S+) -->\n```yaml\n(.*?)\n```", GUIDE, re.S))
T0 = 1_767_225_600


def rb(id_, service, body, **extra):
    fm = {"id": id_, "title": f"Restart {service}", "service": service, "owner": "sre", "status": "active",
          "effective_date": "2026-01-01", **extra}
    return "---\n" + yaml.safe_dump(fm) + "---\n# Restart\n\n" + body


def test_the_guides_manifests_load_a_bundle_and_a_csv(tmp_path):
    assert set(BYO) == {"runbooks", "deployments"}
    (tmp_path / "manifests" / "sources").mkdir(parents=True)
    for name, text in BYO.items():
        (tmp_path / "manifests" / "sources" / f"{name}.yaml").write_text(text)
    snap = tmp_path / "sources" / "ops-runbooks"
    snap.mkdir(parents=True)
    ids = make_repo(tmp_path / "work", [
        (T0, {"runbooks/checkout.md": rb("RB-CHK", "checkout", "## Steps\nrestart\n\n### Verify\nerror rate\n"),
              "runbooks/drafts/x.md": rb("RB-X", "x", "## S\nwip\n")}),
        (T0 + 86_400, {"runbooks/checkout.md": rb("RB-CHK", "checkout", "## Steps\ndrain, restart\n")}),
    ], bundle=snap / "runbooks.bundle")
    dep = tmp_path / "sources" / "deployments"
    dep.mkdir(parents=True)
    (dep / "deployments.csv").write_text(
        "change_id,tenant,service,kind,commit,completed_at,replicas,notes\n"
        "R-1,acme,checkout,release,1d07b3e,2026-07-09 15:20:00,3,canary first\n"
        "R-2,other,checkout,release,ffff,2026-07-10 10:00:00,1,not ours\n"
        "R-3,acme,ghost,release,9a2f4c1,2026-07-16 15:05:00,2,unknown service\n")
    (dep / "entities.jsonl").write_text('{"entity_key": "service:checkout", "entity_type": "service", '
                                        '"name": "checkout"}\n')
    db = tmp_path / "s.duckdb"
    res = build_store(tmp_path / "manifests", db, root=tmp_path)
    assert res.warnings == ["skipped (on_dangling: skip): sources/deployments/deployments.csv:4: from: "
                            "relation DEP-R-3:CHANGED_BY:change:R-3 points to unknown entity 'service:ghost'"]
    con = open_reader(db)
    try:
        rows = con.execute("SELECT object_id, locator, facts FROM objects ORDER BY object_id").fetchall()
        rels = con.execute("SELECT relation_id FROM relations").fetchall()
    finally:
        con.close()
    s0, s1 = ids[0][:12], ids[1][:12]
    assert sorted((r[0], r[1]) for r in rows) == sorted([
        ("DEP-R-1", "deployments.csv#row-1"), ("DEP-R-3", "deployments.csv#row-3"),
        (f"RB-CHK@{s0}#restart/steps", f"runbooks/checkout.md@{s0}#restart/steps:L11-L13"),
        (f"RB-CHK@{s0}#restart/steps/verify", f"runbooks/checkout.md@{s0}#restart/steps/verify:L14-L15"),
        (f"RB-CHK@{s1}#restart/steps", f"runbooks/checkout.md@{s1}#restart/steps:L11-L12"),
    ])
    assert orjson.loads(dict((r[0], r[2]) for r in rows)["DEP-R-1"]) == {"change_kind": "release", "replicas": 3, "service": "checkout"}
    assert rels == [("DEP-R-1:CHANGED_BY:change:R-1",)]


def test_the_guides_evidence_rule_is_a_valid_evidence_type():
    block = GUIDE.split("### Evidence types by rule", 1)[1]
    text = re.search(r"```yaml\n(.*?)\n```", block, re.S).group(1)
    (et,) = yaml.safe_load(text)["evidence_types"]
    assert EvidenceType.model_validate(et).match[0].facts == {"change_kind": "release"}
