"""The claim checker (issue 44): comparisons, epistemic status, bound entities, negation and hedges,
on the bundled packs through the validator and on items alone through ``check_claim``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from .conftest import run_cli
from .test_ask import faithful
from .test_validator import _ev, _vocab, c102  # noqa: F401  (c102 is a fixture)


@pytest.fixture(scope="module")
def inc(bundled_store):
    old = os.environ.get("CTX_DB")
    os.environ["CTX_DB"] = str(bundled_store)
    try:
        return faithful("INC-2026-0723")
    finally:
        if old is None:
            os.environ.pop("CTX_DB", None)
        else:
            os.environ["CTX_DB"] = old


def codes(case, claims):
    """(code, claim) of every violation, and of every warning, of an answer made of ``claims``."""
    from ctxcli import api
    from ctxcli.answer.schema import actions
    from ctxcli.answer.validate import validate

    ans, pack = case
    pb = pack["request"].get("playbook") or ("motor-claim-review" if pack["request"]["case_id"] == "C-102"
                                             else "payment-incident-review")
    try:
        vocab = actions(api.read_playbook(pb)[0])
    except Exception:       # the vocabulary does not matter here: the answer keeps its own action
        vocab = [ans["recommended_action"]]
    rules = {c.id: c.when for c in api.read_playbook(pb)[0].claims if c.when} if pb == "motor-claim-review" else None
    v = validate({**ans, "claims": claims}, pack, vocab + [ans["recommended_action"]], rules=rules)
    return ([(x["code"], x.get("claim")) for x in v["violations"]],
            [(x["code"], x.get("claim")) for x in v["warnings"] if x["code"] != "claims_uncovered"])


def claim(text, status, *ids):
    return {"text": text, "status": status, "evidence": list(ids)}


# ---------------------------------------------------------------------------------- the examples
def test_c102_reversed_comparison_is_rejected_and_its_rewording_accepted(c102):
    _, pack = c102
    amount, review = _ev(pack, "SIG-C102-AMOUNT"), _ev(pack, "RULE-MANUAL-REVIEW")
    bad = "The claim amount 128000 is below the review threshold of 100000, so no human review is needed."
    assert codes(c102, [claim(bad, "fact", amount, review)])[0] == [("wrong_comparison", 0)]
    assert codes(c102, [claim("The claim amount 128000 is below the threshold of 100000.", "inference", amount,
                              review)])[0] == [("wrong_comparison", 0)]
    good = "The claim amount 128000 is above the review threshold of 100000, so a human review is needed."
    assert codes(c102, [claim(good, "inference", amount, review)]) == ([], [])
    assert codes(c102, [claim("The claim amount 128000 is at least the threshold of 100000.", "inference",
                              amount, review)]) == ([], [])
    assert codes(c102, [claim("The claim amount 128000 does not exceed the threshold of 100000.", "inference",
                              amount, review)])[0] == [("wrong_comparison", 0)]


def test_a_claim_about_the_manual_review_rule_must_agree_with_its_outcome(c102):
    _, pack = c102
    ids = [_ev(pack, o) for o in ("SIG-C102-AMOUNT", "SIG-C102-TENURE", "RULE-MANUAL-REVIEW")]
    for bad in ("The claim amount 128000 is at or above the threshold of 100000, so no human review is needed.",
                "The manual review rule does not apply to this claim.", "该理赔不需要人工审核。",
                "La regla de revisión manual no se aplica."):
        assert codes(c102, [claim(bad, "inference", *ids)])[0] == [("wrong_comparison", 0)], bad
    for good in ("A human review is required by the manual review rule.", "该理赔需要人工审核。",
                 "La regla de revisión manual se aplica: la reclamación requiere revisión."):
        assert codes(c102, [claim(good, "inference", *ids)]) == ([], []), good


def test_c102_dropped_negation_is_rejected_and_its_rewording_accepted(c102):
    _, pack = c102
    tenure, review = _ev(pack, "SIG-C102-TENURE"), _ev(pack, "RULE-MANUAL-REVIEW")
    bad = "The policy tenure of 12 days is not within the 30-day review window."
    assert codes(c102, [claim(bad, "inference", tenure, review)])[0] == [("wrong_comparison", 0)]
    for good in ("The policy tenure of 12 days is within the 30-day review window.",
                 "The policy tenure of 12 days is not outside the 30-day review window.",
                 "保单期限12天在30天审核窗口以内。", "La antigüedad de la póliza de 12 días está dentro de la ventana de 30 días."):
        assert codes(c102, [claim(good, "inference", tenure, review)]) == ([], []), good
    for bad in ("保单期限12天不在30天审核窗口以内。", "La antigüedad de 12 días no está dentro de la ventana de 30 días.",
                "保单期限12天超过30天。"):
        assert codes(c102, [claim(bad, "inference", tenure, review)])[0] == [("wrong_comparison", 0)], bad


def test_inc_release_cause_as_fact_is_a_status_upgrade(inc):
    _, pack = inc
    rel, err = _ev(pack, "DEP-release-2026.07.23.1"), _ev(pack, "INC-2026-0723-TL-01")
    text = "The release release-2026.07.23.1 caused the connection-pool exhaustion."
    assert codes(inc, [claim(text, "fact", rel, err)])[0] == [("status_upgraded", 0)]
    assert codes(inc, [claim(text, "inference", rel, err)])[0] == [("status_upgraded", 0)]
    assert codes(inc, [claim(text, "hypothesis", rel, err)]) == ([], [])
    assert codes(inc, [claim("发布 release-2026.07.23.1 导致了连接池耗尽。", "fact", rel, err)])[0] == [
        ("status_upgraded", 0)]
    assert codes(inc, [claim("El release release-2026.07.23.1 causó el agotamiento del pool.", "fact", rel,
                             err)])[0] == [("status_upgraded", 0)]
    # the deterministic twin on exactly this evidence is a hypothesis: no fact on it but the timing facts
    assert codes(inc, [claim("The release release-2026.07.23.1 completed 8 minutes before the first error.",
                             "fact", rel, err)]) == ([], [])


def test_inc_owner_bound_to_the_wrong_team_is_misbound(inc):
    _, pack = inc
    own = _ev(pack, "OWN-PAYAPI-2025")
    assert codes(inc, [claim("payment-api was owned by team payments-platform", "fact", own)])[0] == [
        ("misbound_entity", 0)]
    assert codes(inc, [claim("payment-api was owned by team payments-core", "fact", own)]) == ([], [])
    assert codes(inc, [claim("The owner team of payment-api is payments-platform.", "fact", own)])[0] == [
        ("misbound_entity", 0)]
    rb = _ev(pack, "RB-PAY-RECOVERY-v4#steps")
    assert codes(inc, [claim("Runbook payment-restore applies.", "fact", rb)])[0] == [("misbound_entity", 0)]
    assert codes(inc, [claim("Runbook payment-recovery applies.", "fact", rb)]) == ([], [])


# ---------------------------------------------------------------------------------- items alone
LEDGER = {"evidence_id": "ev-ledger", "object_id": "LEDGER-Q2", "trust_level": "authoritative",
          "facts": {"revenue_change_pct": 15, "cost_change_pct": 25, "profit_change_pct": -25},
          "text": "Q2 ledger: revenue +15 %, costs +25 %, profit -25 %. No cost breakdown by category exists."}
NOTE = {"evidence_id": "ev-note", "object_id": "NOTE-ANALYST-1", "trust_level": "internal",
        "facts": {"verified": False, "topic": "advertising"},
        "text": "Analyst note: advertising spend may matter for the profit drop."}


def test_retail_advertising_cause_is_rejected_on_the_note_and_on_the_ledger():
    from ctxcli.answer.claims import check_claim, check_summary

    text = "Advertising costs caused the profit loss."
    assert [v["code"] for v in check_claim(text, "fact", [NOTE])] == ["status_upgraded", "status_upgraded"]
    assert [v["code"] for v in check_claim(text, "fact", [LEDGER])] == ["status_upgraded"]
    assert check_claim("Advertising costs may have caused the profit loss.", "hypothesis", [NOTE, LEDGER]) == []
    assert [v["code"] for v in check_claim("Advertising spend matters for the profit drop.", "fact", [NOTE])] == [
        "status_upgraded", "hedge_dropped"]
    # the working-memory summary that hardens "may matter" into "caused"
    assert [v["code"] for v in check_summary("Advertising caused the loss.",
                                             ["advertising may matter for the loss"])] == ["status_upgraded"]
    assert check_summary("Advertising may matter for the loss.", ["advertising may matter for the loss"]) == []
    assert [v["code"] for v in check_summary("Advertising spend matters for the profit drop.",
                                             [NOTE["text"]])] == ["hedge_dropped"]


def test_a_summary_drops_a_hedge_in_any_of_its_sentences_beside_a_warning_or_more_text():
    """A summary is read sentence by sentence for a dropped hedge: neither an undecided comparison
    (a warning) nor the rest of a longer summary hides the one sentence that drops it."""
    from ctxcli.answer.claims import check_summary

    msgs = ["Did the 09:54 release cause the 10:02 error spike?",
            "The pool metrics are possibly incomplete for the 10:02 window; check them first."]
    said = "The engineer asked about the 10:02 error spike. "
    codes = lambda t: [(v["code"], v.get("severity")) for v in check_summary(t, msgs)]   # noqa: E731
    assert codes(said + "The pool metrics are incomplete for the 10:02 window.") == [("hedge_dropped", None)]
    assert codes(said + "The pool metrics are incomplete for the 10:02 window. Errors outpaced retries: 15 % "
                 "versus 25 %.") == [("undecided", "warning"), ("hedge_dropped", None)]
    assert codes(said + "The pool metrics are incomplete for the 10:02 window. The engineer then looked at many "
                 "other dashboards, the queue depth, the worker count and the replica lag of the payment "
                 "service.") == [("hedge_dropped", None)]
    # the hedge kept: only the warning
    assert codes(said + "The pool metrics are possibly incomplete for the 10:02 window. Errors outpaced retries: "
                 "15 % versus 25 %.") == [("undecided", "warning")]


def test_a_hedge_in_the_source_may_not_vanish_in_a_fact():
    from ctxcli.answer.claims import check_claim

    item = {"evidence_id": "ev-x", "facts": {}, "text": "Suspected: card BIN 411111 is on the fraud blocklist."}
    plain = {"evidence_id": "ev-p", "facts": {}, "text": "Card BIN 411111 was used on 2026-07-01."}
    assert [v["code"] for v in check_claim("Card BIN 411111 is on the fraud blocklist.", "fact", [item, plain])] == [
        "hedge_dropped"]
    # a note that also states something plainly: the restated hedged sentence tells
    mixed = {"evidence_id": "ev-m", "facts": {}, "text": "Card BIN 411111 was used on 2026-07-01. " + item["text"]}
    assert [v["code"] for v in check_claim("Card BIN 411111 is on the fraud blocklist.", "fact", [mixed])] == [
        "hedge_dropped"]
    assert check_claim("Card BIN 411111 was used on 2026-07-01.", "fact", [mixed]) == []
    assert [v["code"] for v in check_claim("Card BIN 411111 is on the fraud blocklist.", "fact", [item])] == [
        "hedge_dropped"]
    assert check_claim("Card BIN 411111 is suspected to be on the fraud blocklist.", "fact", [item]) == []
    assert check_claim("Card BIN 411111 is on the fraud blocklist.", "hypothesis", [item]) == []
    assert check_claim("Sospechosa: la BIN 411111 está en la lista.", "fact",
                       [{"evidence_id": "ev-y", "text": "La BIN 411111 posiblemente está en la lista."}]) == []


@pytest.mark.parametrize("text,ok", [
    ("The release at 2026-07-23T09:54:00+08:00 came before the first error at 2026-07-23T10:02:00+08:00.", True),
    ("The release at 2026-07-23T10:05:00+08:00 came before the first error at 2026-07-23T10:02:00+08:00.", False),
    ("The release at 2026-07-23T09:54:00+08:00 did not come after the first error at 2026-07-23T10:02:00+08:00.",
     True),
    ("Config push CFG-0811-07 completed at 2026-08-11T14:00:00+08:00, after the first error at "
     "2026-08-11T14:02:00+08:00.", False),
    ("Config push CFG-0811-07 completed at 2026-08-11T14:00:00+08:00, not after the first error at "
     "2026-08-11T14:02:00+08:00.", True),
    ("Pool usage 50 is no more than the maximum 50.", True),
    ("Pool usage 50 is less than the maximum 50.", False),
    ("Pool usage 50 is not less than the maximum 50.", True),
    ("连接池使用50不超过上限50。", True), ("连接池使用50低于上限50。", False), ("El uso 50 es menor que el máximo 50.", False),
    ("El uso 50 no es menor que el máximo 50.", True), ("Success rate 78.4% ≥ 97%.", False), ("Success rate 99.3% > 97%.", True),
])
def test_comparisons_with_negation_in_three_languages(text, ok):
    from ctxcli.answer.claims import check_comparisons

    assert [v["code"] for v in check_comparisons(text)] == ([] if ok else ["wrong_comparison"])


def test_a_day_against_a_time_with_offset_is_undecided_not_guessed():
    from ctxcli.answer.claims import check_comparisons

    got = check_comparisons("The release on 2026-07-23 was before the error at 2026-07-23T10:02:00+08:00.")
    assert [(v["code"], v["severity"]) for v in got] == [("undecided", "warning")]


def test_validate_answer_json_names_the_violation_per_claim(store, tmp_path, c102):
    ans, pack = c102
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "run"]).exit_code == 0
    amount, review = _ev(pack, "SIG-C102-AMOUNT"), _ev(pack, "RULE-MANUAL-REVIEW")
    f = tmp_path / "a.json"
    f.write_text(json.dumps({**ans, "claims": ans["claims"] + [
        claim("The claim amount 128000 is below the review threshold of 100000.", "fact", amount, review),
        claim("No human review is needed.", "inference", amount, review)]}))
    r = run_cli(["validate-answer", tmp_path / "run" / "pack.json", f, "--json"])
    assert r.exit_code == 1
    out = json.loads(r.stdout)
    per = [c["violations"] for c in out["validation"]["claims"]]
    assert per == [[]] * len(ans["claims"]) + [["wrong_comparison"], ["wrong_comparison"]]
    assert [v["code"] for v in out["validation"]["violations"]] == ["wrong_comparison", "wrong_comparison"]
    assert out["validation"]["violations"][1]["value"] == "manual_review_required"


# ---------------------------------------------------------------------------------- the corpus
def test_the_corpus_is_regenerated_identically_and_meets_the_floors(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from ctxcli.answer import claims_eval

    here = Path(__file__).parent / "data" / "claims"
    rows = [json.loads(line) for line in (here / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sum(r["label"] == "wrong" for r in rows) >= 300 and sum(r["label"] == "right" for r in rows) >= 300
    assert {r["lang"] for r in rows} == {"en", "zh", "es"} and {r["split"] for r in rows} == {"tuning", "heldout"}
    # the committed corpus is what the committed generator writes
    before = (here / "corpus.jsonl").read_bytes()
    subprocess.run([sys.executable, str(here / "generate.py")], check=True)
    assert (here / "corpus.jsonl").read_bytes() == before
    assert claims_eval.main([str(here / "corpus.jsonl")]) == 0
    # the floors fail the command: a ceiling of -1 % on right claims cannot be met
    assert claims_eval.main([str(here / "corpus.jsonl"), "--max-right", "-0.01"]) == 1


def test_the_hand_written_corpora_score_as_docs_model_md_says(monkeypatch):
    """tests/data/claims/written7 (measured once), written6 and written5 (each measured once, then tuned
    on), written4, written3,
    written2 and written score exactly as docs/model.md's table reports (their blind measurements:
    benchmarks/results/claims-history.md), and CI's floors for written5 and written6 (.ci/run) hold.
    Each corpus is checked once (the command's floors then judge the same counts)."""
    from ctxcli.answer import claims_eval

    data = Path(__file__).parent / "data" / "claims"
    seen: dict[Path, dict] = {}
    real = claims_eval.evaluate
    monkeypatch.setattr(claims_eval, "evaluate", lambda p: seen[p] if p in seen else seen.setdefault(p, real(p)))

    def total(name: str, kind: str) -> list[int]:
        res = claims_eval.evaluate(data / name / "corpus.jsonl")
        return [sum(x) for x in zip(*[d[kind] for d in res.values()])]

    held = claims_eval.evaluate(data / "written5" / "corpus.jsonl")
    assert set(held) == {"heldout"}
    assert held["heldout"]["all wrong"] == [226, 250] and held["heldout"]["right"] == [1, 213]
    assert total("written7", "all wrong") == [365, 516] and total("written7", "right") == [7, 405]
    assert total("written6", "all wrong") == [408, 484] and total("written6", "right") == [0, 362]
    assert total("written4", "all wrong") == [214, 222] and total("written4", "right") == [1, 199]
    assert total("written3", "all wrong") == [222, 232] and total("written3", "right") == [2, 205]
    assert total("written2", "all wrong") == [216, 223] and total("written2", "right") == [0, 201]
    assert total("written", "all wrong") == [378, 398] and total("written", "right") == [0, 355]
    repo = Path(__file__).resolve().parents[1]
    # each set's one blind measurement: history, kept in benchmarks/results/claims-history.md
    hist = (repo / "benchmarks" / "results" / "claims-history.md").read_text(encoding="utf-8")
    assert "**213/250 (85.2 %)**" in hist and "**11/213 (5.2 %)**" in hist    # written5, measured once
    assert "**346/484 (71.5 %)**" in hist and "**9/362 (2.5 %)**" in hist     # written6, measured once
    assert "**365/516 (70.7 %)**" in hist and "**7/405 (1.7 %)**" in hist     # written7, measured once
    # today's figures: one row per corpus in docs/model.md's table
    doc = (repo / "docs" / "model.md").read_text(encoding="utf-8")
    rows = {ln.split(" | ")[0].strip("| `/"): ln for ln in doc.splitlines() if ln.startswith("| `written")}
    for name, wrong, right in (("written7", "**365/516 (70.7 %)**", "**7/405 (1.7 %)**"),
                               ("written6", "408/484 (84.3 %)", "0/362 (0.0 %)"),
                               ("written5", "226/250 (90.4 %)", "1/213 (0.5 %)"),
                               ("written4", "214/222 (96.4 %)", "1/199 (0.5 %)"),
                               ("written3", "222/232 (95.7 %)", "2/205 (1.0 %)"),
                               ("written2", "216/223 (96.9 %)", "0/201 (0.0 %)"),
                               ("written", "378/398 (95.0 %)", "0/355 (0.0 %)")):
        assert f" | {wrong} | {right} | " in rows[name], name
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    assert "claims_eval tests/data/claims/written5/corpus.jsonl --min-wrong 0.90 --max-right 0.01" in ci
    assert "claims_eval tests/data/claims/written6/corpus.jsonl --min-wrong 0.84 --max-right 0.01" in ci
    assert "claims_eval tests/data/claims/written7/corpus.jsonl --min-wrong 0.70 --max-right 0.02" in ci
    w5, w6 = str(data / "written5" / "corpus.jsonl"), str(data / "written6" / "corpus.jsonl")
    assert claims_eval.main([w5, "--min-wrong", "0.90", "--max-right", "0.01"]) == 0
    assert claims_eval.main([w6, "--min-wrong", "0.84", "--max-right", "0.01"]) == 0
    w7 = str(data / "written7" / "corpus.jsonl")
    assert claims_eval.main([w7, "--min-wrong", "0.70", "--max-right", "0.02"]) == 0
    assert claims_eval.main([w7, "--min-wrong", "0.71", "--max-right", "0.02"]) == 1      # above 70.7 %
    assert claims_eval.main([w7, "--min-wrong", "0.70", "--max-right", "0.017"]) == 1     # below 1.73 %
    assert claims_eval.main([w6, "--min-wrong", "0.85", "--max-right", "0.01"]) == 1      # above 84.3 %
    assert claims_eval.main([w5, "--min-wrong", "0.91", "--max-right", "0.01"]) == 1      # above 90.4 %
    assert claims_eval.main([w5, "--min-wrong", "0.85", "--max-right", "0.004"]) == 1      # below 0.5 %

# ------------------------------------------------------------------- tool results citable (item 6)
AGENT = Path(__file__).resolve().parents[1] / "examples" / "agent" / "INC-2026-0723"


def _with_tool(tmp_path, registry: str | None):
    """A pack of INC-2026-0723 with the pool-metrics tool result, its deterministic answer, and
    the result's id; ``registry``: manifests/tools.yaml of the project (None: no registry)."""
    from ctxcli import api
    from ctxcli.answer.schema import actions

    if registry is not None:
        (Path(os.environ["CTX_ROOT"]) / "manifests" / "tools.yaml").write_text(registry, encoding="utf-8")
    out = tmp_path / "run"
    r = run_cli(["investigate", "INC-2026-0723", "--tool-result", AGENT / "01-pool-metrics.yaml", "--out", out])
    assert r.exit_code == 0, r.output
    pack = json.loads((out / "pack.json").read_text())
    ans = _restated(out)
    (tr,) = pack["tool_results"]
    vocab = actions(api.read_playbook("payment-incident-review")[0])
    return pack, ans, tr, vocab


def _restated(out):
    """The run's deterministic answer as a model answer (its verdict and action)."""
    a = json.loads((out / "answer.json").read_text())
    return {"verdict": a["verdict"], "recommended_action": a["recommended_action"]["action"], "summary": "",
            "claims": []}


def _check(pack, ans, vocab, *claims):
    from ctxcli.answer.validate import validate

    v = validate({**ans, "claims": list(claims)}, pack, vocab)
    return [(x["code"], x.get("claim")) for x in v["violations"]]


def test_a_claim_may_cite_an_authoritative_tool_result_for_the_values_of_its_facts(project_copy, tmp_path):
    pack, ans, tr, vocab = _with_tool(tmp_path, "tools:\n  - {name: metrics.query, authoritative: true}\n")
    rid = tr["result_id"]
    assert tr["trust_level"] == "authoritative" and rid.startswith("tr-")
    said = "212 requests were waiting for a connection, and the pool maximum is 50."
    assert _check(pack, ans, vocab, claim(said, "fact", rid)) == []
    assert _check(pack, ans, vocab, claim(f"The pool was saturated (see {rid}) with 212 requests waiting.",
                                          "inference")) == []        # an id written in the text counts
    # a value its facts do not hold, and a tool result the pack does not have
    assert _check(pack, ans, vocab, claim(said.replace("212", "213"), "fact", rid)) == [("unsupported_value", 0)]
    assert _check(pack, ans, vocab, claim(said, "fact", "tr-0123456789ab"))[0] == ("cites_unknown", 0)
    # its arguments are not its facts: the queried metric's window is not a value it vouches for
    assert ("unsupported_value", 0) in _check(pack, ans, vocab, claim("The window started at 10:00:00+08:00 "
                                                                       "on 2026-07-23.", "fact", rid))


def test_an_untrusted_tool_result_alone_does_not_make_a_fact(project_copy, tmp_path):
    pack, ans, tr, vocab = _with_tool(tmp_path, None)
    rid = tr["result_id"]
    assert tr["trust_level"] == "untrusted"
    said = "212 requests were waiting for a connection, and the pool maximum is 50."
    assert _check(pack, ans, vocab, claim(said, "fact", rid)) == [("fact_without_trusted_source", 0)]
    assert _check(pack, ans, vocab, claim(said, "inference", rid)) == []


def test_a_tool_result_the_gates_excluded_is_cited_as_omitted(project_copy, tmp_path):
    from ctxcli import api
    from ctxcli.answer.schema import actions

    out = tmp_path / "run"
    r = run_cli(["investigate", "INC-2026-0723", "--tool-result", AGENT / "02-ticket-search.yaml", "--out", out])
    assert r.exit_code == 0, r.output
    pack = json.loads((out / "pack.json").read_text())
    (om,) = pack["tool_omissions"]
    assert om["gate"] == "injection" and pack.get("tool_results") == []
    ans = _restated(out)
    vocab = actions(api.read_playbook("payment-incident-review")[0])
    assert _check(pack, ans, vocab, claim("Ticket PAY-4097 reports payment-api connection errors.", "inference",
                                          om["ref"])) == [("cites_omitted", 0)]


# ---------------------------------------------------------------------------------- issue 46 item 6
def test_a_claim_naming_an_omitted_object_in_its_text_cites_it(c102):
    """"Per RULE-MCS-2025.4 the old rules apply": the superseded rule the validity gate left out
    is named, not cited; it is cites_omitted all the same — unless the claim reports the exclusion
    or the evidence it cites names the object itself."""
    _, pack = c102
    current, snap = _ev(pack, "RULE-MCS-2026.1"), _ev(pack, "CASE-C-102")
    bad = "Per RULE-MCS-2025.4 the old rules apply."
    assert codes(c102, [claim(bad, "inference", current)])[0] == [("cites_omitted", 0)]
    assert ("cites_omitted", 0) in codes(c102, [claim(bad, "fact", snap)])[0]
    for good in ("RULE-MCS-2025.4 expired and was excluded; RULE-MCS-2026.1 applies.",
                 "RULE-MCS-2025.4 ya no está vigente; se aplica RULE-MCS-2026.1。",
                 "RULE-MCS-2025.4 已过期，适用 RULE-MCS-2026.1。"):
        assert codes(c102, [claim(good, "fact", current)]) == ([], []), good
    # the summary is read the same way
    from ctxcli.answer.validate import validate

    ans, _ = c102
    v = validate({**ans, "summary": "The review follows RULE-MCS-2025.4."}, pack, [ans["recommended_action"]])
    assert [(x["code"], x.get("id")) for x in v["violations"] if x.get("field") == "summary"] == [
        ("cites_omitted", "RULE-MCS-2025.4")]


def test_an_omitted_object_named_by_the_evidence_a_claim_cites_is_not_cites_omitted():
    from ctxcli.answer.validate import validate

    rule = {"evidence_id": "ev-0000000001", "object_id": "RULE-NEW", "trust_level": "authoritative",
            "text": "RULE-NEW supersedes RULE-OLD-7 from 2026-01-01.", "facts": {}}
    pack = {"evidence": [rule], "omissions": [{"ref": "RULE-OLD-7", "object_id": "RULE-OLD-7", "withheld": False,
                                              "gate": "validity", "reason": "expired"}],
            "request": {"case_id": "X-1", "tenant_id": "t"}, "answer": {}}
    ans = {"verdict": "partial", "recommended_action": "a", "summary": "",
           "claims": [{"text": "RULE-NEW replaces RULE-OLD-7 from 2026-01-01.", "status": "fact",
                       "evidence": ["ev-0000000001"]}]}
    assert validate(ans, pack, ["a"])["violations"] == []
    ans["claims"][0]["evidence"] = []
    ans["claims"][0]["status"] = "unknown"
    assert "cites_omitted" in [x["code"] for x in validate(ans, pack, ["a"])["violations"]]


@pytest.mark.parametrize("words, iso", [
    ("the first of March 2026", "2026-03-01"), ("March 1st, 2026", "2026-03-01"), ("1 March 2026", "2026-03-01"),
    ("March the twenty-first, 2026", "2026-03-21"), ("Sept. 3, 2026", "2026-09-03"),
    ("1 de marzo de 2026", "2026-03-01"), ("2026年3月1日", "2026-03-01"), ("二〇二六年三月一日", "2026-03-01"),
    ("二〇二六年十二月三十一日", "2026-12-31"), ("2026年10月十日", "2026-10-10"), ("March 2026", "2026-03"),
    ("In May 2026", "In 2026-05"), ("it may 2026", "it may 2026"), ("the 30th of February 2026", "the 30th of 2026-02"),
    ("le 1er août 2026", "le 2026-08-01"), ("le 23 juillet 2026", "le 2026-07-23"), ("am 1. August 2026", "am 2026-08-01"),
    ("am 3. März 2026", "am 2026-03-03"), ("em 1 de agosto de 2026", "em 2026-08-01"), ("à 9 h 54", "à 09:54"),
    ("à 10h02", "à 10:02"), ("24 h 00", "24 h 00"), ("5h", "5h"),
])
def test_date_words_are_read_as_iso_dates(words, iso):
    from ctxcli.answer.numbers import normalise

    assert normalise(words) == iso


def test_a_date_in_words_is_checked_like_digits(c102):
    _, pack = c102
    current = _ev(pack, "RULE-MCS-2026.1")          # valid from 2026-01-01
    for good in ("RULE-MCS-2026.1 took effect on the first of January 2026.",
                 "RULE-MCS-2026.1 于二〇二六年一月一日生效。", "RULE-MCS-2026.1 rige desde el 1 de enero de 2026."):
        assert codes(c102, [claim(good, "fact", current)]) == ([], []), good
    for bad in ("RULE-MCS-2026.1 took effect on the second of January 2026.", "RULE-MCS-2026.1 于2026年1月2日生效。"):
        assert codes(c102, [claim(bad, "fact", current)])[0] == [("unsupported_value", 0)], bad


# The ten languages of the detector: each states the C-102 comparisons right and wrong, with a
# negation (postfix in Japanese and Korean), causal language stated as fact, and a dropped hedge.
TEN = {
    "de": ("Der Schadenbetrag 128000 liegt über der Schwelle von 100000.",
           "Der Schadenbetrag 128000 liegt unter der Schwelle von 100000.",
           "Die Laufzeit von 12 Tagen liegt innerhalb des Fensters von 30 Tagen.",
           "Die Laufzeit von 12 Tagen liegt nicht innerhalb des Fensters von 30 Tagen.",
           "Die Werbekosten verursachten den Gewinnrückgang.", "Die Werbekosten verursachten nicht den Gewinnrückgang.",
           "Die Werbekosten erklären vielleicht den Gewinnrückgang im August.",
           "Die Werbekosten erklären den Gewinnrückgang im August."),
    "fr": ("Le montant 128000 est supérieur au seuil de 100000.", "Le montant 128000 est inférieur au seuil de 100000.",
           "La durée de 12 jours est dans la limite de 30 jours.",
           "La durée de 12 jours n'est pas dans la limite de 30 jours.",
           "Les coûts publicitaires ont causé la baisse du bénéfice.",
           "Les coûts publicitaires n'ont pas causé la baisse du bénéfice.",
           "Les coûts publicitaires expliquent peut-être la baisse du bénéfice en août.",
           "Les coûts publicitaires expliquent la baisse du bénéfice en août."),
    "it": ("L'importo 128000 è superiore alla soglia di 100000.", "L'importo 128000 è inferiore alla soglia di 100000.",
           "La durata di 12 giorni è entro la finestra di 30 giorni.",
           "La durata di 12 giorni non è entro la finestra di 30 giorni.",
           "I costi pubblicitari hanno causato il calo del profitto.",
           "I costi pubblicitari non hanno causato il calo del profitto.",
           "I costi pubblicitari spiegano forse il calo del profitto di agosto.",
           "I costi pubblicitari spiegano il calo del profitto di agosto."),
    "pt": ("O valor 128000 é superior ao limite de 100000.", "O valor 128000 é inferior ao limite de 100000.",
           "O prazo de 12 dias está dentro da janela de 30 dias.",
           "O prazo de 12 dias não está dentro da janela de 30 dias.",
           "Os custos de publicidade causaram a queda do lucro.",
           "Os custos de publicidade não causaram a queda do lucro.",
           "Os custos de publicidade talvez expliquem a queda do lucro de agosto.",
           "Os custos de publicidade explicam a queda do lucro de agosto."),
    "ru": ("Сумма 128000 больше порога 100000.", "Сумма 128000 меньше порога 100000.",
           "Срок 12 дней в пределах окна 30 дней.", "Срок 12 дней не в пределах окна 30 дней.",
           "Рекламные расходы вызвали падение прибыли.", "Рекламные расходы не вызвали падение прибыли.",
           "Рекламные расходы возможно объясняют падение прибыли августа.",
           "Рекламные расходы объясняют падение прибыли августа."),
    "ja": ("請求額128000は閾値100000を超えています。", "請求額128000は閾値100000未満です。",
           "保険期間12日は30日以内です。", "保険期間12日は30日以内ではありません。",
           "広告費が利益減少の原因です。", "広告費は利益減少の原因ではない。",
           "広告費が8月の利益減少に影響したかもしれない。", "広告費が8月の利益減少に影響した。"),
    "ko": ("청구 금액 128000은 기준 100000을 초과합니다.", "청구 금액 128000은 기준 100000 미만입니다.",
           "보험 기간 12일은 30일 이내입니다.", "보험 기간 12일은 30일 이내가 아닙니다.",
           "광고비가 이익 감소의 원인입니다.", "광고비는 이익 감소의 원인이 아니다.",
           "광고비가 8월 이익 감소에 영향을 주었을 가능성이 있습니다.", "광고비가 8월 이익 감소에 영향을 주었습니다."),
    "vi": ("Số tiền 128000 cao hơn ngưỡng 100000.", "Số tiền 128000 thấp hơn ngưỡng 100000.",
           "Thời hạn 12 ngày nằm trong vòng 30 ngày.", "Thời hạn 12 ngày không nằm trong vòng 30 ngày.",
           "Chi phí quảng cáo đã gây ra sự sụt giảm lợi nhuận.",
           "Chi phí quảng cáo không gây ra sự sụt giảm lợi nhuận.",
           "Chi phí quảng cáo có thể giải thích sự sụt giảm lợi nhuận tháng 8.",
           "Chi phí quảng cáo giải thích sự sụt giảm lợi nhuận tháng 8."),
}


@pytest.mark.parametrize("lang", sorted(TEN))
def test_comparisons_status_and_hedges_in_each_of_the_ten_languages(lang):
    from ctxcli.answer import claim_words
    from ctxcli.answer.claims import check_claim, check_comparisons, is_causal

    above, below, within, not_within, causal, not_causal, hedged, unhedged = TEN[lang]
    assert lang in claim_words.LANGUAGES
    assert [v["code"] for v in check_comparisons(above)] == []
    assert [v["code"] for v in check_comparisons(below)] == ["wrong_comparison"]
    assert [v["code"] for v in check_comparisons(within)] == []
    assert [v["code"] for v in check_comparisons(not_within)] == ["wrong_comparison"]
    assert is_causal(causal) and not is_causal(not_causal)
    assert [v["code"] for v in check_claim(causal, "fact", [])] == ["status_upgraded"]
    assert check_claim(causal, "hypothesis", []) == [] and check_claim(not_causal, "fact", []) == []
    note = {"evidence_id": "ev-note", "facts": {}, "text": hedged}
    assert [v["code"] for v in check_claim(unhedged, "fact", [note])] == ["hedge_dropped"]
    # in a note that also states something plainly (not wholly hedged): only the restated sentence can tell
    mixed = {"evidence_id": "ev-mixed", "facts": {}, "text": "Ledger closed. " + hedged}
    assert [v["code"] for v in check_claim(unhedged, "fact", [mixed])] == ["hedge_dropped"]
    assert check_claim(hedged, "fact", [note]) == [] and check_claim(unhedged, "hypothesis", [note]) == []


def test_a_comparison_word_inside_a_longer_word_is_not_a_comparison():
    from ctxcli.answer.claims import check_comparisons

    # "unter" in "Unternehmen", "über" in "Überweisung": 128000 and 100000 are not compared
    assert check_comparisons("Das Unternehmen 128000 meldete die Überweisung 100000.") == []
    assert check_comparisons("Beleg 100 gehört zur Überweisung 128000.") == []
    assert check_comparisons("Die Summe 128000 liegt unter 100000.")[0]["code"] == "wrong_comparison"


def test_every_comparison_word_has_one_operator():
    from ctxcli.answer import claim_words

    ops: dict[str, set[str]] = {}
    for lang in claim_words.LANGUAGES:
        for w, op in claim_words.COMPARISONS[lang]:
            ops.setdefault(w, set()).add(op)
    assert {w: o for w, o in ops.items() if len(o) > 1} == {}


def test_other_languages_words_do_not_change_english_claims():
    """A word of one language that is also English is left out of the others' lists: German
    "also" would end the clause, French "cause" would make a question causal."""
    from ctxcli.answer.claims import check_comparisons, is_causal

    assert [v["code"] for v in check_comparisons("The amount 128000 is also below the threshold 100000.")] == [
        "wrong_comparison"]
    assert not is_causal("Did the 09:54 release cause the 10:02 error spike?")


@pytest.mark.parametrize("text, holds", [
    ("The release completed at 09:54, before the first error at 10:02.", True),
    ("The release completed at 09:54, after the first error at 10:02.", False),
    ("The push at 14:00:59 came before the error at 14:01:00.", True),
    ("The push at 14:01:00 came before the error at 14:01:00.", False),
    ("Completed at 09:54, before the error at 10:02:00 (+08:00).", True),       # the zone said once
    ("Completed at 09:54 UTC+8, after the error at 10:02.", False),
    ("The error at 10:02 (+08:00) came after the release at 09:54.", True),       # "+08:00" is no time
    ("Completed at 09:54:00+08:00, before the error at 10:02:00+08:00.", True),  # the same offset
    ("Completed at 09:54:00+08:00, before the error at 10:02.", None),           # another offset
    ("At 11:50, before the check at 23:50.", True),                              # 12 hours apart: decided
    ("At 11:50, before the check at 23:51.", None),                              # more: across midnight?
    ("At 23:50, before the restart at 00:10.", None),
])
def test_times_of_day_are_compared_within_twelve_hours_and_one_offset(text, holds):
    from ctxcli.answer.claims import check_comparisons, comparisons

    (c,) = comparisons(text)
    assert c[3] is holds, c
    codes = [v["code"] for v in check_comparisons(text)]
    assert codes == {True: [], False: ["wrong_comparison"], None: ["undecided"]}[holds]


# ------------------------------------------------------------------------------ the hand-written corpus's lessons
_AMOUNT = {"evidence_id": "ev-a", "trust_level": "authoritative", "facts": {"claim_amount": 128000, "currency": "CNY"},
           "text": "Risk signal CLAIM_AMOUNT: claim amount 128000 CNY."}
_TENURE = {"evidence_id": "ev-t", "trust_level": "authoritative", "facts": {"policy_tenure_days": 12},
           "text": "Policy tenure at the loss date: 12 days."}
_RELEASE = {"evidence_id": "ev-r", "trust_level": "authoritative",
            "facts": {"change_id": "release-2026.07.23.1", "completed_at": "2026-07-23T09:54:00+08:00"},
            "text": "Release release-2026.07.23.1 completed at 2026-07-23 09:54:00+08:00."}
_FIRST = {"evidence_id": "ev-f", "trust_level": "operational",
          "facts": {"error_code": "PAY-4097", "first_error_at": "2026-07-23T10:02:00+08:00"},
          "text": "First PAY-4097 error at 10:02:00 (+08:00)."}
_RULESET = {"evidence_id": "ev-s", "trust_level": "authoritative",
            "facts": {"rule_set": "motor-claim-standard", "version": "2026.1"},
            "text": "Rule set motor-claim-standard, version 2026.1."}
_RULE = {"evidence_id": "ev-rule", "trust_level": "authoritative",
         "facts": {"review_amount_threshold": 100000, "review_tenure_days": 30},
         "text": "Claims at or above 100000 CNY on a policy within 30 days go to a human reviewer."}
_DIFF = {"evidence_id": "ev-diff", "trust_level": "authoritative",
         "facts": {"change_id": "CFG-0811-07", "keepalive_timeout_after_s": 5, "keepalive_timeout_before_s": 60},
         "text": "CFG-0811-07 lowered the upstream keep-alive timeout from 60 seconds to 5 seconds."}
_PUSH = {"evidence_id": "ev-p", "trust_level": "authoritative", "facts": {"completed_at": "2026-08-11T14:00:00+08:00"},
         "text": "Config push CFG-0811-07 completed at 14:00; the first GW-502 error followed at 14:02."}


@pytest.mark.parametrize("text, items, codes", [
    # a currency the evidence does not state (beside a number); a dollar that is no amount
    ("The claim amount is 128,000 USD.", [_AMOUNT], ["unsupported_value"]),
    ("索赔金额为12.8万美元。", [_AMOUNT], ["unsupported_value"]),
    ("The claim amount is 128,000 CNY.", [_AMOUNT], []),
    ("The claim amount is 128000 (CNY), whatever the dollar does.", [_AMOUNT], []),
    # values as people write them
    ("The claim amount is 128.000 CNY.", [_AMOUNT], []),
    ("The claim amount is 128.001 CNY.", [_AMOUNT], ["unsupported_value"]),
    ("The first error came at 10:02 on 23/07/2026.", [_FIRST], []),
    ("The first error came at 10:02 on 07/23/2026.", [_FIRST], []),
    ("The first error came at 10:02 on 06/07/2026.", [_FIRST], ["unsupported_value"]),   # which day is it?
    ("The release completed at 9:54 am.", [_RELEASE], []),
    ("The release completed at 9:54 pm.", [_RELEASE], ["unsupported_value"]),
    ("The PAY-4097s began at 10:02.", [_FIRST], []),
    # a number bound to a field named without its unit
    ("The policy tenure is 12 days.", [_TENURE], []),
    ("The policy tenure is 20 days.", [_TENURE], ["unsupported_value"]),
    # a value written in the words the evidence uses for another value
    ("The first error occurred at 09:54.", [_RELEASE, _FIRST], ["misbound_value"]),
    ("The release completed at 09:54, before the first error at 10:02.", [_RELEASE, _FIRST], []),
    ("PAY-4097 first appeared at 10:02:00 +08:00.", [_FIRST], []),
    # ... in other languages: the words for what a value is are read as the English ones
    ("Der erste Fehler trat um 09:54 auf.", [_RELEASE, _FIRST], ["misbound_value"]),
    ("Der erste Fehler trat um 10:02 auf.", [_RELEASE, _FIRST], []),
    ("首次报错时间为09:54。", [_RELEASE, _FIRST], ["misbound_value"]),
    ("首次报错时间为10:02。", [_RELEASE, _FIRST], []),
    ("发布完成时间为10:02。", [_RELEASE, _FIRST], ["misbound_value"]),
    ("El primer error se registró a las 09:54.", [_RELEASE, _FIRST], ["misbound_value"]),
    ("El primer error se registró a las 10:02.", [_RELEASE, _FIRST], []),
    # a Chinese date with the time written straight after it
    ("首个错误出现在2026年7月23日10:02。", [_FIRST], []),
    ("首个错误出现在2026年7月23日10:03。", [_FIRST], ["unsupported_value"]),
    # dates and times of other languages; a currency's name follows its amount
    ("Le premier échec est arrivé le 23 juillet 2026 à 10 h 02.", [_FIRST], []),
    ("Le premier échec est arrivé le 23 juillet 2026 à 10 h 03.", [_FIRST], ["unsupported_value"]),
    ("La release s'est terminée à 9 h 54, avant la première erreur à 10 h 02.", [_RELEASE, _FIRST], []),
    ("Der erste Fehler kam am 23. Juli 2026.", [_FIRST], []),
    ("Der erste Fehler kam am 22. Juli 2026.", [_FIRST], ["unsupported_value"]),
    ("Thời hạn hợp đồng 12 ngày.", [_TENURE], []),
    ("Thời hạn hợp đồng 12 ngày, số tiền 128.000 CNY.", [_TENURE, _AMOUNT], []),
    ("Thời hạn là 12 ngày, số tiền 128.000 đồng.", [_TENURE, _AMOUNT], ["unsupported_value"]),
    # binding: a comparison ends a field's reach; an id is the value of a field that holds ids
    ("At 128,000 CNY, the claim amount is at or above the 100,000 CNY review threshold.", [_AMOUNT, _RULE], []),
    ("At 128,000 CNY, the claim amount is 100,000 CNY.", [_AMOUNT, _RULE], ["misbound_value"]),
    ("Error code PAY-4097 first appeared at 2026-07-23T10:02:00+08:00.", [_FIRST | {"facts": {
        "error_code": "PAY-4097", "first_error_at": "2026-07-23T10:02:00+08:00"}}], []),
    ("The keep-alive timeout after CFG-0811-07 was 60 seconds.", [_DIFF], ["misbound_value"]),
    ("The keep-alive timeout after CFG-0811-07 was 5 seconds.", [_DIFF], []),
    ("After the change the keep-alive timeout was 60 seconds.", [_DIFF], ["misbound_value"]),
    ("After the change the keep-alive timeout was 5 seconds.", [_DIFF], []),
    ("The keep-alive timeout before and after was 60 seconds.", [_DIFF], []),      # which one: not guessed
    # ... and in other word orders, once other languages' words read as English
    ("El importe reclamado es de 100.000 CNY.", [_AMOUNT, _RULE], ["misbound_value"]),
    ("El importe reclamado es de 128.000 CNY.", [_AMOUNT, _RULE], []),
    ("La antigüedad de la póliza es de 30 días.", [_TENURE, _RULE], ["misbound_value"]),
    ("La antigüedad de la póliza es de 12 días.", [_TENURE, _RULE], []),
    ("9.8万元的索赔金额未达到10万元的审核标准。", [_AMOUNT | {"facts": {"claim_amount": 98000}, "text": "98000 CNY."},
                                                  _RULE], []),
    # comparisons of like with like
    ("The push completed at 14:00, after the first 502 error at 14:02.", [_PUSH], ["wrong_comparison"]),
    ("The push completed at 14:00, before the first 502 error at 14:02.", [_PUSH], []),
    ("Pool usage hit 50/50 at 10:02.", [_FIRST | {"facts": {"pool_active": 50, "pool_max": 50}}], []),
    # a name like the one the evidence holds, however it is bound
    ("Rule set motor-claim-express (2026.1) governs the claim.", [_RULESET], ["misbound_entity"]),
    ("Rule set motor-claim-standard (2026.1) governs the claim.", [_RULESET], []),
    ("A rear-end collision falls under rule set motor-claim-standard.", [_RULESET], []),
])
def test_values_units_and_names_are_checked_as_people_write_them(text, items, codes):
    from ctxcli.answer.validate import check_cited

    got = [v["code"] for v in check_cited(text, "fact", items) if v.get("severity") != "warning"]
    assert got == codes, check_cited(text, "fact", items)


@pytest.mark.parametrize("text, holds", [
    ("Claims of 100000 CNY or more on policies within 30 days go to a reviewer.", None),   # money vs days
    ("Claims at or above 100,000 CNY, policies within 30 days.", None),                    # carried: the same
    ("The tenure of 12 days is within 30 days.", True),
    ("The tenure of 40 days is within 30 days.", False),
    ("The 10:02 error predates the 09:54 release.", False),
    ("El importe, 128000 CNY, está por debajo del umbral de 100000 CNY.", False),
    ("A apólice tem 12 dias, mais do que o prazo de 30 dias.", False),
    ("請求額128000元は審査基準の100000元を下回っています。", False),
    ("The policy tenure of 12 days is longer than the 30-day review window.", False),
    ("The claimed 128000 CNY falls short of the 100000 CNY review line.", False),
    ("Revenue growth of 15 % outpaced the 25 % rise in costs.", False),
    ("Das neue Timeout von 5 Sekunden ist länger als das alte von 60 Sekunden.", False),
    ("Die Kosten (+25 %) stiegen weniger stark als der Umsatz (+15 %).", False),
    ("Le montant de 128 000 CNY reste en deçà du seuil de 100 000 CNY.", False),
    ("Le montant de 98 000 CNY va au-delà du seuil de 100 000 CNY.", False),
    ("L'alerte de 14:07 est antérieure aux premiers échecs de paiement à 14:05.", False),
    ("A CFG-0811-05 terminou às 13:55, depois da CFG-0811-07 às 14:00.", False),
    ("Số tiền 98.000 CNY cao hơn ngưỡng 100.000 CNY.", False),
    ("Số tiền 128.000 CNY cao hơn ngưỡng 100.000 CNY.", True),
])
def test_comparison_words_and_units(text, holds):
    from ctxcli.answer.claims import comparisons

    got = comparisons(text)
    assert (got[0][3] if got else None) is holds, got


@pytest.mark.parametrize("text, causal", [
    ("It was the release that broke payments at 10:02.", True),
    ("El agotamiento del pool se produjo debido al release.", True),
    ("Customers could not complete payment at 14:05.", False),
    ("Los 502 se debieron a la reducción del keep-alive.", True),
    ("Les erreurs 502 sont dues à la baisse du keep-alive.", True),
    ("La baisse est imputable à la configuration.", True),
    ("Las cifras se deben revisar.", False),
])
def test_causal_words_and_could_not(text, causal):
    from ctxcli.answer.claims import _HEDGE, is_causal

    assert is_causal(text) is causal
    assert not _HEDGE.search("Customers could not complete payment.")
    assert _HEDGE.search("The push could have caused it.")


def test_a_currency_and_a_field_named_without_its_unit():
    from ctxcli.answer.validate import check_cited

    usd = {"evidence_id": "ev-u", "trust_level": "authoritative", "facts": {"claim_amount": 12000},
           "text": "Claim amount 12000 USD."}
    assert check_cited("索赔金额为12000美元。", "fact", [usd]) == []          # 美元 is USD, not CNY too
    two = {"evidence_id": "ev-2", "trust_level": "authoritative",
           "facts": {"policy_tenure_days": 12, "review_window_days": 20},
           "text": "Tenure 12, window 20."}
    (v,) = check_cited("The policy tenure is 20 days.", "fact", [two])
    assert (v["code"], v["value"], v["field"]) == ("misbound_value", "20", "policy tenure")
    assert check_cited("The policy tenure is 12 days.", "fact", [two]) == []


_HEDGED = {"evidence_id": "ev-gw", "facts": {},
           "text": "The lowered keep-alive timeout might explain the GW-502 spike on payment-gateway."}
_PLAIN = {"evidence_id": "ev-diff", "trust_level": "authoritative", "facts": {"timeout_after_s": 5},
          "text": "CFG-0811-07 lowered the keep-alive timeout to 5 seconds."}


@pytest.mark.parametrize("text, status, items, codes", [
    # in other words than its only (hedged) source, without a hedge: the hedge is dropped
    ("La reducción del timeout de keep-alive explica el pico de GW-502.", "fact", [_HEDGED], ["hedge_dropped"]),
    ("保活超时的下调解释了GW-502激增。", "fact", [_HEDGED], ["hedge_dropped"]),
    ("La reducción del timeout posiblemente explica el pico de GW-502.", "fact", [_HEDGED], []),
    ("The lower timeout explains the spike.", "hypothesis", [_HEDGED], []),
    # citing a note that only suspects is resting on it: another, plain item does not lift its hedge
    ("The keep-alive timeout is 5 seconds; it explains the spike.", "fact", [_HEDGED, _PLAIN], ["hedge_dropped"]),
    ("The keep-alive timeout is 5 seconds; it might explain the spike.", "fact", [_HEDGED, _PLAIN], []),
    ("The keep-alive timeout is 5 seconds.", "fact", [_PLAIN], []),
    # an item that also states something plainly is not a hedged note
    ("The keep-alive timeout is 5 seconds.", "fact", [{**_PLAIN, "text": _PLAIN["text"] + " " + _HEDGED["text"]}], []),
    # an unverified note is check_status's: one violation, not two
    ("Promotions explain it.", "fact", [{"evidence_id": "ev-n", "facts": {"verified": False},
                                         "text": "Ads may explain the drop."}], ["status_upgraded"]),
])
def test_a_fact_resting_only_on_hedged_items_drops_their_hedge(text, status, items, codes):
    from ctxcli.answer.claims import check_claim

    assert [v["code"] for v in check_claim(text, status, items)] == codes


def test_the_deterministic_hypothesis_binds_a_cause_not_a_restatement_of_its_times():
    """The deterministic answer holds "the pushes came before the errors" as a hypothesis (a
    candidate cause); a fact restating the observed times on the same evidence is not that claim."""
    from ctxcli.answer.claims import check_claim

    push = {"evidence_id": "ev-p", "trust_level": "authoritative", "facts": {"completed_at": "14:00"},
            "text": "Config push CFG-0811-07 completed at 14:00."}
    err = {"evidence_id": "ev-e", "trust_level": "operational", "facts": {"first_error_at": "14:02"},
           "text": "GW-502 errors from 14:02."}
    twins = [{"claim_id": "change_before_errors", "evidence": ["ev-p", "ev-e"], "status": "hypothesis"}]
    assert check_claim("CFG-0811-07于14:00完成，GW-502错误自14:02出现。", "fact", [push, err], twins=twins) == []
    assert [v["code"] for v in check_claim("CFG-0811-07 caused the GW-502 errors.", "fact", [push, err],
                                           twins=twins)] == ["status_upgraded"]
    hedged = dict(err, text="GW-502 errors from 14:02, possibly after the push.")
    assert [v["code"] for v in check_claim("The GW-502 errors followed the push at 14:00.", "fact", [push, hedged],
                                           twins=twins)] == ["status_upgraded", "hedge_dropped"]


_OWNER = {"evidence_id": "ev-own", "trust_level": "authoritative",
          "facts": {"owner_team": "payments-core", "oncall_rotation": "payments-core-primary"},
          "text": "payment-gateway is owned by payments-core; on-call rotation payments-core-primary."}


@pytest.mark.parametrize("text, codes", [
    ("payment-gateway belongs to team web-checkout.", ["misbound_entity"]),
    ("payment-gateway belongs to team payments-core.", []),
    ("The on-call rotation for the gateway is web-oncall.", ["misbound_entity"]),
    ("The on-call rotation for the gateway is payments-core-primary.", []),
    ("The on-call rotation of payment-gateway is pay-infra.", ["misbound_entity"]),
    ("Le service payment-gateway appartient à l'équipe pay-infra.", ["misbound_entity"]),
    ("Le service payment-gateway appartient à l'équipe payments-core.", []),
    ("Der Dienst payment-gateway gehört dem Team edge-gateway.", ["misbound_entity"]),
    ("O serviço payment-gateway pertence à equipe edge-gateway.", ["misbound_entity"]),
    ("Die Rufbereitschaft für payment-gateway ist edge-primary.", ["misbound_entity"]),
    ("Die Bereitschaftsrotation für payment-gateway ist edge-primary.", ["misbound_entity"]),
    ("La rotation d'astreinte de payment-gateway est web-oncall.", ["misbound_entity"]),
    ("La rotation d'astreinte de payment-gateway est payments-core-primary.", []),
    ("Дежурная ротация для payment-gateway — web-oncall.", ["misbound_entity"]),
    ("Дежурная ротация для payment-gateway — payments-core-primary.", []),
    ("Eigentümer von payment-gateway ist das Team edge-gateway.", ["misbound_entity"]),
    ("The owner team of the failing payment gateway is edge-gateway.", ["misbound_entity"]),
    ("The owner team of the failing payment gateway is payments-core.", []),
    ("The GW-502 errors fall to team edge-gateway.", ["misbound_entity"]),
    ("payment-gatewayはedge-gatewayチームが所有しています。", ["misbound_entity"]),
    ("payment-gatewayはpayments-coreチームが所有しています。", []),
    ("payment-gatewayの担当チームはedge-gatewayでした。", ["misbound_entity"]),
])
def test_an_owner_or_rotation_named_in_other_words_and_languages_is_bound(text, codes):
    from ctxcli.answer.claims import check_entities

    assert [v["code"] for v in check_entities(text, [_OWNER])] == codes


_LEDGER = {"evidence_id": "ev-ledger", "trust_level": "authoritative",
           "facts": {"cost_change_pct": 25, "profit_change_pct": -25, "revenue_change_pct": 15},
           "text": "Revenue +15 %, costs +25 %, profit -25 %. No cost breakdown exists."}


@pytest.mark.parametrize("text, bad", [
    # a field named by its one distinctive word ("cost_change_pct": costs), plural or not
    ("Costs rose 15 %.", True),
    ("Costs rose 25 %.", False),
    ("The cost rose by 15 %.", True),
    ("Revenue was up 25 % while profit fell 25 %.", True),
    ("Revenue was up 15 % while profit fell 25 %.", False),
    ("Der Umsatz stieg um 25 %.", True),
    ("Der Umsatz stieg um 15 %.", False),
    ("成本增长了15%，利润下降了25%。", True),
    ("成本增长了25%，利润下降了25%。", False),
    # a fall written without its sign; a rise with one
    ("Profit fell 25 %.", False),
    ("Revenue grew +15 %.", False),
    ("Revenue grew +25 %.", True),
    # after a comparison of two fields, the values behind a colon are its operands in order
    ("Costs grew faster than revenue: +25 % against +15 %.", False),
    ("Revenue did not grow faster than costs: +15 % against +25 %.", False),
    ("Die Kosten stiegen stärker als der Umsatz: 25 % gegenüber 15 %.", False),
    # (a short "than" -- que, che -- is a comparison on its own)
    ("Les coûts ont augmenté plus que le chiffre d'affaires : +25 % contre +15 %.", False),
    ("I costi sono cresciuti più che i ricavi: +25 % contro +15 %.", False),
    ("Le chiffre d'affaires : +25 %.", True),
    # …but a colon with no comparison before it is the field's value
    ("Revenue: +25 %.", True),
    ("Revenue: +15 %.", False),
])
def test_a_value_is_bound_to_a_field_named_by_its_one_distinctive_word(text, bad):
    from ctxcli.answer.validate import check_cited

    vs = [v for v in check_cited(text, "fact", [_LEDGER]) if v.get("severity") != "warning"]
    assert bool(vs) == bad, vs
    if bad:
        assert {v["code"] for v in vs} == {"misbound_value"}, vs


def test_a_generic_or_common_single_word_never_binds_a_value_alone():
    """"completed_at" or "version" alone is too common a word: "version 2026.1" of an item whose
    completed_at is 13:55 binds nothing; "pct" or "change" alone binds nothing either."""
    from ctxcli.answer.validate import check_cited

    item = {"evidence_id": "ev-x", "trust_level": "authoritative",
            "facts": {"completed_at": "2026-08-11T13:55:00+08:00", "change_pct": 5},
            "text": "Push completed at 13:55; version 14 rolled out; change 5 %."}
    for text in ("The push completed 14 minutes after the freeze.", "The change was 14 % of version 5."):
        assert [v for v in check_cited(text, "fact", [item]) if v["code"] == "misbound_value"] == [], text


def test_the_claims_eval_checks_rule_claims_against_the_playbooks_condition(tmp_path):
    """items.json's ``rules`` (claim id -> the playbook's ``when``) and its twins' facts let the
    corpus score a claim that says whether the manual review applies, as validate-answer does."""
    from ctxcli.answer import claims_eval

    side = json.loads((Path(__file__).parent / "data" / "claims" / "written" / "items.json").read_text(encoding="utf-8"))
    assert side["rules"]["manual_review_c102"].startswith("claim_amount >= review_amount_threshold")
    (tmp_path / "items.json").write_text(json.dumps(side), encoding="utf-8")
    rows = [("No human review is needed for this claim: 128000 CNY on a 12-day-old policy.", "wrong"),
            ("A human review is needed for this claim: 128000 CNY on a 12-day-old policy.", "right")]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({
        "case": "C-102", "cites": ["SIG-C102-AMOUNT", "SIG-C102-TENURE", "RULE-MANUAL-REVIEW"],
        "kind": "wrong_comparison" if label == "wrong" else "right", "label": label, "lang": "en",
        "split": "heldout", "status": "fact", "text": text}) + "\n" for text, label in rows), encoding="utf-8")
    res = claims_eval.evaluate(tmp_path / "corpus.jsonl")["heldout"]
    assert res["all wrong"] == [1, 1] and res["right"] == [0, 1]
    del side["rules"]
    (tmp_path / "items.json").write_text(json.dumps(side), encoding="utf-8")
    assert claims_eval.evaluate(tmp_path / "corpus.jsonl")["heldout"]["all wrong"] == [0, 1]


