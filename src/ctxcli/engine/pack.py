"""Pack: coverage-first selection of gated candidates into the evidence slot.

For each still-missing evidence type (playbook order), the best-ranked eligible candidate
that supports it and fits is admitted first; only then are extra items admitted in fused
rank order. The packer applies the last three gates — duplicate, relevance, budget — and
records every rejection. A required type whose only candidates do not fit is reported as
missing *over budget*, never dropped silently.

Authority preference (part of the duplicate gate): two items of a shared evidence type from
different sources overlap when they are about the same entity (``subject_id``) and hold the same fact field with
different values, or carry the same text (``dedup_hash``) from sources of different
authority. Of overlapping items the one first by :func:`authority_key` is kept — trust level
(``authoritative`` > ``operational`` > ``internal`` > ``user_supplied`` > ``public`` >
``untrusted``), then the later ``valid_from``, then the later ``observed_at``, then the smaller
object id — and the others are omitted ``superseded_by_authority``, naming the kept item. A
type the playbook marks ``compare: true`` keeps them all, and so does a ``coverage: all`` type
(it needs every item). Two records of one source that disagree are not a question of
authority (the source is the same): both stay, and the answer reports the conflict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..models.manifest import TrustLevel
from ..util.canon import content_hash, sha256_hex
from ..util.timeutil import iso, us_to_dt
from .gates import Obj, Rejection
from .render import evidence_block
from .retrieve import scores_shown


@dataclass
class PackState:
    budget: int                     # evidence slot size
    used: int                       # tokens used in the evidence slot (header included)
    admitted: list[dict[str, Any]] = field(default_factory=list)
    dedup: dict[str, str] = field(default_factory=dict)        # dedup hash -> evidence id
    covered: set[str] = field(default_factory=set)
    over_budget_types: set[str] = field(default_factory=set)
    reserve: int = 0                # kept from optional evidence for the tool results charged to this slot
    required: frozenset[str] = frozenset()      # types that may take the reserve (required evidence first)
    objs: dict[str, Obj] = field(default_factory=dict)        # evidence id -> its object (authority preference)


TRUST_ORDER: tuple[str, ...] = tuple(t.value for t in TrustLevel)   # most trusted first
AUTHORITY_STEPS = ("trust_level", "valid_from", "observed_at", "object_id")


def authority_key(o: Obj) -> tuple[int, int, int, str]:
    """Smaller is preferred: trust level, then the later valid_from (none: the earliest), then the
    later observed_at, then the smaller object id (the last tie-break)."""
    trust = TRUST_ORDER.index(o.trust_level) if o.trust_level in TRUST_ORDER else len(TRUST_ORDER)
    vf = -(o.valid_from_us) if o.valid_from_us is not None else 2 ** 63
    return trust, vf, -o.observed_us, o.object_id


def overlap(a: Obj, b: Obj, types: set[str]) -> str | None:
    """What ``a`` and ``b`` overlap in (``facts.<field>`` or ``text``), or None: they must come
    from different sources and share a type of ``types``, then be about the same entity with a fact field of different values, or
    carry the same text with different authority (equal authority: a plain duplicate)."""
    if a.source_id == b.source_id or not (set(a.supports) & set(b.supports) & types):
        return None
    if a.subject_id is not None and a.subject_id == b.subject_id:
        for k in sorted(set(a.facts) & set(b.facts)):
            if a.facts[k] != b.facts[k]:
                return f"facts.{k}"
    if a.dedup_hash == b.dedup_hash and authority_key(a)[:3] != authority_key(b)[:3]:
        return "text"
    return None


def decided_by(kept: Obj, other: Obj) -> str:
    """The first step of :func:`authority_key` at which ``kept`` and ``other`` differ."""
    ka, kb = authority_key(kept), authority_key(other)
    return next((n for n, x, y in zip(AUTHORITY_STEPS, ka, kb) if x != y), AUTHORITY_STEPS[-1])


def authority_order(eligible: list[tuple[Obj, Any]], types: set[str]) -> list[tuple[Obj, Any]]:
    """``eligible`` with each group of overlapping items reordered so that the preferred comes
    first, in the place of the group's best-ranked member (the others keep their places)."""
    n = len(eligible)
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if overlap(eligible[i][0], eligible[j][0], types) is not None:
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(root(i), []).append(i)
    out = list(eligible)
    for members in groups.values():
        if len(members) > 1:
            ranked = sorted(members, key=lambda i: authority_key(eligible[i][0]))
            for place, i in zip(members, ranked):
                out[place] = eligible[i]
    return out


def evidence_id(o: Obj, shown_hash: str | None = None) -> str:
    """The id of ``o``'s evidence item, from its tenant, id and content hash as shown (keyed
    when the subject may not read the unmasked text)."""
    h = o.content_hash if shown_hash is None else shown_hash
    return "ev-" + sha256_hex(f"{o.tenant_id}\0{o.object_id}\0{h}")[:10]


def make_item(o: Obj, *, tz, disclosure, round_no: int, cand, count: Callable[[str], int]) -> dict[str, Any]:
    """The evidence item of ``o``; ``disclosure`` masks and keys what the subject may not read."""
    v, transformations, shown_hash = disclosure.view(o, count)
    item = {
        "evidence_id": evidence_id(o, shown_hash), "object_id": v.object_id, "source_id": o.source_id,
        "source_version": v.source_version, "object_type": o.object_type, "subject_id": v.subject_id,
        "title": v.title, "locator": v.locator, "content_hash": shown_hash,
        "valid_from": iso(us_to_dt(o.valid_from_us, tz)), "valid_to": iso(us_to_dt(o.valid_to_us, tz)),
        "observed_at": iso(us_to_dt(o.observed_us, tz)), "trust_level": o.trust_level, "classification": o.classification,
        "owner_team": o.owner_team, "supports": list(o.supports), "facts": v.facts, "round": round_no,
        "channels": dict(cand.ranks), "queries": dict(cand.queries), "rrf": cand.rrf,
        "retrieval_scores": scores_shown(cand.scores, disclosure.hides_text(o))
        | ({"rerank": cand.rerank} if getattr(cand, "rerank", None) is not None else {}),
        "graph_templates": list(cand.paths), "content_tokens": o.tokens, "text": v.content,
        "text_hash": content_hash(v.content), "transformations": transformations, "selected_for": None,
        "tokens": 0,
    }
    item["tokens"] = count(evidence_block(item))
    return item


