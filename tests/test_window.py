"""Issue 30: the time-window channel, temporal-correlation claims, the deadline and statement
timeouts, on the bundled case INC-2026-0811 (tenant-gateway): no record links the incident to
a change, so the change that preceded the 502 spike is found only by the window."""

from __future__ import annotations

import json

import pytest

from ctxcli import api

from .conftest import REPO

CASE = "INC-2026-0811"


def run(variant=None, strategy="dynamic", **kw):
    return api.investigate(api.InvestigateOptions(case=CASE, variant=variant, strategy=strategy, **kw))


@pytest.fixture(scope="module")
def runs(bundled_store):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTX_DB", str(bundled_store))
        mp.setenv("CTX_ROOT", str(REPO))
        mp.setenv("CTX_SECRET", "test-secret-for-window-runs")
        return {(v, s): run(v, s) for v in (None, "after-analysis", "deadline-zero") for s in ("dynamic", "governed")}


def ids(res):
    return [e["object_id"] for e in res.pack["evidence"]]


def claim(res, cid):
    return {c["claim_id"]: c for c in res.answer["claims"]}[cid]


def test_the_change_is_found_only_by_the_window_nearest_first(runs):
    res = runs[(None, "dynamic")]
    assert ids(res) == ["INC-2026-0811", "CHG-CFG-0811-07", "CHG-CFG-0811-05"]
    ev = {e["object_id"]: e for e in res.pack["evidence"]}
    assert ev["CHG-CFG-0811-07"]["channels"]["window"] == 1 and ev["CHG-CFG-0811-05"]["channels"]["window"] == 2
    r1, r2 = res.pack["rounds"]
    # round 1: the anchor (the first error) is not admitted yet, so the window is not planned
    assert r1["window_skipped"] == {"recent_change": "anchor_not_admitted"}
    w = [q for q in r2["queries"] if q["channel"] == "window"]
    assert w == [{"query_id": "r2q2", "channel": "window", "evidence_type": "recent_change", "limit": 5,
                  "object_types": ["release", "config_change"], "entity": "service:payment-gateway",
                  "entity_type": None, "via": ["APPLIES_TO", "CHANGED_BY"], "time": "valid_from",
                  "anchor": "incident_timeline.first_error_at", "anchor_at": "2026-08-11T14:02:00+08:00",
                  "anchor_us": 1786428120000000, "before_minutes": 10, "after_minutes": 0,
                  "from_us": 1786427520000000, "to_us": 1786428120000000}]
    traced = [e for e in res.trace if e["event"] == "retrieval_executed" and e["channel"] == "window"]
    assert [(e["query_id"], e["hits"]) for e in traced] == [("r2q2", 2)]
    # outside the window, another service's push, yesterday's release: never window hits
    why = {o["ref"]: (o["gate"], o["reason"]) for o in res.pack["omissions"]}
    for oid in ("CHG-CFG-0811-02", "CHG-CFG-0811-06", "CHG-REL-2026.08.10.2"):
        assert why[oid] == ("relevance", "not_linked_to_case")
    # the push that needs deploy:read_sensitive is never named in any output
    for text in (json.dumps(res.pack), json.dumps(res.trace), json.dumps(res.answer)):
        assert "CFG-0811-08" not in text and "key material" not in text


def test_one_round_cannot_anchor_the_window(runs):
    res = runs[(None, "governed")]
    assert ids(res) == ["INC-2026-0811"]
    assert res.answer["verdict"] == "insufficient_evidence"
    assert [m["type"] for m in res.pack["missing"]] == ["recent_change", "change_mechanism"]


