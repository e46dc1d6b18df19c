"""Names of entities in the request resolved to their stable keys (issue 30, item 2).

Entity aliases are stored with each entity (``entities.aliases``). Two places read them, both
only over the tenant's entities that a source the subject may read registered (so nothing a
subject may not see is named in a plan):

* a **seed** that is no entity key of those sources but is, as a phrase (util/entity_match.py),
  the name, an alias or the id part of exactly one of them is replaced by that entity's key;
  one that names several is kept as given (it finds nothing) and recorded as unresolved, as is
  a seed that is no ``type:key`` and names none;
* when the playbook declares ``resolve_names``, the **question**'s phrases naming an entity of
  the declared types (exactly, or fuzzily above ``accept``) add that entity's key to the seeds
  and to every full-text query; ambiguous or weak ones are recorded as unresolved, with their
  candidates, and used nowhere.

Every resolution is recorded in each round's plan (``resolved`` / ``unresolved``) and in the
trace's ``plan_created`` event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..util.entity_match import Dictionary, entity_names, phrase


@dataclass
class Resolution:
    seeds: list[str]                                   # the seeds to use, resolved, then the question's
    added_keys: list[str] = field(default_factory=list)            # keys the question named (full text)
    resolved: list[dict[str, Any]] = field(default_factory=list)
    unresolved: list[dict[str, Any]] = field(default_factory=list)


ENTITY_KEY = re.compile(r"^[a-z][a-z0-9_]*:[^\s:].*$")


def is_entity_key(seed: str) -> bool:
    """``type:key`` (``service:checkout-api``); any other seed is a name (``Checkout-API``)."""
    return ENTITY_KEY.match(seed) is not None


def _names(key: str, name: str, aliases: list[str]) -> list[str]:
    return entity_names({"entity_key": key, "name": name, "aliases": aliases})


def resolve(con, *, tenant: str, readable: list[str], seeds: list[str], question: str, spec) -> Resolution:
    """The request's seeds and question resolved against the entities of ``readable`` sources
    (``spec``: the playbook's ``resolve_names``, or None)."""
    known = {k for k, *_ in con.entity_names(tenant, readable, keys=list(seeds))} if seeds else set()
    out = Resolution(seeds=[])
    unknown = [s for s in seeds if s not in known]
    everything = con.entity_names(tenant, readable) if unknown else []
    by_phrase: dict[str, set[str]] = {}
    for k, _, n, a in everything:
        for x in _names(k, n, a):
            by_phrase.setdefault(phrase(x), set()).add(k)
    for s in seeds:
        if s in known:
            out.seeds.append(s)
            continue
        keys = sorted(by_phrase.get(phrase(s), ()))
        if len(keys) == 1:
            out.seeds.append(keys[0])
            out.resolved.append({"from": "seed", "mention": s, "entity_key": keys[0], "method": "exact",
                                 "confidence": 1.0})
        else:
            out.seeds.append(s)
            if keys or not is_entity_key(s):      # a name that names several entities, or none
                out.unresolved.append({"from": "seed", "mention": s, "candidates": keys})
    if spec is not None and question:
        d = Dictionary()
        for k, _, n, a in con.entity_names(tenant, readable, types=list(spec.entity_types)):
            d.add(k, _names(k, n, a))
        for m in d.find(question, accept=spec.accept, candidate=spec.candidate, margin=spec.margin,
                        fuzzy=spec.fuzzy):
            if m.resolved is not None:
                if m.resolved not in out.seeds:
                    out.seeds.append(m.resolved)
                if m.resolved not in out.added_keys:
                    out.added_keys.append(m.resolved)
                out.resolved.append({"from": "question", "mention": m.text, "entity_key": m.resolved,
                                     "method": m.method, "confidence": m.confidence})
            else:
                out.unresolved.append({"from": "question", "mention": m.text,
                                       "candidates": [k for k, _ in m.candidates]})
    out.seeds = list(dict.fromkeys(out.seeds))
    return out
