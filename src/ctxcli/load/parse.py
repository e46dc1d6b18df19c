"""Read and validate manifests and snapshots into rows, without touching any store.

Every problem raises :class:`InputError` naming the file, line and field.
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..errors import InputError
from ..models.manifest import SourceManifest
from ..models.records import RelationRecord
from ..util.canon import canonical_bytes, sha256_hex
from ..util.yamlio import read_yaml_marked
from . import parsers
from .parsers.common import file_sha256, rel, us as _us  # noqa: F401  (build.py's names)
from .parsers.markdown import anchor, split_markdown  # noqa: F401  (tests and older callers)

_OPTIONAL_BLOCKS = ("mapping", "markdown", "git", "table", "json_export", "on_dangling", "linking", "injection")


@dataclass
class LoadedSource:
    """One source's snapshot, validated lazily: each ``iter_*`` streams its records (through
    the source's parser, load/parsers/), so a load never holds a whole corpus in memory.
    ``snap`` is None for a disabled source."""

    manifest: SourceManifest
    manifest_file: str
    digest: str
    root: Path | None = None
    snap: Path | None = None
    names: dict[str, Path] = field(default_factory=dict)
    rules: list = field(default_factory=list)      # the playbooks' evidence rules that can match it
    problems: Any = None        # parsers/common.Problems while a load gathers every problem, else None
    # the digest of what shapes each object besides its own input (manifest, parser masks, rules)
    context: str = ""
    # record-level sync (load/sync.py): the live store's sync entry of this source, when the load
    # trusts it (a parser that keeps a walk state reads it there: git's cursor); what the parser
    # asks the new entry to record (``state``) and to report about how it read (``sync_report``)
    sync_entry: dict | None = None
    sync_state: Any = None
    sync_report: dict | None = None
    walk: Any = None            # a parser's last complete pass over the source (git: for its tombstones)
    # on a reload (load/build.py): the unit digests the live store's sync file records for this
    # source, and the positions of the units whose objects were copied from the live store
    known_units: frozenset = frozenset()
    copied_units: set | None = None
    pin: Any = None             # what the parser's snapshot digest resolved, read by its walk (git: the tip)
    refused: bool = False       # its mapping names a field no record has (parsers/names.py): not read
    names_walk: Any = None      # git: the whole-history walk of the names check, reused once by the parse

    @property
    def parser(self):
        return parsers.get(self.manifest.parser.value)

    def iter_objects(self, dedup: bool = True) -> Iterator[dict[str, Any]]:
        """Object rows; without ``dedup`` their ``dedup_hash`` is left out (the load computes
        it in its workers, load/derive.py)."""
        if self.snap is None or self.refused:
            return
        from .evidence_rules import assign

        for o in self.parser.objects(self):
            assign(o, self.rules)
            if dedup:
                o["dedup_hash"] = dedup_hash(o["content"])
            yield o

    def iter_units(self):
        """The parser's :class:`~.parsers.Unit` s with the evidence rules applied to their rows
        (as :meth:`iter_objects` applies them), or None when the parser has none."""
        units = self.parser.units(self) if self.snap is not None and not self.refused else None
        if units is None:
            return None
        from .evidence_rules import assign

        def ruled(u):
            rows = u.rows()
            for o in rows:
                assign(o, self.rules)
            return rows

        # (tuple.__new__, not _replace: a table has a unit per row)
        return (tuple.__new__(type(u), (*u[:3], lambda u=u: ruled(u), *u[4:])) for u in units)

    def iter_entities(self) -> Iterator[dict[str, Any]]:
        if self.snap is None or self.refused:
            return
        yield from self.parser.entities(self)

    def iter_relations(self) -> Iterator[tuple[RelationRecord, str, str, int]]:
        """(record, tenant, file, line)."""
        if self.snap is None or self.refused:
            return
        yield from self.parser.relations(self)

    def iter_tombstones(self) -> Iterator[dict[str, Any]]:
        if self.snap is None or self.refused:
            return
        yield from self.parser.tombstones(self)


def manifest_digest(m: SourceManifest) -> str:
    """The digest of a manifest's content (its validated fields, not its formatting or comments):
    recorded per source in the store's meta (``manifest_digests``) and compared with the
    project's manifests whenever a run opens the store (api.require_current_manifests)."""
    d = m.model_dump(mode="json")
    if d.get("linking") is None:
        d.pop("linking", None)       # a manifest without linking keeps the digest it had before linking existed
    if d.get("injection") is None:
        d.pop("injection", None)     # likewise without an injection policy
    return "sha256:" + sha256_hex(canonical_bytes(d))


