"""Authority preference in the duplicate gate (issue 52, item 3): of two admitted items of a
shared evidence type from different sources that overlap (the same entity and fact field with
different values, or the same text), the packer keeps the one first by trust level, then the
later valid_from, then the later observed_at, then the smaller object id; the other is omitted
``superseded_by_authority`` naming the kept item. ``compare: true`` keeps both."""

from __future__ import annotations

from types import SimpleNamespace

from ctxcli.engine.pack import PackState, pack_round
from ctxcli.postmortem.sentences import explain

from .test_boundaries import AS_OF_US, obj

DAY = 86_400_000_000


def item(o, cand):
    return {"evidence_id": "ev-" + o.object_id, "object_id": o.object_id, "tokens": 1}


def run(*objs, compare=frozenset(), cover_all=frozenset(), state=None, anchored=lambda o: True):
    """Pack ``objs`` (in this fused order); (admitted object ids, {rejected id: (reason, detail)})."""
    st = state or PackState(budget=10_000, used=0)
    elig = [(o, SimpleNamespace(ranks={}, doc_id=o.doc_id)) for o in objs]
    rej = pack_round(elig, state=st, type_order=["rule", "note"], target=["rule", "note"],
                     playbook_types={"rule", "note"}, anchored=anchored, make=item, compress=None,
                     compare=compare, cover_all=cover_all)
    return [i["object_id"] for i in st.admitted], {o.object_id: (r.reason, r.detail) for o, _, r in rej}


def rule(n: int, oid: str, **kw):
    base = dict(doc_id=n, object_id=oid, source_id=f"src-{oid}", subject_id="rule:R-1", supports=["rule"],
                facts={"threshold": 100}, dedup_hash=f"d-{oid}", trust_level="internal",
                observed_us=AS_OF_US - DAY)
    base.update(kw)
    return obj(**base)


def superseded(by: str, what: str, step: str) -> tuple[str, dict]:
    return ("superseded_by_authority", {"preferred": "ev-" + by, "preferred_object_id": by,
                                        "overlap": what, "decided_by": step})


# ------------------------------------------------------------------------------ the order of preference
def test_higher_trust_wins_even_when_ranked_later():
    wiki = rule(1, "WIKI", facts={"threshold": 90}, trust_level="internal")
    policy = rule(2, "POLICY", facts={"threshold": 100}, trust_level="authoritative")
    assert run(wiki, policy) == (["POLICY"], {"WIKI": superseded("POLICY", "facts.threshold", "trust_level")})


def test_every_trust_level_in_order():
    levels = ["authoritative", "operational", "internal", "user_supplied", "public", "untrusted"]
    for hi, lo in zip(levels, levels[1:]):
        a = rule(1, "A", facts={"threshold": 1}, trust_level=lo)
        b = rule(2, "B", facts={"threshold": 2}, trust_level=hi)
        assert run(a, b) == (["B"], {"A": superseded("B", "facts.threshold", "trust_level")}), (hi, lo)


def test_equal_trust_the_later_valid_from_wins():
    old = rule(1, "A", facts={"threshold": 1}, valid_from_us=AS_OF_US - 2 * DAY, observed_us=AS_OF_US - DAY)
    new = rule(2, "B", facts={"threshold": 2}, valid_from_us=AS_OF_US - 2 * DAY + 1, observed_us=AS_OF_US - 3 * DAY)
    assert run(old, new) == (["B"], {"A": superseded("B", "facts.threshold", "valid_from")})
    # no valid_from counts as the earliest
    none = rule(1, "A", facts={"threshold": 1}, valid_from_us=None)
    some = rule(2, "B", facts={"threshold": 2}, valid_from_us=AS_OF_US - 9 * DAY, observed_us=AS_OF_US - 3 * DAY)
    assert run(none, some) == (["B"], {"A": superseded("B", "facts.threshold", "valid_from")})


def test_equal_trust_and_validity_the_later_observation_wins():
    a = rule(1, "A", facts={"threshold": 1}, observed_us=AS_OF_US - DAY - 1)
    b = rule(2, "B", facts={"threshold": 2}, observed_us=AS_OF_US - DAY)
    assert run(a, b) == (["B"], {"A": superseded("B", "facts.threshold", "observed_at")})


