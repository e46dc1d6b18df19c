"""The deterministic reranker (issue 52 item 4; engine/rerank.py): each feature on both sides of
its edge, the order it gives, nothing changed when it is off, the gates still judging every
candidate when it is on, and bad playbook weights refused in one line. Each guard here is a
planted bug in tests/mutants.py."""

from __future__ import annotations

import pytest

from ctxcli import api
from ctxcli.engine.rerank import features, ordered, rerank, score
from ctxcli.engine.retrieve import Candidate
from ctxcli.errors import InputError
from ctxcli.models.playbook import Rerank, RerankWeights

from .test_boundaries import AS_OF_US, obj

DAY = 86_400 * 1_000_000


def cand(doc_id: int = 1, channels: tuple[str, ...] = ("fulltext",), rrf: float = 1 / 61) -> Candidate:
    return Candidate(doc_id, {ch: 1 for ch in channels}, {"q1": 1}, rrf)


def feats(c: Candidate | None = None, ids: tuple[str, ...] = (), days: int = 30, **kw) -> dict[str, float]:
    return features(c or cand(), obj(**kw), identifiers=frozenset(ids), as_of_us=AS_OF_US, freshness_days=days)


# ------------------------------------------------------------------------------ features
def test_agreement_counts_the_channels_beyond_the_first():
    assert feats(cand(channels=("fulltext",)))["agreement"] == 0.0
    assert feats(cand(channels=("fulltext", "graph")))["agreement"] == 1.0
    assert feats(cand(channels=("fulltext", "graph", "structured")))["agreement"] == 2.0


def test_exact_id_matches_the_object_id_subject_or_a_key_exactly():
    assert feats(ids=("OBJ-1",))["exact_id"] == 1.0
    assert feats(ids=("case:C-1",))["exact_id"] == 1.0           # its subject
    assert feats(ids=("K-7",), keys=["K-7"])["exact_id"] == 1.0  # one of its keys
    # no prefix, substring or case-folded match
    assert feats(ids=("case:C-",))["exact_id"] == 0.0
    assert feats(ids=("case:C-10",))["exact_id"] == 0.0
    assert feats(ids=("obj-1",))["exact_id"] == 0.0
    assert feats(ids=())["exact_id"] == 0.0
    assert feats(ids=("case:C-1",), subject_id=None)["exact_id"] == 0.0


def test_authority_follows_the_trust_order_in_equal_steps():
    assert feats(trust_level="authoritative")["authority"] == 1.0
    assert feats(trust_level="operational")["authority"] == 0.8
    assert feats(trust_level="public")["authority"] == 0.2
    assert feats(trust_level="untrusted")["authority"] == 0.0
    assert feats(trust_level="no-such-level")["authority"] == 0.0


def test_freshness_is_one_at_as_of_and_one_half_at_freshness_days():
    assert feats(observed_us=AS_OF_US)["freshness"] == 1.0
    assert feats(observed_us=AS_OF_US + DAY)["freshness"] == 1.0          # observed after as_of: not older
    assert feats(observed_us=AS_OF_US - 30 * DAY)["freshness"] == 0.5
    assert feats(observed_us=AS_OF_US - 30 * DAY, days=10)["freshness"] == 0.25
    assert feats(observed_us=AS_OF_US - 1)["freshness"] == 1.0            # 1 µs: rounded to 6 digits
    older = feats(observed_us=AS_OF_US - 31 * DAY)["freshness"]
    assert older < 0.5 and older == round(30 / 61, 6)


def test_the_score_is_rrf_plus_the_weighted_features_rounded():
    c = cand(channels=("fulltext", "graph"), rrf=round(2 / 61, 12))
    f = {"agreement": 1.0, "exact_id": 1.0, "authority": 0.8, "freshness": 0.5}
    spec = Rerank(enabled=True, weights=RerankWeights(agreement=0.004, exact_id=0.02, authority=0.004,
                                                      freshness=0.002))
    want = 2 / 61 + 0.004 + 0.02 + 0.0032 + 0.001
    assert score(c, f, spec) == round(want, 12)
    # a sum whose float is longer than 12 digits comes back rounded (byte-identical packs)
    c2 = cand(channels=("fulltext", "graph", "structured"), rrf=round(1 / 63 + 1 / 70 + 1 / 64, 12))
    f2 = {"agreement": 2.0, "exact_id": 1.0, "authority": 0.8, "freshness": 0.569395}
    raw = c2.rrf + sum([0.004 * 2.0, 0.02 * 1.0, 0.004 * 0.8, 0.002 * 0.569395])
    assert raw != round(raw, 12)
    assert repr(score(c2, f2, Rerank(enabled=True))) == "0.078122520159"
    assert score(c, f, Rerank(enabled=True, weights=RerankWeights(agreement=0, exact_id=0, authority=0,
                                                                  freshness=0))) == c.rrf


