"""The distribution name ctx tells users to install is the project's own (issue 31.1).

``ctxcli`` on PyPI is an unrelated project: every install hint in the code and the docs must
name this project's distribution and one of its declared extras."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from ctxcli.util.distribution import DISTRIBUTION, EXTRAS, install_hint

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
# pip install 'NAME[extra]' / pip install NAME[extra] / pip install -e '.[extra]'
HINT = re.compile(r"pip install (?:-e )?'?\"?([A-Za-z0-9_.\-]+)\[([a-z0-9_,\-]+)\]")


def test_the_distribution_module_matches_pyproject():
    assert PYPROJECT["project"]["name"] == DISTRIBUTION
    assert set(EXTRAS) == set(PYPROJECT["project"]["optional-dependencies"])
    assert install_hint("postgres") == "pip install 'ctx-investigator[postgres]'"
    with pytest.raises(ValueError):
        install_hint("nope")


def test_the_vector_model_is_an_extra_that_the_test_extra_includes():
    deps = PYPROJECT["project"]["dependencies"]
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert not [d for d in deps if d.startswith("wordllama")]       # the default install has no model
    assert extras["vectors"] == ["wordllama==0.4.0.post1"]
    assert set(extras["vectors"]) <= set(extras["test"])            # tests and CI run the hybrid strategy
    assert install_hint("vectors") == "pip install 'ctx-investigator[vectors]'"


def test_the_distribution_is_not_the_unrelated_ctxcli():
    assert re.sub(r"[-_.]+", "", DISTRIBUTION.lower()) not in {"ctxcli", "ctx", "ctxpack"}


def _hint_files():
    yield from (REPO / "src").rglob("*.py")
    yield REPO / "README.md"
    yield from (REPO / "docs").glob("*.md")


def test_every_install_hint_names_this_distribution_and_a_declared_extra():
    seen = 0
    for f in _hint_files():
        for m in HINT.finditer(f.read_text(encoding="utf-8")):
            name, extras = m.group(1), m.group(2).split(",")
            assert name in (DISTRIBUTION, "."), f"{f.relative_to(REPO)}: hint installs {name!r}"
            for e in extras:
                assert e in EXTRAS, f"{f.relative_to(REPO)}: unknown extra {e!r}"
            seen += 1
    assert seen >= 3      # README's test command and the otel hint at least


def test_the_runtime_hints_use_the_distribution(monkeypatch):
    import builtins

    from ctxcli.errors import UsageError
    from ctxcli.store.pg import connect

    real = builtins.__import__

    def no_psycopg(name, *a, **k):
        if name.startswith("psycopg"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_psycopg)
    with pytest.raises(UsageError) as e:
        connect.driver()
    assert "pip install 'ctx-investigator[postgres]'" in str(e.value)
