"""The model adapter: one chat-completions call to any OpenAI-compatible endpoint (httpx).

Configuration comes from flags, then the environment (``CTX_MODEL``, ``CTX_MODEL_ENDPOINT``,
``CTX_MODEL_API_KEY``), then the ``[model]`` table of ``ctx.toml`` under the project root.
The API key is sent only in the ``Authorization`` header: it is never part of a message,
an error, a record or a file (every error text is scrubbed of it as a last guard).

Retries: a 429 or 5xx answer, or a refused connection, is retried up to ``max_retries``
times with exponential backoff (``Retry-After`` honoured, capped); a timeout is not retried.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from ..errors import ModelAuthError, ModelEndpointError, UsageError

CONFIG_FILE = "ctx.toml"
_CONFIG_KEYS = {"endpoint", "model", "api_key_env", "timeout", "max_retries", "backoff", "temperature",
                "max_tokens", "response_format"}
RESPONSE_FORMATS = ("auto", "json_schema", "none")
MAX_BACKOFF_S = 30.0
_SLEEP: Callable[[float], None] = time.sleep     # the backoff sleeper (tests inject a recorder)


@dataclass
class ModelConfig:
    endpoint: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0
    max_retries: int = 2
    backoff: float = 1.0
    temperature: float = 0.0
    max_tokens: int | None = None
    response_format: str = "auto"

    @property
    def url(self) -> str:
        base = self.endpoint.rstrip("/")
        if base.endswith("/chat/completions"):
            return base
        if base.endswith("/v1"):
            base = base[:-3]
        return base + "/v1/chat/completions"

    @property
    def host(self) -> str:
        """scheme://host[:port] of the endpoint: what records and messages show (no path, no credentials)."""
        u = urlsplit(self.endpoint)
        host = u.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        return f"{u.scheme}://{host}" + (f":{u.port}" if u.port else "")

    def parameters(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens, "timeout_s": self.timeout,
                "max_retries": self.max_retries, "response_format": self.response_format}


def _read_config_file(root: Path) -> dict[str, Any]:
    p = root / CONFIG_FILE
    if not p.is_file():
        return {}
    import tomllib

    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as e:
        raise UsageError(f"{CONFIG_FILE}: not valid TOML ({e})") from None
    sect = data.get("model", {})
    if not isinstance(sect, dict):
        raise UsageError(f"{CONFIG_FILE}: [model] must be a table")
    if "api_key" in sect:
        raise UsageError(f"{CONFIG_FILE}: model.api_key: keys do not belong in project files; set CTX_MODEL_API_KEY "
                         "or name a variable with api_key_env")
    bad = sorted(set(sect) - _CONFIG_KEYS)
    if bad:
        raise UsageError(f"{CONFIG_FILE}: model.{bad[0]}: unknown setting (known: {', '.join(sorted(_CONFIG_KEYS))})")
    return sect