def test_candidates_in_the_window_are_ranked_correlations_not_a_conflict(runs):
    res = runs[(None, "dynamic")]
    c = claim(res, "change_before_errors")
    assert res.answer["verdict"] == "partial" and res.answer["conflicts"] == []
    assert c["status"] == "hypothesis"
    ev = {e["object_id"]: e["evidence_id"] for e in res.pack["evidence"]}
    assert c["correlation"] == {
        "anchor": "first_error_at", "anchor_at": "2026-08-11T14:02:00+08:00", "within_minutes": 10,
        "candidates": [
            {"rank": 1, "label": "CFG-0811-07", "at": "2026-08-11T14:00:00+08:00", "minutes_before": 2.0,
             "evidence": [ev["CHG-CFG-0811-07"]]},
            {"rank": 2, "label": "CFG-0811-05", "at": "2026-08-11T13:55:00+08:00", "minutes_before": 7.0,
             "evidence": [ev["CHG-CFG-0811-05"]]}],
        "mechanism": {"types": ["change_mechanism"], "present": False}}
    assert c["text"].endswith(
        "Temporal correlation within 10 minutes before first_error_at (2026-08-11T14:02:00+08:00), ranked by "
        f"distance: 1. CFG-0811-07 at 2026-08-11T14:00:00+08:00, 2 min before [{ev['CHG-CFG-0811-07']}]; "
        f"2. CFG-0811-05 at 2026-08-11T13:55:00+08:00, 7 min before [{ev['CHG-CFG-0811-05']}]. Not a confirmed "
        "cause: no mechanism evidence (change_mechanism) in the pack.")
    assert "caused" not in c["text"] and "explained" not in c["text"]


def test_present_mechanism_evidence_turns_it_into_an_explained_inference(runs):
    res = runs[("after-analysis", "dynamic")]
    c = claim(res, "change_before_errors")
    ev = {e["object_id"]: e["evidence_id"] for e in res.pack["evidence"]}
    assert c["status"] == "inference" and c["correlation"]["mechanism"]["present"] is True
    assert ev["MECH-0811-01"] in c["evidence"] and ev["CHG-CFG-0811-07"] in c["evidence"]
    assert "Nearest preceding: CFG-0811-07 (2 min before)" in c["text"]
    assert res.answer["verdict"] == "complete"


def test_a_fact_status_temporal_claim_is_refused_by_the_playbook_model():
    from pydantic import ValidationError

    from ctxcli.models.playbook import Claim

    with pytest.raises(ValidationError, match="a temporal claim is a correlation"):
        Claim.model_validate({"id": "c", "text": "t", "status": "fact", "uses": ["a"], "temporal": {
            "anchor": "a", "events": "e", "time_fact": "t", "label_fact": "l", "within_minutes": 5}})


def test_a_deadline_stop_is_partial_names_what_was_not_tried_and_is_reproducible(runs, bundled_store, monkeypatch):
    res = runs[("deadline-zero", "dynamic")]
    assert res.pack["state"] == {"rounds": 0, "stop_reason": "deadline", "gaps": "full", "not_tried": {
        "rounds": [1, 2], "evidence_types": ["incident_timeline", "recent_change", "change_mechanism"]}}
    assert res.pack["request"]["deadline_seconds"] == 0
    assert {m["reason"] for m in res.pack["missing"]} == {"not_tried"}
    assert res.answer["verdict"] == "partial"
    assert res.answer["not_tried"] == res.pack["state"]["not_tried"]
    assert res.answer["summary"].endswith("Stopped at the deadline; not tried: round(s) 1, 2 for incident_timeline, "
                                          "recent_change, change_mechanism.")
    ev = [e for e in res.trace if e["event"] in ("run_started", "deadline_reached")]
    assert ev[0]["deadline_seconds"] == 0
    assert {k: ev[1][k] for k in ("round", "not_tried_rounds", "not_tried_types")} == {
        "round": 1, "not_tried_rounds": [1, 2], "not_tried_types": ["incident_timeline", "recent_change",
                                                                    "change_mechanism"]}
    monkeypatch.setenv("CTX_DB", str(bundled_store))
    monkeypatch.setenv("CTX_SECRET", "test-secret-for-window-runs")
    again = run("deadline-zero")
    assert api.output_files(again)["pack.json"] == api.output_files(res)["pack.json"]
    assert api.output_files(again)["trace.jsonl"] == api.output_files(res)["trace.jsonl"]


