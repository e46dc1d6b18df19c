"""Evidence compression (issue 8): extractive, checked against the original, or refused.

Each fidelity category (numbers, negations, identifiers, dates, hedges) is tested in English
and in Chinese with a text where a naive compression — dropping the clause that carries the
thing — would change the meaning: the fidelity check must reject that naive result, and
``try_compress`` must either keep the thing or refuse."""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxcli import api
from ctxcli.engine import compress as C
from ctxcli.engine.render import evidence_block
from ctxcli.tokens import count
from ctxcli.util.canon import content_hash

from .conftest import REPO, run_cli


@pytest.fixture(scope="module")
def pb():
    return api.read_playbook("motor-claim-review", REPO / "manifests" / "playbooks")[0]


def mk(text: str, facts: dict, supports=("claim_amount_signal",)) -> dict:
    item = {
        "evidence_id": "ev-00000000c1", "object_id": "OBJ-1", "source_id": "risk-signals", "source_version": "v1",
        "object_type": "risk_signal", "subject_id": "case:C-102", "title": "A test item", "locator": "x#1",
        "content_hash": content_hash(text), "valid_from": None, "valid_to": None,
        "observed_at": "2026-07-16T09:00:00+08:00", "trust_level": "operational", "classification": "internal",
        "owner_team": "claims", "supports": list(supports), "facts": facts, "round": 1, "channels": {},
        "queries": {}, "rrf": 0.0, "graph_templates": [], "content_tokens": count(text), "text": text,
        "text_hash": content_hash(text), "transformations": [], "selected_for": None, "tokens": 0,
    }
    item["tokens"] = count(evidence_block(item))
    return item


FILLER_EN = (" The weather that afternoon was pleasant and the clerk filed the papers in the blue cabinet."
             " Lunch in the canteen was rice with vegetables and a cup of green tea for everybody.")
FILLER_ZH = "当天下午天气晴朗，办事员把文件放进蓝色柜子。食堂午饭是米饭和蔬菜，每人一杯绿茶。"


def squeeze(item, pb, o=None, slack: int = 1):
    """Compress to just under the item's size: filler must go, the rest is up to the rules."""
    return C.try_compress(item, o, item["tokens"] - slack, pb, count)


def naive_checks(item, pb, drop: str, o=None) -> dict[str, bool]:
    """The fidelity checks of a naive compression that drops every clause containing ``drop``."""
    units = C.split_units(item["text"])
    keep = {u.index for u in units if drop not in u.text}
    assert len(keep) < len(units)
    ctx = C.build_context(item, o, pb)
    return C.fidelity(item["text"], units, keep, C.assemble(item["text"], units, keep), ctx)


def kept(new, *needles: str) -> None:
    """The compressor compressed (a refusal would pass any 'kept' check) and kept every needle."""
    assert new is not None, "refused: nothing was compressed"
    for n in needles:
        assert n in new["text"], n


# ------------------------------------------------------------------------------ numbers
@pytest.mark.parametrize("text,facts,needles,drop", [
    ("Risk signal CLAIM_AMOUNT for the claim. The garage estimate came to 128,000 CNY in total."
     " A deductible of 2000 CNY is charged per event." + FILLER_EN,
     {"claim_amount": 128000, "signal": "CLAIM_AMOUNT"}, ["128,000 CNY", "2000 CNY"], "2000 CNY"),
    ("风险信号：CLAIM_AMOUNT。修理厂估价合计12.8万元。本次免赔额为2000元。" + FILLER_ZH,
     {"claim_amount": 128000, "signal": "CLAIM_AMOUNT"}, ["12.8万元", "2000元"], "2000元"),
    ("Payment latency rose to 850 ms at peak. Error rate reached 4.5% of requests. Risk signal CLAIM_AMOUNT."
     + FILLER_EN, {"signal": "CLAIM_AMOUNT"}, ["850 ms", "4.5%"], "4.5%"),
], ids=["en", "zh", "en-units"])
def test_numbers_with_units_are_kept(pb, text, facts, needles, drop):
    item = mk(text, facts)
    assert naive_checks(item, pb, drop)["numbers"] is False
    new = squeeze(item, pb)
    assert new is not None
    kept(new, *needles)
    assert "canteen" not in new["text"] and "食堂" not in new["text"]


def test_fact_number_in_other_notation_is_found(pb):
    item = mk("Risk signal CLAIM_AMOUNT. Claimed: 128,000." + FILLER_EN, {"claim_amount": 128000})
    ctx = C.build_context(item, None, pb)
    assert any(v in ctx.fact_numbers for v, _, _ in C.numbers("Claimed: 128,000."))
    new = squeeze(item, pb)
    kept(new, "128,000")


