"""ctx ask, ctx validate-answer: a model's answer over a pack, checked against the pack."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .cmd_load import DbOpt, JsonOpt
from .common import emit_json, handle_errors, parse_time, show_repeated

ModelOpt = Annotated[Optional[str], typer.Option("--model", help="Model name sent to the endpoint (else "
                                                 "$CTX_MODEL, else model in [model] of ctx.toml).",
                                                 show_default=False)]
AcceptOpt = Annotated[bool, typer.Option("--accept-disagreement", help="Accept a model answer whose verdict or "
                                         "recommended action differs from the deterministic answer's (recorded "
                                         "as warnings). Without it such an answer is rejected.")]
EndpointOpt = Annotated[Optional[str], typer.Option("--endpoint", help="Base URL of an OpenAI-compatible server, "
                                                    "e.g. http://127.0.0.1:8000 (else $CTX_MODEL_ENDPOINT, else "
                                                    "endpoint in ctx.toml). The key comes from $CTX_MODEL_API_KEY.",
                                                    show_default=False)]


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)
    app.command("validate-answer")(validate_answer)


def ask(
    target: Annotated[str, typer.Argument(help="A case id (built exactly as `ctx investigate` builds it), a case "
                                          "file, or a pack.json (its hash is verified) or its run folder.",
                                          show_default=False)],
    *,
    model: ModelOpt = None,
    endpoint: EndpointOpt = None,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="Valid time to judge at, ISO-8601 with offset "
                                                 "(a case only).", show_default=False)] = None,
    variant: Annotated[Optional[str], typer.Option("--variant", help="A named variant of the case file.",
                                                   show_default=False)] = None,
    timeout: Annotated[Optional[float], typer.Option("--timeout", min=0.1, max=3600, help="Wall time of the whole "
                                                     "call in seconds: every attempt, every byte, the backoff "
                                                     "(default 60).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Run folder (default: runs/<case>-<pack hash>/ "
                                                "for a case, the pack's folder for a pack).",
                                                show_default=False)] = None,
    db: DbOpt = None,
    accept_disagreement: AcceptOpt = False,
    otel_out: Annotated[Optional[Path], typer.Option("--otel-out", help="Also write the model call as OTLP/JSON "
                                                     "spans (ctx.ask and its `chat <model>` child: model, token "
                                                     "counts, outcome; never the prompt) to this file; needs the "
                                                     "otel extra.", show_default=False)] = None,
    otel_endpoint: Annotated[Optional[str], typer.Option("--otel-endpoint", help="Also send those spans to an "
                                                         "OTLP/HTTP collector, e.g. http://127.0.0.1:4318 "
                                                         "(/v1/traces is added); the same as, and before, "
                                                         "$OTEL_EXPORTER_OTLP_ENDPOINT; needs the otel extra. "
                                                         "An unreachable collector exits 4 "
                                                         "after the run folder is written.", show_default=False,
                                                         metavar="URL")] = None,
    idempotency_key: Annotated[Optional[str], typer.Option("--idempotency-key", help="Ask at most once per key: "
                                                           "the same key with the same request prints the "
                                                           "recorded run and calls no model (exit 0); with a "
                                                           "different request, exit 2.",
                                                           show_default=False)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Ask an OpenAI-compatible model over a governed pack and validate its answer against the pack.

    Sends the model-visible messages (`ctx render --format messages`, unchanged, plus one
    answer-format message) to <endpoint>/v1/chat/completions, then writes model.json (the
    recorded exchange, never the key) and model_answer.json (the answer and its validation)
    beside pack.json, trace.jsonl, answer.json and answer.md. A rejected model answer is never
    used: answer.json stays the answer. A verdict or action other than the deterministic
    answer's rejects it, unless --accept-disagreement is given. --timeout bounds the whole
    call (every attempt and every byte); responses over 4 MB are refused.

    Exit 0 accepted (or accepted with warnings), 1 rejected or unparseable (recorded), 2 bad
    input, 4 endpoint unreachable, timed out, HTTP error or non-JSON, 5 credentials refused.
    --otel-out / --otel-endpoint export the call as a span with GenAI attributes, in the
    pack's trace (the trace id of `ctx investigate --otel-out` for the same pack).
    Each ask is recorded in the ledger (`ctx runs --ledger`); --idempotency-key as for
    `ctx investigate`.

    Example: ctx ask C-102 --endpoint http://127.0.0.1:8000 --model qwen2.5-7b-instruct
    """
    with handle_errors():
        from .. import api

        if otel_out is not None:
            from ..otel import require_sdk, is_ctx_otlp
            from ..write import check_output_file

            require_sdk()                                  # a missing extra fails before the model is called
            check_output_file(otel_out, "--otel-out", "ctx --otel-out", is_ctx_otlp)
        from ..otel import export_target

        otel_target = export_target(otel_endpoint)   # the flag or OTEL_EXPORTER_OTLP_*; checked before any work
        if idempotency_key is not None:
            from .. import api as _api
            from ..answer.ask import AskOptions
            from ..ledger.idempotency import check_key, lookup

            check_key(idempotency_key)
            req = _api.ask_request(AskOptions(target=target, as_of=parse_time(as_of, "--as-of"), variant=variant,
                                              db=db))
            prior = lookup(idempotency_key, req, command="ask", db=db)
            if prior is not None:
                show_repeated(prior, idempotency_key, as_json)
                return
        res = api.ask(target, model=model, endpoint=endpoint, as_of=parse_time(as_of, "--as-of"), variant=variant,
                      out=out, db=db, timeout=timeout, accept_disagreement=accept_disagreement,
                      idempotency_key=idempotency_key)
        if res.store_loaded_now:
            sys.stderr.write("ctx: no store found: loaded the project's sources first\n")
        if otel_out is not None or otel_target is not None:
            from ..otel import ask_spans

            spans = ask_spans(res.pack, res.outcome.events)
            if otel_out is not None:
                from ..otel import is_ctx_otlp, otlp_json
                from ..write import write_output_file

                write_output_file(otel_out, otlp_json(spans), "--otel-out", "ctx --otel-out", is_ctx_otlp)
            if otel_target is not None:
                from ..otel import export_spans

                export_spans(otel_target, spans)
        ma = res.outcome.model_answer
        if as_json:
            emit_json({"out": str(res.out_dir), "pack_id": res.pack["pack_id"], "status": ma["status"],
                       "model": res.outcome.model_record["model"], "endpoint": res.outcome.model_record["endpoint"],
                       "latency_ms": res.outcome.model_record["latency_ms"],
                       "usage": res.outcome.model_record["usage"], "model_answer": ma})
        else:
            _human(ma, res.outcome.model_record)
            from .console import console, safe

            files = ["model.json", "model_answer.json", "trace.jsonl", "run.json"]
            if not res.from_pack:
                files = ["pack.json", "trace.jsonl", "answer.json", "answer.md", "model.json", "model_answer.json",
                         "run.json"]
            for name in files:
                console().print(f"wrote {safe(res.out_dir / name)}")
        if ma["status"] == "rejected":
            from ..errors import ExitCode

            raise typer.Exit(ExitCode.FAILED)


