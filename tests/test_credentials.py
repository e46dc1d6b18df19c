"""Issue 46 item 4: connection strings read with libpq's rules — a password, passfile or
sslpassword is refused in a manifest or ctx.toml however spelled (percent-encoded keys
included), and masked in every message."""

from __future__ import annotations

import pytest

from ctxcli.util.passwords import conninfo, mask, secret_keys

from .conftest import run_cli

SECRET = "SECRET-46-pw"


@pytest.mark.parametrize("address,key", [
    (f"postgresql://user@host/db?pass%77ord={SECRET}", "password"),
    (f"postgresql://user@host/db?sslmode=require&PASSWORD={SECRET}", "password"),
    (f"postgresql://user:{SECRET}@host/db", "password"),
    ("postgresql://user@host/db?passfile=/tmp/pgpass", "passfile"),
    (f"postgresql://user@host/db?ssl%70assword={SECRET}", "sslpassword"),
    (f"host=h dbname=d password={SECRET}", "password"),
    ("host=h dbname=d passfile=/tmp/pgpass", "passfile"),
])
def test_every_spelling_of_a_secret_is_found_and_masked(address, key):
    assert secret_keys(address) == [key]
    assert SECRET not in mask(f"cannot connect to {address}: refused", address)
    assert SECRET not in mask(f"cannot connect to {address}: refused")


def test_an_address_without_a_secret_passes_and_is_decoded():
    a = "postgresql://user@host:5433/db?sslmode=require&application_name=ctx%20load"
    assert secret_keys(a) == []
    assert conninfo(a)["application_name"] == "ctx load" and conninfo(a)["port"] == "5433"
    assert mask(a, a) == a


@pytest.mark.parametrize("database", [f"postgresql://user@host/db?pass%77ord={SECRET}",
                                      "postgresql://user@host/db?passfile=/tmp/pgpass"])
def test_a_manifest_never_holds_a_secret(database):
    from pydantic import ValidationError

    from ctxcli.models.manifest import TableOptions

    with pytest.raises(ValidationError) as e:
        TableOptions(format="postgres", database=database, table="t")
    assert "a manifest never holds a pass" in str(e.value) and SECRET not in str(e.value)


def test_ctx_toml_never_holds_a_secret_and_db_errors_mask_it(project_copy, monkeypatch):
    monkeypatch.delenv("CTX_DB", raising=False)
    (project_copy / "ctx.toml").write_text(f'[project]\nstore = "postgresql://u@127.0.0.1:1/db?pass%77ord={SECRET}"\n')
    r = run_cli(["sources"])
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "ctx.toml: project.store: a project file never holds a password" in r.stderr
    assert SECRET not in r.stdout + r.stderr
    (project_copy / "ctx.toml").unlink()
    r = run_cli(["sources", "--db", f"postgresql://u@127.0.0.1:1/db?pass%77ord={SECRET}"])
    assert r.exit_code != 0 and "pass%77ord=***" in r.stderr, r.stderr
    assert SECRET not in r.stdout + r.stderr
