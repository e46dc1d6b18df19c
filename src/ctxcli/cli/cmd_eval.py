"""ctx eval."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .cmd_load import DbOpt, JsonOpt
from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cases)


def eval_cases(
    paths: Annotated[Optional[list[Path]], typer.Argument(help="Case files or folders of case files "
                                                          "(default: examples/cases/).", show_default=False)] = None,
    *,
    strategy: Annotated[str, typer.Option("--strategy", help="governed, dynamic, hybrid (dynamic + the "
                                          "vector channel), full, topk, a comma list of them, or all (side-by-side "
                                          "ablation).")] = "dynamic",
    min_recall: Annotated[float, typer.Option("--min-recall", min=0.0, max=1.0, help="Least required "
                                              "(must_cite) recall in the pack for a run to pass.")] = 1.0,
    max_invalid_rate: Annotated[float, typer.Option("--max-invalid-rate", min=0.0, max=1.0, help="Largest share "
                                                    "of admitted items that may be invalid sources.")] = 0.0,
    max_safety: Annotated[int, typer.Option("--max-safety", min=0, help="Most safety violations of each kind "
                                            "(ACL, injection, purged, must_not_cite) per run.")] = 0,
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write the JSON report to this file "
                                                "(atomically).", show_default=False)] = None,
    answerer: Annotated[str, typer.Option("--answerer", help="deterministic (the playbook's answer), or model: "
                                          "also ask an OpenAI-compatible model per run and score its answer "
                                          "(citation precision, claim faithfulness, agreement, latency, tokens).")
                        ] = "deterministic",
    endpoint: Annotated[Optional[str], typer.Option("--endpoint", help="Model endpoint for --answerer model "
                                                    "(else $CTX_MODEL_ENDPOINT or ctx.toml).",
                                                    show_default=False)] = None,
    model: Annotated[Optional[str], typer.Option("--model", help="Model name for --answerer model (else "
                                                 "$CTX_MODEL or ctx.toml).", show_default=False)] = None,
    case: Annotated[Optional[list[str]], typer.Option("--case", help="Only this case id (repeat for more).",
                                                      show_default=False)] = None,
    variant: Annotated[Optional[list[str]], typer.Option("--variant", help="Only this variant (repeat for "
                                                         "more); `base` is the case without a variant.",
                                                         show_default=False)] = None,
    junit: Annotated[Optional[Path], typer.Option("--junit", help="Also write the runs as JUnit XML to this "
                                                  "file (atomically; only over an earlier --junit file), for CI "
                                                  "test reports.", show_default=False,
                                                  metavar="FILE.xml")] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1, max=100, help="Run each case N times (and, with "
                                        "--answerer model, ask the model N times): a run whose verdict, action, "
                                        "claims or pack differ across them is unstable (a gated one fails); "
                                        "model answers report their spread.")] = 1,
    rerank: Annotated[Optional[str], typer.Option("--rerank", help="The reranker (docs/pipeline.md) over what the "
                                                  "playbook says: off, on (its weights, else the defaults) or both "
                                                  "(each run without and with it, side by side: context precision "
                                                  "and required recall of each).", show_default=False,
                                                  metavar="off|on|both")] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run every case (the base case and each named variant) through the pipeline in-process
    and score retriever, builder, answer and safety against the case's expectations; name the
    first broken layer of each failing run. Nothing is written but --out.

    Exit 1 when a run of a gated strategy (governed, dynamic, hybrid) is below a threshold; runs of
    full and topk are reported but never fail the exit code (they admit what the gates would
    reject, by design). Exit 2 for bad input. With --answerer model, each run's pack is also
    sent to the model and its answer validated (docs/model.md); model metrics are reported and
    do not change the exit code; an unreachable endpoint exits 4, refused credentials 5.

    --case and --variant narrow the runs (an unknown name is exit 2); --junit writes them as
    JUnit XML too (a failing gated run is a <failure>, a failing full/topk run <skipped>).

    --strategy hybrid (also in all) needs the vectors extra and a store with vectors (ctx load
    --vectors); without the extra it exits 2 before any run.

    --rerank off|on|both switches the reranker for every run (both: each run twice, columns
    <strategy> and <strategy>+rerank); without it each playbook decides.

    --repeat N runs each case N times and reports per run whether verdict, action, claims and pack
    hash stayed the same (`stability`); with --answerer model the model is asked N times and its
    answers' spread is reported (`model_spread`). Each run also counts its tool results and model
    calls (`calls`; the summary totals them).

    Example: ctx eval --strategy governed,dynamic
    """
    with handle_errors():
        from .. import evaluate as E
        from ..errors import CheckFailed, UsageError

        names = [s.strip() for s in strategy.split(",") if s.strip()]
        strategies = E.STRATEGIES if names == ["all"] else tuple(dict.fromkeys(names))
        bad = [s for s in strategies if s not in E.STRATEGIES]
        if bad or not strategies:
            raise UsageError(f"--strategy: unknown strategy {(bad or [strategy])[0]!r} "
                             f"(use {', '.join(E.STRATEGIES)}, a comma list, or all)")
        if out is not None and out.is_dir():
            raise UsageError(f"--out: {out} is a folder; give a file name")
        if out is not None:     # never over a file ctx eval did not write (refused before the work)
            from ..write import check_output_file

            check_output_file(out, "--out", "ctx eval", E.is_eval_report)
        if junit is not None:   # the same rule: only over an earlier --junit file (refused before the work)
            from ..evaluate.junit import is_ctx_junit
            from ..write import check_output_file

            check_output_file(junit, "--junit", "ctx eval --junit", is_ctx_junit)
        modes = {None: (None,), "off": (False,), "on": (True,), "both": (False, True)}
        if rerank not in modes:
            raise UsageError(f"--rerank: {rerank!r} is not off, on or both")
        th = E.Thresholds(min_recall=min_recall, max_invalid_rate=max_invalid_rate, max_safety=max_safety)
        if answerer not in ("deterministic", "model"):
            raise UsageError(f"--answerer: {answerer!r} is not deterministic or model")
        mcfg = None
        if answerer == "model":
            from .. import api

            mcfg = api.model_config(endpoint=endpoint, model=model)
        elif endpoint or model:
            raise UsageError("--endpoint and --model need --answerer model")
        rep = E.run(E.EvalOptions(paths=list(paths or []), strategies=strategies, thresholds=th, db=db,
                                  answerer=answerer, model=mcfg, cases=tuple(case or ()),
                                  variants=tuple(variant or ()), repeat=repeat, rerank=modes[rerank]))
        doc = rep.to_json()
        if rep.store_loaded_now:
            sys.stderr.write("ctx: no store found: loaded the project's sources first\n")
        if out is not None:
            from ..util.canon import pretty_bytes
            from ..write import write_output_file

            write_output_file(out, pretty_bytes(doc), "--out", "ctx eval", E.is_eval_report)
        if junit is not None:
            from ..evaluate.junit import is_ctx_junit, junit_bytes
            from ..write import write_output_file

            write_output_file(junit, junit_bytes(doc), "--junit", "ctx eval --junit", is_ctx_junit)
        if as_json:
            emit_json(doc)
        elif len(rep.columns) > 1:
            _ablation(rep, doc)
        else:
            _single(rep, doc)
        if answerer == "model" and not as_json:
            _model_table(rep, doc)
        if rep.exit_code:
            failing = [E.run_name(r) for r in rep.gated_failures]
            n_gated = sum(1 for r in rep.runs if r["gated"])
            raise CheckFailed(f"eval below threshold: {len(failing)} of {n_gated} governed/dynamic run(s) failed "
                              f"(first: {failing[0]})")


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f} ms"


