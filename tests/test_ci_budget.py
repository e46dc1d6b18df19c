"""CI's time budget and the planted-bug runner's hints (docs/testing.md).

The budget is a number measured by `.ci/run` (it writes .ci/timings.json) and committed in
.ci/budget.json; no test here measures time."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests import mutants

REPO = Path(__file__).resolve().parents[1]
BUDGET = json.loads((REPO / ".ci" / "budget.json").read_text(encoding="utf-8"))
CI = (REPO / ".ci" / "run").read_text(encoding="utf-8")


def test_the_last_measured_ci_run_is_within_the_budget():
    m = BUDGET["measured"]
    assert BUDGET["limit_seconds"] == 35 * 60
    assert m["exit"] == 0, "the committed measurement is of a failing run"
    assert m["total_seconds"] <= BUDGET["limit_seconds"], (
        f"the last measured .ci/run took {m['total_seconds'] / 60:.1f} min, over the "
        f"{BUDGET['limit_seconds'] / 60:.0f}-minute budget (.ci/budget.json)")
    assert abs(sum(s["seconds"] for s in m["steps"]) - m["total_seconds"]) <= 5


def test_the_measurement_names_every_step_ci_runs_in_its_order():
    steps = re.findall(r'^\s+"[^\n]*\) echo ([a-z_.]+) ;;$', CI, re.M)
    assert steps == ["install", "pytest", "ruff", "injection.evaluate", "claims_eval", "mutants", "load", "eval",
                     "model_eval_demo"]
    assert [s["step"] for s in BUDGET["measured"]["steps"]] == steps


def test_the_first_failure_is_read_from_pytests_summary():
    out = ("....F\n=== short test summary info ===\n"
           "FAILED tests/test_a.py::test_b[x - y] - AssertionError: no\nERROR tests/test_c.py::test_d - E\n"
           "1 failed, 4 passed in 1.00s\n")
    assert mutants.first_failure(out) == "tests/test_a.py::test_b[x"
    assert mutants.first_failure("ERROR tests/test_c.py::test_d - boom\n") == "tests/test_c.py::test_d"
    assert mutants.first_failure("ERROR tests/test_c.py - ImportError\n1 error\n") is None
    assert mutants.first_failure("5 passed in 1.00s\n") is None


def test_every_hint_names_a_planted_bug_of_the_list():
    names = {m.name for m in mutants.MUTANTS}
    hints = mutants.load_catchers()
    assert set(hints) <= names
    assert all("::" in v and v.startswith("tests/test_") for v in hints.values())


@pytest.mark.parametrize("after_suite", [False, True])
@pytest.mark.parametrize("hint", ["tests/test_boundaries.py::test_rrf_fuses_disagreeing_channels_with_k_60", None])
def test_a_hint_never_makes_a_surviving_mutant_caught(tmp_path, monkeypatch, capsys, hint, after_suite):
    """A harmless 'mutant' whose hinted test passes survives: the hint orders, the selection decides."""
    harmless = mutants.Mutant("harmless", "src/ctxcli/engine/retrieve.py", "RRF_K = 60", "RRF_K = 60  # same",
                              ("tests/test_boundaries.py::test_rrf_fuses_disagreeing_channels_with_k_60",))
    catchers = tmp_path / "catchers.json"
    catchers.write_text(json.dumps({"harmless": hint} if hint else {}))
    monkeypatch.setattr(mutants, "MUTANTS", [harmless])
    monkeypatch.setattr(mutants, "CATCHERS", catchers)
    assert mutants.main(["--jobs", "1"] + (["--after-suite"] if after_suite else [])) == 1
    out = capsys.readouterr().out
    assert "SURVIVED  harmless" in out and out.rstrip().endswith("1 mutants: 0 caught, 1 survived: harmless")


def test_ci_runs_every_planted_bug():
    """CI runs the whole list (no -k, no --no-hints): hints only order the tests."""
    runs = re.findall(r"^python -m tests\.mutants.*$", CI, re.M)
    assert runs == ["python -m tests.mutants --jobs 2 --after-suite"]
    # --after-suite skips the unmutated runs only because the whole suite ran first, under set -e
    assert CI.index("python -m pytest -q -n 2") < CI.index(runs[0]) and "set -euo pipefail" in CI


@pytest.mark.parametrize("m", mutants.MUTANTS, ids=lambda m: m.name)
def test_every_planted_bug_still_applies(m):
    """A planted bug whose old text moved is stale (tests.mutants exits 2 at the end of CI): the
    suite says so first, naming it."""
    text = (REPO / m.file).read_text(encoding="utf-8")
    assert text.count(m.old) == 1, f"{m.name}: its old text occurs {text.count(m.old)} times in {m.file}"
    assert m.new != m.old


@pytest.mark.parametrize("fork", ["1", "0"])
def test_a_planted_bug_is_caught_forked_or_in_a_fresh_process(tmp_path, monkeypatch, capsys, fork):
    """The fork server (CTX_MUTANTS_FORK=1, the default) reports a failing test as a fresh
    process does: the child imports ctxcli from the mutated copy, not a module imported before."""
    bug = mutants.Mutant("rrf-k-61", "src/ctxcli/engine/retrieve.py", "RRF_K = 60", "RRF_K = 61",
                         ("tests/test_boundaries.py::test_rrf_fuses_disagreeing_channels_with_k_60",))
    monkeypatch.setenv("CTX_MUTANTS_FORK", fork)
    monkeypatch.setattr(mutants, "MUTANTS", [bug])
    monkeypatch.setattr(mutants, "CATCHERS", tmp_path / "none.json")
    assert mutants.main(["--jobs", "1", "--after-suite"]) == 0
    out = capsys.readouterr().out
    assert "caught    rrf-k-61" in out and out.rstrip().endswith("1 mutants: 1 caught, 0 survived")