def require_manifests(manifests_dir: Path, root: Path) -> Path:
    """The manifests' sources/ folder; its absence is an input error that says how to start."""
    src_dir = manifests_dir / "sources"
    if not src_dir.is_dir():
        raise InputError("no sources/ folder of manifests (a new project: `ctx init`, or `ctx init --example claims`)",
                         file=rel(manifests_dir, root))
    return src_dir


def read_manifests(manifests_dir: Path, root: Path) -> list[tuple[SourceManifest, str, bytes]]:
    """Every source the manifests declare, in file order: a manifest with ``tenants`` or
    ``extends`` gives one source per tenant (load/tenants.py). Two sources with one id, or two
    tenants' sources reading the same data, are an error naming both."""
    from .tenants import data_place, expand, labelled, overlaps, validated

    src_dir = require_manifests(manifests_dir, root)
    out: list[tuple[SourceManifest, str, bytes]] = []
    seen: dict[str, str] = {}
    places: list[tuple[str, str, str]] = []      # (real path read, tenant, where it is declared)
    files = sorted(p for p in src_dir.iterdir() if p.suffix in (".yaml", ".yml"))
    real_root = Path(os.path.realpath(root))
    for p in files:
        disp = rel(p, root)
        if not _inside(p, real_root):   # the rule of snapshot files: no symlink out of the project
            raise InputError("manifest is a symlink that leads outside the project root", file=disp)
        marks = read_yaml_marked(p, display=disp)
        data = marks.data
        if not isinstance(data, dict):
            raise InputError("a manifest must be a YAML mapping", file=disp)
        for exp in expand(marks, disp, p, manifests_dir, lambda x: rel(x, root)):
            m = validated(exp, disp)
            where = f"{disp} {exp.label}" if exp.label else disp
            if m.source_id in seen:
                ln, col = exp.marks.find("source_id") or (None, None)
                raise InputError(f"source_id {m.source_id!r} is already registered by {seen[m.source_id]}",
                                 file=disp, line=ln, column=col, field=labelled(exp.label, "source_id"))
            seen[m.source_id] = where
            place = data_place(m, root)
            for other, tenant, by in places if place is not None else ():
                if tenant != m.tenant_id and overlaps(place, other):
                    ln, col = exp.marks.find("snapshot") or (None, None)
                    raise InputError(f"reads {rel(Path(place), root)}, and {by} (tenant {tenant}) reads "
                                     f"{rel(Path(other), root)}: a source never reads another tenant's data",
                                     file=disp, line=ln, column=col, field=labelled(exp.label, "snapshot"))
            if place is not None:
                places.append((place, m.tenant_id, where))
            out.append((m, disp, canonical_bytes(manifest_dump(m))))
    if not out:
        raise InputError("no source manifests (*.yaml) found", file=rel(src_dir, root))
    return out


def manifest_dump(m: SourceManifest) -> dict[str, Any]:
    """The manifest as digested: the parser option blocks a manifest leaves out are left out,
    so a manifest written before they existed keeps its digest."""
    d = m.model_dump(mode="json", by_alias=True)
    for k in _OPTIONAL_BLOCKS:
        if d.get(k) is None:
            d.pop(k, None)
    return d


def resolve_snapshot(m: SourceManifest, disp: str, root: Path, sources_dir: Path | None) -> Path:
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in m.snapshot):
        raise InputError("snapshot path contains a control character (a NUL byte?)", file=disp, field="snapshot")
    raw = Path(m.snapshot)
    if raw.is_absolute() or ".." in raw.parts:
        raise InputError("snapshot path must stay inside the project root", file=disp, field="snapshot")
    base = root
    if sources_dir is not None and raw.parts and raw.parts[0] == "sources":
        base, raw = sources_dir, Path(*raw.parts[1:]) if len(raw.parts) > 1 else Path(".")
    real_base = Path(os.path.realpath(base))
    target = Path(os.path.realpath(base / raw))
    if target != real_base and real_base not in target.parents:
        raise InputError("snapshot path escapes the project root (through a symlink?)", file=disp, field="snapshot")
    if not target.is_dir():
        raise InputError(f"snapshot folder {m.snapshot} does not exist", file=disp, field="snapshot")
    return target


def _inside(path: Path, folder: Path) -> bool:
    real = Path(os.path.realpath(path))
    return folder in real.parents


def dedup_hash(text: str) -> str:
    """Hash of the text with case and white space folded: near-duplicates collide.
    (``str.split`` cuts at exactly the characters ``\\s`` matches: ``re.sub(r"\\s+", " ", text).strip()``
    is ``" ".join(text.split())``, which is cheaper.)"""
    return "sha256:" + sha256_hex(" ".join(text.split()).casefold())