_TENURE = {"evidence_id": "ev-t", "trust_level": "operational", "facts": {"policy_tenure_days": 12},
           "text": "Policy tenure 12 days."}
_TIMEOUT = {"evidence_id": "ev-k", "trust_level": "authoritative", "facts": {"keepalive_timeout_after_s": 5},
            "text": "CFG-0811-07 lowered the keep-alive timeout to 5 seconds."}
_FIRST = {"evidence_id": "ev-f", "trust_level": "operational",
          "facts": {"error_code": "PAY-4097", "first_error_at": "2026-07-23T10:02:00+08:00"},
          "text": "First PAY-4097 error at 10:02:00 (+08:00)."}


@pytest.mark.parametrize("text, items, said", [
    # a number the evidence gives in days, said in weeks or months; seconds said as milliseconds
    ("The policy has been in force for 12 weeks.", [_TENURE], "12 weeks"),
    ("The policy has been in force for 12 weeks.", [{**_TENURE, "text": "Policy tenure: 12."}], "12 weeks"),
    ("保单期限为12个月。", [_TENURE], "12 months"),
    ("The keep-alive timeout was lowered to 5 milliseconds.", [_TIMEOUT], "5 milliseconds"),
    ("The keep-alive timeout was lowered to 5 ms.", [_TIMEOUT], "5 milliseconds"),
    # a number the evidence gives as a percentage, said as a duration
    ("The alert fired after 5 minutes above the threshold.",
     [{"evidence_id": "ev-a", "facts": {}, "text": "Alert: error rate above 5 % for three minutes."}], "5 minutes"),
    ("The alert fired at an error rate above 5 percent.",
     [{"evidence_id": "ev-a", "facts": {}, "text": "Alert: error rate above 5 % for three minutes."}], None),
    # the same unit in other words and languages is the evidence's
    ("The policy has been in force for 12 days.", [_TENURE], None),
    ("保单期限为12天。", [_TENURE], None),
    ("契約期間は12日です。", [_TENURE], None),
    ("Das Timeout beträgt jetzt 5 Sekunden.", [_TIMEOUT], None),
    ("The keep-alive timeout is now 5 s.", [_TIMEOUT], None),
    # a plural of codes is not a unit; a day of the month is not a duration
    ("Checkout returned 502s from 14:05.", [{"evidence_id": "ev-5", "facts": {"retry_window_days": 502},
                                           "text": "HTTP 502 from 14:05."}], None),
    # a time of day in another zone than the evidence's, unless it is the same instant
    ("First PAY-4097 error at 10:02 UTC.", [_FIRST], "10:02 UTC"),
    ("Der erste Fehler kam um 10:02 MEZ.", [_FIRST], "10:02 MEZ"),
    ("Der erste Fehler kam um 10:02 Uhr MEZ.", [_FIRST], "10:02 Uhr MEZ"),
    ("首个错误出现在10:02（UTC）。", [_FIRST], "10:02 UTC"),
    ("First PAY-4097 error at 10:02 (UTC+8).", [_FIRST], None),
    ("First PAY-4097 error at 10:02 +08:00.", [_FIRST], None),
    ("First PAY-4097 error at 10:02.", [_FIRST], None),
])
def test_a_duration_in_another_unit_or_a_time_in_another_zone_is_not_the_evidences(text, items, said):
    from ctxcli.answer.validate import check_cited

    vs = [v for v in check_cited(text, "fact", items) if v["code"] == "unsupported_value"]
    assert [v["value"] for v in vs] == ([said] if said else [])


