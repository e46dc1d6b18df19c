"""Tool output shaped by ctx (issue 45, item 3) and hand-written shaped facts checked against
raw (item 2): `ctx tool-result shape`, the registry's `shape` declarations, the `raw_check` gate."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from .conftest import REPO, run_cli

RETAIL = REPO / "examples" / "agent" / "retail"
SALES = RETAIL / "sales-store_001-2026-07-08.csv"
OBS = "2026-07-23T10:00:00+08:00"


def _shape(tmp_path: Path, raw: Path, registry: Path, tool: str = "t.q", *extra) -> tuple[int, str, dict | None]:
    out = tmp_path / "tr.json"
    out.unlink(missing_ok=True)
    r = run_cli(["tool-result", "shape", raw, "--tool", tool, "--registry", registry, "--tenant", "tenant-demo",
                 "--observed-at", OBS, "--out", out, *extra])
    return r.exit_code, r.output, json.loads(out.read_text()) if out.exists() else None


def _registry(tmp_path: Path, shape: str, name: str = "t.q") -> Path:
    f = tmp_path / "tools.yaml"
    f.write_text(f"tools:\n  - name: {name}\n    version: '1'\n    shape:\n" +
                 "".join(f"      {line}\n" for line in shape.strip().splitlines()))
    return f


def _rows(tmp_path: Path, rows: list[dict], name: str = "raw.json") -> Path:
    f = tmp_path / name
    f.write_text(json.dumps(rows))
    return f


ROWS = [{"store": "S1", "month": "2026-07", "amount": 10, "qty": 1},
        {"store": "S1", "month": "2026-07", "amount": 30, "qty": 2},
        {"store": "S1", "month": "2026-08", "amount": 25, "qty": 5},
        {"store": "S2", "month": "2026-07", "amount": 1000, "qty": 9},
        {"store": "S2", "month": "2026-08", "amount": 7, "qty": 4}]


def test_the_retail_raw_rows_become_revenue_cost_profit_by_month_with_the_limitation(tmp_path):
    spec = importlib.util.spec_from_file_location("make_sales", RETAIL / "make_sales.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    lines = ["sale_id,date,month,store,product,revenue,cost,profit"] + [",".join(r) for r in mod.rows()]
    assert ("\n".join(lines) + "\n").encode() == SALES.read_bytes()      # the committed file is the script's

    code, output, doc = _shape(tmp_path, SALES, RETAIL / "tools.yaml", "sales.query")
    assert code == 0, output
    assert doc["shaped"] == {"facts": {
        "revenue[month=2026-07]": 2000000000, "cost[month=2026-07]": 1600000000,
        "profit[month=2026-07]": 400000000, "rows[month=2026-07]": 2500,
        "revenue[month=2026-08]": 2300000000, "cost[month=2026-08]": 2000000000,
        "profit[month=2026-08]": 300000000, "rows[month=2026-08]": 2500,
        "revenue.change[month=2026-08 vs 2026-07]": 300000000, "revenue.pct_change[month=2026-08 vs 2026-07]": 15,
        "cost.change[month=2026-08 vs 2026-07]": 400000000, "cost.pct_change[month=2026-08 vs 2026-07]": 25,
        "profit.change[month=2026-08 vs 2026-07]": -100000000, "profit.pct_change[month=2026-08 vs 2026-07]": -25,
        "rows.change[month=2026-08 vs 2026-07]": 0, "rows.pct_change[month=2026-08 vs 2026-07]": 0},
        "limitations": ["cost breakdown not available", "amounts in VND; one row per sale"], "verified": True}
    assert doc["raw"]["rows"] == 5000 and doc["raw"]["sha256"] == hashlib.sha256(SALES.read_bytes()).hexdigest()
    assert (doc["tool"], doc["version"], doc["tenant_id"]) == ("sales.query", "1.0", "tenant-demo")
    # raw by reference, relative to the written document: --tool-result reads it back
    from ctxcli.agents.tool_results import read_tool_result

    tr = read_tool_result(tmp_path / "tr.json")
    assert tr.raw.rows == 5000 and tr.shaped.verified is True


def test_the_help_examples_run_as_written_from_the_repository(monkeypatch):
    import shlex

    from .test_help_examples import EXAMPLES

    monkeypatch.chdir(REPO)
    for name in ("tool-result", "tool-result shape"):
        r = run_cli(shlex.split(EXAMPLES[name])[1:])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["shaped"]["facts"]["profit.pct_change[month=2026-08 vs 2026-07]"] == -25


@pytest.mark.parametrize("op, field, decimals, expected", [
    ("sum", "amount", None, {"S1": 65, "S2": 1007}),
    ("count", None, None, {"S1": 3, "S2": 2}),
    ("min", "amount", None, {"S1": 10, "S2": 7}),
    ("max", "qty", None, {"S1": 5, "S2": 9}),
    ("avg", "amount", 2, {"S1": 21.67, "S2": 503.5}),
])
def test_each_aggregate_per_group(tmp_path, op, field, decimals, expected):
    agg = f"{{name: v, op: {op}" + (f", field: {field}" if field else "") + \
        (f", decimals: {decimals}" if decimals is not None else "") + "}"
    reg = _registry(tmp_path, f"group_by: [store]\naggregates: [{agg}]")
    code, output, doc = _shape(tmp_path, _rows(tmp_path, ROWS), reg)
    assert code == 0, output
    assert doc["shaped"]["facts"] == {f"v[store={k}]": v for k, v in expected.items()}


@pytest.mark.parametrize("current, pct", [(1150.4, 15.0), (1150.6, 15.1), (1150.0, 15), (849.6, -15.0),
                                          (849.4, -15.1)])
def test_the_percentage_change_rounds_to_its_declared_decimals_on_both_sides(tmp_path, current, pct):
    rows = [{"m": "p", "x": 1000}, {"m": "c", "x": current}]
    reg = _registry(tmp_path, "group_by: [m]\naggregates: [{name: x, op: sum, field: x}]\n"
                              "compare: {field: m, current: c, previous: p, decimals: 1}")
    code, output, doc = _shape(tmp_path, _rows(tmp_path, rows), reg)
    assert code == 0, output
    assert doc["shaped"]["facts"]["x.pct_change[m=c vs p]"] == pct
    assert doc["shaped"]["facts"]["x.change[m=c vs p]"] == pytest.approx(current - 1000)


def test_a_previous_of_zero_has_no_percentage_change(tmp_path):
    rows = [{"m": "p", "x": 0}, {"m": "c", "x": 5}]
    reg = _registry(tmp_path, "group_by: [m]\naggregates: [{name: x, op: sum, field: x}]\n"
                              "compare: {field: m, current: c, previous: p}")
    doc = _shape(tmp_path, _rows(tmp_path, rows), reg)[2]
    assert doc["shaped"]["facts"]["x.pct_change[m=c vs p]"] is None


def test_filters_keep_only_the_rows_they_match(tmp_path):
    reg = _registry(tmp_path, "filters: [{field: store, equals: S1}, {field: month, in: ['2026-07', '2026-09']}]\n"
                              "aggregates: [{name: total, op: sum, field: amount}, {name: n, op: count}]")
    code, output, doc = _shape(tmp_path, _rows(tmp_path, ROWS), reg)
    assert code == 0, output
    assert doc["shaped"]["facts"] == {"total": 40, "n": 2}


def test_a_filter_value_is_a_parameter_never_sql(tmp_path):
    reg = _registry(tmp_path, "filters: [{field: store, equals: \"S1' OR '1'='1\"}]\n"
                              "aggregates: [{name: n, op: count}]")
    code, output, doc = _shape(tmp_path, _rows(tmp_path, ROWS), reg)
    assert code == 0, output
    assert doc["shaped"]["facts"] == {"n": 0}


def test_a_projection_lists_rows_up_to_the_limit_and_says_so(tmp_path):
    reg = _registry(tmp_path, "fields: [store, amount]\nlimit: 2\nlimitations: [sampled]")
    raw = tmp_path / "raw.jsonl"
    raw.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    code, output, doc = _shape(tmp_path, raw, reg)
    assert code == 0, output
    assert doc["shaped"]["facts"] == {"store": ["S1", "S1"], "amount": [10, 25]}
    assert doc["shaped"]["limitations"] == ["sampled", "shaped from the first 2 of 5 rows (limit 2)"]
    assert doc["raw"]["rows"] == 5


def test_csv_and_parquet_shape_alike(tmp_path):
    import duckdb

    src = _rows(tmp_path, ROWS)
    pq = tmp_path / "raw.parquet"
    con = duckdb.connect()
    con.execute(f"COPY (SELECT * FROM read_json('{src}')) TO '{pq}' (FORMAT parquet)")
    con.close()
    csv = tmp_path / "raw.csv"
    csv.write_text("store,month,amount,qty\n" + "".join(f"{r['store']},{r['month']},{r['amount']},{r['qty']}\n"
                                                        for r in ROWS))
    reg = _registry(tmp_path, "group_by: [month]\naggregates: [{name: a, op: sum, field: amount}]")
    facts = [_shape(tmp_path, f, reg)[2]["shaped"]["facts"] for f in (src, pq, csv)]
    assert facts[0] == facts[1] == facts[2] == {"a[month=2026-07]": 1040, "a[month=2026-08]": 32}


@pytest.mark.parametrize("shape, where", [
    ("aggregates: [{name: v, op: median, field: amount}]", "tools.0.shape.aggregates.0.op"),
    ("aggregates: [{name: v, op: sum}]", "tools.0.shape.aggregates.0"),
    ("group_by: [month]\nfields: [amount]", "tools.0.shape"),
    ("aggregates: [{name: v, op: count}]\nlimit: 0", "tools.0.shape.limit"),
    ("aggregates: [{name: v, op: count}]\nfilters: [{field: store}]", "tools.0.shape.filters.0"),
    ("aggregates: [{name: v, op: count}]\ncompare: {field: month, current: a, previous: b}", "tools.0.shape"),
])
def test_a_bad_declaration_is_one_line_exit_2_naming_file_line_and_field(tmp_path, shape, where):
    reg = _registry(tmp_path, shape)
    code, output, doc = _shape(tmp_path, _rows(tmp_path, ROWS), reg)
    assert code == 2 and doc is None
    line = output.strip()
    assert "\n" not in line and line.startswith(f"ctx: error: {reg}:") and f": {where}:" in line, line
    assert line.split(":")[3].strip().isdigit(), line       # file:line


def test_a_field_the_raw_rows_lack_is_exit_2_naming_it(tmp_path):
    reg = _registry(tmp_path, "group_by: [region]\naggregates: [{name: v, op: count}]")
    code, output, _ = _shape(tmp_path, _rows(tmp_path, ROWS), reg)
    assert code == 2 and "shape.group_by[0]: the raw result has no field 'region'" in output, output
    raw = tmp_path / "bad.json"
    raw.write_text("[{\"a\": 1}, nope]")
    reg = _registry(tmp_path, "aggregates: [{name: v, op: count}]")
    code, output, _ = _shape(tmp_path, raw, reg)
    assert code == 2 and "cannot read the raw result as json" in output and "\n" not in output.strip(), output


@pytest.mark.parametrize("field", ['x"; DROP TABLE raw; --', "x\" OR 1=1", "amount) FROM raw; --"])
def test_a_field_name_carrying_sql_is_refused(tmp_path, field):
    reg = _registry(tmp_path, f"aggregates: [{{name: v, op: sum, field: {json.dumps(field)}}}]")
    code, output, doc = _shape(tmp_path, _rows(tmp_path, ROWS), reg)
    assert code == 2 and doc is None and "tools.0.shape.aggregates.0.field" in output, output
    # and quoting keeps even an unvalidated name one identifier
    from ctxcli.errors import InputError
    from ctxcli.store.shape import q

    with pytest.raises(InputError):
        q(field)


def test_field_names_that_are_sql_keywords_are_quoted(tmp_path):
    rows = [{"group": "a", "order": 2, "select": 1}, {"group": "a", "order": 3, "select": 1},
            {"group": "b", "order": 5, "select": 0}]
    reg = _registry(tmp_path, "filters: [{field: select, equals: 1}]\ngroup_by: [group]\n"
                              "aggregates: [{name: total, op: sum, field: order}]")
    code, output, doc = _shape(tmp_path, _rows(tmp_path, rows), reg)
    assert code == 0, output
    assert doc["shaped"]["facts"] == {"total[group=a]": 5}


def test_the_shaping_connection_reads_only_its_raw_file(tmp_path):
    import duckdb

    from ctxcli.store.shape import open_raw

    other = tmp_path / "other.csv"
    other.write_text("a\n1\n")
    with open_raw(_rows(tmp_path, ROWS), "json", display="raw.json") as t:
        assert t.rows == 5
        for sql in ("SELECT * FROM read_csv(?)", "SELECT * FROM read_text(?)"):
            with pytest.raises(duckdb.Error, match="(?i)permission|disabled"):
                t.con.execute(sql, [str(other)]).fetchall()
        with pytest.raises(duckdb.Error):
            t.con.execute("SET enable_external_access=true")


def test_a_tool_not_in_the_registry_names_only_the_registrys_tools(tmp_path):
    reg = _registry(tmp_path, "aggregates: [{name: v, op: count}]", name="sales.query")
    code, output, _ = _shape(tmp_path, _rows(tmp_path, ROWS), reg, "payroll.export")
    assert code == 2
    assert output.strip() == ("ctx: error: --tool: tool 'payroll.export' is not in the tool registry "
                              "(its tools: sales.query)")


# ---------------------------------------------------------------------- raw-vs-shaped check
def _hand_written(tmp_path: Path, facts: dict, raw: str = "raw.json", verified: bool | None = None) -> Path:
    f = tmp_path / "hand.json"
    shaped = {"facts": facts, **({"verified": verified} if verified is not None else {})}
    f.write_text(json.dumps({"tool": "t.q", "version": "1", "tenant_id": "tenant-demo", "observed_at": OBS,
                             "raw": {"path": raw}, "shaped": shaped}))
    return f


def _gate(tmp_path, files, reg_shape: str | None):
    from ctxcli.agents.registry import read_registry
    from ctxcli.agents.tool_results import gate_tool_results, read_tool_result
    from ctxcli.tokens import count

    reg = read_registry(_registry(tmp_path, reg_shape)) if reg_shape else read_registry(tmp_path / "none.yaml")
    return gate_tool_results([read_tool_result(f) for f in files], tenant_id="tenant-demo", scopes=[],
                             purpose="incident_review", as_of=datetime(2026, 7, 23, 3, 0, tzinfo=timezone.utc),
                             known_at=None, budget=5000, slot="tools", registry=reg, key=b"k" * 32, count=count)


SHAPE = "group_by: [store]\naggregates: [{name: total, op: sum, field: amount}]"


def test_a_hand_written_fact_that_raw_contradicts_is_excluded_with_the_reason(tmp_path):
    _rows(tmp_path, ROWS)
    g = _gate(tmp_path, [_hand_written(tmp_path, {"total[store=S1]": 66})], SHAPE)
    assert g.items == []
    (om,) = g.omissions
    assert (om["gate"], om["reason"], om["withheld"]) == ("raw_check", "fact_disagrees_with_raw", False)
    assert om["detail"] == {"fact": "total[store=S1]", "given": 66, "expected": 65}
    # a raw field's value that raw does not hold is contradicted too
    g = _gate(tmp_path, [_hand_written(tmp_path, {"store": "S9"})], SHAPE)
    assert [(o["gate"], o["detail"]["fact"]) for o in g.omissions] == [("raw_check", "store")]


def test_a_hand_written_fact_is_verified_present_or_unverified(tmp_path):
    _rows(tmp_path, ROWS)
    facts = {"total[store=S1]": 65, "total[store=S2]": 1007.0, "store": "S2", "month": ["2026-07", "2026-08"],
             "why": "a promotion"}
    g = _gate(tmp_path, [_hand_written(tmp_path, facts, verified=True)], SHAPE)
    assert not g.omissions, g.omissions
    (item,) = g.items
    assert item["unverified_facts"] == ["why"]
    assert item["verified_facts"] == ["total[store=S1]", "total[store=S2]", "store", "month"]


def test_a_raw_file_changed_after_it_was_read_checks_nothing(tmp_path):
    from ctxcli.agents.registry import read_registry
    from ctxcli.agents.shape import check_facts
    from ctxcli.agents.tool_results import read_tool_result

    raw = _rows(tmp_path, ROWS)
    tr = read_tool_result(_hand_written(tmp_path, {"total[store=S1]": 65}))
    spec = read_registry(_registry(tmp_path, SHAPE)).get("t.q").shape
    assert check_facts(tr, spec).verified == ["total[store=S1]"]
    raw.write_text(json.dumps(ROWS[:1]))
    fc = check_facts(tr, spec)
    assert (fc.checked, fc.verified, fc.unverified, fc.mismatch) == (False, [], ["total[store=S1]"], None)


def test_agreement_is_at_the_precision_a_fact_is_written_with():
    from ctxcli.agents.shape import agrees

    assert agrees(15, 15.04) and agrees(15.0, 15.04) and agrees(15.04, 15.04) and agrees(1150, 1150.4)
    assert not agrees(16, 15.04) and not agrees(15.1, 15.04) and not agrees(1000.0, 1007)
    assert agrees("S1", "S1") and not agrees("S1", "S2")
    assert not agrees(True, 1) and not agrees(1, True) and agrees(False, False)


def test_without_a_declaration_a_fact_labelled_verified_stays_unverified(tmp_path):
    _rows(tmp_path, ROWS)
    g = _gate(tmp_path, [_hand_written(tmp_path, {"total": 1072}, verified=True)], None)
    (item,) = g.items
    assert item["verified_facts"] == [] and item["unverified_facts"] == ["total"]
    # and a result neither declared nor labelled keeps the pack as it was (no check fields)
    g = _gate(tmp_path, [_hand_written(tmp_path, {"total": 1072})], None)
    assert "verified_facts" not in g.items[0] and "unverified_facts" not in g.items[0]


def test_investigate_records_the_raw_check_omission_and_renders_unverified_facts(store, tmp_path, monkeypatch):
    reg = _registry(tmp_path, SHAPE)
    monkeypatch.setattr("ctxcli.agents.registry.registry_path", lambda manifests_dir=None: reg)
    _rows(tmp_path, ROWS)
    bad = _hand_written(tmp_path, {"total[store=S1]": 99})
    good = tmp_path / "good.json"
    good.write_text(bad.read_text().replace('99', '65, "note": "weekend promotion"'))
    r = run_cli(["investigate", "INC-2026-0723", "--tool-result", bad, "--tool-result", good, "--out", tmp_path / "o"])
    assert r.exit_code == 0, r.output
    pack = json.loads((tmp_path / "o" / "pack.json").read_text())
    assert [(o["gate"], o["reason"], o["detail"]) for o in pack["tool_omissions"]] == [
        ("raw_check", "fact_disagrees_with_raw", {"fact": "total[store=S1]", "given": 99, "expected": 65})]
    (item,) = pack["tool_results"]
    assert (item["verified_facts"], item["unverified_facts"]) == (["total[store=S1]"], ["note"])
    msgs = run_cli(["render", tmp_path / "o" / "pack.json", "--format", "messages"])
    user = json.loads(msgs.output)[1]["content"]
    assert "unverified (not checked against raw): note" in user and "99" not in user.split("TOOL_RESULT")[1]
    ex = run_cli(["explain-omissions", tmp_path / "o" / "pack.json"])
    assert ex.exit_code == 0 and "raw_check" in ex.output, ex.output


def test_a_raw_path_outside_the_allowed_folders_is_still_refused(store, tmp_path):
    d = tmp_path / "calls"
    d.mkdir()
    _rows(tmp_path, ROWS)
    f = d / "hand.json"
    f.write_text(json.dumps({"tool": "t.q", "version": "1", "tenant_id": "tenant-demo", "observed_at": OBS,
                             "raw": {"path": "../raw.json", "sha256": "0" * 64}, "shaped": {"facts": {}}}))
    r = run_cli(["investigate", "INC-2026-0723", "--tool-result", f, "--out", tmp_path / "o"])
    assert r.exit_code == 2 and "raw.path: the raw result ../raw.json is outside" in r.output, r.output
    # beside it, a sha256 that is not the file's is refused too
    (d / "raw.json").write_text(json.dumps(ROWS))
    f.write_text(f.read_text().replace("../raw.json", "raw.json"))
    r = run_cli(["investigate", "INC-2026-0723", "--tool-result", f, "--out", tmp_path / "o"])
    assert r.exit_code == 2 and "raw.sha256: the raw result raw.json does not have the sha256" in r.output, r.output


def test_add_tool_result_over_mcp_shapes_raw_rows_with_the_registry(store, tmp_path):
    import shutil

    from mcp import StdioServerParameters

    from .test_serve import _call, _env, _structured

    proj = tmp_path / "proj"
    for name in ("manifests", "sources", "examples"):
        shutil.copytree(REPO / name, proj / name, symlinks=True)
    shutil.copy(RETAIL / "tools.yaml", proj / "manifests" / "tools.yaml")
    runs = tmp_path / "runs"
    env = {**_env(store), "CTX_ROOT": str(proj)}
    server = StdioServerParameters(command=__import__("sys").executable, env=env, cwd=str(proj),
                                   args=["-m", "ctxcli.cli.main", "serve", "--runs", str(runs)])
    base = {"case": "INC-2026-0723", "tool": "sales.query", "observed_at": OBS, "raw": SALES.read_text()}
    shaped, wrong, unknown = _call(server, [
        ("tool", "add_tool_result", base),
        ("tool", "add_tool_result", {**base, "version": "1.0",
                                     "shaped": {"facts": {"profit.pct_change[month=2026-08 vs 2026-07]": -5}}}),
        ("tool", "add_tool_result", {**base, "tool": "payroll.export"})])
    shaped, wrong = _structured(shaped), _structured(wrong)
    assert shaped["status"] == "admitted" and shaped["trust"] == "authoritative"
    assert shaped["raw"]["rows"] == 5000 and shaped["shaped"]["verified"] is True
    assert shaped["shaped"]["facts"]["revenue.pct_change[month=2026-08 vs 2026-07]"] == 15
    assert shaped["shaped"]["limitations"][0] == "cost breakdown not available"
    assert (wrong["status"], wrong["gate"], wrong["reason"]) == ("excluded", "raw_check", "fact_disagrees_with_raw")
    assert unknown.is_error and "declare a shape for 'payroll.export'" in unknown.content[0].text
    (inv,) = _call(server, [("tool", "investigate", {"case": "INC-2026-0723", "tool_results": [shaped["result_id"]],
                                                     "include_messages": True})])
    res = _structured(inv)
    (item,) = res["tool_results"]
    pack = json.loads((runs / res["pack_id"] / "pack.json").read_text())
    (packed,) = pack["tool_results"]
    assert packed["unverified_facts"] == [] and len(packed["verified_facts"]) == 16
    assert "cost breakdown not available" in res["messages"][1]["content"]
    assert "S-202607-00001" not in json.dumps(res)          # never a raw row


def test_a_tool_result_with_unverified_facts_makes_no_fact_claim(project_copy, tmp_path):
    from .test_claims import _check, _with_tool, claim

    pack, ans, tr, vocab = _with_tool(tmp_path, "tools:\n  - {name: metrics.query, authoritative: true}\n")
    said = "212 requests were waiting for a connection, and the pool maximum is 50."
    tr["verified_facts"], tr["unverified_facts"] = ["waiting_at_1002"], []
    assert _check(pack, ans, vocab, claim(said, "fact", tr["result_id"])) == []
    tr["unverified_facts"] = ["pool_max"]
    assert _check(pack, ans, vocab, claim(said, "fact", tr["result_id"])) == [("fact_without_trusted_source", 0)]
    assert _check(pack, ans, vocab, claim(said, "inference", tr["result_id"])) == []


def test_ctx_check_validates_a_tool_registry_and_its_shapes(tmp_path):
    r = run_cli(["check", RETAIL / "tools.yaml"])
    assert r.exit_code == 0, r.output
    reg = _registry(tmp_path, "aggregates: [{name: v, op: median, field: amount}]")
    r = run_cli(["check", reg])
    assert r.exit_code == 1 and f"{reg}:5:30: " in r.output and "tools.0.shape.aggregates.0.op" in r.output, r.output
