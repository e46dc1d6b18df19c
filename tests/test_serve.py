"""ctx serve, driven by the MCP SDK's own client: over stdio (a real subprocess) and over
streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from .conftest import REPO, run_cli

mcp = pytest.importorskip("mcp", reason="the MCP SDK (package `mcp`) is a runtime dependency of ctx serve")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402


def _env(store: Path) -> dict[str, str]:
    return {"CTX_ROOT": str(REPO), "CTX_DB": str(store), "NO_COLOR": "1",
            "PYTHONPATH": os.environ.get("PYTHONPATH", "")}


def _params(store: Path, runs: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "ctxcli.cli.main", "serve", "--runs", str(runs), *extra],
                                 env=_env(store), cwd=str(REPO))


def _call(server, calls):
    """Run tool calls / resource reads in one session; returns their results in order."""
    async def main():
        out = []
        async with Client(server, read_timeout_seconds=120) as c:
            for kind, name, args in calls:
                if kind == "tool":
                    out.append(await c.call_tool(name, args))
                elif kind == "read":
                    out.append(await c.read_resource(name))
                elif kind == "list_tools":
                    out.append(await c.list_tools())
                elif kind == "list_templates":
                    out.append(await c.list_resource_templates())
        return out

    return anyio.run(main)


def _structured(res) -> dict:
    assert not res.is_error, res.content[0].text
    sc = res.structured_content
    return sc.get("result", sc)


def _error_text(res) -> str:
    assert res.is_error
    return res.content[0].text


def _all_text(results) -> str:
    parts = []
    for r in results:
        if hasattr(r, "content"):
            parts += [getattr(c, "text", "") for c in r.content]
            if getattr(r, "structured_content", None):
                parts.append(json.dumps(r.structured_content, ensure_ascii=False))
        if hasattr(r, "contents"):
            parts += [getattr(c, "text", "") for c in r.contents]
    return "\n".join(parts)


def test_tools_listed_with_typed_schemas_and_no_identity_arguments(store, tmp_path):
    (lt,) = _call(_params(store, tmp_path / "runs"), [("list_tools", None, None)])
    names = sorted(t.name for t in lt.tools)
    assert names == ["add_tool_result", "audit_call", "build_context", "diff", "explain_omission", "forget", "handoff",
                     "investigate", "list_cases", "list_playbooks", "remember", "render", "replay",
                     "update_working_state"]
    for t in lt.tools:
        props = set(t.input_schema.get("properties", {}))
        assert not props & {"subject", "scopes", "scope", "purpose", "tenant", "tenant_id"}, t.name
    inv = next(t for t in lt.tools if t.name == "investigate")
    assert inv.input_schema.get("required", []) == []      # a case, or ad hoc: playbook + seeds
    assert {"case", "playbook", "seeds", "params", "question", "as_of"} <= set(inv.input_schema["properties"])
    assert inv.input_schema["properties"]["budget"]["anyOf"][0] == {"type": "integer", "minimum": 64,
                                                                    "maximum": 2000000}
    assert inv.input_schema["properties"]["as_of"]["format"] == "date-time"
    # issue 47: as_of is the question's (valid) time, known_at the time of knowledge
    for t in lt.tools:
        p = t.input_schema.get("properties", {})
        if "as_of" in p:
            assert p["as_of"]["description"].startswith("The time the question is about (valid time"), t.name
        if "known_at" in p:
            assert p["known_at"]["description"].startswith("The time of knowledge: only objects observed by then"), \
                t.name
    # read-only annotations (issue 31 item 8): clients need not ask for approval of every call
    hints = {t.name: (t.annotations.read_only_hint, t.annotations.destructive_hint) for t in lt.tools}
    writes = ("investigate", "build_context", "add_tool_result", "update_working_state", "remember", "forget")
    assert hints == {n: (n not in writes, n == "forget") for n in names}


def test_list_cases_and_playbooks_name_only_this_servers_tenant(store, tmp_path):
    mine, other = _call(_params(store, tmp_path / "runs", "--tenant", "tenant-demo"),
                        [("tool", "list_cases", {}), ("tool", "list_playbooks", {})])
    cases = _structured(mine)
    ids = [c["case_id"] for c in cases["cases"]]
    assert "C-102" in ids and "INC-2026-0723" in ids and "PARTNER-C-102" not in ids     # tenant-other's
    c102 = next(c for c in cases["cases"] if c["case_id"] == "C-102")
    assert (c102["playbook"], c102["as_of"]) == ("motor-claim-review", "2026-07-23T12:00:00+08:00")
    assert "restricted" in c102["variants"]
    pbs = {p["playbook_id"]: p for p in _structured(other)["playbooks"]}
    assert set(pbs) == {"motor-claim-review", "payment-incident-review", "payment-restore-lookup",
                        "payment-change-window", "incident-owner-lookup"}
    assert any(e["type"] == "policy_version" and e["required"] for e in pbs["motor-claim-review"]["evidence_types"])


def test_investigate_matches_cli_pack_and_resources_serve_the_run(store, tmp_path):
    runs = tmp_path / "runs"
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "cli", "--json"])
    assert r.exit_code == 0, r.output
    cli_pack = json.loads((tmp_path / "cli" / "pack.json").read_text())

    inv, = _call(_params(store, runs), [("tool", "investigate", {"case": "C-102"})])
    res = _structured(inv)
    assert res["pack_id"] == cli_pack["pack_id"]
    assert res["content_hash"] == cli_pack["content_hash"]
    assert res["verdict"] == json.loads((tmp_path / "cli" / "answer.json").read_text())["verdict"]
    assert res["resources"]["pack"] == f"ctx://packs/{res['pack_id']}"
    assert all(c["evidence"] for c in res["claims"] if c["status"] == "fact")
    # the server wrote the same bytes as the CLI
    for name in ("pack.json", "trace.jsonl", "answer.json"):
        assert (runs / res["pack_id"] / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()

    pid = res["pack_id"]
    reads = _call(_params(store, runs), [("read", f"ctx://packs/{pid}", None),
                                         ("read", f"ctx://packs/{pid}/trace", None),
                                         ("read", f"ctx://packs/{pid}/answer", None),
                                         ("read", "ctx://packs", None),
                                         ("tool", "render", {"pack_id": pid, "format": "messages"}),
                                         ("tool", "replay", {"pack_id": pid}),
                                         ("tool", "explain_omission", {"pack_id": pid, "gate": "validity"}),
                                         ("tool", "diff", {"pack_a": pid, "pack_b": pid})])
    assert json.loads(reads[0].contents[0].text)["pack_id"] == pid
    assert reads[1].contents[0].text == (runs / pid / "trace.jsonl").read_text()
    assert json.loads(reads[2].contents[0].text)["verdict"] == res["verdict"]
    assert json.loads(reads[3].contents[0].text) == {"packs": [pid]}
    rendered = _structured(reads[4])
    cli_render = run_cli(["render", tmp_path / "cli" / "pack.json", "--format", "messages"])
    assert rendered["text"] == cli_render.stdout
    assert rendered["matches_pack"] is True
    assert _structured(reads[5])["status"] == "identical"
    omissions = _structured(reads[6])
    assert [g["gate"] for g in omissions["gates"]] == ["validity"]
    assert {o["object_id"] for o in omissions["gates"][0]["omissions"]} >= {"RULE-MCS-2025.4"}
    assert _structured(reads[7])["same"] is True

    audit = [json.loads(line) for line in (runs / "audit.jsonl").read_text().splitlines()]
    assert [a["tool"] for a in audit] == ["investigate"] + ["read_resource"] * 4 + [
        "render", "replay", "explain_omission", "diff"]
    assert {a["status"] for a in audit} == {"ok"}
    assert [a["pack_id"] for a in audit] == [pid] * 4 + [None] + [pid] * 4     # ctx://packs names no pack
    assert all(len(a["arguments_sha256"]) == 64 for a in audit)


def test_identity_arguments_refused_and_server_keeps_serving(store, tmp_path):
    runs = tmp_path / "runs"
    results = _call(_params(store, runs, "--subject", "investigator-02", "--scope", "case:read"), [
        ("tool", "investigate", {"case": "C-102", "scopes": ["fraud:read", "pii:read"]}),
        ("tool", "investigate", {"case": "C-102", "subject": "admin"}),
        ("tool", "investigate", {"case": "C-102", "tenant_id": "tenant-other"}),
        ("tool", "investigate", {"case": "no-such-case"}),
        ("tool", "investigate", {"case": "C-102", "as_of": "2026-07-23T12:00:00"}),
        ("tool", "investigate", {"case": "C-102", "budget": "lots"}),
        ("tool", "replay", {"pack_id": "../../etc/passwd"}),
        ("tool", "explain_omission", {"pack_id": "pk-0123456789abcdef"}),
        ("tool", "build_context", {"case": "C-102", "types": ["no_such_type"]}),
        ("tool", "investigate", {"case": "C-102"}),
    ])
    e = [_error_text(r) for r in results[:9]]
    assert "argument 'scopes' is not accepted: the subject, its scopes and purpose are fixed" in e[0]
    assert "argument 'subject' is not accepted" in e[1]
    assert "argument 'tenant_id' is not accepted" in e[2]
    assert "unknown case 'no-such-case'" in e[3]
    assert "as_of" in e[4] and "offset" in e[4]
    assert e[5] == "ctx: error: argument 'budget': Input should be a valid integer, unable to parse string as an integer"
    assert "is not a pack id" in e[6]
    assert "unknown pack pk-0123456789abcdef" in e[7]
    assert "evidence type 'no_such_type' is not in playbook motor-claim-review" in e[8]
    assert all("Traceback" not in x for x in e)
    last = _structured(results[9])               # still serving, with the configured subject
    pack = json.loads((runs / last["pack_id"] / "pack.json").read_text())
    assert pack["request"]["subject"] == {"id": "investigator-02", "scopes": ["case:read"],
                                          "clearance": "internal"}   # another subject: the default clearance
    audit = [json.loads(line) for line in (runs / "audit.jsonl").read_text().splitlines()]
    # a mistyped argument is refused by the tool's input model before it runs (issue 49), like an extra one
    assert [a["status"] for a in audit] == ["refused"] * 3 + ["error"] * 2 + ["refused"] + ["error"] * 3 + ["ok"]


def test_variant_with_its_own_subject_refused_without_fixed_subject(store, tmp_path):
    from ctxcli import api

    case, _ = api.read_case("C-102")
    var = next((n for n, v in case.variants.items() if v.subject is not None), None)
    if var is None:
        pytest.fail("C-102 has no variant with its own subject; this test needs one")
    (r,) = _call(_params(store, tmp_path / "runs"), [("tool", "investigate", {"case": "C-102", "variant": var})])
    assert "declares its own subject or purpose" in _error_text(r)


def test_restricted_server_never_returns_withheld_content(store, tmp_path):
    full = run_cli(["investigate", "C-102", "--out", tmp_path / "full", "--json"])
    assert full.exit_code == 0
    full_pack = json.loads((tmp_path / "full" / "pack.json").read_text())
    runs = tmp_path / "runs"
    params = _params(store, runs, "--subject", "auditor-09", "--scope", "case:read")
    first = _call(params, [("tool", "investigate", {"case": "C-102", "include_messages": True})])
    pid = _structured(first[0])["pack_id"]
    pack = json.loads((runs / pid / "pack.json").read_text())
    admitted = {e["object_id"] for e in pack["evidence"]}
    withheld = [e for e in full_pack["evidence"] if e["object_id"] not in admitted]
    assert withheld, "the restricted subject should lose evidence"
    types = sorted({e["selected_for"] for e in full_pack["evidence"]})
    rest = _call(params, [
        ("tool", "build_context", {"case": "C-102", "types": types}),
        ("tool", "render", {"pack_id": pid, "format": "markdown"}),
        ("tool", "explain_omission", {"pack_id": pid}),
        *[("tool", "explain_omission", {"pack_id": pid, "object_id": e["object_id"]}) for e in withheld],
        ("read", f"ctx://packs/{pid}", None), ("read", f"ctx://packs/{pid}/trace", None),
        ("read", f"ctx://packs/{pid}/answer", None), ("read", f"ctx://packs/{pid}/messages", None),
    ])
    text = _all_text(first + rest)
    for e in withheld:
        assert e["text"][:60] not in text, e["object_id"]
        assert e["title"] not in text, e["object_id"]
    # every audit line names the server that wrote it: its fixed identity and its instance
    audit = [json.loads(line) for line in (runs / "audit.jsonl").read_text().splitlines()]
    assert len(audit) == 1 + len(rest)
    ids = [{k: v for k, v in a["server"].items() if k not in ("instance", "pid")} for a in audit]
    assert ids == [{"tenant": None, "subject": "auditor-09", "scopes": ["case:read"], "purpose": None,
                    "clearance": None}] * len(audit)
    instances = [a["server"]["instance"] for a in audit]
    assert len(set(instances[1:])) == 1 and instances[0] != instances[1]     # two servers, one log
    assert all(isinstance(a["server"]["pid"], int) for a in audit)


def test_build_context_returns_only_new_items_within_the_step_budget(store, tmp_path):
    runs = tmp_path / "runs"
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "cli"])
    assert r.exit_code == 0
    pack = json.loads((tmp_path / "cli" / "pack.json").read_text())
    by_type: dict[str, list[dict]] = {}
    for ev in pack["evidence"]:
        by_type.setdefault(ev["selected_for"], []).append(ev)
    t, items = max(by_type.items(), key=lambda kv: len(kv[1]))
    assert len(items) >= 2, "needs an evidence type with two admitted items"
    (first,) = _call(_params(store, runs), [("tool", "build_context", {"case": "C-102", "types": [t]})])
    a = _structured(first)
    # same gates as investigate: the step admits the same items of that type, with the same ids and text
    by_id = {e["evidence_id"]: e for e in items}
    assert sorted(i["evidence_id"] for i in a["items"]) == sorted(by_id)
    assert all(i["text"] == by_id[i["evidence_id"]]["text"] for i in a["items"])
    assert a["tokens"] == sum(e["tokens"] for e in items)
    assert a["covered_types"] == [t] and a["missing_types"] == []
    ids = [i["evidence_id"] for i in a["items"]]
    second, third = _call(_params(store, runs), [
        ("tool", "build_context", {"case": "C-102", "types": [t], "held": [ids[0]]}),
        ("tool", "build_context", {"case": "C-102", "types": [t], "step_budget": a["items"][0]["tokens"]}),
    ])
    b, c = _structured(second), _structured(third)
    # what the agent holds is not sent again, and says why
    assert [i["evidence_id"] for i in b["items"]] == ids[1:]
    held = [o for o in b["omissions"] if o["reason"] == "already_held"]
    assert [o["gate"] for o in held] == ["duplicate"]
    # a step budget that fits one item
    assert [i["evidence_id"] for i in c["items"]] == ids[:1]
    assert c["tokens"] == a["items"][0]["tokens"] == c["step_budget"]
    assert any(o["gate"] == "budget" for o in c["omissions"])


def test_serve_without_store_is_one_line_exit_2(tmp_path):
    r = run_cli(["serve", "--db", tmp_path / "none.duckdb"])
    assert r.exit_code == 2
    assert r.stderr.strip().startswith("ctx: error: no store at")
    r = run_cli(["serve", "--scope", "case:read"])
    assert r.exit_code == 2 and "--scope needs --subject" in r.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_transport_on_loopback(store, tmp_path):
    port = _free_port()
    env = {**os.environ, **_env(store)}
    proc = subprocess.Popen([sys.executable, "-m", "ctxcli.cli.main", "serve", "--transport", "http", "--host",
                             "127.0.0.1", "--port", str(port), "--runs", str(tmp_path / "runs")],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                time.sleep(0.2)
        lt, inv = _call(f"http://127.0.0.1:{port}/mcp", [("list_tools", None, None),
                                                         ("tool", "investigate", {"case": "C-102"})])
        assert "build_context" in {t.name for t in lt.tools}
        assert _structured(inv)["verdict"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# ------------------------------------------------------------------------------ ad-hoc runs and clearance
AS_OF = "2026-07-23T12:00:00+08:00"
SCOPES = ["case:read", "policy:read", "document:read", "risk:read"]
C102_Q = "Does claim C-102 satisfy the rules? Which rule version applied on that date? Why must a human review it?"


def _tool_error(res) -> str:
    """The one-line ctx message of a tool error (the SDK prefixes "Error executing tool NAME: ")."""
    text = _error_text(res)
    assert text.count("\n") == 0 and "Traceback" not in text
    return text.split(": ", 1)[1] if text.startswith("Error executing tool ") else text


def _fixed(subject: str, scopes: list[str], *extra: str) -> list[str]:
    return ["--subject", subject, *[x for s in scopes for x in ("--scope", s)], *extra]


def test_adhoc_investigate_matches_the_cli_adhoc_run(store, tmp_path):
    runs = tmp_path / "runs"
    ident = _fixed("investigator-01", SCOPES, "--clearance", "confidential", "--purpose", "claim_review",
                   "--tenant", "tenant-demo")
    r = run_cli(["investigate", "--playbook", "motor-claim-review", "--seed", "case:C-102", *ident,
                 "--as-of", AS_OF, "--question", C102_Q, "--out", tmp_path / "cli"])
    assert r.exit_code == 0, r.stderr
    cli_pack = json.loads((tmp_path / "cli" / "pack.json").read_text())
    inv, rep = _call(_params(store, runs, *ident), [
        ("tool", "investigate", {"playbook": "motor-claim-review", "seeds": ["case:C-102"], "as_of": AS_OF,
                                 "question": C102_Q}),
        ("tool", "replay", {"pack_id": cli_pack["pack_id"]}),
    ])
    res = _structured(inv)
    assert res["pack_id"] == cli_pack["pack_id"] and res["content_hash"] == cli_pack["content_hash"]
    assert res["case_id"] == cli_pack["request"]["case_id"] and res["case_id"].startswith("adhoc-")
    assert res["verdict"] == "complete"
    for name in ("pack.json", "trace.jsonl", "answer.json", "case.json", "run.json"):
        assert (runs / res["pack_id"] / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert _structured(rep)["status"] == "identical" and _structured(rep)["byte_identical"] is True


def test_adhoc_investigate_needs_the_servers_identity_and_refuses_one_from_arguments(store, tmp_path):
    runs = tmp_path / "runs"
    call = {"playbook": "motor-claim-review", "seeds": ["case:C-102"], "as_of": AS_OF}
    no_tenant = _call(_params(store, runs, *_fixed("investigator-01", SCOPES, "--purpose", "claim_review")), [
        ("tool", "investigate", call),
        ("tool", "investigate", {**call, "tenant_id": "tenant-demo"}),
    ])
    assert _tool_error(no_tenant[0]) == ("ctx: error: an ad-hoc run needs this server's fixed tenant: start ctx "
                                         "serve with --tenant")
    assert "argument 'tenant_id' is not accepted: the subject, its scopes and purpose are fixed" in \
        _error_text(no_tenant[1])
    ident = _fixed("investigator-01", SCOPES, "--purpose", "claim_review", "--tenant", "tenant-demo")
    results = _call(_params(store, runs, *ident), [
        ("tool", "investigate", {**call, "scopes": ["fraud:read"]}),
        ("tool", "investigate", {**call, "clearance": "restricted"}),
        ("tool", "investigate", {**call, "case": "C-102"}),
        ("tool", "investigate", {k: v for k, v in call.items() if k != "as_of"}),
        ("tool", "investigate", {**call, "params": {"nope": 1}}),
        ("tool", "investigate", {**call, "playbook": "nope"}),
        ("tool", "investigate", {"case": "C-102", "seeds": ["case:C-104"]}),
        ("tool", "investigate", call),
    ])
    e = [_tool_error(r) for r in results[:7]]
    assert "argument 'scopes' is not accepted" in e[0]
    assert "argument 'clearance' is not accepted" in e[1]
    assert e[2] == "ctx: error: case and playbook cannot be combined: a case names its own playbook"
    assert e[3] == "ctx: error: as_of is required with playbook: an ad-hoc run has no case file to take it from"
    assert e[4] == ("ctx: error: parameter nope is not declared by playbook motor-claim-review (it declares no "
                    "parameters)")
    assert e[5].startswith("ctx: error: --playbook: unknown playbook 'nope'")
    assert e[6] == "ctx: error: seeds needs playbook: a case names its own seeds"
    last = _structured(results[7])            # still serving; the subject is the server's
    pack = json.loads((runs / last["pack_id"] / "pack.json").read_text())
    assert pack["request"]["subject"] == {"id": "investigator-01", "scopes": sorted(SCOPES), "clearance": "internal"}
    assert pack["request"]["tenant_id"] == "tenant-demo" and pack["request"]["adhoc"] is True


def test_restricted_server_never_returns_withheld_content_in_adhoc_runs(store, tmp_path):
    full = run_cli(["investigate", "C-102", "--out", tmp_path / "full"])
    assert full.exit_code == 0
    full_pack = json.loads((tmp_path / "full" / "pack.json").read_text())
    runs = tmp_path / "runs"
    params = _params(store, runs, *_fixed("intern-07", ["case:read"], "--clearance", "confidential", "--purpose",
                                          "claim_review", "--tenant", "tenant-demo"))
    call = {"playbook": "motor-claim-review", "seeds": ["case:C-102"], "as_of": AS_OF, "question": C102_Q,
            "include_messages": True}
    first = _call(params, [("tool", "investigate", call)])
    res = _structured(first[0])
    pid = res["pack_id"]
    pack = json.loads((runs / pid / "pack.json").read_text())
    assert pack["request"]["subject"] == {"id": "intern-07", "scopes": ["case:read"], "clearance": "confidential"}
    admitted = {e["object_id"] for e in pack["evidence"]}
    withheld = [e for e in full_pack["evidence"] if e["object_id"] not in admitted]
    assert len(withheld) >= 5 and res["verdict"] == "insufficient_evidence"
    rest = _call(params, [
        ("tool", "render", {"pack_id": pid, "format": "markdown"}),
        ("tool", "explain_omission", {"pack_id": pid}),
        *[("tool", "explain_omission", {"pack_id": pid, "object_id": e["object_id"]}) for e in withheld],
        ("tool", "replay", {"pack_id": pid}),
        ("read", f"ctx://packs/{pid}", None), ("read", f"ctx://packs/{pid}/trace", None),
        ("read", f"ctx://packs/{pid}/answer", None), ("read", f"ctx://packs/{pid}/messages", None),
    ])
    text = _all_text(first + rest) + (runs / pid / "case.json").read_text()
    for e in withheld:
        assert e["text"][:60] not in text, e["object_id"]
        assert e["title"] not in text, e["object_id"]


def test_clearance_flag_and_config_key_are_honoured(store, tmp_path):
    runs = tmp_path / "runs"
    conf = tmp_path / "serve.yaml"
    conf.write_text("subject: auditor-09\nscopes: [case:read, policy:read, document:read, risk:read]\n"
                    "clearance: restricted\n")
    default, flagged, configured = [
        _structured(_call(_params(store, runs, *extra), [("tool", "investigate", {"case": "C-102"})])[0])
        for extra in (_fixed("auditor-09", SCOPES), _fixed("auditor-09", SCOPES, "--clearance", "confidential"),
                      ["--config", str(conf)])]
    packs = [json.loads((runs / r["pack_id"] / "pack.json").read_text()) for r in (default, flagged, configured)]
    assert [p["request"]["subject"]["clearance"] for p in packs] == ["internal", "confidential", "restricted"]
    # internal: confidential sources are withheld by the classification gate; confidential reads them
    from ctxcli.util.withheld import withheld_counts

    assert "classification" in withheld_counts(packs[0])       # withheld inside the statements, counted
    assert "classification" not in withheld_counts(packs[1])
    assert flagged["verdict"] == "complete" and default["verdict"] != "complete"
    r = run_cli(["serve", "--subject", "auditor-09", "--clearance", "secret"])
    assert r.exit_code == 2
    assert r.stderr == ("ctx: error: --clearance 'secret' is not one of public, internal, confidential, "
                        "restricted\n")
    r = run_cli(["serve", "--clearance", "confidential"])
    assert r.exit_code == 2
    assert r.stderr == "ctx: error: --clearance needs --subject: the clearance belongs to a fixed subject\n"


def test_audit_call_over_mcp_is_the_cli_audit_for_the_servers_subject(store, tmp_path):
    """The audit_call tool (issue 45 item 6): the same spans as ctx audit-call --json for the
    server's fixed subject; nothing of a withheld object in anything the client receives."""
    chat = json.loads((REPO / "examples" / "agent" / "audit" / "chat-request.json").read_text())
    chat["messages"].append({"role": "assistant", "content": "The release release-2026.07.23.1 caused the "
                                                             "PAY-4097 errors."})
    f = tmp_path / "chat.json"
    f.write_text(json.dumps(chat))
    cli = json.loads(run_cli(["audit-call", f, "--case", "INC-2026-0723", "--json"],
                             env={"CTX_DB": str(store)}).stdout)
    res = _call(_params(store, tmp_path / "runs"), [
        ("tool", "audit_call", {"case": "INC-2026-0723", "request": chat}),
        ("tool", "audit_call", {"case": "NO-SUCH", "request": chat}),
        ("tool", "audit_call", {"case": "INC-2026-0723", "request": {"messages": [1]}}),
    ])
    doc = _structured(res[0])
    assert doc["spans"] == cli["spans"] and doc["counts"] == cli["counts"] and doc["file"] == "request"
    (last,) = [s for s in doc["spans"] if s["span"] == "messages[10].content"]
    assert last["status"] == "unsupported" and [v["code"] for v in last["output_check"]] == ["status_upgraded"]
    assert "ctx: error: unknown case 'NO-SUCH'" in _error_text(res[1])
    assert _error_text(res[2]).endswith("ctx: error: request: messages[0]: not a message object")
    text = _all_text(res)
    for t in ("OTH-RB-PAYAPI", "tenant-other", "Recovery runbook v9", "CUST-884512", "li.wei@example.com"):
        assert t not in text