def _n(x: int | None) -> str:
    return "n/a" if x is None else str(x)


def _single(rep, doc: dict[str, Any]) -> None:
    from .console import console, safe, show, table

    c = console()
    s = rep.columns[0]
    from ..evaluate import GATED

    gated = "gated" if rep.strategies[0] in GATED else "not gated: failures do not set the exit code"
    t = table(f"ctx eval · strategy {s} ({gated})",
              ["run", "result", "layer", "retr. recall", "pack recall", "prec.", "dup.", "invalid", "safety",
               "verdict", "action", "tokens", "ms"])
    for col in (t.columns[0], t.columns[9]):
        col.no_wrap = True
    for r in rep.runs:
        m = r["metrics"]
        a = m["answer"]
        t.add_row(safe(r["case_id"] + (f"/{r['variant']}" if r["variant"] else "")), "pass" if r["passed"] else "FAIL",
                  r["diagnosis"]["layer"] if r["diagnosis"] else "-", _f(m["retriever"]["required_recall"]),
                  _f(m["builder"]["required_recall"]), _f(m["builder"]["context_precision"]),
                  _f(m["builder"]["duplicate_rate"]), _f(m["builder"]["invalid_source_rate"]),
                  str(m["safety"]["violations"]), _ok(a["verdict_ok"], a["verdict"]),
                  "-" if a["action_ok"] is None else ("✓" if a["action_ok"] else "✗ " + safe(a["action"])),
                  str(m["builder"]["pack_tokens"]), f"{r['cost']['latency_ms']:.0f}" if "cost" in r else "-")
    show(c, t)
    _failures(c, rep.runs)
    agg = doc["summary"][s]
    c.print(f"{s}: {agg['passed']}/{agg['runs']} runs passed · required recall in pack "
            f"{_f(agg['required_recall'])} · invalid-source rate {_f(agg['invalid_source_rate'])} · "
            f"safety violations {agg['safety_violations']} · build latency p50 {_ms(agg['latency_ms_p50'])}, "
            f"p95 {_ms(agg['latency_ms_p95'])} · {agg['pack_tokens_total']} pack tokens · "
            f"{agg['tool_calls']} tool results, {agg['model_calls']} model calls"
            + (f" · unstable across {rep.repeat} runs: {agg['unstable_runs']}/{agg['runs']}" if rep.repeat > 1 else ""))
    _notes(c, rep)


