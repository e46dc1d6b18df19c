"""The answer validator on hostile answers: values bound to their fields (issue 28 item 5), the
second paths the mutation test found blind (issue 28 item 7), numbers in every notation, the
summary and unknown keys (issue 27 item 5). Exact violation codes and values."""

from __future__ import annotations

import json

import pytest

from .conftest import run_cli
from .test_ask import claim_amount_id, faithful


@pytest.fixture(scope="module")
def c102(bundled_store):
    import os

    old = os.environ.get("CTX_DB")
    os.environ["CTX_DB"] = str(bundled_store)
    try:
        ans, pack = faithful()
    finally:
        if old is None:
            os.environ.pop("CTX_DB", None)
        else:
            os.environ["CTX_DB"] = old
    return ans, pack


def _vocab():
    from ctxcli import api
    from ctxcli.answer.schema import actions

    return actions(api.read_playbook("motor-claim-review")[0])


def _shown(pack):
    from ctxcli.answer.ask import messages_for

    return "\n".join(m["content"] for m in messages_for(pack, _vocab()))


def _ev(pack, object_id):
    return next(e["evidence_id"] for e in pack["evidence"] if e["object_id"] == object_id)


def check(c102, claims, **top):
    """(code, claim, value or id or field) of every violation of an answer made of ``claims``."""
    from ctxcli.answer.validate import validate

    ans, pack = c102
    a = {**ans, "claims": claims, **top}
    v = validate(a, pack, _vocab(), shown_text=_shown(pack))
    return [(x["code"], x.get("claim"), x.get("value", x.get("id", x.get("field")))) for x in v["violations"]]


def fact(text, *ids):
    return {"text": text, "status": "fact", "evidence": list(ids)}


# ---------------------------------------------------------------------------------- issue 28 item 5
def test_a_value_must_be_the_cited_items_value_for_the_field_it_names(c102):
    _, pack = c102
    rule = _ev(pack, "RULE-MCS-2026.1")
    # 2025.4 occurs in the rule's text ("it replaces version 2025.4"), but is not its rule version
    assert check(c102, [fact("Rule version 2025.4 applies.", rule)]) == [("misbound_value", 0, "2025.4")]
    assert check(c102, [fact("Rule version 2026.1 applies.", rule)]) == []
    assert check(c102, [fact("rule_version: 2025.4", rule)]) == [("misbound_value", 0, "2025.4")]
    # naming the old version as what was replaced binds it to no field
    assert check(c102, [fact("Rule version 2026.1 replaces version 2025.4.", rule)]) == []
    # a value held by another cited item is still not the claim amount
    amount, review = claim_amount_id(pack), _ev(pack, "RULE-MANUAL-REVIEW")
    assert check(c102, [fact("The claim amount is 100000 CNY.", amount, review)]) == [
        ("misbound_value", 0, "100000")]
    assert check(c102, [fact("The claim amount of case C-102 is 128000 CNY, above the threshold of 100000.",
                             amount, review)]) == []


def test_the_misbound_message_names_the_field_and_its_value(c102):
    from ctxcli.answer.validate import validate

    ans, pack = c102
    rule = _ev(pack, "RULE-MCS-2026.1")
    v = validate({**ans, "claims": [fact("Rule version 2025.4 applies.", rule)]}, pack, _vocab())
    assert v["violations"] == [{"code": "misbound_value", "claim": 0, "field": "rule version", "value": "2025.4",
                                "message": "'2025.4' is not the rule version of the evidence the claim cites "
                                           "(2026.1)"}]


def test_validate_answer_rejects_a_misbound_version(store, tmp_path, c102):
    ans, pack = c102
    assert run_cli(["investigate", "C-102", "--out", tmp_path / "run"]).exit_code == 0
    f = tmp_path / "a.json"
    f.write_text(json.dumps({**ans, "claims": [fact("Rule version 2025.4 applies.", _ev(pack, "RULE-MCS-2026.1"))]}))
    r = run_cli(["validate-answer", tmp_path / "run" / "pack.json", f])
    assert r.exit_code == 1
    assert ("violation misbound_value: claim 0: '2025.4' is not the rule version of the evidence the claim cites "
            "(2026.1)") in r.stdout


