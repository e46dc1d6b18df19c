"""Plan: a typed retrieval plan per round, from the playbook and the case. Never SQL.

Query terms come only from the question, the playbook and the case's business keys;
nothing retrieved can change the plan of a later round except through *which declared
evidence types are still missing*.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..load.fts_text import query_terms
from ..models.playbook import ChannelSpecs, Playbook


@dataclass(frozen=True)
class Query:
    query_id: str
    channel: str            # structured | fulltext | graph
    evidence_type: str
    limit: int
    object_types: tuple[str, ...] = ()
    text: str = ""
    terms: tuple[str, ...] = ()
    templates: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"query_id": self.query_id, "channel": self.channel,
                             "evidence_type": self.evidence_type, "limit": self.limit}
        if self.channel == "structured":
            d["object_types"] = list(self.object_types)
        elif self.channel == "fulltext":
            d["text"] = self.text
            d["terms"] = list(self.terms)
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

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "target_types": self.target_types, "seeds": self.seeds,
                "business_keys": self.business_keys, "max_hops": self.max_hops, "fanout_cap": self.fanout_cap,
                "candidate_limit": self.candidate_limit, "queries": [q.to_json() for q in self.queries]}


def make_plan(pb: Playbook, *, round_no: int, target_types: list[str], seeds: list[str],
              business_keys: list[str], channels: tuple[str, ...] = ("structured", "fulltext", "graph")) -> Plan:
    limit = pb.candidate_limit * (2 ** (round_no - 1))
    plan = Plan(round=round_no, target_types=list(target_types), seeds=list(seeds),
                business_keys=list(business_keys), max_hops=pb.max_hops, fanout_cap=pb.fanout_cap,
                candidate_limit=limit)
    by_type = {et.type: et for et in pb.evidence_types}
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
            text = " ".join(list(spec.fulltext.terms) + list(business_keys))
            plan.queries.append(Query(f"r{round_no}q{n}", "fulltext", t, limit, text=text,
                                      terms=tuple(query_terms(text))))
        if spec.graph is not None and "graph" in channels:
            n += 1
            plan.queries.append(Query(f"r{round_no}q{n}", "graph", t, limit, templates=tuple(spec.graph.templates)))
    return plan


__all__ = ["Plan", "Query", "make_plan", "asdict"]