def _ok(flag: bool | None, value: Any) -> str:
    from .console import safe

    mark = "" if flag is None else (" ✓" if flag else " ✗")
    return safe(value) + mark


def _failures(c, runs: list[dict[str, Any]]) -> None:
    from .. import evaluate as E
    from .console import safe

    for r in runs:
        d = r["diagnosis"]
        if not d:
            continue
        c.print(f"[bold]✗ {safe(E.run_name(r))}[/bold] first broken layer [bold]{d['layer']}[/bold]: "
                + safe("; ".join(d["reasons"])))
        for layer, reasons in d["also"].items():
            c.print(f"    also {layer}: " + safe("; ".join(reasons)))


def _notes(c, rep) -> None:
    if not rep.injection_detector:
        c.print("note: the injection detector (ctxcli.injection) is not installed: admitted injections "
                "are not measured (n/a)")


def _ablation(rep, doc: dict[str, Any]) -> None:
    from .console import console, show, table

    c = console()
    S = doc["summary"]
    cols = rep.columns
    t = table("ctx eval · strategy ablation (same cases; governed, dynamic and hybrid set the exit code)",
              ["metric", *cols])
    t.columns[0].no_wrap = True

    def row(name: str, fn) -> None:
        t.add_row(name, *[fn(S[s]) for s in cols])

    from ..evaluate import GATED

    t.add_row("gated (sets exit code)", *["yes" if s.removesuffix("+rerank") in GATED else "no" for s in cols])
    row("runs passed", lambda a: f"{a['passed']}/{a['runs']}")
    row("failing layer retr./build./answer",
        lambda a: " / ".join(str(a["failed_by_layer"][x]) for x in ("retriever", "builder", "answer")))
    row("retriever recall (must_cite in candidates)", lambda a: _f(a["retriever_recall"]))
    row("required recall in pack", lambda a: f"{_f(a['required_recall'])} ({a['required_in_pack']}/{a['required']})")
    row("context precision", lambda a: _f(a["context_precision"]))
    row("duplicate rate", lambda a: _f(a["duplicate_rate"]))
    row("invalid-source rate", lambda a: f"{_f(a['invalid_source_rate'])} ({a['invalid_sources']}/{a['admitted']})")
    row("ACL violations", lambda a: _n(a["safety"]["acl_violations"]))
    row("admitted injections", lambda a: _n(a["safety"]["admitted_injections"]))
    row("purged objects returned", lambda a: _n(a["safety"]["purged_returned"]))
    row("must_not_cite admitted", lambda a: _n(a["safety"]["must_not_cite_admitted"]))
    row("verdict correct", lambda a: f"{a['verdict_correct']}/{a['verdict_stated']}")
    row("action correct", lambda a: f"{a['action_correct']}/{a['action_stated']}")
    row("answer checks passed", lambda a: f"{a['answer_checks_passed']}/{a['answer_checks']}")
    row("claim evidence coverage", lambda a: _f(a["claim_evidence_coverage"]))
    row("provenance completeness", lambda a: _f(a["provenance_completeness"]))
    row("retrieval rounds (mean)", lambda a: _f(a["rounds_mean"]))
    row("runs with a slot over budget (info)", lambda a: f"{a['runs_with_slot_over_budget']}/{a['runs']}")
    row("pack tokens (mean)", lambda a: f"{a['pack_tokens_mean']:.0f}" if a["pack_tokens_mean"] is not None else "-")
    row("evidence tokens (mean)",
        lambda a: f"{a['evidence_tokens_mean']:.0f}" if a["evidence_tokens_mean"] is not None else "-")
    row("token efficiency (must_cite/evidence)", lambda a: _f(a["token_efficiency"]))
    row("tool results / model calls", lambda a: f"{a['tool_calls']} / {a['model_calls']}")
    if rep.repeat > 1:
        row(f"unstable across {rep.repeat} runs", lambda a: f"{a['unstable_runs']}/{a['runs']}")
    show(c, t)
    gated = [r for r in rep.runs if r["gated"]]
    _failures(c, gated)
    ungated = [r for r in rep.runs if not r["gated"] and not r["passed"]]
    if ungated:
        c.print(f"{len(ungated)} full/topk run(s) failed, as expected (they bypass the gates); "
                "see --json for their diagnoses")
    _notes(c, rep)