# ------------------------------------------------------------------------------ negations
@pytest.mark.parametrize("text,facts,needles,drop", [
    ("Document type: ACCIDENT_CERTIFICATE. The ACCIDENT_CERTIFICATE was not signed by the issuing officer."
     + FILLER_EN, {"document_type": "ACCIDENT_CERTIFICATE"}, ["was not signed"], "not signed"),
    ("Document ACCIDENT_CERTIFICATE received by post; never countersigned by the officer." + FILLER_EN,
     {"document_type": "ACCIDENT_CERTIFICATE"}, ["never countersigned"], "never"),
    ("文件类型：ACCIDENT_CERTIFICATE。该ACCIDENT_CERTIFICATE未经签发警官签字。" + FILLER_ZH,
     {"document_type": "ACCIDENT_CERTIFICATE"}, ["未经签发警官签字"], "未经"),
    ("已收到ACCIDENT_CERTIFICATE；尚不得作为定损依据。" + FILLER_ZH,
     {"document_type": "ACCIDENT_CERTIFICATE"}, ["尚不得作为定损依据"], "不得"),
], ids=["en", "en-clause", "zh", "zh-clause"])
def test_negations_are_kept(pb, text, facts, needles, drop):
    item = mk(text, facts, supports=("document_status",))
    assert naive_checks(item, pb, drop)["negations"] is False
    new = squeeze(item, pb)
    assert new is not None
    kept(new, *needles)


# ------------------------------------------------------------------------------ identifiers
@pytest.mark.parametrize("text,needles,drop", [
    ("Scan received. Filed under IDENTITY_DOCUMENT for C-102. Linked payment PAY-4097." + FILLER_EN,
     ["IDENTITY_DOCUMENT", "C-102", "PAY-4097"], "PAY-4097"),
    ("扫描件已收到。归档为IDENTITY_DOCUMENT，案件C-102。关联付款PAY-4097。" + FILLER_ZH,
     ["IDENTITY_DOCUMENT", "C-102", "PAY-4097"], "PAY-4097"),
    ("Rule version 2026.1 is the one the case is bound to. Tracked as C-102." + FILLER_EN,
     ["2026.1", "C-102"], "2026.1"),
], ids=["en", "zh", "en-version"])
def test_identifiers_bound_to_facts_are_kept(pb, text, needles, drop):
    facts = {"case_id": "C-102", "document_type": "IDENTITY_DOCUMENT", "version": "2026.1"}
    o = SimpleNamespace(keys=["C-102", "PAY-4097"])
    item = mk(text, facts, supports=("document_status",))
    assert naive_checks(item, pb, drop, o)["identifiers"] is False
    new = squeeze(item, pb, o)
    assert new is not None
    kept(new, *needles)


# ------------------------------------------------------------------------------ dates and validity
@pytest.mark.parametrize("text,needles,drop", [
    ("Rule set motor-claim-standard version 2026.1. Valid from 2026-01-01 until 2026-09-30."
     " Announced on 3 March 2026." + FILLER_EN, ["2026-01-01", "2026-09-30", "3 March 2026"], "Announced"),
    ("Rule set motor-claim-standard version 2026.1. This version is no longer in force." + FILLER_EN,
     ["no longer in force"], "in force"),
    ("规则集motor-claim-standard版本2026.1。自2026年1月1日起生效，有效期至2026年9月30日。"
     "该版本于2026年3月3日公布。" + FILLER_ZH, ["2026年1月1日起生效", "2026年3月3日"], "公布"),
    ("规则集motor-claim-standard版本2026.1。此版本已失效。" + FILLER_ZH, ["此版本已失效"], "失效"),
], ids=["en", "en-qualifier", "zh", "zh-qualifier"])
def test_dates_and_validity_qualifiers_are_kept(pb, text, needles, drop):
    facts = {"rule_set": "motor-claim-standard", "version": "2026.1"}
    item = mk(text, facts, supports=("policy_version",))
    assert naive_checks(item, pb, drop)["dates"] is False
    new = squeeze(item, pb)
    assert new is not None
    kept(new, *needles)


# ------------------------------------------------------------------------------ hedges
@pytest.mark.parametrize("text,needles,drop", [
    ("Claim amount 128000 CNY; the figure is unconfirmed by the insurer." + FILLER_EN,
     ["unconfirmed"], "unconfirmed"),
    ("Risk signal CLAIM_AMOUNT 128000 CNY. This figure is suspected to be inflated." + FILLER_EN,
     ["suspected"], "suspected"),
    ("索赔金额128000元；金额疑似偏高。" + FILLER_ZH, ["疑似偏高"], "疑似"),
    ("风险信号CLAIM_AMOUNT为128000元。此金额可能包含拖车费。" + FILLER_ZH, ["可能包含拖车费"], "可能"),
], ids=["en-clause", "en-anaphora", "zh-clause", "zh-anaphora"])
def test_hedges_are_kept_with_their_sentence(pb, text, needles, drop):
    item = mk(text, {"claim_amount": 128000, "signal": "CLAIM_AMOUNT"})
    checks = naive_checks(item, pb, drop)
    assert checks["hedges"] is False
    new = squeeze(item, pb)
    assert new is not None
    kept(new, *needles)


