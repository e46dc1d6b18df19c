"""The live API channel: sources with ``parser: api`` are asked per investigation.

A load registers such a source and reads none of its records (load/parsers/api.py). An
investigation whose knowledge cutoff (the earlier of as_of and known_at) is not before the
fetch asks each API source the subject may use (its tenant, scopes, purpose, clearance; a
source it may not use is never asked) with each request template whose parameters the
investigation gives; every record of a response becomes a tool result labelled by the
manifest — its tenant (or the record's, under ``mapping.tenant_id``), scopes, purposes, trust,
``freshness.max_age`` — observed at the fetch, and goes through the tool-result gates like any
other (agents/tool_results.py). The pack records each request (URL without credentials, the
response's sha256 and size, or why it failed or was not made) in ``live_requests``; a replay
uses the pack's recorded items (offline) and ``ctx replay --live`` asks again and says what
changed.

Nothing here follows a redirect or a proxy; the host must be listed in ctx.toml::

    [live]
    allowed_hosts = ["127.0.0.1:8765", "tickets.example.com"]   # host[:port]; no port: the scheme's

A credential (``api.auth_env``) is read from the environment at the request and sent as a
bearer token; it is never written anywhere, and the response cache is keyed by its keyed
digest, never by it.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote, urlsplit

from .errors import InputError, UsageError

LIVE_TABLE = "live"
_LIVE_KEYS = {"allowed_hosts"}
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass
class LiveFetch:
    """What the live channel fetched for one investigation: tool results to gate, and the record
    of every request (made, failed or not made) for ``pack.live_requests``."""

    results: list[Any] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def warnings(self) -> list[str]:
        """One line per failed request (what a user is told on stderr)."""
        return [f"live request {r['source_id']}/{r['request']} failed: {r['error']}"
                for r in self.requests if r["status"] == "failed"]


def allowed_hosts(folder: Path | None = None) -> set[str]:
    """ctx.toml ``[live] allowed_hosts``, each as ``host:port`` (lower case; a bare host takes
    80 and 443). A bad value is a usage error naming the setting."""
    from .paths import PROJECT_FILE, toml_table

    sect = toml_table(LIVE_TABLE, folder)
    bad = sorted(set(sect) - _LIVE_KEYS)
    if bad:
        raise UsageError(f"{PROJECT_FILE}: live.{bad[0]}: unknown setting (known: allowed_hosts)")
    hosts = sect.get("allowed_hosts", [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) and h.strip() and "/" not in h for h in hosts):
        raise UsageError(f"{PROJECT_FILE}: live.allowed_hosts: must be a list of host or host:port strings")
    out: set[str] = set()
    for h in hosts:
        h = h.strip().lower()
        if ":" in h.rsplit("]", 1)[-1]:
            out.add(h)
        else:
            out.update(f"{h}:{p}" for p in DEFAULT_PORTS.values())
    return out


def host_port(url: str) -> str:
    """``host:port`` of an http(s) URL, lower case, the scheme's port when none is given."""
    u = urlsplit(url)
    port = u.port or DEFAULT_PORTS[u.scheme]
    host = u.hostname or ""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def api_sources(mdir: Path) -> list[tuple[Any, str]]:
    """(manifest, file shown) of every ``parser: api`` source in the manifests folder ``mdir``
    (for ``ctx replay --live``; an investigation takes them from its stale-manifest check)."""
    from .project import read_sources

    return [(m, disp) for m, disp, _ in read_sources(mdir) if m.parser == "api"]


def usable(m, *, tenant: str, scopes: list[str], purpose: str, clearance: str) -> bool:
    """Whether the subject may use the source at all (the source-level access of the evidence
    gates): enabled, its tenant (or per-record tenants), scopes, purpose and clearance."""
    from .models.manifest import clearance_rank

    return (m.enabled and (m.tenant_id is None or m.tenant_id == tenant)
            and set(m.required_scopes) <= set(scopes) and purpose in m.allowed_purposes
            and clearance_rank(m.classification.value) <= clearance_rank(clearance))


