"""The planted-bug runner's store cache (tests/store_cache.py): a cached store is only ever used
where a fresh build would be the same, i.e. its key changes with every file the build can run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from . import store_cache

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"


def test_the_key_covers_every_ctxcli_module_a_build_imports(tmp_path):
    """A fresh interpreter builds the bundled store; every ctxcli module it then holds is in the
    closure the key hashes (else a mutant there would reuse a store built without it)."""
    code = ("import sys; from pathlib import Path; from ctxcli.load.build import build_store; "
            f"build_store(Path({str(REPO / 'manifests')!r}), Path({str(tmp_path / 'ctx.duckdb')!r}), "
            f"root=Path({str(REPO)!r})); "
            "print('\\n'.join(sorted(m for m in sys.modules if m.split('.')[0] == 'ctxcli')))")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTX_", "TESTS_STORE"))}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True,
                         cwd=tmp_path).stdout.split()
    assert "ctxcli.load.build" in out
    missing = set(out) - store_cache.closure(SRC)
    assert not missing, missing


def _tree(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    shutil.copytree(SRC / "ctxcli", src / "ctxcli", ignore=shutil.ignore_patterns("__pycache__"))
    return src


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize("rel, covered", [
    ("load/build.py", True),            # the build itself
    ("store/duckdb_store.py", True),    # what the build writes with
    ("load/parsers/markdown.py", True),  # reached only by name (import_module): its whole package
    ("engine/gates.py", False),         # a query-time gate: the cached store stands
    ("answer/claims.py", False),
])
def test_a_change_moves_the_key_exactly_when_the_build_can_run_it(tmp_path, rel, covered):
    src = _tree(tmp_path)
    inputs = [REPO / "manifests"]
    before, _ = store_cache.key(src, inputs, "bundled")
    _edit(src / "ctxcli" / rel, "\n", "\nX_PLANTED = 1\n")
    after, _ = store_cache.key(src, inputs, "bundled")
    assert (after != before) is covered


def test_a_change_to_a_data_file_or_an_input_moves_the_key(tmp_path):
    src = _tree(tmp_path)
    inputs = tmp_path / "manifests"
    shutil.copytree(REPO / "manifests", inputs)
    k0, _ = store_cache.key(src, [inputs], "bundled")
    schema = next((src / "ctxcli" / "schemas").glob("*.json"))
    schema.write_text(schema.read_text(encoding="utf-8") + " ", encoding="utf-8")
    k1, _ = store_cache.key(src, [inputs], "bundled")
    manifest = next((inputs / "sources").glob("*.yaml"))
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    k2, _ = store_cache.key(src, [inputs], "bundled")
    assert len({k0, k1, k2}) == 3
    assert store_cache.key(src, [inputs], "retail")[0] != k2


def test_a_cached_store_is_used_only_under_its_key_and_read_only_keeps_nothing(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv(store_cache.ENV, str(cache))
    monkeypatch.delenv(store_cache.READ_ONLY, raising=False)     # (the planted-bug runner sets it)
    built = []

    def make(folder: Path, text: str):
        def run():
            built.append(text)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "ctx.duckdb").write_text(text)
        return run

    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    store_cache.build(a, make(a, "one"), name="t", inputs=[REPO / "manifests"])
    store_cache.build(b, make(b, "two"), name="t", inputs=[REPO / "manifests"])
    assert built == ["one"] and (b / "ctx.duckdb").read_text() == "one"
    monkeypatch.setenv(store_cache.READ_ONLY, "1")
    store_cache.build(c, make(c, "three"), name="t", inputs=[REPO / "manifests"], extra="another project")
    assert built == ["one", "three"] and (c / "ctx.duckdb").read_text() == "three"
    assert len(list(cache.iterdir())) == 1


_RAN_ONLY = """
import os, sys
from pathlib import Path
sys.path.insert(0, {repo!r})
from tests import store_cache

src, out = Path({src!r}), Path({out!r})

def make(folder, text):
    def run():
        import ctxcli.util.canon        # the only module this "build" runs
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ctx.duckdb").write_text(text)
        print("built", text)
    return run

