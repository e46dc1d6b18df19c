"""The model adapter: one chat-completions call to any OpenAI-compatible endpoint (httpx).

Configuration comes from flags, then the environment (``CTX_MODEL``, ``CTX_MODEL_ENDPOINT``,
``CTX_MODEL_API_KEY``), then the ``[model]`` table of ``ctx.toml`` under the project root.
The API key is sent only in the ``Authorization`` header: it is never part of a message,
an error, a record or a file (every error text is scrubbed of it, and of partial, base64
and hex echoes of it, as a last guard).

Retries: a 429 or 5xx answer, or a refused connection, is retried up to ``max_retries``
times with exponential backoff (``Retry-After`` honoured, capped); a timeout is not retried.
``timeout`` is the wall time of the whole call (attempts, every byte, backoff); a response
over ``max_response_bytes`` is refused as it arrives; JSON is read strictly and at most 64 deep.
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
                "max_tokens", "response_format", "max_response_bytes"}
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
    max_response_bytes: int = 4 * 1024 * 1024

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
                "max_retries": self.max_retries, "response_format": self.response_format,
                "max_response_bytes": self.max_response_bytes}


def _read_config_file(root: Path) -> dict[str, Any]:
    from ..paths import toml_table

    sect = toml_table("model", root)
    if "api_key" in sect:
        raise UsageError(f"{CONFIG_FILE}: model.api_key: keys do not belong in project files; set CTX_MODEL_API_KEY "
                         "or name a variable with api_key_env")
    bad = sorted(set(sect) - _CONFIG_KEYS)
    if bad:
        raise UsageError(f"{CONFIG_FILE}: model.{bad[0]}: unknown setting (known: {', '.join(sorted(_CONFIG_KEYS))})")
    return sect


def resolve_config(*, endpoint: str | None = None, model: str | None = None, timeout: float | None = None,
                   max_retries: int | None = None, root: Path | None = None,
                   env: dict[str, str] | None = None, what: str | None = None) -> ModelConfig:
    """Flags, then environment, then ctx.toml [model]; a missing endpoint or model is a usage error.
    ``what`` names the command for messages (``--re-ask``: whose endpoint never comes from a run folder)."""
    from .. import paths

    env = os.environ if env is None else env
    f = _read_config_file(root or paths.root())
    ep = endpoint or env.get("CTX_MODEL_ENDPOINT") or f.get("endpoint")
    name = model or env.get("CTX_MODEL") or f.get("model")
    if not ep:
        pre = f"{what}: " if what else ""
        post = " (the endpoint a run folder records is never used)" if what else ""
        raise UsageError(f"{pre}no model endpoint: give --endpoint, set CTX_MODEL_ENDPOINT, or add endpoint to "
                         f"[model] in {CONFIG_FILE}{post}")
    if not name:
        raise UsageError(f"no model name: give --model, set CTX_MODEL, or add model to [model] in {CONFIG_FILE}")
    check_endpoint(str(ep))
    key, key_var = env.get("CTX_MODEL_API_KEY"), "CTX_MODEL_API_KEY"
    if not key and f.get("api_key_env"):
        key_var = str(f["api_key_env"])
        key = env.get(key_var)
    key = check_key(key, key_var)
    for k in ("endpoint", "model", "api_key_env", "response_format"):
        if k in f and not isinstance(f[k], str):
            raise UsageError(f"{CONFIG_FILE}: model.{k}: must be a string")
    cfg = ModelConfig(
        endpoint=str(ep), model=str(name), api_key=key or None,
        timeout=float(timeout) if timeout is not None else _setting(f, "timeout", 60.0, 0, 3600),
        max_retries=int(max_retries) if max_retries is not None else int(_setting(f, "max_retries", 2, 0, 10, True)),
        backoff=_setting(f, "backoff", 1.0, 0, int(MAX_BACKOFF_S)), temperature=_setting(f, "temperature", 0.0, 0, 2),
        max_tokens=int(_setting(f, "max_tokens", None, 1, 1_000_000, True)) if f.get("max_tokens") is not None else None,
        response_format=str(f.get("response_format", "auto")),
        max_response_bytes=_positive_int(f.get("max_response_bytes", 4 * 1024 * 1024), "max_response_bytes"))
    if cfg.response_format not in RESPONSE_FORMATS:
        raise UsageError(f"{CONFIG_FILE}: model.response_format: one of {', '.join(RESPONSE_FORMATS)}")
    if not (0 < cfg.timeout <= 3600) or not (0 <= cfg.max_retries <= 10):
        raise UsageError("timeout must be in (0, 3600] seconds and max_retries in [0, 10]")
    return cfg


def check_endpoint(ep: str) -> None:
    """An http(s) URL with a host, a port in 1-65535 (or none), no credentials and no query."""
    try:
        u = urlsplit(ep)
        host = u.hostname
    except ValueError as e:             # "Invalid IPv6 URL", a bracket left open
        raise UsageError(f"--endpoint {_safe_url(ep)!r} is not a valid URL ({e})") from None
    if u.scheme not in ("http", "https") or not host:
        raise UsageError(f"--endpoint {_safe_url(ep)!r} is not an http(s) URL")
    try:
        port = u.port
    except ValueError:
        port = 0
    if port == 0 or (port is None and u.netloc.rstrip("]").endswith(":")):
        raise UsageError(f"--endpoint {_safe_url(ep)!r}: the port must be a number in 1-65535")
    if u.username or u.password or u.query:
        raise UsageError("--endpoint: give the key in CTX_MODEL_API_KEY, not in the URL")


def check_key(key: str | None, var: str) -> str | None:
    """The key without surrounding white space (a trailing CR/LF from a file); one line naming the
    variable, never the key, when it holds anything an HTTP header cannot carry."""
    if key is None:
        return None
    key = key.strip(" \t\r\n")
    for i, ch in enumerate(key):
        if not ("\x21" <= ch <= "\x7e"):
            kind = "a non-ASCII character" if ord(ch) > 127 else "a space or control character"
            raise UsageError(f"{var}: the API key holds {kind} at position {i + 1}; an HTTP header cannot "
                             "carry it (the key is not shown)")
    return key or None


def _positive_int(v: Any, name: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not (1024 <= v <= 1024 ** 3):
        raise UsageError(f"{CONFIG_FILE}: model.{name}: an integer number of bytes in [1024, 1073741824]")
    return v


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
    try:
        s = urlsplit(u)
        return f"{s.scheme}://{s.hostname or ''}" if s.scheme and s.hostname else u.split("@")[-1][:60]
    except ValueError:
        return u.split("@")[-1][:60]


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


def secret_forms(key: str | None) -> list[str]:
    """Every form of the key a server might echo: the key, its base64 (standard and URL-safe, at
    each of the three byte alignments inside a longer blob) and its hex; longest first."""
    if not key:
        return []
    import base64

    raw = key.encode("utf-8")
    forms = {key, raw.hex()}
    for off in range(3):
        bits = (off + len(raw)) * 8
        first, last = -(-off * 8 // 6), bits // 6          # chars made of key bits only
        for enc in (base64.b64encode, base64.urlsafe_b64encode):
            chunk = enc(b"\0" * off + raw).decode("ascii")[first:last]
            if len(chunk) >= 8:
                forms.add(chunk)
    return sorted(forms, key=len, reverse=True)


PARTIAL_ECHO = 8      # this many consecutive characters of the key count as an echo of it


def scrub(text: str, key: str | None) -> str:
    """``text`` with every echo of the key replaced by ``***``: the key itself, any run of at least
    8 consecutive characters of it (a server quoting part of it), and its base64 and hex forms."""
    if not key or not text:
        return text
    for form in secret_forms(key):
        text = text.replace(form, "***")
    n = PARTIAL_ECHO
    if len(key) < n or len(text) < n:
        return text
    marks = bytearray(len(text))
    for i in range(len(key) - n + 1):
        w = key[i:i + n]
        j = text.find(w)
        while j != -1:
            marks[j:j + n] = b"\1" * n
            j = text.find(w, j + 1)
    if not any(marks):
        return text
    out, i = [], 0
    while i < len(text):
        if marks[i]:
            while i < len(text) and marks[i]:
                i += 1
            out.append("***")
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


MAX_DEPTH = 64       # JSON nesting ctx reads from an endpoint or a model reply


def too_deep(obj: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether parsed JSON nests deeper than ``limit`` (iterative: no recursion)."""
    stack = [(obj, 1)]
    while stack:
        x, d = stack.pop()
        if isinstance(x, (dict, list)):
            if d > limit:
                return True
            stack.extend((v, d + 1) for v in (x.values() if isinstance(x, dict) else x))
    return False