def test_the_deadline_is_read_from_the_clock_before_each_round(store):
    """An injected clock: 0 s at the start and before round 1, 10 s before round 2."""
    ticks = iter([0.0, 0.0, 10.0])
    res = run(clock=lambda: next(ticks), deadline_seconds=5)
    assert res.pack["state"]["stop_reason"] == "deadline"
    assert res.pack["state"]["not_tried"] == {"rounds": [2], "evidence_types": ["recent_change", "change_mechanism"]}
    assert ids(res) == ["INC-2026-0811"]
    no = run(clock=lambda: 0.0, deadline_seconds=5)       # never past it: the run is the plain one
    assert no.pack["state"]["stop_reason"] == "evidence_sufficient" and "not_tried" not in no.answer


def test_deadline_flag_on_investigate(store, tmp_path):
    from .conftest import run_cli

    r = run_cli(["investigate", CASE, "--deadline", "0", "--out", tmp_path / "o"])
    assert r.exit_code == 0, r.stderr
    assert json.loads((tmp_path / "o" / "pack.json").read_text())["state"]["stop_reason"] == "deadline"
    r = run_cli(["investigate", CASE, "--deadline", "-1", "--out", tmp_path / "p"])
    assert r.exit_code == 2


def test_window_walks_only_authorised_relations(store):
    """change:CFG-0811-08 is linked to payment-gateway by a relation its sensitive record attests:
    a subject without deploy:read_sensitive may not use that edge, so even the ungated object
    predicate never sees the push; with every edge allowed it is a window hit."""
    from ctxcli.engine.gates import Access
    from ctxcli.engine.retrieve import walk_access
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        w = {"entity": "service:payment-gateway", "entity_type": None, "via": ["APPLIES_TO"], "time": "valid_from",
             "from_us": 1786427520000000, "to_us": 1786428120000000, "anchor_us": 1786428120000000}
        q = [("q", "recent_change", [], w, 10)]
        oid = dict(st.con.execute("SELECT doc_id, object_id FROM objects WHERE tenant_id = 'tenant-gateway'").fetchall())
        every = [a for a, *_ in st.relation_access()]
        sources = [s for s, *_ in st.source_access()]
        got = st.window(q, tenant="tenant-gateway", readable=None, as_of_us=1786429800000000, access_ok=every,
                        entity_sources=sources)
        assert [oid[d] for _, d, _ in got.hits] == ["CHG-CFG-0811-08", "CHG-CFG-0811-07", "CHG-CFG-0811-05"]
        walk = walk_access(st, Access(frozenset({"incident:read", "deploy:read"}), "incident_review", "confidential"))
        got = st.window(q, tenant="tenant-gateway", readable=None, as_of_us=1786429800000000, **{
            "access_ok": walk["access_ok"], "entity_sources": walk["readable"]})
        assert [oid[d] for _, d, _ in got.hits] == ["CHG-CFG-0811-07", "CHG-CFG-0811-05"]
        # another tenant's window over the same entity key finds nothing
        got = st.window(q, tenant="tenant-demo", readable=None, as_of_us=1786429800000000, access_ok=every,
                        entity_sources=sources)
        assert got.hits == [] and got.withheld == []
    finally:
        st.close()


def test_a_statement_over_its_timeout_is_cancelled(store):
    from ctxcli.errors import StatementTimeoutError
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        st.set_statement_timeout(0.2)
        assert st.con.execute("SELECT 1").fetchall() == [(1,)]
        with pytest.raises(StatementTimeoutError, match=r"longer than the statement timeout \(0.2 s\)"):
            st.con.execute("SELECT count(*) FROM range(1000000000000) a").fetchall()   # hours of work
        assert st.con.execute("SELECT 2").fetchall() == [(2,)]     # the store stays usable
    finally:
        st.close()


