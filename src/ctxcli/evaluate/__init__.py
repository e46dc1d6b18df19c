"""``ctx eval``: run case files (and their variants) through the pipeline in-process and
score each stage against the case's expectations.

The metric functions are pure: they take the pack, answer and candidate dicts, an
:class:`~ctxcli.models.case.Expected` and a small *store facts* mapping, so tests can build
packs by hand. Store facts are read independently of the gates, from the store itself::

    {"objects": {object_id: {"tenant_id", "source_id", "valid_from_us", "valid_to_us",
                             "observed_us", "required_scopes", "allowed_purposes",
                             "trust_level", "max_age_s", "content_hash", "dedup_hash",
                             "integrity_ok", "injection"}},
     "tombstones": [object_id, ...],
     "injection_detector": true}

``injection`` is ``None`` (scanned and clean, every trust level; fields a manifest's
``injection.accept_fields`` names are not scanned) or a hit
``{"field", "pattern", "label"}``; ``injection_detector: false`` means the detector
(``ctxcli.injection``) is not installed, so injections cannot be measured.

Three modules: ``metrics`` (the pure scoring: a run's pack, answer and candidates against the
case's expectations and the store facts), ``facts`` (reading those facts from the store, with
the injection detector) and ``runner`` (finding the case files, running each case, variant
and strategy through the API, aggregating per strategy, the report).

Nothing here prints, exits or writes files: :func:`run` returns an :class:`EvalReport`.
Runs are never written to disk (``full`` and ``topk`` packs may hold denied content).
"""
from __future__ import annotations

from .facts import detector, store_facts
from .metrics import (GATED, LAYERS, PROVENANCE_FIELDS, STRATEGIES, VALIDITY_FIELDS, Thresholds, answer_metrics,
                      builder_metrics, checks_for, diagnose, input_violations, invalid_reasons, retriever_metrics, safety_metrics, score)
from .runner import (BASE, EVAL_SCHEMA, EvalOptions, EvalReport, aggregate, case_files, is_eval_report, run, run_name,
                     select)

__all__ = ["BASE", "EVAL_SCHEMA", "GATED", "LAYERS", "PROVENANCE_FIELDS", "STRATEGIES", "VALIDITY_FIELDS",
           "EvalOptions", "EvalReport", "Thresholds", "aggregate", "answer_metrics", "builder_metrics", "case_files",
           "checks_for", "detector", "diagnose", "input_violations", "invalid_reasons", "is_eval_report", "retriever_metrics", "run",
           "run_name", "safety_metrics", "score", "select", "store_facts"]