folder = out / sys.argv[1]
store_cache.build(folder, make(folder, sys.argv[1]), name="t", inputs=[Path({inputs!r})], src=src)
print("holds", (folder / "ctx.duckdb").read_text())
"""


def test_a_cached_store_keeps_its_live_file_and_newest_generation_one_file(tmp_path, monkeypatch):
    """A DuckDB store knows its current generation by the live file and the newest generation
    being one file (a hard link): copied apart, a pack of a cached store records no generation."""
    from ctxcli.store import generations

    cache = tmp_path / "cache"
    cache.mkdir()
    monkeypatch.setenv(store_cache.ENV, str(cache))
    monkeypatch.delenv(store_cache.READ_ONLY, raising=False)

    def make(folder: Path):
        def run():
            gens = folder / ("ctx.duckdb" + generations.SUFFIX)
            gens.mkdir(parents=True)
            (gens / "000001.duckdb").write_text("store")
            os.link(gens / "000001.duckdb", folder / "ctx.duckdb")
        return run

    a, b = tmp_path / "a", tmp_path / "b"
    store_cache.build(a, make(a), name="g", inputs=[REPO / "manifests"])
    store_cache.build(b, make(b), name="g", inputs=[REPO / "manifests"])       # from the cache
    for folder in (a, b):
        live, newest = folder / "ctx.duckdb", folder / ("ctx.duckdb" + generations.SUFFIX) / "000001.duckdb"
        assert os.path.samefile(live, newest) and live.read_text() == "store"
    assert [(g["generation"], g["current"]) for g in generations.listing(b / "ctx.duckdb")] == [(1, True)]


def test_a_store_is_reused_after_a_change_to_a_module_its_build_never_ran(tmp_path):
    """The key moves with any module of the closure; an entry is still used when everything but
    the module texts is the same and every module its build had loaded is unchanged (each step in
    a fresh interpreter: only what that build ran is loaded)."""
    src = _tree(tmp_path)
    inputs = tmp_path / "manifests"
    shutil.copytree(REPO / "manifests", inputs)
    script = tmp_path / "run.py"
    script.write_text(_RAN_ONLY.format(repo=str(REPO), src=str(src), out=str(tmp_path / "out"), inputs=str(inputs)),
                      encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTX_", "TESTS_STORE"))}
    env.update({store_cache.ENV: str(tmp_path / "cache"), "PYTHONPATH": str(src)})
    (tmp_path / "cache").mkdir()

    def run(label: str) -> list[str]:
        r = subprocess.run([sys.executable, str(script), label], capture_output=True, text=True, env=env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout.split("\n")[:-1]

    assert run("one") == ["built one", "holds one"]
    record = next((tmp_path / "cache").glob("t-*/modules.json")).read_text(encoding="utf-8")
    assert '"ctxcli.util.canon"' in record and '"ctxcli.store.pg.reader"' not in record
    reader, canon = src / "ctxcli" / "store" / "pg" / "reader.py", src / "ctxcli" / "util" / "canon.py"
    original = canon.read_text(encoding="utf-8")
    reader.write_text(reader.read_text(encoding="utf-8") + "X_PLANTED = 1\n", encoding="utf-8")    # never run
    assert run("two") == ["holds one"]
    canon.write_text(original + "X_PLANTED = 1\n", encoding="utf-8")                              # run by the build
    assert run("three") == ["built three", "holds three"]
    canon.write_text(original, encoding="utf-8")
    manifest = next((inputs / "sources").glob("*.yaml"))                                  # another input
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert run("four") == ["built four", "holds four"]
    assert "modules.json" not in {p.name for p in (tmp_path / "out").rglob("*")}


def test_the_session_stores_hold_the_bundled_and_the_retail_objects(bundled_store, retail_project):
    """The runner's warm-up: both session stores, built or copied from the cache, are whole."""
    for db in (bundled_store, retail_project / ".ctx" / "ctx.duckdb"):
        con = duckdb.connect(str(db), read_only=True)
        try:
            assert con.execute("select count(*) from objects").fetchone()[0] > 0
        finally:
            con.close()


def test_a_database_is_copied_from_its_template_only_under_its_key(monkeypatch, tmp_path):
    """The PostgreSQL side (``loaded_pg``): a second session's database is a copy of the first's
    template (``make`` not called); another key (other inputs) builds its own."""
    from . import pgserver

    if pgserver.find_bin() is None:
        pytest.skip("PostgreSQL is not installed")
    pytest.importorskip("psycopg")
    import psycopg

    monkeypatch.setenv(store_cache.ENV, str(tmp_path))
    monkeypatch.delenv(store_cache.READ_ONLY, raising=False)
    srv = pgserver.session_server(pgserver.find_bin())
    made = []

    def make(text: str):
        def run(db: str) -> None:
            made.append(text)
            with psycopg.connect(srv.url(db), autocommit=True) as c:
                c.execute("CREATE TABLE t (v text)")
                c.execute("INSERT INTO t VALUES (%s)", (text,))
        return run

    def value(db: str) -> str:
        with psycopg.connect(srv.url(db)) as c:
            return c.execute("SELECT v FROM t").fetchone()[0]

    try:
        a = store_cache.database(srv, make("one"), name="t", inputs=[REPO / "manifests"])
        b = store_cache.database(srv, make("two"), name="t", inputs=[REPO / "manifests"])
        c = store_cache.database(srv, make("three"), name="t", inputs=[REPO / "sources"])
        assert made == ["one", "three"] and a != b
        assert (value(a), value(b), value(c)) == ("one", "one", "three")
    finally:
        srv.stop()
