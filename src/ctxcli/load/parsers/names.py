"""Every record field a manifest's mapping names, checked against the fields the source's records
have: a table's columns, the keys of an export's records (and of its nested items), the
front-matter keys of a Markdown folder's documents or of a git history's versions. A name that
no record of the source has is a misspelling (``servce`` for ``service``): one error at the
manifest's file:line:column with a did-you-mean, never a field that is silently null. A name
that only some records lack is fine (an optional key).

``ctx check``, ``ctx sources preview`` and ``ctx load`` (for each source it reads again) run it
before any record is mapped."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ..tenants import labelled
from .mapping import PLAIN_FIELDS, TIME_FIELDS, spec_names


@dataclass(frozen=True)
class FieldNames:
    """What a parser found: per scope ("" the records; a nested path its items) the names its
    records have and how a missing one is said (a format of ``name``)."""

    scopes: dict[str, tuple[set[str], str]]


def uses(m) -> list[tuple[str, str, str]]:
    """(where in the manifest, field name, scope) of every record field the manifest names."""
    out: list[tuple[str, str, str]] = []
    if m.mapping is not None:
        out += _mapping_uses(m.mapping, "mapping", "")
    if m.json_export is not None:
        for i, nm in enumerate(m.json_export.nested):
            out += _mapping_uses(nm.mapping, f"json_export.nested.{i}.mapping", nm.path)
    if m.table is not None and m.table.row_groups is not None:
        rg = m.table.row_groups
        out += [(f"table.row_groups.by.{i}", c, "") for i, c in enumerate(rg.by)]
        out += [(f"table.row_groups.columns.{i}", c, "") for i, c in enumerate(rg.columns)]
    return out


def _mapping_uses(mp, prefix: str, scope: str) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []

    def add(where: str, spec: str | None) -> None:
        if spec is not None:
            out.extend((where, n, scope) for n in spec_names(spec))

    for f in PLAIN_FIELDS + TIME_FIELDS:
        add(f"{prefix}.{f}", getattr(mp, f))
    for name, spec in mp.facts.items():
        if isinstance(spec, str):
            add(f"{prefix}.facts.{name}", spec)
        else:
            add(f"{prefix}.facts.{name}.from", spec.from_)
    for i, spec in enumerate(mp.keys):
        add(f"{prefix}.keys.{i}", spec)
    if mp.entity is not None:
        add(f"{prefix}.entity.key", mp.entity.key)
        add(f"{prefix}.entity.name", mp.entity.name)
    for i, rm in enumerate(mp.relations):
        add(f"{prefix}.relations.{i}.from", rm.from_)
        add(f"{prefix}.relations.{i}.to", rm.to)
    return out


def unknown_names(ls, marks: Any = None) -> list[InputError]:
    """One error per mapped name that no record of the source ``ls`` (a LoadedSource) has, in
    manifest order; none when the parser cannot tell its records' names."""
    used = uses(ls.manifest)
    if not used:
        return []
    got = ls.parser.field_names(ls)
    if got is None:
        return []
    if marks is None:
        marks = _marks(ls)
    label = getattr(marks, "label", None)      # a tenant's source: its entry (load/tenants.py)
    out: list[tuple[tuple[int, int], InputError]] = []
    told: set[tuple[str, str]] = set()
    for where, name, scope in used:
        have, say = got.scopes.get(scope, (set(), "no record has the field {name!r}"))
        if name in have or (where, name) in told:
            continue
        told.add((where, name))
        close = difflib.get_close_matches(name, sorted(have), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        pos = marks.find(where) if marks is not None else None
        line, col = pos if pos else (None, None)
        out.append(((line or 0, col or 0), InputError(say.format(name=name) + hint, file=ls.manifest_file,
                                                      line=line, column=col, field=labelled(label, where))))
    return [e for _, e in sorted(out, key=lambda x: x[0])]


def raise_unknown(ls) -> None:
    """Raise the unknown names of ``ls`` (all of them, one line each), if any."""
    errs = unknown_names(ls)
    if len(errs) == 1:
        raise errs[0]
    if errs:
        from ...errors import LoadProblems

        raise LoadProblems(errs)


def _marks(ls):
    """The manifest's marks (where each key is), or None when it cannot be read again."""
    from pathlib import Path

    from ..tenants import expanded_marks
    from .common import rel

    if ls.root is None:
        return None
    # a manifest with tenants or a base: where this tenant's source got each value
    return expanded_marks(Path(ls.root) / ls.manifest_file, ls.manifest_file, ls.manifest.source_id,
                          lambda p: rel(p, ls.root))