def _check_file(p: Path, root: Path, real_snap: Path) -> None:
    """Refuse a snapshot file that leads outside the snapshot, is not a regular file or cannot
    be read (without reading it: a parser may digest its input another way)."""
    # os.walk does not descend into a symlinked folder: only a symlink itself can lead out
    # (resolving every path of a git repository's thousands of objects cost a reload ~25 %)
    if os.path.islink(p) and not _inside(p, real_snap):
        raise InputError("file is a symlink that leads outside the snapshot folder", file=rel(p, root))
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):  # a FIFO would block the load forever
            raise InputError("not a regular file", file=rel(p, root))
        os.close(os.open(p, os.O_RDONLY))
    except OSError as e:  # unreadable, a symlink loop …
        raise InputError(f"cannot read file: {e.strerror}", file=rel(p, root)) from None


def parse_source(m: SourceManifest, mdisp: str, mbytes: bytes, root: Path,
                 sources_dir: Path | None, rules: list | None = None) -> LoadedSource:
    """The source's snapshot, digested; ``rules`` are the playbooks' evidence rules
    (load/evidence_rules.py): those that can match this source join its digest. An error at
    the manifest names a tenant's entry (load/tenants.py)."""
    from .tenants import tenant_named

    with tenant_named(m, mdisp, root):
        return _parse_source(m, mdisp, mbytes, root, sources_dir, rules)


def _parse_source(m: SourceManifest, mdisp: str, mbytes: bytes, root: Path,
                  sources_dir: Path | None, rules: list | None) -> LoadedSource:
    snap = resolve_snapshot(m, mdisp, root, sources_dir)
    real_snap = Path(os.path.realpath(snap))
    files: list[Path] = []

    def walk_error(e: OSError) -> None:  # never skip an unreadable folder silently
        raise InputError(f"cannot read folder: {e.strerror}", file=rel(Path(e.filename or snap), root))

    for dirpath, dirnames, filenames in os.walk(snap, followlinks=False, onerror=walk_error):
        dirnames.sort()
        for fn in sorted(filenames):
            files.append(Path(dirpath) / fn)
    digest = hashlib.sha256()
    digest.update(b"manifest\0" + mbytes + b"\0")
    own = parsers.get(m.parser.value).masks(m)
    if own:     # the parser's own masks shape the index: a store made without them is not reused
        digest.update(b"masks\0" + canonical_bytes(own) + b"\0")
    mine = [r for r in rules or [] if r.applies_to(m.source_id)]
    if mine:
        from .evidence_rules import rules_digest

        digest.update(b"rules\0" + rules_digest(mine, m.source_id) + b"\0")
    context = digest.hexdigest()
    for p in files:     # every file is checked, whoever digests it
        _check_file(p, root, real_snap)
    names = {p.relative_to(snap).as_posix(): p for p in files}
    ls = LoadedSource(manifest=m, manifest_file=mdisp, digest="", root=root, snap=snap, names=names, rules=mine,
                      context=context)
    by_parser = ls.parser.snapshot_digest(ls)
    if by_parser is not None:   # the parser digests its input itself (git: a repository folder by its tip)
        digest.update(b"snapshot\0" + by_parser + b"\0")
    else:
        for p in files:
            digest.update(p.relative_to(snap).as_posix().encode() + b"\0" + file_sha256(p, root))
    ls.parser.check(ls)
    extra = ls.parser.content_digest(ls)     # rows read from a database, not from the folder
    if extra is not None:
        digest.update(b"content\0" + extra + b"\0")
    ls.digest = "sha256:" + digest.hexdigest()
    return ls


def open_source(m: SourceManifest, mdisp: str, root: Path, sources_dir: Path | None = None) -> LoadedSource:
    """The source's snapshot as :func:`parse_source` opens it (every file checked), without its
    digest: for reading what its records hold (``ctx check``'s mapped names), not for a load."""
    from .tenants import tenant_named

    with tenant_named(m, mdisp, root):
        return _open_source(m, mdisp, root, sources_dir)


def _open_source(m: SourceManifest, mdisp: str, root: Path, sources_dir: Path | None) -> LoadedSource:
    snap = resolve_snapshot(m, mdisp, root, sources_dir)
    real_snap = Path(os.path.realpath(snap))
    names: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(snap, followlinks=False):
        dirnames.sort()
        for fn in sorted(filenames):
            p = Path(dirpath) / fn
            _check_file(p, root=root, real_snap=real_snap)
            names[p.relative_to(snap).as_posix()] = p
    ls = LoadedSource(manifest=m, manifest_file=mdisp, digest="", root=root, snap=snap, names=names)
    ls.parser.check(ls)
    return ls
