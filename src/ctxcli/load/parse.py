"""Read and validate manifests and snapshots into rows, without touching any store.

Every problem raises :class:`InputError` naming the file, line and field.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import orjson
from pydantic import ValidationError

from ..errors import InputError
from ..models.manifest import DeletionMode, Parser, SourceManifest
from ..models.records import DocumentFrontMatter, EntityRecord, ObjectRecord, RelationRecord, TombstoneRecord
from ..util.canon import canonical_bytes, content_hash, sha256_hex
from ..util import jsonstrict
from ..util.pyd import first_error, input_error
from ..util.timeutil import dt_to_us
from ..util.yamlio import loads_yaml, read_text, read_yaml_marked

MAX_LINE_BYTES = 4 * 1024 * 1024      # one JSONL record
MAX_MARKDOWN_BYTES = 8 * 1024 * 1024  # one Markdown document
MAX_CONTENT_CHARS = 2 * 1024 * 1024   # one object's content


@dataclass
class LoadedSource:
    """One source's snapshot, validated lazily: each ``iter_*`` streams its records, so a load
    never holds a whole corpus in memory. ``snap`` is None for a disabled source."""

    manifest: SourceManifest
    manifest_file: str
    digest: str
    root: Path | None = None
    snap: Path | None = None
    names: dict[str, Path] = field(default_factory=dict)

    def iter_objects(self, dedup: bool = True) -> Iterator[dict[str, Any]]:
        """Object rows; without ``dedup`` their ``dedup_hash`` is left out (the load computes
        it in its workers, load/derive.py)."""
        if self.snap is None:
            return
        if not dedup:
            yield from _iter_objects(self)
            return
        for o in _iter_objects(self):
            o["dedup_hash"] = dedup_hash(o["content"])
            yield o

    def iter_entities(self) -> Iterator[dict[str, Any]]:
        if self.snap is None or (p := self.names.get("entities.jsonl")) is None:
            return
        m, disp = self.manifest, rel(p, self.root)
        for line, data in _iter_jsonl(p, disp):
            rec = _validate(EntityRecord, data, disp, line)
            yield {"tenant_id": _tenant(m, rec.tenant_id, disp, line), "entity_key": rec.entity_key,
                   "entity_type": rec.entity_type, "name": rec.name, "aliases": list(rec.aliases),
                   "source_id": m.source_id, "_file": disp, "_line": line}

    def iter_relations(self) -> Iterator[tuple[RelationRecord, str, str, int]]:
        """(record, tenant, file, line)."""
        if self.snap is None or (p := self.names.get("relations.jsonl")) is None:
            return
        m, disp = self.manifest, rel(p, self.root)
        for line, data in _iter_jsonl(p, disp):
            rec = _validate(RelationRecord, data, disp, line)
            yield rec, _tenant(m, rec.tenant_id, disp, line), disp, line

    def iter_tombstones(self) -> Iterator[dict[str, Any]]:
        if self.snap is None or (p := self.names.get("tombstones.jsonl")) is None:
            return
        m, disp = self.manifest, rel(p, self.root)
        if m.deletion_mode is DeletionMode.none:
            raise InputError("tombstones.jsonl present but the source's deletion_mode is none", file=disp)
        for line, data in _iter_jsonl(p, disp):
            rec = _validate(TombstoneRecord, data, disp, line)
            yield {"tenant_id": _tenant(m, rec.tenant_id, disp, line), "object_id": rec.object_id,
                   "source_id": m.source_id, "deleted_at_us": _us(rec.deleted_at), "reason": rec.reason,
                   "_file": disp, "_line": line}


def rel(path: Path, root: Path) -> str:
    """``path`` relative to the project root for messages (also when either was given through
    a symlink or as a relative path); the path as given when it lies outside the root."""
    for p, r in ((path, root), (Path(os.path.realpath(path.parent)) / path.name, Path(os.path.realpath(root)))):
        try:
            return p.relative_to(r).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def manifest_digest(m: SourceManifest) -> str:
    """The digest of a manifest's content (its validated fields, not its formatting or comments):
    recorded per source in the store's meta (``manifest_digests``) and compared with the
    project's manifests whenever a run opens the store (api.require_current_manifests)."""
    return "sha256:" + sha256_hex(canonical_bytes(m.model_dump(mode="json")))