def fill_path(template: str, params: dict[str, Any], case_id: str) -> tuple[str | None, str | None]:
    """(the path with the parameters filled in, each percent-encoded; or None and the name of
    the first parameter the investigation does not give)."""
    import re

    missing: list[str] = []

    def one(mt) -> str:
        name = mt.group(1)
        if name == "case_id":
            return quote(case_id, safe="")
        v = params.get(name.split(".", 1)[1])
        if v is None or (isinstance(v, str) and not v):
            missing.append(name)
            return ""
        return quote(str(v), safe="")

    out = re.sub(r"\{([^{}]*)\}", one, template)
    return (None, missing[0]) if missing else (out, None)


class FetchError(Exception):
    """A request that failed: a one-line reason (never the credential, never the body)."""


# url, credential digest -> (fetched at, the response body): responses a process reuses for cache_ttl
_CACHE: dict[tuple[str, str], tuple[datetime, bytes]] = {}
_CACHE_LOCK = threading.Lock()
_CACHE_MAX = 256


def http_get(url: str, *, headers: dict[str, str], timeout: float, max_bytes: int) -> bytes:
    """The body of a GET of ``url`` (status 200 only), at most ``max_bytes``; FetchError
    otherwise. Each socket operation waits at most ``timeout`` seconds and the read stops once
    ``timeout`` has passed since the request (a server that drips bytes is cut off within about
    twice ``timeout``). No proxy, no redirect (a redirect could leave the allowed hosts)."""
    import http.client
    import socket
    import urllib.error
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, hdrs, newurl):
            raise FetchError(f"HTTP {code}: redirect not followed")

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())
    deadline = time.monotonic() + timeout
    try:
        resp = opener.open(urllib.request.Request(url, headers=headers, method="GET"), timeout=timeout)
    except urllib.error.HTTPError as e:
        e.close()
        raise FetchError(f"HTTP {e.code}") from None
    except FetchError:
        raise
    except (socket.timeout, TimeoutError):
        raise FetchError(f"timed out after {timeout:g} s") from None
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            raise FetchError(f"timed out after {timeout:g} s") from None
        raise FetchError(f"cannot connect: {getattr(reason, 'strerror', None) or reason}") from None
    except (OSError, http.client.HTTPException, ValueError) as e:
        raise FetchError(f"cannot connect: {type(e).__name__}") from None
    with resp:
        if resp.status != 200:
            raise FetchError(f"HTTP {resp.status}")
        chunks, size = [], 0
        try:
            while True:
                if time.monotonic() >= deadline:
                    raise FetchError(f"timed out after {timeout:g} s")
                chunk = resp.read1(65536)
                if not chunk:
                    break
                size += len(chunk)
                if size > max_bytes:
                    raise FetchError(f"response larger than max_bytes ({max_bytes})")
                chunks.append(chunk)
        except (socket.timeout, TimeoutError):
            raise FetchError(f"timed out after {timeout:g} s") from None
        except (OSError, http.client.HTTPException) as e:
            raise FetchError(f"the response broke off: {type(e).__name__}") from None
    return b"".join(chunks)


def records_of(body: bytes, selector: str) -> list[dict[str, Any]]:
    """The records of a JSON response at ``selector`` (dotted path; ``$`` the whole): an object
    is one record, a list must hold objects only. FetchError otherwise."""
    import orjson

    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise FetchError("the response is not JSON") from None
    if selector != "$":
        for part in selector.split("."):
            if not isinstance(doc, dict) or part not in doc:
                raise FetchError(f"the response has no {selector}")
            doc = doc[part]
    if isinstance(doc, dict):
        return [doc]
    if isinstance(doc, list) and all(isinstance(r, dict) for r in doc):
        return doc
    raise FetchError(f"{selector} of the response is not an object or a list of objects")


def _fact(v: Any) -> Any:
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    if isinstance(v, list) and all(isinstance(x, (str, int, float, bool)) for x in v):
        return v
    return str(v)