def loads_bounded(raw: bytes | str) -> tuple[Any, str | None]:
    """(value, None) or (None, why): strict JSON (no duplicate key, integers within 64 bits)
    nested at most 64 deep. Never raises for bad input."""
    import orjson

    from ..util import jsonstrict

    try:
        obj = jsonstrict.loads(raw)
    except orjson.JSONDecodeError as e:
        return None, f"not valid JSON ({str(e).splitlines()[0]})"
    except jsonstrict.StrictJSONError as e:
        return None, str(e)
    except (RecursionError, MemoryError):
        return None, "JSON too large or too deeply nested"
    if too_deep(obj):
        return None, f"JSON nested deeper than {MAX_DEPTH} levels"
    return obj, None


class _Timeout(Exception):
    pass


class _TooLarge(Exception):
    pass


class _Reply:
    """What one attempt got: status, headers and the body bytes (read in full, within the caps)."""

    def __init__(self, status_code: int, headers, body: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        obj, why = loads_bounded(self.body)
        if why is not None:
            raise ValueError(why)
        return obj


async def _post(cfg: ModelConfig, payload: dict[str, Any], headers: dict[str, str], remaining: float,
                transport, local: bool) -> _Reply:
    """One POST, bounded by ``remaining`` seconds of wall time in all (connect, headers, every byte
    of the body) and by ``cfg.max_response_bytes``."""
    import asyncio

    import httpx

    async def attempt() -> _Reply:
        async with httpx.AsyncClient(timeout=httpx.Timeout(remaining), transport=transport,
                                     follow_redirects=False, trust_env=not local) as client:
            async with client.stream("POST", cfg.url, json=payload, headers=headers) as resp:
                cap = cfg.max_response_bytes
                try:
                    declared = int(resp.headers.get("content-length") or 0)
                except ValueError:
                    declared = 0
                if declared > cap:
                    raise _TooLarge()
                chunks, total = [], 0
                async for b in resp.aiter_raw():
                    total += len(b)
                    if total > cap:
                        raise _TooLarge()
                    chunks.append(b)
                # raw bytes: a compressed body is not inflated (it reads as non-JSON), so the cap holds
                return _Reply(resp.status_code, resp.headers, b"".join(chunks))

    try:
        return await asyncio.wait_for(attempt(), timeout=remaining)
    except (asyncio.TimeoutError, httpx.TimeoutException):
        raise _Timeout() from None


def chat(cfg: ModelConfig, messages: list[dict[str, str]], schema: dict[str, Any] | None = None, *,
         sleep: Callable[[float], None] | None = None, clock: Callable[[], float] = time.monotonic,
         transport=None) -> Exchange:
    """POST the messages; return the exchange or raise ModelEndpointError / ModelAuthError.

    ``cfg.timeout`` is the wall time of the whole call: every attempt, every byte of every
    response and the backoff between attempts; a response over ``cfg.max_response_bytes`` is
    refused as it arrives."""
    import asyncio

    import httpx

    sleep = sleep or _SLEEP
    use_schema = schema is not None and cfg.response_format in ("auto", "json_schema")
    headers = {"Content-Type": "application/json", "Accept": "application/json", "Accept-Encoding": "identity"}
    if cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    attempts: list[dict[str, Any]] = []
    retries = 0
    t_all = clock()
    deadline = t_all + cfg.timeout
    # proxy variables apply to remote endpoints, never to a server on this machine
    local = (urlsplit(cfg.endpoint).hostname or "") in ("127.0.0.1", "localhost", "::1")

    def timed_out() -> ModelEndpointError:
        return ModelEndpointError(f"model endpoint {cfg.host} timed out after {cfg.timeout:g} s "
                                  f"(attempt {len(attempts) + 1})")

    def backoff(seconds: float) -> None:
        if clock() + seconds >= deadline:
            raise timed_out()
        sleep(seconds)

    while True:
        payload: dict[str, Any] = {"model": cfg.model, "messages": messages, "temperature": cfg.temperature}
        if cfg.max_tokens is not None:
            payload["max_tokens"] = cfg.max_tokens
        if use_schema:
            payload["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": "ctx_answer", "strict": True, "schema": schema}}
        t0 = clock()
        remaining = deadline - t0
        if remaining <= 0:
            raise timed_out()
        try:
            resp = asyncio.run(_post(cfg, payload, headers, remaining, transport, local))
        except _Timeout:
            raise timed_out() from None
        except _TooLarge:
            raise ModelEndpointError(f"model endpoint {cfg.host} sent a response larger than "
                                     f"{_mb(cfg.max_response_bytes)} (max_response_bytes in [model] of "
                                     f"{CONFIG_FILE})") from None
        except (httpx.HTTPError, OSError, ValueError) as e:
            attempts.append({"status": None, "latency_ms": round((clock() - t0) * 1000, 1),
                             "error": "unreachable"})
            if retries < cfg.max_retries:
                backoff(min(MAX_BACKOFF_S, cfg.backoff * 2 ** retries))
                retries += 1
                continue
            raise ModelEndpointError(f"model endpoint {cfg.host} is unreachable "
                                     f"({scrub(type(e).__name__ + ': ' + str(e), cfg.api_key)}) "
                                     f"after {len(attempts)} attempt(s)") from None
        lat = round((clock() - t0) * 1000, 1)
        code = resp.status_code
        attempts.append({"status": code, "latency_ms": lat})
        if code in (401, 403):
            raise ModelAuthError(f"model endpoint {cfg.host} refused the credentials (HTTP {code}); "
                                 "check CTX_MODEL_API_KEY")
        if code == 429 or code >= 500:
            if retries < cfg.max_retries:
                backoff(_retry_after(resp, cfg.backoff * 2 ** retries))
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
        body, why = loads_bounded(resp.body)
        if why is not None:
            ctype = scrub(str(resp.headers.get("content-type", "no content type")), cfg.api_key)
            what = "non-JSON" if why.startswith("not valid JSON") else f"unusable JSON: {why}"
            raise ModelEndpointError(f"model endpoint {cfg.host} answered {what} ({ctype})"[:300])
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


