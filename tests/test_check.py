"""Authoring errors a user sees: YAML errors at file:line:column (manifests, playbooks, case
files), `ctx check`, and the checks `ctx load` / `ctx investigate` run first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

PB = "manifests/playbooks/motor-claim-review.yaml"
CASE = "examples/cases/C-102.yaml"


def _edit(proj: Path, rel: str, old: str, new: str) -> None:
    p = proj / rel
    text = p.read_text(encoding="utf-8")
    assert old in text, old
    p.write_text(text.replace(old, new, 1), encoding="utf-8")


def _line_of(proj: Path, rel: str, needle: str) -> int:
    for i, line in enumerate((proj / rel).read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def _err(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert "Traceback" not in r.output
    return r.stderr.strip()


# ------------------------------------------------------------------ 1. line numbers
def test_case_file_unknown_field_has_line_and_column(project_copy):
    _edit(project_copy, CASE, "  stop_reason: evidence_sufficient\n",
          "  stop_reason: evidence_sufficient\n  stop: now\n")
    n = _line_of(project_copy, CASE, "  stop: now")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    assert _err(r) == f"ctx: error: {CASE}:{n}:3: expected.stop: unknown field"


def test_case_file_bad_value_in_variant_list(project_copy):
    _edit(project_copy, CASE, "      scopes: [case:read]\n", "      scopes: [case:read, 'bad scope!']\n")
    n = _line_of(project_copy, CASE, "'bad scope!'")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    err = _err(r)
    assert err.startswith(f"ctx: error: {CASE}:{n}:27: variants.restricted.subject.scopes.1: "), err


def test_playbook_unknown_field_in_a_claim(project_copy):
    _edit(project_copy, PB, "    uses: [policy_tenure_days]\n", "    uses: [policy_tenure_days]\n    colour: red\n")
    n = _line_of(project_copy, PB, "    colour: red")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    assert _err(r) == f"ctx: error: {PB}:{n}:5: claims.4.colour: unknown field"


def test_playbook_model_level_error_points_at_the_item(project_copy):
    # a fact that refers to a later one: the model validator names "facts.received_normalized"
    _edit(project_copy, PB, "mapping: aliases}", "mapping: missing_documents}")
    n = _line_of(project_copy, PB, "{name: received_normalized")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    assert _err(r) == (f"ctx: error: {PB}:{n}:5: facts.received_normalized: "
                       "refers to missing_documents before it is defined")


def test_playbook_bad_expression_points_at_the_rule(project_copy):
    _edit(project_copy, PB, 'when: "len(missing_documents) == 0"', 'when: "len(missing_documents) === 0"')
    n = _line_of(project_copy, PB, "=== 0")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    err = _err(r)
    assert err.startswith(f"ctx: error: {PB}:{n}:5: claims.documents_satisfied.when: invalid expression"), err


def test_manifest_nested_error_has_line_and_column(project_copy):
    rel = "manifests/sources/claims-core.yaml"
    _edit(project_copy, rel, "allowed_purposes: [claim_review, audit]",
          "allowed_purposes:\n  - claim_review\n  - 'no good'")
    n = _line_of(project_copy, rel, "'no good'")
    r = run_cli(["load"])
    err = _err(r)
    assert err.startswith(f"ctx: error: {rel}:{n}:5: allowed_purposes.1: "), err


def test_case_outside_the_project_hints_at_ctx_root(tmp_path, monkeypatch):
    from tests.conftest import REPO

    case = tmp_path / "elsewhere" / "C-102.yaml"
    case.parent.mkdir()
    case.write_text((REPO / CASE).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("CTX_ROOT", str(tmp_path / "elsewhere"))
    r = run_cli(["investigate", str(case), "--out", tmp_path / "runs"])
    err = _err(r)
    assert "unknown playbook 'motor-claim-review'" in err and "set CTX_ROOT to the project folder" in err, err


# ------------------------------------------------------------------ 2. ctx check and the typo cases
def test_check_bundled_project_is_clean(project_copy):
    r = run_cli(["check"])
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert r.stderr == "checked 22 file(s): no problems\n"


def test_typo_in_expr_fact_name_fails_loudly(project_copy):
    # a derived fact whose expr misspells an earlier fact would turn a claim unknown at run time
    _edit(project_copy, PB, "  - {name: case_status, op: value, from: case_status, fact: status}\n",
          "  - {name: case_status, op: value, from: case_status, fact: status}\n"
          "  - {name: over_threshold, op: expr, expr: \"claim_amout >= review_amount_threshold\"}\n")
    n = _line_of(project_copy, PB, "claim_amout")
    r = run_cli(["check", project_copy / PB, "--json"])
    assert r.exit_code == 1, r.output
    import json

    doc = json.loads(r.stdout)
    assert doc["problems"] == [{"file": PB, "line": n, "column": 38,
                                "message": "fact over_threshold: expr uses unknown name claim_amout "
                                           "(did you mean claim_amount?)"}]
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    assert _err(r) == (f"ctx: error: {PB}:{n}:38: fact over_threshold: expr uses unknown name claim_amout "
                       "(did you mean claim_amount?)")
    assert not (project_copy / "runs").exists()


def test_typo_in_decision_rule_when_fails_loudly(project_copy):
    _edit(project_copy, PB, '    - id: manual_review\n      when: "claim_amount >= review_amount_threshold',
          '    - id: manual_review\n      when: "claim_amount >= review_amount_treshold')
    n = _line_of(project_copy, PB, "review_amount_treshold")
    r = run_cli(["check"])
    assert r.exit_code == 1, r.output
    assert r.stdout == (f"{PB}:{n}:7: decision rule manual_review: when uses unknown name "
                        "review_amount_treshold (did you mean review_amount_threshold?)\n")
    assert r.stderr == "checked 22 file(s): 1 problem(s)\n"
    # ctx load runs the same checks first (exit 2, the store is not built)
    r = run_cli(["load"])
    assert _err(r).startswith(f"ctx: error: {PB}:{n}:7: decision rule manual_review: when uses unknown name")
    assert not (project_copy / ".ctx" / "ctx.duckdb").exists()


def test_check_claim_template_edge_route_seed_and_purpose(project_copy):
    _edit(project_copy, PB, "records the case status {case_status}.", "records the case status {case_stat}.")
    _edit(project_copy, PB, "      - {edge: HAS_DOCUMENT, to: document}", "      - {edge: HAS_DOCUMENTS, to: document}")
    _edit(project_copy, PB, "    retrieve:\n      structured:\n        object_types: [risk_signal]\n    followup:\n"
                            "      fulltext:\n        terms: [\"risk signal claim amount CNY\"]\n",
          "    retrieve:\n      structured:\n        object_types: []\n")
    _edit(project_copy, CASE, "seeds: [case:C-102]", "seeds: [C-102]")
    _edit(project_copy, CASE, "purpose: claim_review", "purpose: audit")
    lines = {k: _line_of(project_copy, p, k) for k, p in (
        ("{case_stat}", PB), ("HAS_DOCUMENTS", PB), ("type: claim_amount_signal", PB),
        ("seeds: [C-102]", CASE), ("purpose: audit", CASE))}
    r = run_cli(["check", project_copy / PB, project_copy / CASE])
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines() == [
        f"{PB}:{lines['{case_stat}']}:5: claim current_case_status: text uses unknown name case_stat "
        "(did you mean case_status?)",
        f"{PB}:{lines['type: claim_amount_signal']}:5: required evidence type claim_amount_signal has no "
        "retrieval route",
        f"{PB}:{lines['HAS_DOCUMENTS']}:9: path template case_documents: edge type HAS_DOCUMENTS is not "
        "declared by any source (did you mean HAS_DOCUMENT?)",
        f"{CASE}:{lines['purpose: audit']}:1: purpose audit is not served by playbook motor-claim-review "
        "(serves: claim_review)",
        f"{CASE}:{lines['seeds: [C-102]']}:9: seed 'C-102' is not an entity key of the form type:key",
    ]


def test_check_unusable_input_exits_2(project_copy, tmp_path):
    r = run_cli(["check", tmp_path / "nope.yaml"])
    assert _err(r) == f"ctx: error: {tmp_path / 'nope.yaml'}: no such file or folder"
    other = tmp_path / "other.yaml"
    other.write_text("hello: world\n", encoding="utf-8")
    r = run_cli(["check", other])
    assert _err(r).startswith(f"ctx: error: {other}: not a source manifest, playbook or case file")


def test_check_reports_schema_errors_as_problems(project_copy):
    _edit(project_copy, CASE, "  stop_reason: evidence_sufficient\n", "  stop_reason: evidence_sufficient\n  stop: x\n")
    n = _line_of(project_copy, CASE, "  stop: x")
    r = run_cli(["check", project_copy / CASE])
    assert r.exit_code == 1
    assert r.stdout == f"{CASE}:{n}:3: expected.stop: unknown field\n"