def superseded(state: PackState, o: Obj, preferring: set[str]) -> Rejection | None:
    """``o`` overlaps an admitted item of more authority (authority_order): omitted
    ``superseded_by_authority``, naming the item kept."""
    for item in state.admitted:
        k = state.objs.get(item["evidence_id"])
        if k is None:
            continue
        what = overlap(k, o, preferring)
        if what is not None and authority_key(k) < authority_key(o):
            return Rejection("duplicate", "superseded_by_authority", {
                "preferred": item["evidence_id"], "preferred_object_id": item["object_id"],
                "overlap": what, "decided_by": decided_by(k, o)})
    return None


def packer_rejection(o: Obj, cand, state: PackState, preferring: set[str], playbook_types: set[str],
                     anchored: Callable[[Obj], bool]) -> Rejection | None:
    """The packer's gates in their order: duplicate (authority, then the same content as an
    admitted item), then relevance (no declared type, not linked to the case); None: admissible."""
    rej = superseded(state, o, preferring)
    if rej is not None:
        return rej
    if o.dedup_hash in state.dedup:
        return Rejection("duplicate", "same_content_as_admitted", {"duplicate_of": state.dedup[o.dedup_hash]})
    if not set(o.supports) & playbook_types:
        return Rejection("relevance", "supports_no_declared_type", {"supports": list(o.supports)})
    if not anchored(o):
        return Rejection("relevance", "not_linked_to_case", {"subject_id": o.subject_id,
                                                              "found_by": sorted(cand.ranks)})
    return None


def pack_round(eligible: list[tuple[Obj, Any]], *, state: PackState, type_order: list[str], target: list[str],
               playbook_types: set[str], anchored: Callable[[Obj], bool], make: Callable[[Obj, Any], dict[str, Any]],
               compress: Callable[[dict[str, Any], Obj, int], dict[str, Any] | None] | None,
               coverage_first: bool = True, apply_gates: bool = True,
               enforce_budget: bool = True,
               cover_all: frozenset[str] = frozenset(), considered: set[int] | None = None,
               first_pass_only: bool = False, compare: frozenset[str] = frozenset()) -> list[tuple[Obj, Any, Rejection]]:
    """Admit from ``eligible`` (already past the per-candidate gates, in fused order).
    ``apply_gates``: run the duplicate and relevance gates; ``enforce_budget``: run the budget
    gate. Returns the packer's rejections; admitted items are appended to ``state.admitted``.
    ``considered``: the doc ids already admitted or rejected this round (updated), when a round
    packs in two calls; ``first_pass_only``: only the best item of each ``target`` type (the
    builder packs the types other types' validity is anchored at this way first); ``compare``:
    the types whose overlapping items are all kept (playbook ``compare: true``)."""
    rejections: list[tuple[Obj, Any, Rejection]] = []
    if considered is None:
        considered = set()                # doc ids admitted or rejected in this round
    preferring = playbook_types - compare - cover_all      # types where authority preference applies
    if apply_gates:
        eligible = authority_order(eligible, preferring)

    def consider(o: Obj, cand, selected_for: str | None) -> bool:
        rej = packer_rejection(o, cand, state, preferring, playbook_types, anchored) if apply_gates else None
        if rej is not None:
            rejections.append((o, cand, rej))
            considered.add(o.doc_id)
            return False
        item = make(o, cand)
        remaining = state.budget - state.used - (0 if selected_for in state.required else state.reserve)
        if enforce_budget and item["tokens"] > remaining:
            small = compress(item, o, remaining) if (compress and selected_for) else None
            if small is None:
                rejections.append((o, cand, Rejection("budget", "over_budget", {
                    "tokens": item["tokens"], "remaining": remaining, "evidence_budget": state.budget,
                    "for_type": selected_for})))
                if selected_for:
                    state.over_budget_types.add(selected_for)
                considered.add(o.doc_id)
                return False
            item = small
        item["selected_for"] = selected_for or "extra"
        state.admitted.append(item)
        state.used += item["tokens"]
        state.dedup[o.dedup_hash] = item["evidence_id"]
        state.objs[item["evidence_id"]] = o
        state.covered.update(set(o.supports) & playbook_types)
        considered.add(o.doc_id)
        return True

    if coverage_first:
        # Pass 1: the best eligible item of every still-missing type.
        for t in type_order:
            if t not in target or t in state.covered:
                continue
            for o, cand in eligible:
                if o.doc_id in considered or t not in o.supports:
                    continue
                if consider(o, cand, t):
                    state.over_budget_types.discard(t)
                    break
        if first_pass_only:
            return rejections
        # Pass 2: the rest of each type that needs all its items; if one does not fit, the
        # type is not covered (it is reported missing over budget).
        for t in type_order:
            if t not in cover_all or t not in target:
                continue
            for o, cand in eligible:
                if o.doc_id not in considered and t in o.supports:
                    consider(o, cand, t)
        state.covered -= (cover_all & state.over_budget_types)
    for o, cand in eligible:
        if o.doc_id not in considered:
            consider(o, cand, None)
    return rejections
