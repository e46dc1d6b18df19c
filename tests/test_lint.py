"""Lint as part of the test command: ruff with the rules in pyproject.toml ([tool.ruff]: pyflakes,
bugbear, simplify and a complexity bound), over src/, tests/ and benchmarks/ (issue 32 item 6)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import REPO


def _ruff() -> str:
    here = Path(sys.executable).parent / "ruff"
    return str(here) if here.exists() else (shutil.which("ruff") or "ruff")


def test_ruff_finds_nothing():
    p = subprocess.run([_ruff(), "check", "--no-cache", "src", "tests", "benchmarks"], cwd=REPO,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_ruff_sees_a_planted_unused_name(tmp_path):
    """The configuration is read and the rules run: a planted problem is reported."""
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n\n\ndef f(xs):\n    for x in xs:\n        pass\n", encoding="utf-8")
    p = subprocess.run([_ruff(), "check", "--no-cache", "--config", str(REPO / "pyproject.toml"), str(bad)],
                       cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 1
    assert "F401" in p.stdout and "B007" in p.stdout


def _bound() -> int:
    import tomllib

    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]["mccabe"][
        "max-complexity"]


def test_the_complexity_bound_is_what_the_code_needs():
    """The bound is a ratchet: one below it, some function is reported (C901), so a function cut
    below the bound brings the bound down with it."""
    tighter = _bound() - 1
    p = subprocess.run([_ruff(), "check", "--no-cache", "--select", "C901", "--output-format", "concise",
                        "--config", f"lint.mccabe.max-complexity={tighter}", "src", "tests", "benchmarks"],
                       cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 1 and f"> {tighter})" in p.stdout, p.stdout + p.stderr