def to_results(m, request, url: str, body: bytes, records: list[dict[str, Any]], *,
               params: dict[str, Any], fetched_at: datetime, disp: str) -> list[Any]:
    """Each record mapped by the manifest's mapping (as a table row is) and labelled by the
    manifest: one tool result per record, its facts the mapped title, text and facts."""
    from .agents.tool_results import LiveOrigin, live_result
    import re

    from pydantic import ValidationError

    from .load.parsers.mapping import Where, apply

    used = set(re.findall(r"\{param\.([a-z0-9_]+)\}", request.path))
    sha = hashlib.sha256(body).hexdigest()
    out = []
    for i, rec in enumerate(records, 1):
        try:
            obj = apply(m.mapping, rec, Where(disp, None, f"record {i} of the response"))
        except InputError as e:
            raise FetchError(e.detail) from None
        facts: dict[str, Any] = {}
        if obj.get("title"):
            facts["title"] = obj["title"]
        if obj.get("body"):
            facts["text"] = obj["body"]
        for k, v in sorted((obj.get("facts") or {}).items()):
            if v is not None:
                facts[k] = _fact(v)
        tenant = obj.get("tenant_id") or m.tenant_id
        oid = obj.get("object_id")
        fields = {"tool": m.source_id, "version": f"{m.parser}/{m.parser_version}", "call_id": request.name,
                  "arguments": {k: str(params[k]) for k in sorted(used)}, "tenant_id": str(tenant),
                  "scopes": list(m.required_scopes), "purposes": list(m.allowed_purposes),
                  "observed_at": fetched_at, "max_age": m.freshness.max_age if m.freshness else None,
                  "raw": {"sha256": sha, "size": len(body), "location": url},
                  "shaped": {"facts": facts, "record_ids": [str(oid)] if oid else [], "limitations": []}}
        vf, vt = (datetime.fromisoformat(obj[k]) if obj.get(k) else None for k in ("valid_from", "valid_to"))
        try:
            out.append(live_result(LiveOrigin(m.source_id, request.name, m.trust_level.value, vf, vt), fields))
        except ValidationError as e:     # a mapped value a tool result cannot hold
            err = e.errors()[0]
            raise FetchError(f"record {i} of the response: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    return out


def request_headers(api, env) -> tuple[dict[str, str], str]:
    """The headers of a request to ``api`` and the keyed digest of its credential ("" without
    one); FetchError when its credential's variable is not set."""
    headers = {"Accept": "application/json", "User-Agent": "ctx-live/1"}
    if not api.auth_env:
        return headers, ""
    token = env.get(api.auth_env)
    if not token:
        raise FetchError(f"environment variable {api.auth_env} is not set")
    headers["Authorization"] = f"Bearer {token}"
    return headers, hashlib.sha256(b"ctx-live-credential\0" + token.encode()).hexdigest()


def refetch(pack: dict[str, Any], sources: list[tuple[Any, str]], *, allowed: set[str],
            environ: dict[str, str] | None = None, get: Callable[..., bytes] = http_get) -> list[dict[str, Any]]:
    """``ctx replay --live``: every response the pack recorded, asked for again (by the URL it
    recorded, with the source's manifest as it is now): ``unchanged`` or ``changed`` (its sha256
    now), or ``failed`` with the reason. The pack itself is never rebuilt from a new response."""
    from .util.timeutil import parse_duration

    env = os.environ if environ is None else environ
    by_id = {m.source_id: (m, disp) for m, disp in sources}
    out: list[dict[str, Any]] = []
    for r in pack.get("live_requests") or []:
        if r.get("status") != "fetched":
            continue
        row = {"source_id": r["source_id"], "request": r["request"], "url": r["url"],
               "recorded_sha256": r["response_sha256"]}
        m, disp = by_id.get(r["source_id"], (None, ""))
        if m is None:
            out.append({**row, "status": "failed", "error": "no API source of this id is declared now"})
            continue
        if host_port(r["url"]) not in allowed or not r["url"].startswith(m.api.base_url.rstrip("/") + "/"):
            raise InputError(f"host {host_port(r['url'])} is not in ctx.toml [live] allowed_hosts, or the "
                             f"recorded URL is not under api.base_url", file=disp, field="api.base_url")
        try:
            headers, _ = request_headers(m.api, env)
            body = get(r["url"], headers=headers, timeout=parse_duration(m.api.timeout, what="api.timeout")
                       .total_seconds(), max_bytes=m.api.max_bytes)
        except FetchError as e:
            out.append({**row, "status": "failed", "error": str(e)})
            continue
        sha = hashlib.sha256(body).hexdigest()
        out.append({**row, "status": "unchanged" if sha == r["response_sha256"] else "changed", "sha256": sha})
    return out


def fetch_live(sources: list[tuple[Any, str]], *, tenant: str, scopes: list[str], purpose: str, clearance: str,
               case_id: str, params: dict[str, Any], cutoff: datetime, now: datetime, allowed: set[str],
               environ: dict[str, str] | None = None, get: Callable[..., bytes] = http_get) -> LiveFetch:
    """Ask every usable API source (sorted by id) with each of its request templates, in
    order. ``now``: the fetch time every record is observed at; ``cutoff``: the investigation's
    knowledge cutoff — before ``now``, no request is made (a record fetched now was not known
    then). A host not in ``allowed`` is an InputError naming the manifest; any other failure
    is recorded (``status: failed``) and the investigation goes on without that response."""
    from .util.timeutil import parse_duration

    env = os.environ if environ is None else environ
    live = LiveFetch()
    for m, disp in sorted(sources, key=lambda s: s[0].source_id):
        if not usable(m, tenant=tenant, scopes=scopes, purpose=purpose, clearance=clearance):
            continue        # never asked, never named: the subject may not use it (source_discovered says why)
        api = m.api
        if host_port(api.base_url) not in allowed:
            raise InputError(f"host {host_port(api.base_url)} is not in ctx.toml [live] allowed_hosts",
                             file=disp, field="api.base_url")
        ttl = parse_duration(api.cache_ttl, what="api.cache_ttl")
        timeout = parse_duration(api.timeout, what="api.timeout").total_seconds()
        for request in api.requests:
            rec: dict[str, Any] = {"source_id": m.source_id, "request": request.name}
            path, missing = fill_path(request.path, params, case_id)
            if path is None:
                live.requests.append({**rec, "status": "not_made", "reason": "missing_param", "param": missing})
                continue
            url = api.base_url.rstrip("/") + path
            rec["url"] = url
            if cutoff < now:
                live.requests.append({**rec, "status": "not_made", "reason": "cutoff_before_fetch"})
                continue
            try:
                headers, cred = request_headers(api, env)
            except FetchError as e:
                live.requests.append({**rec, "status": "failed", "error": str(e)})
                continue
            fetched_at, body = now, None
            with _CACHE_LOCK:
                kept = _CACHE.get((url, cred))
            if kept is not None and ttl > timedelta(0) and timedelta(0) <= now - kept[0] < ttl:
                fetched_at, body = kept
            try:
                if body is None:
                    body = get(url, headers=headers, timeout=timeout, max_bytes=api.max_bytes)
                    if ttl > timedelta(0):
                        with _CACHE_LOCK:
                            if len(_CACHE) >= _CACHE_MAX:
                                _CACHE.clear()
                            _CACHE[(url, cred)] = (now, body)
                records = records_of(body, request.records)
                results = to_results(m, request, url, body, records, params=params, fetched_at=fetched_at,
                                     disp=disp)
            except FetchError as e:
                live.requests.append({**rec, "status": "failed", "error": str(e)})
                continue
            live.requests.append({**rec, "status": "fetched", "fetched_at": fetched_at.isoformat(),
                                  "response_sha256": hashlib.sha256(body).hexdigest(), "size": len(body),
                                  "records": len(records), "cached": fetched_at != now})
            live.results.extend(results)
    return live