# ------------------------------------------------------------------------------ order
def test_an_exact_identifier_outranks_a_better_fused_rank_and_ties_go_to_the_smaller_doc_id():
    spec = Rerank(enabled=True)
    a, b, c = cand(1, rrf=round(1 / 61, 12)), cand(2, rrf=round(1 / 62, 12)), cand(3, rrf=round(1 / 62, 12))
    objs = {1: obj(doc_id=1, object_id="A", subject_id="case:X"), 2: obj(doc_id=2, object_id="B"),
            3: obj(doc_id=3, object_id="C")}
    out = rerank([a, b, c], objs, spec, identifiers=["case:C-1"], as_of_us=AS_OF_US)
    assert [x.doc_id for x in out] == [2, 3, 1]            # B and C match case:C-1; equal scores: 2 before 3
    assert b.rerank == c.rerank and b.features == c.features and a.features["exact_id"] == 0.0
    # without objects nothing is scored: the fused order stands
    d, e = cand(5, rrf=0.02), cand(4, rrf=0.02)
    assert [x.doc_id for x in ordered([d, e])] == [4, 5]


def _cands(res) -> list[dict]:
    return [e for e in res.trace if e.get("event") == "candidate_retrieved"]


def test_off_by_default_and_off_changes_no_byte(store):
    plain = api.investigate(api.InvestigateOptions(case="C-102"))
    off = api.investigate(api.InvestigateOptions(case="C-102", rerank=False))
    assert plain.pack == off.pack and plain.trace == off.trace
    assert not any("rerank" in e for e in _cands(plain))
    assert not any("rerank" in e["retrieval_scores"] for e in plain.pack["evidence"])


def test_a_rerank_block_not_enabled_changes_no_order(store, monkeypatch):
    real = api.with_rerank

    def disabled(pb, pb_hash, on):
        return pb.model_copy(update={"rerank": Rerank(enabled=False)}), pb_hash

    monkeypatch.setattr(api, "with_rerank", disabled)
    got = api.investigate(api.InvestigateOptions(case="C-102", rerank=True))
    monkeypatch.setattr(api, "with_rerank", real)
    plain = api.investigate(api.InvestigateOptions(case="C-102"))
    assert [e["ref"] for e in _cands(got)] == [e["ref"] for e in _cands(plain)]
    assert not any("rerank" in e for e in _cands(got))


def test_on_orders_the_candidates_by_score_and_records_it(store):
    plain = api.investigate(api.InvestigateOptions(case="C-102"))
    on = api.investigate(api.InvestigateOptions(case="C-102", rerank=True))
    rows = [e for e in _cands(on) if e["round"] == 1]
    assert [e["ref"] for e in rows] != [e["ref"] for e in _cands(plain) if e["round"] == 1]
    keys = [(-e["rerank"]["score"], e["ref"]) for e in rows]
    assert [k[0] for k in keys] == sorted(k[0] for k in keys)
    for e in rows:
        f = e["rerank"]["features"]
        assert list(f) == ["agreement", "exact_id", "authority", "freshness"]
        assert f["agreement"] == len(e["channels"]) - 1
        assert e["rerank"]["score"] == round(e["rerank"]["score"], 12) > e["rrf"] - 1e-12
    by_ref = {e["ref"]: e["rerank"]["score"] for e in _cands(on)}
    for item in on.pack["evidence"]:
        assert item["retrieval_scores"]["rerank"] == by_ref[item["object_id"]]
    again = api.investigate(api.InvestigateOptions(case="C-102", rerank=True))
    assert again.pack == on.pack and again.trace == on.trace


# ------------------------------------------------------------------------------ the gates still decide
HEAVY = Rerank(enabled=True, weights=RerankWeights(agreement=1, exact_id=1, authority=1, freshness=1))