def require_manifests(manifests_dir: Path, root: Path) -> Path:
    """The manifests' sources/ folder; its absence is an input error that says how to start."""
    src_dir = manifests_dir / "sources"
    if not src_dir.is_dir():
        raise InputError("no sources/ folder of manifests (a new project: `ctx init`, or `ctx init --example claims`)",
                         file=rel(manifests_dir, root))
    return src_dir


def read_manifests(manifests_dir: Path, root: Path) -> list[tuple[SourceManifest, str, bytes]]:
    src_dir = require_manifests(manifests_dir, root)
    out: list[tuple[SourceManifest, str, bytes]] = []
    seen: dict[str, str] = {}
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
        try:
            m = SourceManifest.model_validate(data)
        except ValidationError as e:
            raise input_error(e, file=disp, marks=marks) from None
        if m.source_id in seen:
            ln, col = marks.find("source_id") or (None, None)
            raise InputError(f"source_id {m.source_id!r} is already registered by {seen[m.source_id]}",
                             file=disp, line=ln, column=col, field="source_id")
        seen[m.source_id] = disp
        out.append((m, disp, canonical_bytes(m.model_dump(mode="json"))))
    if not out:
        raise InputError("no source manifests (*.yaml) found", file=rel(src_dir, root))
    return out


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


def _iter_jsonl(path: Path, disp: str) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        fh = open(path, "rb")
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", file=disp) from None
    with fh:
        lineno = 0
        while True:
            raw = fh.readline(MAX_LINE_BYTES + 1)
            if not raw:
                break
            lineno += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                raise InputError(f"line is longer than {MAX_LINE_BYTES} bytes", file=disp, line=lineno)
            if not raw.strip():
                continue
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"not valid UTF-8 (byte {e.start} of the line)", file=disp, line=lineno) from None
            try:
                obj = jsonstrict.loads(raw)
            except orjson.JSONDecodeError as e:
                raise InputError(f"invalid JSON: {str(e).split(':')[0]}", file=disp, line=lineno) from None
            except jsonstrict.StrictJSONError as e:   # a duplicate key, an integer beyond 64 bits
                raise InputError(f"invalid JSON: {e}", file=disp, line=lineno) from None
            if not isinstance(obj, dict):
                raise InputError("each line must be a JSON object", file=disp, line=lineno)
            yield lineno, obj


def _remap_valid_time(m: SourceManifest, data: dict[str, Any], disp: str, line: int | None) -> dict[str, Any]:
    """Rename the manifest's declared valid-time fields to valid_from / valid_to."""
    vt = m.valid_time
    for declared, canonical in ((vt.from_field, "valid_from"), (vt.to_field, "valid_to")):
        if declared != canonical and declared in data:
            if canonical in data:
                raise InputError(f"both {declared} and {canonical} given", file=disp, line=line, field=canonical)
            data = dict(data)
            data[canonical] = data.pop(declared)
    return data


def _validate(model, data: dict[str, Any], disp: str, line: int | None):
    try:
        return model.model_validate(data)
    except ValidationError as e:
        loc, msg = first_error(e)
        raise InputError(msg, file=disp, line=line, field=loc) from None


def _tenant(m: SourceManifest, rec_tenant: str | None, disp: str, line: int | None) -> str:
    if m.tenant_id is not None:
        if rec_tenant is not None and rec_tenant != m.tenant_id:
            raise InputError(f"tenant {rec_tenant!r} differs from the source's tenant {m.tenant_id!r}",
                             file=disp, line=line, field="tenant_id")
        return m.tenant_id
    if rec_tenant is None:
        raise InputError("missing field (the source has no tenant_id)", file=disp, line=line, field="tenant_id")
    return rec_tenant


def _us(dt) -> int | None:
    if dt is None:
        return None
    return dt_to_us(dt)


