"""Terminal output reads at 80 columns (issue 31.6): no table line is wider than the terminal,
and no word is broken — a word longer than its column (an id) is folded, a table too wide for
the terminal is printed as one block of `column: value` lines per row."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import run_cli

BOX = "┏┃┡│└┗┠╇━─"


def _check(text: str, words: set[str]) -> None:
    for line in text.splitlines():
        if line[:1] in BOX:
            assert len(line) <= 80, line
    flat = " ".join(text.split())
    for w in words:
        assert w in flat, f"{w!r} broken or missing"


def _words(*texts: str) -> set[str]:
    return {w for t in texts for w in re.findall(r"[^\s,;:()\[\]]+", t) if 4 <= len(w) <= 20}


@pytest.fixture
def narrow(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")


def test_investigate_and_explain_omissions_at_80_columns(store, narrow, tmp_path):
    r = run_cli(["investigate", "C-102", "--out", tmp_path / "run"])
    assert r.exit_code == 0, r.stderr
    ans = json.loads((tmp_path / "run" / "answer.json").read_text())
    _check(r.stdout, _words(*(c["text"] for c in ans["claims"])) | {e for c in ans["claims"] for e in c["evidence"]})
    r = run_cli(["explain-omissions", tmp_path / "run"])
    assert r.exit_code == 0, r.stderr
    _check(r.stdout, {"omitted", "candidate(s)"})


def test_wide_tables_become_blocks_at_80_columns(store, narrow):
    r = run_cli(["sources"])
    assert r.exit_code == 0, r.stderr
    assert "• source: claims-core\n    tenant: tenant-demo\n    owner: claims-platform\n" in r.stdout
    _check(r.stdout, {"claims-documents", "confidential", "authoritative", "claim_review"})
    r = run_cli(["eval", "--case", "C-102", "--variant", "base"])
    assert r.exit_code == 0, r.stderr
    assert "• run: C-102\n    result: pass\n" in r.stdout


def test_a_wide_terminal_keeps_the_table(store, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    r = run_cli(["sources"])
    assert r.exit_code == 0 and "┃ source" in r.stdout and "• source" not in r.stdout
