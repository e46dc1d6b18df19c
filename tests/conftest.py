"""Tests never depend on the machine: store and outputs live under tmp_path, CTX_* and OTEL_*
variables are cleared, and the working folder is the repository (for manifests, playbooks, cases)."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from pathlib import Path

import pytest

from . import store_cache, verdict_seed

REPO = Path(__file__).resolve().parents[1]
verdict_seed.install()      # planted-bug runs only (tests/verdict_seed.py): a no-op in the suite


@pytest.fixture(autouse=True)
def _isolate(monkeypatch, tmp_path):
    for k in list(os.environ):
        if k.startswith(("CTX_", "OTEL_")):
            monkeypatch.delenv(k)
    monkeypatch.setenv("CTX_ROOT", str(REPO))
    monkeypatch.setenv("CTX_DB", str(tmp_path / "store" / "ctx.duckdb"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    yield
    # a store kept open by an in-process server (serve/server.build_server keeps its readers)
    # is not the next test's: it would refuse their own connections to the same file
    if "ctxcli.store.readers" in sys.modules:
        from ctxcli.store import close_kept

        close_kept()


@pytest.fixture(scope="session")
def bundled_store(tmp_path_factory) -> Path:
    """The bundled example corpus, loaded once per test session (read-only for tests)."""
    from ctxcli.load.build import build_store

    folder = tmp_path_factory.mktemp("bundled")
    db = folder / "ctx.duckdb"
    store_cache.build(folder, lambda: build_store(REPO / "manifests", db, root=REPO), name="bundled",
                      inputs=[REPO / "manifests", REPO / "sources"])
    return db


@pytest.fixture
def store(bundled_store, monkeypatch) -> Path:
    monkeypatch.setenv("CTX_DB", str(bundled_store))
    return bundled_store


@pytest.fixture(scope="session")
def retail_project(tmp_path_factory) -> Path:
    """The retail example (examples/agent/retail/, a project of its own) copied and loaded once
    per test session (read-only for tests: runs go to each test's own folder)."""
    from ctxcli.load.build import build_store

    src = REPO / "examples" / "agent" / "retail"
    cache = os.environ.get(store_cache.ENV)
    # the store records its project's absolute path: with the cache, one stable folder per tree
    base = Path(cache) / f"retail-{hashlib.sha256(str(REPO).encode()).hexdigest()[:12]}" if cache else tmp_path_factory.mktemp("retail")
    dst = base / "retail"
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".ctx", "runs"))
    store_cache.build(dst / ".ctx", lambda: build_store(dst / "manifests", dst / ".ctx" / "ctx.duckdb", root=dst),
                      name="retail", inputs=[src], extra=str(dst))
    return dst


@pytest.fixture
def retail(retail_project, monkeypatch) -> Path:
    monkeypatch.setenv("CTX_ROOT", str(retail_project))
    monkeypatch.setenv("CTX_DB", str(retail_project / ".ctx" / "ctx.duckdb"))
    return retail_project


@pytest.fixture
def project_copy(tmp_path, monkeypatch) -> Path:
    """A private copy of manifests/, sources/ and examples/ that a test may edit."""
    dst = tmp_path / "proj"
    for name in ("manifests", "sources", "examples"):
        shutil.copytree(REPO / name, dst / name, symlinks=True)
    monkeypatch.setenv("CTX_ROOT", str(dst))
    monkeypatch.delenv("CTX_DB")        # the project's own store: dst/.ctx/ctx.duckdb, loaded on first use
    return dst


def run_cli(args, **kw):
    from typer.testing import CliRunner

    from ctxcli.cli.main import app

    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False, **kw)


class Counting:
    """A connection that records each statement it runs in ``ran`` (tests that count statements)."""

    def __init__(self, con, ran: list[str]) -> None:
        self.con, self.ran = con, ran

    def execute(self, sql, *args):
        self.ran.append(sql)
        return self.con.execute(sql, *args)
