"""Rerank: a deterministic reorder of the fused candidates before the gates (opt-in, playbook
``rerank``; docs/pipeline.md, "Reranker").

A candidate's score is its RRF score plus the weighted sum of four features, each computed
from what the candidate already carries (its channels, its object's metadata) and the round's
identifiers — never from a model, never from the store:

- ``agreement``: the channels that found it beyond the first (0 for one channel, 1 for two …);
- ``exact_id``: 1 when an identifier of the case or question (the plan's seeds and business
  keys) equals the object's id, its subject or one of its keys exactly, else 0;
- ``authority``: its source's trust level, 1 for ``authoritative`` down to 0 for
  ``untrusted`` in equal steps (engine/pack.TRUST_ORDER);
- ``freshness``: ``d / (d + age)`` with ``age`` the days from its observed_at to as_of (0 when
  observed at or after as_of) and ``d`` the playbook's ``freshness_days``: 1 when fresh, one
  half at ``d`` days.

Features are rounded to 6 digits and the score to 12 (as the RRF score), so packs are
byte-identical across platforms; ties go to the smaller doc id. The reranker only orders: every
candidate is still judged by every gate, in the new order, and a high score admits nothing a
gate rejects.
"""

from __future__ import annotations

from typing import Iterable

from ..models.playbook import Rerank
from .gates import Obj
from .retrieve import Candidate

FEATURES = ("agreement", "exact_id", "authority", "freshness")
FEATURE_DIGITS = 6
SCORE_DIGITS = 12
_DAY_US = 86_400 * 1_000_000


def _trust_order() -> tuple[str, ...]:
    from .pack import TRUST_ORDER

    return TRUST_ORDER


def features(c: Candidate, o: Obj, *, identifiers: frozenset[str], as_of_us: int,
             freshness_days: int) -> dict[str, float]:
    """The four features of candidate ``c`` (object ``o``), rounded (see the module's doc)."""
    trust = _trust_order()
    steps = len(trust) - 1
    authority = (steps - trust.index(o.trust_level)) / steps if o.trust_level in trust else 0.0
    names = {o.object_id, *o.keys} | ({o.subject_id} if o.subject_id else set())
    age_days = max(0, as_of_us - o.observed_us) / _DAY_US
    out = {
        "agreement": float(max(0, len(c.ranks) - 1)),
        "exact_id": 1.0 if names & identifiers else 0.0,
        "authority": authority,
        "freshness": freshness_days / (freshness_days + age_days),
    }
    return {k: round(v, FEATURE_DIGITS) for k, v in out.items()}


def score(c: Candidate, feats: dict[str, float], spec: Rerank) -> float:
    """RRF score + Σ weight · feature, rounded."""
    w = spec.weights
    return round(c.rrf + sum(getattr(w, k) * feats[k] for k in FEATURES), SCORE_DIGITS)


def rerank(cands: list[Candidate], objs: dict[int, Obj], spec: Rerank, *, identifiers: Iterable[str],
           as_of_us: int) -> list[Candidate]:
    """Score every candidate whose object is known (``c.rerank``, ``c.features``) and return all
    of ``cands`` ordered by score, then doc id; a candidate without an object (or scored in no
    round) counts by its RRF score."""
    ids = frozenset(identifiers)
    for c in cands:
        o = objs.get(c.doc_id)
        if o is not None:
            c.features = features(c, o, identifiers=ids, as_of_us=as_of_us, freshness_days=spec.freshness_days)
            c.rerank = score(c, c.features, spec)
    return ordered(cands)


def ordered(cands: list[Candidate]) -> list[Candidate]:
    """``cands`` by reranker score (RRF score when not scored), then doc id."""
    return sorted(cands, key=lambda c: (-(c.rerank if c.rerank is not None else c.rrf), c.doc_id))

