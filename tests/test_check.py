"""Authoring errors a user sees: YAML errors at file:line:column (manifests, playbooks, case
files), `ctx check`, and the checks `ctx load` / `ctx investigate` run first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli

PB = "manifests/playbooks/motor-claim-review.yaml"
CASE = "examples/cases/C-102.yaml"


def _edit(proj: Path, rel: str, old: str, new: str) -> None:
    p = proj / rel
    text = p.read_text(encoding="utf-8")
    assert old in text, old
    p.write_text(text.replace(old, new, 1), encoding="utf-8")


def _line_of(proj: Path, rel: str, needle: str) -> int:
    for i, line in enumerate((proj / rel).read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def _err(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert "Traceback" not in r.output
    return r.stderr.strip()


# ------------------------------------------------------------------ 1. line numbers
def test_case_file_unknown_field_has_line_and_column(project_copy):
    _edit(project_copy, CASE, "  stop_reason: evidence_sufficient\n",
          "  stop_reason: evidence_sufficient\n  stop: now\n")
    n = _line_of(project_copy, CASE, "  stop: now")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    assert _err(r) == f"ctx: error: {CASE}:{n}:3: expected.stop: unknown field"


def test_case_file_bad_value_in_variant_list(project_copy):
    _edit(project_copy, CASE, "      scopes: [case:read]\n", "      scopes: [case:read, 'bad scope!']\n")
    n = _line_of(project_copy, CASE, "'bad scope!'")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    err = _err(r)
    assert err.startswith(f"ctx: error: {CASE}:{n}:27: variants.restricted.subject.scopes.1: "), err


def test_playbook_unknown_field_in_a_claim(project_copy):
    _edit(project_copy, PB, "    uses: [policy_tenure_days]\n", "    uses: [policy_tenure_days]\n    colour: red\n")
    n = _line_of(project_copy, PB, "    colour: red")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    assert _err(r) == f"ctx: error: {PB}:{n}:5: claims.4.colour: unknown field"


def test_playbook_model_level_error_points_at_the_item(project_copy):
    # a fact that refers to a later one: the model validator names "facts.received_normalized"
    _edit(project_copy, PB, "mapping: aliases}", "mapping: missing_documents}")
    n = _line_of(project_copy, PB, "{name: received_normalized")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    assert _err(r) == (f"ctx: error: {PB}:{n}:5: facts.received_normalized: "
                       "refers to missing_documents before it is defined")


def test_playbook_bad_expression_points_at_the_rule(project_copy):
    _edit(project_copy, PB, 'when: "len(missing_documents) == 0"', 'when: "len(missing_documents) === 0"')
    n = _line_of(project_copy, PB, "=== 0")
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    err = _err(r)
    assert err.startswith(f"ctx: error: {PB}:{n}:5: claims.documents_satisfied.when: invalid expression"), err


def test_manifest_nested_error_has_line_and_column(project_copy):
    rel = "manifests/sources/claims-core.yaml"
    _edit(project_copy, rel, "allowed_purposes: [claim_review, audit]",
          "allowed_purposes:\n  - claim_review\n  - 'no good'")
    n = _line_of(project_copy, rel, "'no good'")
    r = run_cli(["load"])
    err = _err(r)
    assert err.startswith(f"ctx: error: {rel}:{n}:5: allowed_purposes.1: "), err


def test_case_outside_the_project_hints_at_ctx_root(tmp_path, monkeypatch):
    from tests.conftest import REPO

    case = tmp_path / "elsewhere" / "C-102.yaml"
    case.parent.mkdir()
    case.write_text((REPO / CASE).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setenv("CTX_ROOT", str(tmp_path / "elsewhere"))
    r = run_cli(["investigate", str(case), "--out", tmp_path / "runs"])
    err = _err(r)
    assert "unknown playbook 'motor-claim-review'" in err and "set CTX_ROOT to the project folder" in err, err


# ------------------------------------------------------------------ 2. ctx check and the typo cases
def test_check_bundled_project_is_clean(project_copy):
    r = run_cli(["check"])
    assert r.exit_code == 0, r.output
    assert r.stdout == ""
    assert r.stderr == "checked 35 file(s): no problems\n"


def test_typo_in_expr_fact_name_fails_loudly(project_copy):
    # a derived fact whose expr misspells an earlier fact would turn a claim unknown at run time
    _edit(project_copy, PB, "  - {name: case_status, op: value, from: case_status, fact: status}\n",
          "  - {name: case_status, op: value, from: case_status, fact: status}\n"
          "  - {name: over_threshold, op: expr, expr: \"claim_amout >= review_amount_threshold\"}\n")
    n = _line_of(project_copy, PB, "claim_amout")
    r = run_cli(["check", project_copy / PB, "--json"])
    assert r.exit_code == 1, r.output
    import json

    doc = json.loads(r.stdout)
    assert doc["problems"] == [{"file": PB, "line": n, "column": 38,
                                "message": "fact over_threshold: expr uses unknown name claim_amout "
                                           "(did you mean claim_amount?)"}]
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    assert _err(r) == (f"ctx: error: {PB}:{n}:38: fact over_threshold: expr uses unknown name claim_amout "
                       "(did you mean claim_amount?)")
    assert not (project_copy / "runs").exists()


def test_typo_in_decision_rule_when_fails_loudly(project_copy):
    _edit(project_copy, PB, '    - id: manual_review\n      when: "claim_amount >= review_amount_threshold',
          '    - id: manual_review\n      when: "claim_amount >= review_amount_treshold')
    n = _line_of(project_copy, PB, "review_amount_treshold")
    r = run_cli(["check"])
    assert r.exit_code == 1, r.output
    assert r.stdout == (f"{PB}:{n}:7: decision rule manual_review: when uses unknown name "
                        "review_amount_treshold (did you mean review_amount_threshold?)\n")
    assert r.stderr == "checked 35 file(s): 1 problem(s)\n"
    # ctx load runs the same checks first (exit 2, the store is not built)
    r = run_cli(["load"])
    assert _err(r).startswith(f"ctx: error: {PB}:{n}:7: decision rule manual_review: when uses unknown name")
    assert not (project_copy / ".ctx" / "ctx.duckdb").exists()


def test_check_claim_template_edge_route_seed_and_purpose(project_copy):
    _edit(project_copy, PB, "records the case status {case_status}.", "records the case status {case_stat}.")
    _edit(project_copy, PB, "      - {edge: HAS_DOCUMENT, to: document}", "      - {edge: HAS_DOCUMENTS, to: document}")
    _edit(project_copy, PB, "    retrieve:\n      structured:\n        object_types: [risk_signal]\n      vector:\n"
                            "        object_types: [risk_signal]\n    followup:\n"
                            "      fulltext:\n        terms: [\"risk signal claim amount CNY\"]\n",
          "    retrieve:\n      structured:\n        object_types: []\n")
    _edit(project_copy, CASE, "seeds: [case:C-102]", "seeds: [cse:C-102]")
    _edit(project_copy, CASE, "purpose: claim_review", "purpose: audit")
    lines = {k: _line_of(project_copy, p, k) for k, p in (
        ("{case_stat}", PB), ("HAS_DOCUMENTS", PB), ("type: claim_amount_signal", PB),
        ("seeds: [cse:C-102]", CASE), ("purpose: audit", CASE))}
    r = run_cli(["check", project_copy / PB, project_copy / CASE])
    assert r.exit_code == 1, r.output
    assert r.stdout.splitlines() == [
        f"{PB}:{lines['{case_stat}']}:5: claim current_case_status: text uses unknown name case_stat "
        "(did you mean case_status?)",
        f"{PB}:{lines['type: claim_amount_signal']}:5: required evidence type claim_amount_signal has no "
        "retrieval route",
        f"{PB}:{lines['HAS_DOCUMENTS']}:9: path template case_documents: edge type HAS_DOCUMENTS is not "
        "declared by any source (did you mean HAS_DOCUMENT?)",
        f"{CASE}:{lines['purpose: audit']}:1: purpose audit is not served by playbook motor-claim-review "
        "(serves: claim_review)",
        f"{CASE}:{lines['seeds: [cse:C-102]']}:9: seed cse:C-102: no source declares entity type cse",
    ]


def test_check_unusable_input_exits_2(project_copy, tmp_path):
    r = run_cli(["check", tmp_path / "nope.yaml"])
    assert _err(r) == f"ctx: error: {tmp_path / 'nope.yaml'}: no such file or folder"
    other = tmp_path / "other.yaml"
    other.write_text("hello: world\n", encoding="utf-8")
    r = run_cli(["check", other])
    assert _err(r).startswith(f"ctx: error: {other}: not a source manifest, playbook, case file or tool registry")


def test_check_reports_schema_errors_as_problems(project_copy):
    _edit(project_copy, CASE, "  stop_reason: evidence_sufficient\n", "  stop_reason: evidence_sufficient\n  stop: x\n")
    n = _line_of(project_copy, CASE, "  stop: x")
    r = run_cli(["check", project_copy / CASE])
    assert r.exit_code == 1
    assert r.stdout == f"{CASE}:{n}:3: expected.stop: unknown field\n"


# ------------------------------------------------------------------ 3. honest gap reasons
def _investigate(*args):
    from ctxcli import api

    return api.investigate(api.InvestigateOptions(case="C-102", **dict(args)))


def test_missing_type_says_withheld_for_access_with_the_scope_needed(store):
    res = _investigate(("variant", "restricted"))
    gaps = {m["type"]: m for m in res.pack["missing"]}
    pv = gaps["policy_version"]
    assert pv["reason"] == "withheld_for_access"
    assert pv["withheld"]["needs_scopes"] == ["policy:read"] and pv["withheld"]["allowed_purposes"] == []
    assert gaps["document_status"]["withheld"]["needs_scopes"] == ["document:read", "policy:read"]  # aliases: rules
    assert gaps["claim_amount_signal"]["withheld"]["needs_scopes"] == ["fraud:read", "risk:read"]  # + SIU note
    # no id, title or content of a withheld object in the gap entries or the rendered gaps
    from ctxcli.engine.render import gaps_text

    text = gaps_text(res.pack)
    # (the hop's words make the gaps long: the compact form, judgments left out, is chosen)
    assert "- Missing policy_version (required, withheld for access (3 candidate(s) need scope policy:read; " \
           "the entity BOUND_TO leads to at hop 1 from case:C-102 is declared only by a source withheld from " \
           "you: it needs scope policy:read))." in text
    for secret in ("RULE-MCS", "SIG-C102", "DOC-C102", "SIU"):
        assert secret not in repr(res.pack["missing"]) and secret not in text
    assert {m["type"]: m["reason"] for m in res.answer["missing_evidence"]}["policy_version"] == "withheld_for_access"


def test_other_tenant_objects_never_make_a_type_withheld(store):
    # tenant-other holds a C-102 rule and signal: with every scope the type is found; the
    # other tenant's objects are rejected by the tenant gate and hint at nothing
    res = _investigate()
    assert res.pack["missing"] == []


def test_unknown_claim_names_only_the_missing_inputs(store):
    # no policy:read: the rules are withheld, the received documents are admitted; the claim
    # rests on missing_documents (required_documents - received types): only the rule is missing
    res = _investigate(("scopes", ["case:read", "document:read", "risk:read"]))
    gaps = {m["type"]: m for m in res.pack["missing"]}
    assert list(gaps) == ["policy_version", "manual_review_rule"]
    assert {m["reason"] for m in gaps.values()} == {"withheld_for_access"}
    assert "document_status" in {t for e in res.pack["evidence"] for t in e["supports"]}
    claim = {c["claim_id"]: c for c in res.answer["claims"]}["documents_satisfied"]
    assert claim["status"] == "unknown"
    assert claim["text"].startswith("Unknown: the pack lacks evidence for policy_version (")
    assert "document_status" not in claim["text"]


# ------------------------------------------------------------------ 4. expression language
@pytest.mark.parametrize("src, want", [
    ("round(2.5)", 3), ("round(-2.5)", -3), ("round(1.005, 2)", 1.01), ("round(1234.5678, -2)", 1200),
    ("round(x, 1)", 0.3), ("17 % 5", 2), ("-7 % 3", 2), ("7.5 % 2", 1.5),
    ("pct_change(80, 100)", 25.0), ("pct_change(200, 150)", -25.0), ("pct_change(-50, -25)", 50.0),
    ("round(pct_change(3, 4), 1)", 33.3), ("round(pct_change(revenue_prev, revenue), 1) >= 10", True),
])
def test_expression_round_modulo_pct_change(src, want):
    from ctxcli.answer import expr

    got = expr.evaluate(src, {"x": 0.25, "revenue_prev": 1000, "revenue": 1100})
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("src, msg", [
    ("5 % 0", "division by zero"), ("pct_change(0, 1)", "pct_change: the base value is zero"),
    ("round(1, 1.5)", "round: decimals must be an integer from -12 to 12, got 1.5"),
    ("round('a')", "round: expected a number, got 'a'"), ("'%s' % 1", "expected a number, got '%s'"),
])
def test_expression_errors(src, msg):
    from ctxcli.answer import expr

    with pytest.raises(expr.ExprError) as e:
        expr.evaluate(src, {})
    assert str(e.value) == msg


# ------------------------------------------------------------------ 5. case parameters
PARAMS_PB = """params:
  threshold: {type: integer, required: true}
  amount_signal: {type: string, default: CLAIM_AMOUNT}
  period: {type: string}
  review_term: {type: string, default: tenure}
  ruleset: {type: string, default: motor-claim-standard}