def test_aggregates_are_computed_over_the_rows_the_subject_may_see(runs):
    res = runs[(None, "dynamic")]
    agg = {a["name"]: a for a in res.pack["aggregates"]}
    assert {k: (a["value"], a["rows"], a["withheld"], a["excluded"]) for k, a in agg.items()} == {
        "service_changes_in_window": (2, ["CHG-CFG-0811-05", "CHG-CFG-0811-07"], {}, {}),
        # any change of the tenant: the ledger-api push counts, the sensitive push only as withheld
        "tenant_changes_in_window": (3, ["CHG-CFG-0811-05", "CHG-CFG-0811-06", "CHG-CFG-0811-07"], {"scope": 1}, {}),
        "last_change_before_error": ("CFG-0811-07", ["CHG-CFG-0811-07"], {}, {})}
    assert agg["tenant_changes_in_window"]["query"]["entity_type"] == "change"
    ev = {e["object_id"]: e["evidence_id"] for e in res.pack["evidence"]}
    c = claim(res, "changes_in_window")
    assert c["status"] == "fact" and c["evidence"] == sorted([ev["CHG-CFG-0811-05"], ev["CHG-CFG-0811-07"]])
    assert c["text"].startswith("2 change(s) readable to you reached the service in the window before the "
                                "first error (3 across the tenant); the last one was CFG-0811-07.")
    traced = [(e["name"], e["value"], e["rows"], e["withheld"]) for e in res.trace if e["event"] == "aggregate_computed"]
    assert traced == [("service_changes_in_window", 2, 2, {}), ("tenant_changes_in_window", 3, 3, {"scope": 1}),
                      ("last_change_before_error", "CFG-0811-07", 1, {})]
    # one round: computed, but none of its rows is in the pack to cite
    gov = runs[(None, "governed")]
    assert claim(gov, "changes_in_window")["status"] == "unknown"
    assert {a["name"]: a["value"] for a in gov.pack["aggregates"]}["tenant_changes_in_window"] == 3


def test_an_aggregate_counts_a_withheld_row_only_for_a_subject_who_may_see_it(store):
    agg = {a["name"]: a for a in run(subject_id="oncall-07", scopes=["incident:read", "deploy:read",
                                                                      "deploy:read_sensitive"]).pack["aggregates"]}
    assert agg["tenant_changes_in_window"]["value"] == 4 and agg["tenant_changes_in_window"]["withheld"] == {}
    assert agg["service_changes_in_window"]["value"] == 3
    assert agg["last_change_before_error"]["value"] == "CFG-0811-08"
    low = {a["name"]: a for a in run(subject_id="oncall-07", scopes=["incident:read"]).pack["aggregates"]}
    # without deploy:read the change entities' source is unreadable: nothing is linked, counted or hinted at
    assert (low["tenant_changes_in_window"]["value"], low["tenant_changes_in_window"]["withheld"]) == (0, {})
    assert low["last_change_before_error"]["value"] is None
    assert low["last_change_before_error"]["unknown"] == "no_rows"


def test_replay_of_a_deadline_stop_reproduces_it(store, tmp_path):
    from .conftest import run_cli

    r = run_cli(["investigate", CASE, "--variant", "deadline-zero", "--out", tmp_path / "o"])
    assert r.exit_code == 0, r.stderr
    r = run_cli(["replay", tmp_path / "o"])
    assert r.exit_code == 0, r.stdout + r.stderr
    r = run_cli(["investigate", CASE, "--deadline", "0", "--out", tmp_path / "p"])
    assert r.exit_code == 0
    r = run_cli(["replay", tmp_path / "p"])
    assert r.exit_code == 0, r.stdout + r.stderr


def test_check_names_a_window_relation_type_no_source_declares(project_copy):
    from .conftest import run_cli

    pb = project_copy / "manifests" / "playbooks" / "payment-change-window.yaml"
    text = pb.read_text()
    pb.write_text(text.replace("        via: [APPLIES_TO, CHANGED_BY]\n        time: valid_from",
                               "        via: [APPLIES_TOO, CHANGED_BY]\n        time: valid_from", 1))
    r = run_cli(["check"])
    assert r.exit_code == 1, r.output
    assert "evidence type recent_change: window: edge type APPLIES_TOO is not declared by any source " \
           "(did you mean APPLIES_TO?)" in r.stdout


