"""One manifest, many tenants (load/tenants.py): ``tenants:`` and ``extends:`` expand into one
source per tenant, each with its own id, digest and access rules, equal to hand-written
manifests; nothing of one tenant reaches another's investigation; each mistake is one line at
the manifest's file:line:column naming the tenant entry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pytest

import ctxcli
from ctxcli.errors import InputError
from ctxcli.load.build import build_store
from ctxcli.load.parse import read_manifests

from .conftest import run_cli

SCAFFOLD = Path(ctxcli.__file__).parent / "scaffold" / "empty"
LEDGER = "manifests/sources/expense-ledger.yaml"

SHARED = """source_type: ledger
owner_team: finance-ops
classification: internal
trust_level: authoritative
required_scopes: [expense:read]
allowed_purposes: [expense_review]
refresh_sla: 24h
deletion_mode: none
parser: records
parser_version: "1"
schema_version: 1
enabled: true
"""
TENANTS = """source_id: expense-ledger
{shared}tenants:
  - tenant_id: acme
    snapshot: sources/acme/expense-ledger
  - tenant_id: globex
    source_id: globex-expenses
    snapshot: sources/globex/expense-ledger
    owner_team: globex-finance
"""
POLICY_BASE = """source_type: wiki
owner_team: finance-ops
classification: internal
trust_level: internal
required_scopes: [policy:read]
allowed_purposes: [expense_review]
refresh_sla: 30d
deletion_mode: none
parser: markdown
parser_version: "1"
schema_version: 1
enabled: true
"""
POLICY = """extends: bases/travel-policy.yaml
source_id: travel-policy-{t}
tenant_id: {t}
snapshot: sources/{t}/travel-policy
"""
# globex's copy of acme's data: every word that tells the tenants apart is replaced
GLOBEX = (("acme", "globex"), ("Lyon", "Oslo"), ("Celestins", "Fjordhotel"), ("e-17", "g-88"), ("1840", "1500"),
          ("400", "300"))


def _project(tmp_path: Path, monkeypatch) -> Path:
    """The scaffold's expense project with a second tenant, globex: the ledger declared once with
    two tenants, the travel policy by two manifests extending one base; a case per tenant."""
    root = tmp_path / "proj"
    shutil.copytree(SCAFFOLD, root)
    for name in ("expense-ledger", "travel-policy"):
        shutil.move(root / "sources" / name, root / "sources" / "acme" / name)
        for f in (root / "sources" / "acme" / name).iterdir():
            text = f.read_text()
            for a, b in GLOBEX:
                text = text.replace(a, b)
            (root / "sources" / "globex" / name).mkdir(parents=True, exist_ok=True)
            (root / "sources" / "globex" / name / f.name).write_text(text)
    src = root / "manifests" / "sources"
    for f in src.iterdir():
        f.unlink()
    (src / "expense-ledger.yaml").write_text(TENANTS.format(shared=SHARED))
    (root / "manifests" / "bases").mkdir()
    (root / "manifests" / "bases" / "travel-policy.yaml").write_text(POLICY_BASE)
    for t in ("acme", "globex"):
        (src / f"travel-policy-{t}.yaml").write_text(POLICY.format(t=t))
    case = (root / "examples" / "cases" / "EXP-7.yaml").read_text()
    glx = case.replace("case_id: EXP-7", "case_id: GLX-7").replace("tenant_id: acme", "tenant_id: globex")
    (root / "examples" / "cases" / "GLX-7.yaml").write_text(glx.replace("nightly_rate: 460", "nightly_rate: 375"))
    monkeypatch.setenv("CTX_ROOT", str(root))
    monkeypatch.setenv("CTX_DB", str(root / ".ctx" / "ctx.duckdb"))
    return root


def _rows(db: Path, sql: str) -> list:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _run_files(root: Path, case: str) -> str:
    r = run_cli(["investigate", case])
    assert r.exit_code == 0, r.output
    (run,) = (root / "runs").glob(f"{case}-*")
    return "\n".join((run / f).read_text() for f in ("pack.json", "trace.jsonl", "answer.json"))


def test_each_tenant_is_a_source_and_each_investigation_sees_only_its_tenant(tmp_path, monkeypatch):
    root = _project(tmp_path, monkeypatch)
    r = run_cli(["check"])
    assert r.exit_code == 0, r.output
    r = run_cli(["check", root / "manifests", "--json"])      # a base is checked through its manifests
    assert r.exit_code == 0, r.output
    assert {c["file"]: c["kind"] for c in json.loads(r.stdout)["checked"]}["manifests/bases/travel-policy.yaml"] == "base"
    r = run_cli(["load", "--json"])
    assert r.exit_code == 0, r.output
    assert sorted(s["source_id"] for s in json.loads(r.stdout)["sources"]) == [
        "expense-ledger-acme", "globex-expenses", "travel-policy-acme", "travel-policy-globex"]
    r = run_cli(["sources", "--json"])
    got = {s["source_id"]: (s["tenant_id"], s["owner_team"], s["n_objects"]) for s in json.loads(r.stdout)["sources"]}
    assert got == {"expense-ledger-acme": ("acme", "finance-ops", 2), "globex-expenses": ("globex", "globex-finance", 2),
                   "travel-policy-acme": ("acme", "finance-ops", 1), "travel-policy-globex": ("globex", "finance-ops", 1)}
    # every record keeps the tenant of its expansion
    assert _rows(root / ".ctx" / "ctx.duckdb", "SELECT DISTINCT source_id, tenant_id FROM objects ORDER BY 1") == [
        ("expense-ledger-acme", "acme"), ("globex-expenses", "globex"), ("travel-policy-acme", "acme"),
        ("travel-policy-globex", "globex")]

    acme = _run_files(root, "EXP-7")
    globex = _run_files(root, "GLX-7")
    assert "expense-ledger-acme" in acme and "travel-policy-acme" in acme and "Lyon" in acme
    assert "globex-expenses" in globex and "travel-policy-globex" in globex and "Oslo" in globex
    for word in ("globex", "Oslo", "Fjordhotel", "g-88", "1500"):
        assert word not in acme, word
    for word in ("acme", "Lyon", "Celestins", "e-17", "1840"):
        assert word not in globex, word
    for case, rate in (("EXP-7", 460), ("GLX-7", 375)):
        (run,) = (root / "runs").glob(f"{case}-*")
        ans = json.loads((run / "answer.json").read_text())
        assert ans["verdict"] == "complete"
        assert f"{rate}" in json.dumps(ans["claims"])


HAND = {
    "expense-ledger-acme": "source_id: expense-ledger-acme\ntenant_id: acme\n{shared}snapshot: sources/acme/expense-ledger\n",
    "globex-expenses": "source_id: globex-expenses\ntenant_id: globex\n{shared}"
                       "snapshot: sources/globex/expense-ledger\n",
    "travel-policy-acme": "source_id: travel-policy-acme\ntenant_id: acme\n{policy}snapshot: sources/acme/travel-policy\n",
    "travel-policy-globex": "source_id: travel-policy-globex\ntenant_id: globex\n{policy}"
                            "snapshot: sources/globex/travel-policy\n",
}


def test_the_expansions_equal_hand_written_manifests(tmp_path, monkeypatch):
    root = _project(tmp_path, monkeypatch)
    a = build_store(root / "manifests", tmp_path / "a.duckdb", root=root)
    src = root / "manifests" / "sources"
    for f in src.iterdir():
        f.unlink()
    shared_globex = SHARED.replace("owner_team: finance-ops", "owner_team: globex-finance")
    for sid, text in HAND.items():
        shared = shared_globex if sid == "globex-expenses" else SHARED
        (src / f"{sid}.yaml").write_text(text.format(shared=shared, policy=POLICY_BASE))
    b = build_store(root / "manifests", tmp_path / "b.duckdb", root=root)
    assert a.store_digest == b.store_digest
    for table in ("objects", "entities", "relations"):
        q = f"SELECT * EXCLUDE (doc_id) FROM {table} ORDER BY ALL" if table == "objects" else \
            f"SELECT * FROM {table} ORDER BY ALL"
        assert _rows(tmp_path / "a.duckdb", q) == _rows(tmp_path / "b.duckdb", q), table
    q = "SELECT * EXCLUDE (manifest_file) FROM sources ORDER BY source_id"
    assert _rows(tmp_path / "a.duckdb", q) == _rows(tmp_path / "b.duckdb", q)
    assert len(_rows(tmp_path / "a.duckdb", q)) == 4


def test_one_tenants_change_reloads_only_its_source(tmp_path, monkeypatch):
    root = _project(tmp_path, monkeypatch)
    db = root / ".ctx" / "ctx.duckdb"
    first = build_store(root / "manifests", db, root=root)
    every = sorted(s.source_id for s in first.sources)
    assert sorted(build_store(root / "manifests", db, root=root).reused) == every
    p = root / LEDGER
    p.write_text(p.read_text().replace("owner_team: globex-finance", "owner_team: globex-audit"))
    r = run_cli(["check"])      # the stale-store check names that source only
    assert "source globex-expenses changed since the store was loaded" in r.output
    assert "expense-ledger-acme" not in r.output
    res = build_store(root / "manifests", db, root=root)
    assert sorted(res.reused) == [s for s in every if s != "globex-expenses"]
    assert _rows(db, "SELECT owner_team FROM sources WHERE source_id = 'globex-expenses'") == [("globex-audit",)]
    # a shared value changes both tenants' sources
    p.write_text(p.read_text().replace("refresh_sla: 24h", "refresh_sla: 12h"))
    res = build_store(root / "manifests", db, root=root)
    assert sorted(res.reused) == ["travel-policy-acme", "travel-policy-globex"]


def _error(root: Path) -> str:
    with pytest.raises(InputError) as ei:
        read_manifests(root / "manifests", root)
    r = run_cli(["load"])
    assert r.exit_code == 2 and r.stderr.strip().splitlines()[-1] == f"ctx: error: {ei.value}"
    return str(ei.value)


def _line(text: str, needle: str, nth: int = 1) -> tuple[int, int]:
    hits = [(i, ln.index(needle) + 1) for i, ln in enumerate(text.splitlines(), 1) if needle in ln]
    return hits[nth - 1]


def test_a_duplicate_source_id_names_both_expansions(tmp_path, monkeypatch):
    root = _project(tmp_path, monkeypatch)
    p = root / LEDGER
    p.write_text(p.read_text().replace("source_id: globex-expenses", "source_id: expense-ledger-acme"))
    ln, col = _line(p.read_text(), "source_id: expense-ledger-acme")
    assert _error(root) == (f"{LEDGER}:{ln}:{col}: tenants.1 (globex): source_id: source_id 'expense-ledger-acme' "
                            f"is already registered by {LEDGER} tenants.0 (acme)")
    # and across files: a hand-written manifest with an expansion's id
    p.write_text(TENANTS.format(shared=SHARED))
    (root / "manifests" / "sources" / "zz.yaml").write_text(HAND["globex-expenses"].format(shared=SHARED))
    assert _error(root) == ("manifests/sources/zz.yaml:1:1: source_id: source_id 'globex-expenses' is already "
                            f"registered by {LEDGER} tenants.1 (globex)")
    r = run_cli(["check"])
    assert r.exit_code == 1 and "source_id 'globex-expenses' is already registered" in r.output


def test_a_tenant_path_into_another_tenants_data_is_refused(tmp_path, monkeypatch):
    root = _project(tmp_path, monkeypatch)
    p = root / LEDGER
    p.write_text(p.read_text().replace("sources/globex/expense-ledger", "sources/acme/expense-ledger"))
    ln, col = _line(p.read_text(), "snapshot: sources/acme/expense-ledger", 2)
    assert _error(root) == (f"{LEDGER}:{ln}:{col}: tenants.1 (globex): snapshot: reads sources/acme/expense-ledger, "
                            f"and {LEDGER} tenants.0 (acme) (tenant acme) reads sources/acme/expense-ledger: a source "
                            "never reads another tenant's data")
    # a folder holding the other tenant's folder is the same mistake; a sibling folder is not
    p.write_text(TENANTS.format(shared=SHARED).replace("snapshot: sources/acme/expense-ledger", "snapshot: sources"))
    assert _error(root).endswith("tenants.1 (globex): snapshot: reads sources/globex/expense-ledger, and "
                                 f"{LEDGER} tenants.0 (acme) (tenant acme) reads sources: a source never reads "
                                 "another tenant's data")
    p.write_text(TENANTS.format(shared=SHARED).replace("sources/globex/expense-ledger", "sources/acme/expense-ledger2"))
    shutil.copytree(root / "sources" / "globex" / "expense-ledger", root / "sources" / "acme" / "expense-ledger2")
    assert [m.source_id for m, _, _ in read_manifests(root / "manifests", root)][:2] == [
        "expense-ledger-acme", "globex-expenses"]
    # one tenant's records under the other's id: each record is refused (it keeps its tenant)
    shutil.copy(root / "sources" / "acme" / "expense-ledger" / "objects.jsonl",
                root / "sources" / "acme" / "expense-ledger2" / "objects.jsonl")
    r = run_cli(["load"])
    assert r.exit_code == 2 and "tenant 'acme' differs from the source's tenant 'globex'" in r.stderr


def test_two_tenants_reading_one_folder_of_a_data_root_are_refused_whatever_the_roots_are_called(
        tmp_path, monkeypatch):
    """The same folder reached through two data-root names (or one root's folder holding the
    other's) is one tenant's data read under another's id; the message names the data root and
    the path inside it, never the machine path."""
    root = _project(tmp_path, monkeypatch)
    drop = tmp_path / "drop"
    shutil.move(root / "sources", drop)
    (tmp_path / "alias").symlink_to(drop)
    toml = root / "ctx.toml"
    toml.write_text((toml.read_text() if toml.exists() else "") +
                    f'\n[data.roots]\ncorp = "{drop}"\nmirror = "{tmp_path / "alias"}"\n')
    p = root / LEDGER
    text = TENANTS.format(shared=SHARED).replace("sources/acme/expense-ledger", '"@corp/acme/expense-ledger"')
    p.write_text(text.replace("sources/globex/expense-ledger", '"@corp/globex/expense-ledger"'))
    for t in ("acme", "globex"):
        pol = root / "manifests" / "sources" / f"travel-policy-{t}.yaml"
        pol.write_text(pol.read_text().replace(f"sources/{t}/travel-policy", f'"@corp/{t}/travel-policy"'))
    assert [m.source_id for m, _, _ in read_manifests(root / "manifests", root)][:2] == [
        "expense-ledger-acme", "globex-expenses"]          # apart: loads
    p.write_text(text.replace("sources/globex/expense-ledger", '"@mirror/acme/expense-ledger"'))
    ln, col = _line(p.read_text(), 'snapshot: "@mirror/acme/expense-ledger"')
    msg = _error(root)
    assert msg == (f"{LEDGER}:{ln}:{col}: tenants.1 (globex): snapshot: reads @corp/acme/expense-ledger, "
                   f"and {LEDGER} tenants.0 (acme) (tenant acme) reads @corp/acme/expense-ledger: a source "
                   "never reads another tenant's data")
    p.write_text(text.replace("sources/globex/expense-ledger", '"@mirror"'))        # a folder holding it
    assert _error(root).endswith("tenants.1 (globex): snapshot: reads @corp, and "
                                 f"{LEDGER} tenants.0 (acme) (tenant acme) reads @corp/acme/expense-ledger: a "
                                 "source never reads another tenant's data")
    assert str(tmp_path) not in msg


def test_an_unknown_key_in_a_tenant_entry_says_did_you_mean(tmp_path, monkeypatch):
    root = _project(tmp_path, monkeypatch)
    p = root / LEDGER
    p.write_text(p.read_text().replace("    owner_team: globex-finance", "    ownr_team: globex-finance"))
    ln, col = _line(p.read_text(), "ownr_team")
    want = f"{LEDGER}:{ln}:{col}: tenants.1 (globex): unknown key 'ownr_team' (did you mean owner_team?)"
    assert _error(root) == want
    r = run_cli(["check"])
    assert r.exit_code == 1 and want in r.output
    # a key every tenant shares is said so; a parser block's path key is a tenant's
    p.write_text(TENANTS.format(shared=SHARED).replace("    owner_team: globex-finance", "    parser: markdown"))
    assert "tenants.1 (globex): parser is shared by every tenant: set it in the manifest" in _error(root)
    p.write_text(TENANTS.format(shared=SHARED).replace("    owner_team: globex-finance", "    git: {pth: repo}"))
    assert "tenants.1 (globex): unknown key git.pth (did you mean path?)" in _error(root)
    # one tenant twice; a tenant named beside the tenants
    p.write_text(TENANTS.format(shared=SHARED).replace("tenant_id: globex", "tenant_id: acme"))
    ln, col = _line(p.read_text(), "tenant_id: acme", 2)
    assert _error(root) == f"{LEDGER}:{ln}:{col}: tenants.1 (acme): tenant acme has two entries: tenants.0 and tenants.1"
    p.write_text("tenant_id: acme\n" + TENANTS.format(shared=SHARED))
    assert _error(root) == (f"{LEDGER}:1:1: tenant_id: a manifest with tenants names each tenant in its entry "
                            "(tenants: - tenant_id: …)")
    # a refused value is located in the tenant entry that wrote it
    p.write_text(TENANTS.format(shared=SHARED).replace("    owner_team: globex-finance", "    classification: secret"))
    ln, col = _line(p.read_text(), "classification: secret")
    assert _error(root).startswith(f"{LEDGER}:{ln}:{col}: tenants.1 (globex): classification: Input should be")


def test_extends_a_missing_base_or_a_cycle_is_one_line(tmp_path, monkeypatch):
    root = _project(tmp_path, monkeypatch)
    p = root / "manifests" / "sources" / "travel-policy-globex.yaml"
    p.write_text(p.read_text().replace("bases/travel-policy.yaml", "bases/travel-polcy.yaml"))
    assert _error(root) == ("manifests/sources/travel-policy-globex.yaml:1:1: extends: no base manifest "
                            "bases/travel-polcy.yaml in manifests")
    base = root / "manifests" / "bases" / "travel-policy.yaml"
    p.write_text(p.read_text().replace("bases/travel-polcy.yaml", "bases/travel-policy.yaml"))
    (root / "manifests" / "bases" / "b.yaml").write_text("extends: bases/travel-policy.yaml\n")
    base.write_text("extends: bases/b.yaml\n" + POLICY_BASE)
    assert _error(root) == ("manifests/bases/b.yaml:1:1: extends: a cycle of bases: manifests/bases/travel-policy.yaml"
                            " -> manifests/bases/b.yaml -> manifests/bases/travel-policy.yaml")
    base.write_text("extends: ../sources/acme/x.yaml\n" + POLICY_BASE)
    assert "extends: ../sources/acme/x.yaml: a base manifest lies inside the manifests folder" in _error(root)
    # a value the base refuses is located in the base
    base.write_text(POLICY_BASE.replace("refresh_sla: 30d", "refresh_sla: soon"))
    assert _error(root).startswith("manifests/bases/travel-policy.yaml:7:1: refresh_sla:")
    # a manifest's own value replaces the base's
    base.write_text(POLICY_BASE)
    p.write_text(p.read_text() + "classification: confidential\n")
    got = {m.source_id: m.classification.value for m, _, _ in read_manifests(root / "manifests", root)}
    assert got["travel-policy-globex"] == "confidential" and got["travel-policy-acme"] == "internal"


def test_an_error_found_while_reading_a_tenants_data_names_its_entry(tmp_path, monkeypatch):
    root = _project(tmp_path, monkeypatch)
    p = root / LEDGER
    p.write_text(p.read_text().replace("sources/globex/expense-ledger", "sources/globex/nope"))
    ln, col = _line(p.read_text(), "snapshot: sources/globex/nope")
    r = run_cli(["load"])
    assert r.exit_code == 2
    assert r.stderr.strip() == (f"ctx: error: {LEDGER}:{ln}:{col}: tenants.1 (globex): snapshot: snapshot folder "
                                "sources/globex/nope does not exist")
    # a misspelt name in a base's mapping: at the manifest's extends line, for each tenant
    p.write_text(TENANTS.format(shared=SHARED))
    for t in ("acme", "globex"):
        (root / "manifests" / "sources" / f"travel-policy-{t}.yaml").unlink()
    (root / "manifests" / "sources" / "travel-policy.yaml").write_text(
        "extends: bases/travel-policy.yaml\nsource_id: travel-policy\ntenants:\n"
        "  - {tenant_id: acme, snapshot: sources/acme/travel-policy}\n"
        "  - {tenant_id: globex, snapshot: sources/globex/travel-policy}\n")
    (root / "manifests" / "bases" / "travel-policy.yaml").write_text(POLICY_BASE + "mapping: {title: titel}\n")
    r = run_cli(["load"])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert lines[0].startswith("ctx: error: manifests/sources/travel-policy.yaml:1:1: tenants.0 (acme): mapping.title: ")
    assert "'titel'" in lines[0]
    r = run_cli(["check"])
    assert r.exit_code == 1
    assert [ln.split(": mapping.title")[0] for ln in r.output.splitlines() if "titel" in ln] == [
        "manifests/sources/travel-policy.yaml:1:1: tenants.0 (acme)",
        "manifests/sources/travel-policy.yaml:1:1: tenants.1 (globex)"]
