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
from ..util.globs import match_any
from ..util.masking import search_pattern


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
        if r.paths:
            path = o.get(PATH)
            if path is None or not match_any(path, r.paths):
                return False
        if r.facts or r.contains or any(f.startswith("facts.") for f in r.regex):
            facts = facts if facts is not None else orjson.loads(o["facts"])
            for k, v in r.facts.items():
                if k not in facts or not _same(facts[k], v):
                    return False
            for k, v in r.contains.items():
                if not isinstance(facts.get(k), list) or not any(_same(x, v) for x in facts[k]):
                    return False
        front = o.get(FRONT)
        if r.front_matter or r.front_matter_keys:
            if not isinstance(front, dict) or not all(k in front for k in r.front_matter_keys):
                return False
            for k, v in r.front_matter.items():
                x = front.get(k)
                if not (_same(x, v) or isinstance(x, list) and any(_same(y, v) for y in x)):
                    return False
        for f, src in r.regex.items():
            if not any(search_pattern(src).search(t) for t in _texts(o, f, facts, front)):
                return False
        if r.terms:
            text = (o["title"] + "\n" + o["content"]).casefold()
            if not any(t.casefold() in text for t in r.terms):
                return False
        return True


# The keys a file-backed parser adds to its object rows for the rules (parsers/markdown.py):
# the document's path and its own front matter. :func:`assign` removes them.
PATH, FRONT = "_path", "_front"


def _same(x: Any, v: Any) -> bool:
    """Equal as YAML reads them: ``502`` (a number) is not ``"502"``, ``1`` is not ``true``; a
    number kept as written (util/yamlio ``WrittenInt``) is the number it reads as."""
    return x == v and _kind(x) is _kind(v)


def _kind(x: Any) -> type:
    return next((t for t in (bool, int, float, str) if isinstance(x, t)), type(x))


def _text(x: Any) -> str | None:
    if isinstance(x, str):
        return x
    if isinstance(x, (bool, int, float)):
        written = getattr(x, "written", None)       # front matter: 1.10 as written (util/yamlio)
        return written if written is not None else canonical_bytes(x).decode()  # 1 -> "1", true -> "true"
    return None


def _texts(o: dict[str, Any], f: str, facts: dict[str, Any] | None, front: Any) -> list[str]:
    """The texts a rule's ``regex`` field names (a list value: each of its items)."""
    if f.startswith("facts."):
        x = (facts or {}).get(f[6:])
    elif f.startswith("front_matter."):
        x = front.get(f[13:]) if isinstance(front, dict) else None
    else:
        x = o.get(PATH if f == "path" else f)
    out = [_text(y) for y in (x if isinstance(x, list) else [x])]
    return [t for t in out if t is not None]


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
    """The canonical bytes of the rules that can match ``source_id`` (b"" when none). A
    criterion added since the first rules (``contains`` …) is part of them only when used, so a
    store's digests stay what they were for rules that do not use one."""
    mine = [(r.type, {k: v for k, v in r.rule.model_dump(mode="json").items() if v or k not in LATER})
            for r in rules if r.applies_to(source_id)]
    return canonical_bytes(mine) if mine else b""


LATER = ("contains", "paths", "front_matter", "front_matter_keys", "regex")


def assign(o: dict[str, Any], rules: list[Rule]) -> None:
    """Add to ``o["supports"]`` the types whose rules match it (and drop the keys a parser
    added for the rules only)."""
    if rules:
        facts = orjson.loads(o["facts"]) if any(r.rule.facts or r.rule.contains or r.rule.regex
                                                for r in rules) else None
        extra = {r.type for r in rules if r.matches(o, facts)}
        if extra - set(o["supports"]):
            o["supports"] = sorted(set(o["supports"]) | extra)
    o.pop(PATH, None)
    o.pop(FRONT, None)


def check_known(o: dict[str, Any], known: set[str]) -> str | None:
    """A problem message when ``o`` names an evidence type no playbook declares."""
    bad = sorted(set(o["supports"]) - known)
    return f"supports names unknown evidence type {bad[0]}" if bad else None


__all__ = ["Rule", "read_rules", "rules_digest", "assign", "check_known", "InputError"]