def validate_answer(
    pack: Annotated[Path, typer.Argument(help="A run folder written by ctx, its pack.json, or `latest`.",
                                         show_default=False)],
    answer: Annotated[Path, typer.Argument(help="A model answer (JSON: verdict, recommended_action, claims with "
                                           "text, status, evidence) or a model_answer.json.", show_default=False)],
    *,
    db: DbOpt = None,
    accept_disagreement: AcceptOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Validate a model answer produced elsewhere (an agent framework, a notebook) against a pack.

    Every cited id must be evidence of the pack; every number, date, identifier and version
    in a claim must be in the evidence it cites; a fact needs a source that may support
    facts; verdict and action must be in the playbook's vocabulary; text of rejected or
    injected objects is flagged. What a claim says is checked too: a false comparison, a
    claim stronger than its evidence, a name bound to the wrong field value, a dropped hedge
    (docs/model.md). A verdict or action other than the deterministic answer's
    is a violation, a warning with --accept-disagreement. The answer file must be a regular
    file of at most 16 MB.

    Exit 0 accepted or accepted with warnings, 1 rejected, 2 bad input (tampered pack,
    unreadable answer).

    Example: ctx validate-answer runs/asked runs/asked/model_answer.json
    """
    with handle_errors():
        from .. import api

        from ..run_list import pack_path

        rec = api.validate_answer(pack_path(pack), answer, db, accept_disagreement=accept_disagreement)
        if as_json:
            emit_json(rec)
        else:
            _human(rec, None)
        if rec["status"] == "rejected":
            from ..errors import ExitCode

            raise typer.Exit(ExitCode.FAILED)


def _human(ma: dict[str, Any], record: dict[str, Any] | None) -> None:
    from .console import console, safe, show, table

    c = console()
    head = f"[bold]{safe(ma['case_id'])}[/bold] model answer [bold]{ma['status']}[/bold]"
    if record is not None:
        u = record.get("usage") or {}
        head += (f" · {safe(record['model'])} at {safe(record['endpoint'])} · {record['latency_ms']:.0f} ms · "
                 f"tokens {u.get('prompt_tokens', '?')} in / {u.get('completion_tokens', '?')} out")
    c.print(head)
    ans = ma.get("answer")
    if isinstance(ans, dict):
        det = ma["deterministic"]
        c.print(f"verdict {safe(ans.get('verdict'))} (deterministic {safe(det['verdict'])}) · action "
                f"{safe(ans.get('recommended_action'))} (deterministic {safe(det['recommended_action'])})")
        claims = ans.get("claims") if isinstance(ans.get("claims"), list) else []
        t = table("Model claims", ["#", "status", "statement", "evidence", "check"])
        bad: dict[int, list[str]] = {}
        for v in ma["validation"]["violations"]:
            if v.get("claim") is not None:
                bad.setdefault(v["claim"], []).append(v["code"])
        for i, cl in enumerate(claims):
            if not isinstance(cl, dict):
                continue
            ev = cl.get("evidence") if isinstance(cl.get("evidence"), list) else []
            t.add_row(str(i), safe(cl.get("status")), safe(cl.get("text")), safe("\n".join(map(str, ev))) or "-",
                      ", ".join(bad.get(i, [])) or "ok")
        show(c, t)
    for v in ma["validation"]["violations"]:
        where = f"claim {v['claim']}: " if v.get("claim") is not None else ""
        c.print(f"violation {v['code']}: {where}{safe(v['message'])}")
    for w in ma["validation"]["warnings"]:
        c.print(f"warning {w['code']}: {safe(w['message'])}")
    if ma["status"] == "rejected":
        c.print("the model answer is rejected; answer.json (deterministic) stays the answer")
