"""ctx serve's results are typed and say whom they ran for (issue 49 item 5): every tool lists
the published ``mcp.<tool>`` schema as its ``outputSchema`` (the SDK's client validates every
result against it), every result carries ``ran_as`` (tenant, subject, variant, as_of), a variant
that would change the identity is refused, and README's tool table is the server's tool list."""

from __future__ import annotations

import json
import re

import anyio
import pytest

from .conftest import REPO, run_cli

pytest.importorskip("mcp", reason="the MCP SDK (package `mcp`) is a runtime dependency of ctx serve")

from mcp import Client  # noqa: E402

from .test_serve import SCOPES, _structured, _tool_error  # noqa: E402

AS_OF = "2026-07-23T12:00:00+08:00"
ME = {"tenant": "tenant-demo", "subject": "investigator-01", "variant": None, "as_of": AS_OF}
SERVER = {**ME, "as_of": None}


def _cfg(store, runs, subject="investigator-01", scopes=tuple(SCOPES), **kw):
    """The configuration `ctx serve --subject … --scope … --clearance confidential …` makes."""
    from ctxcli.serve.config import ServeConfig

    return ServeConfig(db=store, runs_dir=runs, audit_log=runs / "serve" / "audit.jsonl", subject_id=subject,
                       scopes=tuple(scopes), clearance="confidential", **kw)


def _ident(store, runs):
    return _cfg(store, runs, purpose="claim_review", tenant="tenant-demo")


def _call(cfg, calls):
    """Tool calls in one session of the SDK's own client, connected in memory to the server."""
    from ctxcli.serve.server import build_server
    from ctxcli.store import close_kept

    async def main():
        out = []
        async with Client(build_server(cfg)) as c:
            for kind, name, args in calls:
                out.append(await (c.list_tools() if kind == "list_tools" else c.call_tool(name, args)))
        return out

    try:
        return anyio.run(main)
    finally:
        close_kept()


def test_every_output_schema_is_the_published_one_and_every_result_says_whom_it_ran_for(store, tmp_path):
    runs = tmp_path / "runs"
    calls = [("list_tools", None, None), ("tool", "investigate", {"case": "C-102"}),
             ("tool", "investigate", {"case": "C-102", "as_of": "2026-07-22T12:00:00+08:00"}),
             ("tool", "list_cases", {}), ("tool", "list_playbooks", {}),
             ("tool", "build_context", {"case": "C-102", "types": ["policy_version"]}),
             ("tool", "remember", {"case": "C-102", "text": "check the SIU note first", "ttl": "30d",
                                   "reviewed_by": "lead-01"}),
             ("tool", "audit_call", {"case": "C-102", "request": {"messages": [{"role": "user", "content": "hi"}]}})]
    lt, inv, earlier, cases, pbs, step, rem, aud = _call(_ident(store, runs), calls)
    for t in lt.tools:
        r = run_cli(["schema", f"mcp.{t.name}"])
        assert r.exit_code == 0, (t.name, r.stderr)
        assert t.output_schema == json.loads(r.stdout), t.name
    inv_schema = next(t for t in lt.tools if t.name == "investigate").output_schema
    assert inv_schema["additionalProperties"] is False and "ran_as" in inv_schema["required"]
    assert _structured(inv)["ran_as"] == ME
    assert _structured(earlier)["ran_as"] == {**ME, "as_of": "2026-07-22T12:00:00+08:00"}
    assert _structured(step)["ran_as"] == ME
    assert _structured(aud)["ran_as"] == ME
    assert _structured(cases)["ran_as"] == SERVER and _structured(pbs)["ran_as"] == SERVER
    assert _structured(rem)["ran_as"] == SERVER
    pid = _structured(inv)["pack_id"]
    more = _call(_ident(store, runs), [
        ("tool", "render", {"pack_id": pid}), ("tool", "replay", {"pack_id": pid}),
        ("tool", "explain_omission", {"pack_id": pid}),
        ("tool", "explain_omission", {"pack_id": pid, "object_id": "RULE-MCS-2025.4"}),
        ("tool", "handoff", {"pack_id": pid}), ("tool", "diff", {"pack_a": pid, "pack_b": pid})])
    assert [_structured(r)["ran_as"] for r in more] == [ME] * 5 + [SERVER]
    # the handoff as the tool returned it (ran_as included) is taken back whole by build_context
    (back,) = _call(_ident(store, runs), [
        ("tool", "build_context", {"case": "C-102", "types": ["policy_version"], "handoff": _structured(more[4])})])
    assert _structured(back)["handoff"]["findings"], _structured(back)["handoff"]