# --------------------------------------------------------- build_context as an agent step (issue 45 item 6)
def _tr_call(case: str, step: Path, **over) -> tuple[str, str, dict]:
    import yaml

    from .test_agents import AGENT

    d = yaml.safe_load(step.read_text())
    args = {"case": case, "tool": d["tool"], "version": d["version"], "shaped": d["shaped"],
            "observed_at": d["observed_at"], "raw": (AGENT / d["raw"]["path"]).read_text(),
            "arguments": d["arguments"], "call_id": d["call_id"]}
    if d.get("max_age"):
        args["max_age"] = d["max_age"]
    args.update(over)
    return ("tool", "add_tool_result", args)


def _ledger_count(store: Path, command: str) -> int:
    from ctxcli.ledger.idempotency import ledger_runs

    return len(ledger_runs(store, command=command))


def _run_folders(runs: Path) -> list[str]:
    return sorted(p.name for p in runs.iterdir() if p.name.startswith(("pk-", "st-"))) if runs.is_dir() else []


def test_build_context_gates_tool_results_and_working_state_with_reasons(store, tmp_path):
    import yaml

    from .test_agents import INJECTED, STEPS
    from .test_memory import SESSION

    runs, case = tmp_path / "runs", "INC-2026-0723"
    doc = yaml.safe_load(SESSION.read_text())
    added = _call(_params(store, runs), [
        _tr_call(case, STEPS[0]), _tr_call(case, STEPS[1]), _tr_call(case, STEPS[2]),
        _tr_call(case, STEPS[0], data_tenant="tenant-other", call_id="x"),
        ("tool", "update_working_state", {"case": case, "session_id": "s1", "pinned": doc["pinned"],
                                          "messages": doc["messages"]})])
    ok, inj, stale, other = (_structured(r)["result_id"] for r in added[:4])
    (step,) = _call(_params(store, runs), [
        ("tool", "build_context", {"case": case, "types": ["release_event"], "tool_results": [ok, inj, stale, other],
                                   "session_id": "s1"})])
    res = _structured(step)
    assert [t["result_id"] for t in res["tool_results"]] == [ok]
    assert {(o["gate"], o["reason"]) for o in res["tool_omissions"]} >= {("injection", "instruction_like_text")}
    assert sorted(o["gate"] for o in res["tool_omissions"]) == ["freshness", "injection", "tenant"]
    assert all(o["reason"] for o in res["tool_omissions"])
    assert other[3:] not in json.dumps(res)          # a withheld one only by keyed reference
    mem = res["memory"]
    assert mem["working_memory"]["pinned"] == ["goal", "policy", "approval", "stop_condition"]
    assert ("m-06", "injection") in {(o["ref"], o["gate"]) for o in mem["omissions"]}
    assert all(o["reason"] for o in mem["omissions"])
    # the step's run: step.json records what was admitted and omitted; nothing injected in any file
    folder = runs / res["step_id"]
    written = json.loads((folder / "step.json").read_text())
    assert [t["result_id"] for t in written["tool_results"]] == [ok]
    for f in folder.iterdir():
        assert INJECTED not in f.read_text().lower(), f.name


