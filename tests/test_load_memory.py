"""The load's memory limit (load/build.py memory_limit): $CTX_LOAD_MEMORY_LIMIT sets DuckDB's
buffer pool for the build; a value that is not a size is a usage error before any source is
read, and a build that runs out of memory says so, names the variable and leaves the
previous store as it was."""

from __future__ import annotations

import os

import pytest

from ctxcli.errors import UsageError
from ctxcli.load.build import memory_limit

from .conftest import run_cli


def _files(folder):
    return sorted(p.name for p in folder.iterdir())


def test_a_bad_memory_limit_is_one_line_and_exit_2_before_any_source_is_read(project_copy, monkeypatch):
    db = project_copy / ".ctx" / "ctx.duckdb"
    monkeypatch.setenv("CTX_LOAD_MEMORY_LIMIT", "lots")
    r = run_cli(["load", "--db", db])
    assert r.exit_code == 2
    assert r.stderr == "ctx: error: $CTX_LOAD_MEMORY_LIMIT: 'lots' is not a size such as 2GB or 512MB\n"
    assert not db.exists()


def test_the_memory_limit_takes_what_duckdb_takes_and_no_zero(monkeypatch):
    monkeypatch.delenv("CTX_LOAD_MEMORY_LIMIT", raising=False)
    assert memory_limit() == "2GB"
    for good in ("4GB", "0.5GB", "512 MB", "1.5gib", "64MiB"):
        monkeypatch.setenv("CTX_LOAD_MEMORY_LIMIT", good)
        assert memory_limit() == good
    for bad in ("0GB", "0.0GB", "2", "GB", "-1GB", "2 GB extra"):
        monkeypatch.setenv("CTX_LOAD_MEMORY_LIMIT", bad)
        with pytest.raises(UsageError):
            memory_limit()


def test_a_load_out_of_memory_names_the_limit_and_keeps_the_previous_store(project_copy, monkeypatch):
    db = project_copy / ".ctx" / "ctx.duckdb"
    assert run_cli(["load", "--db", db]).exit_code == 0
    before, stat = db.read_bytes(), os.stat(db)
    names = _files(db.parent)
    monkeypatch.setenv("CTX_LOAD_MEMORY_LIMIT", "1MB")
    r = run_cli(["load", "--db", db, "--full"])
    assert r.exit_code == 3
    assert r.stderr.startswith(f"ctx: error: could not build the store {db}: Out of Memory Error: ")
    assert r.stderr.endswith("(the previous store, if any, is unchanged; $CTX_LOAD_MEMORY_LIMIT raises the "
                             "load's memory limit, now 1MB)\n")
    assert r.stderr.count("\n") == 1
    assert db.read_bytes() == before and os.stat(db).st_mtime_ns == stat.st_mtime_ns
    assert _files(db.parent) == names           # no staging file or spill folder left behind
    monkeypatch.setenv("CTX_LOAD_MEMORY_LIMIT", "512MB")
    assert run_cli(["load", "--db", db, "--full"]).exit_code == 0