def test_every_aggregate_op_over_gated_rows():
    from types import SimpleNamespace as NS

    from ctxcli.engine.aggregate import _value
    from ctxcli.models.playbook import Aggregate

    rows = [NS(doc_id=1, object_id="A", facts={"n": 5, "id": "a"}), NS(doc_id=2, object_id="B", facts={"n": 2, "id": "b"}),
            NS(doc_id=3, object_id="C", facts={"n": "x", "id": "c"}), NS(doc_id=4, object_id="D", facts={"n": 9, "id": "d"})]
    times = {1: 100, 2: 90, 3: 130, 4: 160}
    disc = NS(ref=lambda o, withheld=False: o.object_id)
    over = {"entity_type": "change", "before_minutes": 10}

    def val(op, fact=None):
        rec = {"value": None, "rows": [], "excluded": {}}
        _value(rec, Aggregate.model_validate({"name": "x", "op": op, "evidence_type": "e", "fact": fact, "over": over}),
               rows, times, 120, disc)
        return rec["value"], rec["rows"], rec["excluded"]

    assert val("count") == (4, ["A", "B", "C", "D"], {})
    assert val("sum", "n") == (16, ["A", "B", "D"], {"fact_not_a_number": 1})
    assert val("min", "n") == (2, ["B"], {"fact_not_a_number": 1})
    assert val("max", "n") == (9, ["D"], {"fact_not_a_number": 1})
    assert val("latest_before", "id") == ("a", ["A"], {})       # 100 is the nearest at or before 120
    assert val("earliest_after") == ("C", ["C"], {})            # 130 is the nearest at or after: its object id
    with pytest.raises(ValueError, match="op sum needs fact"):
        Aggregate.model_validate({"name": "x", "op": "sum", "evidence_type": "e", "over": over})


@pytest.mark.parametrize("op, times, want", [
    ("latest_before", {1: 120, 2: 119}, "Z"),           # a row exactly at the anchor is at or before it
    ("latest_before", {1: 121, 2: 119}, "Y"),
    ("earliest_after", {1: 120, 2: 121}, "Z"),          # ... and at or after it
    ("earliest_after", {1: 119, 2: 121}, "Y"),
    ("latest_before", {1: 100, 2: 100}, "Y"),           # equally near: the smaller name, whatever the row order
    ("earliest_after", {1: 140, 2: 140}, "Y"),
])
def test_latest_before_and_earliest_after_at_the_anchor_and_on_ties(op, times, want):
    from types import SimpleNamespace as NS

    from ctxcli.engine.aggregate import _value
    from ctxcli.models.playbook import Aggregate

    rows = [NS(doc_id=1, object_id="Z", facts={}), NS(doc_id=2, object_id="Y", facts={})]
    rec = {"value": None, "rows": [], "excluded": {}}
    _value(rec, Aggregate.model_validate({"name": "x", "op": op, "evidence_type": "e",
                                          "over": {"entity_type": "change", "before_minutes": 10}}),
           rows, times, 120, NS(ref=lambda o, withheld=False: o.object_id))
    assert (rec["value"], rec["rows"]) == (want, [want])


# ------------------------------------------------------------------------------ calendar windows (issue 47, item 5)
# unit, anchor, zone -> first instant, first instant of the next one (excluded): one line per edge
CALENDAR_EDGES = [
    ("day", "2026-08-11T14:02:00+08:00", "+08:00", "2026-08-11T00:00:00+08:00", "2026-08-12T00:00:00+08:00"),
    ("day", "2026-08-11T00:00:00+08:00", "+08:00", "2026-08-11T00:00:00+08:00", "2026-08-12T00:00:00+08:00"),
    ("day", "2026-08-11T23:59:59.999999+08:00", "+08:00", "2026-08-11T00:00:00+08:00", "2026-08-12T00:00:00+08:00"),
    ("day", "2026-08-11T07:00:00+08:00", "+00:00", "2026-08-10T00:00:00+00:00", "2026-08-11T00:00:00+00:00"),
    ("day", "2026-08-11T07:00:00+08:00", "-06:00", "2026-08-10T00:00:00-06:00", "2026-08-11T00:00:00-06:00"),
    ("day", "2026-03-29T12:00:00+02:00", "Europe/Madrid", "2026-03-29T00:00:00+01:00", "2026-03-30T00:00:00+02:00"),
    ("week", "2026-08-11T14:02:00+08:00", "+08:00", "2026-08-10T00:00:00+08:00", "2026-08-17T00:00:00+08:00"),
    ("week", "2026-08-16T23:59:00+08:00", "+08:00", "2026-08-10T00:00:00+08:00", "2026-08-17T00:00:00+08:00"),
    ("week", "2026-08-17T00:00:00+08:00", "+08:00", "2026-08-17T00:00:00+08:00", "2026-08-24T00:00:00+08:00"),
    ("week", "2026-12-31T10:00:00+08:00", "+08:00", "2026-12-28T00:00:00+08:00", "2027-01-04T00:00:00+08:00"),
    ("month", "2026-01-31T23:00:00+08:00", "+08:00", "2026-01-01T00:00:00+08:00", "2026-02-01T00:00:00+08:00"),
    ("month", "2026-01-31T23:00:00+08:00", "+00:00", "2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00"),
    ("month", "2026-02-01T07:00:00+08:00", "+00:00", "2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00"),
    ("month", "2024-02-29T12:00:00+08:00", "+08:00", "2024-02-01T00:00:00+08:00", "2024-03-01T00:00:00+08:00"),
    ("month", "2026-12-15T12:00:00+08:00", "+08:00", "2026-12-01T00:00:00+08:00", "2027-01-01T00:00:00+08:00"),
]


