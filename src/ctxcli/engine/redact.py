"""Redaction: masks a source declares for subjects without a raw-read scope.

The masks apply to every string of an object that can reach an output: its text, title,
locator, source version and string facts (list items included), for admitted evidence and
for omission records alike. The digest of the unmasked text is shown only keyed with the
store secret (``before_hash``), never as a plain hash a subject could test guesses against.
"""

from __future__ import annotations

from typing import Any, Callable

import regex

from ..util.canon import content_hash, sealed_hash

Patterns = list[tuple[str, Any, str]]


def applies(o, scopes: frozenset[str]) -> bool:
    """Whether ``o``'s source masks it for a subject holding ``scopes``."""
    return bool(o.redaction) and not (set(o.redaction.get("unless_scopes", [])) & scopes)


def patterns(policy: dict[str, Any]) -> Patterns:
    return [(p["name"], regex.compile(p["regex"]), p["replacement"]) for p in policy["patterns"]]


def _apply(text: str, pats: Patterns, counts: dict[str, int]) -> str:
    for name, rx, repl in pats:
        text, n = rx.subn(repl, text)
        if n:
            counts[name] = counts.get(name, 0) + n
    return text


def mask(text: str, pats: Patterns, counts: dict[str, int] | None = None) -> str:
    return _apply(text, pats, {} if counts is None else counts)


def mask_facts(facts: dict[str, Any], pats: Patterns, counts: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in facts.items():
        if isinstance(v, str):
            out[k] = _apply(v, pats, counts)
        elif isinstance(v, list):
            out[k] = [_apply(x, pats, counts) if isinstance(x, str) else x for x in v]
        else:
            out[k] = v
    return out


def redact(o, policy: dict[str, Any], count: Callable[[str], int], *, key: bytes):
    """(text, title, facts, locator, source_version, transformation or None) of ``o`` masked
    under ``policy``; the transformation's ``before_hash`` is keyed with ``key``."""
    pats = patterns(policy)
    counts: dict[str, int] = {}
    text = _apply(o.content, pats, counts)
    title = _apply(o.title, pats, counts)
    locator = _apply(o.locator, pats, counts)
    version = _apply(o.source_version, pats, counts)
    facts = mask_facts(o.facts, pats, counts)
    if not counts:
        return o.content, o.title, dict(o.facts), o.locator, o.source_version, None
    tr = {
        "kind": "redaction", "policy_object": policy.get("policy_object"),
        "unless_scopes": list(policy.get("unless_scopes", [])),
        "masked": dict(sorted(counts.items())),
        "before_hash": sealed_hash(o.content_hash, key=key), "after_hash": content_hash(text),
        "before_tokens": o.tokens, "after_tokens": count(text),
    }
    return text, title, facts, locator, version, tr
