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
from .parsers.common import confined, file_sha256, inside, rel
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
    # the data root (ctx.toml [data.roots]) its snapshot lies in, as (name, folder); its files
    # are named ``@name/…`` in every message and row (never the folder's place on this machine)
    data_root: tuple[str, Path] | None = None

    def shown(self, p: Path) -> str:
        """How a file of this source is named in messages and rows (parsers/common.rel)."""
        return rel(p, self.root, self.data_root) if self.root is not None else p.as_posix()

    @property
    def parser(self):
        return parsers.get(self.manifest.parser)

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


def read_manifests(manifests_dir: Path, root: Path, *,
                   parsers_installed: bool = True) -> list[tuple[SourceManifest, str, bytes]]:
    """Every source the manifests declare, in file order: a manifest with ``tenants`` or
    ``extends`` gives one source per tenant (load/tenants.py). Two sources with one id, or two
    tenants' sources reading the same data, are an error naming both. Each parser a source
    names is installed, once (:func:`known_parser`), unless ``parsers_installed`` is false (a
    run's check that the store is current compares digests only: it reads no source, and a run
    pays no entry-point lookup)."""
    from .tenants import data_place, expand, labelled, overlaps, shown_place, validated

    src_dir = require_manifests(manifests_dir, root)
    out: list[tuple[SourceManifest, str, bytes]] = []
    seen: dict[str, str] = {}
    places: list[tuple[str, str, str]] = []      # (real path read, tenant, where it is declared)
    files = sorted(p for p in src_dir.iterdir() if p.suffix in (".yaml", ".yml"))
    real_root = Path(os.path.realpath(root))
    for p in files:
        disp = rel(p, root)
        if not inside(p, real_root):   # the rule of snapshot files: no symlink out of the project
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
                    raise InputError(f"reads {shown_place(place, root)}, and {by} (tenant {tenant}) reads "
                                     f"{shown_place(other, root)}: a source never reads another tenant's data",
                                     file=disp, line=ln, column=col, field=labelled(exp.label, "snapshot"))
            if place is not None:
                places.append((place, m.tenant_id, where))
            if parsers_installed:
                known_parser(m, disp, exp.marks)
            out.append((m, disp, canonical_bytes(manifest_dump(m))))
    if not out:
        raise InputError("no source manifests (*.yaml) found", file=rel(src_dir, root))
    return out


def known_parser(m: SourceManifest, disp: str, marks) -> None:
    """Refuse a manifest naming a parser no installed distribution registers (with the
    installed name nearest to it), or one that two distributions register."""
    try:
        parsers.origin(m.parser)
    except parsers.UnknownParser as e:
        names = ", ".join(sorted(parsers.installed()))
        hint = f"did you mean {e.args[0][0]!r}? " if e.args[0] else ""
        ln, col = marks.find("parser") or (None, None)
        raise InputError(f"no installed parser is named {m.parser!r} ({hint}installed: {names})",
                         file=disp, line=ln, column=col, field="parser") from None
    except parsers.AmbiguousParser as e:
        ln, col = marks.find("parser") or (None, None)
        raise InputError(f"parser {m.parser!r} is registered by two distributions, {' and '.join(e.args[0])} "
                         f"(uninstall one)", file=disp, line=ln, column=col, field="parser") from None


def resolve_parser(m: SourceManifest, disp: str):
    """The source's parser, imported (a plugin's failure to import: one line naming the
    manifest), with the manifest's ``parser_version`` one it accepts."""
    try:
        p = parsers.get(m.parser)
    except parsers.PluginError as e:
        raise InputError(str(e), file=disp, field="parser") from None
    versions = getattr(p, "versions", None)      # a plugin's (the bundled ones': models/manifest.py)
    if versions is not None and m.parser_version not in versions:
        raise InputError(f"parser {m.parser} has no version {m.parser_version!r} (known: {sorted(versions)})",
                         file=disp, field="parser_version")
    return p


def manifest_dump(m: SourceManifest) -> dict[str, Any]:
    """The manifest as digested: the parser option blocks a manifest leaves out are left out,
    so a manifest written before they existed keeps its digest."""
    d = m.model_dump(mode="json", by_alias=True)
    for k in _OPTIONAL_BLOCKS:
        if d.get(k) is None:
            d.pop(k, None)
    return d


