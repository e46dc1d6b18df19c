"""Ad-hoc runs (issue 16): `ctx investigate --playbook P --seed KEY …` without a case file.
The run folder records the synthesised case; every postmortem command works on it."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from .conftest import run_cli

AS_OF = "2026-07-23T12:00:00+08:00"
C102_Q = "Does claim C-102 satisfy the rules? Which rule version applied on that date? Why must a human review it?"
SCOPES = ["case:read", "policy:read", "document:read", "risk:read"]
ADHOC = ["--playbook", "motor-claim-review", "--seed", "case:C-102", "--tenant", "tenant-demo",
         "--subject", "investigator-01", *[x for s in SCOPES for x in ("--scope", s)],
         "--purpose", "claim_review", "--as-of", AS_OF]
RUN_FILES = ("pack.json", "trace.jsonl", "answer.json", "answer.md", "case.json", "run.json", ".ctx-run")


def _investigate(out, *args):
    r = run_cli(["investigate", *args, "--out", out])
    assert r.exit_code == 0, r.stderr
    return json.loads((out / "pack.json").read_text())


def _case_id(playbook, tenant, seeds, keys, params, question):
    body = json.dumps({"business_keys": keys, "params": params, "playbook": playbook, "question": question,
                       "seeds": seeds, "tenant_id": tenant}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return "adhoc-" + hashlib.sha256(body.encode("utf-8")).hexdigest()[:12]


@pytest.fixture
def adhoc_c102(store, tmp_path):
    """The C-102 case asked ad hoc, with the case file's subject, clearance and question."""
    out = tmp_path / "adhoc"
    _investigate(out, *ADHOC, "--clearance", "confidential", "--question", C102_Q)
    return out


def test_adhoc_run_finds_what_the_case_file_finds(adhoc_c102, tmp_path):
    case_pack = _investigate(tmp_path / "case", "C-102")
    pack = json.loads((adhoc_c102 / "pack.json").read_text())
    answer = json.loads((adhoc_c102 / "answer.json").read_text())
    cid = _case_id("motor-claim-review", "tenant-demo", ["case:C-102"], ["C-102"], {}, C102_Q)
    assert pack["request"]["case_id"] == cid
    assert pack["request"]["adhoc"] is True and "adhoc" not in case_pack["request"]
    assert [e["object_id"] for e in pack["evidence"]] == [e["object_id"] for e in case_pack["evidence"]]
    assert answer["verdict"] == "complete"
    assert answer["recommended_action"]["action"] == "route_to_human_reviewer"
    same = {k: v for k, v in pack["request"].items() if k not in ("case_id", "adhoc")}
    assert same == {k: v for k, v in case_pack["request"].items() if k != "case_id"}
    # the synthesised case, written beside the pack and listed (with its hash) in run.json and .ctx-run
    case = json.loads((adhoc_c102 / "case.json").read_text())
    assert case == {"case_id": cid, "tenant_id": "tenant-demo", "playbook": "motor-claim-review",
                    "question": C102_Q, "purpose": "claim_review", "as_of": AS_OF,
                    "subject": {"id": "investigator-01", "scopes": sorted(SCOPES), "clearance": "confidential"},
                    "seeds": ["case:C-102"], "business_keys": ["C-102"]}
    run = json.loads((adhoc_c102 / "run.json").read_text())
    assert run["files"]["case.json"] == "sha256:" + hashlib.sha256((adhoc_c102 / "case.json").read_bytes()).hexdigest()
    assert "case.json" in json.loads((adhoc_c102 / ".ctx-run").read_text())["files"]
    assert not (tmp_path / "case" / "case.json").exists()