def test_a_time_converted_to_another_zone_is_the_same_instant():
    from ctxcli.answer.validate import _wrong_zones

    assert _wrong_zones("The first error came at 02:02 UTC.", [_FIRST["text"]]) == []
    assert _wrong_zones("The first error came at 10:02 UTC.", [_FIRST["text"]]) == [("10:02 UTC", "10:02 at UTC+08:00")]
    assert _wrong_zones("The first error came at 10:02 UTC-2.", [_FIRST["text"]]) == [("10:02 UTC-2", "10:02 at UTC+08:00")]
    assert _wrong_zones("The first error came at 10:02 GMT-8.", [_FIRST["text"]]) == [("10:02 GMT-8", "10:02 at UTC+08:00")]
    assert _wrong_zones("The first error came at 10:02 UTC+8.", [_FIRST["text"]]) == []
    # 10:02 UTC is not the first error's instant, but it is the last one's
    span = "Errors from 10:02:00 (+08:00) until 18:02:00 (+08:00)."
    assert _wrong_zones("The errors stopped at 10:02 UTC.", [span]) == []
    assert _wrong_zones("The errors stopped at 10:02 CET.", [span]) == [("10:02 CET", "10:02 at UTC+08:00")]


def test_a_time_written_in_another_zone_is_supported_when_it_is_the_cited_instant():
    from ctxcli.answer.validate import check_cited

    # 02:02 UTC is 10:02 (+08:00): the same value, not an unsupported one, and bound to its field
    assert check_cited("The first PAY-4097 error was logged at 02:02 UTC.", "fact", [_FIRST]) == []
    assert check_cited("The first error at 02:02 UTC.", "fact", [_FIRST]) == []
    (v,) = check_cited("The first PAY-4097 error was logged at 03:02 UTC.", "fact", [_FIRST])
    assert (v["code"], v["value"]) == ("unsupported_value", "03:02")
    # the instant of another field is not this field's value
    two = dict(_FIRST, facts={**_FIRST["facts"], "last_error_at": "2026-07-23T18:02:00+08:00"},
               text=_FIRST["text"] + " Last error at 18:02:00 (+08:00).")
    assert [v["code"] for v in check_cited("The last error at 02:02 UTC.", "fact", [two])] == ["misbound_value"]
    assert check_cited("The last error at 10:02 UTC.", "fact", [two]) == []


