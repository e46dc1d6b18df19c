"""Each MCP tool's own input model (serve/server.py:input_model): arguments beyond a tool's
parameters are refused by it — an identity argument with the server's reason — and the schema
a client lists says so (``additionalProperties: false``, investigate's one-of). Through the MCP
SDK's own client, in process; a tool added later (another branch's) gets a model the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import anyio
from mcp import Client
from pydantic import Field

from ctxcli.serve.config import ServeConfig
from ctxcli.serve.server import build_server


def _server(tmp_path: Path):
    cfg = ServeConfig(db=tmp_path / "ctx.duckdb", runs_dir=tmp_path / "runs", audit_log=tmp_path / "audit.jsonl",
                      subject_id="investigator-02", scopes=("case:read",))
    return build_server(cfg)


def _session(srv, calls):
    async def main():
        out = []
        async with Client(srv) as c:
            for name, args in calls:
                out.append(await c.list_tools() if name is None else await c.call_tool(name, args))
        return out

    return anyio.run(main)


def test_every_listed_schema_admits_only_the_tools_parameters(tmp_path):
    (lt,) = _session(_server(tmp_path), [(None, None)])
    for t in lt.tools:
        assert t.input_schema["additionalProperties"] is False, t.name
        assert t.input_schema["title"] == f"{t.name}Arguments"
    inv = next(t for t in lt.tools if t.name == "investigate")
    assert inv.input_schema["oneOf"] == [{"required": ["case"]}, {"required": ["playbook", "seeds"]}]
    assert inv.input_schema["properties"]["known_at"]["format"] == "date-time"


def test_arguments_beyond_the_model_are_refused_before_the_tool_runs(tmp_path):
    srv = _server(tmp_path)
    res = _session(srv, [("replay", {"pack_id": "pk-0123456789abcdef", "clearance": "restricted"}),
                         ("diff", {"pack_a": "pk-0123456789abcdef", "pack_b": "pk-0123456789abcdef", "colour": 1})])
    assert [r.is_error for r in res] == [True, True]
    assert res[0].content[0].text == ("ctx: error: argument 'clearance' is not accepted: the subject, its scopes "
                                      "and purpose are fixed by the server's configuration")
    assert res[1].content[0].text == "ctx: error: argument 'colour' is not accepted: diff takes: pack_a, pack_b"
    audit = (tmp_path / "audit.jsonl").read_text().splitlines()
    assert [('"status":"refused"' in line) for line in audit] == [True, True]


def test_a_tool_added_later_gets_its_own_input_model(tmp_path):
    srv = _server(tmp_path)

    @srv.tool()
    def stand_in(note: Annotated[str, Field(description="A note", max_length=20)], n: int = 1) -> dict[str, Any]:
        """A stand-in for a tool another module adds."""
        return {"note": note, "n": n}

    lt, ok, extra, long = _session(srv, [(None, None), ("stand_in", {"note": "hi"}),
                                         ("stand_in", {"note": "hi", "tenant_id": "t-2"}),
                                         ("stand_in", {"note": "x" * 21})])
    schema = next(t for t in lt.tools if t.name == "stand_in").input_schema
    assert schema["additionalProperties"] is False and schema["required"] == ["note"]
    assert schema["properties"]["note"]["maxLength"] == 20
    assert not ok.is_error
    assert extra.content[0].text.startswith("ctx: error: argument 'tenant_id' is not accepted: the subject")
    assert long.is_error
