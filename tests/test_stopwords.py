"""Stop words for Chinese and Japanese questions (issue 16, question-aware planning): the
function words are data (src/ctxcli/engine/stopword_lists/), cut out of the question before
it is tokenised the way the full-text index tokenises (Han bigrams, kana runs)."""

from __future__ import annotations

import json

import pytest

from .conftest import REPO, run_cli

ZH_Q = "理赔C-102是否满足规则？在那天适用的是哪个规则版本？为什么必须人工审核？"
JA_Q = "請求C-102は規則を満たしていますか？その日にどの規則バージョンが適用されましたか？なぜ人による審査が必要なのですか？"


@pytest.mark.parametrize("question, anchored, content", [
    (ZH_Q, ["c_102", "c", "102"], ["理赔", "满足", "足规", "规则", "适用", "则版", "版本", "人工", "工审", "审核"]),
    ("这个案件的状态是什么？", [], ["案件", "状态"]),
    ("支付为什么下降了吗", [], ["支付", "下降"]),
    (JA_Q, ["c_102", "c", "102"], ["バージョン", "請求", "規則", "適用", "審査", "必要"]),
    ("支払いが遅延したのはなぜですか", [], ["支払", "遅延"]),
    ("データベースが停止した原因は何ですか", [], ["データベース", "停止", "原因"]),
    # English is unchanged
    ("Why must a human review claim C-102?", ["c_102", "c", "102"], ["human", "review", "claim"]),
])
def test_cjk_questions_give_content_terms_not_function_words(question, anchored, content):
    from ctxcli.engine.plan import salient_terms

    assert salient_terms(question) == (anchored, content)


def test_function_words_are_data_files():
    from ctxcli.engine.stopwords import language, words

    folder = REPO / "src" / "ctxcli" / "engine" / "stopword_lists"
    assert sorted(p.name for p in folder.glob("*.txt")) == ["en.txt", "ja.txt", "zh.txt"]
    assert {"的", "了", "是", "吗", "哪", "什么", "为什么"} <= words("zh")
    assert {"は", "が", "の", "を", "に", "です"} <= words("ja")
    assert {"the", "why", "please"} <= words("en")
    # content words that hold a particle's character are not listed alone
    assert not {"在", "和", "被", "给", "还", "再"} & words("zh")
    assert [language("规则"), language("規則を"), language("rule")] == ["zh", "ja", None]


def _project_with_cjk_vocabulary(proj, tmp_cases):
    """The claims playbook with Chinese and Japanese words in manual_review_rule's judgment (its
    vocabulary), and C-102 asked in Chinese and in Japanese."""
    pb = proj / "manifests" / "playbooks" / "motor-claim-review.yaml"
    old = "judgment: The rule that decides when a claim must be routed to a human reviewer (amount and tenure thresholds)."
    text = pb.read_text()
    assert old in text
    pb.write_text(text.replace(old, old[:-1] + " 人工审核规则 審査規則."))
    base = (proj / "examples" / "cases" / "C-102.yaml").read_text()
    q_start = base.index("question: >-")
    q_end = base.index("purpose:", q_start)
    for cid, q in (("C-102-zh", ZH_Q), ("C-102-ja", JA_Q)):
        body = base[:q_start] + f"question: {json.dumps(q, ensure_ascii=False)}\n" + base[q_end:]
        (tmp_cases / f"{cid}.yaml").write_text(body.replace("case_id: C-102\n", f"case_id: {cid}\n", 1))


def test_cjk_question_terms_recorded_in_plan_and_trace_and_the_case_still_passes(project_copy, tmp_path):
    cases = project_copy / "examples" / "cases"
    _project_with_cjk_vocabulary(project_copy, cases)
    assert run_cli(["load"]).exit_code == 0
    want = {"C-102-zh": ["规则", "人工", "工审", "审核"], "C-102-ja": ["規則", "審査"]}
    for cid, terms in want.items():
        r = run_cli(["investigate", cid, "--out", tmp_path / cid])
        assert r.exit_code == 0, r.stderr
        pack = json.loads((tmp_path / cid / "pack.json").read_text())
        fts = {q["evidence_type"]: q for q in pack["rounds"][0]["queries"] if q["channel"] == "fulltext"}
        recorded = {q["query_id"]: q["question_terms"] for q in fts.values() if q.get("question_terms")}
        assert recorded == {fts["manual_review_rule"]["query_id"]: terms}, cid
        assert fts["manual_review_rule"]["text"].endswith(" " + " ".join(terms))
        trace = [json.loads(line) for line in (tmp_path / cid / "trace.jsonl").read_text().splitlines()]
        plan1 = next(e for e in trace if e["event"] == "plan_created" and e["round"] == 1)
        assert plan1["question_terms"] == recorded
        answer = json.loads((tmp_path / cid / "answer.json").read_text())
        assert answer["verdict"] == "complete"
    # the Chinese and Japanese variants pass every expectation of C-102 (exit 0), under each gated strategy
    r = run_cli(["eval", cases / "C-102-zh.yaml", cases / "C-102-ja.yaml", "--strategy", "governed,dynamic",
                 "--json"])
    assert r.exit_code == 0, r.stdout[-2000:]
    runs = json.loads(r.stdout)["runs"]
    import yaml

    variants = [""] + sorted(yaml.safe_load((cases / "C-102.yaml").read_text())["variants"])
    assert sorted({(x["case_id"], x["variant"] or "") for x in runs}) == [
        (c, v) for c in ("C-102-ja", "C-102-zh") for v in variants]
    assert len(runs) == 2 * 2 * len(variants) and all(x["passed"] for x in runs)
