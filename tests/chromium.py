"""A small Chrome DevTools Protocol client over ``--remote-debugging-pipe``, for browser tests.

Chromium reads CDP commands (JSON, each ended by a NUL byte) from file descriptor 3 and writes
replies and events to descriptor 4. Over a pipe there is no port and no websocket: nothing
else on the machine can talk to the browser, and no extra library is needed. The page is
opened with every CDP event of interest enabled, so a test sees each network request the
page made, each console message and each uncaught exception, and can evaluate JavaScript in
the page and take a screenshot.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    env = os.environ.get("CTX_CHROMIUM")
    if env:
        return env
    for name in CANDIDATES:
        p = shutil.which(name)
        if p:
            return p
    return None


@dataclass
class PageLoad:
    """What happened while a page loaded."""

    requests: list[str] = field(default_factory=list)        # every URL the page requested
    console: list[dict[str, Any]] = field(default_factory=list)   # console API calls and log entries
    exceptions: list[str] = field(default_factory=list)
    loaded: bool = False


class Browser:
    """One headless Chromium process driven over a CDP pipe."""

    def __init__(self, binary: str, *, width: int = 1280, height: int = 900, timeout: float = 60.0):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="ctx-chromium-")
        to_r, to_w = os.pipe()        # we write commands -> chromium reads fd 3
        from_r, from_w = os.pipe()    # chromium writes fd 4 -> we read

        def child_fds() -> None:
            # dup first: dup2(3, 3) would keep the close-on-exec flag that os.pipe() sets
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [binary, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-extensions", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
                f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, preexec_fn=child_fds, close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self._w, self._r = to_w, from_r
        self._buf = b""
        self._id = 0
        self._events: list[dict[str, Any]] = []
        self.session: str | None = None

    # -------------------------------------------------------------------------- protocol
    def _send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self._w, data)
            data = data[n:]
        return self._id

    def _read_one(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe: " + self._stderr_tail())
            self._buf += chunk
        raw, self._buf = self._buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method: str, params: dict[str, Any] | None = None, *, session: str | None = "page") -> Any:
        sid = self.session if session == "page" else session
        mid = self._send(method, params, sid)
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._read_one(deadline)
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._events.append(msg)

    def wait_for(self, method: str, timeout: float | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + (timeout or self.timeout)
        for i, ev in enumerate(self._events):
            if ev.get("method") == method:
                return self._events.pop(i)
        while True:
            msg = self._read_one(deadline)
            if msg.get("method") == method:
                return msg
            self._events.append(msg)

    def drain(self, seconds: float) -> None:
        """Collect events for a short while (late console messages, late requests)."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                self._events.append(self._read_one(deadline))
            except TimeoutError:
                return

    def _stderr_tail(self) -> str:
        try:
            self.proc.kill()
            return (self.proc.stderr.read() or b"").decode(errors="replace")[-800:]  # type: ignore[union-attr]
        except Exception:
            return ""

    # -------------------------------------------------------------------------- page
    def open(self, url: str, *, width: int = 1280, height: int = 900) -> PageLoad:
        """Open ``url`` in a new tab with network, console and exception events on; wait for load."""
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=None)["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=None)["sessionId"]
        for m in ("Page.enable", "Network.enable", "Runtime.enable", "Log.enable"):
            self.call(m)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self._events.clear()
        self.call("Page.navigate", {"url": url})
        self.wait_for("Page.loadEventFired")
        self.drain(0.5)
        load = PageLoad(loaded=True)
        for ev in self._events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Network.requestWillBeSent":
                load.requests.append(p["request"]["url"])
            elif m == "Runtime.consoleAPICalled":
                load.console.append({"level": p.get("type"), "text": " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", []))})
            elif m == "Log.entryAdded":
                e = p.get("entry", {})
                load.console.append({"level": e.get("level"), "text": e.get("text"), "url": e.get("url")})
            elif m == "Runtime.exceptionThrown":
                load.exceptions.append(json.dumps(p.get("exceptionDetails", {}))[:500])
        return load

    def evaluate(self, expression: str) -> Any:
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate failed: {r['exceptionDetails']}")
        return r["result"].get("value")

    def screenshot(self, *, full_page: bool = False) -> bytes:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            w, h = self.evaluate("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": w, "height": h, "scale": 1}
        return base64.b64decode(self.call("Page.captureScreenshot", params)["data"])

    def pdf(self) -> bytes:
        """The open page printed as a browser prints it (print media, the page's own ``@page``
        size and margins, backgrounds off), as PDF bytes."""
        return base64.b64decode(self.call("Page.printToPDF", {"preferCSSPageSize": True})["data"])

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                try:
                    self._send("Browser.close")
                    self.proc.wait(timeout=10)
                except Exception:
                    pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for fd in (self._w, self._r):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if self.proc.stderr:
                self.proc.stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ------------------------------------------------------------------------------ PNG
def decode_png(data: bytes) -> tuple[int, int, int, bytes]:
    """(width, height, channels, raw pixel rows without filter bytes) of an 8-bit,
    non-interlaced RGB or RGBA PNG, as Chromium writes screenshots."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    height = depth = ctype = interlace = 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {ctype}, interlace {interlace})")
    ch = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * ch
    out = bytearray()
    prev = bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(ch, stride):
                line[i] = (line[i] + line[i - ch]) & 255
        elif f == 2:
            for i in range(stride):
                line[i] = (line[i] + prev[i]) & 255
        elif f == 3:
            for i in range(stride):
                left = line[i - ch] if i >= ch else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - ch] if i >= ch else 0
                b = prev[i]
                c = prev[i - ch] if i >= ch else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        elif f != 0:
            raise ValueError(f"bad PNG filter {f}")
        out += line
        prev = line
    return width, height, ch, bytes(out)


def colour_stats(data: bytes, step: int = 7) -> tuple[int, float]:
    """(number of distinct colours, share of pixels that are not the most common colour),
    sampling every ``step``-th pixel."""
    w, h, ch, px = decode_png(data)
    counts: dict[bytes, int] = {}
    n = 0
    for i in range(0, w * h, step):
        c = px[i * ch:i * ch + 3]
        counts[c] = counts.get(c, 0) + 1
        n += 1
    top = max(counts.values())
    return len(counts), (n - top) / n if n else 0.0


def pdf_pages(data: bytes) -> int:
    """The number of pages of a PDF that Chromium wrote (each page is one ``/Type /Page`` object)."""
    import re

    if not data.startswith(b"%PDF-"):
        raise ValueError("not a PDF")
    return len(re.findall(rb"/Type\s*/Page(?![A-Za-z])", data))


def file_url(path: Path) -> str:
    return Path(path).resolve().as_uri()


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.chromium PAGE.html OUT.png [WIDTH HEIGHT]``: a viewport screenshot
    (how docs/report.png is made)."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (2, 4):
        print(main.__doc__, file=sys.stderr)
        return 2
    width, height = (int(args[2]), int(args[3])) if len(args) == 4 else (1280, 1000)
    binary = find_chromium()
    if binary is None:
        print("chromium is not installed", file=sys.stderr)
        return 2
    with Browser(binary) as b:
        b.open(file_url(Path(args[0])), width=width, height=height)
        Path(args[1]).write_bytes(b.screenshot())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
