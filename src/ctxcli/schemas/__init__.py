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
        docs[name] = {"$schema": DIALECT, "$id": f"{BASE_ID}{name}.json", **schema}
    from ..models.mcp import RESULTS, result_schema

    for tool in RESULTS:        # ctx serve's tool results: each tool's outputSchema
        docs[f"mcp.{tool}"] = {"$schema": DIALECT, "$id": f"{BASE_ID}mcp.{tool}.json", **result_schema(tool)}
    return docs


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
