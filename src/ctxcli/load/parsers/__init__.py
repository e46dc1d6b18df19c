"""Parsers: one module per kind of source, behind one small interface.

A parser takes a source (its manifest, the snapshot folder and the files in it: a
:class:`~ctxcli.load.parse.LoadedSource`) and yields the rows the store is built from —
objects, entities, relations and tombstones — raising :class:`~ctxcli.errors.InputError`
with the file and line, row or commit of the first problem. The mapping from a source's own
fields to ctx's lives in the manifest as data; no parser knows a domain.

Parsers are found through the ``ctx.parsers`` entry-point group: the bundled ones are
registered there by ctx's own distribution (pyproject.toml), a plugin by its own (a plain
callable, wrapped by :mod:`.plugin`, whose records ctx checks like any other; docs/authoring.md,
"Write a parser plugin"). :func:`get` maps a manifest's ``parser:`` name to its parser.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator, NamedTuple

from ...models.records import RelationRecord
from . import common


class Unit(NamedTuple):
    """One piece of a source's input that yields its objects on its own (a JSONL line, a
    Markdown file, a version of a git document): ``raw`` is what its objects are made from
    (with the manifest and rules, which the load adds to its digest), ``rows()`` parses it; a
    reload whose unit digest is the live store's copies that unit's objects instead of parsing
    it (load/sync.py). ``rows()`` is called, if at all, before the next unit is drawn."""

    raw: bytes
    file: str
    line: int | None
    rows: Callable[[], list[dict[str, Any]]]
    # the locator its objects take when they are copied (a table row's names its row number,
    # which is not in ``raw``: a row that moved is copied); None: the stored one
    locator: str | None = None


class Parser:
    """The interface. The default entities / relations / tombstones read the optional sidecar
    files (``entities.jsonl``, ``relations.jsonl``, ``tombstones.jsonl``) of the snapshot."""

    name = ""
    unit = ""           # what one of its units is, in the load report ("line", "file", "version")
    # a regex of the part of a locator that only says where a record sits in its input (a
    # table row's number): a record whose locator differs only there moved, it did not change
    # (the load's added / changed / removed report, load/reuse.py deltas)
    position = ""

    def check(self, ls) -> None:
        """Refuse a snapshot folder that cannot hold this parser's input (before any row)."""

    def objects(self, ls) -> Iterator[dict[str, Any]]:
        raise NotImplementedError

    def entities(self, ls) -> Iterator[dict[str, Any]]:
        return common.sidecar_entities(ls)

    def relations(self, ls) -> Iterator[tuple[RelationRecord, str, str, int]]:
        """(record, tenant, file, line)."""
        return common.sidecar_relations(ls)

    def tombstones(self, ls) -> Iterator[dict[str, Any]]:
        return common.sidecar_tombstones(ls)

    def field_names(self, ls):
        """The names the source's records have, for the mapping's names to be checked against
        (parsers/names.FieldNames), or None when the parser maps nothing."""
        return None

    def content_digest(self, ls) -> bytes | None:
        """The digest of what the source reads from outside its snapshot folder (a
        database), joined to the source's digest; None when it reads only its files."""
        return None

    def snapshot_digest(self, ls) -> bytes | None:
        """The digest of everything this parser reads from its snapshot folder, when it can tell
        it more cheaply than by hashing every file (git: a repository folder by the commit its
        ref resolves to, and the sidecar files); None: every file's bytes are hashed. Called after
        every file of the folder passed the walk's checks (no symlink out, a readable regular
        file). It must change whenever what the parser yields could: equal digests (with the
        same manifest and rules) let a load reuse the live store's rows of the source."""
        return None

    def units(self, ls) -> Iterator[Unit] | None:
        """The source's objects as :class:`Unit` s, in the order :meth:`objects` yields them,
        or None when this parser cannot tell which input an object came from (then a changed
        source is parsed whole)."""
        return None

    def copies_relations(self, ls) -> bool:
        """Whether a reload copies the relations attested by a copied unit's objects from the
        live store instead of reading them again (:meth:`relations` then leaves out the units
        in ``ls.copied_units``)."""
        return False

    def masks(self, m) -> list[dict[str, str]]:
        """Redaction patterns (``name``, ``regex``, ``replacement``) every object of this
        parser carries whatever the manifest says: PII the parser itself writes (git: the
        e-mail addresses of authors and committers)."""
        return []