def test_all_equal_the_smaller_object_id_wins_whatever_the_rank():
    a = rule(1, "Z", facts={"threshold": 1})
    b = rule(2, "M", facts={"threshold": 2})
    assert run(a, b) == (["M"], {"Z": superseded("M", "facts.threshold", "object_id")})
    assert run(b, a) == (["M"], {"Z": superseded("M", "facts.threshold", "object_id")})


def test_same_text_from_sources_of_different_trust():
    copy = rule(1, "SUMMARY", facts={}, dedup_hash="same", trust_level="internal")
    orig = rule(2, "POLICY", facts={}, dedup_hash="same", trust_level="authoritative")
    assert run(copy, orig) == (["POLICY"], {"SUMMARY": superseded("POLICY", "text", "trust_level")})
    # the same text at equal authority is a plain duplicate: the first kept, as before
    twin = rule(2, "POLICY", facts={}, dedup_hash="same", trust_level="internal")
    assert run(copy, twin) == (["SUMMARY"], {"POLICY": ("same_content_as_admitted", {"duplicate_of": "ev-SUMMARY"})})


# ------------------------------------------------------------------------------ no overlap
def test_different_fields_are_no_overlap():
    a = rule(1, "A", facts={"threshold": 1}, trust_level="internal")
    b = rule(2, "B", facts={"limit": 2}, trust_level="authoritative")
    assert run(a, b) == (["A", "B"], {})


def test_same_values_other_entity_other_type_or_same_source_are_no_overlap():
    hi = rule(2, "B", facts={"threshold": 2}, trust_level="authoritative")
    assert run(rule(1, "A", facts={"threshold": 2}), hi) == (["A", "B"], {})           # same value
    assert run(rule(1, "A", facts={"threshold": 1}, subject_id="rule:R-2"), hi) == (["A", "B"], {})
    assert run(rule(1, "A", facts={"threshold": 1}, subject_id=None),
               rule(2, "B", facts={"threshold": 2}, subject_id=None, trust_level="authoritative")) == (["A", "B"], {})
    assert run(rule(1, "A", facts={"threshold": 1}, supports=["note"]), hi) == (["B", "A"], {})  # rule first
    # two records of one source disagreeing: a conflict for the answer, not a question of authority
    assert run(rule(1, "A", facts={"threshold": 1}, source_id="one"),
               rule(2, "B", facts={"threshold": 2}, source_id="one", trust_level="authoritative")) == (["A", "B"], {})


def test_compare_and_coverage_all_keep_both():
    a = rule(1, "A", facts={"threshold": 1}, trust_level="internal")
    b = rule(2, "B", facts={"threshold": 2}, trust_level="authoritative")
    assert run(a, b, compare=frozenset({"rule"})) == (["A", "B"], {})       # fused order, as before
    assert run(a, b, cover_all=frozenset({"rule"})) == (["A", "B"], {})
    assert run(a, b, compare=frozenset({"note"})) == (["B"], {"A": superseded("B", "facts.threshold", "trust_level")})


def test_the_preferred_item_not_admitted_leaves_the_other_in():
    """When the preferred item fails a later gate (here relevance), the other is not superseded."""
    a = rule(1, "A", facts={"threshold": 1}, trust_level="internal")
    b = rule(2, "B", facts={"threshold": 2}, trust_level="authoritative")
    got = run(a, b, anchored=lambda o: o.object_id != "B")
    assert got[0] == ["A"] and got[1]["B"][0] == "not_linked_to_case"


def test_an_item_of_an_earlier_round_is_not_evicted():
    st = PackState(budget=10_000, used=0)
    assert run(rule(1, "A", facts={"threshold": 1}, trust_level="internal"), state=st) == (["A"], {})
    assert run(rule(2, "B", facts={"threshold": 2}, trust_level="authoritative"), state=st) == (["A", "B"], {})
    # while a less authoritative one found later is superseded by the admitted item
    assert run(rule(3, "C", facts={"threshold": 3}, trust_level="public"), state=st) == \
        (["A", "B"], {"C": superseded("A", "facts.threshold", "trust_level")})


def test_the_explanation_names_the_kept_item():
    om = {"gate": "duplicate", "reason": "superseded_by_authority",
          "detail": {"preferred": "ev-1", "preferred_object_id": "POLICY", "overlap": "facts.threshold",
                     "decided_by": "trust_level"}}
    assert explain(om, {"evidence": []}) == (
        "overlaps admitted evidence ev-1 (POLICY) in facts.threshold, which comes first by trust_level",
        ["POLICY not being admitted", "a playbook marking the evidence type compare: true"])


