"""Passwords out of messages: a store address's password never reaches stderr, a trace or a report.

Every error the CLI prints passes through :func:`mask` (cli/common.py); the PostgreSQL backend
masks its driver's messages with the address it was given."""

from __future__ import annotations

import re

_PW_URL = re.compile(r"(?P<pre>[a-z]+://[^:/?#@\s]*:)(?P<pw>[^@/?#\s]*)(?P<post>@)", re.I)
_PW_KV = re.compile(r"(?P<pre>\bpassword\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|[^\s&]*)", re.I)


def mask(text: str, address: str | None = None) -> str:
    """``text`` with every password (in URLs, ``password=`` pairs and the literal password of
    ``address``) replaced by ``***``."""
    out = _PW_URL.sub(lambda m: m["pre"] + "***" + m["post"], str(text))
    out = _PW_KV.sub(lambda m: m["pre"] + "***", out)
    if address:
        pw = password_of(address)
        if pw and len(pw) >= 3:
            out = out.replace(pw, "***")
    return out


def password_of(address: str) -> str | None:
    m = _PW_URL.search(address)
    if m and m["pw"]:
        from urllib.parse import unquote

        return unquote(m["pw"])
    m = _PW_KV.search(address)
    return m["pw"].strip("'") if m and m["pw"] else None
