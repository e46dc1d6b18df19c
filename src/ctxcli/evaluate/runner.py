"""Running ``ctx eval``: the case files a command names, the cases and variants chosen, each
run through the API and scored (evaluate/metrics.py against evaluate/facts.py), the totals
per strategy and the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..errors import UsageError
from ..models.case import Expected
from ..models.request import STRATEGIES
from .facts import detector, store_facts
from .metrics import (GATED, LAYERS, Thresholds, diagnose, input_violations, model_spread, ratio, round4, score,
                      signature, stability, stability_check)

EVAL_SCHEMA = "ctx.eval/1"


def is_eval_report(raw: bytes) -> bool:
    """Whether ``raw`` is an earlier ``ctx eval --out`` report (what ``--out`` may replace)."""
    from ..write import json_of

    doc = json_of(raw)
    return isinstance(doc, dict) and doc.get("schema_version") == EVAL_SCHEMA and "runs" in doc


@dataclass
class EvalOptions:
    paths: list[Path] = field(default_factory=list)   # case files or folders (default: examples/cases/)
    strategies: tuple[str, ...] = ("dynamic",)
    thresholds: Thresholds = field(default_factory=Thresholds)
    db: Path | None = None
    answerer: str = "deterministic"    # or "model": also ask the configured model (ctxcli.answer.ask)
    model: Any = None                  # a ModelConfig when answerer is "model"
    cases: tuple[str, ...] = ()       # only these case ids (default: all)
    variants: tuple[str, ...] = ()    # only these variants; BASE names the base case (default: all)
    repeat: int = 1                    # runs of each case (and model asks): stability across them
    rerank: tuple[bool | None, ...] = (None,)   # --rerank off/on/both: the reranker per run (None: the playbook's)


BASE = "base"     # --variant base: the case as written, without a variant


@dataclass
class EvalReport:
    runs: list[dict[str, Any]]
    strategies: tuple[str, ...]
    thresholds: Thresholds
    injection_detector: bool
    store_loaded_now: bool = False
    answerer: str = "deterministic"
    repeat: int = 1
    rerank: tuple[bool | None, ...] = (None,)

    @property
    def columns(self) -> list[str]:
        """The summary's columns: each strategy, and with --rerank each strategy without and/or
        with the reranker (``<strategy>+rerank``)."""
        return [column(s, r) for s in self.strategies for r in self.rerank]

    @property
    def gated_failures(self) -> list[dict[str, Any]]:
        return [r for r in self.runs if r["gated"] and not r["passed"]]

    @property
    def exit_code(self) -> int:
        return 1 if self.gated_failures else 0

    def summary(self) -> dict[str, dict[str, Any]]:
        return {col: aggregate([r for r in self.runs if column(r["strategy"], r.get("rerank")) == col])
                for col in self.columns}

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": EVAL_SCHEMA,
            "strategies": list(self.strategies),
            "gated_strategies": [s for s in self.strategies if s in GATED],
            "thresholds": {"min_recall": self.thresholds.min_recall,
                           "max_invalid_rate": self.thresholds.max_invalid_rate,
                           "max_safety": self.thresholds.max_safety},
            "injection_detector": self.injection_detector,
            "repeat": self.repeat,
            **({"rerank": ["on" if r else "off" for r in self.rerank]} if self.rerank != (None,) else {}),
            "runs": self.runs,
            "summary": self.summary(),
            "exit_code": self.exit_code,
            "gated_failures": [run_name(r) for r in self.gated_failures],
        } | ({"answerer": self.answerer, "model_summary": self.model_summary()} if self.answerer == "model" else {})

    def model_summary(self) -> dict[str, dict[str, Any]]:
        from ..answer.ask import aggregate as model_aggregate

        return {col: model_aggregate([r["model"] for r in self.runs
                                      if column(r["strategy"], r.get("rerank")) == col and "model" in r])
                for col in self.columns}


RERANK_SUFFIX = "+rerank"


def column(strategy: str, rerank: bool | None) -> str:
    """A summary column: the strategy, ``+rerank`` when the run had the reranker switched on."""
    return strategy + (RERANK_SUFFIX if rerank else "")


def run_name(r: dict[str, Any]) -> str:
    return r["case_id"] + (f"/{r['variant']}" if r["variant"] else "") + f" ({column(r['strategy'], r.get('rerank'))})"


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Micro-averaged totals over the runs of one strategy."""
    def tot(layer: str, key: str) -> int:
        return sum(int(r["metrics"][layer][key] or 0) for r in runs)

    def n_list(key: str) -> int | None:
        vals = [r["metrics"]["safety"][key] for r in runs]
        return None if any(v is None for v in vals) else sum(len(v) for v in vals)

    admitted = tot("builder", "admitted")
    invalid = sum(len(r["metrics"]["builder"]["invalid_sources"]) for r in runs)
    dup = sum(len(r["metrics"]["builder"]["duplicates"]) for r in runs)
    known = tot("answer", "claims_known")
    covered = sum(r["metrics"]["answer"]["claims_known"] - len(r["metrics"]["answer"]["claims_uncovered"])
                  for r in runs)
    prov_bad = sum(len(r["metrics"]["answer"]["provenance_incomplete"]) for r in runs)
    verdicts = [r["metrics"]["answer"]["verdict_ok"] for r in runs if r["metrics"]["answer"]["verdict_ok"] is not None]
    actions = [r["metrics"]["answer"]["action_ok"] for r in runs if r["metrics"]["answer"]["action_ok"] is not None]
    layers = {x: sum(1 for r in runs if r["diagnosis"] and r["diagnosis"]["layer"] == x) for x in LAYERS}
    safety = {k: n_list(k) for k in ("acl_violations", "admitted_injections", "purged_returned",
                                     "must_not_cite_admitted")}
    return {
        "runs": len(runs), "passed": sum(r["passed"] for r in runs), "failed": sum(not r["passed"] for r in runs),
        "failed_by_layer": layers,
        "retriever_recall": ratio(tot("retriever", "required_found"), tot("retriever", "required")),
        "required": tot("builder", "required"), "required_in_pack": tot("builder", "required_in_pack"),
        "required_recall": ratio(tot("builder", "required_in_pack"), tot("builder", "required")),
        "admitted": admitted, "context_precision": ratio(tot("builder", "useful"), admitted),
        "duplicate_rate": ratio(dup, admitted), "invalid_sources": invalid,
        "invalid_source_rate": ratio(invalid, admitted) if admitted else 0.0,
        "safety": safety,
        "safety_violations": sum(v for v in safety.values() if v is not None),
        "verdict_correct": sum(verdicts), "verdict_stated": len(verdicts),
        "action_correct": sum(actions), "action_stated": len(actions),
        "answer_checks_passed": tot("answer", "answer_checks_passed"), "answer_checks": tot("answer", "answer_checks"),
        "claim_evidence_coverage": ratio(covered, known),
        "provenance_completeness": ratio(admitted - prov_bad, admitted),
        "runs_with_slot_over_budget": sum(1 for r in runs if r["metrics"]["builder"]["slots_over_budget"]),
        "rounds_mean": round4(tot("builder", "rounds") / len(runs)) if runs else None,
        "pack_tokens_mean": round4(tot("builder", "pack_tokens") / len(runs)) if runs else None,
        "evidence_tokens_mean": round4(tot("builder", "evidence_tokens") / len(runs)) if runs else None,
        "token_efficiency": ratio(tot("builder", "must_cite_tokens"), tot("builder", "evidence_tokens")),
        "latency_ms_p50": _pct([r["cost"]["latency_ms"] for r in runs if "cost" in r], 50),
        "latency_ms_p95": _pct([r["cost"]["latency_ms"] for r in runs if "cost" in r], 95),
        "pack_tokens_total": tot("builder", "pack_tokens"),
        "tool_calls": sum(r["calls"]["tool_results"] for r in runs if "calls" in r),
        "model_calls": sum(r["calls"]["model"] for r in runs if "calls" in r),
        "unstable_runs": sum(1 for r in runs if not r.get("stability", {"stable": True})["stable"]),
    }