@pytest.mark.parametrize("case", ["C-102", "C-104", "INC-2026-0723"])
def test_the_gates_reject_what_they_rejected_whatever_the_score(store, monkeypatch, case):
    """Heavy weights reorder everything; every candidate a per-candidate gate (validity,
    freshness, injection …) rejected without the reranker is rejected the same way with it,
    and none of them is admitted."""
    plain = api.investigate(api.InvestigateOptions(case=case))
    monkeypatch.setattr(api, "with_rerank", lambda pb, h, on: (pb.model_copy(update={"rerank": HEAVY}), h))
    on = api.investigate(api.InvestigateOptions(case=case, rerank=True))
    packer = {"duplicate", "relevance", "budget"}

    def rejected(res) -> set[tuple[str, str, str]]:
        return {(e["ref"], e["gate"], e["reason"]) for e in res.trace
                if e.get("event") == "candidate_rejected" and e["gate"] not in packer}

    assert rejected(plain) and rejected(on) == rejected(plain)
    admitted = {i["object_id"] for i in on.pack["evidence"]}
    assert not admitted & {ref for ref, _, _ in rejected(plain)}
    assert all(e["rerank"]["score"] > 0.5 for e in _cands(on) if e["round"] == 1 and "rerank" in e)


# ------------------------------------------------------------------------------ playbook
@pytest.mark.parametrize("block, field", [
    ("rerank: {enabled: true, weights: {exact_id: 2}}", "rerank.weights.exact_id"),
    ("rerank: {enabled: true, weights: {authority: -0.1}}", "rerank.weights.authority"),
    ("rerank: {enabled: true, weights: {freshness: high}}", "rerank.weights.freshness"),
    ("rerank: {enabled: true, weights: {recency: 0.1}}", "rerank.weights.recency"),
    ("rerank: {enabled: 'yes'}", "rerank.enabled"),
    ("rerank: {freshness_days: 0}", "rerank.freshness_days"),
])
def test_bad_rerank_settings_are_refused_in_one_line_naming_file_and_field(project_copy, block, field):
    from ctxcli.project import read_playbook

    path = project_copy / "manifests" / "playbooks" / "motor-claim-review.yaml"
    path.write_text(path.read_text() + "\n" + block + "\n")
    with pytest.raises(InputError) as e:
        read_playbook("motor-claim-review", project_copy / "manifests" / "playbooks")
    msg = str(e.value)
    assert "\n" not in msg and "motor-claim-review.yaml" in msg and field in msg, msg


def test_a_good_rerank_block_is_read_and_counts_in_the_hash(project_copy):
    from ctxcli.project import read_playbook

    pdir = project_copy / "manifests" / "playbooks"
    pb0, h0 = read_playbook("motor-claim-review", pdir)
    path = pdir / "motor-claim-review.yaml"
    path.write_text(path.read_text() + "\nrerank: {enabled: true, weights: {exact_id: 0.05}}\n")
    pb, h = read_playbook("motor-claim-review", pdir)
    assert pb0.rerank is None and pb.rerank.enabled and pb.rerank.weights.exact_id == 0.05
    assert pb.rerank.weights.agreement == RerankWeights().agreement and h != h0


# ------------------------------------------------------------------------------ eval
def test_eval_compares_without_and_with_the_reranker(store):
    from ctxcli import evaluate as E

    rep = E.run(E.EvalOptions(strategies=("dynamic",), cases=("C-102",), variants=("base",), rerank=(False, True)))
    doc = rep.to_json()
    assert rep.columns == ["dynamic", "dynamic+rerank"] and doc["rerank"] == ["off", "on"]
    assert [r.get("rerank") for r in doc["runs"]] == [False, True]
    for col in rep.columns:
        assert doc["summary"][col]["runs"] == 1
        assert doc["summary"][col]["context_precision"] is not None and doc["summary"][col]["required_recall"]
    plain = E.run(E.EvalOptions(strategies=("dynamic",), cases=("C-102",), variants=("base",))).to_json()
    assert "rerank" not in plain and list(plain["summary"]) == ["dynamic"]
    assert "rerank" not in plain["runs"][0]


def test_eval_cli_prints_both_columns_and_refuses_a_bad_mode(store):
    from .conftest import run_cli

    r = run_cli(["eval", "--case", "C-102", "--variant", "base", "--rerank", "both"])
    assert r.exit_code == 0, r.output
    assert "dynamic+rerank" in r.output and "context precision" in r.output and "required recall in pack" in r.output
    bad = run_cli(["eval", "--rerank", "maybe"])
    assert bad.exit_code == 2 and "--rerank" in bad.output
