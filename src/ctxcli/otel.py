"""OpenTelemetry export of one run: OTLP/JSON spans built with the OpenTelemetry SDK's own
classes (``TracerProvider``, ``InMemorySpanExporter``) and encoded by its OTLP encoder
(``opentelemetry.exporter.otlp.proto.common``), then written as the protobuf JSON mapping of
an ``ExportTraceServiceRequest`` — what an OTLP/HTTP JSON collector accepts.

Spans: one root ``ctx.investigate`` span, one per stage (retrieve, hydrate, gates, pack,
assemble, answer: the stage's total time over all rounds, laid end to end, since stages of
different rounds interleave) and one per retrieval query under ``retrieve``. Attribute names
follow the GenAI semantic conventions where one exists (``gen_ai.operation.name``,
``gen_ai.usage.input_tokens`` for the model-visible pack tokens); the rest are ``ctx.*``. The
trace id is derived from the pack id, so a run's spans can be found from its pack. Durations
are wall clock (from the run's timings); the optional ``otel`` extra installs the SDK.

Export (:func:`export_target`, :func:`export_spans`) goes through the SDK's own OTLP/HTTP
exporter (``opentelemetry-exporter-otlp-proto-http``, protobuf encoding), so the standard
``OTEL_EXPORTER_OTLP_*`` variables apply: ``--otel-endpoint`` or, without it,
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` turn export on; headers,
timeout, compression and certificates come from the environment as for any OTel SDK.
``OTEL_SERVICE_NAME`` names the resource (``ctx`` by default).

``ctx ask`` exports its model call the same way (:func:`ask_otlp_json`): a ``ctx.ask`` span
with one ``chat <model>`` child carrying the GenAI attributes (requested model, server, token
counts when reported, outcome) — never the prompt or the completion.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

from .errors import UsageError

STAGES = ("retrieve", "hydrate", "gates", "pack", "assemble", "answer")


def require_sdk(what: str = "--otel-out"):
    """The SDK's pieces, or the one-line install hint (``what`` names the flag or variable that
    asked for them)."""
    try:
        from google.protobuf.json_format import MessageToDict
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: F401
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from opentelemetry.sdk.trace.id_generator import IdGenerator
        from opentelemetry.trace import set_span_in_context
    except ImportError:
        from .util.distribution import install_hint

        raise UsageError(f"{what} needs the OpenTelemetry SDK: {install_hint('otel')}") from None
    return (MessageToDict, encode_spans, Resource, TracerProvider, SimpleSpanProcessor, InMemorySpanExporter,
            IdGenerator, set_span_in_context)


class _Run:
    """A tracer whose trace id comes from the pack id (the spans of a pack's investigation and
    of a model call over it are one trace), its span ids counted from it; :meth:`finish` gives
    every finished span."""

    def __init__(self, pack: dict[str, Any], *, salt: bytes = b"") -> None:
        (_, _, Resource, TracerProvider, SimpleSpanProcessor, InMemorySpanExporter,
         IdGenerator, self.in_context) = require_sdk()
        from . import BUILDER_VERSION, __version__

        digest = hashlib.sha256(pack["pack_id"].encode()).digest()
        first = hashlib.sha256(pack["pack_id"].encode() + salt).digest() if salt else digest

        class PackIds(IdGenerator):
            def __init__(self) -> None:
                self.n = int.from_bytes(first[16:24], "big") & ((1 << 62) - 1)

            def generate_trace_id(self) -> int:
                return int.from_bytes(digest[:16], "big") or 1

            def generate_span_id(self) -> int:
                self.n += 1
                return self.n

        self.exporter = InMemorySpanExporter()
        import os

        service = os.environ.get("OTEL_SERVICE_NAME", "").strip() or "ctx"
        self.provider = TracerProvider(resource=Resource.create({"service.name": service,
                                                                 "service.version": __version__}),
                                       id_generator=PackIds())
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer = self.provider.get_tracer("ctxcli", BUILDER_VERSION)

    def finish(self) -> list:
        """Every finished span (the SDK's ``ReadableSpan``), in start order."""
        self.provider.shutdown()
        return sorted(self.exporter.get_finished_spans(), key=lambda s: (s.start_time, s.name))


def otlp_json(spans: list) -> bytes:
    """The spans as OTLP/JSON: the protobuf JSON mapping of the SDK's ``ExportTraceServiceRequest``,
    trace and span ids in hex (what ``--otel-out`` writes)."""
    import json

    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    doc = MessageToDict(encode_spans(spans))
    _ids(doc, _b64_to_hex)
    return (json.dumps(doc, indent=2, sort_keys=False) + "\n").encode("utf-8")


def investigate_spans(pack: dict[str, Any], trace: list[dict[str, Any]], timings: dict[str, float],
                      *, end_ns: int | None = None) -> list:
    """The spans of one ``ctx investigate`` run (see the module's docstring)."""
    from . import BUILDER_VERSION

    run = _Run(pack)
    tracer = run.tracer
    ns = lambda s: int(s * 1e9)   # noqa: E731
    end = end_ns if end_ns is not None else time.time_ns()
    total = ns(timings.get("total", sum(timings.get(s, 0.0) for s in STAGES)))
    start = end - total
    req = pack["request"]
    root = tracer.start_span("ctx.investigate", start_time=start, attributes={
        "gen_ai.usage.input_tokens": pack["slots"]["total_tokens"],
        "ctx.pack_id": pack["pack_id"], "ctx.case_id": req["case_id"], "ctx.variant": req["variant"] or "",
        "ctx.strategy": req["strategy"], "ctx.purpose": req["purpose"], "ctx.builder_version": BUILDER_VERSION,
        "ctx.verdict": pack["answer"]["verdict"], "ctx.evidence": len(pack["evidence"]),
        "ctx.omissions": len(pack["omissions"]), "ctx.stop_reason": pack["state"]["stop_reason"]})
    ctx = run.in_context(root)
    queries = [e for e in trace if e.get("event") == "retrieval_executed"]
    t = start
    for stage in STAGES:
        d = ns(timings.get(stage, 0.0))
        span = tracer.start_span(f"ctx.{stage}", context=ctx, start_time=t, attributes={"ctx.stage": stage})
        if stage == "retrieve":
            q_ctx = run.in_context(span)
            qt = t
            for q in queries:
                qd = ns(timings.get(f"query.{q['query_id']}", 0.0))
                qs = tracer.start_span(f"ctx.retrieval {q['channel']}", context=q_ctx, start_time=qt, attributes={
                    "gen_ai.operation.name": "retrieval", "ctx.query_id": q["query_id"], "ctx.round": q["round"],
                    "ctx.channel": q["channel"], "ctx.evidence_type": q["evidence_type"], "ctx.hits": q["hits"]})
                qs.end(end_time=qt + qd)
                qt += qd
        span.end(end_time=t + d)
        t += d
    root.end(end_time=max(end, t))
    return run.finish()


def model_call_attributes(called: dict[str, Any], validated: dict[str, Any] | None) -> dict[str, Any]:
    """The GenAI semantic-convention attributes of one model call, from its ``model_called``
    (and ``model_answer_validated``) trace events: operation, requested model, server, token
    counts when the endpoint reported them, the HTTP status and the outcome. Never a message,
    the prompt or the completion: only what the trace events already hold."""
    from urllib.parse import urlsplit

    where = urlsplit(str(called["endpoint"]))       # the endpoint's origin (never a key: model.py scrubs it)
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.request.model": str(called["model"]),
                             "server.address": where.hostname or "",
                             "ctx.model.attempts": int(called.get("attempts") or 0)}
    if where.port:
        attrs["server.port"] = where.port
    usage = called.get("usage") if isinstance(called.get("usage"), dict) else {}
    for ours, theirs in (("gen_ai.usage.input_tokens", "prompt_tokens"),
                         ("gen_ai.usage.output_tokens", "completion_tokens")):
        v = usage.get(theirs)
        if isinstance(v, int) and not isinstance(v, bool):
            attrs[ours] = v
    status = called.get("status")
    if isinstance(status, int) and not isinstance(status, bool):
        attrs["http.response.status_code"] = status
        if status >= 400:
            attrs["error.type"] = str(status)
    if validated is not None:
        attrs["ctx.model_answer.status"] = str(validated["status"])
        attrs["ctx.model_answer.violations"] = len(validated.get("violations") or [])
        attrs["ctx.model_answer.claims"] = int(validated.get("claims") or 0)
        attrs["ctx.model_answer.claims_ok"] = int(validated.get("claims_ok") or 0)
    return attrs


