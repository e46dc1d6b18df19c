"""A parser plugin: a callable another distribution registers in the ``ctx.parsers`` entry-point
group, wrapped so that its records pass the same checks as the bundled parsers' records.

The contract (docs/authoring.md, "Write a parser plugin"): ctx calls ``parse(source)`` with a
:class:`Source` and iterates what it returns; each item is a mapping

    {"kind": "object" | "entity" | "relation" | "tombstone",
     "file": a name of ``source.files``, "line": an int ≥ 1 or None,
     "record": the record in ctx's own fields (``ctx schema record.<kind>``)}

Each record goes through the functions that read ``parser: records`` and the sidecar files
(parsers/common.py ``own_*``): validated, its tenant the manifest's, its scopes the manifest's
and its own; a bad record is a problem at its file and line. An item outside the contract, a
file that is not one of the snapshot folder's checked files, or an exception is one line naming
the plugin, the source and the manifest. The callable may carry ``versions`` (the manifest
``parser_version`` values it accepts; default ``("1",)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from ...errors import InputError
from ...models.manifest import DeletionMode
from ...models.records import RelationRecord
from .base import Origin, Parser, PluginError
from .common import (
    own_entity_row, own_object_row, own_relation, own_tombstone_row, report, sidecar_entities, sidecar_relations,
    sidecar_tombstones,
)

KINDS = ("object", "entity", "relation", "tombstone")
_KEYS = {"kind", "file", "line", "record"}


class Source:
    """What a plugin reads: ``source_id``, ``tenant_id`` (the manifest's, or None when each
    record names its own), ``folder`` (the snapshot folder), ``files`` (its files, relative
    POSIX names, sorted; each a regular readable file, no symlink out) and ``path(name)``."""

    def __init__(self, ls, who: str) -> None:
        self.source_id = ls.manifest.source_id
        self.tenant_id = ls.manifest.tenant_id
        self.folder = ls.snap
        self.files = tuple(sorted(ls.names))
        self._ls, self._who = ls, who

    def path(self, name: str) -> Path:
        """The checked file ``name`` of the snapshot folder (any other name is refused)."""
        p = self._ls.names.get(name)
        if p is None:
            raise InputError(f"{self._who} asked for {name!r}, not a file of the snapshot folder "
                             f"{self._ls.shown(self._ls.snap)}", file=self._ls.manifest_file, field="parser")
        return p


def load_plugin(o: Origin) -> "PluginParser":
    """The plugin's callable, imported and wrapped; :class:`PluginError` when it cannot be."""
    import importlib

    module, _, attr = o.value.partition(":")
    try:
        fn = importlib.import_module(module)
        for part in filter(None, attr.split(".")):
            fn = getattr(fn, part)
    except Exception as e:      # a plugin's import is its own code: any failure, one line
        raise PluginError(f"parser plugin {o.name} ({o.dist} {o.version}) cannot be imported from {o.value}: "
                          f"{type(e).__name__}: {e}") from None
    if not callable(fn):
        raise PluginError(f"parser plugin {o.name} ({o.dist} {o.version}): {o.value} is not a callable")
    return PluginParser(o, fn)


class PluginParser(Parser):
    """A plugin's callable behind the parser interface. Every file of the snapshot folder is
    hashed into the source's digest, and so is the plugin's distribution and version: a new
    version of the plugin reads the source again."""

    unit = "record"

    def __init__(self, o: Origin, fn) -> None:
        self.name, self.origin, self.fn = o.name, o, fn
        self.versions = tuple(getattr(fn, "versions", ("1",)))
        self.who = f"parser plugin {o.name} ({o.dist} {o.version})"

    def content_digest(self, ls) -> bytes | None:
        return f"plugin\0{self.origin.dist}\0{self.origin.version}\0{self.origin.value}".encode()

    def _broke(self, ls, what: str) -> InputError:
        return InputError(f"{self.who} {what} (source {ls.manifest.source_id})", file=ls.manifest_file,
                          field="parser")

    def _items(self, ls, want: str) -> Iterator[tuple[str, int | None, dict[str, Any]]]:
        """(file as displayed, line, record) of each item of kind ``want``; the plugin runs once per kind."""
        try:
            it = iter(self.fn(Source(ls, self.who)))
            n = 0
            while True:
                try:
                    item = next(it)
                except StopIteration:
                    return
                n += 1
                kind, file, line, record = self._envelope(ls, item, n)
                if kind == want:
                    yield ls.shown(ls.names[file]), line, record
        except InputError:
            raise           # ctx's own: a contract breach, a refused path
        except Exception as e:  # the plugin's code: one line, never a traceback
            raise self._broke(ls, f"raised {type(e).__name__}: {e}") from None

    def _envelope(self, ls, item, n: int) -> tuple[str, str, int | None, dict[str, Any]]:
        if not isinstance(item, dict) or not {"kind", "file", "record"} <= set(item) or set(item) - _KEYS:
            raise self._broke(ls, f"yielded item {n}, not a mapping of kind, file, line and record")
        kind, file, line, record = item["kind"], item["file"], item.get("line"), item["record"]
        if kind not in KINDS:
            raise self._broke(ls, f"yielded item {n} of kind {kind!r} (known: {', '.join(KINDS)})")
        if not isinstance(file, str) or file not in ls.names:
            raise self._broke(ls, f"yielded item {n} from file {file!r}, not a file of the snapshot folder "
                                  f"{ls.shown(ls.snap)}")
        if line is not None and (type(line) is not int or line < 1):
            raise self._broke(ls, f"yielded item {n} at line {line!r} (a line is a number from 1, or None)")
        if not isinstance(record, dict):
            raise self._broke(ls, f"yielded item {n} whose record is a {type(record).__name__}, not a mapping")
        return kind, file, line, record

    def objects(self, ls) -> Iterator[dict[str, Any]]:
        for disp, line, record in self._items(ls, "object"):
            try:
                yield own_object_row(ls.manifest, record, disp, line)
            except InputError as e:
                report(ls, e)

    def entities(self, ls) -> Iterator[dict[str, Any]]:
        yield from sidecar_entities(ls)
        for disp, line, record in self._items(ls, "entity"):
            try:
                yield own_entity_row(ls.manifest, record, disp, line)
            except InputError as e:
                report(ls, e)

    def relations(self, ls) -> Iterator[tuple[RelationRecord, str, str, int]]:
        yield from sidecar_relations(ls)
        for disp, line, record in self._items(ls, "relation"):
            try:
                rec, tenant = own_relation(ls.manifest, record, disp, line)
            except InputError as e:
                report(ls, e)
                continue
            yield rec, tenant, disp, line

    def tombstones(self, ls) -> Iterator[dict[str, Any]]:
        yield from sidecar_tombstones(ls)
        for disp, line, record in self._items(ls, "tombstone"):
            try:
                if ls.manifest.deletion_mode is DeletionMode.none:
                    raise InputError("a tombstone, but the source's deletion_mode is none", file=disp, line=line)
                yield own_tombstone_row(ls.manifest, record, disp, line)
            except InputError as e:
                report(ls, e)