def test_build_context_ad_hoc_within_the_servers_identity(store, tmp_path):
    runs = tmp_path / "runs"
    ident = _fixed("investigator-01", SCOPES, "--clearance", "confidential", "--purpose", "claim_review",
                   "--tenant", "tenant-demo")
    call = {"playbook": "motor-claim-review", "seeds": ["case:C-102"], "as_of": AS_OF, "types": ["case_status"]}
    ok, subj, ten, both, neither = _call(_params(store, runs, *ident), [
        ("tool", "build_context", call),
        ("tool", "build_context", {**call, "subject": "someone-else"}),
        ("tool", "build_context", {**call, "tenant_id": "tenant-other"}),
        ("tool", "build_context", {**call, "case": "C-102"}),
        ("tool", "build_context", {"types": ["case_status"], "as_of": AS_OF}),
    ])
    res = _structured(ok)
    assert res["case_id"].startswith("adhoc-") and res["covered_types"] == ["case_status"] and res["items"]
    req = json.loads((runs / res["step_id"] / "step.json").read_text())["request"]
    assert req["subject"]["id"] == "investigator-01" and req["tenant_id"] == "tenant-demo"
    assert req["purpose"] == "claim_review" and req["adhoc"] is True
    assert "argument 'subject' is not accepted: the subject, its scopes and purpose are fixed" in _error_text(subj)
    assert "argument 'tenant_id' is not accepted: the subject, its scopes and purpose are fixed" in _error_text(ten)
    assert _tool_error(both) == "ctx: error: case and playbook cannot be combined: a case names its own playbook"
    assert _tool_error(neither) == "ctx: error: give a case, or a playbook with seeds for an ad-hoc run"