def ask_spans(pack: dict[str, Any], events: list[dict[str, Any]], *, end_ns: int | None = None) -> list:
    """The spans of ``ctx ask``: a root ``ctx.ask`` span over the pack and, as its child, one
    ``chat <model>`` span per model call (its recorded latency as duration), in the pack's trace."""
    run = _Run(pack, salt=b"ask")
    called = [e for e in events if e.get("event") == "model_called"]
    validated = next((e for e in events if e.get("event") == "model_answer_validated"), None)
    end = end_ns if end_ns is not None else time.time_ns()
    total = sum(int(float(c.get("latency_ms") or 0.0) * 1e6) for c in called)
    start = end - total
    req = pack["request"]
    root_attrs: dict[str, Any] = {"ctx.pack_id": pack["pack_id"], "ctx.case_id": req["case_id"],
                                  "ctx.variant": req["variant"] or "", "ctx.verdict": pack["answer"]["verdict"]}
    if validated is not None:
        root_attrs["ctx.model_answer.status"] = str(validated["status"])
    root = run.tracer.start_span("ctx.ask", start_time=start, attributes=root_attrs)
    ctx = run.in_context(root)
    t = start
    for c in called:
        d = int(float(c.get("latency_ms") or 0.0) * 1e6)
        span = run.tracer.start_span(f"chat {c['model']}", context=ctx, start_time=t,
                                     attributes=model_call_attributes(c, validated))
        span.end(end_time=t + d)
        t += d
    root.end(end_time=max(end, t))
    return run.finish()


ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _b64_to_hex(v: str) -> str:
    import base64

    return base64.b64decode(v).hex()


