"""Sentences for omissions, built only from the facts the gate recorded in the pack.

Each gate's record (``docs/gates.md``) becomes one sentence saying what decided the
omission and a short list of what would have admitted it. Withheld records (tenant, scope,
classification, purpose) carry no object facts, so their sentences cannot reveal any.
"""

from __future__ import annotations

import math
from typing import Any, Callable

Explainer = Callable[[dict[str, Any], dict[str, Any]], tuple[str, list[str]]]


def _list(xs: Any) -> str:
    if isinstance(xs, (list, tuple)):
        return ", ".join(str(x) for x in xs) if xs else "none"
    return str(xs)


def _tenant(om, pack):
    return "withheld: it belongs to another tenant", ["nothing: another tenant's objects are never admitted"]


def _scope(om, pack):
    d = om.get("detail") or {}
    needs = d.get("needs") or []
    has = d.get("subject_has", pack["request"]["subject"].get("scopes", []))
    word = "scope" if len(needs) == 1 else "scopes"
    return (f"withheld: needs {word} {_list(needs)}, subject has {_list(has)}",
            [f"granting {word} {_list(needs)} to the subject"])


def _classification(om, pack):
    d = om.get("detail") or {}
    needs = d.get("needs")
    has = d.get("subject_has", pack["request"]["subject"].get("clearance", "internal"))
    return (f"withheld: needs clearance {needs}, subject has {has}",
            [f"clearing the subject for {needs} (--clearance {needs})"])


def _purpose(om, pack):
    d = om.get("detail") or {}
    allowed = d.get("allowed") or []
    purpose = d.get("purpose", pack["request"].get("purpose"))
    return (f"withheld: purpose {purpose} is not allowed, it needs purpose {_list(allowed)}",
            [f"a purpose in its allowed list ({_list(allowed)})"] if allowed
            else ["nothing: it allows no purpose"])


def _replacement(d: dict[str, Any], expired: bool) -> str:
    r = d.get("replacement")
    if isinstance(r, dict) and r.get("object_id"):
        ver = f" (version {r['version']})" if r.get("version") else ""
        return f"; replaced by {r['object_id']}{ver}" if expired else f"; in force instead: {r['object_id']}{ver}"
    return "; no visible version is valid at as_of"


def _validity(om, pack):
    d = om.get("detail") or {}
    as_of = d.get("as_of", pack["request"].get("as_of"))
    if om.get("reason") == "superseded_before_as_of":
        r = d.get("replacement")
        by = f"{r['object_id']}" + (f" (version {r['version']})" if r.get("version") else "") \
            if isinstance(r, dict) and r.get("object_id") else "a version the subject may not see"
        return (f"superseded: {by} replaces it and is in force at as_of {as_of}",
                [f"an as_of before {by} came into force"])
    if om.get("reason") == "not_yet_valid" or ("valid_from" in d and "valid_to" not in d):
        vf = d.get("valid_from")
        return (f"valid from {vf}, after as_of {as_of}{_replacement(d, False)}",
                [f"an as_of inside its validity (at or after {vf})"])
    vt = d.get("valid_to")
    return (f"valid until {vt}, before as_of {as_of}{_replacement(d, True)}",
            [f"an as_of inside its validity (before {vt})"])


def _knowledge_time(om, pack):
    d = om.get("detail") or {}
    obs, known = d.get("observed_at"), d.get("known_at")
    return (f"observed at {obs}, after known_at {known}",
            [f"a known_at at or after {obs}", "no known_at"])


def _freshness(om, pack):
    d = om.get("detail") or {}
    return (f"observed at {d.get('observed_at')}, {d.get('age_days')} days before as_of, older than the "
            f"source's max_age {d.get('max_age')}",
            [f"an as_of within {d.get('max_age')} of {d.get('observed_at')}", "a fresher copy in the source"])


def _integrity(om, pack):
    d = om.get("detail") or {}
    return (f"content read back hashes to {d.get('actual')}, not the registered {d.get('registered')}",
            ["content that matches its registered hash (reload the source)"])


def _injection(om, pack):
    d = om.get("detail") or {}
    trust = d.get("trust_level", om.get("trust_level"))
    pattern = d.get("pattern")
    label = d.get("matched") or pattern
    fld = d.get("field", "its text")
    src = "source" if trust == "authoritative" else "untrusted source"
    admit = ["text without instruction-like wording",
             f"an authoritative source whose manifest accepts {fld} (injection.accept_fields)"]
    if isinstance(pattern, str) and pattern.startswith("learned:"):
        return (f"{src} (trust {trust}): the learned detector {pattern} flagged {fld} ({label})", admit)
    what = f"'{label}'" if label else "an instruction pattern"
    rule = f" (rule {pattern})" if pattern and pattern != label else ""
    return (f"{src} (trust {trust}), matched instruction pattern {what} in {fld}{rule}", admit)