def resolve_config(*, endpoint: str | None = None, model: str | None = None, timeout: float | None = None,
                   max_retries: int | None = None, root: Path | None = None,
                   env: dict[str, str] | None = None) -> ModelConfig:
    """Flags, then environment, then ctx.toml [model]; a missing endpoint or model is a usage error."""
    from .. import paths

    env = os.environ if env is None else env
    f = _read_config_file(root or paths.root())
    ep = endpoint or env.get("CTX_MODEL_ENDPOINT") or f.get("endpoint")
    name = model or env.get("CTX_MODEL") or f.get("model")
    if not ep:
        raise UsageError("no model endpoint: give --endpoint, set CTX_MODEL_ENDPOINT, or add endpoint to "
                         f"[model] in {CONFIG_FILE}")
    if not name:
        raise UsageError(f"no model name: give --model, set CTX_MODEL, or add model to [model] in {CONFIG_FILE}")
    u = urlsplit(str(ep))
    if u.scheme not in ("http", "https") or not u.hostname:
        raise UsageError(f"--endpoint {_safe_url(str(ep))!r} is not an http(s) URL")
    if u.username or u.password or u.query:
        raise UsageError("--endpoint: give the key in CTX_MODEL_API_KEY, not in the URL")
    key = env.get("CTX_MODEL_API_KEY")
    if not key and f.get("api_key_env"):
        key = env.get(str(f["api_key_env"]))
    for k in ("endpoint", "model", "api_key_env", "response_format"):
        if k in f and not isinstance(f[k], str):
            raise UsageError(f"{CONFIG_FILE}: model.{k}: must be a string")
    cfg = ModelConfig(
        endpoint=str(ep), model=str(name), api_key=key or None,
        timeout=float(timeout) if timeout is not None else _setting(f, "timeout", 60.0, 0, 3600),
        max_retries=int(max_retries) if max_retries is not None else int(_setting(f, "max_retries", 2, 0, 10, True)),
        backoff=_setting(f, "backoff", 1.0, 0, int(MAX_BACKOFF_S)), temperature=_setting(f, "temperature", 0.0, 0, 2),
        max_tokens=int(_setting(f, "max_tokens", None, 1, 1_000_000, True)) if f.get("max_tokens") is not None else None,
        response_format=str(f.get("response_format", "auto")))
    if cfg.response_format not in RESPONSE_FORMATS:
        raise UsageError(f"{CONFIG_FILE}: model.response_format: one of {', '.join(RESPONSE_FORMATS)}")
    if not (0 < cfg.timeout <= 3600) or not (0 <= cfg.max_retries <= 10):
        raise UsageError("timeout must be in (0, 3600] seconds and max_retries in [0, 10]")
    return cfg


def _setting(f: dict[str, Any], name: str, default: Any, lo: float, hi: float, integer: bool = False) -> Any:
    """The number ``name`` of ctx.toml [model] (``default`` when absent), checked: a number
    (not a boolean), an integer when ``integer``, finite and within [lo, hi]."""
    if name not in f:
        return default
    v = f[name]
    kind = "an integer" if integer else "a number"
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
        raise UsageError(f"{CONFIG_FILE}: model.{name}: must be {kind} from {lo} to {hi}, got {type(v).__name__}")
    if not (lo <= v <= hi):          # NaN fails both comparisons, so it is refused too
        raise UsageError(f"{CONFIG_FILE}: model.{name}: must be {kind} from {lo} to {hi}, got {v!r}")
    return v if integer else float(v)


def _safe_url(u: str) -> str:
    s = urlsplit(u)
    return f"{s.scheme}://{s.hostname or ''}" if s.scheme else u[:60]


@dataclass
class Exchange:
    """One completed chat-completions exchange (what model.json records)."""

    status_code: int
    body: Any                      # the parsed response JSON
    content: str | None            # choices[0].message.content
    usage: dict[str, Any]
    latency_ms: float
    attempts: list[dict[str, Any]]
    response_format_used: str      # json_schema | none


def _scrub(text: str, key: str | None) -> str:
    if key:
        text = text.replace(key, "***")
    return text