# ------------------------------------------------------------------------------ through a build
def _summary_project(root, *, compare: bool = False, other_tenant: bool = False) -> str:
    """The plain hostile corpus plus an operational summary of the standard rule with another
    threshold (h-docs); ``compare``: the playbook marks ``rule`` compare: true; ``other_tenant``:
    the summary belongs to another tenant (authoritative, later) instead."""
    import yaml

    from ctxcli.load.build import build_store

    from .test_hostile import OTHER, PLAIN, PLAYBOOK, _append, _obj, write_corpus

    cid = write_corpus(root, PLAIN)
    src, extra = ("h-other", {"tenant": OTHER, "valid_from": "2026-07-20T00:00:00+08:00"}) if other_tenant \
        else ("h-docs", {})
    _append(root / "sources" / src / "objects.jsonl", [_obj(
        "RULE-SUMMARY", subject="ruleset:std", etype="rule", title="Summary of the review rule",
        content="Summary: claims at or above 200000 go to a reviewer (threshold).", facts={"threshold": 200_000},
        keys=["rule-std", cid], **extra)])
    if compare:
        types = [{**et, "compare": True} if et["type"] == "rule" else et for et in PLAYBOOK["evidence_types"]]
        (root / "manifests" / "playbooks" / "hostile-review.yaml").write_text(
            yaml.safe_dump({**PLAYBOOK, "evidence_types": types}, sort_keys=False), encoding="utf-8")
    build_store(root / "manifests", root / ".ctx" / "ctx.duckdb", root=root)
    return cid


def _pack(root, cid):
    from .test_hostile import _investigate

    res = _investigate(root, cid)
    return res, {e["object_id"]: e for e in res.pack["evidence"]}, {o["ref"]: o for o in res.pack["omissions"]}


def test_a_less_authoritative_summary_is_superseded_in_the_pack(tmp_path):
    res, ev, om = _pack(tmp_path, _summary_project(tmp_path))
    assert "RULE-STD" in ev and "RULE-SUMMARY" not in ev
    o = om["RULE-SUMMARY"]
    assert (o["gate"], o["reason"], o["detail"]) == ("duplicate", "superseded_by_authority", {
        "preferred": ev["RULE-STD"]["evidence_id"], "preferred_object_id": "RULE-STD", "overlap": "facts.threshold",
        "decided_by": "trust_level"})
    assert res.answer["verdict"] != "conflicting_evidence"
    import json

    from ctxcli import api

    trace = [json.loads(x) for x in api.output_files(res)["trace.jsonl"].decode().splitlines()]
    assert [(e.get("reason"), e.get("gate")) for e in trace if e.get("ref") == "RULE-SUMMARY"
            and e["event"] == "candidate_rejected"] == [("superseded_by_authority", "duplicate")]


def test_compare_true_keeps_both_and_the_answer_reports_the_conflict(tmp_path):
    res, ev, om = _pack(tmp_path, _summary_project(tmp_path, compare=True))
    assert {"RULE-STD", "RULE-SUMMARY"} <= set(ev)
    assert not [o for o in res.pack["omissions"] if o["reason"] == "superseded_by_authority"]
    assert res.answer["verdict"] == "conflicting_evidence"


def test_another_tenants_more_authoritative_rule_supersedes_nothing(tmp_path):
    res, ev, om = _pack(tmp_path, _summary_project(tmp_path, other_tenant=True))
    assert "RULE-STD" in ev and "RULE-SUMMARY" not in ev
    assert not [o for o in res.pack["omissions"] if o["reason"] == "superseded_by_authority"]


def test_compare_counts_in_the_playbook_hash_only_when_true():
    from ctxcli import api
    from ctxcli.project import playbook_hash

    pb, h = api.read_playbook("motor-claim-review")
    assert h == playbook_hash(pb) == "sha256:6e8edc81c2885c5229cb822199ce7a89536cb7c1d26bc658e89453e00d021e76"
    d = pb.model_dump()
    d["evidence_types"][0]["compare"] = True
    assert playbook_hash(type(pb).model_validate(d)) != h
