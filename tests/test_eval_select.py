"""`ctx eval --case/--variant` narrow the runs; `--junit` writes them for CI (issue 31.9)."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from .conftest import run_cli


def _runs(r) -> list[tuple]:
    return [(x["case_id"], x["variant"], x["strategy"]) for x in json.loads(r.stdout)["runs"]]


def test_case_and_variant_select_exactly_those_runs(store):
    r = run_cli(["eval", "--case", "C-102", "--variant", "restricted", "--strategy", "governed", "--json"])
    assert r.exit_code == 0, r.stderr
    assert _runs(r) == [("C-102", "restricted", "governed")]
    r = run_cli(["eval", "--case", "C-104", "--case", "C-105", "--variant", "base", "--json"])
    assert r.exit_code == 0, r.stderr
    assert _runs(r) == [("C-104", None, "dynamic"), ("C-105", None, "dynamic")]


def test_unknown_case_or_variant_is_a_usage_error(store):
    r = run_cli(["eval", "--case", "C-999"])
    assert r.exit_code == 2
    assert r.stderr.startswith("ctx: error: --case 'C-999': no such case among the case files (known: C-102, ")
    r = run_cli(["eval", "--case", "C-104", "--variant", "restricted"])
    assert r.exit_code == 2
    assert r.stderr.startswith("ctx: error: --variant 'restricted': no selected case has this variant (known: base")


def test_junit_marks_a_failing_gated_run_as_failure_and_full_topk_as_skipped(project_copy, tmp_path):
    case = project_copy / "examples" / "cases" / "C-104.yaml"
    case.write_text(case.read_text().replace("  action: continue_read_only_review\n", "  action: approve_claim\n", 1))
    out = tmp_path / "eval.xml"
    r = run_cli(["eval", "--case", "C-104", "--variant", "base", "--strategy", "dynamic,topk", "--junit", out])
    assert r.exit_code == 1, r.stderr
    root = ET.parse(out).getroot()
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "2", "1")
    dyn, topk = root.findall("testsuite")
    assert dyn.get("name") == "ctx eval · dynamic" and topk.get("name") == "ctx eval · topk"
    (tc,) = dyn.findall("testcase")
    assert (tc.get("classname"), tc.get("name"), tc.get("file")) == ("C-104", "base (dynamic)",
                                                                    "examples/cases/C-104.yaml")
    (fail,) = tc.findall("failure")
    assert fail.get("type") == "answer"
    assert fail.get("message") == "first broken layer: answer; failed checks: answer.action"
    assert "answer.action: expected 'approve_claim', got 'continue_read_only_review'" in fail.text
    (skip,) = topk.find("testcase").findall("skipped")
    assert skip.get("message").startswith("not gated (topk bypasses the gates): first broken layer: ")


def test_junit_replaces_only_an_earlier_junit_file(store, tmp_path):
    mine = tmp_path / "notes.xml"
    mine.write_text("<notes>mine</notes>\n")
    r = run_cli(["eval", "--case", "C-104", "--variant", "base", "--junit", mine])
    assert (r.exit_code, r.stderr) == (2, f"ctx: error: --junit {mine}: exists and was not written by ctx eval "
                                          "--junit; not replacing it\n")
    assert mine.read_text() == "<notes>mine</notes>\n"
    out = tmp_path / "eval.xml"
    for _ in range(2):      # the second run replaces the first one's file
        assert run_cli(["eval", "--case", "C-104", "--variant", "base", "--junit", out]).exit_code == 0
    assert out.read_text().startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ctx eval" ')