def _erasure(om, pack):
    d = om.get("detail") or {}
    copy = f" (a copy of the erased {d['copy_of']})" if d.get("copy_of") else ""
    return (f"erased on {d.get('erased_at')}{copy}: ctx erase recorded it; nothing of its text is read",
            ["none: an erased object is never admitted again"])


def _duplicate(om, pack):
    d = om.get("detail") or {}
    if om.get("reason") == "superseded_by_authority":
        kept = f"{d.get('preferred')} ({d.get('preferred_object_id')})"
        return (f"overlaps admitted evidence {kept} in {d.get('overlap')}, which comes first by {d.get('decided_by')}",
                [f"{d.get('preferred_object_id')} not being admitted",
                 "a playbook marking the evidence type compare: true"])
    dup = d.get("duplicate_of")
    by_ev = {e.get("evidence_id"): e.get("object_id") for e in pack.get("evidence", [])}
    of = f"{dup} ({by_ev[dup]})" if dup in by_ev else str(dup)
    return (f"same content as admitted evidence {of}",
            [f"content that differs from {by_ev.get(dup, dup)}", f"{by_ev.get(dup, dup)} not being admitted"])


def _relevance(om, pack):
    d = om.get("detail") or {}
    req = pack["request"]
    if om.get("reason") == "supports_no_declared_type":
        return (f"supports {_list(d.get('supports'))}, none of the playbook's evidence types",
                ["a playbook that declares one of those evidence types"])
    found = _list(d.get("found_by") or sorted((om.get("channels") or {})))
    return (f"about {d.get('subject_id') or 'no entity'}, not linked to this case (seeds {_list(req.get('seeds'))}, "
            f"business keys {_list(req.get('business_keys'))}); found only by {found}",
            ["a link to the case: a seed subject, one of the business keys, or a graph path from a seed"])


def _budget(om, pack):
    d = om.get("detail") or {}
    tokens, remaining, ev_budget = d.get("tokens"), d.get("remaining"), d.get("evidence_budget")
    s = f"{tokens} tokens, {remaining} left of the evidence budget {ev_budget}"
    if d.get("for_type"):
        s += f" (needed for {d['for_type']})"
    would: list[str] = []
    if isinstance(tokens, int) and isinstance(remaining, int) and isinstance(ev_budget, int):
        need_ev = ev_budget + (tokens - remaining)
        total = (pack.get("budget") or {}).get("total")
        if isinstance(total, int) and ev_budget > 0:
            approx = math.ceil(total * need_ev / ev_budget)
            would.append(f"a larger budget of at least {need_ev} evidence tokens (about --budget {approx})")
        else:
            would.append(f"a larger budget of at least {need_ev} evidence tokens")
    would.append("fewer or smaller items admitted before it")
    return s, would


EXPLAINERS: dict[str, Explainer] = {
    "tenant": _tenant, "scope": _scope, "classification": _classification, "purpose": _purpose, "erasure": _erasure,
    "validity": _validity,
    "knowledge_time": _knowledge_time, "freshness": _freshness, "integrity": _integrity,
    "injection": _injection, "duplicate": _duplicate, "relevance": _relevance, "budget": _budget,
}


def explain(om: dict[str, Any], pack: dict[str, Any]) -> tuple[str, list[str]]:
    """(sentence, what would have admitted it) for one omission record of ``pack``."""
    fn = EXPLAINERS.get(om.get("gate", ""))
    if om.get("withheld") and om.get("gate") not in ("tenant", "scope", "classification", "purpose"):
        return f"withheld by {om.get('gate')}", []
    if fn is None:
        return f"rejected by {om.get('gate')} ({om.get('reason')})", []
    try:
        return fn(om, pack)
    except (TypeError, AttributeError, KeyError):  # a record of an unexpected shape: say what we know
        return f"rejected by {om.get('gate')} ({om.get('reason')})", []


def needs(om: dict[str, Any]) -> dict[str, Any]:
    """What a withheld omission needs: scopes or a purpose (nothing for another tenant)."""
    d = om.get("detail") or {}
    if om.get("gate") == "scope":
        return {"scopes": list(d.get("needs") or [])}
    if om.get("gate") == "purpose":
        return {"purposes": list(d.get("allowed") or [])}
    if om.get("gate") == "classification":
        return {"clearance": d.get("needs")}
    return {}