def test_every_investigate_and_build_context_call_is_one_run_unless_no_runs(store, tmp_path):
    runs = tmp_path / "runs"
    calls = [("tool", "investigate", {"case": "C-102"}),
             ("tool", "build_context", {"case": "C-102", "types": ["case_status"]})]
    before = (_ledger_count(store, "investigate"), _ledger_count(store, "build_context"))
    inv, step = map(_structured, _call(_params(store, runs), calls))
    assert inv["run"]["written"] is True and step["run"]["written"] is True
    assert _run_folders(runs) == sorted([inv["pack_id"], step["step_id"]])
    assert {"step.json", "trace.jsonl"} <= set(os.listdir(runs / step["step_id"]))
    assert (_ledger_count(store, "investigate"), _ledger_count(store, "build_context")) == (before[0] + 1,
                                                                                           before[1] + 1)
    # the same inputs give the same step bytes
    again = tmp_path / "again"
    (step2,) = map(_structured, _call(_params(store, again), calls[1:]))
    assert step2["step_id"] == step["step_id"]
    for name in ("step.json", "trace.jsonl"):
        assert (again / step["step_id"] / name).read_bytes() == (runs / step["step_id"] / name).read_bytes(), name
    # --no-runs: nothing written, no ledger record, and the results say so
    quiet = tmp_path / "quiet"
    before = (_ledger_count(store, "investigate"), _ledger_count(store, "build_context"))
    inv, step = map(_structured, _call(_params(store, quiet, "--no-runs"), calls))
    assert inv["run"] == step["run"] == {"written": False, "reason": "this server was started with --no-runs"}
    assert _run_folders(quiet) == []
    assert (_ledger_count(store, "investigate"), _ledger_count(store, "build_context")) == before