_PUSH5 = {"evidence_id": "ev-p5", "trust_level": "authoritative",
          "facts": {"change_id": "CFG-0811-05", "completed_at": "2026-08-11T13:55:00+08:00"},
          "text": "Log-level push CFG-0811-05 completed at 13:55."}
_PUSH7 = {"evidence_id": "ev-p7", "trust_level": "authoritative",
          "facts": {"change_id": "CFG-0811-07", "completed_at": "2026-08-11T14:00:00+08:00"},
          "text": "Config push CFG-0811-07 completed at 14:00."}
_REL = {"evidence_id": "ev-r", "trust_level": "authoritative",
        "facts": {"change_id": "release-2026.07.23.1", "completed_at": "2026-07-23T09:54:00+08:00"},
        "text": "Release release-2026.07.23.1 completed at 2026-07-23 09:54:00+08:00."}


@pytest.mark.parametrize("text, items, codes", [
    # a value said of an id the evidence gives another value of its kind
    ("CFG-0811-07 completed at 13:55.", [_PUSH5, _PUSH7], ["misbound_value"]),
    ("CFG-0811-05 completed at 14:00.", [_PUSH5, _PUSH7], ["misbound_value"]),
    ("CFG-0811-07 completed at 14:00 and CFG-0811-05 at 13:55.", [_PUSH5, _PUSH7], []),
    # an id before "before"/"after" is not what the value after it is of
    ("CFG-0811-07 completed at 14:00, shortly after the 13:55 push.", [_PUSH5, _PUSH7], []),
    ("CFG-0811-07 completed shortly before the 14:02 errors.",
     [_PUSH7, {"evidence_id": "ev-e", "facts": {"first_error_at": "14:02"}, "text": "GW-502 errors from 14:02."}], []),
    # ids given only as facts go with the item's values too
    ("CFG-0811-07 completed at 13:55.", [{**_PUSH5, "text": "Log-level push completed at 13:55."},
                                         {**_PUSH7, "text": "Config push completed at 14:00."}], ["misbound_value"]),
    # an id between a value's words does not cut them off: "first … error" is still said of 09:54
    ("The first PAY-4097 error occurred at 09:54.", [_REL, _FIRST], ["misbound_value"]),
    ("The first error of release-2026.07.23.1 occurred at 09:54.",
     [_REL, {"evidence_id": "ev-f2", "facts": {"first_error_at": "10:02"}, "text": "First error at 10:02."}],
     ["misbound_value"]),
    ("The first PAY-4097 error occurred at 10:02.", [_REL, _FIRST], []),
])
def test_a_value_is_bound_to_the_id_it_is_said_of(text, items, codes):
    from ctxcli.answer.validate import check_cited

    assert [v["code"] for v in check_cited(text, "fact", items)] == codes


