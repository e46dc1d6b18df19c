"""``ctx serve --transport http``: who may connect.

On a loopback address (127.0.0.0/8, ::1, localhost) the server needs no token, and only the
loopback Host names are accepted (DNS-rebinding protection). On any other address it refuses
to start without a bearer token (``--auth-token`` or ``$CTX_SERVE_TOKEN``): every request must
then carry ``Authorization: Bearer <token>`` (401 otherwise), and its Host header must be one of
the allowed hosts (421 otherwise) — the address itself, and each ``--allowed-host``. A token
given on a loopback address is required just the same.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass

from ..errors import UsageError

TOKEN_ENV = "CTX_SERVE_TOKEN"
MIN_TOKEN_CHARS = 32
_LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]


@dataclass(frozen=True)
class HttpSettings:
    host: str
    port: int
    token: str | None
    allowed_hosts: tuple[str, ...]       # Host header values (``name:*`` = any port)
    allowed_origins: tuple[str, ...]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def http_settings(host: str, port: int, token: str | None, allowed: list[str]) -> HttpSettings:
    """Check ``--host``, the token and ``--allowed-host`` before the server listens; UsageError
    (exit 2) naming the flag otherwise."""
    if token is not None and (len(token) < MIN_TOKEN_CHARS or not token.isascii() or not token.isprintable()
                              or " " in token):
        raise UsageError(f"--auth-token: a token needs at least {MIN_TOKEN_CHARS} printable ASCII characters "
                         f"without spaces (e.g. the output of `openssl rand -hex 32`)")
    for h in allowed:
        if not h or any(c in h for c in "/ \t@\\") or not h.isascii():
            raise UsageError(f"--allowed-host {h!r} is not a host name (give NAME or NAME:PORT)")
    loopback = is_loopback(host)
    if not loopback and token is None:
        raise UsageError(f"--host {host} is not a loopback address: give a bearer token with --auth-token or "
                         f"${TOKEN_ENV} so that every caller must authenticate")
    if loopback:
        hosts = list(_LOOPBACK_HOSTS)
    elif _unspecified(host):
        if not allowed:
            raise UsageError(f"--host {host} listens on every address: name the host names callers use with "
                             f"--allowed-host (Host-header protection)")
        hosts = []
    else:
        name = f"[{host.strip('[]')}]" if ":" in host else host
        hosts = [f"{name}:{port}", name]
    for h in allowed:
        hosts += [h] if ":" in h.rsplit("]", 1)[-1] else [h, f"{h}:{port}"]
    hosts = list(dict.fromkeys(hosts))
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return HttpSettings(host=host, port=port, token=token, allowed_hosts=tuple(hosts), allowed_origins=tuple(origins))


class BearerTokenMiddleware:
    """Every HTTP request must carry ``Authorization: Bearer <token>``; 401 otherwise."""

    def __init__(self, app, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode("ascii")

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http":
            got = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(got, self._expected):
                body = b'{"error": "unauthorized: send Authorization: Bearer <token>"}'
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"),
                                        (b"www-authenticate", b'Bearer realm="ctx"'),
                                        (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(srv, settings: HttpSettings):
    """The streamable-HTTP app of ``srv`` at /mcp, with Host/Origin checks always on and the
    bearer-token check when a token is set."""
    from mcp.server.transport_security import TransportSecuritySettings

    security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=list(settings.allowed_hosts),
                                         allowed_origins=list(settings.allowed_origins))
    app = srv.streamable_http_app(transport_security=security, host=settings.host)
    return BearerTokenMiddleware(app, settings.token) if settings.token is not None else app


def run_http(srv, settings: HttpSettings) -> None:
    import anyio
    import uvicorn

    app = http_app(srv, settings)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning")
    anyio.run(uvicorn.Server(config).serve)