_WS = re.compile(r"\s+")


def dedup_hash(text: str) -> str:
    """Hash of the text with case and white space folded: near-duplicates collide."""
    return "sha256:" + sha256_hex(_WS.sub(" ", text).strip().casefold())


def _object_row(m: SourceManifest, rec: ObjectRecord | DocumentFrontMatter, *, object_id: str, title: str,
                content: str, locator: str, tenant: str, version: str, supersedes: str | None,
                registered_hash: str | None, section: str | None, doc_ref: str | None,
                disp: str, line: int | None) -> dict[str, Any]:
    if len(content) > MAX_CONTENT_CHARS:
        raise InputError(f"content is {len(content)} characters, over the {MAX_CONTENT_CHARS} limit",
                         file=disp, line=line, field="content")
    h = content_hash(content)
    if registered_hash is not None and registered_hash != h:
        raise InputError(f"content_hash does not match the content of {object_id} (computed {h[:19]}…)",
                         file=disp, line=line, field="content_hash")
    scopes = sorted(set(m.required_scopes) | set(rec.required_scopes))
    purposes = sorted(set(rec.allowed_purposes if rec.allowed_purposes is not None else m.allowed_purposes))
    return {
        "object_id": object_id, "tenant_id": tenant, "source_id": m.source_id, "source_version": version,
        "object_type": rec.object_type, "subject_id": rec.subject_id, "title": title, "content": content,
        "locator": locator, "valid_from_us": _us(rec.valid_from), "valid_to_us": _us(rec.valid_to),
        "observed_us": _us(rec.observed_at), "required_scopes": scopes, "allowed_purposes": purposes,
        "supports": sorted(set(rec.supports)), "facts": canonical_bytes(rec.facts).decode(),
        "keys": sorted(set(rec.keys)), "content_hash": h,
        "supersedes": supersedes, "section": section, "doc_ref": doc_ref,
        "_file": disp, "_line": line,
    }


_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*\r?\n", re.S)
_FACTS_BLOCK = re.compile(r"^```facts[ \t]*\n(.*?)^```[ \t]*$\n?", re.S | re.M)


def _section_facts(m: SourceManifest, front, data: dict[str, Any], text: str, body: str, start: int,
                   first: int, disp: str):
    """A section's own facts: a fenced ```facts block (a YAML mapping) overrides the document's
    facts for that section only (``null`` drops one); the block is not part of the content."""
    blk = _FACTS_BLOCK.search(text)
    if blk is None:
        return front, text
    lines = body.split("\n")
    line = next((first + i for i in range(max(start - first, 0), len(lines))
                 if lines[i].startswith("```facts")), start)    # the file line of the ```facts fence
    sec = loads_yaml(blk.group(1), file=disp, first_line=line + 1)
    if not isinstance(sec, dict):
        raise InputError("a facts block must be a YAML mapping", file=disp, line=line)
    facts = {**(data.get("facts") or {}), **sec}
    facts = {k: v for k, v in facts.items() if v is not None}
    sec_front = _validate(DocumentFrontMatter, _remap_valid_time(m, {**data, "facts": facts}, disp, line), disp, line)
    return sec_front, (text[: blk.start()] + text[blk.end():]).strip()
_HEAD = re.compile(r"^##[ \t]+(.+?)[ \t#]*$")


def anchor(heading: str) -> str:
    a = re.sub(r"[^0-9a-z\u4e00-\u9fff]+", "-", heading.strip().casefold()).strip("-")
    return a or "section"


