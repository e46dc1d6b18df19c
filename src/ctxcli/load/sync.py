"""Record-level sync: which piece of a source's input each of its objects came from.

A parser that can tell (:meth:`~.parsers.Parser.units`: a JSONL line of ``parser: records``,
a Markdown file of ``parser: markdown``) yields its input as units; the load records, per
source, each unit's digest (of the source's context — manifest, parser masks, evidence rules —
and the unit's bytes) and how many objects it gave, in load order, in a file beside the store
(``<store>.sync``). On the next load of a changed source, a unit whose digest is recorded is
not parsed, validated or derived again: its objects' rows are copied from the live store
(``same_objects``, load/reuse.py) under the doc ids a full load gives them. Only added and
changed units are parsed; a removed unit's objects are simply not there.

The file is trusted for a source only when it was written with the live store: it records the
source's digest and first doc id, and both must be the live store's. A unit is parsed again
when any of its objects is missing from the live store (a tombstone deleted it) or when an id
it brings collides (the full load reports which line: ``Fallback``). The store itself is the
same as a full load's, row for row; so is this file.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import orjson

FORMAT = 1


def path_of(db: Path | str) -> Path:
    """The sync file of the store at ``db``."""
    return Path(str(db) + ".sync")


def unit_digest(context: str, raw: bytes) -> str:
    return digester(context)(raw)


def digester(context: str):
    """:func:`unit_digest` of ``context`` as a function of the unit's bytes (the context
    hashed once: a table has a unit per row)."""
    base = hashlib.sha256(context.encode() + b"\0")

    def digest(raw: bytes) -> str:
        h = base.copy()
        h.update(raw)
        return h.hexdigest()[:32]
    return digest


@dataclass
class PriorUnits:
    """What the live store's sync file says of one changed source, checked against the store."""

    first_doc: int
    units: list[tuple[str, int]]
    # old doc id -> (tenant, object id, supersedes) of the source's objects in the live store
    docs: dict[int, tuple[str, str, str | None]] = field(default_factory=dict)

    def available(self) -> "Available":
        """The old doc ids of each recorded unit, to be taken by digest in order."""
        return Available(self.units, self.first_doc)


class Available:
    """unit digest -> the old doc ids of each unit with that digest, taken in order
    (:meth:`take`); one entry per unit, a queue only for a digest recorded more than once."""

    def __init__(self, units: list[tuple[str, int]], first_doc: int) -> None:
        self.first: dict[str, tuple[int, int]] = {}
        self.more: dict[str, deque[tuple[int, int]]] = {}
        d = first_doc
        for h, n in units:
            if h in self.first:
                self.more.setdefault(h, deque()).append((d, n))
            else:
                self.first[h] = (d, n)
            d += n

    def take(self, h: str) -> range | None:
        """The old doc ids of the next unit recorded with digest ``h``; None when none is left."""
        got = self.first.pop(h, None)
        if got is None:
            more = self.more.get(h)
            if not more:
                return None
            got = more.popleft()
        return range(got[0], got[0] + got[1])


def read(db: Path, loads: dict[str, tuple[str, int]]) -> dict[str, dict]:
    """The sync file's entries of the sources whose digest and first doc id (``loads``: source
    -> (digest, first doc) in the live store) it matches; {} when there is none or it is not
    readable."""
    try:
        doc = orjson.loads(path_of(db).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("sources"), dict):
        return {}
    out = {}
    for sid, e in doc["sources"].items():
        if isinstance(e, dict) and sid in loads and (e.get("digest"), e.get("first_doc")) == loads[sid]:
            out[sid] = e
    return out


def write(path: str | Path, entries: dict[str, dict]) -> None:
    """The sync file of a staging store (moved beside the live store with it, :func:`publish`)."""
    with open(path, "wb") as fh:
        fh.write(orjson.dumps({"format": FORMAT, "sources": entries}, option=orjson.OPT_SORT_KEYS))


def publish(staging_sync: str, db: Path) -> None:
    """Move the staging store's sync file beside the live store, replacing the old one; with
    none, remove the old one (it described the previous store)."""
    target = path_of(db)
    if os.path.exists(staging_sync):
        os.replace(staging_sync, target)
    elif target.exists():
        target.unlink()