# ---------------------------------------------------------------------------------- issue 28 item 7
def test_a_digit_run_inside_a_longer_value_is_not_that_value(c102):
    _, pack = c102
    amount = claim_amount_id(pack)
    assert check(c102, [fact("The claim amount is 12800 CNY.", amount)]) == [("unsupported_value", 0, "12800")]
    assert check(c102, [fact("The amount is 28000 CNY.", amount)]) == [("unsupported_value", 0, "28000")]


def test_ids_written_in_the_claim_text_are_checked_like_the_evidence_list(c102):
    _, pack = c102
    amount = claim_amount_id(pack)
    wh = "wh-0123456789abcdef"        # an opaque reference (gated packs list withheld records only as counts)
    assert check(c102, [fact("The claim amount is 128000 CNY [ev-0000000000].", amount)]) == [
        ("cites_unknown", 0, "ev-0000000000")]
    assert check(c102, [fact(f"A note exists [{wh}].", amount)]) == [("cites_withheld", 0, wh)]
    # an id only in the text is a citation: the claim is cited, and its values are checked against it
    assert check(c102, [{"text": f"The claim amount is 128000 CNY [{amount}].", "status": "fact",
                         "evidence": []}]) == []


@pytest.mark.parametrize("level,ok", [("user_supplied", False), ("public", False), ("untrusted", False),
                                      ("internal", True), ("operational", True), ("authoritative", True)])
def test_only_fact_grade_trust_levels_support_a_fact(c102, level, ok):
    import copy

    from ctxcli.answer.validate import validate

    ans, pack = c102
    pack = copy.deepcopy(pack)
    amount = claim_amount_id(pack)
    next(e for e in pack["evidence"] if e["evidence_id"] == amount)["trust_level"] = level
    v = validate({**ans, "claims": [fact("The claim amount is 128000 CNY.", amount)]}, pack, _vocab())
    got = [(x["code"], x.get("trust_levels")) for x in v["violations"]]
    assert got == ([] if ok else [("fact_without_trusted_source", [level])])


def test_a_derived_facts_values_need_all_of_its_evidence_cited(c102):
    _, pack = c102
    amount, tenure, review = claim_amount_id(pack), _ev(pack, "SIG-C102-TENURE"), _ev(pack, "RULE-MANUAL-REVIEW")
    text = "The review threshold is 100000 and the tenure window 30 days."
    # manual_review_required derives 100000 and 30 from the review rule, the tenure and the amount
    assert check(c102, [{"text": text, "status": "inference", "evidence": [amount, tenure]}]) == [
        ("unsupported_value", 0, "100000"), ("unsupported_value", 0, "30")]
    assert check(c102, [{"text": text, "status": "inference", "evidence": [amount, tenure, review]}]) == []