def test_a_variant_that_changes_the_identity_is_refused_never_run_as_the_server(store, tmp_path):
    runs = tmp_path / "runs"
    restricted, unknown, bc = _call(_ident(store, runs), [
        ("tool", "investigate", {"case": "C-102", "variant": "restricted"}),
        ("tool", "investigate", {"case": "C-102", "variant": "nope"}),
        ("tool", "build_context", {"case": "C-102", "variant": "restricted", "types": ["policy_version"]})])
    msg = ("ctx: error: variant 'restricted' of case C-102 runs with subject intern-07, not this server's: start a "
           "server with that identity to run it")
    assert _tool_error(restricted) == msg and _tool_error(bc) == msg
    assert _tool_error(unknown).startswith("ctx: error: case C-102 has no variant 'nope' (known: ")
    assert not runs.is_dir() or not [p for p in runs.iterdir() if p.name.startswith(("pk-", "st-"))]
    # a server whose identity is the variant's runs it, and says so
    (ok,) = _call(_cfg(store, runs, "intern-07", ["case:read"]),
                  [("tool", "investigate", {"case": "C-102", "variant": "restricted"})])
    assert _structured(ok)["ran_as"] == {**ME, "subject": "intern-07", "variant": "restricted"}
    # the same subject with other scopes is another identity too
    (scoped,) = _call(_cfg(store, runs, "intern-07", ["case:read", "policy:read"]),
                      [("tool", "investigate", {"case": "C-102", "variant": "restricted"})])
    assert _tool_error(scoped) == msg.replace("subject intern-07", "scopes case:read")


# ---------------------------------------------------------------------------------- README's table
START, END = "<!-- mcp-tools: generated from the server's tool list (tests/test_serve_results.py) -->", \
    "<!-- /mcp-tools -->"


def tool_table(tools) -> str:
    """README's tool table as the server lists its tools: name, whether read-only (what it
    writes otherwise), the description's first sentence and the result's schema."""
    rows = ["| tool | read-only | what it does | result |", "|---|---|---|---|"]
    for t in sorted(tools, key=lambda t: t.name):
        a = t.annotations
        mark = ("yes" if a.read_only_hint else "no: deletes" if a.destructive_hint
                else "no: writes" + ("" if a.idempotent_hint else ", each call anew"))
        first = re.split(r"(?<=\.)\s", " ".join(t.description.split()))[0]
        rows.append(f"| `{t.name}` | {mark} | {first.replace('|', '/')} | `ctx schema mcp.{t.name}` |")
    return "\n".join(rows)


def test_readme_lists_every_tool_of_the_server_with_its_read_only_mark(store, tmp_path):
    (listed,) = _call(_cfg(store, tmp_path / "runs"), [("list_tools", None, None)])
    listed = listed.tools
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert START in text and END in text
    block = text.split(START, 1)[1].split(END, 1)[0].strip()
    assert block == tool_table(listed), "README's tool table differs from the server's; it should read:\n" + \
        tool_table(listed)
    marks = {line.split(" | ")[0].strip("| `"): line.split(" | ")[1] for line in block.splitlines()[2:]}
    assert {n for n, m in marks.items() if m != "yes"} == {"investigate", "build_context", "add_tool_result",
                                                           "update_working_state", "remember", "forget"}
