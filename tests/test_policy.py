"""The request policy (src/ctxcli/request_policy.py): who the subject is, which clearance and scopes go
with it, which purpose wins, and the limits every caller gets — unit tests on the bundled
C-102 case and its playbook, with no store."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from ctxcli.errors import UsageError
from ctxcli.models.case import CaseFile
from ctxcli.request_policy import InvestigateOptions, case_from_request, make_request, refuse_out_of_limits
from ctxcli.project import read_checked


@pytest.fixture
def c102():
    case, pb, _ = read_checked("C-102")
    return case, pb


def _case(case: CaseFile, **variant) -> CaseFile:
    """C-102 with one more variant ``v`` holding ``variant``."""
    d = case.model_dump(mode="json", exclude_defaults=True)
    d["variants"] = {"v": variant}
    return CaseFile.model_validate(d)


def test_the_cases_subject_keeps_its_scopes_and_clearance(c102):
    case, pb = c102
    req = make_request(case, pb, InvestigateOptions(case="C-102"))
    assert (req.subject_id, req.scopes, req.clearance) == (
        "investigator-01", ["case:read", "document:read", "policy:read", "risk:read"], "confidential")
    same = make_request(case, pb, InvestigateOptions(case="C-102", subject_id="investigator-01"))
    assert (same.scopes, same.clearance) == (req.scopes, "confidential")


def test_another_subject_starts_with_no_scope_and_the_default_clearance(c102):
    case, pb = c102
    req = make_request(case, pb, InvestigateOptions(case="C-102", subject_id="intern-99"))
    assert (req.subject_id, req.scopes, req.clearance) == ("intern-99", [], "internal")
    given = make_request(case, pb, InvestigateOptions(case="C-102", subject_id="intern-99", scopes=["case:read"],
                                                      clearance="public"))
    assert (given.scopes, given.clearance) == (["case:read"], "public")


def test_a_variants_subject_brings_its_own_scopes_and_clearance(c102):
    case, pb = c102
    req = make_request(case, pb, InvestigateOptions(case="C-102", variant="restricted"))
    assert (req.subject_id, req.scopes, req.clearance) == ("intern-07", ["case:read"], "confidential")


def test_an_unknown_clearance_is_refused(c102):
    case, pb = c102
    with pytest.raises(UsageError, match=r"--clearance 'secret' is not one of public, internal"):
        make_request(case, pb, InvestigateOptions(case="C-102", clearance="secret"))


def test_the_flag_wins_over_the_variant_and_the_variant_over_the_case(c102):
    case, pb = c102
    case = _case(case, purpose="claim_review", budget=4000, max_rounds=1)
    assert make_request(case, pb, InvestigateOptions(case="C-102")).budget == 6000      # the playbook's
    v = make_request(case, pb, InvestigateOptions(case="C-102", variant="v"))
    assert (v.budget, v.max_rounds, v.purpose) == (4000, 1, "claim_review")
    flag = make_request(case, pb, InvestigateOptions(case="C-102", variant="v", budget=5000, max_rounds=2))
    assert (flag.budget, flag.max_rounds) == (5000, 2)


def test_a_purpose_the_playbook_does_not_serve_is_refused(c102):
    case, pb = c102
    with pytest.raises(UsageError, match=r"^purpose 'audit' is not served by playbook motor-claim-review "
                                         r"\(serves: claim_review\)$"):
        make_request(case, pb, InvestigateOptions(case="C-102", purpose="audit"))


@pytest.mark.parametrize("opts, message", [
    (dict(budget=10**9), "--budget 1000000000 is not a whole number of tokens from 64 to 2000000"),
    (dict(max_rounds=100), "--max-rounds 100 is not a whole number from 1 to 5"),
    (dict(subject_id="a b"), "--subject 'a b' is not a valid id"),
    (dict(scopes=["bad scope"]), "--scope 'bad scope' is not a valid scope"),
])
def test_the_resolved_request_is_held_to_the_limits_whoever_calls(c102, opts, message):
    """A library caller (replay, serve, a test) that skips the command line's flag checks still
    cannot build a request the command line refuses."""
    case, pb = c102
    with pytest.raises(UsageError) as e:
        make_request(case, pb, InvestigateOptions(case="C-102", **opts))
    assert e.value.detail == message


def test_limits_are_named_as_the_caller_names_them():
    with pytest.raises(UsageError) as e:
        refuse_out_of_limits({"budget": "budget"}, budget=10)
    assert e.value.detail == "budget 10 is not a whole number of tokens from 64 to 2000000"
    refuse_out_of_limits(budget=64, max_rounds=5, subject="a", scopes=["case:read"], strategy="topk")


def test_the_mcp_servers_budget_uses_the_same_limits(tmp_path):
    from ctxcli.serve.config import ServeConfig
    from ctxcli.serve.identity import case_options

    with pytest.raises(UsageError) as e:
        case_options(ServeConfig(db=tmp_path / "db", runs_dir=tmp_path, audit_log=tmp_path / "a"), "C-102", None, None, None, 63)
    assert e.value.detail == "budget 63 is not a whole number of tokens from 64 to 2000000"


def test_the_playbook_model_takes_the_request_limits():
    from ctxcli.models.playbook import Playbook

    schema = Playbook.model_json_schema()
    props = schema["properties"]
    budget = schema["$defs"]["Budget"]["properties"]["total_tokens"]
    assert (budget["minimum"], budget["maximum"]) == (64, 2_000_000)
    assert (props["max_rounds"]["minimum"], props["max_rounds"]["maximum"]) == (1, 5)


def test_an_adhoc_request_reads_back_as_its_case(c102):
    case, pb = c102
    req = {"case_id": "adhoc-0123456789ab", "tenant_id": "tenant-demo", "question": "Q?", "purpose": "claim_review",
           "as_of": "2026-07-23T12:00:00+08:00", "seeds": ["case:C-102"], "business_keys": ["C-102"],
           "subject": {"id": "investigator-01", "scopes": ["case:read"], "clearance": "restricted"}, "params": {}}
    back = case_from_request(req, pb.playbook_id)
    assert (back.case_id, back.subject.clearance.value, back.as_of) == (
        "adhoc-0123456789ab", "restricted", datetime(2026, 7, 23, 4, tzinfo=timezone.utc))
    del req["subject"]["clearance"]        # a pack from before clearances: the default
    assert case_from_request(req, pb.playbook_id).subject.clearance.value == "internal"
