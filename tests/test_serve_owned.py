"""Over MCP, what a call keeps belongs to whoever kept it (issue 50, the serve survivors):
another subject's working-state session is never written by a call (nor read into its pack),
and a stored tool result edited after it was added is refused, never used."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import yaml
from mcp import Client

from ctxcli.serve.config import ServeConfig
from ctxcli.serve.server import build_server

from .conftest import REPO

CASE = "INC-2026-0723"          # its subject: oncall-03, tenant-demo
AGENT = REPO / "examples" / "agent" / CASE
MINE = "Pool saturation notes of the first on-call: only theirs."


def _server(store: Path, runs: Path, subject: str | None = None):
    cfg = ServeConfig(db=store, runs_dir=runs, audit_log=runs.parent / "audit.jsonl", subject_id=subject,
                      scopes=("incident:read", "service:read", "deploy:read") if subject else None)
    return build_server(cfg)


def _session(srv, calls):
    async def main():
        out = []
        async with Client(srv) as c:
            for name, args in calls:
                out.append(await c.call_tool(name, args))
        return out

    return anyio.run(main)


def _structured(res) -> dict:
    assert not res.is_error, res.content[0].text
    sc = res.structured_content
    return sc.get("result", sc)


def test_another_subjects_session_is_never_written_nor_read(store, tmp_path):
    runs = tmp_path / "runs"
    (first,) = _session(_server(store, runs), [("update_working_state", {
        "case": CASE, "session_id": "s1", "messages": [{"id": "m-01", "role": "user", "text": MINE}]})])
    assert _structured(first)["messages"] == 1
    stored = runs / "sessions" / "s1.json"
    before = stored.read_bytes()
    # the same server's runs, another subject (oncall-07): its calls on s1 are refused as unknown
    add, roll, inv = _session(_server(store, runs, "oncall-07"), [
        ("update_working_state", {"case": CASE, "session_id": "s1",
                                  "messages": [{"id": "m-02", "role": "user", "text": "theirs"}]}),
        ("update_working_state", {"case": CASE, "session_id": "s1",
                                  "summary": {"text": "rolled by another", "replaces": ["m-01"],
                                              "summarizer": {"name": "s", "version": "1"}}}),
        ("investigate", {"case": CASE, "session_id": "s1", "include_messages": True})])
    for r in (add, roll):
        assert r.is_error and r.content[0].text == ("Error executing tool update_working_state: ctx: error: unknown "
                                                    "session s1: start it with update_working_state")
    assert stored.read_bytes() == before
    doc = _structured(inv)
    assert MINE not in json.dumps(doc)
    assert [(o["gate"], o["withheld"]) for o in doc["memory"]["omissions"]] == [("subject", True)]
    # the owner still adds to it
    (again,) = _session(_server(store, runs), [("update_working_state", {
        "case": CASE, "session_id": "s1", "messages": [{"id": "m-03", "role": "user", "text": "more"}]})])
    assert _structured(again)["messages"] == 2


def _added(store: Path, runs: Path) -> dict:
    d = yaml.safe_load((AGENT / "01-pool-metrics.yaml").read_text())
    (res,) = _session(_server(store, runs), [("add_tool_result", {
        "case": CASE, "tool": d["tool"], "version": d["version"], "shaped": d["shaped"],
        "observed_at": d["observed_at"], "raw": (AGENT / d["raw"]["path"]).read_text(),
        "arguments": d["arguments"], "call_id": d["call_id"]})])
    return _structured(res)


def test_an_edited_stored_tool_result_is_refused_never_used(store, tmp_path):
    runs = tmp_path / "runs"
    added = _added(store, runs)
    rid = added["result_id"]
    assert added["status"] == "admitted"
    (ok,) = _session(_server(store, runs), [("investigate", {"case": CASE, "tool_results": [rid]})])
    assert [t["result_id"] for t in _structured(ok)["tool_results"]] == [rid]
    f = runs / "tool-results" / f"{rid}.json"
    doc = json.loads(f.read_text())
    fact = sorted(doc["shaped"]["facts"])[0]
    doc["shaped"]["facts"][fact] = "EDITED-77123"
    f.write_text(json.dumps(doc))
    (bad,) = _session(_server(store, runs), [("investigate", {"case": CASE, "tool_results": [rid]})])
    assert bad.is_error and bad.content[0].text == (f"Error executing tool investigate: ctx: error: tool result {rid} "
                                                    "does not match its stored content")
    assert not [p for p in runs.rglob("pack.json") if "EDITED-77123" in p.read_text()]


def _packed(runs: Path, res) -> list[dict]:
    return json.loads((runs / _structured(res)["pack_id"] / "pack.json").read_text())["tool_results"]


def test_a_stored_raw_result_changed_after_it_was_added_vouches_for_no_fact(store, project_copy, tmp_path):
    """The registry's sales.query result, shaped from its raw rows by ctx: every fact verified
    against the stored raw file; once that file changes, the same stored result vouches for none."""
    import shutil

    from .test_tool_shape import OBS, RETAIL, SALES

    shutil.copy(RETAIL / "tools.yaml", project_copy / "manifests" / "tools.yaml")
    runs = tmp_path / "runs"
    (added,) = _session(_server(store, runs), [("add_tool_result", {
        "case": CASE, "tool": "sales.query", "observed_at": OBS, "raw": SALES.read_text()})])
    added = _structured(added)
    rid = added["result_id"]
    (ok,) = _session(_server(store, runs), [("investigate", {"case": CASE, "tool_results": [rid]})])
    (item,) = _packed(runs, ok)
    assert len(item["verified_facts"]) == 16 and item["unverified_facts"] == []
    raw = runs / "tool-results" / "raw" / added["raw"]["sha256"]
    raw.write_bytes(raw.read_bytes().replace(b"2026-08", b"2026-09"))
    (res,) = _session(_server(store, runs), [("investigate", {"case": CASE, "tool_results": [rid]})])
    (item,) = _packed(runs, res)
    assert item["verified_facts"] == [] and sorted(item["unverified_facts"]) == sorted(item["facts"])
