"""Docs that cannot drift: every command is in the README and has a runnable example in its
help, and the README's postmortem walk-through runs with the documented exit codes."""

from __future__ import annotations

import re
import shlex

import pytest

from ctxcli.cli.main import app

from .conftest import REPO, run_cli

README = (REPO / "README.md").read_text(encoding="utf-8")
COMMANDS = sorted(c.name or c.callback.__name__ for c in app.registered_commands)


def test_every_command_is_documented_in_the_readme():
    assert len(COMMANDS) >= 8
    for name in COMMANDS:
        assert f"| `ctx {name}" in README, name


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_help_ends_with_an_example(name):
    r = run_cli([name, "--help"])
    assert r.exit_code == 0
    assert re.search(rf"Example: ctx {name}\b", r.stdout), r.stdout


def test_readme_first_commands_are_install_run_and_test():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    assert "pip install -e '.[vectors,git,tables]' && ctx investigate C-102 --as-of 2026-07-23T12:00:00+08:00" in blocks[0]
    assert "pip install -e '.[test]' && python -m pytest -q -n 2" in blocks[1]
    ci = (REPO / ".ci" / "run").read_text()
    assert blocks[1].strip() in ci


def test_readme_postmortem_walkthrough_runs(store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    block = re.search(r"Then, in a postmortem:\n\n```bash\n(.*?)```", README, re.S).group(1)
    expected = {"diff": 1}   # the restricted pack differs from the default one
    for line in block.strip().splitlines():
        args = shlex.split(line.split("#")[0])
        assert args[0] == "ctx"
        args = [a if not a.startswith("runs/") else str(tmp_path / a) for a in args[1:]]
        r = run_cli(args)
        assert r.exit_code == expected.get(args[0], 0), (line, r.stdout[-500:], r.stderr[-500:])


def test_data_contracts_describe_every_parser():
    """docs/data-contracts.md has a section per registered parser and names each in the
    manifest's `parser` row."""
    from ctxcli.load.parsers import BUNDLED as REGISTRY

    text = (REPO / "docs" / "data-contracts.md").read_text(encoding="utf-8")
    row = next(ln for ln in text.splitlines() if ln.startswith("| `parser`, `parser_version` |"))
    assert sorted(REGISTRY) == ["api", "git", "json-export", "markdown", "records", "table"]
    for name in REGISTRY:
        assert f"\n### `parser: {name}`\n" in text, name
        assert f"`{name}`" in row, name


# A reference to a section of the performance pages: the file's path, then the section's name in
# double quotes (as docs/eval.md cites the vector rows), line breaks allowed between and inside.
PERF_REF = re.compile(r'(docs/performance\.md|benchmarks/results/performance-history\.md),?\s+"([^"]+)"')


def _sections(path):
    """The names a reference may use: headings, and the bold lead of a bullet."""
    text = path.read_text(encoding="utf-8")
    heads = [ln.lstrip("#").strip() for ln in text.splitlines() if ln.startswith("#")]
    bold = re.findall(r"^\s*- \*\*(.+?)\*\*", text, re.M)
    return heads + bold


def test_every_reference_to_a_performance_section_finds_it():
    """The performance page was split (a short page in docs/, the measurement log under
    benchmarks/results/): a reference naming a section must find it in the file it names."""
    files = [REPO / "README.md", REPO / "benchmarks" / "README.md", *(REPO / "docs").glob("*.md"),
             *(REPO / "src").rglob("*.py"), *(REPO / "tests").glob("*.py"), *(REPO / "benchmarks").glob("*.py")]
    found = []
    for f in files:
        for target, name in PERF_REF.findall(f.read_text(encoding="utf-8")):
            name = " ".join(name.split())
            sections = _sections(REPO / target)
            assert any(s.startswith(name) for s in sections), (
                f"{f.relative_to(REPO)} names {target} \"{name}\", which has no such section")
            found.append(name)
    assert len(found) >= 7, found


def test_every_benchmark_result_file_is_in_the_index():
    """benchmarks/results/README.md has one row per file of the folder, and no row for a file
    that is not there."""
    folder = REPO / "benchmarks" / "results"
    rows = [ln for ln in (folder / "README.md").read_text(encoding="utf-8").splitlines()
            if ln.startswith("| `")]
    indexed = []
    for row in rows:
        names = re.findall(r"`([^`]+)`", row.split("|")[1])
        for name in names:   # "`x.json`, `.log`": x.json and x.log
            indexed.append(names[0].rsplit(".", 1)[0] + name if name.startswith(".") else name)
    assert sorted(indexed) == sorted(p.name for p in folder.iterdir()), "index and folder differ"
