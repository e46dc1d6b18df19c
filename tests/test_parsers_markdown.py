"""parser: markdown — the document's own front matter mapped by the manifest, and sections cut
by the heading hierarchy."""

from __future__ import annotations

import orjson
import pytest
import yaml

from ctxcli.errors import InputError
from ctxcli.load.build import collect
from ctxcli.load.parsers import BUNDLED

BASE = {
    "source_id": "wiki", "tenant_id": "t1", "source_type": "wiki", "owner_team": "ops",
    "classification": "internal", "trust_level": "operational", "required_scopes": [],
    "allowed_purposes": ["incident_review"], "refresh_sla": "24h", "deletion_mode": "none",
    "parser": "markdown", "parser_version": "1", "schema_version": 1, "enabled": True,
    "snapshot": "sources/wiki",
}
MAPPING = {"object_id": "id", "title": "name", "version": "rev", "subject_id": "service:{service}",
           "valid_from": "effective_date", "observed_at": "reviewed", "timezone": "UTC",
           "facts": {"owner": "owner", "rev": {"from": "rev", "type": "int"}},
           "keys": ["{id}", "ticket"], "set": {"object_type": "runbook"}}
DOC = """---
id: RB-1
name: Checkout restart
rev: 4
service: checkout
owner: team-a
status: active
effective_date: 2026-03-01
reviewed: 2026-03-02T10:00:00Z
---
# Checkout restart

## Rollback
Roll back first.

### Verify
Check the error rate.

#### Dashboards
Open the board.

## Escalate
Page the owner.
"""


def project(tmp_path, text=DOC, **manifest):
    (tmp_path / "sources" / "wiki").mkdir(parents=True)
    (tmp_path / "sources" / "wiki" / "rb.md").write_text(text)
    (tmp_path / "manifests" / "sources").mkdir(parents=True)
    (tmp_path / "manifests" / "sources" / "wiki.yaml").write_text(yaml.safe_dump({**BASE, **manifest}))


def objects(tmp_path):
    loaded, _ = collect(tmp_path / "manifests", tmp_path, None)
    return [o for ls in loaded for o in ls.iter_objects()]


def test_registry_names_every_parser():
    assert sorted(BUNDLED) == ["api", "git", "json-export", "markdown", "records", "table"]


def test_own_front_matter_keys_are_mapped_onto_ctx_fields(tmp_path):
    project(tmp_path, mapping=MAPPING)
    o = objects(tmp_path)[0]
    assert (o["object_id"], o["title"], o["source_version"], o["subject_id"], o["object_type"]) == (
        "RB-1#rollback", "Checkout restart — Rollback", "4", "service:checkout", "runbook")
    assert o["valid_from_us"] == 1_772_323_200 * 1_000_000          # 2026-03-01T00:00Z
    assert o["observed_us"] == 1_772_445_600 * 1_000_000
    assert orjson.loads(o["facts"]) == {"owner": "team-a", "rev": 4}
    assert o["keys"] == ["RB-1"]                                    # no ticket key: skipped


def test_sections_follow_the_heading_hierarchy(tmp_path):
    project(tmp_path, mapping=MAPPING, markdown={"split": "headings"})
    got = [(o["section"], o["title"], o["locator"]) for o in objects(tmp_path)]
    assert got == [
        ("checkout-restart/rollback", "Checkout restart — Checkout restart › Rollback",
         "rb.md#checkout-restart/rollback:L13-L15"),
        ("checkout-restart/rollback/verify", "Checkout restart — Checkout restart › Rollback › Verify",
         "rb.md#checkout-restart/rollback/verify:L16-L18"),
        ("checkout-restart/rollback/verify/dashboards",
         "Checkout restart — Checkout restart › Rollback › Verify › Dashboards",
         "rb.md#checkout-restart/rollback/verify/dashboards:L19-L21"),
        ("checkout-restart/escalate", "Checkout restart — Checkout restart › Escalate",
         "rb.md#checkout-restart/escalate:L22-L23"),
    ]


def test_default_split_is_unchanged_by_deeper_headings(tmp_path):
    project(tmp_path, mapping=MAPPING)
    assert [o["section"] for o in objects(tmp_path)] == ["rollback", "escalate"]


def test_naive_time_without_a_zone_names_the_key(tmp_path):
    project(tmp_path, mapping={k: v for k, v in MAPPING.items() if k != "timezone"})
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == ("sources/wiki/rb.md:1: front-matter key 'effective_date': naive time "
                            "'2026-03-01T00:00:00' and the mapping declares no timezone")


def test_a_bad_mapped_value_points_at_its_front_matter_line(tmp_path):
    project(tmp_path, DOC.replace("id: RB-1", "id: 'bad id with spaces'"), mapping=MAPPING)
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value).startswith("sources/wiki/rb.md:2:1: doc_id: ")


def test_a_mapping_on_records_is_refused(tmp_path):
    project(tmp_path, mapping=MAPPING, parser="records")
    with pytest.raises(InputError, match="parser records reads ctx's own fields"):
        objects(tmp_path)