def chat(cfg: ModelConfig, messages: list[dict[str, str]], schema: dict[str, Any] | None = None, *,
         sleep: Callable[[float], None] | None = None, clock: Callable[[], float] = time.monotonic,
         transport=None) -> Exchange:
    """POST the messages; return the exchange or raise ModelEndpointError / ModelAuthError."""
    import httpx

    sleep = sleep or _SLEEP
    use_schema = schema is not None and cfg.response_format in ("auto", "json_schema")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    attempts: list[dict[str, Any]] = []
    retries = 0
    t_all = clock()
    try:
        # proxy variables apply to remote endpoints, never to a server on this machine
        local = (urlsplit(cfg.endpoint).hostname or "") in ("127.0.0.1", "localhost", "::1")
        client = httpx.Client(timeout=httpx.Timeout(cfg.timeout), transport=transport, follow_redirects=False,
                              trust_env=not local)
    except Exception as e:  # pragma: no cover - httpx misconfiguration
        raise ModelEndpointError(f"model endpoint {cfg.host}: {_scrub(str(e), cfg.api_key)}") from None
    with client:
        while True:
            payload: dict[str, Any] = {"model": cfg.model, "messages": messages, "temperature": cfg.temperature}
            if cfg.max_tokens is not None:
                payload["max_tokens"] = cfg.max_tokens
            if use_schema:
                payload["response_format"] = {"type": "json_schema",
                                              "json_schema": {"name": "ctx_answer", "strict": True, "schema": schema}}
            t0 = clock()
            try:
                resp = client.post(cfg.url, json=payload, headers=headers)
            except httpx.TimeoutException:
                raise ModelEndpointError(f"model endpoint {cfg.host} timed out after {cfg.timeout:g} s "
                                         f"(attempt {len(attempts) + 1})") from None
            except httpx.HTTPError as e:
                attempts.append({"status": None, "latency_ms": round((clock() - t0) * 1000, 1),
                                 "error": "unreachable"})
                if retries < cfg.max_retries:
                    sleep(min(MAX_BACKOFF_S, cfg.backoff * 2 ** retries))
                    retries += 1
                    continue
                raise ModelEndpointError(f"model endpoint {cfg.host} is unreachable "
                                         f"({_scrub(type(e).__name__ + ': ' + str(e), cfg.api_key)}) "
                                         f"after {len(attempts)} attempt(s)") from None
            lat = round((clock() - t0) * 1000, 1)
            code = resp.status_code
            attempts.append({"status": code, "latency_ms": lat})
            if code in (401, 403):
                raise ModelAuthError(f"model endpoint {cfg.host} refused the credentials (HTTP {code}); "
                                     "check CTX_MODEL_API_KEY")
            if code == 429 or code >= 500:
                if retries < cfg.max_retries:
                    sleep(_retry_after(resp, cfg.backoff * 2 ** retries))
                    retries += 1
                    continue
                raise ModelEndpointError(f"model endpoint {cfg.host} answered HTTP {code} after "
                                         f"{len(attempts)} attempt(s)")
            if code in (400, 422) and use_schema and cfg.response_format == "auto":
                # the server does not take a JSON-schema response format: ask again for fenced JSON
                attempts[-1]["note"] = "response_format rejected; retrying without it"
                use_schema = False
                continue
            if code >= 400:
                raise ModelEndpointError(f"model endpoint {cfg.host} answered HTTP {code}"
                                         + _error_hint(resp, cfg.api_key))
            try:
                body = resp.json()
            except ValueError:
                raise ModelEndpointError(f"model endpoint {cfg.host} answered non-JSON "
                                         f"({resp.headers.get('content-type', 'no content type')})") from None
            content = None
            if isinstance(body, dict):
                ch = body.get("choices")
                if isinstance(ch, list) and ch and isinstance(ch[0], dict):
                    msg = ch[0].get("message")
                    if isinstance(msg, dict) and isinstance(msg.get("content"), str):
                        content = msg["content"]
            usage = body.get("usage") if isinstance(body, dict) and isinstance(body.get("usage"), dict) else {}
            return Exchange(status_code=code, body=body, content=content, usage=usage,
                            latency_ms=round((clock() - t_all) * 1000, 1), attempts=attempts,
                            response_format_used="json_schema" if use_schema else "none")


def _retry_after(resp, default: float) -> float:
    ra = resp.headers.get("retry-after")
    try:
        v = float(ra) if ra is not None else default
    except ValueError:
        v = default
    return max(0.0, min(MAX_BACKOFF_S, v))


def _error_hint(resp, key: str | None) -> str:
    try:
        body = resp.json()
        msg = body.get("error", {}).get("message") if isinstance(body, dict) else None
    except ValueError:
        msg = None
    if isinstance(msg, str) and msg:
        return ": " + _scrub(msg, key)[:200]
    return ""


# ---------------------------------------------------------------------------------- parsing
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n?```", re.S)


def parse_content(content: str | None) -> tuple[Any, str | None, str | None]:
    """(answer, method, error): the JSON object in the model's reply, as a whole or in a fenced
    ```json block. An unparseable reply gives (None, None, reason), never an exception."""
    import json

    if content is None:
        return None, None, "the response has no choices[0].message.content"
    text = content.strip()
    try:
        return json.loads(text), "json", None
    except ValueError:
        pass
    for m in _FENCE.finditer(content):
        try:
            return json.loads(m.group(1)), "fenced", None
        except ValueError:
            continue
    return None, None, "the reply is neither a JSON object nor a fenced ```json block"