def _hex_to_b64(v: str) -> str:
    import base64

    return base64.b64encode(bytes.fromhex(v)).decode()


def _ids(node: Any, conv) -> None:
    """OTLP/JSON writes trace and span ids as hex, where protobuf's JSON mapping uses base64."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ID_KEYS and isinstance(v, str):
                node[k] = conv(v)
            else:
                _ids(v, conv)
    elif isinstance(node, list):
        for x in node:
            _ids(x, conv)


def load_otlp_json(data: bytes):
    """An OTLP/JSON file back into the SDK's protobuf ``ExportTraceServiceRequest``."""
    import json

    from google.protobuf.json_format import ParseDict
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    doc = json.loads(data)
    _ids(doc, _hex_to_b64)
    return ParseDict(doc, ExportTraceServiceRequest())


TRACES_ENDPOINT_VAR = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
ENDPOINT_VAR = "OTEL_EXPORTER_OTLP_ENDPOINT"


def traces_url(endpoint: str, what: str = "--otel-endpoint", *, base: bool = True) -> str:
    """The collector's traces URL. A base endpoint (``--otel-endpoint``, ``OTEL_EXPORTER_OTLP_ENDPOINT``)
    gets ``/v1/traces`` appended, as the OTLP exporter specification says; a signal endpoint
    (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is used as it is."""
    from urllib.parse import urlsplit

    u = urlsplit(endpoint)
    try:
        _ = u.port             # a bad port raises here
    except ValueError:
        raise UsageError(f"{what} {endpoint!r}: bad port") from None
    if u.scheme not in ("http", "https") or not u.hostname:
        raise UsageError(f"{what} {endpoint!r} is not an http(s) URL")
    if u.username or u.password:
        raise UsageError(f"{what}: credentials do not belong in the URL (use OTEL_EXPORTER_OTLP_HEADERS)")
    return endpoint.rstrip("/") + "/v1/traces" if base else endpoint