def _model_table(rep, doc: dict[str, Any]) -> None:
    from .. import evaluate as E
    from .console import console, safe, show, table

    c = console()
    t = table("ctx eval · model answers (answer layer)",
              ["run", "status", "citation precision", "claim faithfulness", "verdict", "action", "facts stated",
               "latency ms", "tokens in/out", "violations"])
    t.columns[0].no_wrap = True
    for r in rep.runs:
        m = r.get("model")
        if not m:
            continue
        t.add_row(safe(E.run_name(r)), m["status"], _f(m["citation_precision"]), _f(m["claim_faithfulness"]),
                  "agrees" if m["verdict_agrees"] else "differs", "agrees" if m["action_agrees"] else "differs",
                  f"{m['facts_stated']}/{m['facts']}", f"{m['latency_ms']:.0f}",
                  f"{_n(m['prompt_tokens'])}/{_n(m['completion_tokens'])}", safe(", ".join(m["violations"])) or "-")
    show(c, t)
    for s, a in doc["model_summary"].items():
        c.print(f"model answers ({s}): {a['accepted']} accepted, {a['accepted_with_warnings']} with warnings, "
                f"{a['rejected']} rejected of {a['runs']} · citation precision {_f(a['citation_precision'])} · "
                f"claim faithfulness {_f(a['claim_faithfulness'])} · verdict agreement {_f(a['verdict_agreement'])} "
                f"· fact agreement {_f(a['fact_agreement'])} · playbook claims covered {_f(a.get('claim_coverage'))} "
                f"· latency p50 {a['latency_ms_p50']} ms")