GROUP = "ctx.parsers"
# The bundled parsers as pyproject.toml registers them ([project.entry-points."ctx.parsers"];
# tests/test_parser_plugins.py compares the two).
BUNDLED = {"records": "ctxcli.load.parsers.records:RecordsParser",
           "markdown": "ctxcli.load.parsers.markdown:MarkdownParser",
           "git": "ctxcli.load.parsers.git:GitParser",
           "table": "ctxcli.load.parsers.table:TableParser",
           "json-export": "ctxcli.load.parsers.json_export:JsonExportParser"}


class Origin(NamedTuple):
    """Where a parser comes from: its entry point's ``module:attribute`` and the distribution
    that registers it (``bundled``: ctx's own)."""

    name: str
    value: str
    dist: str
    version: str
    bundled: bool


class UnknownParser(LookupError):
    """A name no installed distribution registers (``close``: the installed names near it)."""


class AmbiguousParser(LookupError):
    """A name two distributions register (``dists``: their names)."""


class PluginError(Exception):
    """A plugin's entry point that cannot be imported or is not a callable (a one-line message)."""


_FOUND: dict[str, list[Origin]] | None = None
_LOADED: dict[str, Parser] = {}


def _norm(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def installed() -> dict[str, list[Origin]]:
    """Every parser name -> the distributions that register it (one, unless two clash), read
    from the installed distributions' metadata once per process (never for ``ctx --help``)."""
    global _FOUND
    if _FOUND is None:
        from importlib.metadata import entry_points

        from ...util.distribution import DISTRIBUTION

        found: dict[str, list[Origin]] = {}
        for ep in entry_points(group=GROUP):
            dist = ep.dist.name if ep.dist is not None else "?"
            version = ep.dist.version if ep.dist is not None else "?"
            bundled = _norm(dist) == DISTRIBUTION
            found.setdefault(ep.name, []).append(Origin(ep.name, ep.value, DISTRIBUTION if bundled else dist,
                                                        version, bundled))
        if not any(o.bundled for os_ in found.values() for o in os_):
            # ctx's own distribution registers no parser: ctx runs from a source tree
            # (PYTHONPATH=src, no metadata at all) or from an install made before the entry
            # points existed (an editable install keeps the metadata of the day it was made).
            # The bundled parsers are ctx's own code either way: the in-tree table stands for
            # the missing metadata, and a plugin reusing one of their names still clashes.
            from ... import __version__

            for name, value in BUNDLED.items():
                found.setdefault(name, []).insert(0, Origin(name, value, DISTRIBUTION, __version__, True))
        _FOUND = found
    return _FOUND


def origin(name: str) -> Origin:
    """The one registration of ``name``; :class:`UnknownParser` or :class:`AmbiguousParser`."""
    found = installed()
    if name not in found:
        import difflib

        raise UnknownParser(difflib.get_close_matches(name, sorted(found), n=1, cutoff=0.6))
    if len(found[name]) > 1:
        raise AmbiguousParser(sorted(o.dist for o in found[name]))
    return found[name][0]


def get(name: str) -> Parser:
    """The parser registered under the manifest's ``parser:`` value, imported on first use
    (a bundled one is a :class:`Parser`; a plugin's callable is wrapped by :mod:`.plugin`)."""
    p = _LOADED.get(name)
    if p is None:
        o = origin(name)
        module, _, attr = o.value.partition(":")
        if o.bundled:
            import importlib

            p = getattr(importlib.import_module(module), attr)()
        else:
            from .plugin import load_plugin

            p = load_plugin(o)
        _LOADED[name] = p
    return p


def redaction(m):
    """The redaction policy of a source (models.manifest.Redaction, or None): the manifest's
    ``redaction`` with its parser's own masks added (:meth:`Parser.masks`). Without a
    ``redaction`` block those masks apply to every subject; a manifest lifts them for the
    holders of its ``unless_scopes``, as it does its own patterns."""
    extra = get(m.parser).masks(m)
    if not extra:
        return m.redaction
    from ...models.manifest import Redaction

    base = m.redaction.model_dump(mode="json") if m.redaction is not None else {"patterns": []}
    have = {p["regex"] for p in base["patterns"]}
    base["patterns"] = base["patterns"] + [p for p in extra if p["regex"] not in have]
    return Redaction.model_validate(base)
