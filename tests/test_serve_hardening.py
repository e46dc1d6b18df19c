"""ctx serve against a hostile caller and a shared runs folder (issue 27 items 1, 2, 14; issue 28
item 7), driven by the MCP SDK's own client as in tests/test_serve.py."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from .conftest import REPO, run_cli

pytest.importorskip("mcp", reason="the MCP SDK (package `mcp`) is a runtime dependency of ctx serve")

from mcp.client.stdio import StdioServerParameters  # noqa: E402

from .test_serve import SCOPES, _call, _fixed, _structured, _tool_error  # noqa: E402


def _params(store: Path, runs: Path, *extra: str, root: Path = REPO) -> StdioServerParameters:
    env = {"CTX_ROOT": str(root), "CTX_DB": str(store), "NO_COLOR": "1",
           "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "ctxcli.cli.main", "serve", "--runs", str(runs), *extra],
                                 env=env, cwd=str(REPO))


def _project(tmp_path: Path) -> Path:
    """A private copy of manifests/, sources/ and examples/ (the store stays the bundled one)."""
    dst = tmp_path / "proj"
    for name in ("manifests", "sources", "examples"):
        shutil.copytree(REPO / name, dst / name, symlinks=True)
    return dst


def _case_text(**changes: str) -> str:
    text = (REPO / "examples" / "cases" / "C-102.yaml").read_text(encoding="utf-8")
    for old, new in changes.items():
        assert old in text or old == "", old
        text = text.replace(old, new, 1)
    return text


ELEVATED = {"case_id: C-102": "case_id: EVIL-1",
            "  scopes: [case:read, policy:read, document:read, risk:read]\n  clearance: confidential":
            "  scopes: [case:read, policy:read, document:read, risk:read, fraud:read, pii:read]\n"
            "  clearance: restricted"}


# ------------------------------------------------------------------------------ 27.1: the case argument
def test_case_argument_is_an_id_under_the_project_never_a_path(store, tmp_path):
    evil = tmp_path / "evil.yaml"        # a caller-written case naming a subject with every scope
    evil.write_text(_case_text(**ELEVATED), encoding="utf-8")
    bad = tmp_path / "broken.yaml"
    bad.write_text("just: a mapping\n", encoding="utf-8")
    runs = tmp_path / "runs"
    args = [str(evil), str(tmp_path / "absent.yaml"), str(bad), "examples/cases/C-102.yaml",
            "../examples/cases/C-102", "/etc/passwd"]
    results = _call(_params(store, runs), [("tool", "investigate", {"case": a}) for a in args]
                    + [("tool", "build_context", {"case": str(evil), "types": ["case_status"]})])
    errors = [_tool_error(r) for r in results]
    # one message for every path, whether it exists, parses or not: nothing about the file is probed
    assert errors == [f"ctx: error: case {a!r} is not a valid id" for a in args] + \
        [f"ctx: error: case {str(evil)!r} is not a valid id"]
    assert not list(runs.glob("pk-*"))


def test_a_case_file_that_links_out_of_the_cases_folder_is_refused_without_naming_its_target(store, tmp_path):
    root = _project(tmp_path)
    evil = tmp_path / "outside" / "EVIL-1.yaml"
    evil.parent.mkdir()
    evil.write_text(_case_text(**ELEVATED), encoding="utf-8")
    (root / "examples" / "cases" / "EVIL-1.yaml").symlink_to(evil)
    (r,) = _call(_params(store, tmp_path / "runs", root=root), [("tool", "investigate", {"case": "EVIL-1"})])
    assert _tool_error(r) == ("ctx: error: examples/cases/EVIL-1.yaml: case file is a symlink that leads outside "
                              "the cases folder")
    assert "outside" not in _tool_error(r).split(":", 3)[-1].replace("leads outside", "")


def test_a_case_of_another_tenant_is_refused_by_a_server_fixed_to_a_tenant(store, tmp_path):
    root = _project(tmp_path)
    (root / "examples" / "cases" / "OTHER-1.yaml").write_text(
        _case_text(**{"case_id: C-102": "case_id: OTHER-1", "tenant_id: tenant-demo": "tenant_id: tenant-other"}),
        encoding="utf-8")
    runs = tmp_path / "runs"
    results = _call(_params(store, runs, "--tenant", "tenant-demo", root=root), [
        ("tool", "investigate", {"case": "OTHER-1"}),
        ("tool", "build_context", {"case": "OTHER-1", "types": ["case_status"]}),
        ("tool", "investigate", {"case": "C-102"}),
        ("tool", "investigate", {"case": "NOPE-1"}),
    ])
    # issue 46: another tenant's real case is "unknown" exactly as a missing one, and no error
    # lists case ids (a list would name the other tenant's)
    refused = "ctx: error: unknown case 'OTHER-1' (the list_cases tool names this server's cases)"
    assert [_tool_error(r) for r in results[:2]] == [refused, refused]
    assert _tool_error(results[3]) == refused.replace("OTHER-1", "NOPE-1")
    assert _structured(results[2])["case_id"] == "C-102"
    assert [p.name for p in runs.glob("pk-*")] == [_structured(results[2])["pack_id"]]


# ------------------------------------------------------------------------------ 28.7: a variant's own purpose
def test_a_variant_that_declares_only_its_own_purpose_is_refused_without_a_fixed_identity(store, tmp_path):
    root = _project(tmp_path)
    pb = root / "manifests" / "playbooks" / "motor-claim-review.yaml"
    pb.write_text(pb.read_text().replace("purposes: [claim_review]", "purposes: [claim_review, audit]"))
    case = root / "examples" / "cases" / "C-102.yaml"
    case.write_text(case.read_text().replace("variants:\n", "variants:\n  audit_only:\n    purpose: audit\n", 1))
    runs = tmp_path / "runs"
    results = _call(_params(store, runs, root=root), [
        ("tool", "investigate", {"case": "C-102", "variant": "audit_only"}),
        ("tool", "build_context", {"case": "C-102", "variant": "audit_only", "types": ["case_status"]}),
    ])
    msg = ("ctx: error: variant 'audit_only' of case C-102 declares its own subject or purpose; this server's "
           "subject is fixed by its configuration (start it with --subject to choose)")
    assert [_tool_error(r) for r in results] == [msg, msg]
    assert not list(runs.glob("pk-*"))


# ------------------------------------------------------------------------------ 27.2: shared runs folders
INTERN = _fixed("intern-07", [], "--clearance", "public", "--purpose", "claim_review", "--tenant", "tenant-demo")
INVESTIGATOR = _fixed("investigator-01", SCOPES + ["fraud:read", "pii:read"], "--clearance", "restricted",
                      "--purpose", "claim_review", "--tenant", "tenant-demo")


def test_servers_sharing_a_runs_folder_serve_only_their_own_packs(store, tmp_path):
    runs = tmp_path / "runs"
    (inv,) = _call(_params(store, runs, *INVESTIGATOR), [("tool", "investigate", {"case": "C-102"})])
    theirs = _structured(inv)["pack_id"]
    pack = json.loads((runs / theirs / "pack.json").read_text())
    assert any(e["object_id"] == "SIU-NOTE-C102" for e in pack["evidence"])   # the fraud note is in it
    mine = _call(_params(store, runs, *INTERN), [("tool", "investigate", {"case": "C-102"})])
    own = _structured(mine[0])["pack_id"]
    unknown = f"ctx: error: unknown pack {theirs}: this server has written no run folder for it"
    results = _call(_params(store, runs, *INTERN), [
        ("read", "ctx://packs", None),
        ("tool", "render", {"pack_id": theirs}),
        ("tool", "explain_omission", {"pack_id": theirs}),
        ("tool", "replay", {"pack_id": theirs}),
        ("tool", "diff", {"pack_a": own, "pack_b": theirs}),
        ("tool", "diff", {"pack_a": theirs, "pack_b": own}),
        ("tool", "render", {"pack_id": own}),
    ])     # the resources: test_resource_reads_fail_for_other_packs_and_are_audited
    assert json.loads(results[0].contents[0].text) == {"packs": [own]}
    assert [_tool_error(r) for r in results[1:6]] == [unknown] * 5
    assert _structured(results[6])["matches_pack"] is True
    # the investigator's server lists only its own pack too
    (listed,) = _call(_params(store, runs, *INVESTIGATOR), [("read", "ctx://packs", None)])
    assert json.loads(listed.contents[0].text) == {"packs": [theirs]}
    # a server without a fixed subject serves the packs made with each case's own subject only
    cli = run_cli(["investigate", "C-102", "--out", runs / "cli"])
    assert cli.exit_code == 0
    cli_pid = json.loads((runs / "cli" / "pack.json").read_text())["pack_id"]
    shutil.move(runs / "cli", runs / cli_pid)
    (listed,) = _call(_params(store, runs), [("read", "ctx://packs", None)])
    assert json.loads(listed.contents[0].text) == {"packs": [cli_pid]}


def test_resource_reads_fail_for_other_packs_and_are_audited(store, tmp_path):
    import anyio
    from mcp import Client

    runs = tmp_path / "runs"
    (inv,) = _call(_params(store, runs, *INVESTIGATOR), [("tool", "investigate", {"case": "C-102"})])
    theirs = _structured(inv)["pack_id"]
    (runs / "audit.jsonl").unlink()
    uris = [f"ctx://packs/{theirs}", f"ctx://packs/{theirs}/trace", f"ctx://packs/{theirs}/answer",
            f"ctx://packs/{theirs}/messages"]

    async def main():
        errors = []
        async with Client(_params(store, runs, *INTERN), read_timeout_seconds=120) as c:
            for uri in uris:
                try:
                    await c.read_resource(uri)
                    errors.append(None)
                except Exception as e:      # the SDK raises the server's resource error
                    errors.append(str(e))
            await c.read_resource("ctx://packs")
        return errors

    errors = anyio.run(main)
    unknown = f"ctx: error: unknown pack {theirs}: this server has written no run folder for it"
    assert all(e is not None and unknown in e for e in errors), errors
    audit = [json.loads(line) for line in (runs / "audit.jsonl").read_text().splitlines()]
    assert [(a["tool"], a["status"], a["pack_id"]) for a in audit] == \
        [("read_resource", "error", theirs)] * 4 + [("read_resource", "ok", None)]
    assert all(unknown in a["error"] for a in audit[:4])
    from ctxcli.util.canon import canonical_bytes
    import hashlib

    assert [a["arguments_sha256"] for a in audit] == [
        hashlib.sha256(canonical_bytes({"uri": u})).hexdigest() for u in uris + ["ctx://packs"]]


# ------------------------------------------------------------------------------ 27.14: HTTP off loopback
TOKEN = "t0k3n-" + "9" * 40


def test_http_off_loopback_is_refused_without_a_token_and_before_listening(store):
    # 192.0.2.10 is TEST-NET-1: never an address of this machine, so nothing could listen on it anyway
    r = run_cli(["serve", "--transport", "http", "--host", "192.0.2.10"])
    assert r.exit_code == 2
    assert r.stderr == ("ctx: error: --host 192.0.2.10 is not a loopback address: give a bearer token with "
                        "--auth-token or $CTX_SERVE_TOKEN so that every caller must authenticate\n")
    r = run_cli(["serve", "--transport", "http", "--host", "0.0.0.0", "--auth-token", TOKEN])
    assert r.exit_code == 2
    assert r.stderr == ("ctx: error: --host 0.0.0.0 listens on every address: name the host names callers use "
                        "with --allowed-host (Host-header protection)\n")
    r = run_cli(["serve", "--transport", "http", "--auth-token", "short"])
    assert r.exit_code == 2 and r.stderr.startswith("ctx: error: --auth-token: a token needs at least 32 ")
    from ctxcli.serve.http import http_settings

    s = http_settings("10.1.2.3", 8765, TOKEN, ["ctx.internal"])
    assert s.allowed_hosts == ("10.1.2.3:8765", "10.1.2.3", "ctx.internal", "ctx.internal:8765")


def _http_server(store: Path, tmp_path: Path, *extra: str, env_extra: dict[str, str] | None = None):
    import subprocess
    import time

    from .test_serve import _env, _free_port

    port = _free_port()
    env = {**os.environ, **_env(store), **(env_extra or {})}
    proc = subprocess.Popen([sys.executable, "-m", "ctxcli.cli.main", "serve", "--transport", "http", "--host",
                             "127.0.0.1", "--port", str(port), "--runs", str(tmp_path / "runs"), *extra],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    import socket

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, port
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.2)
    proc.terminate()
    raise AssertionError("ctx serve did not listen")


_INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"}}}
_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def test_http_with_a_token_needs_it_on_every_request_and_checks_the_host_header(store, tmp_path):
    import anyio
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    proc, port = _http_server(store, tmp_path, "--allowed-host", "ctx.internal",
                              env_extra={"CTX_SERVE_TOKEN": TOKEN})
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        with httpx2.Client() as h:
            no_token = h.post(url, json=_INIT, headers=_HEADERS)
            wrong = h.post(url, json=_INIT, headers={**_HEADERS, "authorization": "Bearer " + "x" * 46})
            evil_host = h.post(url, json=_INIT, headers={**_HEADERS, "authorization": f"Bearer {TOKEN}",
                                                          "host": f"evil.example:{port}"})
            allowed = h.post(url, json=_INIT, headers={**_HEADERS, "authorization": f"Bearer {TOKEN}",
                                                        "host": f"ctx.internal:{port}"})
        assert (no_token.status_code, wrong.status_code) == (401, 401)
        assert no_token.headers["www-authenticate"] == 'Bearer realm="ctx"'
        assert evil_host.status_code == 421
        assert allowed.status_code == 200

        async def main():
            async with httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}) as http:
                async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60) as c:
                    return await c.list_tools()

        assert "investigate" in {t.name for t in anyio.run(main).tools}
    finally:
        proc.terminate()
        proc.wait(timeout=30)
