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

from .base import Origin, Parser, PluginError, Unit  # noqa: F401  (the package's interface)


GROUP = "ctx.parsers"
# The bundled parsers as pyproject.toml registers them ([project.entry-points."ctx.parsers"];
# tests/test_parser_plugins.py compares the two).
BUNDLED = {"records": "ctxcli.load.parsers.records:RecordsParser",
           "markdown": "ctxcli.load.parsers.markdown:MarkdownParser",
           "git": "ctxcli.load.parsers.git:GitParser",
           "table": "ctxcli.load.parsers.table:TableParser",
           "json-export": "ctxcli.load.parsers.json_export:JsonExportParser",
           "api": "ctxcli.load.parsers.api:ApiParser"}


class UnknownParser(LookupError):
    """A name no installed distribution registers (``close``: the installed names near it)."""


class AmbiguousParser(LookupError):
    """A name two distributions register (``dists``: their names)."""


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