path_templates:
  - id: case_ruleset
    start: case
    seeds: ["ruleset:{param.ruleset}"]
"""


def _params_project(proj: Path) -> None:
    _edit(proj, PB, "path_templates:\n  - id: case_ruleset\n    start: case\n", PARAMS_PB)
    _edit(proj, PB, "where: {signal: CLAIM_AMOUNT}}\n  - {name: claim_currency",
          "where: {signal: \"{param.amount_signal}\"}}\n  - {name: claim_currency")
    _edit(proj, PB, "  - {name: case_status, op: value, from: case_status, fact: status}\n",
          "  - {name: case_status, op: value, from: case_status, fact: status}\n"
          "  - {name: above_param_threshold, op: expr, expr: \"claim_amount >= param.threshold\"}\n")
    _edit(proj, PB, '        terms: ["manual review claim amount policy tenure"]',
          '        terms: ["manual review claim amount policy {param.review_term}"]')
    _edit(proj, PB, 'text: "The claim amount is {claim_amount} {claim_currency}."\n    status: fact\n'
                    '    uses: [claim_amount, claim_currency]',
          'text: "The claim amount is {claim_amount} {claim_currency} (review period {param.period})."\n'
          '    status: fact\n    uses: [claim_amount, claim_currency, above_param_threshold]')
    _edit(proj, CASE, "business_keys: [C-102]\n",
          "business_keys: [C-102]\nparams: {threshold: 100000, period: \"2026-07\"}\n")
    _edit(proj, CASE, "variants:\n",
          "variants:\n  strict:\n    params: {threshold: 200000, amount_signal: POLICY_TENURE_DAYS, "
          "review_term: threshold}\n")


def test_params_reach_where_terms_seeds_expr_and_claim_text(project_copy):
    from ctxcli import api

    _params_project(project_copy)
    r = run_cli(["check", project_copy / PB, project_copy / CASE])
    assert r.exit_code == 0, r.output
    # C-104 uses the same playbook without the required parameter
    r = run_cli(["check", project_copy / "examples/cases/C-104.yaml"])
    assert r.stdout == ("examples/cases/C-104.yaml:3:1: parameter threshold is required by playbook "
                        "motor-claim-review but not given\n")
    res = api.investigate(api.InvestigateOptions(case="C-102"))
    req = res.pack["request"]
    assert req["params"] == {"amount_signal": "CLAIM_AMOUNT", "period": "2026-07", "review_term": "tenure",
                             "ruleset": "motor-claim-standard", "threshold": 100000}
    assert req["seeds"] == ["case:C-102", "ruleset:motor-claim-standard"]          # path-template seed
    texts = [q["text"] for p in res.pack["rounds"] for q in p["queries"]
             if q["channel"] == "fulltext" and q["evidence_type"] == "manual_review_rule"]
    assert texts[0].startswith("manual review claim amount policy tenure")      # full-text term
    facts = res.answer["derived_facts"]
    assert facts["claim_amount"]["value"] == 128000                                 # where filter
    assert facts["above_param_threshold"]["value"] is True                          # expression
    claim = {c["claim_id"]: c for c in res.answer["claims"]}["claim_amount"]
    assert claim["text"] == "The claim amount is 128000 CNY (review period 2026-07)."   # claim text

    strict = api.investigate(api.InvestigateOptions(case="C-102", variant="strict"))
    assert strict.pack["request"]["params"]["threshold"] == 200000
    assert strict.pack["request"]["params"]["period"] == "2026-07"                  # from the case
    texts = [q["text"] for p in strict.pack["rounds"] for q in p["queries"]
             if q["channel"] == "fulltext" and q["evidence_type"] == "manual_review_rule"]
    assert texts[0].startswith("manual review claim amount policy threshold")
    sfacts = strict.answer["derived_facts"]
    assert "claim_amount" not in sfacts        # the where filter now asks for the tenure signal
    assert {c["claim_id"]: c for c in strict.answer["claims"]}["claim_amount"]["status"] == "unknown"

    # replay uses the recorded params: identical
    out = api.write_outputs(strict, project_copy / "runs" / "strict")
    r = run_cli(["replay", out / "pack.json"])
    assert r.exit_code == 0, r.output


def test_params_are_checked(project_copy):
    _params_project(project_copy)
    _edit(project_copy, CASE, 'params: {threshold: 100000, period: "2026-07"}',
          'params: {threshold: "lots", period: "2026-07", store: S-12}')
    _edit(project_copy, PB, "(review period {param.period})", "(review period {param.perod})")
    r = run_cli(["check", project_copy / PB, project_copy / CASE])
    assert r.exit_code == 1
    n_pb = _line_of(project_copy, PB, "{param.perod}")
    n_case = _line_of(project_copy, CASE, "threshold: \"lots\"")
    assert r.stdout.splitlines() == [
        f"{PB}:{n_pb}:5: claim claim_amount: text uses undeclared parameter param.perod",
        f"{CASE}:{n_case}:10: parameter threshold: expected integer, got 'lots'",
        f"{CASE}:{n_case}:48: parameter store is not declared by playbook motor-claim-review "
        "(declares: amount_signal, period, review_term, ruleset, threshold)",
    ]
    r = run_cli(["investigate", "C-102", "--out", project_copy / "runs"])
    assert _err(r).startswith(f"ctx: error: {PB}:{n_pb}:5: claim claim_amount: text uses undeclared parameter")


# ------------------------------------------------------------------ 6. question-aware planning
def test_salient_terms_of_a_question():
    from ctxcli.engine.plan import salient_terms

    assert salient_terms('Why did "pool exhaustion" hit payment-api at 10:02 after the release?') == (
        ["pool", "exhaustion", "payment_api", "payment", "api", "10_02", "10", "02"], ["hit", "release"])
    # Han text: the same bigram shadow as the index, cut at function words first (为什么 is
    # one: no 付为/为什/什么/么下); quoted with CJK quotes, a phrase is kept whole
    assert salient_terms("支付为什么下降？「连接池」") == (["连接", "接池"], ["支付", "下降"])


def test_question_terms_join_fulltext_queries_and_are_recorded(store, tmp_path):
    from ctxcli import api

    res = api.investigate(api.InvestigateOptions(case="C-102"))
    q = {x["evidence_type"]: x for x in res.pack["rounds"][0]["queries"] if x["channel"] == "fulltext"}
    # "human" and "review" are in manual_review_rule's judgment; "human" is in no declared term
    assert "human" in q["manual_review_rule"]["question_terms"]
    assert "human" in q["manual_review_rule"]["terms"] and q["manual_review_rule"]["text"].endswith(
        " ".join(q["manual_review_rule"]["question_terms"]))
    # "satisfy" is in no type's vocabulary: it joins no query
    assert all("satisfy" not in x.get("question_terms", []) for x in q.values())
    # the trace's plan event carries the same queries
    plan1 = [e for e in res.trace if e["event"] == "plan_created"][0]
    assert plan1["question_terms"][q["manual_review_rule"]["query_id"]] == q["manual_review_rule"]["question_terms"]


# ------------------------------------------------------------------ 7. heading-only preambles
@pytest.mark.parametrize("body, anchors", [
    ("# Payment runbook\n\n## Steps\nRestart the pool.\n", ["steps"]),
    ("# Payment runbook\n\n### Revision\n\n## Steps\nRestart the pool.\n", ["steps"]),
    ("# Payment runbook\nFor payment-api.\n\n## Steps\nRestart the pool.\n", ["overview", "steps"]),
])
def test_heading_only_preamble_is_not_an_object(body, anchors):
    from ctxcli.load.parse import split_markdown

    assert [a for a, *_ in split_markdown(body, 5)] == anchors


# ------------------------------------------------------------------ 7. section-level facts
HANDBOOK = "sources/claims-handbook/motor-claims-handbook-2026.md"


def test_section_facts_block_overrides_document_facts(project_copy):
    import duckdb

    text = (project_copy / HANDBOOK).read_text(encoding="utf-8")
    head = text.index("\n## Scope")
    # a section of its own: a facts block overriding one document fact and adding one
    text = (text[:head] + "\n## Exceptions\n\nClaims under 5000 CNY skip the review.\n\n```facts\n"
            "review_amount_threshold: 5000\nexception: small_claims\n```\n" + text[head:])
    (project_copy / HANDBOOK).write_text(text, encoding="utf-8")
    r = run_cli(["load", "--json"])
    assert r.exit_code == 0, r.output
    con = duckdb.connect(str(project_copy / ".ctx" / "ctx.duckdb"), read_only=True)
    rows = dict(con.execute("SELECT object_id, facts FROM objects WHERE object_id LIKE 'HB-MOTOR-CLAIMS-2026#%'"
                            ).fetchall())
    content = dict(con.execute("SELECT object_id, content FROM objects").fetchall())
    con.close()
    import json

    exc = [k for k in rows if k.endswith("#exceptions")]
    assert exc, sorted(rows)
    f_exc = json.loads(rows[exc[0]])
    other = [json.loads(v) for k, v in rows.items() if not k.endswith("#exceptions")]
    assert f_exc["exception"] == "small_claims"
    assert f_exc.get("review_amount_threshold") == 5000
    assert all("exception" not in f for f in other)
    assert "```facts" not in content[exc[0]] and content[exc[0]] == "Claims under 5000 CNY skip the review."


def test_section_facts_block_error_has_its_line(project_copy):
    text = (project_copy / HANDBOOK).read_text(encoding="utf-8")
    head = text.index("\n## Scope")
    text = text[:head] + "\n## Exceptions\n\nText.\n\n```facts\n- not a mapping\n```\n" + text[head:]
    (project_copy / HANDBOOK).write_text(text, encoding="utf-8")
    n = text[: text.index("```facts")].count("\n") + 1
    r = run_cli(["load"])
    assert _err(r) == f"ctx: error: {HANDBOOK}:{n}: a facts block must be a YAML mapping"


def test_param_on_the_command_line_is_typed_recorded_and_replayed(project_copy):
    import json

    _params_project(project_copy)
    out = project_copy / "runs" / "cli"
    r = run_cli(["investigate", "C-102", "--param", "threshold=200000", "--param", "period=2026-08",
                 "--out", out, "--json"])
    assert r.exit_code == 0, r.output
    pack = json.loads((out / "pack.json").read_text(encoding="utf-8"))
    assert pack["request"]["params"]["threshold"] == 200000 and pack["request"]["params"]["period"] == "2026-08"
    ans = json.loads((out / "answer.json").read_text(encoding="utf-8"))
    assert ans["derived_facts"]["above_param_threshold"]["value"] is False
    assert run_cli(["replay", out / "pack.json"]).exit_code == 0
    r = run_cli(["investigate", "C-102", "--param", "threshold=lots", "--out", project_copy / "runs" / "x"])
    assert _err(r) == "ctx: error: parameter threshold: expected integer, got 'lots'"
    r = run_cli(["investigate", "C-102", "--param", "Threshold", "--out", project_copy / "runs" / "x"])
    assert _err(r) == ("ctx: error: --param 'Threshold': expected NAME=VALUE with a lower-case NAME (playbook "
                       "motor-claim-review declares: amount_signal, period, review_term, ruleset, threshold)")


def test_check_names_a_linking_entity_type_no_source_declares(project_copy):
    """A typo in a manifest's linking.entity_types links nothing, silently, at load: check says so."""
    man = "manifests/sources/shop-incidents.yaml"
    r = run_cli(["check", project_copy / man])
    assert r.exit_code == 0, r.output
    _edit(project_copy, man, "  entity_types: [service]\n", "  entity_types: [servce]\n")
    n = _line_of(project_copy, man, "  entity_types: [servce]")
    r = run_cli(["check", project_copy / man])
    assert r.exit_code == 1, r.output
    assert r.stdout == (f"{man}:{n}:18: linking: no source declares entity type servce "
                        "(did you mean service?)\n")