def _cal(unit: str, zone: str | None = None, **kw):
    from ctxcli.models.playbook import WindowSpec

    return WindowSpec.model_validate({"entity": "service:payment-gateway", "via": ["APPLIES_TO", "CHANGED_BY"],
                                      "calendar": unit, **({"zone": zone} if zone else {}), **kw})


@pytest.mark.parametrize("unit,anchor,zone,start,until", CALENDAR_EDGES)
def test_calendar_window_bounds(unit, anchor, zone, start, until):
    from ctxcli.engine.plan import window_query
    from ctxcli.util.timeutil import dt_to_us, parse_ts

    us = dt_to_us(parse_ts(anchor))
    q = window_query(_cal(unit, zone), (us, anchor), "2026-08-11T14:30:00+08:00")
    assert (q["calendar"], q["zone"], q["from"], q["until"]) == (unit, zone, start, until)
    assert (q["from_us"], q["to_us"]) == (dt_to_us(parse_ts(start)), dt_to_us(parse_ts(until)) - 1)
    assert "before_minutes" not in q and "after_minutes" not in q


def test_a_calendar_window_without_a_zone_uses_the_request_offset():
    from ctxcli.engine.plan import window_query
    from ctxcli.util.timeutil import dt_to_us, parse_ts

    anchor = "2026-08-11T07:00:00+08:00"
    q = window_query(_cal("day"), (dt_to_us(parse_ts(anchor)), anchor), "2026-08-10T18:30:00-06:00")
    assert (q["zone"], q["from"], q["until"]) == ("-06:00", "2026-08-10T00:00:00-06:00", "2026-08-11T00:00:00-06:00")


@pytest.mark.parametrize("spec,msg", [
    ({"calendar": "year"}, "Input should be 'day', 'week' or 'month'"),
    ({"calendar": "day", "before_minutes": 10}, "give exactly one of before_minutes, calendar"),
    ({}, "give exactly one of before_minutes, calendar"),
    ({"calendar": "day", "after_minutes": 5}, "after_minutes goes with before_minutes"),
    ({"before_minutes": 10, "zone": "+08:00"}, "zone goes with calendar"),
    ({"calendar": "day", "zone": "Mars/Olympus"}, "zone 'Mars/Olympus' is not a ±HH:MM offset or an IANA"),
    ({"calendar": "day", "zone": "+25:00"}, "zone '\\+25:00' is not a ±HH:MM offset"),
])
def test_a_bad_calendar_declaration_is_refused(spec, msg):
    from pydantic import ValidationError

    from ctxcli.models.playbook import WindowSpec

    with pytest.raises(ValidationError, match=msg):
        WindowSpec.model_validate({"entity_type": "change", **spec})


