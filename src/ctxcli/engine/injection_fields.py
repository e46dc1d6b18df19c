"""The fields the injection gate scans (engine/gates.g_injection), apart from the gates so that
the load, which computes each object's stored verdict from exactly these fields
(load/verdicts.py), does not import the query-time gates (tests/store_cache.py keys a cached
store by the modules a build can run)."""

from __future__ import annotations

from typing import Any

Obj = Any       # an engine.gates.Obj, or anything with its attributes (load/verdicts.py)


def injection_fields(o: Obj) -> list[tuple[str, str]]:
    """Every string of the object that the evidence block renders to the model: title,
    content, facts (names and string values), and the header fields (locator,
    source_version, object_id, object_type, source_id, section, supports)."""
    fields = [("title", o.title), ("content", o.content)]
    for k in sorted(o.facts):
        v = o.facts[k]
        if isinstance(v, str):
            fields.append((f"facts.{k}", v))
        elif isinstance(v, list):
            fields.extend((f"facts.{k}[{i}]", x) for i, x in enumerate(v) if isinstance(x, str))
    fields.append(("facts (names)", "\n".join(sorted(o.facts))))
    fields += [("locator", o.locator), ("source_version", o.source_version), ("object_id", o.object_id),
               ("object_type", o.object_type), ("source_id", o.source_id), ("section", o.section or "")]
    fields.extend((f"supports[{i}]", x) for i, x in enumerate(o.supports))
    return fields


def accepted(name: str, accept: tuple[str, ...]) -> bool:
    """Whether the gate's field ``name`` ("facts.x", "facts.x[2]", "supports[0]" …) is one of
    the manifest's ``injection.accept_fields`` (a fact or ``supports`` names its items too)."""
    return any(name == a or name.startswith(a + "[") for a in accept)


def gated_fields(o: Obj) -> list[tuple[str, str]]:
    """The fields the injection gate scans: :func:`injection_fields` but those its manifest's
    ``injection.accept_fields`` accepts (``o.injection_accept``). The load computes each
    object's stored verdict from exactly these (load/verdicts.py)."""
    fields = injection_fields(o)
    if o.injection_accept:
        fields = [(n, t) for n, t in fields if not accepted(n, o.injection_accept)]
    return fields
