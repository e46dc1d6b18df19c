"""A tiny scripted ticket-status API for the live API example (docs/authoring.md, "Live API
sources"): GET /incidents/<id>/status answers the incident's status from tickets.json beside
this file. It listens on 127.0.0.1 only and wants the bearer token in $PAY_TICKETS_TOKEN.

    PAY_TICKETS_TOKEN=demo python examples/live/ticket_server.py --port 8765
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TICKETS = json.loads((Path(__file__).with_name("tickets.json")).read_text(encoding="utf-8"))


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        token = os.environ.get("PAY_TICKETS_TOKEN", "")
        if not token or self.headers.get("Authorization") != f"Bearer {token}":
            return self.reply(401, {"error": "unauthorized"})
        m = re.fullmatch(r"/incidents/([A-Za-z0-9._-]+)/status", self.path)
        if m is None or m.group(1) not in TICKETS:
            return self.reply(404, {"error": "no such incident"})
        return self.reply(200, TICKETS[m.group(1)])

    def reply(self, status: int, doc) -> None:
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8765, help="0: any free port (printed)")
    port = ap.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"serving on http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