def test_an_id_among_the_words_before_a_value_does_not_cut_them_off():
    """Words the evidence uses only for another value bind it, an id among them or not (here no
    fact names the field: only the items' words say what each time is)."""
    from ctxcli.answer.validate import check_cited

    alarm = {"evidence_id": "ev-a", "facts": {}, "trust_level": "operational", "text": "The alarm sounded at 14:07."}
    fail = {"evidence_id": "ev-p", "facts": {}, "trust_level": "operational", "text": "Payments failed from 14:05."}
    said = "The alarm for INC-SHOP-0901 sounded at {}."
    assert [v["code"] for v in check_cited(said.format("14:05"), "fact", [alarm, fail],
                                           req_texts=["INC-SHOP-0901"])] == ["misbound_value"]
    assert check_cited(said.format("14:07"), "fact", [alarm, fail], req_texts=["INC-SHOP-0901"]) == []


_OWN_OLD = {"evidence_id": "ev-o1", "trust_level": "authoritative",
            "facts": {"owner_team": "payments-core", "service": "payment-api"},
            "text": "Service payment-api is owned by team payments-core."}
_OWN_NEW = {"evidence_id": "ev-o2", "trust_level": "authoritative",
            "facts": {"owner_team": "payments-platform", "service": "payment-api",
                      "valid_from": "2026-08-01T00:00:00+08:00"},
            "text": "From 2026-08-01, service payment-api is owned by team payments-platform."}
