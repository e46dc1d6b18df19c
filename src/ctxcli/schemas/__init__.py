"""JSON Schemas (draft 2020-12) of every file ctx reads or writes, generated from the Pydantic
models and shipped as package data (``<name>.json`` beside this module).

Regenerate after changing a model: ``python -m ctxcli.schemas`` (a test fails when the committed
files and the models differ). ``ctx schema NAME`` prints one file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DIALECT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "https://ctx.invalid/schemas/"


def models() -> dict[str, Any]:
    """Schema name -> Pydantic model."""
    from ..models import contracts as c
    from ..models.case import CaseFile
    from ..models import records as r
    from ..models.manifest import Mapping, SourceManifest
    from ..models.playbook import Playbook

    out: dict[str, Any] = {"pack": c.Pack, "answer": c.Answer, "timings": c.Timings, "case": CaseFile,
                           "playbook": Playbook, "source-manifest": SourceManifest, "source-mapping": Mapping,
                           "record.object": r.ObjectRecord, "record.entity": r.EntityRecord,
                           "record.relation": r.RelationRecord, "record.tombstone": r.TombstoneRecord,
                           "record.front-matter": r.DocumentFrontMatter}
    from ..agents.registry import Registry
    from ..agents.tool_results import ToolResult

    out["tool-result"] = ToolResult
    out["tool-registry"] = Registry
    from ..agents.memory import MemoryRecord, WorkingState

    out["working-state"] = WorkingState
    out["memory-record"] = MemoryRecord
    for name, model in c.TRACE_EVENTS.items():
        out[f"trace.{name}"] = model
    return out


def generate() -> dict[str, dict[str, Any]]:
    """Schema name -> JSON Schema document, as the models say now."""
    docs: dict[str, dict[str, Any]] = {}
    for name, model in models().items():
        schema = model.model_json_schema(mode="validation")
        if name == "source-manifest":
            schema = manifest_file_schema(schema)
        docs[name] = {"$schema": DIALECT, "$id": f"{BASE_ID}{name}.json", **schema}
    from ..models.mcp import RESULTS, result_schema

    for tool in RESULTS:        # ctx serve's tool results: each tool's outputSchema
        docs[f"mcp.{tool}"] = {"$schema": DIALECT, "$id": f"{BASE_ID}mcp.{tool}.json", **result_schema(tool)}
    return docs


def manifest_file_schema(plain: dict[str, Any]) -> dict[str, Any]:
    """A source manifest as a file may be written: one source (the model's schema), or a
    manifest with ``tenants:`` and/or ``extends:`` (load/tenants.py) that expands to one source
    per tenant — the same keys, none required by themselves, each tenant entry holding only the
    keys a tenant may set. (A base under ``manifests/bases/`` is any part of a manifest.)"""
    from ..load.tenants import TENANT_BLOCKS, TENANT_KEYS

    defs = dict(plain.pop("$defs", {}))
    props = plain["properties"]
    defs["SingleSourceManifest"] = plain
    entry: dict[str, Any] = {}
    for k in TENANT_KEYS:
        if k == "source_id_suffix":
            entry[k] = {"type": "string", "minLength": 1, "title": "Source Id Suffix",
                        "description": "appended to the manifest's source_id for this tenant (default: "
                                       "-<tenant_id>)"}
        elif k in TENANT_BLOCKS:
            block = defs[props[k]["anyOf"][0]["$ref"].rsplit("/", 1)[1]]
            entry[k] = {"type": "object", "additionalProperties": False,
                        "properties": {b: block["properties"][b] for b in TENANT_BLOCKS[k]}}
        else:
            entry[k] = props[k]
    defs["TenantEntry"] = {"type": "object", "additionalProperties": False, "required": ["tenant_id"],
                           "not": {"required": ["source_id", "source_id_suffix"]},
                           "properties": entry, "title": "TenantEntry"}
    shared = dict(props)      # (tenant_id only without tenants: each entry names its own)
    shared["tenants"] = {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/TenantEntry"},
                         "description": "one source per entry (docs/authoring.md, One manifest, many tenants)"}
    shared["extends"] = {"type": "string", "minLength": 1,
                         "description": "a base manifest inside the manifests folder, merged under this one"}
    defs["SharedManifest"] = {"type": "object", "additionalProperties": False, "properties": shared,
                              "anyOf": [{"required": ["tenants"]}, {"required": ["extends"]}],
                              "not": {"required": ["tenants", "tenant_id"]},
                              "title": "SharedManifest"}
    return {"title": plain.get("title", "SourceManifest"), "$defs": defs,
            "oneOf": [{"$ref": "#/$defs/SingleSourceManifest"}, {"$ref": "#/$defs/SharedManifest"}]}


def names() -> list[str]:
    return sorted(p.name[: -len(".json")] for p in HERE.glob("*.json"))


def path(name: str) -> Path:
    return HERE / f"{name}.json"


def schema_bytes(doc: dict[str, Any]) -> bytes:
    import json

    return (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def write_all() -> list[str]:
    """Rewrite the committed schema files from the models; returns the names written."""
    docs = generate()
    for p in HERE.glob("*.json"):
        if p.name[: -len(".json")] not in docs:
            p.unlink()
    for name, doc in docs.items():
        path(name).write_bytes(schema_bytes(doc))
    return sorted(docs)
