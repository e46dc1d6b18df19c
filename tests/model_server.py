"""A scripted OpenAI-compatible chat-completions server for the tests (127.0.0.1 only).

    python tests/model_server.py SCRIPT.json LOG.jsonl

prints ``port <n>`` on its first stdout line and serves ``POST /v1/chat/completions``.
SCRIPT.json holds ``{"responses": [...], "by_case": {"C-102": [...]}, "reject_response_format":
false, "key": "..."}``. Each request takes the next prepared response of its case (found in
the ``Case <id> (tenant`` line of the request) or of ``responses``; the last one repeats.
A response is ``{"status": 200, "content": "..."}`` (wrapped as a chat completion with token
usage), ``{"status": 500}``, ``{"raw": "...", "content_type": "text/html"}`` (sent as is),
and may carry ``"delay": seconds`` and ``"headers": {...}``. ``"drip": seconds`` sends the body
one byte at a time with that pause between bytes (a slow-drip server); ``"pad": n`` adds ``n``
bytes of white space inside the JSON body (a huge response), streamed in 64 KiB pieces;
``"lie_length": n`` declares a Content-Length of ``n`` (and closes the connection after the body); ``"chunked": true`` sends the body with
chunked transfer encoding (no length announced). With ``key`` set, a request
without ``Authorization: Bearer <key>`` gets 401. LOG.jsonl gets one line per request: path,
model, whether a response_format was sent, the case, and whether the key matched (never the
key or the messages).
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CASE = re.compile(r"Case (\S+) \(tenant ")


def main() -> None:
    script = json.load(open(sys.argv[1], encoding="utf-8"))
    log_path = sys.argv[2]
    lock = threading.Lock()
    queues: dict[str, list] = {k: list(v) for k, v in (script.get("by_case") or {}).items()}
    queues["*"] = list(script.get("responses") or [])

    def next_response(case: str | None) -> dict:
        with lock:
            q = queues.get(case) if case in queues else queues["*"]
            if not q:
                return {"status": 500}
            return q.pop(0) if len(q) > 1 else q[0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes, ctype: str = "application/json", headers=None,
                  r: dict | None = None) -> None:
            r = r or {}
            pad = int(r.get("pad", 0))
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            if r.get("chunked"):
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(r.get("lie_length", len(body) + pad)))
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            try:
                if r.get("chunked"):       # no length announced: the client learns the size as it reads
                    data = body[:1] + b" " * pad + body[1:]
                    for i in range(0, len(data), 65536):
                        piece = data[i:i + 65536]
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    self.wfile.write(b"0\r\n\r\n")
                    return
                if r.get("drip"):
                    for i in range(len(body)):
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                        time.sleep(float(r["drip"]))
                    return
                if pad:
                    self.wfile.write(body[:1])
                    piece = b" " * 65536
                    left = pad
                    while left > 0:
                        self.wfile.write(piece[:min(left, len(piece))])
                        left -= len(piece)
                    self.wfile.write(body[1:])
                    return
                self.wfile.write(body)
                if "lie_length" in r:       # a server that lied about the length hangs up after its body
                    self.close_connection = True
            except (BrokenPipeError, ConnectionResetError):   # the client gave up: fine
                pass

        def do_POST(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            req = json.loads(self.rfile.read(n) or b"{}")
            msgs = req.get("messages") or []
            text = "\n".join(m.get("content", "") for m in msgs if isinstance(m, dict))
            m = CASE.search(text)
            case = m.group(1) if m else None
            key = script.get("key")
            auth_ok = (not key) or self.headers.get("Authorization") == f"Bearer {key}"
            with lock, open(log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"path": self.path, "model": req.get("model"), "case": case,
                                     "response_format": "response_format" in req, "messages": len(msgs),
                                     "auth_ok": auth_ok}) + "\n")
            if self.path != "/v1/chat/completions":
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            if not auth_ok:
                self._send(401, json.dumps({"error": {"message": "Incorrect API key provided."}}).encode())
                return
            if script.get("reject_response_format") and "response_format" in req:
                self._send(400, b'{"error": {"message": "response_format is not supported"}}')
                return
            r = next_response(case)
            if r.get("delay"):
                time.sleep(float(r["delay"]))
            if "raw" in r:
                self._send(int(r.get("status", 200)), r["raw"].encode(), r.get("content_type", "text/plain"),
                           r.get("headers"), r)
                return
            status = int(r.get("status", 200))
            if status != 200:
                self._send(status, json.dumps({"error": {"message": r.get("message", f"scripted {status}")}}).encode(),
                           headers=r.get("headers"))
                return
            content = r.get("content", "")
            body = {"id": "chatcmpl-scripted", "object": "chat.completion", "model": req.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": len(text) // 4, "completion_tokens": len(content) // 4,
                              "total_tokens": len(text) // 4 + len(content) // 4}}
            self._send(200, json.dumps(body).encode(), headers=r.get("headers"), r=r)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    sys.stdout.write(f"port {srv.server_address[1]}\n")
    sys.stdout.flush()
    srv.serve_forever()


if __name__ == "__main__":
    main()