# ------------------------------------------------------------------------------ refusal and success
def test_refused_when_the_required_text_alone_does_not_fit(pb):
    item = mk("Claim amount 128000 CNY, assessed on 2026-07-16." + FILLER_EN, {"claim_amount": 128000})
    assert C.try_compress(item, None, 40, pb, count) is None
    assert C.try_compress(mk("One sentence only, 128000 CNY.", {"claim_amount": 128000}), None, 10, pb,
                          count) is None


def test_refused_when_every_clause_is_required(pb):
    item = mk("Amount 128000 CNY. Tenure 12 days. Since 2026-07-02.", {"claim_amount": 128000})
    assert C.try_compress(item, None, item["tokens"] - 1, pb, count) is None


def test_success_fits_and_records_the_transformation(pb):
    text = ("Risk signal CLAIM_AMOUNT for claim C-102, computed on 2026-07-16: claim amount 128000 CNY."
            " The amount is in the top decile for rear-end collisions of this vehicle class." + FILLER_EN)
    item = mk(text, {"claim_amount": 128000, "currency": "CNY", "signal": "CLAIM_AMOUNT"})
    item["transformations"] = [{"kind": "redaction"}]
    before = copy.deepcopy(item)
    remaining = item["tokens"] - 40
    new = C.try_compress(item, None, remaining, pb, count)
    assert new is not None
    assert item == before                                         # the input item is not modified
    assert new["tokens"] <= remaining and new["tokens"] == count(evidence_block(new))
    assert new["text_hash"] == content_hash(new["text"])
    assert "128000 CNY" in new["text"] and "canteen" not in new["text"] and C.ELISION in new["text"]
    assert new["transformations"][0] == {"kind": "redaction"}
    tr = new["transformations"][-1]
    units = C.split_units(text)
    assert tr == {"kind": "compression", "method": "extractive-sentences/1", "before_hash": item["text_hash"],
                  "after_hash": new["text_hash"], "before_tokens": item["tokens"], "after_tokens": new["tokens"],
                  "kept_sentences": tr["kept_sentences"], "dropped_sentences": len(units) - tr["kept_sentences"],
                  "checks": {"numbers": True, "negations": True, "identifiers": True, "dates": True,
                             "hedges": True}}
    assert tr["dropped_sentences"] >= 2
    # kept clauses are verbatim, in their original order
    pos = -1
    for u in units:
        if u.text in new["text"]:
            assert text.index(u.text) > pos
            pos = text.index(u.text)
    # deterministic
    assert C.try_compress(item, None, remaining, pb, count) == new


def test_splitting_respects_abbreviations_decimals_and_versions():
    units = C.split_units("Rule version 2026.1 applies, e.g. for C-102. Amount 12.5 CNY! Next line\n"
                          "第一句。第二句；第三句\nDone.")
    assert [u.text for u in units] == ["Rule version 2026.1 applies, e.g. for C-102.", "Amount 12.5 CNY!",
                                       "Next line", "第一句。", "第二句；", "第三句", "Done."]
    assert units[4].sentence == units[5].sentence != units[3].sentence


def test_label_line_is_kept_with_what_it_introduces(pb):
    text = "Not yet approved by the reviewer:\nClaim amount 128000 CNY\n\nUnrelated paragraph about lunch." \
           + FILLER_EN
    item = mk(text, {"claim_amount": 128000})
    new = squeeze(item, pb)
    kept(new, "Not yet approved by the reviewer:\nClaim amount 128000 CNY")


# ------------------------------------------------------------------------------ the C-102 pipeline
def _inv(budget=None, **kw):
    return api.investigate(api.InvestigateOptions(case="C-102", budget=budget, **kw))


def _budget_for_evidence(evidence: int) -> int:
    from ctxcli.engine.builder import budget_for

    pbk = api.read_playbook("motor-claim-review")[0]
    for total in range(evidence, evidence * 3):
        if budget_for(pbk, total)["evidence"] == evidence:
            return total
    raise AssertionError(f"no total budget gives an evidence slot of {evidence}")