def _mb(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB" if n >= 1024 * 1024 else f"{n} bytes"


def _retry_after(resp, default: float) -> float:
    ra = resp.headers.get("retry-after")
    try:
        v = float(ra) if ra is not None else default
    except ValueError:
        v = default
    if v != v:     # NaN
        v = default
    return max(0.0, min(MAX_BACKOFF_S, v))


def _error_hint(resp, key: str | None) -> str:
    try:
        body = resp.json()
        msg = body.get("error", {}).get("message") if isinstance(body, dict) else None
        msg = msg if isinstance(msg, str) else None
    except (ValueError, AttributeError):
        msg = None
    if isinstance(msg, str) and msg:
        return ": " + scrub(msg, key)[:200]
    return ""


# ---------------------------------------------------------------------------------- parsing
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n?```", re.S)


def parse_content(content: str | None) -> tuple[Any, str | None, str | None]:
    """(answer, method, error): the JSON object in the model's reply, as a whole or in a fenced
    ```json block. An unparseable reply gives (None, None, reason), never an exception."""
    if content is None:
        return None, None, "the response has no choices[0].message.content"
    text = content.strip()
    obj, why = loads_bounded(text)
    if why is None:
        return obj, "json", None
    if not why.startswith("not valid JSON"):
        return None, None, f"the reply is {why}"
    for m in _FENCE.finditer(content):
        obj, why = loads_bounded(m.group(1))
        if why is None:
            return obj, "fenced", None
        if not why.startswith("not valid JSON"):
            return None, None, f"the fenced block is {why}"
    return None, None, "the reply is neither a JSON object nor a fenced ```json block"
