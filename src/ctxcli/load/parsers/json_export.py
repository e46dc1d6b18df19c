"""``parser: json-export`` — a nested export (tickets with timeline arrays, findings, a root
cause, action items) mapped onto one object per record and one per nested item.

``json_export.records`` is the dotted path of the records' array (``$``: the file is the
array); the manifest's ``mapping:`` maps each record. Each ``json_export.nested`` entry names a
dotted path inside a record (a list, or one object) and its own mapping; an item's templates
see its own fields, the record's as ``{parent.<field>}`` and the record's object id as
``{parent_id}``, its position (from 1) as ``{index}``; the item carries the fact ``parent_id``. Tenants, times, facts, entities
and relations map as for tables (parsers/table.py). Problems name the file and the record
(``record 3 timeline[2]``).
"""

from __future__ import annotations

from typing import Any, Iterator

import orjson

from ...errors import InputError
from ...models.records import RelationRecord
from ...util import jsonstrict
from . import Parser, Unit
from .common import confined, record_row, report
from .mapping import Where, apply
from .table import entity_of, mapped_record, relations_of, visible

MAX_EXPORT_BYTES = 256 * 1024 * 1024


def _select(doc: Any, path: str) -> Any:
    if path == "$":
        return doc
    for part in path.split("."):
        doc = doc.get(part) if isinstance(doc, dict) else None
    return doc


def _load(ls) -> tuple[list[Any], str]:
    opts = ls.manifest.json_export
    real = confined(ls.snap, opts.file, file=ls.manifest_file, field="json_export.file")
    p = ls.snap / opts.file
    disp = ls.shown(p)
    if not real.is_file():
        raise InputError(f"json_export.file {opts.file} does not exist", file=ls.manifest_file,
                         field="json_export.file")
    data = real.read_bytes()
    if len(data) > MAX_EXPORT_BYTES:
        raise InputError(f"over {MAX_EXPORT_BYTES} bytes", file=disp)
    try:
        doc = jsonstrict.loads(data)
    except (orjson.JSONDecodeError, jsonstrict.StrictJSONError) as e:
        raise InputError(f"invalid JSON: {str(e).split(':')[0]}", file=disp) from None
    recs = _select(doc, opts.records)
    if not isinstance(recs, list):
        raise InputError(f"json_export.records {opts.records!r} is not an array in the file", file=disp)
    return recs, disp


def items(ls) -> Iterator[tuple[Any, dict[str, Any], dict[str, Any], str, Where, str]]:
    """(mapping, item fields as the templates see them, ctx fields, tenant, where, locator) for the
    visible records and their nested items, each record followed by its items."""
    recs, disp = _load(ls)
    for i, rec in enumerate(recs, 1):
        yield from _record_items(ls, disp, i, rec)


def _record_items(ls, disp: str, i: int, rec: Any) -> Iterator[tuple[Any, dict[str, Any], dict[str, Any], str,
                                                                     Where, str]]:
    """:func:`items` of the ``i``-th record (from 1): the record, then its nested items."""
    m = ls.manifest
    where = Where(disp, None, f"record {i}")
    try:
        if not isinstance(rec, dict):
            raise where.error("a record must be a JSON object")
        tenant = visible(ls, rec, where)
        if tenant is None:
            return              # another tenant's record in a shared export: never read further
        fields = apply(m.mapping, rec, where)
    except InputError as e:
        report(ls, e)
        return
    fields.pop("tenant_id", None)
    loc = f"{m.json_export.file}#{m.json_export.records}[{i - 1}]"
    yield m.mapping, rec, fields, tenant, where, loc
    parent_id = fields.get("object_id")
    for nm in m.json_export.nested:
        sub = _select(rec, nm.path)
        subs = sub if isinstance(sub, list) else [] if sub is None else [sub]
        for j, item in enumerate(subs):
            iw = Where(disp, None, f"record {i} {nm.path}[{j}]")
            try:
                if not isinstance(item, dict):
                    raise iw.error("a nested item must be a JSON object")
                view = {**item, **{f"parent.{k}": v for k, v in rec.items()}, "parent_id": parent_id,
                        "index": j + 1}
                f2 = apply(nm.mapping, view, iw)
            except InputError as e:
                report(ls, e)
                continue
            f2.pop("tenant_id", None)
            if nm.parent_fact is not None:
                f2["facts"] = {**(f2.get("facts") or {}), nm.parent_fact: parent_id}
            yield nm.mapping, view, f2, tenant, iw, f"{loc}.{nm.path}[{j}]"