def resolve_snapshot(m: SourceManifest, disp: str, root: Path,
                     sources_dir: Path | None) -> tuple[Path, tuple[str, Path] | None]:
    """(the snapshot folder, its data root or None). A ``snapshot: "@name/path"`` lies in the data
    root ``name`` of ctx.toml's ``[data.roots]`` (paths.data_roots), any other inside the project
    root; neither may leave its root, by ``..``, an absolute path or a symlink."""
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in m.snapshot):
        raise InputError("snapshot path contains a control character (a NUL byte?)", file=disp, field="snapshot")
    if m.snapshot.startswith(ROOT_MARK):
        return _in_data_root(m, disp, root)
    raw = Path(m.snapshot)
    base = root
    if sources_dir is not None and raw.parts and raw.parts[0] == "sources" and not raw.is_absolute():
        base, raw = sources_dir, Path(*raw.parts[1:]) if len(raw.parts) > 1 else Path(".")
    target = confined(base, raw.as_posix(), file=disp, field="snapshot", where="the project root")
    if not target.is_dir():
        raise InputError(f"snapshot folder {m.snapshot} does not exist", file=disp, field="snapshot")
    return target, None


ROOT_MARK = "@"     # snapshot: "@name/path" — a path in the data root ``name``


def split_rooted(snapshot: str) -> tuple[str, str]:
    """(root name, path inside it) of a ``@name/path`` snapshot (path "." for ``@name``)."""
    name, _, inside = snapshot[len(ROOT_MARK):].partition("/")
    return name, inside or "."


def _in_data_root(m: SourceManifest, disp: str, root: Path) -> tuple[Path, tuple[str, Path]]:
    from ..paths import data_roots

    name, inside = split_rooted(m.snapshot)

    def refuse(message: str) -> InputError:
        ln, col = _snapshot_at(root, disp)
        return InputError(message, file=disp, line=ln, column=col, field="snapshot")

    roots = data_roots(root)
    if name not in roots:
        import difflib

        close = difflib.get_close_matches(name, sorted(roots), n=1, cutoff=0.6)
        hint = (f" (did you mean {close[0]!r}?)" if close else
                f" (ctx.toml [data.roots] names: {', '.join(sorted(roots))})" if roots else
                " (ctx.toml names no [data.roots])")
        raise refuse(f"unknown data root {name!r}{hint}")
    raw = Path(inside)
    if raw.is_absolute() or ".." in raw.parts:
        raise refuse(f"snapshot path must stay inside data root {name!r}")
    base = roots[name]
    real_base = Path(os.path.realpath(base))
    if not real_base.is_dir():
        raise refuse(f"data root {name!r} (ctx.toml data.roots.{name}) is not a folder")
    target = Path(os.path.realpath(base / raw))
    if target != real_base and real_base not in target.parents:
        raise refuse(f"snapshot path escapes data root {name!r} (through a symlink?)")
    if not target.is_dir():
        raise refuse(f"snapshot folder {m.snapshot} does not exist")
    return target, (name, real_base)


def _snapshot_at(root: Path, disp: str) -> tuple[int | None, int | None]:
    """(line, column) of the manifest's ``snapshot`` value, read again (for an error only)."""
    from ..errors import CtxError

    try:
        return read_yaml_marked(root / disp, display=disp).find("snapshot") or (None, None)
    except CtxError:
        return None, None


def dedup_hash(text: str) -> str:
    """Hash of the text with case and white space folded: near-duplicates collide.
    (``str.split`` cuts at exactly the characters ``\\s`` matches: ``re.sub(r"\\s+", " ", text).strip()``
    is ``" ".join(text.split())``, which is cheaper.)"""
    return "sha256:" + sha256_hex(" ".join(text.split()).casefold())


def _check_file(p: Path, root: Path, real_snap: Path, under: tuple[str, Path] | None = None) -> None:
    """Refuse a snapshot file that leads outside the snapshot, is not a regular file or cannot
    be read (without reading it: a parser may digest its input another way)."""
    # the walk (:func:`_walk`) does not descend into a symlinked folder: only a symlink itself can
    # lead out (resolving every path of a git repository's thousands of objects cost a reload ~25 %)
    if os.path.islink(p) and not inside(p, real_snap):
        raise InputError("file is a symlink that leads outside the snapshot folder", file=rel(p, root, under))
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):  # a FIFO would block the load forever
            raise InputError("not a regular file", file=rel(p, root, under))
        os.close(os.open(p, os.O_RDONLY))
    except OSError as e:  # unreadable, a symlink loop …
        raise InputError(f"cannot read file: {e.strerror}", file=rel(p, root, under)) from None


