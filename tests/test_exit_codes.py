"""One exit-code list (errors.ExitCode), documented in the README, used by every error class and
by the CLI's one error handler — which masks passwords without loading the PostgreSQL backend."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from ctxcli import errors
from ctxcli.errors import ExitCode

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_documents_every_exit_code_and_no_other():
    section = README.read_text(encoding="utf-8").split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    documented = [int(m) for m in re.findall(r"^\| (\d+) \|", section, re.M)]
    assert documented == [int(c) for c in ExitCode]


def test_every_error_class_exits_with_a_listed_code():
    classes = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, errors.CtxError)]
    assert len(classes) > 10
    for c in classes:
        assert isinstance(c.exit_code, ExitCode), c.__name__
    assert errors.CheckFailed.exit_code == 1 and errors.StoreStaleError.exit_code == 3


def test_the_error_handler_masks_passwords_without_the_postgresql_backend():
    code = """
import sys
from ctxcli.cli.common import handle_errors
from ctxcli.errors import StoreUnusableError
import typer
try:
    with handle_errors():
        raise StoreUnusableError("cannot connect to postgresql://ctx:s3cret-pw@db.example:5432/ctx, password=other-pw here")
except typer.Exit as e:
    print(int(e.exit_code), "ctxcli.store.pg" in sys.modules, "psycopg" in sys.modules)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["3", "False", "False"], r.stderr
    assert r.stderr == ("ctx: error: cannot connect to postgresql://ctx:***@db.example:5432/ctx, password=*** here\n")


def test_a_bug_exits_70_and_ctrl_c_130():
    import pytest
    import typer

    from ctxcli.cli.common import handle_errors

    with pytest.raises(typer.Exit) as e:
        with handle_errors():
            raise RuntimeError("postgresql://u:hunter22@h/d")
    assert e.value.exit_code == ExitCode.INTERNAL == 70
    with pytest.raises(typer.Exit) as e:
        with handle_errors():
            raise KeyboardInterrupt
    assert e.value.exit_code == ExitCode.INTERRUPTED == 130