def test_adhoc_rerun_is_byte_identical_and_every_postmortem_command_works(adhoc_c102, tmp_path):
    again = tmp_path / "again"
    _investigate(again, *ADHOC, "--clearance", "confidential", "--question", C102_Q)
    for f in RUN_FILES:
        assert (again / f).read_bytes() == (adhoc_c102 / f).read_bytes(), f
    pack = adhoc_c102 / "pack.json"
    cid = json.loads(pack.read_text())["request"]["case_id"]
    r = run_cli(["replay", pack, "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == "identical" and doc["byte_identical"] is True and doc["trace_identical"] is True
    r = run_cli(["explain-omissions", pack])
    assert r.exit_code == 0, r.stderr
    assert f"case {cid} · subject investigator-01" in r.stdout
    r = run_cli(["diff", pack, again / "pack.json"])
    assert r.exit_code == 0, r.stderr
    r = run_cli(["render", pack])
    assert r.exit_code == 0, r.stderr
    assert f"Case {cid} (tenant tenant-demo)" in r.stdout
    r = run_cli(["report", adhoc_c102, "--out", tmp_path / "report.html"])
    assert r.exit_code == 0, r.stderr
    assert f"<title>ctx report · {cid} · " in (tmp_path / "report.html").read_text()


def test_adhoc_run_needs_no_case_file_and_defaults_are_stated(store, tmp_path):
    """Without --question the playbook's description is the question; without --clearance the
    subject is cleared for internal (so confidential sources are withheld); default out folder
    runs/<adhoc id>-<pack hash>/."""
    pack = _investigate(tmp_path / "o", *ADHOC)
    req = pack["request"]
    assert req["question"].startswith("Read-only review of a motor own-damage claim: which version")
    assert req["subject"]["clearance"] == "internal"
    assert req["business_keys"] == ["C-102"]
    assert req["case_id"] == _case_id("motor-claim-review", "tenant-demo", ["case:C-102"], ["C-102"], {},
                                      req["question"])
    assert any("classification" in q for r in pack["rounds"] for q in (r.get("withheld") or {}).values())
    # the same look at another time keeps its case id; another seed does not
    other = _investigate(tmp_path / "p", *ADHOC, "--as-of", "2025-11-15T12:00:00+08:00")
    assert other["request"]["case_id"] == req["case_id"]
    third = _investigate(tmp_path / "q", *ADHOC, "--seed", "case:C-104", "--business-key", "C-104")
    assert third["request"]["seeds"] == ["case:C-102", "case:C-104"]
    assert third["request"]["business_keys"] == ["C-104"]
    assert third["request"]["case_id"] != req["case_id"]


def test_saved_case_json_runs_as_a_case_file(adhoc_c102, project_copy, tmp_path):
    case = json.loads((adhoc_c102 / "case.json").read_text())
    shutil.copy(adhoc_c102 / "case.json", project_copy / "examples" / "cases" / f"{case['case_id']}.yaml")
    pack = _investigate(tmp_path / "saved", case["case_id"])
    adhoc = json.loads((adhoc_c102 / "pack.json").read_text())
    assert [e["object_id"] for e in pack["evidence"]] == [e["object_id"] for e in adhoc["evidence"]]
    assert {k: v for k, v in adhoc["request"].items() if k != "adhoc"} == pack["request"]


def test_adhoc_params_are_checked_recorded_and_replayed(project_copy, tmp_path):
    pb = project_copy / "manifests" / "playbooks" / "motor-claim-review.yaml"
    pb.write_text(pb.read_text().replace("purposes: [claim_review]\n", "purposes: [claim_review]\nparams:\n"
                                         "  period: {type: string, required: true}\n"
                                         "  threshold: {type: integer, default: 5}\n", 1))
    assert run_cli(["load"]).exit_code == 0
    r = run_cli(["investigate", *ADHOC])
    assert r.exit_code == 2
    assert r.stderr == "ctx: error: parameter period is required by playbook motor-claim-review but not given\n"
    r = run_cli(["investigate", *ADHOC, "--param", "period=2026-07", "--param", "threshold=many"])
    assert r.exit_code == 2
    assert r.stderr == "ctx: error: parameter threshold: expected integer, got 'many'\n"
    r = run_cli(["investigate", *ADHOC, "--param", "period"])      # no '=': refused, never the value ''
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == ("ctx: error: --param 'period': expected NAME=VALUE with a lower-case NAME (playbook "
                        "motor-claim-review declares: period, threshold)\n")
    pack = _investigate(tmp_path / "o", *ADHOC, "--param", "period=2026-07", "--param", "threshold=7")
    assert pack["request"]["params"] == {"period": "2026-07", "threshold": 7}
    assert json.loads((tmp_path / "o" / "case.json").read_text())["params"] == {"period": "2026-07",
                                                                                "threshold": 7}
    r = run_cli(["replay", tmp_path / "o" / "pack.json", "--json"])
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["byte_identical"] is True


def _without(flag):
    out, skip = [], False
    for _i, a in enumerate(ADHOC):
        if skip:
            skip = False
            continue
        if a == flag:
            skip = True
            continue
        out.append(a)
    return out


@pytest.mark.parametrize("args, message", [
    (_without("--tenant"), "--tenant is required with --playbook: an ad-hoc run has no case file to take it from"),
    (_without("--subject"), "--subject is required with --playbook: an ad-hoc run has no case file to take it "
                            "from"),
    (_without("--scope"), "--scope is required with --playbook: an ad-hoc run has no case file to take it from"),
    (_without("--purpose"), "--purpose is required with --playbook: an ad-hoc run has no case file to take it "
                            "from"),
    (_without("--as-of"), "--as-of is required with --playbook: an ad-hoc run has no case file to take it from"),
    (_without("--seed"), "--seed is required with --playbook: the entity keys the investigation starts from"),
    (["C-102", *ADHOC], "a case id (C-102) and --playbook cannot be combined: a case file names its own playbook"),
    ([*ADHOC, "--variant", "restricted"], "--variant needs a case file: an ad-hoc run (--playbook) has no variants"),
    (["C-102", "--seed", "case:C-104"], "--seed needs --playbook: a case file names its own seeds"),
    (["C-102", "--tenant", "tenant-other"], "--tenant needs --playbook: a case file names its own tenant"),
    ([], "give a case id (or case file), or --playbook with --seed for an ad-hoc run"),
    ([*ADHOC, "--param", "nope=1"], "parameter nope is not declared by playbook motor-claim-review (it declares no "
                                  "parameters)"),
    ([*ADHOC, "--purpose", "audit"], "purpose audit is not served by playbook motor-claim-review (serves: "
                                     "claim_review)"),
    ([*ADHOC, "--tenant", "bad tenant"], "--tenant 'bad tenant' is not a valid id"),
    ([*ADHOC, "--clearance", "secret"], "--clearance 'secret' is not one of public, internal, confidential, "
                                        "restricted"),
    ([*ADHOC, "--as-of", "2026-07-23T12:00:00"], None),
])
def test_adhoc_usage_errors_are_one_line_exit_2(store, tmp_path, args, message):
    r = run_cli(["investigate", *args, "--out", tmp_path / "o"])
    assert r.exit_code == 2, r.stdout
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("ctx: error: ")
    if message is not None:
        assert r.stderr == f"ctx: error: {message}\n"
    else:
        assert "no timezone offset" in r.stderr
    assert not (tmp_path / "o").exists()


def test_unknown_playbook_names_the_flag(store, tmp_path):
    r = run_cli(["investigate", *ADHOC, "--playbook", "motor-claim-reveiw"])
    assert r.exit_code == 2
    assert r.stderr.startswith("ctx: error: --playbook: unknown playbook 'motor-claim-reveiw': no "
                               "manifests/playbooks/motor-claim-reveiw.yaml")
    assert r.stderr.count("\n") == 1


def test_adhoc_library_api_returns_the_case_without_printing(store, capsys):
    from ctxcli import api
    from ctxcli.util.timeutil import parse_ts

    opts = api.InvestigateOptions(adhoc=api.AdhocSpec(playbook="motor-claim-review", seeds=["case:C-102"],
                                                      tenant_id="tenant-demo"),
                                  subject_id="investigator-01", scopes=SCOPES, purpose="claim_review",
                                  as_of=parse_ts(AS_OF), clearance="confidential")
    res = api.investigate(opts)
    assert res.case.case_id == res.pack["request"]["case_id"]
    assert res.case.playbook == "motor-claim-review"
    assert "case.json" in api.output_files(res)
    assert capsys.readouterr() == ("", "")


def test_adhoc_run_files_validate_against_the_published_schemas(adhoc_c102, project_copy, tmp_path):
    from .test_contracts import _check

    _check("pack", json.loads((adhoc_c102 / "pack.json").read_text()), "pack.json")
    _check("case", json.loads((adhoc_c102 / "case.json").read_text()), "case.json")
    # the pack schema takes params too (a playbook that declares them)
    pb = project_copy / "manifests" / "playbooks" / "motor-claim-review.yaml"
    pb.write_text(pb.read_text().replace("purposes: [claim_review]\n", "purposes: [claim_review]\nparams:\n"
                                         "  period: {type: string}\n", 1))
    assert run_cli(["load"]).exit_code == 0
    pack = _investigate(tmp_path / "p", *ADHOC, "--param", "period=2026-07")
    _check("pack", pack, "pack.json with params")
    # cleared for internal only: the classification gate withholds, and pack and trace still validate
    assert any("classification" in q for r in pack["rounds"] for q in (r.get("withheld") or {}).values())
    for line in (tmp_path / "p" / "trace.jsonl").read_text().splitlines():
        ev = json.loads(line)
        _check(f"trace.{ev['event']}", ev, f"trace.jsonl seq {ev['seq']}")