def _walk(snap: Path, root: Path, onerror=None, under: tuple[str, Path] | None = None) -> Iterator[Path]:
    """Every file under ``snap`` in name order. A symlinked folder is not descended into (its
    files are not the source's); one that leads outside the snapshot is refused, as a symlinked
    file that does is (:func:`_check_file`)."""
    real_snap = Path(os.path.realpath(snap))
    for dirpath, dirnames, filenames in os.walk(snap, followlinks=False, onerror=onerror):
        dirnames.sort()
        for d in dirnames:
            if os.path.islink(Path(dirpath) / d) and not inside(Path(dirpath) / d, real_snap):
                raise InputError("folder is a symlink that leads outside the snapshot folder",
                                 file=rel(Path(dirpath) / d, root, under))
        for fn in sorted(filenames):
            yield Path(dirpath) / fn


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
    resolve_parser(m, mdisp)
    snap, under = resolve_snapshot(m, mdisp, root, sources_dir)
    real_snap = Path(os.path.realpath(snap))
    files: list[Path] = []

    def walk_error(e: OSError) -> None:  # never skip an unreadable folder silently
        raise InputError(f"cannot read folder: {e.strerror}", file=rel(Path(e.filename or snap), root, under))

    files.extend(_walk(snap, root, walk_error, under))
    digest = hashlib.sha256()
    digest.update(b"manifest\0" + mbytes + b"\0")
    own = parsers.get(m.parser).masks(m)
    if own:     # the parser's own masks shape the index: a store made without them is not reused
        digest.update(b"masks\0" + canonical_bytes(own) + b"\0")
    mine = [r for r in rules or [] if r.applies_to(m.source_id)]
    if mine:
        from .evidence_rules import rules_digest

        digest.update(b"rules\0" + rules_digest(mine, m.source_id) + b"\0")
    context = digest.hexdigest()
    for p in files:     # every file is checked, whoever digests it
        _check_file(p, root, real_snap, under)
    names = {p.relative_to(snap).as_posix(): p for p in files}
    ls = LoadedSource(manifest=m, manifest_file=mdisp, digest="", root=root, snap=snap, names=names, rules=mine,
                      context=context, data_root=under)
    by_parser = ls.parser.snapshot_digest(ls)
    if by_parser is not None:   # the parser digests its input itself (git: a repository folder by its tip)
        digest.update(b"snapshot\0" + by_parser + b"\0")
    else:
        for p in files:
            digest.update(p.relative_to(snap).as_posix().encode() + b"\0" + file_sha256(p, root, under))
    ls.parser.check(ls)
    extra = ls.parser.content_digest(ls)     # rows read from a database, not from the folder
    if extra is not None:
        digest.update(b"content\0" + extra + b"\0")
    ls.digest = "sha256:" + digest.hexdigest()
    return ls


def snapshot_files(m: SourceManifest, mdisp: str, root: Path, sources_dir: Path | None = None):
    """(the snapshot folder, its data root or None, {path in it: file}) with every file checked
    as a load checks it (no symlink out of the folder, regular and readable)."""
    resolve_parser(m, mdisp)
    snap, under = resolve_snapshot(m, mdisp, root, sources_dir)
    real_snap = Path(os.path.realpath(snap))
    names: dict[str, Path] = {}
    for p in _walk(snap, root, under=under):
        _check_file(p, root=root, real_snap=real_snap, under=under)
        names[p.relative_to(snap).as_posix()] = p
    return snap, under, names


def open_source(m: SourceManifest, mdisp: str, root: Path, sources_dir: Path | None = None) -> LoadedSource:
    """The source's snapshot as :func:`parse_source` opens it (every file checked), without its
    digest: for reading what its records hold (``ctx check``'s mapped names), not for a load."""
    from .tenants import tenant_named

    with tenant_named(m, mdisp, root):
        return _open_source(m, mdisp, root, sources_dir)


def _open_source(m: SourceManifest, mdisp: str, root: Path, sources_dir: Path | None) -> LoadedSource:
    snap, under, names = snapshot_files(m, mdisp, root, sources_dir)
    ls = LoadedSource(manifest=m, manifest_file=mdisp, digest="", root=root, snap=snap, names=names, data_root=under)
    ls.parser.check(ls)
    return ls