def test_a_bad_calendar_declaration_is_one_line_naming_file_and_field(project_copy):
    from .conftest import run_cli

    pb = project_copy / "manifests" / "playbooks" / "payment-change-window.yaml"
    text = pb.read_text()
    pb.write_text(text.replace("      anchor_from: incident_timeline\n      before_minutes: 10\n  - name: tenant",
                               "      anchor_from: incident_timeline\n      calendar: fortnight\n  - name: tenant", 1))
    r = run_cli(["investigate", "INC-2026-0811"])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr == ("ctx: error: manifests/playbooks/payment-change-window.yaml:88:7: aggregates.0.over.calendar: "
                        "Input should be 'day', 'week' or 'month'\n")


def calendar_edge_hits(st) -> dict[str, list[str]]:
    """The day windows around CHG-CFG-0811-07 (valid from 14:00+08:00, 00:00 at -06:00) on the
    store ``st``: with the anchor on its day it is the first instant (inside); with the anchor on
    the day before, it is 00:00 of the next day (outside). Every relation allowed."""
    from ctxcli.engine.plan import window_query
    from ctxcli.util.timeutil import dt_to_us, parse_ts

    oid = dict(st.con.execute("SELECT doc_id, object_id FROM objects WHERE tenant_id = 'tenant-gateway'").fetchall()) \
        if hasattr(st, "con") else None
    every = [a for a, *_ in st.relation_access()]
    sources = [s for s, *_ in st.source_access()]
    out = {}
    for name, anchor, zone in (("on_its_day", "2026-08-11T14:02:00+08:00", "-06:00"),
                               ("day_before", "2026-08-11T13:59:00+08:00", "-06:00"),
                               ("request_zone", "2026-08-11T13:59:00+08:00", None)):
        w = window_query(_cal("day", zone), (dt_to_us(parse_ts(anchor)), anchor), "2026-08-11T14:30:00+08:00")
        got = st.window([("q", "recent_change", [], w, 10)], tenant="tenant-gateway", readable=None,
                        as_of_us=dt_to_us(parse_ts("2026-08-11T14:30:00+08:00")), access_ok=every,
                        entity_sources=sources)
        docs = [d for _, d, _ in got.hits]
        if oid is None:
            oid = {r[0]: r[1] for r in st.object_metadata(docs)}
        out[name] = [oid[d] for d in docs]
    return out


# at -06:00 the day before also holds yesterday's release (2026-08-10 at +08:00, the same day at
# -06:00); in the request's zone (+08:00) 13:59 and 14:00 are one day, nearest first
CALENDAR_EDGE_HITS = {"on_its_day": ["CHG-CFG-0811-08", "CHG-CFG-0811-07"],
                      "day_before": ["CHG-CFG-0811-05", "CHG-CFG-0811-02", "CHG-REL-2026.08.10.2"],
                      "request_zone": ["CHG-CFG-0811-07", "CHG-CFG-0811-08", "CHG-CFG-0811-05", "CHG-CFG-0811-02"]}


def test_a_calendar_day_holds_its_first_instant_and_not_the_next_days(store):
    from ctxcli.store import open_store

    st = open_store(store)
    try:
        assert calendar_edge_hits(st) == CALENDAR_EDGE_HITS
    finally:
        st.close()


def test_an_aggregate_counts_the_calendar_day_of_the_first_error(project_copy):
    """"How many changes reached payment-gateway that day?": an aggregate over the calendar day
    (in the request's zone, +08:00) of the first error, gated like any aggregate row."""
    from ctxcli import api

    pb = project_copy / "manifests" / "playbooks" / "payment-change-window.yaml"
    pb.write_text(pb.read_text().replace("\nfacts:\n", """
  - name: service_changes_that_day
    op: count
    evidence_type: recent_change
    over:
      entity: "service:{param.service}"
      via: [APPLIES_TO, CHANGED_BY]
      anchor_fact: first_error_at
      anchor_from: incident_timeline
      calendar: day

facts:
""", 1))
    api.load(manifests=project_copy / "manifests")
    res = api.investigate(api.InvestigateOptions(case=CASE, strategy="dynamic"))
    agg = {a["name"]: a for a in res.pack["aggregates"]}["service_changes_that_day"]
    assert agg["query"]["calendar"] == "day" and agg["query"]["zone"] == "+08:00"
    assert (agg["query"]["from"], agg["query"]["until"]) == ("2026-08-11T00:00:00+08:00", "2026-08-12T00:00:00+08:00")
    # 02, 05, 07 (payment-gateway, that day); yesterday's release is outside; 08's only link is
    # attested by a record this subject may not read, so the walk never reaches it
    assert agg["value"] == 3 and agg["withheld"] == {} and agg["excluded"] == {}
    assert len(agg["rows"]) == 3


