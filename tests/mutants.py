"""Planted bugs that the test suite must catch.

Each mutant is one exact text replacement in one source file. For every mutant this script
applies it to a temporary copy of the repository, runs the tests chosen for it there (with
the copy's ``src`` first on ``PYTHONPATH``), and records whether at least one test failed
("caught") or all passed ("SURVIVED"). Exit 0 when every mutant is caught, 1 when one
survives, 2 when a mutant no longer applies (its old text is not in the file exactly once:
the code moved, so the list needs updating).

    python -m tests.mutants                  # every mutant, its own test selection (~3 min)
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
COPY = ("src", "tests", "manifests", "sources", "examples", "docs", "pyproject.toml", "README.md")

B = "tests/test_boundaries.py"


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
    Mutant("redact-first-match-only", "src/ctxcli/engine/redact.py",
           "text, n = rx.subn(repl, text)", "text, n = rx.subn(repl, text, count=1)", (B,)),
    Mutant("structured-tenant-predicate-dropped", "src/ctxcli/store/duckdb_store.py",
           "SELECT key, tenant_id, kind, doc_id FROM k WHERE tenant_id = $tenant",
           "SELECT key, tenant_id, kind, doc_id FROM k WHERE $tenant IS NOT NULL", (B,)),
    Mutant("vector-tenant-predicate-dropped", "src/ctxcli/store/duckdb_vector.py",
           "WHERE v.tenant_id = $tenant)", "WHERE $tenant IS NOT NULL)",
           ("tests/test_vector.py::test_another_tenants_near_identical_text_never_becomes_a_candidate",)),
    Mutant("replay-ignores-embedding-model", "src/ctxcli/postmortem/compare.py",
           '"store.embedding.version",\n                  "store.embedding.weights_sha256"]', '"store.embedding.version"]',
           ("tests/test_vector.py::test_replay_reports_drift_when_the_model_hash_changes",)),
    Mutant("scope-gate-off", "src/ctxcli/engine/gates.py",
           "missing = sorted(set(o.required_scopes) - c.scopes)", "missing = []",
           ("tests/test_investigate.py::test_restricted_subject_is_insufficient_and_leaks_nothing",)),
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
           "WHERE p.tenant_no = {{tno}} AND p.termid IN ({{termids}})",
           "WHERE {{tno}} IS NOT NULL AND p.termid IN ({{termids}})",
           ("tests/test_postgres.py::test_a_second_tenant_never_appears",)),
    Mutant("pg-walk-fanout-ignored", "src/ctxcli/store/pg_store.py",
           "WHERE r.tenant_id = %(tenant)s AND w.depth < %(max_hops)s AND w.rn <= %(fanout)s",
           "WHERE r.tenant_id = %(tenant)s AND w.depth < %(max_hops)s",
           ("tests/test_postgres.py::test_the_walk_follows_the_same_rules_on_both_backends",)),
    Mutant("pg-row-level-security-open", "src/ctxcli/store/pg_store.py",
           'f"CREATE POLICY ctx_tenant ON {table} USING ({_TENANT} IS NULL OR {own})"',
           'f"CREATE POLICY ctx_tenant ON {table} USING (true)"',
           ("tests/test_postgres.py::test_row_level_security_is_a_second_line_for_an_ordinary_role",)),
    Mutant("pg-password-shown", "src/ctxcli/store/pg_store.py",
           'out = _PW_URL.sub(lambda m: m["pre"] + "***" + m["post"], str(text))', "out = str(text)",
           ("tests/test_postgres.py::test_the_password_is_never_printed",)),
    Mutant("unlinked-candidate-never-reconsidered", "src/ctxcli/engine/builder.py",
           'if rej.gate == "relevance" and rej.reason == "not_linked_to_case":', "if False:",
           ("tests/test_vector.py::test_a_candidate_dropped_as_unlinked_is_admitted_when_a_later_round_links_it",)),
    Mutant("walk-edge-authorisation-dropped", "src/ctxcli/store/duckdb_store.py",
           "  AND list_contains(CAST($access_ok AS INTEGER[]), access_id)\n",
           "  AND (list_contains(CAST($access_ok AS INTEGER[]), access_id) OR true)\n",
           ("tests/test_hostile.py::test_an_edge_the_subject_may_not_see_is_never_walked",)),
    Mutant("walk-seed-of-unreadable-source", "src/ctxcli/store/duckdb_store.py",
           "AND list_contains(CAST($readable AS VARCHAR[]), source_id)",
           "AND (list_contains(CAST($readable AS VARCHAR[]), source_id) OR true)",
           ("tests/test_hostile.py",)),
    Mutant("bm25-tie-to-larger-doc-id", "src/ctxcli/store/duckdb_store.py",
           "{{'score': score, 'neg': -doc_id}}", "{{'score': score, 'neg': doc_id}}",
           ("tests/test_bm25_plan.py",)),
    Mutant("bm25-term-of-another-tenant", "src/ctxcli/store/duckdb_store.py",
           'FROM t WHERE tenant_no = {tno}', 'FROM t WHERE {tno} IS NOT NULL',
           ("tests/test_bm25_plan.py::test_other_tenants_terms_never_reach_the_query",)),
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
    a = ap.parse_args(argv)
    chosen = [m for m in MUTANTS if not a.k or any(w in m.name for w in a.k)]
    if a.list:
        for m in chosen:
            print(f"{m.name:40} {m.file}  [{' '.join(m.tests)}]")
        return 0
    stale, survived = [], []
    with tempfile.TemporaryDirectory(prefix="ctx-mutants-") as tmp:
        root = Path(tmp)
        make_copy(root)
        # The unmutated copy must pass its selections, or a "caught" would mean nothing.
        sel = ["tests"] if a.full else sorted({t for m in chosen for t in m.tests})
        ok, tail = run_tests(root, sel, a.timeout * 2)
        if not ok:
            print(f"the unmutated copy fails its tests; fix that first:\n{tail}")
            return 1
        for m in chosen:
            t0 = time.perf_counter()
            try:
                original = apply(root, m)
            except LookupError as e:
                stale.append(m.name)
                print(f"STALE     {e}")
                continue
            try:
                ok, tail = run_tests(root, ["tests"] if a.full else list(m.tests), a.timeout)
            finally:
                (root / m.file).write_text(original, encoding="utf-8")
            verdict = "SURVIVED" if ok else "caught"
            if ok:
                survived.append(m.name)
            print(f"{verdict:9} {m.name:40} {time.perf_counter() - t0:6.1f} s  {tail.splitlines()[-1] if tail else ''}")
    print(f"{len(chosen)} mutants: {len(chosen) - len(survived) - len(stale)} caught, {len(survived)} survived"
          + (f", {len(stale)} stale" if stale else "") + (f": {', '.join(survived)}" if survived else ""))
    return 2 if stale else (1 if survived else 0)


if __name__ == "__main__":
    sys.exit(main())
