"""Plan: a typed retrieval plan per round, from the playbook and the case. Never SQL.

Query terms come only from the question, the playbook and the case's business keys;
nothing retrieved can change the plan of a later round except through *which declared
evidence types are still missing*.

Question terms (:func:`salient_terms`): identifiers (``AB-123``, ``ERR_42``, ``2026.1``) and
quoted phrases join every full-text query; a content word (after stop-word removal, with the
per-language lists of ``engine/stopword_lists/``; Chinese and Japanese function words are cut
out of the text first, :mod:`ctxcli.engine.stopwords`, then Han text goes through the same
bigram shadow function as the index) joins the full-text query of a type
whose own vocabulary (type name, judgment, declared terms) holds it. Each full-text query
records its ``question_terms``.
"""

from __future__ import annotations

import re

from dataclasses import asdict, dataclass, field
from typing import Any

from ..load.fts_text import query_terms
from ..models.playbook import ChannelSpecs, Playbook
from .stopwords import strip_function_words, words


@dataclass(frozen=True)
class Query:
    query_id: str
    channel: str            # structured | fulltext | graph | vector
    evidence_type: str
    limit: int
    object_types: tuple[str, ...] = ()
    text: str = ""
    terms: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()
    question_terms: tuple[str, ...] = ()
    window: dict[str, Any] | None = None    # the window channel's resolved query (window_query)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"query_id": self.query_id, "channel": self.channel,
                             "evidence_type": self.evidence_type, "limit": self.limit}
        if self.channel == "structured":
            d["object_types"] = list(self.object_types)
        elif self.channel == "fulltext":
            d["text"] = self.text
            d["terms"] = list(self.terms)
            if self.question_terms:
                d["question_terms"] = list(self.question_terms)
        elif self.channel == "vector":
            d["object_types"] = list(self.object_types)
            d["text"] = self.text
        elif self.channel == "window":
            d["object_types"] = list(self.object_types)
            d.update(self.window or {})
        else:
            d["templates"] = list(self.templates)
        return d


@dataclass
class Plan:
    round: int
    target_types: list[str]
    seeds: list[str]
    business_keys: list[str]
    max_hops: int
    fanout_cap: int
    candidate_limit: int
    queries: list[Query] = field(default_factory=list)
    vector_skipped: str | None = None       # why declared vector queries were not planned
    resolved: list[dict[str, Any]] = field(default_factory=list)      # names resolved to keys (engine/resolve.py)
    unresolved: list[dict[str, Any]] = field(default_factory=list)
    window_skipped: dict[str, str] = field(default_factory=dict)   # evidence type -> why its window was not planned

    def to_json(self) -> dict[str, Any]:
        d = {"round": self.round, "target_types": self.target_types, "seeds": self.seeds,
             "business_keys": self.business_keys, "max_hops": self.max_hops, "fanout_cap": self.fanout_cap,
             "candidate_limit": self.candidate_limit, "queries": [q.to_json() for q in self.queries]}
        if self.vector_skipped:
            d["vector_skipped"] = self.vector_skipped
        if self.resolved:
            d["resolved"] = self.resolved
        if self.unresolved:
            d["unresolved"] = self.unresolved
        if self.window_skipped:
            d["window_skipped"] = dict(self.window_skipped)
        return d


# The vector channel is not planned for a question whose letters are mostly CJK: the pinned
# model's vocabulary (Llama-2, 32k tokens) splits Chinese into single characters and bytes, so
# its Chinese vectors rank by shared characters, not meaning (docs/eval.md has the figures);
# exact matches (structured keys, bigram full text) must decide those questions alone.
CJK_SKIP_SHARE = 0.5


STOP_WORDS = words("en")     # engine/stopword_lists/en.txt; zh.txt and ja.txt: engine/stopwords.py
_QUOTED = re.compile(r'"([^"\n]{1,200})"|\u201c([^\u201d\n]{1,200})\u201d|\u300c([^\u300d\n]{1,200})\u300d')
_IDENT = re.compile(r"[A-Za-z0-9]+(?:[-_.:/][A-Za-z0-9]+)+|[A-Za-z]*[0-9][A-Za-z0-9]*|[A-Z]{2,}[A-Z0-9]*")


def salient_terms(question: str) -> tuple[list[str], list[str]]:
    """(anchored, content): index terms of the question's identifiers and quoted phrases, and
    of its remaining content words (stop words and one- or two-letter words dropped)."""
    anchored: list[str] = []
    for m in _QUOTED.finditer(question):
        anchored += query_terms(next(g for g in m.groups() if g))
    for m in _IDENT.finditer(_QUOTED.sub(" ", question)):
        anchored += query_terms(m.group(0))
    rest = strip_function_words(_IDENT.sub(" ", _QUOTED.sub(" ", question)))
    content = [t for t in query_terms(rest) if t not in STOP_WORDS and (len(t) > 2 or not t.isascii())]
    a = list(dict.fromkeys(anchored))
    return a, [t for t in dict.fromkeys(content) if t not in a]


def _type_vocabulary(et) -> set[str]:
    words = [et.type.replace("_", " "), et.judgment]
    for spec in (et.retrieve, et.followup):
        if spec is not None and spec.fulltext is not None:
            words += list(spec.fulltext.terms)
    return set(query_terms(" ".join(words)))


