"""A lean default install (issue 49 item 11): the MCP server, the git parser, the SQLite, Excel
and PostgreSQL table parsers and OTLP are extras. Each missing extra is refused where it is first
needed, before any work: one line with the exact pip command, exit 2. Simulated in a subprocess
whose imports of the extra's packages fail (tests/without_modules.py); the lean side (the claims
example needs no extra) works with every extra missing."""

from __future__ import annotations

import pytest

from .conftest import REPO, run_cli
from .without_modules import run_without

EVERY_EXTRA = ("mcp", "dulwich", "duckdb_extension_sqlite", "duckdb_extension_excel",
               "duckdb_extension_postgres_scanner", "opentelemetry", "wordllama", "psycopg", "psycopg_pool")


def _line(what: str, extra: str) -> str:
    return f"ctx: error: {what} needs the {extra} extra, which is not installed: pip install 'ctx-investigator[{extra}]'\n"


def test_serve_without_the_serve_extra_is_refused_before_anything_listens(tmp_path):
    r = run_without(("mcp",), ["serve", "--transport", "http", "--port", "8765", "--db", tmp_path / "no.duckdb"],
                    cwd=REPO)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", _line("ctx serve", "serve"))


@pytest.mark.parametrize(("blocked", "what", "extra"), [
    ("dulwich", "manifests/sources/pay-runbooks.yaml: source pay-runbooks (parser: git)", "git"),
    ("duckdb_extension_sqlite", "manifests/sources/pay-service-catalog.yaml: source pay-service-catalog "
                                "(a sqlite table)", "tables"),
])
def test_a_load_needing_a_missing_extra_is_refused_before_any_source_is_read(project_copy, tmp_path, blocked, what,
                                                                             extra):
    store = project_copy / ".ctx"
    r = run_without((blocked,), ["load"], cwd=project_copy)
    assert (r.returncode, r.stderr) == (2, _line(what, extra))
    assert not (store / "ctx.duckdb").exists()
    assert [p.name for p in store.iterdir() if p.suffix != ".lock"] == []      # no load folder either
    # the README's first command loads the same sources on its way: refused the same, no run folder
    r = run_without((blocked,), ["investigate", "C-102", "--out", tmp_path / "run"], cwd=project_copy)
    assert (r.returncode, r.stderr) == (2, _line(what, extra))
    assert not (store / "ctx.duckdb").exists() and not (tmp_path / "run").exists()


@pytest.mark.parametrize(("blocked", "source", "what", "extra"), [
    ("dulwich", "pay-runbooks", "source pay-runbooks: the git parser", "git"),
    ("duckdb_extension_sqlite", "pay-service-catalog", "reading a table with DuckDB's sqlite extension", "tables"),
])
def test_the_parsers_refuse_a_missing_extra_where_they_need_it(blocked, source, what, extra):
    r = run_without((blocked,), ["sources", "preview", source], cwd=REPO)
    assert (r.returncode, r.stdout, r.stderr) == (2, "", _line(what, extra))


def test_without_any_extra_the_claims_example_loads_and_investigates(tmp_path, monkeypatch):
    proj = tmp_path / "claims"
    assert run_cli(["init", proj, "--example", "claims"]).exit_code == 0
    monkeypatch.setenv("CTX_ROOT", str(proj))
    monkeypatch.delenv("CTX_DB")        # the project's own store
    r = run_without(EVERY_EXTRA, ["load"], cwd=proj)
    assert (r.returncode, r.stderr) == (0, "")
    r = run_without(EVERY_EXTRA, ["investigate", "C-102", "--out", tmp_path / "run"], cwd=proj)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "run" / "pack.json").is_file()


def test_the_default_install_is_lean_and_the_test_extra_pulls_every_extra():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    deps, extras = project["dependencies"], project["optional-dependencies"]
    heavy = ("mcp", "dulwich", "duckdb-extension-", "opentelemetry", "wordllama", "psycopg")
    assert [d for d in deps if d.startswith(heavy)] == []
    for name, reqs in extras.items():
        if name not in ("test", "all"):
            assert set(reqs) <= set(extras["test"]), name          # `pip install -e '.[test]'` runs every test
    assert extras["all"] == ["ctx-investigator[serve,git,tables,otel,postgres,vectors]"]
    assert set(extras) == {"all", "test", "serve", "git", "tables", "otel", "postgres", "vectors"}


def test_init_of_an_example_says_which_extras_to_install_first(tmp_path):
    import json

    r = run_without(("dulwich", "duckdb_extension_sqlite", "wordllama"),
                    ["init", tmp_path / "inc", "--example", "incident", "--json"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["next_steps"] == ["pip install 'ctx-investigator[vectors,git,tables]'", "ctx load",
                                                  "ctx investigate INC-2026-0723", "ctx runs"]
    r = run_without(("duckdb_extension_sqlite",), ["init", tmp_path / "inc2", "--example", "incident", "--json"],
                    cwd=tmp_path)
    assert json.loads(r.stdout)["next_steps"][0] == "pip install 'ctx-investigator[tables]'"
    r = run_without(EVERY_EXTRA, ["init", tmp_path / "claims", "--example", "claims", "--json"], cwd=tmp_path)
    assert json.loads(r.stdout)["next_steps"] == ["ctx load", "ctx investigate C-102", "ctx runs"]
