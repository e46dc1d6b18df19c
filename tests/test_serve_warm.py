"""A warm ``ctx serve`` keeps one store reader open between tool calls (store/readers.py) and
reopens it only when a load replaced the store: the next call sees the new store, exactly as
a fresh process would. Through the MCP SDK's own client, in process (so that the readers the
server opened can be counted: ``store.kept_opens``); the load between calls is a real
``ctx load`` process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import pytest

from .conftest import run_cli

mcp = pytest.importorskip("mcp", reason="the MCP SDK (package `mcp`) is a runtime dependency of ctx serve")

from mcp import Client  # noqa: E402

OLD_TITLE = "Risk signal CLAIM_AMOUNT — claim C-102"
NEW_TITLE = "Risk signal CLAIM_AMOUNT — claim C-102, re-computed"


@pytest.fixture
def kept():
    from ctxcli.store import close_kept

    close_kept()
    yield
    close_kept()


def _result(res) -> dict:
    assert not res.is_error, res.content[0].text
    sc = res.structured_content
    return sc.get("result", sc)


def _reload_with_new_title(proj: Path) -> None:
    """Change one record's title (not its manifest) and run `ctx load` in its own process."""
    f = proj / "sources" / "risk-signals" / "objects.jsonl"
    text = f.read_text(encoding="utf-8")
    assert text.count(f'"title": "{OLD_TITLE}"') == 1
    f.write_text(text.replace(f'"title": "{OLD_TITLE}"', f'"title": "{NEW_TITLE}"'), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(CTX_ROOT=str(proj), CTX_DB=str(proj / ".ctx" / "ctx.duckdb"), NO_COLOR="1")
    p = subprocess.run([sys.executable, "-m", "ctxcli.cli.main", "load"], cwd=proj, env=env, capture_output=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr.decode()


def test_warm_server_keeps_one_reader_and_the_next_call_sees_a_reload(project_copy, tmp_path, kept):
    from ctxcli.serve import tools
    from ctxcli.serve.config import ServeConfig
    from ctxcli.serve.server import build_server
    from ctxcli.store import close_kept, kept_opens

    assert run_cli(["load"]).exit_code == 0
    db = project_copy / ".ctx" / "ctx.duckdb"
    cfg = ServeConfig(db=db, runs_dir=tmp_path / "runs", audit_log=tmp_path / "audit.jsonl")
    step = {"case": "C-102", "types": ["claim_amount_signal"]}
    opens: list[int] = []

    async def main():
        out = []
        async with Client(build_server(cfg)) as c:
            for _ in range(3):
                out.append(_result(await c.call_tool("build_context", step)))
            out.append(_result(await c.call_tool("investigate", {"case": "C-102"})))
            opens.append(kept_opens(db))
            _reload_with_new_title(project_copy)
            out.append(_result(await c.call_tool("build_context", step)))
            out.append(_result(await c.call_tool("investigate", {"case": "C-102"})))
            out.append(_result(await c.call_tool("build_context", step)))
            opens.append(kept_opens(db))
        return out

    a1, a2, a3, inv1, b1, inv2, b2 = anyio.run(main)
    # four calls on an unchanged store: one reader, the same answers
    assert opens[0] == 1
    assert a1 == a2 == a3
    assert [(i["object_id"], i["title"]) for i in a1["items"]] == [("SIG-C102-AMOUNT", OLD_TITLE)]
    # after the load: the next call reads the new store (one more reader, not one per call)
    assert opens[1] == 2
    assert [(i["object_id"], i["title"]) for i in b1["items"]] == [("SIG-C102-AMOUNT", NEW_TITLE)]
    assert b1 == b2
    packs = [json.loads((cfg.runs_dir / r["pack_id"] / "pack.json").read_text()) for r in (inv1, inv2)]
    assert [p["store"]["generation"] for p in packs] == [1, 2]
    assert packs[0]["store"]["digest"] != packs[1]["store"]["digest"]
    # and exactly what a fresh open (a CLI process) gives on the new store
    close_kept()
    assert tools.build_context(cfg, **step) == b1
    fresh = tools.investigate(cfg, case="C-102")
    assert fresh["pack_id"] == inv2["pack_id"] and fresh["content_hash"] == inv2["content_hash"]


def _copy_store(src: Path, dst: Path) -> None:
    tmp = dst.with_name(dst.name + ".new")
    shutil.copyfile(src, tmp)
    os.replace(tmp, dst)            # what a load does: a new file renamed onto the path


def test_a_call_in_flight_keeps_its_reader_and_the_next_waits_for_it(bundled_store, tmp_path, kept):
    """A replaced file is reopened only after the calls still reading the old one have finished
    (DuckDB would hand a new connect the old, still open database); a call that leases again
    inside itself keeps its own store; every lease is a cursor of its own, read-only."""
    from ctxcli.store import keep_connections, kept_opens, open_store

    db = tmp_path / "ctx.duckdb"
    _copy_store(bundled_store, db)
    keep_connections(db)
    first = open_store(db)
    again = open_store(db)
    assert kept_opens(db) == 1 and first.con is not again.con          # one reader, a cursor per lease
    with pytest.raises(Exception, match="read-only|Cannot execute"):
        first.con.execute("CREATE TABLE x (a INTEGER)")
    digest = first.meta()["store_digest"]
    again.close()
    _copy_store(bundled_store, db)
    inner = open_store(db)                  # the same thread, inside its call: the store it started with
    assert kept_opens(db) == 1
    inner.close()
    got: dict = {}
    started = threading.Event()

    def other_call():
        started.set()
        s = open_store(db)
        got["opens"] = kept_opens(db)
        got["digest"] = s.meta()["store_digest"]
        s.close()

    t = threading.Thread(target=other_call)
    t.start()
    started.wait()
    t.join(0.5)
    assert t.is_alive()                     # waits for `first` to finish with the old file
    assert first.meta()["store_digest"] == digest      # which is still readable meanwhile
    first.close()
    t.join(30)
    assert got == {"opens": 2, "digest": digest}
    later = open_store(db)
    assert kept_opens(db) == 2
    later.close()


def test_a_removed_store_is_one_line_and_a_new_one_is_opened_again(bundled_store, tmp_path, kept):
    from ctxcli.errors import StoreError
    from ctxcli.store import keep_connections, kept_opens, open_store

    db = tmp_path / "ctx.duckdb"
    _copy_store(bundled_store, db)
    keep_connections(db)
    open_store(db).close()
    os.unlink(db)
    with pytest.raises(StoreError, match="no store at"):
        open_store(db)
    _copy_store(bundled_store, db)
    s = open_store(db)
    try:
        assert kept_opens(db) == 2 and s.meta()["schema_version"]
    finally:
        s.close()


def test_concurrent_tool_calls_share_one_reader_each_with_its_own_cursor(project_copy, tmp_path, kept):
    """The MCP SDK runs tool calls in worker threads. Two calls in flight at once each read
    through a cursor of the one kept reader (before, the second call's open was handed the
    first's locked-down database by DuckDB and failed as "store … is damaged")."""
    from ctxcli.serve.config import ServeConfig
    from ctxcli.serve.server import build_server
    from ctxcli.store import kept_opens, open_store

    assert run_cli(["load"]).exit_code == 0
    db = project_copy / ".ctx" / "ctx.duckdb"
    cfg = ServeConfig(db=db, runs_dir=tmp_path / "runs", audit_log=tmp_path / "audit.jsonl")
    srv = build_server(cfg)
    one = open_store(db)                    # a call in flight in another thread of the server
    got: dict = {}

    def other():
        s = open_store(db)
        got["tenants"] = s.tenant_sources("tenant-demo")
        s.close()

    t = threading.Thread(target=other)
    t.start()
    t.join(60)
    assert got["tenants"] == one.tenant_sources("tenant-demo") and got["tenants"]
    one.close()
    step = {"case": "C-102", "types": ["claim_amount_signal"]}

    async def main():
        res: list = [None] * 4
        async with Client(srv) as c:
            async def call(i):
                res[i] = _result(await c.call_tool("build_context", step))

            async with anyio.create_task_group() as tg:
                for i in range(4):
                    tg.start_soon(call, i)
        return res

    res = anyio.run(main)
    assert all(r == res[0] for r in res) and [i["object_id"] for i in res[0]["items"]] == ["SIG-C102-AMOUNT"]
    assert kept_opens(db) == 1


def test_a_step_reads_its_case_and_its_playbook_once(store, tmp_path, kept, monkeypatch):
    """One ``build_context`` call reads (and validates) the case file once and the playbook
    once; the default step budget is still the playbook's evidence allocation, and the step is
    the one an explicit budget of that size gives."""
    from ctxcli import api, project
    from ctxcli.engine.builder import budget_for
    from ctxcli.serve import tools
    from ctxcli.serve.config import ServeConfig

    cfg = ServeConfig(db=store, runs_dir=tmp_path / "runs", audit_log=tmp_path / "audit.jsonl")
    reads: list[str] = []
    real_case, real_pb = project._read_case, project.read_playbook
    monkeypatch.setattr(project, "_read_case", lambda *a, **k: reads.append("case") or real_case(*a, **k))
    monkeypatch.setattr(project, "read_playbook", lambda *a, **k: reads.append("playbook") or real_pb(*a, **k))
    step = tools.build_context(cfg, case="C-102", types=["claim_amount_signal"])
    assert reads == ["case", "playbook"]
    pb, _ = real_pb("motor-claim-review")
    assert step["step_budget"] == budget_for(pb, pb.budget.total_tokens)["evidence"]
    assert tools.build_context(cfg, case="C-102", types=["claim_amount_signal"],
                               step_budget=step["step_budget"]) == step
    assert [(i["object_id"], i["title"]) for i in step["items"]] == [("SIG-C102-AMOUNT", OLD_TITLE)]
    assert api.read_case_marked("C-102", by_id=True)[0].playbook == "motor-claim-review"