def test_a_playbook_without_calendar_windows_keeps_its_hash():
    """calendar and zone count in a playbook's hash only when declared: payment-change-window
    (minute windows) hashes as before issue 47's calendar windows."""
    from ctxcli import api

    assert api.read_playbook("payment-change-window")[1] == \
        "sha256:a3d7780b172eb9b288e9001e808b6ca17415af0206dd1869d036b0bd677aec7b"


def test_every_window_query_of_one_call_is_answered_as_if_asked_alone(store):
    """The DuckDB window runs every query of a call in one statement: each query's hits (ranks,
    the limit, the widening past expired records) and withheld counts equal what that query
    alone gets, for queries that differ in relation types, entity type, limit and anchor."""
    from ctxcli.store import open_store

    from .test_access_rules import AS_OF, SUBJECTS, corpus, readable_for

    st = open_store(store)
    try:
        c = corpus(st)
        rels = c["rel_types"]
        queries = []
        for i, t in enumerate(c["types"]):          # each pair: no relation, every one, one of them
            for j, et in enumerate(c["entity_types"]):
                for k, via in enumerate(([], rels, [rels[(i + j) % len(rels)]])):
                    queries.append((f"w{i:03d}{j:03d}{k}", t, [], {
                        "entity": None, "entity_type": et, "via": via, "time": "valid_from",
                        "from_us": -(2 ** 62), "to_us": 2 ** 62, "anchor_us": AS_OF - (i * 7 + j) * 3_600_000_000},
                        1 + (i + j + k) % 3))
        # queries naming one end of a relation, with and without its type, in both directions
        ends = st.con.execute(
            "SELECT DISTINCT a.entity_key, b.entity_key, r.rel_type, unnest(o.supports) FROM relations r "
            "JOIN entities a ON a.entity_id = r.src JOIN entities b ON b.entity_id = r.dst "
            "JOIN objects o ON o.subject_id = b.entity_key AND o.tenant_id = r.tenant_id "
            "WHERE r.tenant_id = 'tenant-demo' ORDER BY ALL LIMIT 40").fetchall()
        for n, (src, dst, rel, t) in enumerate(ends):
            for k, (key, via) in enumerate(((src, []), (src, [rel]), (dst, []), (dst, [rel]))):
                queries.append((f"r{n:03d}{k}", t, [], {
                    "entity": key, "entity_type": None, "via": via, "time": "valid_from",
                    "from_us": -(2 ** 62), "to_us": 2 ** 62, "anchor_us": AS_OF}, 5))
        tenant = "tenant-demo"
        kw = {"tenant": tenant, "readable": readable_for(st, tenant, SUBJECTS["investigator"]),
              "as_of_us": AS_OF, "access_ok": c["access_ids"], "entity_sources": c["sources"]}
        together = st.window(queries, **kw)
        alone_hits, alone_held = [], []
        for q in queries:
            f = st.window([q], **kw)
            alone_hits += f.hits
            alone_held += f.withheld
        assert together.hits == alone_hits and len({h[0] for h in alone_hits}) >= 20
        # the relation types matter: some pair finds more through a relation than without one
        assert any(len([h for h in alone_hits if h[0] == q[0][:-1] + "1"])
                   > len([h for h in alone_hits if h[0] == q[0][:-1] + "0"]) for q in queries)
        assert together.withheld == sorted(alone_held, key=repr)
        # from a relation's source, its type finds the objects about the other end; no type, not them
        got = {q[0]: {h[1] for h in alone_hits if h[0] == q[0]} for q in queries}
        pairs = [(f"r{n:03d}0", f"r{n:03d}1") for n in range(len(ends))]
        assert all(got[a] <= got[b] for a, b in pairs) and sum(got[a] < got[b] for a, b in pairs) > 10
    finally:
        st.close()
