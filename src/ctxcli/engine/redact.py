"""Redaction: masks a source declares for subjects without a raw-read scope, applied to the
text, title and string facts before anything enters a pack."""

from __future__ import annotations

from typing import Any, Callable

import regex

from ..util.canon import content_hash


def _apply(text: str, pats: list[tuple[str, Any, str]], counts: dict[str, int]) -> str:
    for name, rx, repl in pats:
        text, n = rx.subn(repl, text)
        if n:
            counts[name] = counts.get(name, 0) + n
    return text


def redact(o, policy: dict[str, Any], count: Callable[[str], int]):
    pats = [(p["name"], regex.compile(p["regex"]), p["replacement"]) for p in policy["patterns"]]
    counts: dict[str, int] = {}
    text = _apply(o.content, pats, counts)
    title = _apply(o.title, pats, counts)
    facts: dict[str, Any] = {}
    for k, v in o.facts.items():
        if isinstance(v, str):
            facts[k] = _apply(v, pats, counts)
        elif isinstance(v, list):
            facts[k] = [_apply(x, pats, counts) if isinstance(x, str) else x for x in v]
        else:
            facts[k] = v
    if not counts:
        return o.content, o.title, dict(o.facts), None
    tr = {
        "kind": "redaction", "policy_object": policy.get("policy_object"),
        "unless_scopes": list(policy.get("unless_scopes", [])),
        "masked": dict(sorted(counts.items())),
        "before_hash": o.content_hash, "after_hash": content_hash(text),
        "before_tokens": o.tokens, "after_tokens": count(text),
    }
    return text, title, facts, tr
