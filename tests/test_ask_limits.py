"""`ctx ask` against hostile endpoints and keys (issue 27 items 6, 7 and the ask paths of 10):
total wall time, response size, bounded parsing, keys that must never be printed, bad URLs.
Uses the scripted server of tests/model_server.py on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import subprocess
import sys

import pytest

from .conftest import REPO, run_cli
from .test_ask import KEY, ask, codes, faithful, model_answer, reply, serve  # noqa: F401  (fixture)


def _ask_subprocess(srv, out, *extra, timeout=90):
    """In a child process, so that a hang fails by the time limit instead of stalling the suite."""
    return subprocess.run([sys.executable, "-m", "ctxcli.cli.main", "ask", "C-102", "--endpoint", srv.url,
                           "--model", "m", "--out", str(out), *map(str, extra)],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO)


def _windows(key: str, n: int = 8) -> list[str]:
    return [key[i:i + n] for i in range(len(key) - n + 1)]


# ---------------------------------------------------------------------------------- item 6
def test_timeout_is_the_whole_call_even_for_a_slow_drip_server(store, serve, tmp_path):
    ans, _ = faithful()
    # one byte every 0.05 s: some 200 s for the whole body; every read returns well within 1 s
    srv = serve({"responses": [{**reply(ans), "drip": 0.05}]})
    # the limit only bounds a hang (the whole body would take some 200 s)
    r = _ask_subprocess(srv, tmp_path / "run", "--timeout", "1", timeout=15)
    assert (r.returncode, r.stdout) == (4, "")
    assert r.stderr == f"ctx: error: model endpoint {srv.url} timed out after 1 s (attempt 1)\n"
    assert not (tmp_path / "run").exists()


def test_backoff_never_outlasts_the_timeout(store, serve, tmp_path, monkeypatch):
    from ctxcli.answer import model

    slept: list[float] = []
    monkeypatch.setattr(model, "_SLEEP", slept.append)
    srv = serve({"responses": [{"status": 503, "headers": {"Retry-After": "30"}}]})
    r = ask(srv, tmp_path / "run", "--timeout", "5")
    assert r.exit_code == 4 and slept == []
    assert r.stderr == f"ctx: error: model endpoint {srv.url} timed out after 5 s (attempt 2)\n"


@pytest.mark.parametrize("how", ["chunked", "declared", "declared_too_long"])
def test_a_response_over_the_cap_is_refused(store, serve, tmp_path, how):
    ans, _ = faithful()
    big = {"chunked": {**reply(ans), "pad": 5 * 1024 * 1024, "chunked": True},     # no length: counted as read
           "declared": {**reply(ans), "lie_length": 10**9},                          # refused from the header
           "declared_too_long": {**reply(ans), "pad": 5 * 1024 * 1024}}[how]
    srv = serve({"responses": [big]})
    r = ask(srv, tmp_path / "run")
    assert r.exit_code == 4
    assert r.stderr == (f"ctx: error: model endpoint {srv.url} sent a response larger than 4 MB "
                        "(max_response_bytes in [model] of ctx.toml)\n")
    assert not (tmp_path / "run").exists()


def test_the_cap_is_configurable(project_copy, serve, tmp_path):
    ans, _ = faithful()
    srv = serve({"responses": [reply(ans)]})
    (project_copy / "ctx.toml").write_text("[model]\nmax_response_bytes = 1024\n", encoding="utf-8")
    r = ask(srv, tmp_path / "run")
    assert r.exit_code == 4 and r.stderr.endswith("sent a response larger than 1024 bytes (max_response_bytes "
                                                  "in [model] of ctx.toml)\n")
    (project_copy / "ctx.toml").write_text("[model]\nmax_response_bytes = 10\n", encoding="utf-8")
    r = ask(srv, tmp_path / "run")
    assert r.exit_code == 2 and r.stderr == ("ctx: error: ctx.toml: model.max_response_bytes: an integer number "
                                             "of bytes in [1024, 1073741824]\n")


@pytest.mark.parametrize("content,why", [
    ("[" * 100 + "]" * 100, "the reply is JSON nested deeper than 64 levels"),
    ('{"verdict": 123456789012345678901234567890}',
     "the reply is integer 123456789012345678901234567890 is outside the 64-bit range; quote it to keep it exact"),
    ('{"verdict": "complete", "verdict": "partial"}', "the reply is duplicate key 'verdict'"),
    ("```json\n" + "[" * 3000 + "]" * 3000 + "\n```",
     "the reply is neither a JSON object nor a fenced ```json block"),
])
def test_a_hostile_reply_is_a_recorded_unparseable_answer_never_exit_70(store, serve, tmp_path, content, why):
    srv = serve({"responses": [{"status": 200, "content": content}]})
    r = ask(srv, tmp_path / "run")
    assert (r.exit_code, r.stderr) == (1, "")
    ma = model_answer(tmp_path / "run")
    assert codes(ma) == ["unparseable"] and ma["parse"]["error"] == why


@pytest.mark.parametrize("raw,why", [
    ('{"choices": [], "usage": {"prompt_tokens": 123456789012345678901234567890}}',
     "unusable JSON: integer 123456789012345678901234567890 is outside the 64-bit range; quote it to keep it exact"),
    ('{"choices": ' + "[" * 100 + "]" * 100 + "}", "unusable JSON: JSON nested deeper than 64 levels"),
])
def test_a_hostile_response_body_is_one_line_exit_4(store, serve, tmp_path, raw, why):
    srv = serve({"responses": [{"raw": raw, "content_type": "application/json"}]})
    r = ask(srv, tmp_path / "run")
    assert r.exit_code == 4
    assert r.stderr == f"ctx: error: model endpoint {srv.url} answered {why} (application/json)\n"


def test_an_oversized_answer_is_a_schema_violation_quickly(store, serve, tmp_path):
    ans, _ = faithful()
    ans["claims"] = ans["claims"] * 40                   # 240 claims
    ans["summary"] = "x " * 5000
    srv = serve({"responses": [reply(ans)]})
    r = ask(srv, tmp_path / "run")
    assert r.exit_code == 1
    vs = model_answer(tmp_path / "run")["validation"]["violations"]
    assert [(v["code"], v.get("field"), v["message"]) for v in vs] == [
        ("schema", "summary", "summary is longer than 4000 characters"),
        ("schema", "claims", "more than 100 claims")]


# ---------------------------------------------------------------------------------- item 7
def test_a_key_ending_in_cr_lf_is_used_without_them_and_never_printed(store, serve, tmp_path, monkeypatch):
    ans, _ = faithful()
    srv = serve({"responses": [reply(ans)], "key": KEY})
    monkeypatch.setenv("CTX_MODEL_API_KEY", KEY + "\r\n")
    r = ask(srv, tmp_path / "run")
    assert r.exit_code == 0, r.stderr
    assert srv.requests()[-1]["auth_ok"] is True
    assert KEY not in r.stdout + r.stderr


@pytest.mark.parametrize("key,kind,pos", [(KEY + "é", "a non-ASCII character", len(KEY) + 1),
                                          ("sk-a\x01b", "a space or control character", 5),
                                          ("sk-ab cd", "a space or control character", 6)])
def test_a_key_no_header_can_carry_is_one_line_naming_the_variable(store, serve, tmp_path, monkeypatch,
                                                                  key, kind, pos):
    srv = serve({"responses": [{"status": 200, "content": "{}"}]})
    monkeypatch.setenv("CTX_MODEL_API_KEY", key)
    r = ask(srv, tmp_path / "run")
    assert r.exit_code == 2
    assert r.stderr == (f"ctx: error: CTX_MODEL_API_KEY: the API key holds {kind} at position {pos}; an HTTP "
                        "header cannot carry it (the key is not shown)\n")
    assert srv.requests() == []


def _echoes(key: str) -> dict[str, str]:
    b = key.encode()
    return {"part": key[3:-4], "b64": base64.b64encode(b).decode(), "b64url": base64.urlsafe_b64encode(b).decode(),
            "b64-in-blob": base64.b64encode(b"Authorization: Bearer " + b).decode(), "hex": b.hex()}


def test_partial_and_encoded_echoes_of_the_key_are_scrubbed_from_stderr(store, serve, tmp_path, monkeypatch):
    e = _echoes(KEY)
    srv = serve({"responses": [{"status": 418, "message": f"key {e['part']}… / {e['b64']} / {e['hex']}"}], "key": KEY})
    monkeypatch.setenv("CTX_MODEL_API_KEY", KEY)
    r = ask(srv, tmp_path / "run")
    assert r.exit_code == 4
    assert r.stderr == f"ctx: error: model endpoint {srv.url} answered HTTP 418: key ***… / *** / ***\n"


def test_partial_and_encoded_echoes_of_the_key_never_reach_the_run_files(store, serve, tmp_path, monkeypatch):
    ans, _ = faithful()
    e = _echoes(KEY)
    ans["summary"] = " | ".join(f"{k} {v}" for k, v in e.items())
    srv = serve({"responses": [reply(ans)], "key": KEY})
    monkeypatch.setenv("CTX_MODEL_API_KEY", KEY)
    r = ask(srv, tmp_path / "run", "--json")
    assert r.exit_code in (0, 1), r.stderr
    blob = base64.b64encode(b"Authorization: Bearer " + KEY.encode()).decode()
    for p in (tmp_path / "run").iterdir():
        text = p.read_text(encoding="utf-8")
        for w in _windows(KEY):
            assert w not in text, (p.name, w)
        for k, v in e.items():
            assert v not in text, (p.name, k)
        assert blob[32:] not in text, p.name            # the key's part of a longer base64 blob
    for w in _windows(KEY):
        assert w not in r.stdout + r.stderr
    assert model_answer(tmp_path / "run")["answer"]["summary"].startswith("part *** | b64 *** | b64url *** | ")


def test_a_key_echoed_in_the_usage_never_reaches_the_trace(store, serve, tmp_path, monkeypatch):
    ans, _ = faithful()
    e = _echoes(KEY)
    body = {"id": e["b64"], "choices": [{"message": {"role": "assistant", "content": json.dumps(ans)}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "echo": e["part"], e["hex"]: 1}}
    srv = serve({"responses": [{"raw": json.dumps(body), "content_type": "application/json"}], "key": KEY})
    monkeypatch.setenv("CTX_MODEL_API_KEY", KEY)
    r = ask(srv, tmp_path / "run")
    assert r.exit_code == 0, r.stderr
    trace = (tmp_path / "run" / "trace.jsonl").read_text()
    assert '"usage":{"***":1,"completion_tokens":5,"echo":"***","prompt_tokens":10}' in trace
    for p in (tmp_path / "run").iterdir():
        text = p.read_text(encoding="utf-8")
        assert not any(w in text for w in _windows(KEY)) and not any(v in text for v in e.values()), p.name


# ---------------------------------------------------------------------------------- item 10 (ask paths)
@pytest.mark.parametrize("endpoint,message", [
    ("http://127.0.0.1:99999", "--endpoint 'http://127.0.0.1': the port must be a number in 1-65535"),
    ("http://127.0.0.1:0", "--endpoint 'http://127.0.0.1': the port must be a number in 1-65535"),
    ("http://127.0.0.1:8x", "--endpoint 'http://127.0.0.1': the port must be a number in 1-65535"),
    ("http://[::1", "--endpoint 'http://[::1' is not a valid URL (Invalid IPv6 URL)"),
    ("http://[not-an-address]:80", "--endpoint 'http://[not-an-address]:80' is not a valid URL ('not-an-address' "
     "does not appear to be an IPv4 or IPv6 address)"),
])
def test_a_bad_endpoint_port_or_ipv6_address_is_one_line_exit_2(store, tmp_path, endpoint, message):
    r = run_cli(["ask", "C-102", "--endpoint", endpoint, "--model", "m", "--out", tmp_path / "run"])
    assert (r.exit_code, r.stderr) == (2, f"ctx: error: {message}\n")


@pytest.mark.parametrize("edit", ["response_is_a_string", "request_is_a_list", "content_is_a_number",
                                  "model_answer_validation_is_a_string", "not_json"])
def test_a_malformed_model_json_in_replay_is_one_line_exit_2(store, serve, tmp_path, edit):
    from .test_ask import _restamp

    ans, _ = faithful()
    srv = serve({"responses": [reply(ans)]})
    assert ask(srv, tmp_path / "run").exit_code == 0
    name = "model_answer.json" if edit.startswith("model_answer") else "model.json"
    p = tmp_path / "run" / name
    doc = json.loads(p.read_text())
    if edit == "response_is_a_string":
        doc["response"] = "x"
    elif edit == "request_is_a_list":
        doc["request"] = []
    elif edit == "content_is_a_number":
        doc["response"]["content"] = 5
    elif edit == "model_answer_validation_is_a_string":
        doc["validation"] = "x"
    p.write_text("{oops" if edit == "not_json" else json.dumps(doc))
    _restamp(p)
    r = run_cli(["replay", tmp_path / "run" / "pack.json"])
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith(f"ctx: error: {p}: ") and r.stderr.count("\n") == 1
    assert "internal error" not in r.stderr
