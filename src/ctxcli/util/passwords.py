"""Passwords out of messages: a store address's password never reaches stderr, a trace or a report.

Every error the CLI prints passes through :func:`mask` (cli/common.py); the PostgreSQL backend
masks its driver's messages with the address it was given."""

from __future__ import annotations

import re

_PW_URL = re.compile(r"(?P<pre>[a-z]+://[^:/?#@\s]*:)(?P<pw>[^@/?#\s]*)(?P<post>@)", re.I)
_PW_KV = re.compile(r"(?P<pre>\bpassword\s*=\s*)(?P<pw>'(?:[^'\\]|\\.)*'|[^\s&]*)", re.I)
# a URL query parameter: its key is compared percent-decoded (libpq decodes it: ?pass%77ord=…)
_QUERY = re.compile(r"(?P<pre>[?&](?P<key>[^=&#\s]+)=)(?P<val>[^&#\s]*)")
SECRET_KEYS = ("password", "passfile", "sslpassword")


def mask(text: str, address: str | None = None) -> str:
    """``text`` with every password (in URLs, ``password=`` pairs and the literal password of
    ``address``) replaced by ``***``."""
    out = _PW_URL.sub(lambda m: m["pre"] + "***" + m["post"], str(text))
    out = _PW_KV.sub(lambda m: m["pre"] + "***", out)
    out = _QUERY.sub(lambda m: m["pre"] + "***" if _decoded(m["key"]) in SECRET_KEYS else m[0], out)
    if address:
        pw = password_of(address)
        if pw and len(pw) >= 3:
            from urllib.parse import quote

            out = out.replace(pw, "***").replace(quote(pw, safe=""), "***")
    return out


def _decoded(key: str) -> str:
    from urllib.parse import unquote

    return unquote(key).strip().lower()


def conninfo(address: str) -> dict[str, str]:
    """The connection parameters of a libpq address (URL or ``key=value`` pairs), keys and
    values percent-decoded as libpq decodes them; {} when it does not parse. Pure Python: the
    layers above ``store/`` never import a database driver (tests/test_layers.py), and this is
    read before any connection (a manifest, ctx.toml, a message to mask)."""
    return _fallback(address)


def _fallback(address: str) -> dict[str, str]:
    from urllib.parse import unquote, urlsplit

    out: dict[str, str] = {}
    if re.match(r"^postgres(?:ql)?://", address, re.I):
        u = urlsplit(address)
        # postgresql://[user[:password]@][host[:port][,host[:port]...]][/dbname][?key=value&...]
        auth, _, hosts = u.netloc.rpartition("@")
        if auth:
            user, colon, pw = auth.partition(":")
            if user:
                out["user"] = unquote(user)
            if colon:
                out["password"] = unquote(pw)
        names, ports = [], []
        for h in (x for x in hosts.split(",") if x):
            m = re.match(r"^(\[[^\]]*\]|[^:]*)(?::(\d*))?$", h)
            if m:
                names.append(unquote(m[1].strip("[]")))
                ports.append(m[2] or "")
        if any(names):
            out["host"] = ",".join(names)
        if any(ports):
            out["port"] = ",".join(ports)
        if u.path.strip("/"):
            out["dbname"] = unquote(u.path[1:])
        for part in u.query.split("&"):
            if "=" in part:
                k, v = part.split("=", 1)
                out[unquote(k).strip().lower()] = unquote(v)
        return out
    for m in re.finditer(r"(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)", address):
        out[m[1].lower()] = m[2].strip("'")
    return out


def secret_keys(address: str) -> list[str]:
    """The secret parameters (password, passfile, sslpassword) an address holds, however spelled."""
    info = conninfo(address)
    found = {k for k in SECRET_KEYS if info.get(k)}
    found |= {_decoded(m["key"]) for m in _QUERY.finditer(address)} & set(SECRET_KEYS)
    if _PW_URL.search(address) and _PW_URL.search(address)["pw"]:
        found.add("password")
    return sorted(found)


def password_of(address: str) -> str | None:
    pw = conninfo(address).get("password")
    if pw:
        return pw
    m = _PW_URL.search(address)
    if m and m["pw"]:
        from urllib.parse import unquote

        return unquote(m["pw"])
    m = _PW_KV.search(address)
    return m["pw"].strip("'") if m and m["pw"] else None
