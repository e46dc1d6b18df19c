"""OTLP export through the OpenTelemetry SDK's own OTLP/HTTP exporter (issue 31.9, issue 49.8):
`--otel-endpoint` or the standard `OTEL_EXPORTER_OTLP_*` variables send the run's spans (protobuf)
to a collector on loopback, with the headers of `OTEL_EXPORTER_OTLP_HEADERS`; a collector that
fails is one line, exit 4, after the run folder is written; a missing `otel` extra is refused
before any work."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from .conftest import REPO, run_cli
from .test_ask import serve  # noqa: F401 (the scripted model server fixture)
from .without_modules import run_without

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")

HINT = "needs the OpenTelemetry SDK: pip install 'ctx-investigator[otel]'"


class Collector(BaseHTTPRequestHandler):
    received: list[tuple[str, dict, bytes]] = []
    status = 200

    def do_POST(self):  # noqa: N802
        body = self.rfile.read(int(self.headers["Content-Length"]))
        Collector.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
        self.send_response(Collector.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

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
    srv.server_close()


def _decode(body: bytes):
    """The collector's view: the protobuf ExportTraceServiceRequest of opentelemetry-proto."""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    return ExportTraceServiceRequest.FromString(body)


def _spans(req) -> dict:
    return {s.name: s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans}


def _attrs(span_or_resource) -> dict:
    out = {}
    for kv in span_or_resource.attributes:
        v = kv.value
        out[kv.key] = v.string_value if v.HasField("string_value") else v.int_value
    return out


def test_spans_are_posted_to_the_collector_as_protobuf_the_same_as_otel_out(store, collector, tmp_path):
    from ctxcli.otel import load_otlp_json

    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run", "--otel-endpoint", collector,
                 "--otel-out", tmp_path / "spans.json"])
    assert (r.exit_code, r.stderr) == (0, "")
    ((path, headers, body),) = Collector.received
    assert (path, headers["content-type"]) == ("/v1/traces", "application/x-protobuf")
    req = _decode(body)
    assert req == load_otlp_json((tmp_path / "spans.json").read_bytes())     # the same spans as --otel-out
    (rs,) = req.resource_spans
    assert _attrs(rs.resource)["service.name"] == "ctx"
    assert [ss.scope.name for ss in rs.scope_spans] == ["ctxcli"]
    spans = _spans(req)
    pack = json.loads((tmp_path / "run" / "pack.json").read_text())
    root = spans["ctx.investigate"]
    assert _attrs(root)["ctx.pack_id"] == pack["pack_id"] and _attrs(root)["ctx.case_id"] == "C-102"
    assert {"ctx.retrieve", "ctx.gates", "ctx.pack", "ctx.answer"} <= set(spans)
    assert spans["ctx.gates"].parent_span_id == root.span_id


@pytest.mark.parametrize(("env", "flag", "path"), [
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "{c}/base/"}, None, "/base/v1/traces"),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "{c}/custom/traces", "OTEL_EXPORTER_OTLP_ENDPOINT": "{c}/base"}, None,
     "/custom/traces"),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "{c}/custom/traces"}, "{c}/flag", "/flag/v1/traces"),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9/"}, "{c}", "/v1/traces"),
], ids=["endpoint-var", "traces-var-first", "flag-first", "flag-over-endpoint-var"])
def test_the_standard_variables_choose_the_endpoint_and_the_flag_wins(store, collector, tmp_path, monkeypatch,
                                                                     env, flag, path):
    for k, v in env.items():
        monkeypatch.setenv(k, v.format(c=collector))
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20t0ken,x-tenant=acme")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "claims-desk")
    args = ["investigate", "C-102", "--out", tmp_path / "run"] + (["--otel-endpoint", flag.format(c=collector)]
                                                                   if flag else [])
    r = run_cli(args)
    assert (r.exit_code, r.stderr) == (0, "")
    ((got, headers, body),) = Collector.received
    assert got == path
    assert (headers["authorization"], headers["x-tenant"]) == ("Bearer t0ken", "acme")
    (rs,) = _decode(body).resource_spans
    assert _attrs(rs.resource)["service.name"] == "claims-desk"


def test_without_a_flag_or_variable_nothing_is_sent_and_otel_sdk_disabled_turns_the_variable_off(
        store, collector, tmp_path, monkeypatch):
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a"]).exit_code == 0
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector)
    monkeypatch.setenv("OTEL_SDK_DISABLED", "true")
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "b"]).exit_code == 0
    assert Collector.received == []
    monkeypatch.setenv("OTEL_SDK_DISABLED", "false")
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "c"]).exit_code == 0
    assert [p for p, _, _ in Collector.received] == ["/v1/traces"]


def test_an_unreachable_collector_exits_4_after_the_run_folder_is_written(store, tmp_path, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]         # closed again: nothing listens there
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "0.5")     # no backoff fits: one attempt (and its quick retry)
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run", "--otel-endpoint", f"http://127.0.0.1:{port}"])
    assert r.exit_code == 4
    assert r.stderr == ("ctx: error: --otel-endpoint: the collector at 127.0.0.1 is unreachable (ConnectionError); "
                        "the run folder is written\n")
    assert (tmp_path / "run" / "pack.json").is_file()