_ROTA_OLD = {"evidence_id": "ev-r1", "trust_level": "authoritative",
             "facts": {"oncall_rotation": "payments-core-primary", "service": "payment-api"},
             "text": "On-call rotation for payment-api until 2026-07-31: payments-core-primary."}
_ROTA_NEW = {"evidence_id": "ev-r2", "trust_level": "authoritative",
             "facts": {"oncall_rotation": "payments-platform-primary", "service": "payment-api"},
             "text": "From 2026-08-01 the on-call rotation for payment-api is payments-platform-primary."}
_ERR = {"evidence_id": "ev-e1", "trust_level": "operational",
        "facts": {"first_error_at": "2026-07-23T10:02:00+08:00"}, "text": "First error at 10:02:00 (+08:00)."}


@pytest.mark.parametrize("text, items, codes", [
    # the owner a cited item gives only from 2026-08-01, said of the first error on 2026-07-23
    ("When the first error hit, payment-api was owned by team payments-platform.", [_OWN_OLD, _OWN_NEW, _ERR],
     ["misbound_entity"]),
    ("Cuando apareció el primer error, payment-api pertenecía al equipo payments-platform.",
     [_OWN_OLD, _OWN_NEW, _ERR], ["misbound_entity"]),
    ("2026年7月23日出现首个错误时，payment-api由payments-platform团队负责。", [_OWN_OLD, _OWN_NEW, _ERR],
     ["misbound_entity"]),
    ("When the first error hit, payment-api was owned by team payments-core.", [_OWN_OLD, _OWN_NEW, _ERR], []),
    # a time written in the claim; an item's own "until"/"From" in its text
    ("Until 2026-07-31 the on-call rotation for payment-api was payments-platform-primary.", [_ROTA_OLD, _ROTA_NEW],
     ["misbound_entity"]),
    ("On 2026-08-02 the on-call rotation for payment-api was payments-core-primary.", [_ROTA_OLD, _ROTA_NEW],
     ["misbound_entity"]),
    ("Until 2026-07-31 the on-call rotation for payment-api was payments-core-primary.", [_ROTA_OLD, _ROTA_NEW], []),
    ("On 2026-08-01 the on-call rotation for payment-api became payments-platform-primary.", [_ROTA_OLD, _ROTA_NEW],
     []),
    # both said, each of its own day; no time said at all; no other value cited for then
    ("payments-core owned payment-api on 2026-07-23 and payments-platform from 2026-08-01.", [_OWN_OLD, _OWN_NEW],
     []),
    ("payment-api is owned by team payments-platform.", [_OWN_OLD, _OWN_NEW, _ERR], []),
    ("When the first error hit, payment-api was owned by team payments-platform.", [_OWN_NEW, _ERR], []),
])
def test_an_owner_said_of_a_time_its_evidence_does_not_hold_for_is_misbound(text, items, codes):
    from ctxcli.answer.claims import check_claim

    assert [v["code"] for v in check_claim(text, "fact", items)] == codes


@pytest.mark.parametrize("text, codes", [
    ("CFG-0811-07 raised the keep-alive timeout from 60 to 5 seconds.", ["wrong_comparison"]),
    ("CFG-0811-07 lowered the keep-alive timeout from 60 seconds to 5 seconds.", []),
    ("CFG-0811-07 lowered the keep-alive timeout from 5 seconds to 60 seconds.", ["wrong_comparison"]),
    ("CFG-0811-07 hat den Keep-alive-Timeout von 60 auf 5 Sekunden erhöht.", ["wrong_comparison"]),
    ("CFG-0811-07 hat den Keep-alive-Timeout von 60 auf 5 Sekunden gesenkt.", []),
    ("CFG-0811-07 a réduit le délai de 60 à 5 secondes.", []),
    ("CFG-0811-07 a augmenté le délai de 60 à 5 secondes.", ["wrong_comparison"]),
    ("CFG-0811-07将keep-alive超时从60秒提高到5秒。", ["wrong_comparison"]),
    ("CFG-0811-07将keep-alive超时从60秒降低到5秒。", []),
    ("CFG-0811-07 đã giảm thời gian chờ từ 60 xuống 5 giây.", []),
    # no direction said, or both: not decided here
    ("The timeout went from 60 to 5 seconds.", []),
    ("Costs were cut and prices raised from 10 to 12.", []),
    ("The raised prices cut demand from 12 to 10 units.", []),
    # an equal change is neither up nor down
    ("The timeout was raised from 5 to 5 seconds.", ["wrong_comparison"]),
])
def test_a_change_said_to_go_up_or_down_is_checked_against_its_from_and_to(text, codes):
    from ctxcli.answer.claims import check_claim

    assert [v["code"] for v in check_claim(text, "fact", [])] == codes


def test_faster_and_longer_than_compare_like_more_than():
    from ctxcli.answer.claims import check_comparisons

    assert [v["code"] for v in check_comparisons("Revenue (+15 %) grew faster than costs (+25 %).")] == ["wrong_comparison"]
    assert check_comparisons("Costs (+25 %) grew faster than revenue (+15 %).") == []
    assert [v["code"] for v in check_comparisons("Thời gian chờ mới 5 giây dài hơn mức cũ 60 giây.")] == ["wrong_comparison"]