def test_tight_budget_c102_needs_compression_and_still_answers(store, monkeypatch, tmp_path):
    full = _inv()
    cover = [e for e in full.pack["evidence"] if e["selected_for"] != "extra"]
    header = full.pack["slots"]["evidence_tokens_by_items"] - sum(e["tokens"] for e in full.pack["evidence"])
    last = cover[-1]     # the last item packed for coverage (pass 2 completes 'coverage: all' types)
    # an evidence slot one token short of the required items: the last one only fits compressed
    need = header + sum(e["tokens"] for e in cover)
    total = _budget_for_evidence(need - 1)
    res = _inv(total)
    p, a = res.pack, res.answer
    items = {e["object_id"]: e for e in p["evidence"]}
    comp = items[last["object_id"]]
    tr = comp["transformations"][-1]
    assert tr["kind"] == "compression" and tr["method"] == "extractive-sentences/1"
    assert tr["before_tokens"] == last["tokens"] > tr["after_tokens"] == comp["tokens"]
    assert tr["before_hash"] == last["text_hash"] and tr["after_hash"] == comp["text_hash"] != last["text_hash"]
    assert all(tr["checks"].values())
    for v in last["facts"].values():
        if isinstance(v, (str, int)) and not isinstance(v, bool):
            assert str(v) in comp["text"] or f"{v:,}" in comp["text"] if isinstance(v, int) else str(v) in comp["text"]
    assert p["slots"]["used"]["evidence"] <= p["slots"]["allocation"]["evidence"]
    assert p["missing"] == []
    assert any(ev["event"] == "evidence_selected" and ev["object_id"] == last["object_id"]
               and "compression" in ev["transformations"] for ev in res.trace)
    # the answer is still right on what the required evidence decides
    assert a["verdict"] == "complete"
    assert a["recommended_action"]["action"] == "route_to_human_reviewer"
    claims = {c["claim_id"]: c for c in a["claims"]}
    assert claims["applicable_rule_version"]["facts"]["rule_version"] == "2026.1"
    assert claims["claim_amount"]["facts"]["claim_amount"] == 128000
    assert claims["policy_tenure"]["facts"]["policy_tenure_days"] == 12
    assert claims["manual_review_required"]["condition"]["holds"] is True
    assert claims["manual_review_required"]["facts"]["review_amount_threshold"] == 100000
    assert any(comp["evidence_id"] in c["evidence"] for c in claims.values())
    # the compressed pack renders to exactly the counts it records, elision mark included
    out = api.write_outputs(res, tmp_path / "tight")
    r = run_cli(["render", out / "pack.json", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["matches_pack"] is True
    assert C.ELISION in run_cli(["render", out / "pack.json"]).stdout

    # without compression the same budget loses the manual review rule
    monkeypatch.setattr(C, "try_compress", lambda *a, **k: None)
    res2 = _inv(total)
    assert [m["type"] for m in res2.pack["missing"]] == [last["selected_for"]]
    assert res2.pack["missing"][0]["reason"] == "over_budget"
    assert res2.answer["verdict"] != "complete"


# ------------------------------------------------------------------------------ property
_PIECES = ["The amount is 128000 CNY", "Tenure was 12 days", "It was not approved", "This may be inflated",
           "Valid from 2026-01-01", "Filed as C-102", "The weather was fine", "Staff had lunch",
           "Claim review noted", "金额为128000元", "未经签字", "可能偏高", "自2026年1月1日起生效", "天气晴朗",
           "Except for fleet cases", "Note:", "## Heading", "e.g. a case", "Version 2026.1 applies"]


_FILLERS = [FILLER_EN.strip(), FILLER_ZH]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from([". ", "; ", "\n", "\n\n", "。", "；", "! "])),
                min_size=0, max_size=14), st.sampled_from(_FILLERS), st.integers(0, 14), st.integers(1, 15))
def test_any_compression_fits_is_verbatim_and_keeps_what_it_must(pb, parts, filler, at, cut):
    """Random texts with a stretch of droppable filler somewhere, squeezed by up to 15 tokens:
    every draw must compress (the filler alone is worth more than 15 tokens), fit, stay
    verbatim and keep every number, date and bound identifier."""
    parts = list(parts)
    parts.insert(min(at, len(parts)), (filler, "\n"))
    text = "".join(a + b for a, b in parts).strip()
    item = mk(text, {"claim_amount": 128000, "case_id": "C-102"})
    remaining = item["tokens"] - cut
    new = C.try_compress(item, None, remaining, pb, count)
    assert new is not None, "refused although the filler alone frees enough tokens"
    assert new["tokens"] <= remaining and new["tokens"] == count(evidence_block(new))
    assert all(new["transformations"][-1]["checks"].values())
    for piece in new["text"].split(C.ELISION):
        assert piece.strip() in text
    for v, unit, raw in C.numbers(text):
        if unit is not None or v == 128000:
            assert raw in new["text"]
    for m in C.DATE.finditer(text):
        assert m.group() in new["text"]
    if "C-102" in text:                                   # a bound identifier
        assert "C-102" in new["text"]
