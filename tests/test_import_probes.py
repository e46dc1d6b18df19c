"""DuckDB's client probes ``import pandas`` when it binds parameters; without pandas installed
each probe searched sys.path again (hundreds per investigation). ctx records the absence once."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import pytest


@pytest.mark.skipif(importlib.util.find_spec("pandas") is not None, reason="pandas is installed here: nothing to probe")
def test_an_investigation_searches_for_pandas_at_most_once(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from ctxcli import api

        class Count:
            n = 0
            def find_spec(self, name, path=None, target=None):
                if name == "pandas":
                    Count.n += 1
                return None

        sys.meta_path.insert(0, Count())
        api.load(db=Path({str(tmp_path / "ctx.duckdb")!r}))
        before = Count.n
        for _ in range(2):
            api.investigate(api.InvestigateOptions(case="C-102", db=Path({str(tmp_path / 'ctx.duckdb')!r})))
        print(Count.n - before)
    """)
    from tests.conftest import REPO

    r = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.strip().splitlines()[-1]) <= 1