def split_markdown(body: str, first_line: int) -> list[tuple[str, str, str, int, int]]:
    """(anchor, heading, text, start line, end line) per section; text before the first
    ``## `` heading is section ``overview`` (dropped when empty or only headings, e.g. a
    ``# Title``). Headings inside fenced code
    blocks are text."""
    sections: list[list[Any]] = [["overview", "Overview", [], first_line, first_line]]
    fence = False
    # Split at "\n" only (str.splitlines also splits at U+2028, \x0c, \x1c … and would shift
    # every later line number away from the file's).
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(ln[:-1] if ln.endswith("\r") else ln for ln in lines):
        n = first_line + i
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        m = None if fence else _HEAD.match(line)
        if m:
            sections.append([anchor(m.group(1)), m.group(1).strip(), [], n, n])
        else:
            sections[-1][2].append(line)
            sections[-1][4] = n
    out = []
    used: dict[str, int] = {}
    for a, h, lines, s, e in sections:
        text = "\n".join(lines).strip()
        if a == "overview" and all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.split("\n")):
            continue   # empty, or only a title: not worth an object (nor its tokens)
        if a in used:
            used[a] += 1
            a = f"{a}-{used[a]}"
        else:
            used[a] = 1
        out.append((a, h, text, s, e))
    return out


def parse_source(m: SourceManifest, mdisp: str, mbytes: bytes, root: Path,
                 sources_dir: Path | None) -> LoadedSource:
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
    for p in files:
        if not _inside(p, real_snap):
            raise InputError("file is a symlink that leads outside the snapshot folder", file=rel(p, root))
        h = hashlib.sha256()
        try:
            if not stat.S_ISREG(os.stat(p).st_mode):  # a FIFO would block the load forever
                raise InputError("not a regular file", file=rel(p, root))
            with open(p, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        except OSError as e:  # unreadable, a symlink loop …
            raise InputError(f"cannot read file: {e.strerror}", file=rel(p, root)) from None
        digest.update(p.relative_to(snap).as_posix().encode() + b"\0" + h.digest())
    names = {p.relative_to(snap).as_posix(): p for p in files}
    if m.parser is Parser.records and "objects.jsonl" not in names:
        raise InputError("snapshot has no objects.jsonl (parser: records)", file=mdisp, field="snapshot")
    return LoadedSource(manifest=m, manifest_file=mdisp, digest="sha256:" + digest.hexdigest(), root=root,
                        snap=snap, names=names)


def _iter_objects(ls: LoadedSource) -> Iterator[dict[str, Any]]:
    m, names, root = ls.manifest, ls.names, ls.root
    if m.parser is Parser.records:
        p = names["objects.jsonl"]
        disp = rel(p, root)
        for line, data in _iter_jsonl(p, disp):
            rec = _validate(ObjectRecord, _remap_valid_time(m, data, disp, line), disp, line)
            tenant = _tenant(m, rec.tenant_id, disp, line)
            yield (_object_row(
                m, rec, object_id=rec.object_id, title=rec.title, content=rec.content, locator=rec.locator,
                tenant=tenant, version=rec.source_version, supersedes=rec.supersedes,
                registered_hash=rec.content_hash, section=None, doc_ref=None, disp=disp, line=line))
    else:
        for relname, p in names.items():
            if not relname.endswith(".md"):
                continue
            disp = rel(p, root)
            text = read_text(p, display=disp, limit=MAX_MARKDOWN_BYTES)
            fm = _FRONT.match(text)
            if not fm:
                raise InputError("Markdown document has no YAML front matter (--- … ---)", file=disp, line=1)
            data = loads_yaml(fm.group(1), file=disp, first_line=2)
            if not isinstance(data, dict):
                raise InputError("front matter must be a YAML mapping", file=disp, line=2)
            front = _validate(DocumentFrontMatter, _remap_valid_time(m, data, disp, 1), disp, 1)
            tenant = _tenant(m, front.tenant_id, disp, 1)
            body = text[fm.end():]
            first = text[: fm.end()].count("\n") + 1
            for a, heading, sec_text, s, e in split_markdown(body, first):
                oid = f"{front.doc_id}#{a}"
                sec_front, sec_text = _section_facts(m, front, data, sec_text, body, s, first, disp)
                yield (_object_row(
                    m, sec_front, object_id=oid, title=f"{front.title} — {heading}", content=sec_text,
                    locator=f"{relname}#{a}:L{s}-L{e}", tenant=tenant, version=front.version,
                    supersedes=f"{front.supersedes}#{a}" if front.supersedes else None,
                    registered_hash=None, section=a, doc_ref=front.doc_id, disp=disp, line=s))