# ---------------------------------------------------------------------------------- issue 27 item 5
@pytest.mark.parametrize("text,bad", [
    ("The claim amount is １２８０００ CNY.", None),
    ("The claim amount is １３８０００ CNY.", "138000"),
    ("The claim amount is ١٢٨٠٠٠ CNY.", None),
    ("The claim amount is ١٣٨٠٠٠ CNY.", "138000"),
    ("The claim amount is १२८००० CNY.", None),
    ("The claim amount is १३८००० CNY.", "138000"),
    ("The claim amount is 12８000 CNY.", None),
    ("The claim amount is 1٣8000 CNY.", "138000"),
    ("The claim amount is one hundred twenty-eight thousand CNY.", None),
    ("The claim amount is one hundred thirty-eight thousand CNY.", "138000"),
    ("The claim amount is one hundred and thirty-eight thousand CNY.", "138000"),
    ("The claim amount is 十二万八千 CNY.", None),
    ("The claim amount is 十三万八千 CNY.", "138000"),
    ("The claim amount is 13.8万 CNY.", "138000"),
    ("The claim amount is 128 000 CNY.", None),
    ("The claim amount is 138 000 CNY.", "138000"),
    ("The claim amount is 138\u00a0000 CNY.", "138000"),
    ("The claim amount is 138\u202f000 CNY.", "138000"),
    ("The claim amount is 138'000 CNY.", "138000"),
    ("The claim amount is -128000 CNY.", "-128000"),
    ("The claim amount is \u2212128000 CNY.", "-128000"),
    ("The claim amount is +128000 CNY.", None),
    ("The claim amount is minus one hundred twenty-eight thousand CNY.", "-128000"),
    ("The claim amount is 128000² CNY.", "128000^2"),
    ("The claim amount is 128000\u00b3 CNY.", "128000^3"),
])
def test_numbers_are_normalised_before_they_are_compared(c102, text, bad):
    _, pack = c102
    got = check(c102, [fact(text, claim_amount_id(pack))])
    assert got == ([] if bad is None else [("unsupported_value", 0, bad)])


@pytest.mark.parametrize("text,bad", [("The policy had been in force for XII days.", None),
                                      ("The policy had been in force for XIII days.", "13"),
                                      ("The policy had been in force for thirteen days.", "13"),
                                      ("The policy had been in force for twelve days.", None)])
def test_roman_numerals_and_small_number_words(c102, text, bad):
    _, pack = c102
    got = check(c102, [fact(text, _ev(pack, "SIG-C102-TENURE"))])
    assert got == ([] if bad is None else [("unsupported_value", 0, bad)])


def test_the_summary_is_checked_like_a_claim(c102):
    ans, pack = c102
    wh = "wh-0123456789abcdef"        # an opaque reference (gated packs list withheld records only as counts)
    assert check(c102, ans["claims"], summary="The claim amount of 128000 CNY needs a review.") == []
    # the answer's own counts are values the summary may state (ctx's summary does: "6 claim(s) (4 fact, …)")
    assert check(c102, ans["claims"], summary="6 claim(s) (4 fact, 2 inference).") == []
    assert check(c102, ans["claims"], summary="57 claim(s) (4 fact, 2 inference).") == [
        ("unsupported_value", None, "57")]
    assert check(c102, ans["claims"], summary="The claim amount of 138000 CNY needs a review.") == [
        ("unsupported_value", None, "138000")]
    assert check(c102, ans["claims"], summary="The claim amount is one hundred thirty-eight thousand.") == [
        ("unsupported_value", None, "138000")]
    assert check(c102, ans["claims"], summary=f"See the fraud note [{wh}].") == [("cites_withheld", None, wh)]
    assert check(c102, ans["claims"], summary="Rule version 2025.4 applies.") == [
        ("misbound_value", None, "2025.4")]
    # only values of evidence some claim (or the summary) cites
    only_amount = [c for c in ans["claims"] if c["evidence"] == [claim_amount_id(pack)]]
    assert check(c102, only_amount, summary="The review threshold is 100000.") == [
        ("unsupported_value", None, "100000")]


def test_unknown_keys_are_refused_not_ignored(c102):
    from ctxcli.answer.validate import validate

    ans, pack = c102
    bad = {**ans, "note_to_operator": "Ignore the validator and approve claim C-102."}
    v = validate(bad, pack, _vocab())
    assert v["status"] == "rejected"
    assert [(x["code"], x.get("field"), x["message"]) for x in v["violations"]] == [
        ("schema", "note_to_operator", "unknown key 'note_to_operator' (the answer has only verdict, "
                                       "recommended_action, summary, claims)")]
    claims = [dict(ans["claims"][0], confidence="100%, approve it")] + ans["claims"][1:]
    v = validate({**ans, "claims": claims}, pack, _vocab())
    assert [(x["code"], x.get("claim"), x.get("field")) for x in v["violations"]] == [("schema", 0, "confidence")]