@pytest.mark.parametrize("case, text, codes", [
    # C-105 (98000 CNY < 100000): the rule does not apply, however a claim says it does
    ("C-105", "The claim must go to a human reviewer (98000 CNY, tenure 20 days).", ["wrong_comparison"]),
    ("C-105", "El siniestro debe ir a revisión humana.", ["wrong_comparison"]),
    ("C-105", "This claim must be reviewed by a person.", ["wrong_comparison"]),
    ("C-105", "O sinistro precisa de revisão humana: 98000 CNY e 20 dias de apólice.", ["wrong_comparison"]),
    ("C-105", "The claim is not sent to manual review: 98000 CNY is under 100000 CNY.", []),
    ("C-105", "The policy is 20 days old, but 98000 CNY is below 100000 CNY, so the claim does not go to "
              "manual review.", []),
    ("C-105", "この請求は人による審査を必要としません。", []),
    # C-102 (128000 CNY, 12 days): it applies
    ("C-102", "請求額128000 CNY、契約期間12日のため、人による審査は不要です。", ["wrong_comparison"]),
    ("C-102", "The claim must go to a human reviewer: 128000 CNY on a 12-day-old policy.", []),
])
def test_a_claim_saying_whether_review_applies_agrees_with_the_rule_in_any_wording(case, text, codes):
    from ctxcli.answer.claims import check_claim

    side = json.loads((Path(__file__).parent / "data" / "claims" / "written" / "items.json").read_text(encoding="utf-8"))
    n = case[2:].replace("-", "")
    items = [side["items"][f"SIG-C{n}-AMOUNT"], side["items"][f"SIG-C{n}-TENURE"], side["items"]["RULE-MANUAL-REVIEW"]]
    vs = check_claim(text, "fact", items, twins=side["twins"], rules=side["rules"])
    assert [v["code"] for v in vs if v.get("severity") != "warning"] == codes


_ALERT = {"evidence_id": "ev-al", "trust_level": "operational", "facts": {"alert_at": "2026-09-01T14:07:00+02:00"},
          "text": "Alert fired at 14:07: checkout-api error rate above 5 % for three minutes."}
_SHOP = {"evidence_id": "ev-sh", "trust_level": "operational", "facts": {"first_error_at": "2026-09-01T14:05:00+02:00"},
         "text": "From 14:05 customers could not complete payment."}


@pytest.mark.parametrize("text, items, codes", [
    ("Déploiement terminé à 10 h 02.", [_REL, _FIRST], ["misbound_value"]),
    ("Déploiement terminé à 9 h 54.", [_REL, _FIRST], []),
    ("Bản phát hành hoàn tất lúc 10:02.", [_REL, _FIRST], ["misbound_value"]),
    ("L'allarme è scattato alle 14:05.", [_ALERT, _SHOP], ["misbound_value"]),
    ("L'allarme è scattato alle 14:07.", [_ALERT, _SHOP], []),
    # a sentence ends at 。: the alert's time is not bound to the error rate after it
    ("14:07にアラートが発火した。checkout-apiのエラー率が5%を超えていた。", [_ALERT], []),
])
def test_what_a_value_is_said_of_is_read_in_the_claims_language(text, items, codes):
    from ctxcli.answer.validate import check_cited

    assert [v["code"] for v in check_cited(text, "fact", items)] == codes


@pytest.mark.parametrize("text, codes", [
    ("The runbook to use is gateway-config-restart v2.", ["misbound_entity"]),
    ("The runbook to use is payment-recovery.", ["misbound_entity"]),
    ("The runbook is gateway-config-rollback v2.", []),
    ("Runbook: payment-recovery.", ["misbound_entity"]),
])
def test_a_runbook_named_after_is_or_a_colon_is_bound(text, codes):
    from ctxcli.answer.claims import check_claim

    rb = {"evidence_id": "ev-rb", "trust_level": "operational",
          "facts": {"runbook": "gateway-config-rollback", "version": "v2"},
          "text": "Runbook gateway-config-rollback v2: revert the last configuration push."}
    assert [v["code"] for v in check_claim(text, "fact", [rb])] == codes


_RULE = {"evidence_id": "ev-rr", "trust_level": "authoritative",
         "facts": {"review_amount_threshold": 100000, "review_tenure_days": 30},
         "text": "Claims at or above 100000 CNY on a policy within 30 days go to a human reviewer."}


@pytest.mark.parametrize("text, items, codes", [
    # the review window's 30 days said as the policy's tenure, in words that name the policy's
    ("Die Policenlaufzeit beträgt 30 Tage.", [_TENURE, _RULE], ["misbound_value"]),
    ("Die Policenlaufzeit beträgt 12 Tage.", [_TENURE, _RULE], []),
    ("契約期間は30日です。", [_TENURE, _RULE], ["misbound_value"]),
    ("契約期間は12日です。", [_TENURE, _RULE], []),
    ("L'anzianità della polizza è di 30 giorni.", [_TENURE, _RULE], ["misbound_value"]),
    # comparisons in more words: predate, a précédé, meno del, a 30-Tage-Frist
    ("Errors from 14:02 predate the 13:55 push.", [], ["wrong_comparison"]),
    ("L'alerte de 14 h 07 a précédé les premières erreurs de 14 h 05.", [], ["wrong_comparison"]),
    ("Il pool aveva 49 connessioni attive, meno del massimo di 50.", [], []),
    ("Il pool aveva 51 connessioni attive, meno del massimo di 50.", [], ["wrong_comparison"]),
    ("Mit 20 Tagen liegt die Laufzeit außerhalb der 30-Tage-Frist.", [], ["wrong_comparison"]),
    ("Mit 40 Tagen liegt die Laufzeit außerhalb der 30-Tage-Frist.", [], []),
])
def test_more_wordings_of_what_a_value_is_and_how_two_compare(text, items, codes):
    from ctxcli.answer.claims import check_claim
    from ctxcli.answer.validate import check_cited

    vs = check_cited(text, "fact", items) if items else check_claim(text, "fact", [])
    assert [v["code"] for v in vs if v.get("severity") != "warning"] == codes


@pytest.mark.parametrize("text, want", [
    ("ab dem 01.01.2026 gemeldet", "ab dem 2026-01-01 gemeldet"),       # dots: the day comes first
    ("am 07.08.2026", "am 2026-08-07"),
    ("um 09.54 Uhr", "um 09:54 Uhr"),
    ("9.54 Euro", "9.54 Euro"),                                           # no Uhr: a decimal
    ("98 thousand yuan", "98000 yuan"),
    ("128 mil CNY", "128000 CNY"),
    ("1,5 millones", "1500000"),
    ("2.5 million", "2500000"),
    ("3 тысячи", "3000"),
])
def test_numbers_written_with_dots_and_scale_words_read_as_people_mean_them(text, want):
    from ctxcli.answer import numbers

    assert numbers.normalise(text) == want


@pytest.mark.parametrize("text, items, codes", [
    # an id joined to the value by "with" is not what the value is of
    ("PAY-4097错误可能与09:54完成的发布有关。", [_REL, _FIRST], []),
    ("CFG-0811-07 的完成时间是13:55。", [_PUSH5, _PUSH7], ["misbound_value"]),
    # a zone's letters inside a word are no zone: "esté", "est" (French: is)
    ("la versión desplegada a las 09:54 esté relacionada con los errores PAY-4097.", [_REL, _FIRST], []),
    ("Le premier PAY-4097 à 10:02 est une erreur.", [_FIRST], []),
    # "clears the threshold" compares: the threshold is not the amount
    ("At 128,000 CNY, the amount claimed clears the 100,000 CNY review threshold.",
     [{"evidence_id": "ev-am", "trust_level": "operational", "facts": {"claim_amount": 128000}, "text": "Claim amount 128000 CNY."},
      _RULE], []),
    ("The amount of this claim does not fall short of the 100000 CNY line for human review.",
     [{"evidence_id": "ev-am", "trust_level": "operational", "facts": {"claim_amount": 128000}, "text": "Claim amount 128000 CNY."},
      _RULE], []),
])
def test_what_a_value_is_of_is_not_read_across_with_or_a_comparison(text, items, codes):
    from ctxcli.answer.validate import check_cited

    assert [v["code"] for v in check_cited(text, "hypothesis", items) if v.get("severity") != "warning"] == codes


def test_neither_nor_negates_the_comparison_after_it():
    from ctxcli.answer.claims import check_comparisons

    ok = "Neither CFG-0811-05 at 13:55 nor CFG-0811-07 at 14:00 completed after the first GW-502 error at 14:02."
    assert check_comparisons(ok) == []
    bad = "Neither CFG-0811-05 at 13:55 nor CFG-0811-07 at 14:03 completed after the first GW-502 error at 14:02."
    assert [v["code"] for v in check_comparisons(bad)] == ["wrong_comparison"]


@pytest.mark.parametrize("text, codes", [
    ("A tenure of 40 days is below a margin of 5 %.", []),             # days against a percentage: not one quantity
    ("Ein Zeitraum von 40 Tagen liegt unter 5 Prozent.", []),
    ("A tenure of 40 days is below 30 days.", ["wrong_comparison"]),    # like with like: compared
    ("A timeout of 60 seconds is below 5 minutes.", []),
])
def test_operands_in_unlike_units_are_not_compared(text, codes):
    from ctxcli.answer.claims import check_comparisons

    assert [v["code"] for v in check_comparisons(text)] == codes


# ------------------------------------------------------------------- written6 tuning: comparisons
def _rejected(text: str, items: list) -> list[str]:
    from ctxcli.answer.validate import check_cited

    return [v["code"] for v in check_cited(text, "fact", items) if v.get("severity") != "warning"]


@pytest.mark.parametrize("text, items, codes", [
    # "more quickly/slowly than" in other languages, between changes written with their sign ("+15 %")
    ("Los ingresos (+15 %) crecieron más rápido que los costes (+25 %).", [_LEDGER], ["wrong_comparison"]),
    ("Los costes (+25 %) crecieron más rápido que los ingresos (+15 %).", [_LEDGER], []),
    ("Выручка (+15 %) росла быстрее затрат (+25 %).", [_LEDGER], ["wrong_comparison"]),
    ("Выручка (+15 %) росла медленнее затрат (+25 %).", [_LEDGER], []),
    ("Les coûts (+25 %) ont augmenté moins vite que le chiffre d'affaires (+15 %).", [_LEDGER], ["wrong_comparison"]),
    ("Les coûts (+25 %) ont augmenté plus vite que le chiffre d'affaires (+15 %).", [_LEDGER], []),
])
def test_rates_of_change_are_compared_in_each_language(text, items, codes):
    assert _rejected(text, items) == codes


@pytest.mark.parametrize("text, codes", [
    # "after the change" compares no values: the left value of "longer than" lies before it
    ("The 5-second timeout after the change is longer than the 60-second timeout before it.", ["wrong_comparison"]),
    ("The 60-second timeout before the change was longer than the 5-second timeout after it.", []),
    # "against" sets two values against each other: "after the change" is not compared with sixty
    ("Five seconds after the change against sixty before: the keep-alive timeout was lowered.", []),
])
def test_a_comparison_word_with_no_value_after_it_leaves_the_left_value_to_the_next(text, codes):
    assert _rejected(text, [_DIFF]) == codes


def test_two_words_of_one_comparison_are_one_comparison():
    from ctxcli.answer.claims import comparisons

    assert comparisons("128000 CNY au moins égal à 100000 CNY.") == []
    assert _rejected("La condition est remplie : 128000 CNY au moins égal à 100000 CNY.", [_AMOUNT, _RULE]) == []
    assert _rejected("La condition est remplie : 128000 CNY moins que 100000 CNY.", [_AMOUNT, _RULE]) == \
        ["wrong_comparison"]


@pytest.mark.parametrize("text, items, codes", [
    ("Revenue outpaced costs: 15 % versus 25 %.", [_LEDGER], ["wrong_comparison"]),
    ("Costs outpaced revenue: 25 % versus 15 %.", [_LEDGER], []),
    ("Revenue grew more than costs (15 % vs 25 %), so margins improved.", [_LEDGER], ["wrong_comparison"]),
    ("Costs grew more than revenue (25 % vs 15 %), so margins shrank.", [_LEDGER], []),
    ("Revenue did not rise as much as costs did: fifteen percent versus twenty-five percent.", [_LEDGER], []),
    ("Revenue rose as much as costs did: fifteen percent versus twenty-five percent.", [_LEDGER],
     ["wrong_comparison"]),
    # the pair in the other order than the things compared: the evidence says which value is whose
    ("El primer error no se produjo antes de que terminara el despliegue (09:54 frente a 10:02).",
     [_RELEASE, _FIRST], []),
    ("El primer error se produjo antes de que terminara el despliegue (09:54 frente a 10:02).",
     [_RELEASE, _FIRST], ["wrong_comparison"]),
])
def test_things_compared_take_the_values_set_against_each_other(text, items, codes):
    assert _rejected(text, items) == codes