class JsonExportParser(Parser):
    name = "json-export"

    def check(self, ls) -> None:
        _load(ls)

    def field_names(self, ls):
        """The keys of every record, and of every nested item (with its record's keys as
        ``parent.<key>``, ``parent_id`` and ``index``)."""
        from .names import FieldNames

        recs, disp = _load(ls)
        top: set[str] = set()
        nested = {nm.path: {"parent_id", "index"} for nm in ls.manifest.json_export.nested}
        for rec in recs:
            if not isinstance(rec, dict):
                continue
            top.update(rec)
            for path, have in nested.items():
                sub = _select(rec, path)
                for item in sub if isinstance(sub, list) else [sub]:
                    if isinstance(item, dict):
                        have.update(item)
        scopes = {"": (top, f"no record of {disp} has the key {{name!r}}")}
        for path, have in nested.items():
            scopes[path] = (have | {f"parent.{k}" for k in top},
                            f"no {path} item of {disp} has the key {{name!r}} (nor its record as parent.<key>)")
        return FieldNames(scopes)

    unit = "record"

    def objects(self, ls) -> Iterator[dict[str, Any]]:
        yield from _rows(ls, items(ls))

    def units(self, ls) -> Iterator[Unit]:
        """One unit per record (its position and JSON: its locator names its position), with
        its nested items."""
        recs, disp = _load(ls)
        return (Unit(orjson.dumps([i, rec]), disp, None,
                     lambda i=i, rec=rec: list(_rows(ls, _record_items(ls, disp, i, rec))))
                for i, rec in enumerate(recs, 1))

    def copies_relations(self, ls) -> bool:
        """As for tables (TableParser.copies_relations): a copied record's relations (its own
        and its nested items') are the live store's, unless a relations.jsonl beside the
        export also names the source's objects as evidence."""
        m = ls.manifest
        return (bool(m.mapping.relations) or any(nm.mapping.relations for nm in m.json_export.nested)) \
            and "relations.jsonl" not in ls.names

    def entities(self, ls) -> Iterator[dict[str, Any]]:
        """The entity of each record and nested item, once per key. On a reload, a record whose
        unit the live store's sync file records (``ls.known_units``) is not mapped again: only
        its tenant and its entity are read (when no nested mapping declares an entity)."""
        yield from super().entities(ls)
        m = ls.manifest
        if m.mapping.entity is None and not any(nm.mapping.entity for nm in m.json_export.nested):
            return
        seen: set[tuple[str, str]] = set()
        known = getattr(ls, "known_units", None) or None
        if any(nm.mapping.entity for nm in m.json_export.nested):
            known = None        # a nested item's entity may need its record's whole mapping
        recs, disp = _load(ls)
        digest = None
        if known:
            from ..sync import digester

            digest = digester(ls.context)
        for i, rec in enumerate(recs, 1):
            if digest is not None and isinstance(rec, dict) and digest(orjson.dumps([i, rec])) in known:
                where = Where(disp, None, f"record {i}")
                try:
                    tenant = visible(ls, rec, where)
                    got = [] if tenant is None else list(entity_of(m, m.mapping.entity, rec, tenant, where, seen))
                except InputError as e:
                    report(ls, e)
                    continue
                yield from got
                continue
            for mp, view, _fields, tenant, where, _loc in _record_items(ls, disp, i, rec):
                if mp.entity is not None:
                    try:
                        got = list(entity_of(m, mp.entity, view, tenant, where, seen))
                    except InputError as e:
                        report(ls, e)
                        continue
                    yield from got

    def relations(self, ls) -> Iterator[tuple[RelationRecord, str, str, int]]:
        """The relations of each record and nested item; on a reload not those of the records
        whose unit was copied from the live store (``ls.copied_units``: record numbers - 1),
        whose relations are copied with it (load/reuse.py ``copy_unit_relations``)."""
        yield from super().relations(ls)
        m = ls.manifest
        if not m.mapping.relations and not any(nm.mapping.relations for nm in m.json_export.nested):
            return
        copied = getattr(ls, "copied_units", None) if self.copies_relations(ls) else None
        recs, disp = _load(ls)
        n = 0                   # the item's number in the export (records and nested items)
        for i, rec in enumerate(recs, 1):
            if copied and i - 1 in copied:
                n += _item_count(ls, rec)
                continue
            for mp, view, fields, tenant, where, loc in _record_items(ls, disp, i, rec):
                n += 1
                if mp.relations:
                    try:
                        rec_ = _checked(view, fields, where, loc)
                        got = list(relations_of(mp, view, fields, rec_, tenant, where, n))
                    except InputError as e:
                        report(ls, e)
                        continue
                    yield from got


def _item_count(ls, rec: Any) -> int:
    """How many items a copied record (mapped without a problem before) yields: the record and
    its nested items, none for another tenant's record."""
    try:
        if not isinstance(rec, dict) or visible(ls, rec, Where("", None, "")) is None:
            return 0
    except InputError:
        return 0
    n = 1
    for nm in ls.manifest.json_export.nested:
        sub = _select(rec, nm.path)
        n += len(sub) if isinstance(sub, list) else 0 if sub is None else 1
    return n


def _rows(ls, its) -> Iterator[dict[str, Any]]:
    for _, view, fields, tenant, where, loc in its:
        try:
            rec = _checked(view, fields, where, loc)
        except InputError as e:
            report(ls, e)
            continue
        yield record_row(ls.manifest, rec, tenant, where)


def _checked(view: dict[str, Any], fields: dict[str, Any], where: Where, loc: str):
    return mapped_record(view, fields, where, loc)
