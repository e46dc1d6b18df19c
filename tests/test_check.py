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
