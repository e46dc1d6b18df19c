"""The vector model as an extra (issue 31 item 10): a store holds vectors only when a playbook
asks (`vectors: true`) or `ctx load --vectors` does; without the `vectors` extra such a load, and
`--strategy hybrid`, exit 2 with the pip command, and every other load works without the model."""

from __future__ import annotations

import duckdb
import pytest

from ctxcli.embed import model as embed_model

from .conftest import REPO, run_cli

HINT = "needs the vector model, which is not installed: pip install 'ctx-investigator[vectors]'"


@pytest.fixture
def claims(tmp_path, monkeypatch):
    """The claims example (its playbook asks for no vectors) as the project."""
    proj = tmp_path / "claims"
    assert run_cli(["init", proj, "--example", "claims"]).exit_code == 0
    monkeypatch.setenv("CTX_ROOT", str(proj))
    monkeypatch.delenv("CTX_DB")        # the project's own store, proj/.ctx/ctx.duckdb
    return proj


@pytest.fixture
def no_extra(monkeypatch):
    """As if the `vectors` extra were not installed: the model's package cannot be found."""
    monkeypatch.setattr(embed_model, "PACKAGE", "wordllama_not_installed")
    embed_model._CACHE.clear()
    yield
    embed_model._CACHE.clear()


def _vectors(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return (con.execute("SELECT count(*) FROM vectors").fetchone()[0],
                sorted(k for (k,) in con.execute("SELECT key FROM meta WHERE key LIKE 'embedding%'").fetchall()))
    finally:
        con.close()


def test_a_store_has_vectors_only_when_asked(claims):
    db = claims / ".ctx" / "ctx.duckdb"
    r = run_cli(["load", "--json"])
    assert r.exit_code == 0, r.output
    assert _vectors(db) == (0, [])
    # hybrid on a store without vectors says how to get them (exit 3, the store's problem)
    r = run_cli(["investigate", "C-102", "--strategy", "hybrid"])
    assert r.exit_code == 3
    assert r.stderr == (f"ctx: error: the store {db} holds no vectors; rebuild it with `ctx load --vectors` "
                        "(or set `vectors: true` in a playbook)\n")
    r = run_cli(["load", "--vectors", "--json"])
    assert r.exit_code == 0, r.output
    n, keys = _vectors(db)
    assert n > 0 and keys == ["embedding_dim", "embedding_model", "embedding_version", "embedding_weights_sha256"]
    assert run_cli(["investigate", "C-102", "--strategy", "hybrid", "--json"]).exit_code == 0


def test_the_bundled_store_has_vectors_because_a_playbook_asks(store):
    text = (REPO / "manifests" / "playbooks" / "payment-restore-lookup.yaml").read_text()
    assert "\nvectors: true\n" in text
    n, keys = _vectors(store)
    assert n > 0 and "embedding_weights_sha256" in keys


def test_without_the_extra_a_plain_load_and_investigation_work(claims, no_extra):
    r = run_cli(["load", "--json"])
    assert r.exit_code == 0, r.output
    assert _vectors(claims / ".ctx" / "ctx.duckdb") == (0, [])
    r = run_cli(["investigate", "C-102", "--as-of", "2026-07-23T12:00:00+08:00", "--json"])
    assert r.exit_code == 0, r.output
    assert '"verdict": "complete"' in r.stdout


def test_without_the_extra_load_vectors_exits_2_with_the_pip_command_and_writes_nothing(claims, no_extra):
    r = run_cli(["load", "--vectors"])
    assert (r.exit_code, r.stderr) == (2, f"ctx: error: ctx load --vectors {HINT}\n")
    assert not (claims / ".ctx").exists()


def test_without_the_extra_a_playbook_asking_for_vectors_exits_2_naming_it(project_copy, no_extra):
    r = run_cli(["load"])
    assert (r.exit_code, r.stderr) == (
        2, f"ctx: error: manifests/playbooks/payment-restore-lookup.yaml (vectors: true) {HINT}\n")
    assert not (project_copy / ".ctx").exists()


@pytest.mark.parametrize("args", [["investigate", "C-102", "--strategy", "hybrid"],
                                  ["eval", "--strategy", "all"]])
def test_without_the_extra_hybrid_exits_2_with_the_pip_command(claims, no_extra, args):
    r = run_cli(args)
    # before anything runs: no store is loaded first, no run folder written
    assert (r.exit_code, r.stderr) == (2, f"ctx: error: --strategy hybrid {HINT}\n")
    assert not (claims / ".ctx").exists() and not (claims / "runs").exists()


def test_without_the_extra_init_of_an_example_asking_for_vectors_says_to_install_it_first(tmp_path, no_extra):
    import json

    r = run_cli(["init", tmp_path / "inc", "--example", "incident", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["next_steps"] == ["pip install 'ctx-investigator[vectors]'", "ctx load",
                                                  "ctx investigate INC-2026-0723", "ctx runs"]
    r = run_cli(["init", tmp_path / "claims", "--example", "claims", "--json"])
    assert json.loads(r.stdout)["next_steps"] == ["ctx load", "ctx investigate C-102", "ctx runs"]


def test_vectors_is_a_strict_boolean(claims):
    pb = claims / "manifests" / "playbooks" / "motor-claim-review.yaml"
    text = pb.read_text()
    pb.write_text(text.replace("\nmax_rounds:", '\nvectors: "yes"\nmax_rounds:', 1))
    line = pb.read_text().splitlines().index('vectors: "yes"') + 1
    r = run_cli(["load"])
    assert (r.exit_code, r.stderr) == (
        2, f"ctx: error: manifests/playbooks/motor-claim-review.yaml:{line}:1: vectors: Input should be a valid "
           "boolean\n")
    assert not (claims / ".ctx").exists()
