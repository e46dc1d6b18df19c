"""ctx investigate."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from .cmd_load import DbOpt, JsonOpt
from .common import emit_json, handle_errors, parse_time, show_repeated


def register(app: typer.Typer) -> None:
    app.command("investigate")(investigate)


def _adhoc_spec(case, playbook, seed, tenant, question, business_key, param):
    """The ad-hoc run --playbook asks for (None for a case run, whose flags are checked here)."""
    from .. import api
    from ..errors import UsageError
    from ..params import parse_param

    if playbook is not None:
        return api.AdhocSpec(playbook=playbook, seeds=list(seed or []), tenant_id=tenant, question=question,
                             business_keys=list(business_key) if business_key else None,
                             params=dict(parse_param(p) for p in param) if param else {})
    given = [f for f, v in (("--seed", seed), ("--tenant", tenant), ("--question", question),
                            ("--business-key", business_key)) if v]
    if given:
        what = {"--seed": "seeds", "--tenant": "tenant", "--question": "question",
                "--business-key": "business keys"}[given[0]]
        raise UsageError(f"{given[0]} needs --playbook: a case file names its own {what}")
    if case is None:
        raise UsageError("give a case id (or case file), or --playbook with --seed for an ad-hoc run")
    return None


def as_of_option(value: str | None):
    """(as_of, now) of ``--as-of``: ``now`` is the current second, and the instant live API
    sources are asked at; any other value is an ISO-8601 time with offset (now: None)."""
    if value == "now":
        from datetime import datetime, timezone

        now = datetime.now(timezone.utc).replace(microsecond=0)
        return now, now
    return parse_time(value, "--as-of"), None


def investigate(
    case: Annotated[Optional[str], typer.Argument(help="Case id (examples/cases/<id>.yaml) or a path to a case "
                                                  "file; omitted for an ad-hoc run (--playbook).",
                                                  show_default=False)] = None,
    *,
    playbook: Annotated[Optional[str], typer.Option("--playbook", help="Ad-hoc run without a case file: the "
                                                    "playbook id; needs --seed, --tenant, --subject, --scope, "
                                                    "--purpose and --as-of.", show_default=False)] = None,
    seed: Annotated[Optional[list[str]], typer.Option("--seed", help="Ad-hoc run: an entity key to start from "
                                                      "(type:key), or an entity's name, alias or id part "
                                                      "(Checkout-API), resolved to its key; repeat.",
                                                      show_default=False)] = None,
    tenant: Annotated[Optional[str], typer.Option("--tenant", help="Ad-hoc run: the tenant id.",
                                                  show_default=False)] = None,
    question: Annotated[Optional[str], typer.Option("--question", help="Ad-hoc run: the question (default: the "
                                                    "playbook's description).", show_default=False)] = None,
    business_key: Annotated[Optional[list[str]], typer.Option("--business-key", help="Ad-hoc run: a business key "
                                                              "for full-text queries; repeat (default: the key "
                                                              "part of each --seed).", show_default=False)] = None,
    as_of: Annotated[Optional[str], typer.Option("--as-of", help="The time the question is about: validity and "
                                                 "supersession are judged then (an evidence type the playbook "
                                                 "anchors with valid_at: at its anchor); ISO-8601 with offset, or "
                                                 "'now' (live API sources are asked only at now) (default: the "
                                                 "variant's, else the case's as_of).",
                                                 show_default=False)] = None,
    known_at: Annotated[Optional[str], typer.Option("--known-at", help="The time of knowledge: only objects observed "
                                                    "by then, freshness measured then, and relations to the case "
                                                    "declared by then; tool results and memory are cut off at the "
                                                    "earlier of --as-of and --known-at (default: the variant's "
                                                    "known_at, else --as-of).",
                                                    show_default=False)] = None,
    subject: Annotated[Optional[str], typer.Option("--subject", help="Subject id (default: the case's subject).",
                                                   show_default=False)] = None,
    scope: Annotated[Optional[list[str]], typer.Option("--scope", help="A scope of the subject; repeat. Given "
                                                       "with --subject, replaces the case's scopes.",
                                                       show_default=False)] = None,
    clearance: Annotated[Optional[str], typer.Option("--clearance", help="Highest source classification the "
                                                     "subject may read: public, internal, confidential or "
                                                     "restricted (default: the case subject's; internal for "
                                                     "another --subject).", show_default=False)] = None,
    purpose: Annotated[Optional[str], typer.Option("--purpose", help="Purpose of use (must be served by the "
                                                   "playbook).", show_default=False)] = None,
    budget: Annotated[Optional[int], typer.Option("--budget", help="Total token budget of the model call, 64 to "
                                                  "2000000 (default: the playbook's).", show_default=False)] = None,
    max_rounds: Annotated[Optional[int], typer.Option("--max-rounds", help="Most retrieval rounds, 1 to 5.",
                                                      show_default=False)] = None,
    deadline: Annotated[Optional[float], typer.Option("--deadline", help="Stop planning rounds once this many "
                                                      "seconds have passed (stop reason deadline; the answer names "
                                                      "what was not tried); over the case's and the playbook's "
                                                      "deadline_seconds.", min=0, max=86400, show_default=False,
                                                      metavar="SECONDS")] = None,
    strategy: Annotated[str, typer.Option("--strategy", help="dynamic (gates and follow-up rounds), hybrid "
                                          "(dynamic plus the vector channel), governed (gates, one round), "
                                          "or the ungated baselines full and topk.")] = "dynamic",
    variant: Annotated[Optional[str], typer.Option("--variant", help="A named variant of the case file.",
                                                   show_default=False)] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", help="A case parameter NAME=VALUE the "
                                                       "playbook declares; repeat. Overrides the case's.",
                                                       show_default=False)] = None,
    tool_result: Annotated[Optional[list[Path]], typer.Option("--tool-result", help="A tool-result file (YAML or "
                                                              "JSON, see docs/agents.md); repeat. Gated like "
                                                              "evidence and packed in the tool_results section.",
                                                              show_default=False)] = None,
    memory: Annotated[Optional[Path], typer.Option("--memory", help="A working-state file (YAML or JSON, "
                                                   "ctx.working-state/1, see docs/agents.md): pinned items, summary "
                                                   "and recent messages, gated and packed in working_memory.",
                                                   show_default=False)] = None,
    recall: Annotated[bool, typer.Option("--recall", help="Recall the durable memory records (`ctx remember`): "
                                         "each is gated for this subject and packed in episodic_memory.")] = False,
    memories: Annotated[Optional[Path], typer.Option("--memories", help="With --recall: the memory records' folder "
                                                     "(default: <runs>/memory).", show_default=False)] = None,
    state_version: Annotated[Optional[str], typer.Option("--state-version", help="The version of the caller's "
                                                         "task state this pack is built for (default: the case's "
                                                         "state_version); `ctx replay --state-version` checks it.",
                                                         show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Output folder (default: runs/<case>-<pack hash>/); "
                                                "only a new or empty folder or a run folder ctx wrote is replaced.",
                                                show_default=False)] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
    profile: Annotated[bool, typer.Option("--profile", help="Print stage timings to stderr.")] = False,
    sign: Annotated[bool, typer.Option("--sign", help="Sign the run folder (run.json) with HMAC-SHA256 keyed by "
                                       "$CTX_SIGNING_KEY; replay, render and explain-omissions then verify it.")]
    = False,
    otel_out: Annotated[Optional[Path], typer.Option("--otel-out", help="Also write the run as OTLP/JSON spans "
                                                     "(one per stage and per retrieval) to this file; needs the "
                                                     "otel extra.", show_default=False)] = None,
    idempotency_key: Annotated[Optional[str], typer.Option("--idempotency-key", help="Run at most once per key: "
                                                           "the same key with the same request prints the "
                                                           "recorded run and retrieves nothing (exit 0); with a "
                                                           "different request, exit 2.",
                                                           show_default=False)] = None,
    no_text: Annotated[bool, typer.Option("--no-text", help="Write the run folder with ids, hashes and decisions "
                                          "only: every evidence text and title removed (hashes kept), as "
                                          "`ctx erase` removes them.")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Overwrite a run folder ctx wrote for another "
                                          "request (refused without it: exit 2).")] = False,
    otel_endpoint: Annotated[Optional[str], typer.Option("--otel-endpoint", help="Also send the spans to an "
                                                         "OTLP/HTTP collector, e.g. http://127.0.0.1:4318 "
                                                         "(/v1/traces is added); the same as, and before, "
                                                         "$OTEL_EXPORTER_OTLP_ENDPOINT (headers from "
                                                         "$OTEL_EXPORTER_OTLP_HEADERS); needs the otel extra. An "
                                                         "unreachable collector exits 4 after the run folder "
                                                         "is written.", show_default=False,
                                                         metavar="URL")] = None,
) -> None:
    """Build a governed Context Pack for a case, answer from it alone, and write pack.json,
    trace.jsonl, answer.json, answer.md and run.json (the hashes of the others; signed with
    --sign), all byte-identical for the same inputs, and timings.json (wall-clock latencies,
    which replay and diff ignore).

    Without a case file, --playbook with --seed runs ad hoc for a first look: the tenant,
    subject, scopes, purpose and as_of must be given as flags (clearance defaults to internal).
    The synthesised case gets the id adhoc-<12 hex digits of the SHA-256 of playbook, tenant,
    seeds, business keys, params and question> and is written as case.json in the run folder;
    replay, explain-omissions, diff, render and report work on it as on a case run.

    --tool-result FILE hands in what an agent's tool call returned (docs/agents.md): it is
    gated for tenant, scope, purpose, freshness and injected instructions, and only its shaped
    form (facts, limitations, source record ids) is packed, never the raw rows.

    Without a store, the project's sources are loaded first. Exit 0 when the files are
    written (whatever the verdict), 2 for bad input (naive time, unknown case or playbook,
    purpose the playbook does not serve, a flag an ad-hoc run needs missing).

    Every run is recorded in the ledger beside the store (`ctx runs --ledger`, `ctx ledger
    verify`) and as a CloudEvents event in its outbox, in the same step as the run folder.
    --idempotency-key K runs a request once: the same key and request again prints the recorded
    run (exit 0); the same key with another request exits 2, naming both request hashes. A run
    folder holding another request is not overwritten without --replace (exit 2).

    Example: ctx investigate --playbook motor-claim-review --seed case:C-102 --tenant tenant-demo --subject
    investigator-01 --scope case:read --scope policy:read --scope document:read --scope risk:read
    --purpose claim_review --as-of 2026-07-23T12:00:00+08:00
    """
    with handle_errors():
        from .. import api
        from ..errors import UsageError
        from ..models.request import FLAGS, request_problem
        from ..params import parse_param

        bad = request_problem(subject=subject, scopes=list(scope) if scope else None, budget=budget,
                              max_rounds=max_rounds)
        if bad is not None:
            raise UsageError(f"{FLAGS[bad[0]]} {bad[1]}")
        adhoc = _adhoc_spec(case, playbook, seed, tenant, question, business_key, param)
        from ..models.request import STRATEGIES

        if strategy not in STRATEGIES:
            raise UsageError(f"--strategy: unknown strategy {strategy!r} (use {', '.join(STRATEGIES)})")
        if out is not None:
            from ..write import check_out_dir

            check_out_dir(out)   # refuse before the work, not after it
        if otel_out is not None:
            from ..otel import is_ctx_otlp, require_sdk
            from ..write import check_output_file

            require_sdk()                    # a missing extra fails before any work
            check_output_file(otel_out, "--otel-out", "ctx --otel-out", is_ctx_otlp)
        from ..otel import export_target

        otel_target = export_target(otel_endpoint)   # the flag or OTEL_EXPORTER_OTLP_*; checked before any work
        at, now = as_of_option(as_of)
        opts = api.InvestigateOptions(
            case=case, as_of=at, now=now, known_at=parse_time(known_at, "--known-at"),
            subject_id=subject, scopes=list(scope) if scope else ([] if subject else None), clearance=clearance,
            purpose=purpose, budget=budget, max_rounds=max_rounds, variant=variant, db=db, strategy=strategy,
            extra_params=dict(parse_param(p) for p in param) if param and adhoc is None else None, adhoc=adhoc,
            deadline_seconds=deadline)
        if state_version is not None:
            if not 1 <= len(state_version) <= 128:
                raise UsageError("--state-version must be 1 to 128 characters")
            opts.state_version = state_version
        if tool_result:
            from ..agents.tool_results import read_tool_result

            opts.tool_results = [read_tool_result(p) for p in tool_result]   # a bad file fails before any work
        if memory is not None:
            from ..agents.memory import read_working_state

            opts.working_state = read_working_state(memory)
        if memories is not None and not recall:
            raise UsageError("--memories needs --recall: it names the folder of the records to recall")
        if recall:
            opts.memory_records = api.recall(folder=memories)
        if adhoc is not None:
            api.adhoc_case(opts)             # a missing flag or unknown playbook fails before any work
        if sign:
            from ..run_manifest import signing_key

            signing_key(required=True)        # a missing key fails before any work
        from ..ledger.idempotency import check_folder, check_key, lookup, request_hash

        check_key(idempotency_key)
        if idempotency_key is not None or out is not None:
            req = api.request_for(opts)
            prior = lookup(idempotency_key, req, command="investigate", db=db, inputs=api.inputs_digest(opts))
            if prior is not None:
                show_repeated(prior, idempotency_key, as_json)
                return
            check_folder(out, request_hash(req), replace=replace)      # before the work, not after it
        res = api.investigate(opts)
        ih = api.inputs_digest(opts)
        out_dir = api.write_outputs(res, out, sign=sign, db=db, idempotency_key=idempotency_key, replace=replace,
                                    extra={"inputs_sha256": ih} if ih is not None else None,
                                    no_text=no_text)
        if res.ledger and res.ledger.get("repeated"):
            show_repeated(res.ledger, idempotency_key, as_json)
            return
        spans = None
        if otel_out is not None or otel_target is not None:
            from ..otel import investigate_spans

            spans = investigate_spans(res.pack, res.trace, res.timings)
        if otel_out is not None:
            from ..otel import is_ctx_otlp, otlp_json
            from ..write import write_output_file

            write_output_file(otel_out, otlp_json(spans), "--otel-out", "ctx --otel-out", is_ctx_otlp)
        if res.store_loaded_now:
            sys.stderr.write("ctx: no store found: loaded the project's sources first\n")
        for w in res.warnings:
            sys.stderr.write(f"ctx: {w}\n")
        if otel_target is not None:
            from ..otel import export_spans

            export_spans(otel_target, spans)
        if profile:
            for k, v in sorted(res.timings.items()):
                sys.stderr.write(f"ctx: profile {k} {v * 1000:.1f} ms\n")
        if as_json:
            emit_json({"pack": str(out_dir / "pack.json"), "pack_id": res.pack["pack_id"],
                       "content_hash": res.pack["content_hash"], "out": str(out_dir), "answer": res.answer})
            return
        _human(res, out_dir)


def _human(res, out_dir: Path) -> None:
    from .console import console, safe, show, table

    c = console()
    a, p = res.answer, res.pack
    c.print(f"[bold]{safe(p['request']['case_id'])}[/bold] verdict [bold]{a['verdict']}[/bold] · action "
            f"[bold]{safe(a['recommended_action']['action'])}[/bold] · side effect none")
    t = table("Claims", ["claim", "status", "statement", "evidence"])
    for cl in a["claims"]:
        t.add_row(safe(cl["claim_id"]), cl["status"], safe(cl["text"]), ", ".join(cl["evidence"]) or "-")
    show(c, t)
    if a["missing_evidence"]:
        c.print("missing: " + ", ".join(f"{m['type']} ({m['reason']})" for m in a["missing_evidence"]))
    from ..util.withheld import withheld_counts

    counts: dict[str, int] = withheld_counts(p)       # what the statements withheld (a lower bound)
    for o in p["omissions"]:
        counts[o["gate"]] = counts.get(o["gate"], 0) + 1
    gates = ", ".join(f"{g} {counts[g]}" for g in p["gate_order"] if g in counts) or "none"
    c.print(f"evidence {len(p['evidence'])} items, {p['slots']['used']['evidence']}/"
            f"{p['slots']['allocation']['evidence']} evidence tokens · rejected by gate: {gates} · "
            f"stop: {p['state']['stop_reason']}")
    for name in ("pack.json", "trace.jsonl", "answer.json", "answer.md", "case.json", "run.json", "timings.json"):
        if name != "case.json" or p["request"].get("adhoc"):
            c.print(f"wrote {safe(out_dir / name)}")
