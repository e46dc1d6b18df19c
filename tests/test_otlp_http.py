"""`ctx investigate --otel-endpoint`: the run's spans reach an OTLP/HTTP collector on loopback
(issue 31.9); an unreachable collector is one line, exit 4, after the run folder is written."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from .conftest import run_cli
from .test_ask import serve  # noqa: F401 (the scripted model server fixture)

pytest.importorskip("opentelemetry.sdk")


class Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, str, bytes]] = []
    status = 200

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Collector.received.append((self.path, self.headers["Content-Type"], body))
        self.send_response(Collector.status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *a):
        pass


@pytest.fixture
def collector():
    Collector.received, Collector.status = [], 200
    srv = HTTPServer(("127.0.0.1", 0), Collector)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_spans_are_posted_to_the_collector(store, collector, tmp_path):
    from ctxcli.otel import load_otlp_json

    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run", "--otel-endpoint", collector,
                 "--otel-out", tmp_path / "spans.json"])
    assert r.exit_code == 0, r.stderr
    ((path, ctype, body),) = Collector.received
    assert (path, ctype) == ("/v1/traces", "application/json")
    assert body == (tmp_path / "spans.json").read_bytes()      # the same document as --otel-out
    req = load_otlp_json(body)
    names = [s.name for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert "ctx.investigate" in names and "ctx.retrieve" in names


def test_an_unreachable_collector_exits_4_after_the_run_folder_is_written(store, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]         # closed again: nothing listens there
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run", "--otel-endpoint", f"http://127.0.0.1:{port}"])
    assert r.exit_code == 4
    assert r.stderr == ("ctx: error: --otel-endpoint: the collector at 127.0.0.1 is unreachable (ConnectError); "
                        "the run folder is written\n")
    assert (tmp_path / "run" / "pack.json").is_file()


def test_a_malformed_endpoint_fails_before_any_work(store, tmp_path):
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run", "--otel-endpoint", "ftp://x"])
    assert (r.exit_code, r.stderr) == (2, "ctx: error: --otel-endpoint 'ftp://x' is not an http(s) URL\n")
    assert not (tmp_path / "run").exists()


def test_a_collector_that_refuses_the_spans_exits_4(store, collector, tmp_path):
    Collector.status = 503
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run", "--otel-endpoint", collector + "/"])
    assert (r.exit_code, r.stderr) == (4, "ctx: error: --otel-endpoint: the collector at 127.0.0.1 answered HTTP "
                                          "503; the run folder is written\n")
    assert [p for p, _, _ in Collector.received] == ["/v1/traces"]


def _attrs(span) -> dict:
    out = {}
    for kv in span.attributes:
        v = kv.value
        out[kv.key] = v.string_value if v.HasField("string_value") else v.int_value
    return out


def test_the_model_call_of_ctx_ask_is_a_child_span_with_genai_attributes_and_no_content(
        store, serve, collector, tmp_path, monkeypatch):
    import json

    from ctxcli.otel import load_otlp_json

    from .test_ask import KEY, faithful, reply  # noqa: F811

    ans, pack = faithful()
    srv = serve({"responses": [reply(ans)], "key": KEY})
    monkeypatch.setenv("CTX_MODEL_API_KEY", KEY)
    r = run_cli(["ask", "C-102", "--endpoint", srv.url, "--model", "test-model", "--out", tmp_path / "run",
                 "--otel-out", tmp_path / "ask.json", "--otel-endpoint", collector])
    assert r.exit_code == 0, r.stderr
    ((path, _, body),) = Collector.received
    assert path == "/v1/traces" and body == (tmp_path / "ask.json").read_bytes()
    spans = {s.name: s for rs in load_otlp_json(body).resource_spans for ss in rs.scope_spans for s in ss.spans}
    assert sorted(spans) == ["chat test-model", "ctx.ask"]
    root, call = spans["ctx.ask"], spans["chat test-model"]
    assert call.parent_span_id == root.span_id and call.trace_id == root.trace_id
    usage = json.loads((tmp_path / "run" / "model.json").read_text())["usage"]
    port = int(srv.url.rsplit(":", 1)[1])
    assert _attrs(call) == {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "test-model", "server.address": "127.0.0.1",
        "server.port": port,
        "ctx.model.attempts": 1, "gen_ai.usage.input_tokens": usage["prompt_tokens"],
        "gen_ai.usage.output_tokens": usage["completion_tokens"], "http.response.status_code": 200,
        "ctx.model_answer.status": "accepted", "ctx.model_answer.violations": 0, "ctx.model_answer.claims": 6,
        "ctx.model_answer.claims_ok": 6}
    assert _attrs(root)["ctx.pack_id"] == pack["pack_id"]
    # one trace with the pack's investigation spans
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "det", "--otel-out", tmp_path / "inv.json"]).exit_code == 0
    inv = load_otlp_json((tmp_path / "inv.json").read_bytes())
    assert {s.trace_id for rs in inv.resource_spans for ss in rs.scope_spans for s in ss.spans} == {root.trace_id}
    # never the prompt, the completion, nor the key
    text = body.decode()
    for secret in (KEY, ans["summary"], ans["claims"][0]["text"], pack["evidence"][0]["text"][:40]):
        assert secret not in text