@pytest.mark.parametrize(("flag", "env", "err"), [
    ("ftp://x", {}, "--otel-endpoint 'ftp://x' is not an http(s) URL"),
    ("http://u:p@127.0.0.1:4318", {}, "--otel-endpoint: credentials do not belong in the URL (use "
                                      "OTEL_EXPORTER_OTLP_HEADERS)"),
    (None, {"OTEL_EXPORTER_OTLP_ENDPOINT": "127.0.0.1:4318"},
     "OTEL_EXPORTER_OTLP_ENDPOINT '127.0.0.1:4318' is not an http(s) URL"),
    (None, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:x/v1/traces"},
     "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT 'http://127.0.0.1:x/v1/traces': bad port"),
])
def test_a_malformed_endpoint_fails_before_any_work(store, tmp_path, monkeypatch, flag, env, err):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run"] + (["--otel-endpoint", flag] if flag else []))
    assert (r.exit_code, r.stderr) == (2, f"ctx: error: {err}\n")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("status", [400, 503])
def test_a_collector_that_refuses_the_spans_exits_4(store, collector, tmp_path, monkeypatch, status):
    Collector.status = status
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "0.5")     # 503 is retried while the timeout allows
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector + "/")
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run"])
    assert (r.exit_code, r.stderr) == (4, "ctx: error: OTEL_EXPORTER_OTLP_ENDPOINT: the collector at 127.0.0.1 "
                                          f"answered HTTP {status}; the run folder is written\n")
    assert [p for p, _, _ in Collector.received] == ["/v1/traces"]
    assert (tmp_path / "run" / "pack.json").is_file()


@pytest.mark.parametrize("blocked", [("opentelemetry",), ("opentelemetry.exporter.otlp.proto.http",)],
                         ids=["no-sdk", "no-http-exporter"])
@pytest.mark.parametrize(("cmd", "env", "what"), [
    (["investigate", "C-102", "--otel-endpoint", "http://127.0.0.1:4318"], {}, "--otel-endpoint"),
    (["investigate", "C-102", "--otel-out", "{tmp}/spans.json"], {}, "--otel-out"),
    (["investigate", "C-102"], {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"),
    (["ask", "C-102", "--endpoint", "http://127.0.0.1:9"], {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://h/t"},
     "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
], ids=["flag", "otel-out", "variable", "ask-variable"])
def test_a_missing_extra_is_refused_before_any_work(store, tmp_path, monkeypatch, cmd, env, what, blocked):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    args = [a.format(tmp=tmp_path) for a in cmd] + ["--out", tmp_path / "run"]
    r = run_without(blocked, args, cwd=REPO)
    assert (r.returncode, r.stderr, r.stdout) == (2, f"ctx: error: {what} {HINT}\n", "")
    assert sorted(p.name for p in tmp_path.iterdir()) == []        # no run folder, no spans file


def test_spans_carry_no_content_and_no_id_of_a_withheld_object(store, collector, tmp_path):
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "full"])
    assert r.exit_code == 0
    full = json.loads((tmp_path / "full" / "pack.json").read_text())
    r = run_cli(["investigate", "C-102", "--variant", "restricted", "--out", tmp_path / "run",
                 "--otel-endpoint", collector])
    assert (r.exit_code, r.stderr) == (0, "")
    pack = json.loads((tmp_path / "run" / "pack.json").read_text())
    kept = {e["object_id"] for e in pack["evidence"]}
    withheld = {e["object_id"] for e in full["evidence"]} - kept
    assert withheld and kept                                      # both sides exist in this case
    ((_, _, body),) = Collector.received
    for oid in withheld | kept:
        assert oid.encode() not in body                           # spans name no evidence at all
    for e in full["evidence"]:
        assert e["text"][:30].encode() not in body
    assert _attrs(_spans(_decode(body))["ctx.investigate"])["ctx.variant"] == "restricted"


def test_the_model_call_of_ctx_ask_is_a_child_span_with_genai_attributes_and_no_content(
        store, serve, collector, tmp_path, monkeypatch):
    from ctxcli.otel import load_otlp_json

    from .test_ask import KEY, faithful, reply  # noqa: F811

    ans, pack = faithful()
    srv = serve({"responses": [reply(ans)], "key": KEY})
    monkeypatch.setenv("CTX_MODEL_API_KEY", KEY)
    r = run_cli(["ask", "C-102", "--endpoint", srv.url, "--model", "test-model", "--out", tmp_path / "run",
                 "--otel-out", tmp_path / "ask.json", "--otel-endpoint", collector])
    assert r.exit_code == 0, r.stderr
    ((path, _, body),) = Collector.received
    req = _decode(body)
    assert path == "/v1/traces" and req == load_otlp_json((tmp_path / "ask.json").read_bytes())
    spans = _spans(req)
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
    for secret in (KEY, ans["summary"], ans["claims"][0]["text"], pack["evidence"][0]["text"][:40]):
        assert secret.encode() not in body


def test_otel_out_replaces_its_own_file_whatever_otel_service_name_says(store, tmp_path, monkeypatch):
    spans = tmp_path / "spans.json"
    monkeypatch.setenv("OTEL_SERVICE_NAME", "claims-desk")
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "a", "--otel-out", spans]).exit_code == 0
    doc = json.loads(spans.read_text())
    assert {"key": "service.name", "value": {"stringValue": "claims-desk"}} in doc["resourceSpans"][0]["resource"][
        "attributes"]
    monkeypatch.delenv("OTEL_SERVICE_NAME")
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "b", "--otel-out", spans])
    assert (r.exit_code, r.stderr) == (0, "")                  # ctx's own spans (scope ctxcli): replaced
    doc["resourceSpans"][0]["scopeSpans"][0]["scope"]["name"] = "another-app"
    spans.write_text(json.dumps(doc))
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "c", "--otel-out", spans])
    assert (r.exit_code, r.stderr) == (2, f"ctx: error: --otel-out {spans}: exists and was not written by ctx "
                                          "--otel-out; not replacing it\n")