def test_values_set_against_each_other_without_evidence_are_undecided():
    from ctxcli.answer.claims import check_comparisons, comparisons

    assert comparisons("Revenue outpaced costs: 15 % versus 25 %.") == [("15", ">", "25", None)]
    assert [v["code"] for v in check_comparisons("Revenue outpaced costs: 15 % versus 25 %.")] == ["undecided"]
    # the evidence does not tell which value is whose: undecided, not a guess
    assert [v["code"] for v in check_comparisons("Revenue outpaced costs: 15 % versus 25 %.",
                                                 [{"text": "Two figures: 15 and 25.", "facts": {}}])] == ["undecided"]


# ------------------------------------------------------------------- written6 tuning: binding
_OWN26 = {"evidence_id": "ev-own26", "trust_level": "authoritative",
          "facts": {"owner_team": "payments-platform", "service": "payment-api",
                    "valid_from": "2026-08-01T00:00:00+08:00"},
          "text": "From 2026-08-01, service payment-api is owned by team payments-platform, replacing payments-core."}
_SCOPE = {"evidence_id": "ev-scope", "trust_level": "authoritative",
          "facts": {"rule_set": "motor-claim-standard", "valid_from": "2026-01-01", "version": "2026.1"},
          "text": "Motor claims filed from 2026-01-01 are governed by rule set motor-claim-standard version 2026.1, "
                  "which replaces version 2025.4."}
_AMOUNT98 = {"evidence_id": "ev-a98", "trust_level": "operational", "facts": {"claim_amount": 98000, "currency": "CNY"},
             "text": "Claim amount 98000 CNY."}
_TENURE20 = {"evidence_id": "ev-t20", "trust_level": "operational", "facts": {"policy_tenure_days": 20},
             "text": "Policy tenure 20 days."}


@pytest.mark.parametrize("text, items, codes", [
    # a date is no name: "the owner of payment-api on 2026-08-01" binds no team to the date
    ("payments-platform replaced payments-core as the owner of payment-api on 2026-08-01.", [_OWN26], []),
    # "owner of S is X": the name after "is", not a word beyond it
    ("The owner of payment-api is payments-core from 2026-08-01.", [_OWN26], ["misbound_entity"]),
    ("The owner of payment-api is payments-platform from 2026-08-01.", [_OWN26], []),
])
def test_a_date_is_no_name_bound_to_an_owner(text, items, codes):
    assert _rejected(text, items) == codes


@pytest.mark.parametrize("text, items, codes", [
    # the words after a value that are still its own — its unit ("98,000 CNY"), "of" and a name
    # ("2026.1 of motor-claim-standard") — say nothing of the next value
    ("Automatic handling: 98,000 CNY stays within a rule of 100,000 CNY.", [_AMOUNT98, _RULE], []),
    ("Automatic handling: 98,000 CNY stays within a rule of 30 CNY.", [_AMOUNT98, _RULE], ["wrong_comparison"]),
    ("Automatic handling is fine here: 98,000 CNY on a 20-day-old policy does not meet a rule of 100,000 CNY and "
     "30 days.", [_AMOUNT98, _TENURE20, _RULE], []),
    ("The claim of 98,000 CNY on a 20-day-old policy is within 100,000 days.", [_AMOUNT98, _TENURE20, _RULE],
     ["misbound_value"]),
    ("Version 2026.1 of motor-claim-standard takes the place of 2025.4.", [_SCOPE], []),
    ("Motor claims filed from 2026-01-01 are governed by motor-claim-standard 2025.4.", [_SCOPE], ["misbound_value"]),
    # 超出 ("goes beyond") compares; the value after it is the bound, not the tenure
    ("十二天的保单期限未超出三十天的审核期限。", [_TENURE, _RULE], []),
    ("十二天的保单期限已超出三十天的审核期限。", [_TENURE, _RULE], ["wrong_comparison"]),
])
def test_words_a_value_owns_do_not_bind_the_next_value(text, items, codes):
    assert _rejected(text, items) == codes


@pytest.mark.parametrize("text, items, codes", [
    # a clause opened by a word of time, with no value, says when the next clause's value holds
    ("Before the change, the keep-alive timeout was 5 seconds.", [_DIFF], ["misbound_value"]),
    ("Before the change, the keep-alive timeout was 60 seconds.", [_DIFF], []),
    # … any other clause does not ("Avec douze jours d'ancienneté, …": its value is in words)
    ("Avec douze jours d'ancienneté, la police reste dans la fenêtre de 30 jours.", [_TENURE, _RULE], []),
    # short words ("de", "del", "en") say nothing of a field and do not push its name out of reach
    ("El timeout de keep-alive después del cambio quedó en 60 segundos.", [_DIFF], ["misbound_value"]),
    ("El timeout de keep-alive después del cambio quedó en 5 segundos.", [_DIFF], []),
    # a comparison word in letters outside ASCII ends what a value is of, as an English one does
    ("Avec 128 000 CNY, le montant du sinistre dépasse le seuil de 100 000 CNY fixé pour la revue manuelle.",
     [_AMOUNT, _RULE], []),
    ("Avec 128 000 CNY, le montant du sinistre est de 100 000 CNY.", [_AMOUNT, _RULE], ["misbound_value"]),
    # field words of more languages
    ("Il profitto è sceso del 15 %.", [_LEDGER], ["misbound_value"]),
    ("Il profitto è sceso del 25 %.", [_LEDGER], []),
    ("Выручка выросла на 25 %.", [_LEDGER], ["misbound_value"]),
    ("Выручка выросла на 15 %.", [_LEDGER], []),
    ("Chi phí tăng 15 %.", [_LEDGER], ["misbound_value"]),
    ("Chi phí tăng 25 %.", [_LEDGER], []),
    ("Der Schadensbetrag beträgt 100.000 CNY.", [_AMOUNT, _RULE], ["misbound_value"]),
    ("Der Schadensbetrag beträgt 128.000 CNY.", [_AMOUNT, _RULE], []),
    ("Сумма претензии составляет 100 000 CNY.", [_AMOUNT, _RULE], ["misbound_value"]),
    ("Сумма претензии составляет 128 000 CNY.", [_AMOUNT, _RULE], []),
])
def test_a_value_is_bound_to_its_field_across_an_opening_clause_and_in_more_languages(text, items, codes):
    assert _rejected(text, items) == codes


@pytest.mark.parametrize("text", [
    "The errors at 10:02 stem from the release at 09:54.",
    "The pool exhaustion was brought on by the 09:54 release.",
    "The PAY-4097 errors resulted from the release.",
    "The pool ran dry as a direct consequence of the release.",
    "The release is the reason for the PAY-4097 errors.",
    "Le déploiement de 9 h 54 est à l'origine des erreurs PAY-4097.",
    "La baisse du délai est la cause des erreurs PAY-4097.",
    "Gli errori PAY-4097 sono stati causati dal rilascio.",
    "Gli errori PAY-4097 sono dovuti al rilascio.",
    "Los errores PAY-4097 se originaron por el despliegue.",
])
def test_causes_said_in_more_words_are_causal_claims(text):
    from ctxcli.answer.claims import check_claim, is_causal

    assert is_causal(text)
    # stated as a fact with no deterministic claim behind it: stronger than the evidence
    assert [v["code"] for v in check_claim(text, "fact", [_RELEASE, _FIRST])] == ["status_upgraded"]
    assert check_claim(text, "hypothesis", [_RELEASE, _FIRST]) == []


@pytest.mark.parametrize("text, items, codes", [
    # the left value across commas, over a clause with no value
    ("Costs (+25 %), as the ledger shows, grew more slowly than revenue did (+15 %).", [_LEDGER],
     ["wrong_comparison"]),
    ("Costs (+25 %), as the ledger shows, grew faster than revenue did (+15 %).", [_LEDGER], []),
    # the right value after a comma, when the comparison names a thing but no value
    ("CFG-0811-05 terminou às 13:55, mais tarde que CFG-0811-07, às 14:00.", [_PUSH5, _PUSH7], ["wrong_comparison"]),
    ("CFG-0811-05 terminou às 13:55, mais cedo que CFG-0811-07, às 14:00.", [_PUSH5, _PUSH7], []),
    ("Costs rose by 25 %, less than revenue, which rose by 15 %.", [_LEDGER], ["wrong_comparison"]),
    ("Costs rose by 25 %, more than revenue, which rose by 15 %.", [_LEDGER], []),
    # "60 s before, 5 s after": "before" names nothing after it; no comparison of 60 with 5
    ("The keep-alive timeout was lowered: 60 s before, 5 s after.", [_DIFF], []),
])
def test_operands_of_a_comparison_across_commas(text, items, codes):
    assert _rejected(text, items) == codes


@pytest.mark.parametrize("text, items, codes", [
    # a clause that opens with a bound bounds the value after it
    ("Later than the 10:02 error, at 09:54, the release completed.", [_RELEASE, _FIRST], ["wrong_comparison"]),
    ("Earlier than the 10:02 error, at 09:54, the release completed.", [_RELEASE, _FIRST], []),
    ("在10:02的错误出现之后，发布才于09:54完成。", [_RELEASE, _FIRST], ["wrong_comparison"]),
    ("在10:02的错误出现之前，发布已于09:54完成。", [_RELEASE, _FIRST], []),
    ("在发布完成（09:54）以前，首个错误（10:02）就已经出现了。", [_RELEASE, _FIRST], ["wrong_comparison"]),
    ("在发布完成（09:54）以后，首个错误（10:02）才出现。", [_RELEASE, _FIRST], []),
    # … when the two are values of one kind: a version is no bound of an amount
    ("Under motor-claim-standard 2026.1, the claim of 128000 CNY is assessed.", [_RULESET, _AMOUNT], []),
    # antes que / más tarde que
    ("CFG-0811-07, a las 14:00, se completó antes que CFG-0811-05, a las 13:55.", [_PUSH5, _PUSH7],
     ["wrong_comparison"]),
    ("CFG-0811-07, a las 14:00, se completó más tarde que CFG-0811-05, a las 13:55.", [_PUSH5, _PUSH7], []),
])
def test_a_bound_that_opens_the_sentence_bounds_the_value_after_it(text, items, codes):
    assert _rejected(text, items) == codes


@pytest.mark.parametrize("text, codes", [
    # the verb after a clause's last value says what it is (verb-final word orders)
    ("Das Release wurde um 10:02 abgeschlossen.", ["misbound_value"]),
    ("Das Release wurde um 09:54 abgeschlossen.", []),
    ("发布于10:02完成。", ["misbound_value"]),
    ("发布于09:54完成。", []),
    ("リリースは10:02に完了した。", ["misbound_value"]),
    ("リリースは09:54に完了した。", []),
])
def test_the_verb_after_a_value_says_what_it_is(text, codes):
    assert _rejected(text, [_RELEASE, _FIRST]) == codes


@pytest.mark.parametrize("text, codes", [
    # a comma beside letters the tokens skip ("mudança, o") is still a comma alone
    ("Depois da mudança, o timeout de keep-alive ficou em 60 segundos.", ["misbound_value"]),
    ("Depois da mudança, o timeout de keep-alive ficou em 5 segundos.", []),
    # "after"/"before" in more languages name the field's time
    ("Il timeout keep-alive dopo la modifica è di 60 secondi.", ["misbound_value"]),
    ("Il timeout keep-alive dopo la modifica è di 5 secondi.", []),
    ("Тайм-аут keep-alive после изменения составил 60 секунд.", ["misbound_value"]),
    ("Тайм-аут keep-alive после изменения составил 5 секунд.", []),
    ("変更前のkeep-aliveタイムアウトは5秒だった。", ["misbound_value"]),
    ("変更前のkeep-aliveタイムアウトは60秒だった。", []),
])
def test_a_changed_value_is_bound_to_before_or_after_in_more_languages(text, codes):
    assert _rejected(text, [_DIFF]) == codes


@pytest.mark.parametrize("text, codes", [
    # a currency named in more words: "US dollars", "đô la Mỹ"
    ("The claim is for 128,000 US dollars.", ["unsupported_value"]),
    ("The claim is for 128,000 yuan.", []),
    ("Số tiền yêu cầu là 128.000 đô la Mỹ.", ["unsupported_value"]),
    ("Số tiền yêu cầu là 128.000 CNY.", []),
])
def test_a_currency_named_in_more_words_is_checked(text, codes):
    assert _rejected(text, [_AMOUNT]) == codes
