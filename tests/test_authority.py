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