def export_target(endpoint: str | None) -> tuple[str, str] | None:
    """Where the spans go, as (traces URL, the flag or variable that named it), or None when
    nothing asks for export. ``--otel-endpoint`` wins; else ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``,
    then ``OTEL_EXPORTER_OTLP_ENDPOINT`` (ignored under ``OTEL_SDK_DISABLED=true``). A missing
    extra or a malformed URL is refused here, before any work."""
    import os

    if endpoint is not None:
        what, url, base = "--otel-endpoint", endpoint, True
    elif os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    elif os.environ.get(TRACES_ENDPOINT_VAR, "").strip():
        what, url, base = TRACES_ENDPOINT_VAR, os.environ[TRACES_ENDPOINT_VAR].strip(), False
    elif os.environ.get(ENDPOINT_VAR, "").strip():
        what, url, base = ENDPOINT_VAR, os.environ[ENDPOINT_VAR].strip(), True
    else:
        return None
    require_sdk(what)
    return traces_url(url, what, base=base), what


def export_spans(target: tuple[str, str], spans: list) -> None:
    """Send the spans through the SDK's OTLP/HTTP exporter (protobuf); headers, timeout,
    compression and certificates from the standard ``OTEL_EXPORTER_OTLP_*`` variables. A failure
    is one line, exit 4 (the run folder is already written)."""
    import logging
    from urllib.parse import urlsplit

    import requests
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    from .errors import OtlpExportError

    class Recording(requests.Session):
        """The session of the exporter, remembering the last answer (an HTTP status) or error."""

        outcome: int | str | None = None

        def request(self, *args, **kwargs):
            try:
                r = super().request(*args, **kwargs)
            except Exception as e:
                self.outcome = type(e).__name__
                raise
            self.outcome = r.status_code
            return r

    url, what = target
    session = Recording()
    quiet = logging.getLogger("opentelemetry")      # the SDK logs each failure: ctx says it once, below
    saved = (quiet.propagate, quiet.handlers[:])
    quiet.propagate, quiet.handlers = False, [logging.NullHandler()]
    try:
        exporter = OTLPSpanExporter(endpoint=url, session=session)
        result = exporter.export(spans)
        exporter.shutdown()
    finally:
        quiet.propagate, quiet.handlers = saved
    if result is SpanExportResult.SUCCESS:
        return
    host = urlsplit(url).hostname
    if isinstance(session.outcome, int):
        raise OtlpExportError(f"{what}: the collector at {host} answered HTTP {session.outcome}; "
                              "the run folder is written")
    raise OtlpExportError(f"{what}: the collector at {host} is unreachable ({session.outcome or 'no answer'}); "
                          "the run folder is written")


def is_ctx_otlp(raw: bytes) -> bool:
    """Whether ``raw`` is an earlier ``--otel-out`` file: OTLP/JSON whose every span comes from
    ctx's instrumentation scope ``ctxcli`` (what ``--otel-out`` may replace; the service name is
    the user's, through ``OTEL_SERVICE_NAME``)."""
    from .write import json_of

    doc = json_of(raw)
    spans = doc.get("resourceSpans") if isinstance(doc, dict) else None
    if not isinstance(spans, list) or not spans:
        return False
    for rs in spans:
        scopes = rs.get("scopeSpans") if isinstance(rs, dict) else None
        if not isinstance(scopes, list) or not scopes:
            return False
        for ss in scopes:
            if not isinstance(ss, dict) or (ss.get("scope") or {}).get("name") != "ctxcli":
                return False
    return True
