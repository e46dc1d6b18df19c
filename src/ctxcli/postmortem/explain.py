"""Explaining omissions: why each omitted candidate was left out, grouped by gate.

Records the access rules withheld inside the candidate statements never became candidates:
they are reported as counts per gate (``withheld``: the most any one query withheld, a lower
bound), never one by one.

Every sentence is built from the facts the pack recorded (see :mod:`.sentences`); withheld
omissions show their opaque ref and the scope, clearance or purpose they need, nothing else. One
object, in the pack or not, is explained by :mod:`.objects`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import UsageError
from . import sentences
from .objects import ObjectExplanation, explain_object
from ..util.withheld import withheld_counts
from .packfile import LoadedPack

__all__ = ["GateGroup", "ObjectExplanation", "OmissionExplanation", "OmissionReport", "explain_object",
           "explain_omission", "explain_omissions"]

OMISSIONS_SCHEMA = "ctx.omissions/1"

# ---------------------------------------------------------------------------------- all omissions
@dataclass
class OmissionExplanation:
    ref: str
    gate: str
    reason: str
    withheld: bool
    round: int | None
    sentence: str
    would_admit: list[str]
    object_id: str | None = None
    source_id: str | None = None
    source_version: str | None = None
    title: str | None = None
    needs: dict[str, Any] = field(default_factory=dict)
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if self.withheld:   # a withheld record names nothing but its ref, gate and needs
            for k in ("object_id", "source_id", "source_version", "title"):
                d.pop(k)
        else:
            d.pop("needs")
        return d


@dataclass
class GateGroup:
    gate: str
    items: list[OmissionExplanation]


@dataclass
class OmissionReport:
    pack_id: str
    case_id: str
    variant: str | None
    subject_id: str
    scopes: list[str]
    purpose: str
    as_of: str
    gate_filter: str | None
    groups: list[GateGroup]
    missing: list[dict[str, Any]]
    withheld: dict[str, int] = field(default_factory=dict)   # gate -> matches the statements withheld (≥)
    inputs: list[dict[str, Any]] | None = None   # the caller's inputs the gates dropped (tool results, memory)

    @property
    def total(self) -> int:
        return sum(len(g.items) for g in self.groups)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": OMISSIONS_SCHEMA, "pack_id": self.pack_id, "case_id": self.case_id,
            "variant": self.variant, "subject": {"id": self.subject_id, "scopes": self.scopes},
            "purpose": self.purpose, "as_of": self.as_of, "gate": self.gate_filter, "total": self.total,
            "gates": [{"gate": g.gate, "count": len(g.items), "omissions": [i.to_json() for i in g.items]}
                      for g in self.groups],
            "missing": self.missing,
            "withheld": dict(self.withheld),
            # only for packs given tool results or memory: other reports keep their bytes
            **({"inputs": self.inputs} if self.inputs is not None else {}),
        }


def explain_omission(om: dict[str, Any], pack: dict[str, Any]) -> OmissionExplanation:
    sentence, would = sentences.explain(om, pack)
    withheld = bool(om.get("withheld"))
    x = OmissionExplanation(ref=om["ref"], gate=om["gate"], reason=str(om.get("reason")), withheld=withheld,
                            round=om.get("round"), sentence=sentence, would_admit=would,
                            detail=dict(om.get("detail") or {}))
    if withheld:
        x.needs = sentences.needs(om)
    else:
        x.object_id = om.get("object_id", om["ref"])
        x.source_id = om.get("source_id")
        x.source_version = om.get("source_version")
        x.title = om.get("title")
    return x


def input_omissions(pack: dict[str, Any], gate: str | None = None) -> list[dict[str, Any]] | None:
    """The tool results and working-memory items / memory records the gates dropped, each
    with a sentence; a withheld one only by its keyed reference and gate. None when the pack
    was given no tool result and no memory."""
    if "tool_omissions" not in pack and "memory_omissions" not in pack:
        return None
    out = []
    for om in pack.get("tool_omissions") or []:
        out.append({"section": "tool_results", **om})
    out += list(pack.get("memory_omissions") or [])
    what = {"tool_results": "tool result", "working_memory": "working-memory item",
            "episodic_memory": "memory record"}
    res = []
    for om in out:
        if gate is not None and om["gate"] != gate:
            continue
        reason = om["reason"].replace("_", " ")
        if om["withheld"]:
            sentence = f"A {what[om['section']]} the subject may not see was withheld by {om['gate']} ({reason})."
            res.append({k: om[k] for k in ("section", "ref", "withheld", "gate", "reason", "detail")}
                       | {"sentence": sentence})
            continue
        d = om.get("detail") or {}
        extra = (f": field {d['field']}, pattern {d['pattern']}" if om["gate"] == "injection" else
                 f": age {d['age']} over max_age {d['max_age']}" if "age" in d else
                 f": {d['tokens']} tokens, {d['remaining']} left" if om["gate"] == "budget" else "")
        verb = "had its text cleared" if om["reason"] == "stale_tool_result_cleared" else "was dropped"
        tail = " (its reference is kept)" if om["reason"] == "stale_tool_result_cleared" else ""
        res.append({**om, "sentence": f"The {what[om['section']]} {om['ref']} {verb} by {om['gate']} "
                                      f"({reason}){extra}{tail}."})
    return res


def explain_omissions(lp: LoadedPack, gate: str | None = None) -> OmissionReport:
    """Every omitted candidate of the pack, grouped by gate in the pack's gate order."""
    pack = lp.data
    order = [g for g in pack["gate_order"] if isinstance(g, str)]
    inputs = input_omissions(pack)
    if gate is not None and gate not in order and gate not in {o["gate"] for o in inputs or []}:
        raise UsageError(f"--gate: unknown gate {gate!r} (gates: {', '.join(order)})")
    by_gate: dict[str, list[OmissionExplanation]] = {}
    for om in pack["omissions"]:
        if gate is not None and om["gate"] != gate:
            continue
        by_gate.setdefault(om["gate"], []).append(explain_omission(om, pack))
    names = [g for g in order if g in by_gate] + sorted(g for g in by_gate if g not in order)
    req = pack["request"]
    return OmissionReport(
        pack_id=lp.pack_id, case_id=req["case_id"], variant=req.get("variant"), subject_id=req["subject"]["id"],
        scopes=list(req["subject"].get("scopes", [])), purpose=req["purpose"], as_of=req["as_of"],
        gate_filter=gate, groups=[GateGroup(g, by_gate[g]) for g in names], missing=list(pack.get("missing", [])),
        withheld={g: n for g, n in withheld_counts(pack).items() if gate is None or g == gate},
        inputs=input_omissions(pack, gate))
