"""A recalled memory record read against the admitted evidence: one that contradicts it is packed
only in the ``conflicts`` section, never as a memory.

A record is read as a ``fact`` about the evidence items it is about — those whose entity key
(``subject_id`` after its kind, ``store:S1`` → ``S1``) or object id it names as a whole word, and,
for its status, those sharing at least two content words with it. The checks run in this order
(:data:`CHECKS`); the first that finds a conflict decides:

- ``value_differs``: it binds a number to a fact field of an entity it names ("S1 profit in
  2026-08 was 600,000,000") and no admitted item of that entity holds that value in that field;
- ``misbound_entity``: a name it binds to a field ("owned by team-x") is not that field's value
  in the items it names (the claim checker's ``check_entities``);
- ``status_upgraded``: it states a cause without a hedge while an item it is about is unverified
  or a hypothesis (``verified: false``, ``status: hypothesis``);
- ``hedge_dropped``: it restates a hedged sentence of an item it is about without the hedge.
"""

from __future__ import annotations

import re
from typing import Any, Callable

Check = Callable[[str, list[dict[str, Any]], list[dict[str, Any]]], "dict[str, Any] | None"]

# a number bound to a field: "profit was 600", "profit in 2026-08 was 600", "cost: 12"
_BIND = r"(?:\s+[^\s.;,]+){0,4}?\s*(?:\bis\b|\bwas\b|\bwere\b|=|:|\bof\b|\breached\b|\btotall?ed\b|\bstood at\b)\s*"
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?![\d\-:])")


def entity_keys(item: dict[str, Any]) -> list[str]:
    """The names an evidence item's entity goes by: its subject's key and its object id."""
    subject = str(item.get("subject_id") or "")
    keys = [subject.split(":", 1)[1] if ":" in subject else subject, str(item.get("object_id") or "")]
    return [k for k in dict.fromkeys(keys) if len(k) >= 3]


def _names(text: str, key: str) -> bool:
    return re.search(r"(?<![\w\-])" + re.escape(key) + r"(?![\w\-])", text, re.I) is not None


def named(text: str, evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items whose entity the text names."""
    return [i for i in evidence if any(_names(text, k) for k in entity_keys(i))]


def _as_number(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        return None
    try:
        return float(v)
    except ValueError:
        return None


def value_differs(text: str, about: list[dict[str, Any]], _related: list[dict[str, Any]]) -> dict[str, Any] | None:
    from ..answer.numbers import normalise

    plain = normalise(text)
    fields: dict[str, list[tuple[float, str]]] = {}
    for i in about:
        for f, v in (i.get("facts") or {}).items():
            n = _as_number(v)
            if n is not None:
                fields.setdefault(f, []).append((n, i["evidence_id"]))
    for f in sorted(fields):
        spoken = "|".join(re.escape(x) for x in dict.fromkeys([f, f.replace("_", " ")]))
        for m in re.finditer(r"(?<![\w\-])(?:" + spoken + r")(?![\w\-])" + _BIND, plain, re.I):
            num = _NUMBER.match(plain, m.end())
            if num is None:
                continue
            given = float(num.group())
            held = fields[f]
            if all(abs(given - n) > 1e-9 for n, _ in held):
                return {"code": "value_differs", "field": f, "given": num.group(),
                        "admitted": sorted({_plain(n) for n, _ in held}),
                        "evidence": sorted({e for _, e in held})}
    return None


def _plain(n: float) -> str:
    return str(int(n)) if n == int(n) else str(n)


def misbound(text: str, about: list[dict[str, Any]], _related: list[dict[str, Any]]) -> dict[str, Any] | None:
    from ..answer.claims import check_entities

    found = check_entities(text, about)
    if not found:
        return None
    v = found[0]
    return {"code": "misbound_entity", "field": v["field"], "given": v["value"],
            "evidence": sorted(i["evidence_id"] for i in about if v["field"] in (i.get("facts") or {}))}


def status_upgraded(text: str, _about: list[dict[str, Any]], related: list[dict[str, Any]]) -> dict[str, Any] | None:
    from ..answer.claims import is_causal, is_hedged, is_unverified

    if not is_causal(text) or is_hedged(text):
        return None
    weak = sorted(i["evidence_id"] for i in related if is_unverified(i))
    return {"code": "status_upgraded", "status": "fact", "evidence": weak} if weak else None


def hedge_dropped(text: str, _about: list[dict[str, Any]], related: list[dict[str, Any]]) -> dict[str, Any] | None:
    from ..answer.claims import hedged_source, item_sources

    for i in related:
        if hedged_source(text, item_sources(i)) is not None:
            return {"code": "hedge_dropped", "evidence": [i["evidence_id"]]}
    return None


CHECKS: tuple[Check, ...] = (value_differs, misbound, status_upgraded, hedge_dropped)


def conflict(text: str, evidence: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Why a memory record's text contradicts the admitted ``evidence`` (the first check of
    :data:`CHECKS` that finds it: ``code`` and the evidence ids), or None."""
    from ..answer.claims import content_words

    about = named(text, evidence)
    words = content_words(text)
    related = about + [i for i in evidence if i not in about
                       and len(words & content_words(" ".join([str(i.get("text") or "")] + [
                           str(v) for v in (i.get("facts") or {}).values() if isinstance(v, str)]))) >= 2]
    for check in CHECKS:
        found = check(text, about, related)
        if found is not None:
            return found
    return None
