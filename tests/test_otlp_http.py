"""`ctx investigate --otel-endpoint`: the run's spans reach an OTLP/HTTP collector on loopback
(issue 31.9); an unreachable collector is one line, exit 4, after the run folder is written."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from .conftest import run_cli

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
