"""The shipped JSON Schemas of snapshot records and mappings describe the bundled data."""

from __future__ import annotations

import json

from .conftest import REPO, run_cli
from .test_contracts import _check

KINDS = {"objects.jsonl": "record.object", "entities.jsonl": "record.entity",
         "relations.jsonl": "record.relation", "tombstones.jsonl": "record.tombstone"}


def test_every_bundled_record_validates_against_its_schema():
    seen = set()
    for folder in sorted((REPO / "sources").iterdir()):
        for fname, name in KINDS.items():
            p = folder / fname
            if p.is_file():
                for i, line in enumerate(p.read_text().splitlines(), 1):
                    if line.strip():
                        _check(name, json.loads(line), f"{p}:{i}")
                        seen.add(name)
    assert seen == set(KINDS.values())


def test_mapping_schema_is_listed_and_names_the_templates():
    r = run_cli(["schema"])
    assert {"source-mapping", "record.object", "record.front-matter"} <= set(r.stdout.split())
    doc = json.loads(run_cli(["schema", "source-mapping"]).stdout)
    assert {"object_id", "facts", "timezone", "relations", "entity", "set"} <= set(doc["properties"])