def test_another_tenants_tool_result_is_refused_like_a_missing_one(store, tmp_path):
    from .test_agents import STEPS

    runs = tmp_path / "runs"
    (theirs,) = _call(_params(store, runs), [_tr_call("PARTNER-C-102", STEPS[0])])
    rid = _structured(theirs)["result_id"]
    step, inv, missing = _call(_params(store, runs), [
        ("tool", "build_context", {"case": "C-102", "types": ["case_status"], "tool_results": [rid]}),
        ("tool", "investigate", {"case": "C-102", "tool_results": [rid]}),
        ("tool", "build_context", {"case": "C-102", "types": ["case_status"], "tool_results": ["tr-0000000000ab"]})])
    assert _tool_error(step) == f"ctx: error: unknown tool result {rid}: add it with add_tool_result first"
    assert _tool_error(inv) == _tool_error(step)
    assert _tool_error(missing) == ("ctx: error: unknown tool result tr-0000000000ab: add it with add_tool_result "
                                    "first")


def test_each_tool_is_a_module_level_function_callable_without_a_server(store, tmp_path, request):
    """The MCP tools are functions of the server's configuration (serve/server.TOOLS), testable
    alone; the server registers each bound to its configuration, in the order TOOLS lists them."""
    from mcp.server.mcpserver.exceptions import ToolError

    from ctxcli.serve import server
    from ctxcli.serve.config import ServeConfig

    from ctxcli.store import readers

    cfg = ServeConfig(db=store, runs_dir=tmp_path / "runs", audit_log=tmp_path / "runs" / "audit.jsonl",
                      tenant="tenant-demo")
    request.addfinalizer(readers.close_all)      # build_server keeps the store open: not past this test
    ids = [c["case_id"] for c in server.list_cases(cfg)["cases"]]
    assert "C-102" in ids and "PARTNER-C-102" not in ids
    with pytest.raises(ToolError, match=r"^ctx: error: .*NOPE"):
        server.explain_omission(cfg, pack_id="pk-NOPE")
    srv = server.build_server(cfg)
    listed = [t.name for t in srv._tool_manager.list_tools()]
    assert listed == [fn.__name__ for fn, _ in server.TOOLS]
    bound = server.bound(server.diff, cfg)
    import inspect

    assert list(inspect.signature(bound).parameters) == ["pack_a", "pack_b"]
    assert bound.__name__ == "diff" and bound.__doc__ == server.diff.__doc__
