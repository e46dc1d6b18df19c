"""Planted bugs that the test suite must catch.

Each mutant is one exact text replacement in one source file. For every mutant this script
applies it to a temporary copy of the repository, runs the tests chosen for it there (with
the copy's ``src`` first on ``PYTHONPATH``), and records whether at least one test failed
("caught") or all passed ("SURVIVED"). Exit 0 when every mutant is caught, 1 when one
survives, 2 when a mutant no longer applies (its old text is not in the file exactly once:
the code moved, so the list needs updating).

    python -m tests.mutants                  # every mutant, its own test selection
    python -m tests.mutants --jobs 2         # two at a time, each in its own copy (what CI runs)
    python -m tests.mutants --full           # every mutant against the whole suite (slow)
    python -m tests.mutants -k rrf -k redact # mutants whose name contains a word
    python -m tests.mutants --list
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COPY = ("src", "tests", "manifests", "sources", "examples", "docs", ".ci", "pyproject.toml", "README.md")

B = "tests/test_boundaries.py"
V = "tests/test_validator.py"
A = "tests/test_ask.py"
L = "tests/test_ask_limits.py"
G = "tests/test_governance.py"
AR_DUCK = "tests/test_access_rules.py::test_every_channel_applies_every_access_rule_before_its_limit_on_duckdb"
AR_WIDEN = "tests/test_access_rules.py::test_records_not_valid_at_as_of_do_not_crowd_out_either_on_duckdb"
AR_PG = "tests/test_postgres.py::test_every_channel_applies_every_access_rule_before_its_limit_on_postgresql"
PG_TENANT = "tests/test_postgres.py::test_a_second_tenant_never_appears"
M = "tests/test_hostile_masks.py"


@dataclass(frozen=True)
class Mutant:
    name: str
    file: str               # relative to the repository root
    old: str                # must occur exactly once
    new: str
    tests: tuple[str, ...]  # test files or node ids


MUTANTS: list[Mutant] = [
    # --- the survivors of the issue-13 experiment -------------------------------------------
    Mutant("validity-end-inclusive", "src/ctxcli/engine/gates.py",
           "late = o.valid_to_us is not None and o.valid_to_us <= c.as_of_us",
           "late = o.valid_to_us is not None and o.valid_to_us < c.as_of_us", (B,)),
    Mutant("rrf-k-1", "src/ctxcli/engine/retrieve.py", "RRF_K = 60", "RRF_K = 1", (B,)),
    Mutant("redact-title-skipped", "src/ctxcli/engine/redact.py",
           'MASKED_FIELDS = ("content", "title", "locator",', 'MASKED_FIELDS = ("content", "locator",', (B,)),
    Mutant("redact-facts-skipped", "src/ctxcli/engine/redact.py",
           'changes["facts"] = mask_value(dict(o.facts), pats, counts)', 'changes["facts"] = dict(o.facts)', (B,)),
    Mutant("injection-gate-off", "src/ctxcli/engine/gates.py",
           'if o.trust_level == "authoritative":\n        return None\n    from .injection_adapter import scan',
           'if True:\n        return None\n    from .injection_adapter import scan',
           ("tests/test_hostile.py::test_planted_attacks_are_rejected_by_the_injection_gate_by_name",)),
    Mutant("defang-identity", "src/ctxcli/engine/render.py",
           'return _FENCE_LIKE.sub(lambda m: "\\\\" + m.group(1) + "<<<", text)', "return text",
           ("tests/test_render.py::test_fence_like_lines_inside_evidence_are_escaped",)),
    Mutant("budget-exact-fit-rejected", "src/ctxcli/engine/pack.py",
           'if enforce_budget and item["tokens"] > remaining:', 'if enforce_budget and item["tokens"] >= remaining:',
           (B,)),
    Mutant("fulltext-tenant-predicate-dropped", "src/ctxcli/store/duckdb_store.py",
           "WHERE p.tenant_no = {tno} AND (p.supports & qm.mask) <> 0",
           "WHERE {tno} IS NOT NULL AND (p.supports & qm.mask) <> 0", (B,)),
    # --- boundaries the issue asked for -----------------------------------------------------
    Mutant("validity-start-exclusive", "src/ctxcli/engine/gates.py",
           "early = o.valid_from_us is not None and o.valid_from_us > c.as_of_us",
           "early = o.valid_from_us is not None and o.valid_from_us >= c.as_of_us", (B,)),
    Mutant("freshness-at-max-age-stale", "src/ctxcli/engine/gates.py",
           "c.as_of_us - o.observed_us > o.max_age_s * 1_000_000",
           "c.as_of_us - o.observed_us >= o.max_age_s * 1_000_000", (B,)),
    # --- a few more -------------------------------------------------------------------------
    Mutant("redact-first-match-only", "src/ctxcli/util/masking.py",
           "            rx = self.later\n", "            break\n", (B,)),
    Mutant("structured-tenant-predicate-dropped", "src/ctxcli/store/duckdb_store.py",
           "SELECT key, tenant_id, kind, doc_id FROM k WHERE tenant_id = $tenant",
           "SELECT key, tenant_id, kind, doc_id FROM k WHERE $tenant IS NOT NULL", (B,)),
    Mutant("vector-tenant-predicate-dropped", "src/ctxcli/store/duckdb_vector.py",
           "WHERE v.tenant_id = $tenant)", "WHERE $tenant IS NOT NULL)",
           ("tests/test_vector.py::test_another_tenants_near_identical_text_never_becomes_a_candidate",
            "tests/test_access_rules.py::test_every_channel_applies_every_access_rule_before_its_limit_on_duckdb")),
    Mutant("replay-ignores-embedding-model", "src/ctxcli/postmortem/compare.py",
           '"store.embedding.version",\n                  "store.embedding.weights_sha256"]', '"store.embedding.version"]',
           ("tests/test_vector.py::test_replay_reports_drift_when_the_model_hash_changes",)),
    Mutant("scope-gate-off", "src/ctxcli/engine/gates.py",
           "missing = sorted(set(o.required_scopes) - c.scopes)", "missing = []",
           ("tests/test_investigate.py::test_restricted_subject_is_insufficient_and_leaks_nothing",
            B + "::test_the_access_gates_still_reject_what_the_statements_should_have_withheld")),
    Mutant("integrity-gate-off", "src/ctxcli/engine/gates.py",
           "if actual != o.content_hash:", "if False:",
           ("tests/test_hostile.py::test_tampered_content_is_rejected_at_the_integrity_gate",)),
    Mutant("duplicate-gate-off", "src/ctxcli/engine/pack.py",
           "if o.dedup_hash in state.dedup:", "if False:",
           (B,)),
    Mutant("knowledge-time-off", "src/ctxcli/engine/gates.py",
           "if c.known_at_us is not None and o.observed_us > c.known_at_us:", "if False:",
           ("tests/test_investigate.py::test_known_at_excludes_objects_observed_later",)),
    Mutant("compression-off", "src/ctxcli/engine/compress.py",
           "def try_compress(item: dict[str, Any], o, remaining: int, pb, count: Callable[[str], int])"
           " -> dict[str, Any] | None:\n",
           "def try_compress(item: dict[str, Any], o, remaining: int, pb, count: Callable[[str], int])"
           " -> dict[str, Any] | None:\n    return None\n", ("tests/test_compress.py",)),
    Mutant("held-evidence-readmitted", "src/ctxcli/engine/builder.py",
           "if rej is None and eid in st.held:", "if False:",
           (B + "::test_one_agent_step_is_the_first_round_of_the_same_stages",)),
    Mutant("adhoc-replay-reads-case-file", "src/ctxcli/postmortem/replay.py",
           'if lp.request.get("adhoc") is True:\n        return _adhoc', 'if False:\n        return _adhoc',
           ("tests/test_adhoc.py::test_adhoc_rerun_is_byte_identical_and_every_postmortem_command_works",)),
    Mutant("cjk-stop-words-off", "src/ctxcli/engine/plan.py",
           "rest = strip_function_words(_IDENT.sub(", "rest = str(_IDENT.sub(",
           ("tests/test_stopwords.py::test_cjk_questions_give_content_terms_not_function_words",)),
    Mutant("coverage-first-off", "src/ctxcli/engine/builder.py",
           "coverage_first=bc.apply_gates,", "coverage_first=False,",
           ("tests/test_investigate.py::test_tight_budget_admits_one_item_per_required_type_before_extras",)),
    Mutant("control-chars-raw", "src/ctxcli/engine/render.py",
           'return _CTRL.sub(lambda m: "\\\\x%02x"', 'return text or _CTRL.sub(lambda m: "\\\\x%02x"',
           ("tests/test_render.py::test_control_characters_in_evidence_are_shown_as_escapes",)),
    # --- the PostgreSQL backend (issue 20; its tests skip without PostgreSQL binaries) -------
    Mutant("pg-fulltext-tenant-predicate-dropped", "src/ctxcli/store/pg_store.py",
           "WHERE p.tenant_no = {tno} AND p.termid IN ({termids})",
           "WHERE {tno} IS NOT NULL AND p.termid IN ({termids})",
           ("tests/test_postgres.py::test_a_second_tenant_never_appears",)),
    Mutant("pg-walk-fanout-ignored", "src/ctxcli/store/pg_store.py",
           "WHERE r.tenant_id = %(tenant)s AND w.depth < %(max_hops)s AND w.rn <= %(fanout)s",
           "WHERE r.tenant_id = %(tenant)s AND w.depth < %(max_hops)s",
           ("tests/test_postgres.py::test_the_walk_follows_the_same_rules_on_both_backends",)),
    Mutant("pg-row-level-security-open", "src/ctxcli/store/pg_store.py",
           'f"CREATE POLICY ctx_tenant ON {table} USING ({_TENANT} IS NULL OR {own})"',
           'f"CREATE POLICY ctx_tenant ON {table} USING (true)"',
           ("tests/test_postgres.py::test_row_level_security_is_a_second_line_for_an_ordinary_role",)),
    Mutant("pg-password-shown", "src/ctxcli/util/passwords.py",
           'out = _PW_URL.sub(lambda m: m["pre"] + "***" + m["post"], str(text))', "out = str(text)",
           ("tests/test_postgres.py::test_the_password_is_never_printed",
            "tests/test_exit_codes.py::test_the_error_handler_masks_passwords_without_the_postgresql_backend")),
    Mutant("unlinked-candidate-never-reconsidered", "src/ctxcli/engine/builder.py",
           'if rej.gate == "relevance" and rej.reason == "not_linked_to_case":', "if False:",
           ("tests/test_vector.py::test_a_candidate_dropped_as_unlinked_is_admitted_when_a_later_round_links_it",)),
    Mutant("walk-edge-authorisation-dropped", "src/ctxcli/store/duckdb_store.py",
           "NULL\n  AND list_contains(CAST($access_ok AS INTEGER[]), access_id)\n",
           "NULL\n  AND (list_contains(CAST($access_ok AS INTEGER[]), access_id) OR true)\n",
           ("tests/test_hostile.py::test_an_edge_the_subject_may_not_see_is_never_walked",)),
    Mutant("walk-seed-of-unreadable-source", "src/ctxcli/store/duckdb_store.py",
           "FROM e\nWHERE tenant_id = $tenant AND list_contains(CAST($readable AS VARCHAR[]), source_id)",
           "FROM e\nWHERE tenant_id = $tenant AND (list_contains(CAST($readable AS VARCHAR[]), source_id) OR true)",
           ("tests/test_hostile.py",)),
    Mutant("bm25-tie-to-larger-doc-id", "src/ctxcli/store/duckdb_store.py",
           "{{'score': score, 'neg': -doc_id}}", "{{'score': score, 'neg': doc_id}}",
           ("tests/test_bm25_plan.py",)),
    # --- issue 27: masks (tests/test_hostile_masks.py) ---------------------------------------
    Mutant("index-built-from-unmasked-text", "src/ctxcli/load/derive.py",
           '    policy = o.get("_redact")\n    if not policy:', '    policy = None\n    if not policy:',
           (M + "::test_a_masked_number_is_not_confirmed_by_ranks_from_the_cli",
            M + "::test_the_index_holds_no_term_of_a_masked_span")),
    Mutant("vectors-reembedded-from-unmasked-text", "src/ctxcli/load/vectors.py",
           "return mask(t, masks[sid]) if t and sid in masks else t", "return t",
           (M + "::test_vectors_made_at_the_end_of_a_load_are_made_from_masked_text",)),
    Mutant("unmasked-terms-for-every-subject", "src/ctxcli/engine/retrieve.py",
           "return [g for g, scopes in con.mask_groups() if set(scopes or []) & access.scopes]",
           "return [g for g, scopes in con.mask_groups()]",
           (M + "::test_a_masked_number_is_not_confirmed_by_ranks_from_the_cli",
            M + "::test_a_masked_number_is_not_confirmed_by_ranks_through_the_adhoc_question")),
    Mutant("unmasked-postings-never-scanned", "src/ctxcli/store/duckdb_store.py",
           'postings=_POSTINGS_UNMASKED.format(grps=grps) if grps else "postings",', 'postings="postings",',
           (M + "::test_a_subject_holding_the_unmasking_scope_finds_a_masked_number_by_full_text",)),
    Mutant("unmasked-terms-not-copied-on-reuse", "src/ctxcli/load/reuse.py",
           '    con.execute("INSERT INTO raw_rows SELECT d.doc_id', '    0 and con.execute("INSERT INTO raw_rows SELECT d.doc_id',
           ("tests/test_incremental.py::test_incremental_load_equals_full_load",)),
    Mutant("numeric-facts-unmasked", "src/ctxcli/util/masking.py",
           "        return v if m == s else m\n", "        return v\n",
           (M + "::test_numeric_facts_fact_names_and_full_width_digits_are_masked",)),
    Mutant("fact-names-unmasked", "src/ctxcli/util/masking.py",
           "{mask(k, pats, counts) if isinstance(k, str) else k: mask_value(x, pats, counts)",
           "{k: mask_value(x, pats, counts)",
           (M + "::test_numeric_facts_fact_names_and_full_width_digits_are_masked",)),
    Mutant("mask-without-normalisation", "src/ctxcli/util/masking.py",
           '    out = normalise(text)\n', '    out = text\n',
           (M + "::test_numeric_facts_fact_names_and_full_width_digits_are_masked",)),
    Mutant("mask-on-backtracking-engine", "src/ctxcli/util/masking.py",
           "    return Compiled(source)\n",
           "    import regex\n    rx = regex.compile(source)\n"
           "    return type('C', (), {'subn': lambda self, r, t: rx.subn(lambda m: r, t)})()\n",
           (M + "::test_a_catastrophic_pattern_runs_in_bounded_work",)),
    Mutant("unbounded-pattern-accepted", "src/ctxcli/util/masking.py",
           '            raise PatternError(f"not a pattern ctx can run in linear time (RE2): {msg}") from None',
           '            self.first = self.later = None; return',
           (M + "::test_a_pattern_the_linear_engine_cannot_run_is_refused_by_file_and_field",)),
    Mutant("replacement-unchecked", "src/ctxcli/util/masking.py",
           '    if "\\\\" in repl or any(', '    if False and any(',
           (M + "::test_a_replacement_that_is_not_literal_text_is_refused",)),
    Mutant("yaml-non-finite-accepted", "src/ctxcli/util/yamlio.py",
           '    if v != v or v in (float("inf"), float("-inf")):', '    if False:',
           (M + "::test_a_non_finite_yaml_fact_is_refused_with_its_position",)),
    Mutant("expr-size-unbounded", "src/ctxcli/answer/expr.py",
           "        if _size_of(n.op, a, b) > MAX_SIZE:", "        if False:",
           (M + "::test_every_intermediate_value_of_an_expression_is_bounded",)),
    Mutant("expr-64-bit-unchecked", "src/ctxcli/answer/expr.py",
           "not _INT_MIN <= v <= _INT_MAX:\n        raise", "False:\n        raise",
           (M + "::test_every_intermediate_value_of_an_expression_is_bounded",)),
    Mutant("signing-key-encoding-unchecked", "src/ctxcli/runfolder.py",
           "    except UnicodeEncodeError:      # bytes", "    except LookupError:      # bytes",
           (M + "::test_a_signing_key_that_is_not_utf8_is_a_usage_error",)),
    Mutant("ctx-toml-range-unchecked", "src/ctxcli/answer/model.py",
           "    if not (lo <= v <= hi):", "    if False:",
           (M + "::test_bad_ctx_toml_values_are_one_line_usage_errors",)),
    Mutant("ctx-toml-type-unchecked", "src/ctxcli/answer/model.py",
           "    if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):",
           "    if False:",
           (M + "::test_bad_ctx_toml_values_are_one_line_usage_errors",)),
    Mutant("serve-config-control-characters", "src/ctxcli/serve/config.py",
           "(not data[k] or any(ord(c) < 32 for c in data[k]))", "False",
           (M + "::test_bad_serve_config_paths_are_refused_before_serving",)),
    Mutant("bm25-unmasked-term-of-another-tenant", "src/ctxcli/store/duckdb_store.py",
           'FROM t WHERE tenant_no = {tno} GROUP BY', 'FROM t WHERE {tno} IS NOT NULL GROUP BY',
           (M + "::test_unmasked_terms_of_another_tenant_never_reach_the_query",)),
    Mutant("bm25-term-of-another-tenant", "src/ctxcli/store/duckdb_store.py",
           'FROM t WHERE tenant_no = {tno}\n"""', 'FROM t WHERE {tno} IS NOT NULL\n"""',
           ("tests/test_bm25_plan.py::test_other_tenants_terms_never_reach_the_query",)),
    # --- the answer validator (issue 28 items 5 and 7, issue 27 items 5, 9, 15) --------------
    Mutant("answer-digit-run-inside-value", "src/ctxcli/answer/validate.py",
           "if len(n) >= 4 and _PARTS.search(n) and any(n in h for h in hay if len(h) > len(n)):",
           "if len(n) >= 4 and any(n in h for h in hay if len(h) > len(n)):",
           (V + "::test_a_digit_run_inside_a_longer_value_is_not_that_value",)),
    Mutant("answer-ids-in-text-unchecked", "src/ctxcli/answer/validate.py",
           'cited = list(dict.fromkeys(list(c.get("evidence") or []) + _EV_ID.findall(text)))',
           'cited = list(dict.fromkeys(list(c.get("evidence") or [])))',
           (V + "::test_ids_written_in_the_claim_text_are_checked_like_the_evidence_list",)),
    Mutant("answer-user-supplied-fact-grade", "src/ctxcli/answer/validate.py",
           'FACT_GRADE = ("authoritative", "operational", "internal")',
           'FACT_GRADE = ("authoritative", "operational", "internal", "user_supplied")',
           (V + "::test_only_fact_grade_trust_levels_support_a_fact",)),
    Mutant("answer-derived-facts-on-one-item", "src/ctxcli/answer/validate.py",
           "if ev_set and ev_set <= gs:\n            texts += _flatten(facts)",
           "if ev_set and ev_set & gs:\n            texts += _flatten(facts)",
           (V + "::test_a_derived_facts_values_need_all_of_its_evidence_cited",)),
    Mutant("answer-value-binding-off", "src/ctxcli/answer/validate.py",
           "for v, field, want in _bound_values(text, _fields(good, by_id, derived)):",
           "for v, field, want in []:",
           (V + "::test_a_value_must_be_the_cited_items_value_for_the_field_it_names",)),
    Mutant("answer-numbers-not-normalised", "src/ctxcli/answer/validate.py",
           "text = numbers.normalise(text)", "text = str(text)",
           (V + "::test_numbers_are_normalised_before_they_are_compared",)),
    Mutant("answer-sign-dropped", "src/ctxcli/answer/validate.py",
           '_SIGN = r"(?:(?<![A-Za-z0-9_.:/+#^-])-(?=[0-9]))?"', '_SIGN = r""',
           (V + "::test_numbers_are_normalised_before_they_are_compared",)),
    Mutant("answer-superscript-folded", "src/ctxcli/answer/numbers.py",
           "text = text.translate(_SUPER)", "text = str(text)",
           (V + "::test_numbers_are_normalised_before_they_are_compared",)),
    Mutant("answer-summary-values-unchecked", "src/ctxcli/answer/validate.py",
           "sv += _check_values(summary, sorted(all_good | set(s_good)), by_id, derived, req_texts + counts, None)",
           "sv += []", (V + "::test_the_summary_is_checked_like_a_claim",)),
    Mutant("answer-unknown-keys-accepted", "src/ctxcli/answer/validate.py",
           "        if k not in ANSWER_KEYS:", "        if False:",
           (V + "::test_unknown_keys_are_refused_not_ignored",)),
    Mutant("answer-disagreement-accepted", "src/ctxcli/answer/validate.py",
           'into, hint = (warnings, "") if accept_disagreement else', 'into, hint = (warnings, "") if True else',
           (A + "::test_a_changed_verdict_or_action_is_a_rejection_without_the_flag",)),
    Mutant("answer-file-read-unbounded", "src/ctxcli/answer/ask.py",
           "raw = read_regular(Path(path), MAX_ANSWER_BYTES)", "raw = Path(path).read_bytes()",
           (A + "::test_validate_answer_refuses_a_fifo_a_device_and_a_huge_file_at_once[too_big]",)),
    # --- ctx ask transport and keys (issue 27 items 6, 7, 10) ---------------------------------
    Mutant("ask-re-ask-recorded-endpoint", "src/ctxcli/answer/ask.py",
           'cfg = resolve_config(endpoint=endpoint, model=name, what="--re-ask")',
           'cfg = resolve_config(endpoint=endpoint or rec.get("endpoint"), model=name, what="--re-ask")',
           (A + "::test_replay_revalidates_offline_and_re_asks",)),
    Mutant("ask-timeout-per-read", "src/ctxcli/answer/model.py",
           "return await asyncio.wait_for(attempt(), timeout=remaining)", "return await attempt()",
           (L + "::test_timeout_is_the_whole_call_even_for_a_slow_drip_server",)),
    Mutant("ask-response-uncapped", "src/ctxcli/answer/model.py",
           "if total > cap:\n                        raise _TooLarge()",
           "if False:\n                        raise _TooLarge()",
           (L + "::test_a_response_over_the_cap_is_refused",)),
    Mutant("ask-declared-length-ignored", "src/ctxcli/answer/model.py",
           "if declared > cap:\n                    raise _TooLarge()",
           "if False:\n                    raise _TooLarge()",
           (L + "::test_a_response_over_the_cap_is_refused",)),
    Mutant("ask-json-depth-unbounded", "src/ctxcli/answer/model.py",
           "            if d > limit:\n", "            if False:\n",
           (L + "::test_a_hostile_reply_is_a_recorded_unparseable_answer_never_exit_70",)),
    Mutant("ask-key-not-stripped", "src/ctxcli/answer/model.py",
           'key = key.strip(" \\t\\r\\n")', "key = str(key)",
           (L + "::test_a_key_ending_in_cr_lf_is_used_without_them_and_never_printed",)),
    Mutant("ask-key-partial-echo-kept", "src/ctxcli/answer/model.py",
           "    n = PARTIAL_ECHO\n", "    n = 10**6\n",
           (L + "::test_partial_and_encoded_echoes_of_the_key_are_scrubbed_from_stderr",)),
    Mutant("ask-key-base64-echo-kept", "src/ctxcli/answer/model.py",
           "for enc in (base64.b64encode, base64.urlsafe_b64encode):", "for enc in ():",
           (L + "::test_partial_and_encoded_echoes_of_the_key_never_reach_the_run_files",)),
    Mutant("ask-trace-events-unscrubbed", "src/ctxcli/answer/ask.py",
           "    events = _scrubbed(events, cfg.api_key)\n", "    events = list(events)\n",
           (L + "::test_a_key_echoed_in_the_usage_never_reaches_the_trace",)),
    Mutant("ask-bad-port-unchecked", "src/ctxcli/answer/model.py",
           'if port == 0 or (port is None and u.netloc.rstrip("]").endswith(":")):', "if False:",
           (L + "::test_a_bad_endpoint_port_or_ipv6_address_is_one_line_exit_2",)),
    Mutant("ask-model-json-unchecked", "src/ctxcli/answer/ask.py",
           "if not isinstance(req, dict) or not isinstance(resp, dict):", "if False:",
           (L + "::test_a_malformed_model_json_in_replay_is_one_line_exit_2",)),
    # --- governance on data nobody here wrote (issue 28, items 2-4, 6 and 7) ----------------
    Mutant("freshness-ignores-known-at", "src/ctxcli/engine/builder.py",
           "bc.req.as_of.tzinfo, bc.gctx.known_at_us)", "bc.req.as_of.tzinfo)", (G,)),
    Mutant("supersession-ignored", "src/ctxcli/engine/gates.py",
           "    if superseded:", "    if False:", (G,)),
    Mutant("supersession-ignores-known-at", "src/ctxcli/engine/hydrate.py",
           "and (known_at_us is None or m[8] <= known_at_us)", "and True", (G,)),
    Mutant("pack-names-other-tenants-sources", "src/ctxcli/pipeline.py",
           "srcs = {s: d for s, d in con.source_digests().items() if s in known}",
           "srcs = dict(con.source_digests())", (G,)),
    Mutant("pack-names-sources-above-clearance", "src/ctxcli/pipeline.py",
           "if not level or clearance_rank(level) <= clearance_rank(clearance)}", "}", (G,)),
    Mutant("gap-ignores-clearance", "src/ctxcli/engine/builder.py",
           'w["by_gate"][g] = max(w["by_gate"].get(g, 0), run.withheld[g])',
           'w["by_gate"][g] = 0 if g == "classification" else max(w["by_gate"].get(g, 0), run.withheld[g])', (G,)),
    Mutant("gap-without-lowest-clearance", "src/ctxcli/engine/retrieve.py",
           "                run.clearance = levels[src]", "                pass", (G,)),
    Mutant("gap-counts-not-per-gate", "src/ctxcli/engine/render.py",
           "if len(needs) > 1 and by_gate:", "if False:", (G,)),
    Mutant("check-clearance-warning-off", "src/ctxcli/check.py",
           "if srcs and all(clearance_rank(lv) > clearance_rank(clearance) for lv in srcs.values()):",
           "if srcs and all(clearance_rank(lv) > clearance_rank(clearance) for lv in []):", (G,)),
    Mutant("reload-ignores-manifest-edit", "src/ctxcli/load/parse.py",
           'digest.update(b"manifest\\0" + mbytes + b"\\0")', 'digest.update(b"manifest\\0")', (G,)),
    Mutant("walk-ignores-relation-source-clearance", "src/ctxcli/engine/retrieve.py",
           "if sid in readable and dst_sid in readable", "if (sid in readable or sid not in cleared) and dst_sid in readable",
           (G,)),
    Mutant("known-at-boundary-flipped", "src/ctxcli/engine/gates.py",
           "o.observed_us > c.known_at_us:", "o.observed_us >= c.known_at_us:", (G,)),
    Mutant("walk-relation-end-inclusive", "src/ctxcli/store/duckdb_store.py",
           "\n  AND (valid_from_us IS NULL OR valid_from_us <= $asof) AND (valid_to_us IS NULL OR valid_to_us > $asof)",
           "\n  AND (valid_from_us IS NULL OR valid_from_us <= $asof) AND (valid_to_us IS NULL OR valid_to_us >= $asof)",
           (G,)),
    Mutant("duplicate-case-sensitive", "src/ctxcli/load/parse.py",
           '_WS.sub(" ", text).strip().casefold()', '_WS.sub(" ", text).strip()', (G,)),
    Mutant("custom-budget-reserve-to-evidence", "src/ctxcli/engine/builder.py",
           'parts["evidence"] = total - sum(parts.values())',
           'parts["evidence"] = total - sum(parts.values()) + parts["response_reserve"]', (G,)),
    Mutant("param-without-equals-accepted", "src/ctxcli/params.py",
           "if not sep or not re.fullmatch(", "if not re.fullmatch(", (G,)),
    Mutant("source-without-observation-fresh", "src/ctxcli/engine/freshness.py",
           '"stale": age_s is None or age_s > sla_s', '"stale": age_s is not None and age_s > sla_s', (G,)),
    # --- access rules before top-k (issue 28 item 1): each rule in each channel's statement ----
    Mutant("duck-about-access-dropped", "src/ctxcli/store/duckdb_store.py",      # structured and graph hits
           "g AS (SELECT o.*, {ok} AS ok", "g AS (SELECT o.*, true AS ok", (AR_DUCK,)),
    Mutant("duck-bm25-access-dropped", "src/ctxcli/store/duckdb_store.py",
           "SELECT s.qi, s.doc_id, s.score, {ok} AS ok", "SELECT s.qi, s.doc_id, s.score, true AS ok", (AR_DUCK,)),
    Mutant("duck-vector-access-dropped", "src/ctxcli/store/duckdb_vector.py",
           "{{ok}} AS ok", "true AS ok", (AR_DUCK,)),
    Mutant("duck-scope-rule-dropped", "src/ctxcli/store/access.py",
           'DUCK_READABLE = f"({DUCK_SCOPE} AND {DUCK_PURPOSE} AND {DUCK_SOURCE})"',
           'DUCK_READABLE = f"({DUCK_PURPOSE} AND {DUCK_SOURCE})"', (AR_DUCK,)),
    Mutant("duck-purpose-rule-dropped", "src/ctxcli/store/access.py",
           'DUCK_READABLE = f"({DUCK_SCOPE} AND {DUCK_PURPOSE} AND {DUCK_SOURCE})"',
           'DUCK_READABLE = f"({DUCK_SCOPE} AND {DUCK_SOURCE})"', (AR_DUCK,)),
    Mutant("duck-source-rule-dropped", "src/ctxcli/store/access.py",
           'DUCK_READABLE = f"({DUCK_SCOPE} AND {DUCK_PURPOSE} AND {DUCK_SOURCE})"',
           'DUCK_READABLE = f"({DUCK_SCOPE} AND {DUCK_PURPOSE})"', (AR_DUCK,)),
    Mutant("duck-bm25-widening-off", "src/ctxcli/store/duckdb_store.py",
           "FROM ranked WHERE nv < {lim} AND rn <= {cap}", "FROM ranked WHERE rn <= {lim}", (AR_WIDEN,)),
    Mutant("duck-structured-widening-off", "src/ctxcli/store/duckdb_store.py",
           "out.extend((qid, r[0]) for r in widened(match, limit, lambda r: r[5]))",
           "out.extend((qid, r[0]) for r in match[:limit])", (AR_WIDEN,)),
    Mutant("duck-vector-widening-off", "src/ctxcli/store/duckdb_vector.py",
           "FROM ranked WHERE nv < lim AND rn <= lim * {WIDEN_CAP}", "FROM ranked WHERE rn <= lim", (AR_WIDEN,)),
    Mutant("widening-uncapped", "src/ctxcli/store/access.py",
           "if n_valid >= limit or len(out) >= limit * WIDEN_CAP:", "if n_valid >= limit:", (AR_WIDEN,)),
    Mutant("graph-widening-off", "src/ctxcli/engine/retrieve.py",
           "            order = widened(sorted(best.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[1][2], kv[0])), lim,\n"
           "                            lambda kv: valid[kv[0]])",
           "            order = sorted(best.items(), key=lambda kv: (kv[1][0], kv[1][1], kv[1][2], kv[0]))[:lim]",
           ("tests/test_access_rules.py::test_the_graph_channel_widens_past_records_not_valid_at_as_of",)),
    Mutant("withheld-never-counted", "src/ctxcli/engine/retrieve.py",
           "        run.withheld[gate] = run.withheld.get(gate, 0) + int(n)", "        pass",
           ("tests/test_access_rules.py::test_a_missing_type_still_says_how_many_were_withheld_for_access",)),
    Mutant("withheld-gate-order-swapped", "src/ctxcli/engine/retrieve.py",
           '        elif levels[src] is None or not access.cleared(levels[src]):\n            gate = "classification"\n',
           '        elif (levels[src] is None or not access.cleared(levels[src])) and access.purpose in (purposes or []):\n'
           '            gate = "classification"\n',
           (AR_DUCK,)),
    Mutant("readable-ignores-clearance", "src/ctxcli/engine/retrieve.py",
           "if enabled and access.cleared(level))))", "if enabled)))", (AR_DUCK,)),
    Mutant("pg-structured-access-dropped", "src/ctxcli/store/pg_store.py",
           "kd.on_seed, {{ok}} AS ok", "kd.on_seed, true AS ok", (AR_PG,)),
    Mutant("pg-bm25-access-dropped", "src/ctxcli/store/pg_store.py",
           "SELECT s.qi, s.doc_id, s.score, {ok} AS ok", "SELECT s.qi, s.doc_id, s.score, true AS ok", (AR_PG,)),
    Mutant("pg-vector-access-dropped", "src/ctxcli/store/pg_store.py",
           "SELECT s.qi, s.lim, s.doc_id, s.score, {{ok}} AS ok", "SELECT s.qi, s.lim, s.doc_id, s.score, true AS ok",
           (AR_PG,)),
    Mutant("pg-graph-hits-access-dropped", "src/ctxcli/store/pg_store.py",
           "SELECT k.key, o.doc_id, o.supports, {ok} AS ok", "SELECT k.key, o.doc_id, o.supports, true AS ok",
           (AR_PG,)),
    Mutant("pg-scope-rule-dropped", "src/ctxcli/store/access.py",
           'PG_READABLE = f"({PG_SCOPE} AND {PG_PURPOSE} AND {PG_SOURCE})"',
           'PG_READABLE = f"({PG_PURPOSE} AND {PG_SOURCE})"', (AR_PG,)),
    Mutant("pg-purpose-rule-dropped", "src/ctxcli/store/access.py",
           'PG_READABLE = f"({PG_SCOPE} AND {PG_PURPOSE} AND {PG_SOURCE})"',
           'PG_READABLE = f"({PG_SCOPE} AND {PG_SOURCE})"', (AR_PG,)),
    Mutant("pg-source-rule-dropped", "src/ctxcli/store/access.py",
           'PG_READABLE = f"({PG_SCOPE} AND {PG_PURPOSE} AND {PG_SOURCE})"',
           'PG_READABLE = f"({PG_SCOPE} AND {PG_PURPOSE})"', (AR_PG,)),
    Mutant("pg-vector-tenant-predicate-dropped", "src/ctxcli/store/pg_store.py",
           "  WHERE v.tenant_id = %(tenant)s),", "  WHERE %(tenant)s IS NOT NULL),", (PG_TENANT,)),
    Mutant("pg-graph-hits-tenant-predicate-dropped", "src/ctxcli/store/pg_store.py",
           "AND k.kind = 's' AND k.tenant_id = %(tenant)s)", "AND k.kind = 's')", (PG_TENANT,)),
    Mutant("pg-structured-tenant-predicate-dropped", "src/ctxcli/store/pg_store.py",
           "  WHERE k.key = ANY(%(allkeys)s::text[]) AND k.tenant_id = %(tenant)s\n",
           "  WHERE k.key = ANY(%(allkeys)s::text[])\n", (PG_TENANT,)),
    Mutant("pg-bm25-widening-off", "src/ctxcli/store/pg_store.py",
           "FROM ranked WHERE nv < {lim} AND rn <= {cap}", "FROM ranked WHERE rn <= {lim}", (AR_PG,)),
    Mutant("pg-structured-widening-off", "src/ctxcli/store/pg_store.py",
           "SELECT qid, doc_id, rn, NULL::text, NULL::text[], NULL::text[], NULL::bigint\nFROM ranked WHERE nv < %(lim)s AND rn <= %(lim)s * {WIDEN_CAP}",
           "SELECT qid, doc_id, rn, NULL::text, NULL::text[], NULL::text[], NULL::bigint\nFROM ranked WHERE rn <= %(lim)s",
           (AR_PG,)),
    Mutant("pg-vector-widening-off", "src/ctxcli/store/pg_store.py",
           "FROM ranked WHERE nv < lim AND rn <= lim * {WIDEN_CAP}", "FROM ranked WHERE rn <= lim", (AR_PG,)),
    # --- first run (issue 31): init, the project, runs --------------------------------------
    Mutant("mistyped-db-creates-a-store", "src/ctxcli/api.py",
           "    if db is not None:\n        raise StoreError(f\"no store at", "    if False:\n        raise StoreError(f\"no store at",
           ("tests/test_init.py::test_a_mistyped_db_is_an_error_and_creates_nothing",)),
    Mutant("init-overwrites", "src/ctxcli/scaffold/__init__.py",
           "        if os.path.lexists(target):", "        if False:",
           ("tests/test_init.py::test_init_never_overwrites_and_writes_nothing_when_a_file_is_in_the_way",)),
    Mutant("load-locks-before-manifests-checked", "src/ctxcli/api.py",
           "    require_manifests(mdir, root)   # before", "    pass   # before",
           ("tests/test_init.py::test_an_empty_folder_says_which_command_to_run_and_a_failed_load_leaves_nothing",)),
    Mutant("project-not-found-from-subfolder", "src/ctxcli/paths.py",
           "    for folder in (here, *here.parents):", "    for folder in (here,):",
           ("tests/test_init.py::test_the_project_is_found_from_a_subfolder_through_ctx_toml",)),
    Mutant("latest-is-the-oldest", "src/ctxcli/runs.py",
           "    return max(folders, key=lambda f: (_mtime(f), f.as_posix()))",
           "    return min(folders, key=lambda f: (_mtime(f), f.as_posix()))",
           ("tests/test_init.py::test_runs_lists_the_project_runs_and_latest_names_the_newest",)),
    Mutant("replay-ignores-the-packs-project", "src/ctxcli/paths.py",
           '    found = None if os.environ.get("CTX_ROOT") else find_project(Path(path).parent)', "    found = None",
           ("tests/test_init.py::test_replay_from_outside_the_project_reads_the_packs_own_project",)),
    Mutant("eval-variant-filter-ignored", "src/ctxcli/evaluate.py",
           "            if opts.variants and (variant or BASE) not in opts.variants:", "            if False:",
           ("tests/test_eval_select.py",)),
    Mutant("junit-gated-failure-as-skipped", "src/ctxcli/eval_junit.py",
           '            if r["gated"]:\n', '            if not r["gated"]:\n', ("tests/test_eval_select.py",)),
    # (the pool workers' SIGINT guard has a test, test_progress.py::test_ctrl_c_during_a_load_…, but
    # no mutant: with the guard removed the worker tracebacks depend on where the signal lands, so
    # the test fails on most runs, not all — a mutant here would make CI flaky)
    Mutant("plain-progress-talks-at-once", "src/ctxcli/cli/cmd_load.py",
           "        if now - self.last >= self.every:", "        if True:", ("tests/test_progress.py",)),
    Mutant("wide-table-never-blocks", "src/ctxcli/cli/console.py",
           "    if need <= c.width:", "    if True:", ("tests/test_columns.py",)),
    Mutant("otlp-export-status-ignored", "src/ctxcli/otel.py",
           "    if r.status_code >= 300:", "    if False:", ("tests/test_otlp_http.py",)),
    Mutant("otlp-traces-path-not-added", "src/ctxcli/otel.py",
           'endpoint.rstrip("/") + "/v1/traces"', 'endpoint.rstrip("/")', ("tests/test_otlp_http.py",)),
    Mutant("report-phone-keeps-three-columns", "src/ctxcli/report/templates/style.css",
           "  .verdict-row { grid-template-columns: 1fr; }\n", "", ("tests/test_report.py::test_the_page_fits_a_phone_at_390_px",)),
    Mutant("report-print-keeps-sections-collapsed", "src/ctxcli/report/templates/style.css",
           "  details::details-content { content-visibility: visible; display: block; }\n", "",
           ("tests/test_report.py::test_print_opens_every_collapsed_section",)),
    Mutant("uncovered-claims-not-warned", "src/ctxcli/answer/validate.py",
           "    if uncovered:\n        warnings.append(", "    if False:\n        warnings.append(",
           ("tests/test_ask.py::test_a_changed_verdict_or_action_is_a_rejection_without_the_flag",)),
    # --- ctx serve against a hostile caller and a shared runs folder (issue 27 items 1, 2; 28 item 7)
    Mutant("serve-case-path-accepted", "src/ctxcli/project.py",
           "if not by_id and p.suffix in (\".yaml\", \".yml\") and os.path.lexists(p):",
           "if p.suffix in (\".yaml\", \".yml\") and os.path.lexists(p):",
           ("tests/test_serve_hardening.py::test_case_argument_is_an_id_under_the_project_never_a_path",)),
    Mutant("serve-case-symlink-out-followed", "src/ctxcli/project.py",
           "if by_id and Path(os.path.realpath(cdir)) not in Path(os.path.realpath(path)).parents:",
           "if False:",
           ("tests/test_serve_hardening.py::test_a_case_file_that_links_out_of_the_cases_folder_is_refused_"
            "without_naming_its_target",)),
    Mutant("serve-case-of-another-tenant", "src/ctxcli/serve/tools.py",
           "if cfg.tenant is not None and c.tenant_id != cfg.tenant:", "if False:",
           ("tests/test_serve_hardening.py::test_a_case_of_another_tenant_is_refused_by_a_server_fixed_to_a_tenant",)),
    Mutant("serve-variant-own-purpose-accepted", "src/ctxcli/serve/tools.py",
           "(var.subject is not None or var.purpose is not None)", "(var.subject is not None)",
           ("tests/test_serve_hardening.py::test_a_variant_that_declares_only_its_own_purpose_is_refused_without_"
            "a_fixed_identity",)),
    Mutant("serve-other-subjects-pack-served", "src/ctxcli/serve/tools.py",
           "return own is not None and own == identity_of(lp.request)", "return True",
           ("tests/test_serve_hardening.py::test_servers_sharing_a_runs_folder_serve_only_their_own_packs",)),
    Mutant("serve-resource-reads-unaudited", "src/ctxcli/serve/server.py",
           '            audit.write("read_resource", args, "ok", pid)\n', "",
           ("tests/test_serve_hardening.py::test_resource_reads_fail_for_other_packs_and_are_audited",)),
    Mutant("serve-http-no-token-off-loopback", "src/ctxcli/serve/http.py",
           "if not loopback and token is None:", "if False:",
           ("tests/test_serve_hardening.py::test_http_off_loopback_is_refused_without_a_token_and_before_listening",)),
    Mutant("serve-http-token-unchecked", "src/ctxcli/serve/http.py",
           "return BearerTokenMiddleware(app, settings.token) if settings.token is not None else app", "return app",
           ("tests/test_serve_hardening.py::test_http_with_a_token_needs_it_on_every_request_and_checks_the_host_"
            "header",)),
    Mutant("serve-http-host-header-unchecked", "src/ctxcli/serve/http.py",
           "TransportSecuritySettings(enable_dns_rebinding_protection=True,",
           "TransportSecuritySettings(enable_dns_rebinding_protection=False,",
           ("tests/test_serve_hardening.py::test_http_with_a_token_needs_it_on_every_request_and_checks_the_host_"
            "header",)),

    # --- single-file outputs replace only what the same command wrote (issue 27 item 12)
    Mutant("output-file-overwrites-anything", "src/ctxcli/write.py",
           "if size > _RECOGNISE_MAX or len(head) > _RECOGNISE_MAX or not is_ours(head):", "if False:",
           ("tests/test_output_files.py",)),
    Mutant("render-out-recognises-any-json-list", "src/ctxcli/engine/render.py",
           "            and msgs[0][\"content\"].startswith(_FIRST_SECTION))", "            )",
           ("tests/test_output_files.py::test_render_out_never_replaces_a_file_ctx_render_did_not_write",)),

    # --- signed runs hold only what run.json lists; a configured key reads only signed runs (issue 27 item 4)
    Mutant("run-file-unlisted-read", "src/ctxcli/runfolder.py",
           "    fp = Path(folder) / name\n    if run is None:", "    fp = Path(folder) / name\n    if True:",
           ("tests/test_signed_runs.py::test_a_forged_model_answer_beside_a_signed_run_is_never_shown_as_part_of_it",)),
    Mutant("stripped-signature-accepted-with-key", "src/ctxcli/runfolder.py",
           "    if sig is None:\n        if signing_key(required=False) is not None:",
           "    if sig is None:\n        if False:",
           ("tests/test_signed_runs.py::test_with_the_key_set_a_stripped_signature_is_an_error_everywhere",)),
    Mutant("run-json-deleted-accepted-with-key", "src/ctxcli/postmortem/packfile.py",
           "        if signing_key(required=False) is not None:", "        if False:",
           ("tests/test_signed_runs.py::test_with_the_key_set_a_stripped_signature_is_an_error_everywhere",)),
    Mutant("replay-ignores-answer-json", "src/ctxcli/postmortem/replay.py",
           "return self.diff.same and self.answer_identical is not False", "return self.diff.same",
           ("tests/test_signed_runs.py::test_replay_compares_answer_json_with_the_rebuilt_answer",)),
    # --- a store loaded from older manifests is refused until `ctx load` (issue 27 item 13)
    Mutant("stale-manifests-ignored", "src/ctxcli/project.py",
           "    stale = stale_sources(con)\n    if stale:\n        shown", "    stale = []\n    if stale:\n        shown",
           ("tests/test_stale_manifests.py",)),
    Mutant("check-ignores-stale-store", "src/ctxcli/api.py",
           "        rep.problems += store_problems()", "        pass",
           ("tests/test_stale_manifests.py::test_a_tightened_manifest_stops_every_run_until_ctx_load",)),
    # --- the report shows bidi isolates as escapes (issue 28 item 7)
    Mutant("report-bidi-isolates-raw", "src/ctxcli/report/render.py",
           "or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069:", "or 0x202A <= o <= 0x202E:",
           ("tests/test_report.py::test_bidi_isolates_and_embeddings_in_a_title_are_shown_as_escapes",)),

    Mutant("list-cases-shows-other-tenants", "src/ctxcli/serve/tools.py",
           "            c = _read_own_case(cfg, f.stem)",
           '            c = __import__("ctxcli.api", fromlist=["api"]).read_case(f.stem, cfg.cases_dir, by_id=True)[0]',
           ("tests/test_serve.py::test_list_cases_and_playbooks_name_only_this_servers_tenant",)),
    Mutant("tools-not-read-only", "src/ctxcli/serve/server.py",
           "    read_only = ToolAnnotations(read_only_hint=True,", "    read_only = ToolAnnotations(read_only_hint=False,",
           ("tests/test_serve.py::test_tools_listed_with_typed_schemas_and_no_identity_arguments",)),
    # --- sources as they exist (issue 29): parsers, mappings, rules ----------------------------
    Mutant("table-tenant-column-not-filtered", "src/ctxcli/load/parsers/table.py",
           "return m.tenant_id if (not empty(t) and str(t) == m.tenant_id) else None", "return m.tenant_id",
           ("tests/test_parsers_table.py::test_csv_rows_become_objects_of_the_sources_tenant_only",
            "tests/test_parsers_json_export.py::test_one_object_per_ticket_and_per_nested_item_linked_to_the_parent")),
    Mutant("naive-time-assumed-utc", "src/ctxcli/load/parsers/mapping.py",
           "        if tz is None:\n            raise where.error(f\"{where.what} {name!r}: naive time",
           "        tz = tz or \"UTC\"\n        if tz is None:\n            raise where.error(f\"{where.what} {name!r}: naive time",
           ("tests/test_parsers_table.py::test_naive_time_without_a_zone_names_row_and_column",
            "tests/test_parsers_markdown.py::test_naive_time_without_a_zone_names_the_key")),
    Mutant("git-rename-new-identity", "src/ctxcli/load/parsers/git.py",
           "                ident = prev.identity", "                ident = new",
           ("tests/test_parsers_git.py::test_a_rename_keeps_the_documents_identity",)),
    Mutant("git-deletion-leaves-version-open", "src/ctxcli/load/parsers/git.py",
           "prev.until, prev.deleted = when, (commit, when)", "prev.deleted = (commit, when)",
           ("tests/test_parsers_git.py::test_a_deleted_file_ends_its_last_version_and_is_tombstoned",)),
    Mutant("sqlite-query-not-read-only", "src/ctxcli/load/parsers/table.py",
           "if len(stmts) != 1 or stmts[0].type != duckdb.StatementType.SELECT:", "if len(stmts) != 1:",
           ("tests/test_parsers_table.py::test_sqlite_table_and_read_only_query",)),
    Mutant("dangling-always-skipped", "src/ctxcli/load/build.py",
           'skip = ls.manifest.on_dangling == "skip"', "skip = True",
           ("tests/test_load_problems.py::test_a_dangling_reference_fails_the_load_by_default",)),
    Mutant("evidence-rule-facts-ignored", "src/ctxcli/load/evidence_rules.py",
           "        if r.facts:\n            facts = facts if", "        if False:\n            facts = facts if",
           ("tests/test_evidence_rules.py::test_the_bundled_raw_sources_get_their_evidence_types_by_rule",)),
    Mutant("load-stops-at-first-problem", "src/ctxcli/load/parsers/common.py",
           "    if problems is None or isinstance(e, LoadProblems):    # the limit was reached: stop here\n"
           "        raise e\n    problems.add(e)", "    raise e",
           ("tests/test_load_problems.py::test_every_bad_record_is_reported_in_one_load",)),
    Mutant("junit-overwrites-anything", "src/ctxcli/eval_junit.py",
           "    return raw.startswith(", "    return True or raw.startswith(",
           ("tests/test_eval_select.py::test_junit_replaces_only_an_earlier_junit_file",)),
    # --- issue 30: entity linking, aliases, CONTRADICTS -------------------------------------
    Mutant("linker-merges-ambiguous", "src/ctxcli/util/entity_match.py",
           "resolved = cands[0][0] if top >= accept and not rivals else None",
           "resolved = cands[0][0] if top >= accept else None",
           ("tests/test_linking.py::test_matcher_exact_fuzzy_ambiguous_and_weak",
            "tests/test_linking.py::test_linking_makes_mentions_with_method_and_confidence_and_keeps_ambiguous_unresolved")),
    Mutant("linker-ignores-accept", "src/ctxcli/util/entity_match.py",
           "resolved = cands[0][0] if top >= accept and not rivals else None",
           "resolved = cands[0][0] if top >= candidate and not rivals else None",
           ("tests/test_linking.py::test_matcher_exact_fuzzy_ambiguous_and_weak",)),
    Mutant("linked-edge-unattested", "src/ctxcli/load/build.py",
           '"evidence_object_id": x["object_id"], "source_id": sid',
           '"evidence_object_id": None, "source_id": sid',
           ("tests/test_linking.py::test_an_inferred_edge_from_an_unreadable_object_is_never_walked",
            "tests/test_linking.py::test_a_linked_edge_is_authorised_by_its_own_attesting_object")),
    Mutant("linker-reads-unmasked-text", "src/ctxcli/load/link.py",
           "title, content, keys = _indexed(o)", 'title, content, keys = o["title"], o["content"], o["keys"]',
           ("tests/test_linking.py::test_linking_reads_the_masked_text_only",)),
    Mutant("linking-source-reused", "src/ctxcli/load/build.py",
           '"relink:" + ls.digest if ls.manifest.linking', "ls.digest if ls.manifest.linking",
           ("tests/test_incremental.py::test_incremental_load_equals_full_load",)),
    Mutant("walk-ignores-min-confidence", "src/ctxcli/store/duckdb_store.py",
           "and dst not in path and conf >= least", "and dst not in path",
           ("tests/test_linking.py::test_templates_can_require_confidence_and_exclude_inferred_edges",)),
    Mutant("walk-walks-inferred", "src/ctxcli/store/duckdb_store.py",
           "and (inferred or method is None))", "and (inferred or True))",
           ("tests/test_linking.py::test_templates_can_require_confidence_and_exclude_inferred_edges",)),
    Mutant("pg-walk-ignores-min-confidence", "src/ctxcli/store/pg_store.py",
           "AND r.confidence >= st.least AND", "AND",
           ("tests/test_postgres.py::test_the_walk_follows_the_same_rules_on_both_backends",)),
    Mutant("seed-ambiguous-alias-picks-one", "src/ctxcli/engine/resolve.py",
           "if len(keys) == 1:", "if keys:",
           ("tests/test_linking.py::test_a_seed_named_by_an_alias_resolves_and_an_ambiguous_one_is_recorded",)),
    Mutant("entity-names-ignore-readable", "src/ctxcli/store/duckdb_store.py",
           "WHERE tenant_id = $tenant AND list_contains(CAST($readable AS VARCHAR[]), source_id){more}",
           "WHERE tenant_id = $tenant{more}",
           ("tests/test_linking.py::test_a_seed_named_by_an_alias_resolves_and_an_ambiguous_one_is_recorded",)),
    Mutant("fulltext-skips-canonical-key", "src/ctxcli/engine/plan.py",
           "list(business_keys) + named)", "list(business_keys))",
           ("tests/test_linking.py::test_owner_found_only_through_an_alias_and_question_alias_recorded",)),
    Mutant("contradicts-unauthorised", "src/ctxcli/store/duckdb_store.py",
           "  AND list_contains(CAST($access_ok AS INTEGER[]), r.access_id)\n  AND (r.valid_from_us",
           "  AND (r.valid_from_us",
           ("tests/test_linking.py::test_contradicts_attested_by_an_unreadable_object_is_not_surfaced",)),
    Mutant("contradicts-not-a-conflict", "src/ctxcli/answer/answer.py",
           "if f.conflicts or contradicts:", "if f.conflicts:",
           ("tests/test_linking.py::test_contradicts_between_admitted_items_is_surfaced",)),
    Mutant("git-emails-unmasked", "src/ctxcli/load/parsers/git.py",
           "        return [EMAIL_MASK]", "        return []",
           ("tests/test_parsers_git.py::test_author_and_committer_e_mails_are_masked_like_pii",
            "tests/test_incident.py::test_git_author_e_mails_reach_no_output_unmasked")),
    Mutant("git-email-mask-drops-manifest-scopes", "src/ctxcli/load/parsers/__init__.py",
           'base = m.redaction.model_dump(mode="json") if m.redaction is not None else {"patterns": []}',
           'base = {"patterns": []}',
           ("tests/test_parsers_git.py::test_a_manifest_redaction_lifts_the_e_mail_mask_for_its_scopes",)),
    Mutant("kept-row-ignores-text-change", "src/ctxcli/load/build.py",
           'if was is not None and was[1] == row_key(o["title"], o["content"], o["keys"]):',
           "if was is not None:",
           ("tests/test_incremental_rows.py::test_a_reload_derives_only_changed_records_and_equals_a_full_load",)),
    Mutant("kept-row-policy-unchecked", "src/ctxcli/load/reuse.py",
           "if sid not in policies or pols.get(sid) != policies[sid]:", "if sid not in policies:",
           ("tests/test_incremental_rows.py::test_a_changed_redaction_policy_derives_the_sources_records_again",)),
    Mutant("row-reload-derives-everything", "src/ctxcli/load/build.py",
           "was = kept.get(k)", "was = None",
           ("tests/test_incremental_rows.py::test_a_reload_derives_only_changed_records_and_equals_a_full_load",)),
    Mutant("load-delta-ignores-changed-columns", "src/ctxcli/load/reuse.py",
           'if c not in ("doc_id", "family"))', 'if c in ("content",))',
           ("tests/test_incremental_rows.py::test_a_reload_derives_only_changed_records_and_equals_a_full_load",)),
    Mutant("postgres-rows-outside-the-digest", "src/ctxcli/load/parsers/table.py",
           'if ls.manifest.table.format != "postgres":\n            return None',
           "if True:\n            return None",
           ("tests/test_parsers_table_postgres.py::test_a_changed_row_is_a_changed_source_and_reloads_only_that_row",)),
    Mutant("postgres-password-in-manifest", "src/ctxcli/models/manifest.py",
           'raise ValueError("table.database: a manifest never holds a password',
           'print("table.database: a manifest never holds a password',
           ("tests/test_parsers_table_postgres.py::test_a_password_in_the_manifest_is_refused_and_an_address_error_shows_none",)),
    Mutant("row-groups-ignore-the-key", "src/ctxcli/load/parsers/table.py",
           "                    or any(row.get(c) != r0[1].get(c) for c in rg.by)):",
           "                    or False):",
           ("tests/test_parsers_table.py::test_row_groups_keep_keys_and_column_names_for_long_tables",)),
    Mutant("row-groups-keep-only-the-first-key", "src/ctxcli/load/parsers/table.py",
           "        for _, _, f, _, _ in group:", "        for _, _, f, _, _ in group[:1]:",
           ("tests/test_parsers_table.py::test_row_groups_keep_keys_and_column_names_for_long_tables",)),
    Mutant("learned-layer-never-consulted", "src/ctxcli/injection/__init__.py",
           "    if not hits and use_learned and text:", "    if False:",
           ("tests/test_injection.py::test_the_learned_layer_flags_what_the_patterns_miss_and_names_itself",
            "tests/test_injection.py::test_the_learned_layer_finds_an_instruction_deep_in_a_long_document")),
    Mutant("learned-weights-hash-unchecked", "src/ctxcli/injection/learned.py",
           "    if hashlib.sha256(data).hexdigest() != WEIGHTS_SHA256:", "    if False:",
           ("tests/test_injection.py::test_weights_whose_sha256_differs_are_refused",)),
    Mutant("learned-whole-text-only", "src/ctxcli/injection/learned.py",
           "    if n <= WINDOWS[0][0]:", "    if True:",
           ("tests/test_injection.py::test_the_learned_layer_finds_an_instruction_deep_in_a_long_document",)),
    Mutant("learned-short-texts-scored", "src/ctxcli/injection/learned.py",
           "    if len(norm) < MIN_CHARS:", "    if not norm:",
           ("tests/test_injection.py::test_short_texts_are_left_to_the_patterns",)),
    Mutant("quote-in-quote-not-framed", "src/ctxcli/injection/context.py",
           "                for m in _QUOTED.finditer(self.s, qs + 1, qe - 1):", "                for m in ():",
           ("tests/test_injection.py::test_a_quoted_attack_inside_front_matter_is_a_framed_example",)),
    Mutant("gate-short-fields-learned-only-joined", "src/ctxcli/engine/injection_adapter.py",
           "                f = learned_finding(t) if len(t) >= learned.MIN_CHARS else None", "                f = None",
           ("tests/test_injection.py::test_the_gate_scores_a_short_field_on_its_own_with_the_learned_layer",)),
    Mutant("explain-learned-as-pattern", "src/ctxcli/postmortem/sentences.py",
           '    if isinstance(pattern, str) and pattern.startswith("learned:"):', "    if False:",
           ("tests/test_injection.py::test_explain_omissions_names_the_learned_layer_and_its_score",)),
    # --- the house, second pass (issue 32): one request policy -------------------------------
    Mutant("policy-limits-not-rechecked", "src/ctxcli/policy.py",
           "    refuse_out_of_limits(subject=sid, scopes=list(scopes), budget=budget, max_rounds=max_rounds)\n", "",
           ("tests/test_policy.py::test_the_resolved_request_is_held_to_the_limits_whoever_calls",)),
    Mutant("policy-other-subject-inherits-clearance", "src/ctxcli/policy.py",
           "    elif opts.subject_id is None or opts.subject_id == subject.id:\n        clearance = subject.clearance.value",
           "    elif True:\n        clearance = subject.clearance.value",
           ("tests/test_policy.py::test_another_subject_starts_with_no_scope_and_the_default_clearance",)),
    Mutant("serve-budget-unchecked", "src/ctxcli/serve/tools.py",
           '    refuse_out_of_limits({"budget": "budget"}, budget=budget)     # the limits of --budget (models/request.py)\n'
           '    return api.InvestigateOptions(\n        case=case,',
           '    return api.InvestigateOptions(\n        case=case,',
           ("tests/test_policy.py::test_the_mcp_servers_budget_uses_the_same_limits",)),
    Mutant("layers-check-imports-the-api", "src/ctxcli/check.py",
           "    from .paths import display as _display\n", "    from .api import display as _display\n",
           ("tests/test_layers.py::test_no_module_imports_a_layer_above_its_own",)),
    Mutant("gate-table-validity-withholds", "src/ctxcli/engine/gates.py",
           'Gate("validity", g_validity, "metadata", False)', 'Gate("validity", g_validity, "metadata", True)',
           ("tests/test_gates_table.py",)),
    Mutant("cli-masks-through-the-pg-backend", "src/ctxcli/cli/common.py",
           "        from ..util.passwords import mask\n\n        lines",
           "        from ..store.pg_store import mask\n\n        lines",
           ("tests/test_exit_codes.py::test_the_error_handler_masks_passwords_without_the_postgresql_backend",)),
    Mutant("mcp-input-model-ignores-extras", "src/ctxcli/serve/server.py",
           'config = ConfigDict(extra="forbid", json_schema_extra=SCHEMA_RULES.get(name))',
           'config = ConfigDict(extra="ignore", json_schema_extra=SCHEMA_RULES.get(name))',
           ("tests/test_serve_inputs.py",)),
    Mutant("vectors-always-built", "src/ctxcli/load/build.py",
           "    vectors = why is not None\n", "    vectors = True\n",
           ("tests/test_vectors_extra.py::test_a_store_has_vectors_only_when_asked",
            "tests/test_vectors_extra.py::test_without_the_extra_a_plain_load_and_investigation_work")),
    Mutant("playbook-vectors-ask-ignored", "src/ctxcli/load/vectors.py",
           'data.get("vectors") is True', 'data.get("vectors") is False',
           ("tests/test_vectors_extra.py::test_the_bundled_store_has_vectors_because_a_playbook_asks",
            "tests/test_vectors_extra.py::test_without_the_extra_a_playbook_asking_for_vectors_exits_2_naming_it")),
    Mutant("load-vectors-flag-ignored", "src/ctxcli/cli/cmd_load.py",
           "incremental=not full, vectors=vectors,", "incremental=not full, vectors=False,",
           ("tests/test_vectors_extra.py::test_a_store_has_vectors_only_when_asked",)),
    Mutant("hybrid-without-the-extra-checked-late", "src/ctxcli/policy.py",
           '        require("--strategy hybrid")\n    refuse_out_of_limits(',
           '        pass\n    refuse_out_of_limits(',
           ("tests/test_vectors_extra.py::test_without_the_extra_hybrid_exits_2_with_the_pip_command",)),
    Mutant("eval-hybrid-without-the-extra-checked-late", "src/ctxcli/evaluate.py",
           '        require("--strategy hybrid")\n    files = case_files(opts.paths)',
           '        pass\n    files = case_files(opts.paths)',
           ("tests/test_vectors_extra.py::test_without_the_extra_hybrid_exits_2_with_the_pip_command",)),
    Mutant("init-hides-the-vectors-extra", "src/ctxcli/scaffold/__init__.py",
           "        steps.insert(0, install_hint(\"vectors\"))", "        pass",
           ("tests/test_vectors_extra.py::test_without_the_extra_init_of_an_example_asking_for_vectors_says_to_install_it_first",)),
    Mutant("model-span-not-a-child", "src/ctxcli/otel.py",
           "span = run.tracer.start_span(f\"chat {c['model']}\", context=ctx,",
           "span = run.tracer.start_span(f\"chat {c['model']}\", context=None,",
           ("tests/test_otlp_http.py::test_the_model_call_of_ctx_ask_is_a_child_span_with_genai_attributes_and_no_content",)),
    Mutant("model-span-output-tokens-dropped", "src/ctxcli/otel.py",
           '                         ("gen_ai.usage.output_tokens", "completion_tokens")):',
           '                         ):',
           ("tests/test_otlp_http.py::test_the_model_call_of_ctx_ask_is_a_child_span_with_genai_attributes_and_no_content",)),
    Mutant("report-compare-without-the-store-secret", "src/ctxcli/cli/cmd_report.py",
           "            key = api.store_key(paths.db_path(db), create=False)", "            key = None",
           ("tests/test_report.py::test_compare_matches_a_withheld_object_with_the_store_secret_as_ctx_diff_does",)),
    Mutant("diff-unmatched-ref-in-b-called-not-a-candidate", "src/ctxcli/postmortem/compare.py",
           '                sx = ObjectState("unmatched")', "                sx = absent",
           ("tests/test_report.py::test_compare_matches_a_withheld_object_with_the_store_secret_as_ctx_diff_does",)),
    Mutant("diff-unmatched-ref-in-a-called-not-a-candidate", "src/ctxcli/postmortem/compare.py",
           '                sy = ObjectState("unmatched")', "                sy = absent",
           ("tests/test_postmortem.py::test_a_withheld_ref_is_matched_with_the_store_secret_and_unknown_without_it",)),
    Mutant("diff-hides-what-the-other-pack-withheld", "src/ctxcli/postmortem/compare.py",
           '    return "; ".join(parts) or None', "    return None",
           ("tests/test_postmortem.py::test_diff_default_vs_restricted",
            "tests/test_report.py::test_compare_is_the_comparison_of_ctx_diff_with_the_same_store")),
    Mutant("report-model-validation-away-from-the-claims", "src/ctxcli/report/templates/report.html.j2",
           '{% if v.model %}<p class="model-line"', '{% if False %}<p class="model-line"',
           ("tests/test_report.py::test_model_answer_with_validator_marks_is_shown",)),
    Mutant("playbook-vectors-not-strict", "src/ctxcli/models/playbook.py",
           "    vectors: StrictBool = Field(", "    vectors: bool = Field(",
           ("tests/test_vectors_extra.py::test_vectors_is_a_strict_boolean",)),
    # --- issue 34: the agent loop, governed (tool results, section order, tool registry) ----------
    Mutant("agents-tool-tenant-gate-off", "src/ctxcli/agents/tool_results.py",
           "if tr.tenant_id != tenant_id:", "if False:", ("tests/test_agents.py",)),
    Mutant("agents-tool-scope-gate-off", "src/ctxcli/agents/tool_results.py",
           "missing = sorted(set(tr.scopes) - set(scopes))", "missing = []", ("tests/test_agents.py",)),
    Mutant("agents-tool-freshness-off", "src/ctxcli/agents/tool_results.py",
           "if age is not None and as_of - tr.observed_at > age:", "if False:", ("tests/test_agents.py",)),
    Mutant("agents-tool-injection-off", "src/ctxcli/agents/tool_results.py",
           "hit = scan(strings(tr))", "hit = None", ("tests/test_agents.py",)),
    Mutant("agents-tool-limitations-unscanned", "src/ctxcli/agents/tool_results.py",
           '    walk("limitations", tr.shaped.limitations)\n', "", ("tests/test_agents.py",)),
    Mutant("agents-tool-withheld-ref-unkeyed", "src/ctxcli/agents/tool_results.py",
           'ref = "wh-" + keyed_hex(key, "ctx-withheld-tool-result", tr.tenant_id, tr.result_id())[:16]',
           'ref = "wh-" + tr.result_id()[3:] + "0000"', ("tests/test_agents.py",)),
    Mutant("agents-tool-tokens-not-taken-from-evidence", "src/ctxcli/engine/builder.py",
           'budget=allocation["evidence"] - tool_tokens if evidence_budget is None',
           'budget=allocation["evidence"] if evidence_budget is None', ("tests/test_agents.py",)),
    Mutant("agents-tool-results-in-system-message", "src/ctxcli/engine/render.py",
           '        return "evidence"\n    return "tools"', '        return "instructions"\n    return "tools"', ("tests/test_agents.py",)),
    Mutant("agents-replay-regates-tool-results", "src/ctxcli/postmortem/replay.py",
           "tools=recorded(lp.data))", "tools=None)", ("tests/test_agents.py",)),
    Mutant("agents-registry-any-subject", "src/ctxcli/agents/registry.py",
           "return set(self.scopes) <= set(scopes) and (not self.purposes or purpose in self.purposes)",
           "return True", ("tests/test_agents.py",)),
    Mutant("audit-withheld-ref-unkeyed", "src/ctxcli/agents/audit.py",
           'v = {"status": "withheld", "gate": "tenant", "ref": opaque_ref(tenant, object_id, key=self.key)}',
           'v = {"status": "withheld", "gate": "tenant", "ref": "wh-" + content_hash(object_id)[7:23]}', ("tests/test_audit_call.py",)),
    Mutant("audit-no-hash-match", "src/ctxcli/agents/audit.py",
           "    if hits:\n        return [(n, \"content_hash\", None) for n in hits]", "", ("tests/test_audit_call.py",)),
    Mutant("audit-span-not-scanned", "src/ctxcli/agents/audit.py",
           'hit = None if withheld else scan([("content", sp.text)])', "hit = None", ("tests/test_audit_call.py",)),
    Mutant("audit-no-text-match", "src/ctxcli/agents/audit.py", "MIN_CONTAINMENT = 0.5", "MIN_CONTAINMENT = 1.01", ("tests/test_audit_call.py",)),
    Mutant("audit-withheld-gate-shows-object", "src/ctxcli/agents/audit.py",
           'v = {"status": "withheld", "gate": rej.gate, "ref": opaque_ref(tenant, object_id, key=self.key)}',
           'v = {"status": "withheld", "gate": rej.gate, "ref": object_id}', ("tests/test_audit_call.py",)),
    Mutant("handoff-passes-everything", "src/ctxcli/agents/handoff.py",
           'if not (v.get("status") == "admitted" or (v.get("gate") == "redaction" and o in c.get("masked", []))):',
           "if False:", ("tests/test_handoff.py",)),
    Mutant("handoff-hash-unchecked", "src/ctxcli/agents/handoff.py",
           "    if obj_hash(body) != doc.get(\"content_hash\"):", "    if False:", ("tests/test_handoff.py",)),
    Mutant("handoff-any-purpose", "src/ctxcli/agents/handoff.py",
           'if doc["tenant_id"] != who.tenant_id or doc["valid_for"]["purpose"] != who.purpose:',
           'if doc["tenant_id"] != who.tenant_id:', ("tests/test_handoff.py",)),
    Mutant("state-version-never-stale", "src/ctxcli/agents/state.py",
           "stale = int(current) > int(recorded)", "stale = False", ("tests/test_agents.py::test_state_version_is_recorded_and_an_older_pack_is_stale",)),
    # --- issue 30: time window, temporal correlation, aggregates, deadline, statement timeout
    Mutant("window-drops-access-rule", "src/ctxcli/store/duckdb_store.py",
           "SELECT o.doc_id, o.{tcol} AS t, {ok} AS ok", "SELECT o.doc_id, o.{tcol} AS t, true AS ok", (AR_DUCK,)),
    Mutant("window-pg-drops-access-rule", "src/ctxcli/store/pg_store.py",
           "SELECT o.doc_id, o.{{tcol}} AS t, {{ok}} AS ok", "SELECT o.doc_id, o.{{tcol}} AS t, true AS ok", (AR_PG,)),
    Mutant("window-walks-unauthorised-edges", "src/ctxcli/store/duckdb_store.py",
           "    AND list_contains(CAST($access_ok AS INTEGER[]), access_id)\n", "",
           ("tests/test_window.py::test_window_walks_only_authorised_relations",)),
    Mutant("window-ranked-by-time-not-distance", "src/ctxcli/store/duckdb_store.py",
           "row_number() OVER (ORDER BY abs(t - $anchor), doc_id)", "row_number() OVER (ORDER BY t, doc_id)",
           ("tests/test_window.py::test_the_change_is_found_only_by_the_window_nearest_first",)),
    Mutant("window-hits-not-linked-to-case", "src/ctxcli/engine/builder.py",
           'run.query.channel in ("graph", "structured", "window")', 'run.query.channel in ("graph", "structured")',
           ("tests/test_window.py::test_the_change_is_found_only_by_the_window_nearest_first",)),
    Mutant("correlation-stated-as-cause", "src/ctxcli/answer/answer.py",
           "present = bool(t.mechanism) and all(", "present = True or all(",
           ("tests/test_window.py::test_candidates_in_the_window_are_ranked_correlations_not_a_conflict",)),
    Mutant("deadline-ignored", "src/ctxcli/engine/builder.py",
           "if deadline is not None and clock() - started >= deadline:", "if False:",
           ("tests/test_window.py::test_the_deadline_is_read_from_the_clock_before_each_round",
            "tests/test_window.py::test_a_deadline_stop_is_partial_names_what_was_not_tried_and_is_reproducible")),
    Mutant("aggregate-counts-withheld-rows", "src/ctxcli/engine/aggregate.py",
           "readable = readable_for(con, req.tenant_id, access) if bc.apply_gates else None", "readable = None",
           ("tests/test_window.py::test_aggregates_are_computed_over_the_rows_the_subject_may_see",)),
    Mutant("statement-timeout-not-mapped", "src/ctxcli/store/duckdb_store.py",
           "            if not self.fired.is_set():\n                raise\n", "            raise\n",
           ("tests/test_window.py::test_a_statement_over_its_timeout_is_cancelled",)),
    Mutant("replay-drops-deadline", "src/ctxcli/postmortem/replay.py",
           ',\n                                  deadline_seconds=req.get("deadline_seconds"))', ")",
           ("tests/test_window.py::test_replay_of_a_deadline_stop_reproduces_it",)),
    # --- issue 33: generations, ledger, idempotency, outbox, erasure ---------------------------
    Mutant("replay-ignores-pack-generation", "src/ctxcli/postmortem/replay.py",
           'if against == "built" and recorded is not None and not is_postgres(db_path):',
           'if False and recorded is not None and not is_postgres(db_path):',
           ("tests/test_generations.py::test_week_old_pack_replays_byte_identical_on_its_generation_after_three_reloads",)),
    Mutant("generation-inside-pack-hash", "src/ctxcli/util/packid.py",
           '_WHERE = ("backend", "generation")', '_WHERE = ("backend",)',
           ("tests/test_generations.py::test_generation_is_outside_the_pack_hash",)),
    Mutant("prune-removes-foreign-files", "src/ctxcli/store/generations.py",
           "        if m and e.is_file(follow_symlinks=False):\n            out.append((int(m.group(1)), Path(e.path)))",
           "        if e.is_file(follow_symlinks=False):\n            out.append((int(m.group(1)) if m else 0, Path(e.path)))",
           ("tests/test_generations.py::test_prune_keeps_newest_and_replay_says_the_generation_is_gone",)),
    Mutant("load-keeps-every-generation", "src/ctxcli/api.py",
           '            res.pruned = prune(db_path, keep)["dropped"]', "            res.pruned = []",
           ("tests/test_generations.py::test_load_keeps_the_configured_number",)),
    Mutant("ledger-hash-unchecked", "src/ctxcli/ledger/records.py",
           'if rec.get("hash") != record_hash(rec):', "if False:",
           ("tests/test_ledger.py::test_verify_detects_an_edited_or_deleted_record",)),
    Mutant("ledger-chain-unchecked", "src/ctxcli/ledger/records.py",
           'elif seq != want_seq or rec.get("prev") != (prev["hash"] if prev else None):', "elif False:",
           ("tests/test_ledger.py::test_verify_detects_an_edited_or_deleted_record",)),
    Mutant("outbox-not-cross-checked", "src/ctxcli/ledger/records.py",
           "        if seq not in by_seq:", "        if False:",
           ("tests/test_ledger.py::test_verify_detects_an_edited_or_deleted_record",)),
    Mutant("idempotency-conflict-ignored", "src/ctxcli/ledger/runs.py",
           'if prior is not None and prior.get("request_hash") != request_hash:', "if False:",
           ("tests/test_ledger.py::test_idempotency_conflict_exits_2_naming_both_hashes",)),
    Mutant("idempotency-key-runs-again", "src/ctxcli/cli/cmd_investigate.py",
           "            if prior is not None:\n                _repeated(prior, idempotency_key, as_json)\n                return\n"
           "            check_folder(out, rh, replace=replace)",
           "            check_folder(out, rh, replace=replace)",
           ("tests/test_ledger.py::test_idempotency_key_same_request_returns_recorded_run",)),
    Mutant("run-folder-of-another-request-replaced", "src/ctxcli/ledger/runs.py",
           "if held is not None and held != request_hash:", "if False:",
           ("tests/test_ledger.py::test_another_request_into_a_run_folder_needs_replace",)),
    Mutant("journal-rolled-forward-without-folder", "src/ctxcli/ledger/commit.py",
           'in_place = folder is None or _run_json_hash(folder) == j.get("run_json")', "in_place = True",
           ("tests/test_ledger.py::test_sigkill_between_steps_leaves_all_three_or_none",)),
    Mutant("killed-commit-not-recovered", "src/ctxcli/ledger/commit.py",
           "    did: list[str] = []\n    _cut_partial(d / LEDGER_FILE)", "    return []\n    _cut_partial(d / LEDGER_FILE)",
           ("tests/test_ledger.py::test_sigkill_between_steps_leaves_all_three_or_none",)),
    Mutant("erase-keeps-text", "src/ctxcli/ledger/erasure.py",
           'item.update(text="", title=ERASED,', "item.update(title=ERASED,",
           ("tests/test_erasure.py::test_erase_apply_removes_every_string_and_replay_says_erased",)),
    Mutant("erase-leaves-other-files", "src/ctxcli/ledger/erasure.py",
           '(b if n in ("pack.json", RUN_FILE, "timings.json") else _scrub_file(n, b, strings))', "b",
           ("tests/test_erasure.py::test_erase_apply_removes_every_string_and_replay_says_erased",)),
    Mutant("erased-pack-seal-unchecked", "src/ctxcli/postmortem/packfile.py",
           'if h is None or erasure.get("sealed_hash") != h or not str(data["pack_id"]).startswith("pk-"):',
           "if h is None:",
           ("tests/test_erasure.py::test_erase_apply_removes_every_string_and_replay_says_erased",)),
    Mutant("erase-never-resigns", "src/ctxcli/ledger/erasure.py",
           'if sig is not None and key is not None and key_id(key) == sig.get("key_id"):', "if False:",
           ("tests/test_erasure.py::test_erase_apply_removes_every_string_and_replay_says_erased",)),
    Mutant("erase-keeps-generations", "src/ctxcli/ledger/erasure.py",
           '            os.unlink(row["file"])\n            dropped.append(n)', "            dropped.append(n)",
           ("tests/test_erasure.py::test_erase_drops_kept_generations_holding_the_object",)),
    # --- issue 32 item 6: lint in the test command ---------------------------------------------
    Mutant("lint-unused-import", "src/ctxcli/errors.py",
           "from __future__ import annotations\n", "from __future__ import annotations\nimport os\n",
           ("tests/test_lint.py",)),
]


def make_copy(dst: Path) -> None:
    for name in COPY:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dst / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".hypothesis", "*.pyc"))
        elif src.exists():
            shutil.copy2(src, dst / name)


def apply(root: Path, m: Mutant) -> str:
    """Apply ``m`` in place; return the original text of the file."""
    p = root / m.file
    text = p.read_text(encoding="utf-8")
    n = text.count(m.old)
    if n != 1:
        raise LookupError(f"{m.name}: old text found {n} times in {m.file}")
    p.write_text(text.replace(m.old, m.new), encoding="utf-8")
    return text


def run_tests(root: Path, args: list[str], timeout: float) -> tuple[bool, str]:
    """(all passed, last lines of output)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env["PYTHONPATH"] = str(root / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *args]
    try:
        r = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s (counted as caught)"
    tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-3:])
    return r.returncode == 0, tail


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.mutants", description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", action="append", default=[], help="only mutants whose name contains this word")
    ap.add_argument("--full", action="store_true", help="run the whole suite for every mutant")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant")
    ap.add_argument("--jobs", type=int, default=1, help="mutants tested at once, each in its own copy")
    a = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if not a.k or any(w in m.name for w in a.k)]
    if a.list:
        for m in chosen:
            print(f"{m.name:40} {m.file}  [{' '.join(m.tests)}]")
        return 0
    stale, survived = [], []
    jobs = max(1, min(a.jobs, len(chosen) or 1))
    with tempfile.TemporaryDirectory(prefix="ctx-mutants-") as tmp:
        roots = [Path(tmp) / f"copy{i}" for i in range(jobs)]
        for root in roots:
            make_copy(root)
        # The unmutated copy must pass its selections, or a "caught" would mean nothing.
        sel = ["tests"] if a.full else sorted({t for m in chosen for t in m.tests})
        ok, tail = run_tests(roots[0], sel, a.timeout * 2)
        if not ok:
            print(f"the unmutated copy fails its tests; fix that first:\n{tail}")
            return 1
        import queue
        import threading

        free: queue.Queue[Path] = queue.Queue()
        for root in roots:
            free.put(root)
        lock = threading.Lock()

        def one(m: Mutant) -> None:
            root = free.get()
            try:
                t0 = time.perf_counter()
                try:
                    original = apply(root, m)
                except LookupError as e:
                    with lock:
                        stale.append(m.name)
                        print(f"STALE     {e}", flush=True)
                    return
                try:
                    ok, tail = run_tests(root, ["tests"] if a.full else list(m.tests), a.timeout)
                finally:
                    (root / m.file).write_text(original, encoding="utf-8")
                with lock:
                    if ok:
                        survived.append(m.name)
                    print(f"{'SURVIVED' if ok else 'caught':9} {m.name:40} {time.perf_counter() - t0:6.1f} s  "
                          f"{tail.splitlines()[-1] if tail else ''}", flush=True)
            finally:
                free.put(root)

        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, chosen))
    survived.sort(key=[m.name for m in chosen].index)
    print(f"{len(chosen)} mutants: {len(chosen) - len(survived) - len(stale)} caught, {len(survived)} survived"
          + (f", {len(stale)} stale" if stale else "") + (f": {', '.join(survived)}" if survived else ""))
    return 2 if stale else (1 if survived else 0)


if __name__ == "__main__":
    sys.exit(main())