def make_plan(pb: Playbook, *, round_no: int, target_types: list[str], seeds: list[str],
              business_keys: list[str], channels: tuple[str, ...] = ("structured", "fulltext", "graph"),
              question: str = "", resolution=None, anchors: dict[str, tuple[int, str] | str] | None = None) -> Plan:
    """``resolution`` (engine/resolve.Resolution): the seeds to use instead of ``seeds``, and
    the entity keys the question named, which join every full-text query. ``anchors``: the window
    anchors known so far (window_anchor_key → (µs, ISO text), or why it is unknown:
    ``anchor_not_admitted`` / ``anchor_conflict``)."""
    limit = pb.candidate_limit * (2 ** (round_no - 1))
    if resolution is not None:
        seeds = resolution.seeds
    named = list(resolution.added_keys) if resolution is not None else []
    plan = Plan(round=round_no, target_types=list(target_types), seeds=list(seeds),
                business_keys=list(business_keys), max_hops=pb.max_hops, fanout_cap=pb.fanout_cap,
                candidate_limit=limit)
    if resolution is not None:
        plan.resolved, plan.unresolved = list(resolution.resolved), list(resolution.unresolved)
    by_type = {et.type: et for et in pb.evidence_types}
    anchored, content = salient_terms(question) if question else ([], [])
    n = 0
    for t in target_types:
        et = by_type[t]
        spec: ChannelSpecs = et.retrieve if round_no == 1 or et.followup is None else et.followup
        if spec.structured is not None and "structured" in channels:
            n += 1
            plan.queries.append(Query(f"r{round_no}q{n}", "structured", t, limit,
                                      object_types=tuple(spec.structured.object_types)))
        if spec.fulltext is not None and "fulltext" in channels:
            n += 1
            base = " ".join(list(spec.fulltext.terms) + list(business_keys) + named)
            have = set(query_terms(base))
            vocab = _type_vocabulary(et)
            qterms = [w for w in anchored if w not in have] + [w for w in content if w in vocab and w not in have]
            text = " ".join([base, *qterms]) if qterms else base
            plan.queries.append(Query(f"r{round_no}q{n}", "fulltext", t, limit, text=text,
                                      terms=tuple(query_terms(text)), question_terms=tuple(qterms)))
        if spec.graph is not None and "graph" in channels:
            n += 1
            plan.queries.append(Query(f"r{round_no}q{n}", "graph", t, limit, templates=tuple(spec.graph.templates)))
        if spec.vector is not None and "vector" in channels:
            from ..embed.model import cjk_share

            if cjk_share(question) >= CJK_SKIP_SHARE:
                plan.vector_skipped = "cjk_question"
                continue
            n += 1
            plan.queries.append(Query(f"r{round_no}q{n}", "vector", t, spec.vector.limit or limit,
                                      object_types=tuple(spec.vector.object_types),
                                      text=" ".join(x for x in (question.strip(), " ".join(et.judgment.split())) if x)))
        if spec.window is not None and "window" in channels:
            w = spec.window
            key = window_anchor_key(w)
            at = (anchors or {}).get(key, "anchor_not_admitted")
            if isinstance(at, str):
                plan.window_skipped[t] = at
                continue
            n += 1
            plan.queries.append(Query(f"r{round_no}q{n}", "window", t, w.limit or limit,
                                      object_types=tuple(w.object_types),
                                      window=window_query(w, at, anchors["as_of"][1])))
    return plan


def window_anchor_key(w) -> str:
    """``as_of`` or ``<anchor_from>.<anchor_fact>``: which anchor a window query needs."""
    return "as_of" if w.anchor_fact is None else f"{w.anchor_from}.{w.anchor_fact}"


def window_query(w, at: tuple[int, str], request_at: str) -> dict[str, Any]:
    """The typed window query as the store runs it and the trace records it: the linked
    entity, the relation types, the time column, the anchor and the bounds (µs, both included).
    A calendar window is the day, ISO week or month holding the anchor in its zone (declared, else
    the offset of the request's time ``request_at``): from its first µs to the last µs before the
    next one, recorded with the zone and both edges as ISO times."""
    from ..util.timeutil import calendar_bounds, parse_ts, us_to_dt, zone_of

    us, iso = at
    q = {"entity": w.entity, "entity_type": w.entity_type, "via": list(w.via), "time": w.time,
         "anchor": window_anchor_key(w), "anchor_at": iso, "anchor_us": us}
    if w.calendar is None:
        lo, hi = us - w.before_minutes * 60_000_000, us + w.after_minutes * 60_000_000
        return {**q, "before_minutes": w.before_minutes, "after_minutes": w.after_minutes, "from_us": lo, "to_us": hi}
    tz = zone_of(w.zone) if w.zone is not None else parse_ts(request_at).tzinfo
    lo, nxt = calendar_bounds(w.calendar, us, tz)
    zone = w.zone or us_to_dt(us, tz).isoformat()[-6:]
    return {**q, "calendar": w.calendar, "zone": zone, "from": us_to_dt(lo, tz).isoformat(),
            "until": us_to_dt(nxt, tz).isoformat(), "from_us": lo, "to_us": nxt - 1}


__all__ = ["Plan", "Query", "make_plan", "asdict"]
