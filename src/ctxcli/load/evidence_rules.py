"""Evidence types by rule: the playbooks' ``evidence_types[].match`` rules, applied to every
object at load, add the types an object supports to the ``supports`` its record names (if
any). A rule changes the objects of the sources it can match, so the rules that can match a
source are part of that source's digest (a rule edit reloads it, nothing else)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError
from ..util.canon import canonical_bytes


@dataclass(frozen=True)
class Rule:
    type: str
    rule: Any               # models.playbook.EvidenceRule
    file: str
    line: int | None
    column: int | None
    index: int

    def applies_to(self, source_id: str) -> bool:
        return not self.rule.sources or source_id in self.rule.sources

    def matches(self, o: dict[str, Any], facts: dict[str, Any] | None = None) -> bool:
        r = self.rule
        if r.sources and o["source_id"] not in r.sources:
            return False
        if r.object_types and o["object_type"] not in r.object_types:
            return False
        if r.facts:
            facts = facts if facts is not None else orjson.loads(o["facts"])
            for k, v in r.facts.items():
                if k not in facts or facts[k] != v or type(facts[k]) is not type(v):
                    return False
        if r.terms:
            text = (o["title"] + "\n" + o["content"]).casefold()
            if not any(t.casefold() in text for t in r.terms):
                return False
        return True


def read_rules(playbooks_dir: Path, root: Path) -> list[Rule]:
    """Every rule of every playbook under ``playbooks_dir`` (none when the folder is absent)."""
    from ..models.playbook import Playbook
    from ..util.pyd import input_error
    from ..util.yamlio import read_yaml_marked
    from .parsers.common import rel

    if not playbooks_dir.is_dir():
        return []
    out: list[Rule] = []
    for p in sorted(x for x in playbooks_dir.iterdir() if x.suffix in (".yaml", ".yml")):
        disp = rel(p, root)
        marks = read_yaml_marked(p, display=disp)
        if not isinstance(marks.data, dict) or not any(isinstance(et, dict) and et.get("match")
                                                       for et in marks.data.get("evidence_types") or []):
            continue                    # no rules: the playbook is checked where it is used
        from pydantic import ValidationError

        try:
            pb = Playbook.model_validate(marks.data)
        except ValidationError as e:
            raise input_error(e, file=disp, marks=marks) from None
        for i, et in enumerate(pb.evidence_types):
            for j, r in enumerate(et.match):
                pos = marks.find(("evidence_types", str(i), "match", str(j))) or (None, None)
                out.append(Rule(et.type, r, disp, pos[0], pos[1], j + 1))
    return out


def rules_digest(rules: list[Rule], source_id: str) -> bytes:
    """The canonical bytes of the rules that can match ``source_id`` (b"" when none)."""
    mine = [(r.type, r.rule.model_dump(mode="json")) for r in rules if r.applies_to(source_id)]
    return canonical_bytes(mine) if mine else b""


def assign(o: dict[str, Any], rules: list[Rule]) -> None:
    """Add to ``o["supports"]`` the types whose rules match it."""
    if not rules:
        return
    facts = orjson.loads(o["facts"]) if any(r.rule.facts for r in rules) else None
    extra = {r.type for r in rules if r.matches(o, facts)}
    if extra - set(o["supports"]):
        o["supports"] = sorted(set(o["supports"]) | extra)


def check_known(o: dict[str, Any], known: set[str]) -> str | None:
    """A problem message when ``o`` names an evidence type no playbook declares."""
    bad = sorted(set(o["supports"]) - known)
    return f"supports names unknown evidence type {bad[0]}" if bad else None


__all__ = ["Rule", "read_rules", "rules_digest", "assign", "check_known", "InputError"]
