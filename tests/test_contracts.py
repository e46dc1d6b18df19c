"""Published contracts (#21): version, completion, the linked trace, schemas."""

from __future__ import annotations

from ctxcli import BUILDER_VERSION, __version__

from .conftest import run_cli


def test_version_prints_both_versions():
    r = run_cli(["--version"])
    assert r.exit_code == 0
    assert r.stdout == f"ctx {__version__} ({BUILDER_VERSION})\n"


def test_show_completion_prints_a_bash_script():
    r = run_cli(["--show-completion", "bash"])
    assert r.exit_code == 0
    assert "_ctx_completion" in r.stdout and "complete " in r.stdout
