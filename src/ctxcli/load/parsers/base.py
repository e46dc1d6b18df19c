"""The interface every parser implements (:class:`Parser`, the :class:`Unit` s of its input) and
what the registry (the package) hands the plugin wrapper (:mod:`.plugin`): an entry point's
:class:`Origin`, :class:`PluginError`. Its own module so that the wrapper need not import the
package that imports it; ``ctxcli.load.parsers`` re-exports every name."""

from __future__ import annotations

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


class Origin(NamedTuple):
    """Where a parser comes from: its entry point's ``module:attribute`` and the distribution
    that registers it (``bundled``: ctx's own)."""

    name: str
    value: str
    dist: str
    version: str
    bundled: bool


class PluginError(Exception):
    """A plugin's entry point that cannot be imported or is not a callable (a one-line message)."""
