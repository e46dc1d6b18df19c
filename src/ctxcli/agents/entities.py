"""Entity names in what an agent brings in: a tool result's arguments and facts, a tool call's
arguments. A string names an entity when one of its names (key, name or alias; at least
:data:`MIN_NAME` characters) occurs in it as a whole token, case-insensitively after NFKC. The
entity is one this subject may not see when it is only another tenant's, or when every object
linked to it (its tenant's objects whose ``subject_id`` is its key) is withheld from the subject."""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

MIN_NAME = 4        # shorter names ("HR", "Q3", "the") would match ordinary words


def norm(s: str) -> str:
    return unicodedata.normalize("NFKC", s).casefold()


class EntityNames:
    """The store's entities by normalised name, judged for one subject: :meth:`withheld` gives the
    withholding gate of an entity a string names that the subject may not see, else None."""

    def __init__(self, links: list[tuple], tenant_id: str, object_gate: Callable[[str], str | None]):
        by_key: dict[tuple[str, str], tuple[set[str], list[str]]] = {}
        for tenant, key, name, aliases, object_id in links:
            names, objs = by_key.setdefault((tenant, key), (set(), []))
            names.update(norm(n) for n in (key, name, *(aliases or [])) if n and len(norm(n)) >= MIN_NAME)
            if object_id:
                objs.append(object_id)
        self._tenant = tenant_id
        self._gate = object_gate
        self._names: dict[str, list[tuple[str, str, list[str]]]] = {}
        for (tenant, key), (names, objs) in by_key.items():
            for n in names:
                self._names.setdefault(n, []).append((tenant, key, objs))
        self._pattern = (re.compile(r"(?<!\w)(" + "|".join(re.escape(n) for n in
                                                            sorted(self._names, key=len, reverse=True)) + r")(?!\w)")
                         if self._names else None)
        self._memo: dict[str, tuple[str, str, str] | None] = {}

    def _judge(self, name: str) -> tuple[str, str, str] | None:
        if name not in self._memo:
            entities = self._names[name]
            mine = [(key, objs) for tenant, key, objs in entities if tenant == self._tenant]
            if not mine:                                # only another tenant's
                tenant, key, _ = entities[0]
                self._memo[name] = ("tenant", tenant, key)
            else:
                found = None
                for key, objs in mine:                  # visible when any object of any of them is
                    gates = [self._gate(o) for o in objs]
                    if not gates or any(g is None for g in gates):
                        found = None
                        break
                    found = found or (gates[0], self._tenant, key)
                self._memo[name] = found
        return self._memo[name]

    def withheld_entity(self, text: str) -> tuple[str, str, str] | None:
        """(gate, tenant, entity key) of the first entity ``text`` names that the subject may not see."""
        if self._pattern is None or not text:
            return None
        for m in self._pattern.finditer(norm(text)):
            found = self._judge(m.group(1))
            if found is not None:
                return found
        return None

    def withheld(self, text: str) -> str | None:
        """The withholding gate of the first entity ``text`` names that the subject may not see."""
        found = self.withheld_entity(text)
        return None if found is None else found[0]