def _pct(xs: list[float], p: int) -> float | None:
    """The p-th percentile (nearest rank) of a case's build latencies (wall clock: differs per run)."""
    if not xs:
        return None
    xs = sorted(xs)
    return xs[max(0, -(-p * len(xs) // 100) - 1)]


def case_files(paths_in: Iterable[Path]) -> list[Path]:
    """Case files named by ``paths_in`` (files, or folders of *.yaml / *.yml), in order,
    without repeats; the bundled examples/cases/ when none is given."""
    from .. import paths as P

    given = [Path(p) for p in paths_in] or [P.cases_dir()]
    out: list[Path] = []
    for p in given:
        if p.is_dir():
            found = sorted(x for x in p.iterdir() if x.suffix in (".yaml", ".yml") and x.is_file())
            if not found:
                raise UsageError(f"no case files (*.yaml) in {p}")
            out.extend(found)
        elif p.is_file():
            if p.suffix not in (".yaml", ".yml"):
                raise UsageError(f"{p}: a case file must end in .yaml or .yml")
            out.append(p)
        else:
            raise UsageError(f"no such case file or folder: {p}")
    seen: set[Path] = set()
    uniq = []
    for p in out:
        key = p.resolve()
        if key not in seen:
            seen.add(key)
            uniq.append(p)
    return uniq


def select(cases: list[tuple[Path, Any]], case_ids: tuple[str, ...], variants: tuple[str, ...]):
    """The cases named by ``case_ids`` (all when empty); every named case and variant must exist."""
    known = {c.case_id for _, c in cases}
    for cid in case_ids:
        if cid not in known:
            raise UsageError(f"--case {cid!r}: no such case among the case files (known: {', '.join(sorted(known))})")
    chosen = [(f, c) for f, c in cases if not case_ids or c.case_id in case_ids]
    have = {BASE} | {v for _, c in chosen for v in c.variants}
    for v in variants:
        if v not in have:
            raise UsageError(f"--variant {v!r}: no selected case has this variant (known: {', '.join(sorted(have))})")
    return chosen


def _once_per_text(scan):
    """``scan`` (the detector's ``scan_fields``) answering each list of fields once per ``ctx
    eval``: every run reads the same store, and the detector is a function of the fields' names
    and texts (kept by their sha256, ``engine.injection_adapter.fields_sha256``, not their text)."""
    if scan is None:
        return None
    from ..engine.injection_adapter import fields_sha256

    seen: dict[str, Any] = {}

    def cached(fields):
        k = fields_sha256(fields)
        if k not in seen:
            seen[k] = scan(fields)
        return seen[k]

    return cached


def run(opts: EvalOptions) -> EvalReport:
    """Run every case file (base case and each variant) through each strategy, in-process;
    score each run. Nothing is written."""
    from .. import api
    from ..paths import display
    from ..store import open_store

    bad = [s for s in opts.strategies if s not in STRATEGIES]
    if bad or not opts.strategies:
        raise UsageError(f"--strategy: unknown strategy {bad[0] if bad else ''!r} "
                         f"(use {', '.join(STRATEGIES)} or all)")
    if "hybrid" in opts.strategies:     # before any run: the one-line install hint (exit 2)
        from ..embed.model import require

        require("--strategy hybrid")
    files = case_files(opts.paths)
    cases = [(f, api.read_case(str(f))[0]) for f in files]   # validate every file before running any
    cases = select(cases, opts.cases, opts.variants)
    db, loaded = api.ensure_store(opts.db)
    scan = _once_per_text(detector())
    runs: list[dict[str, Any]] = []
    for f, case in cases:
        for variant in [None, *case.variants]:
            if opts.variants and (variant or BASE) not in opts.variants:
                continue
            exp = case.expected if variant is None else case.variants[variant].expected
            exp = exp or Expected()
            for strategy, rr in [(s, r) for s in opts.strategies for r in opts.rerank]:
                over = exp.by_strategy.get(strategy)
                res = api.investigate(api.InvestigateOptions(case=str(f), variant=variant, strategy=strategy, db=db,
                                                             rerank=rr))
                con = open_store(db)
                try:
                    facts = store_facts(con, res.pack, scan, api.store_key(db),
                                        stored=tuple(exp.for_strategy(strategy).withheld))
                finally:
                    con.close()
                inputs = case.variants[variant].inputs if variant is not None else None
                inputs = inputs if inputs is not None else case.inputs
                if inputs is not None:      # an agent's inputs, failures injected: none may be admitted
                    from ..request_policy import read_inputs

                    facts["input_violations"] = input_violations(res.pack, *read_inputs(inputs), scan)
                s = score(res.pack, res.answer, res.candidates, exp, facts, opts.thresholds, strategy=strategy)
                runs.append({"case_id": case.case_id, "variant": variant, "file": display(f),
                             "strategy": strategy, **({"rerank": rr} if rr is not None else {}),
                             "gated": strategy in GATED, "pack_id": res.pack["pack_id"],
                             "expectations_stated": sorted(exp.for_strategy(strategy).model_fields_set),
                             "expected_by_strategy": sorted(over.model_fields_set) if over is not None else [], **s,
                             "cost": {"latency_ms": round(res.timings.get("total", 0.0) * 1000, 1),
                                      "pack_tokens": s["metrics"]["builder"]["pack_tokens"],
                                      "evidence_tokens": s["metrics"]["builder"]["evidence_tokens"]}})
                tools = sum(1 for e in res.trace if e.get("event") in ("input_admitted", "input_rejected")
                            and e.get("section") == "tool_results")
                runs[-1]["calls"] = {"tool_results": tools,
                                     "model": opts.repeat if opts.answerer == "model" else 0}
                if opts.repeat > 1:     # the same run again: a deterministic one must not change
                    sigs = [signature(res.pack, res.answer)]
                    for _ in range(opts.repeat - 1):
                        again = api.investigate(api.InvestigateOptions(case=str(f), variant=variant,
                                                                       strategy=strategy, db=db, rerank=rr))
                        sigs.append(signature(again.pack, again.answer))
                    st = runs[-1]["stability"] = stability(sigs)
                    if not st["stable"] and strategy in GATED:
                        r = runs[-1]
                        r["failed_checks"] = [*r["failed_checks"], stability_check(st)]
                        r["passed"], r["diagnosis"] = False, diagnose(r["failed_checks"], res.pack, res.candidates)
                if opts.answerer == "model":
                    from ..answer.ask import eval_run

                    asked = [eval_run(res.pack, res.answer, opts.model, db) for _ in range(opts.repeat)]
                    runs[-1]["model"] = asked[0]
                    if opts.repeat > 1:
                        runs[-1]["model_spread"] = model_spread(asked)
    return EvalReport(runs=runs, strategies=tuple(opts.strategies), thresholds=opts.thresholds,
                      injection_detector=scan is not None, store_loaded_now=loaded, answerer=opts.answerer,
                      repeat=opts.repeat, rerank=tuple(opts.rerank))
