"""What every parser shares: strict JSONL lines, record validation, the tenant rule, the object
row the store is built from, and the sidecar files (entities / relations / tombstones.jsonl)
that any snapshot folder may carry beside its parser's own input."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Iterator

import orjson
from pydantic import ValidationError

from ...errors import InputError, LoadProblems
from ...models.manifest import DeletionMode, SourceManifest
from ...models.records import DocumentFrontMatter, EntityRecord, ObjectRecord, RelationRecord, TombstoneRecord
from ...util import jsonstrict
from ...util.canon import canonical_bytes, content_hash
from ...util.pyd import first_error
from ...util.timeutil import dt_to_us

MAX_LINE_BYTES = 4 * 1024 * 1024      # one JSONL record
MAX_MARKDOWN_BYTES = 8 * 1024 * 1024  # one Markdown document
MAX_CONTENT_CHARS = 2 * 1024 * 1024   # one object's content


MAX_PROBLEMS = 50


class Problems:
    """The problems of one load, gathered instead of stopping at the first: a bad record is
    reported and skipped, the load goes on, and at its end :meth:`raise_if_any` raises them all
    (a :class:`LoadProblems`); at ``limit`` problems the load stops there."""

    def __init__(self, limit: int = MAX_PROBLEMS) -> None:
        self.limit, self.items, self.seen = limit, [], set()

    def add(self, e: InputError) -> None:
        """Record ``e`` (once: a parser that reads its input in several passes meets a bad
        record in each)."""
        if isinstance(e, LoadProblems):
            for p in e.problems:
                self.add(p)
            return
        if str(e) in self.seen:
            return
        self.seen.add(str(e))
        self.items.append(e)
        if len(self.items) >= self.limit:
            raise LoadProblems(self.items, more=True)

    def raise_if_any(self) -> None:
        if self.items:
            raise LoadProblems(self.items)


def report(ls, e: InputError) -> None:
    """A record's problem: gathered when the load gathers them (``ls.problems``), else raised."""
    problems = getattr(ls, "problems", None)
    if problems is None or isinstance(e, LoadProblems):    # the limit was reached: stop here
        raise e
    problems.add(e)


def rel(path: Path, root: Path, under: tuple[str, Path] | None = None) -> str:
    """``path`` relative to the project root for messages (also when either was given through
    a symlink or as a relative path); the path as given when it lies outside the root.
    ``under``: the source's data root (its name, its folder): a path inside it is named
    ``@name/…``, never by the folder's place on this machine."""
    import os

    real = Path(os.path.realpath(path.parent)) / path.name
    if under is not None:
        name, folder = under
        for p, r in ((path, folder), (real, Path(os.path.realpath(folder)))):
            try:
                inside = p.relative_to(r).as_posix()
            except ValueError:
                continue
            return f"@{name}" if inside == "." else f"@{name}/{inside}"
    for p, r in ((path, root), (real, Path(os.path.realpath(root)))):
        try:
            return p.relative_to(r).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def inside(path: Path, real_root: Path) -> bool:
    """Whether ``path`` is ``real_root`` (a resolved folder) or lies in it, with every component of
    ``path`` resolved: a symlinked folder on the way counts as the folder it leads to."""
    real = Path(os.path.realpath(path))
    return real == real_root or real_root in real.parents


def confined(base: Path, raw: str, *, file: str, field: str, where: str = "the snapshot folder") -> Path:
    """The resolved path of ``raw``, a relative path a manifest names (``file``, ``field``) under
    ``base``: the one confinement check of every file-backed source. An absolute path, a ``..``
    and a path that resolves outside ``base`` — through a symlinked file or any symlinked folder
    on the way — are refused; a symlink that stays inside is followed."""
    p = Path(raw)
    if p.is_absolute() or ".." in p.parts:
        raise InputError(f"{field} must stay inside {where}", file=file, field=field)
    if not inside(base / p, Path(os.path.realpath(base))):
        raise InputError(f"{field} escapes {where} (through a symlink?)", file=file, field=field)
    return Path(os.path.realpath(base / p))


def iter_jsonl(path: Path, disp: str, ls=None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) per non-empty line; a bad line is reported through ``ls`` (gathered, the
    next line read) or, without it, raised."""
    for lineno, raw in iter_raw_lines(path, disp):
        try:
            yield lineno, _line_object(raw, disp, lineno)
        except InputError as e:
            report(ls, e)


def iter_raw_lines(path: Path, disp: str) -> Iterator[tuple[int, bytes]]:
    """(line, bytes) per non-empty line of a JSONL file, unparsed."""
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
            if raw.strip():
                yield lineno, raw


def line_object(raw: bytes, disp: str, lineno: int, ls=None) -> dict[str, Any] | None:
    """The JSON object of one line, or None when it is bad (reported through ``ls``)."""
    try:
        return _line_object(raw, disp, lineno)
    except InputError as e:
        report(ls, e)
        return None


def _line_object(raw: bytes, disp: str, lineno: int) -> dict[str, Any]:
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
    return obj


def remap_valid_time(m: SourceManifest, data: dict[str, Any], disp: str, line: int | None) -> dict[str, Any]:
    """Rename the manifest's declared valid-time fields to valid_from / valid_to."""
    vt = m.valid_time
    for declared, canonical in ((vt.from_field, "valid_from"), (vt.to_field, "valid_to")):
        if declared != canonical and declared in data:
            if canonical in data:
                raise InputError(f"both {declared} and {canonical} given", file=disp, line=line, field=canonical)
            data = dict(data)
            data[canonical] = data.pop(declared)
    return data


def validate(model, data: dict[str, Any], disp: str, line: int | None, *, where: str | None = None):
    """``model`` validated from ``data``; an InputError at ``disp:line`` naming the field (with
    ``where`` in front of the message, e.g. a row or a commit)."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        loc, msg = first_error(e)
        raise InputError(f"{where}: {msg}" if where else msg, file=disp, line=line, field=loc) from None


def tenant_of(m: SourceManifest, rec_tenant: str | None, disp: str, line: int | None) -> str:
    if m.tenant_id is not None:
        if rec_tenant is not None and rec_tenant != m.tenant_id:
            raise InputError(f"tenant {rec_tenant!r} differs from the source's tenant {m.tenant_id!r}",
                             file=disp, line=line, field="tenant_id")
        return m.tenant_id
    if rec_tenant is None:
        raise InputError("missing field (the source has no tenant_id)", file=disp, line=line, field="tenant_id")
    return rec_tenant


def us(dt) -> int | None:
    if dt is None:
        return None
    return dt_to_us(dt)


def record_row(m: SourceManifest, rec: ObjectRecord, tenant: str, where) -> dict[str, Any]:
    """The object row of a record a mapping built (parser table, json-export): its own id,
    title, content, locator, version and supersedes; positioned at ``where`` (file, line)."""
    return object_row(m, rec, object_id=rec.object_id, title=rec.title, content=rec.content, locator=rec.locator,
                      tenant=tenant, version=rec.source_version, supersedes=rec.supersedes, registered_hash=None,
                      section=None, doc_ref=None, disp=where.file, line=where.line)


def object_row(m: SourceManifest, rec: ObjectRecord | DocumentFrontMatter, *, object_id: str, title: str,
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
        "locator": locator, "valid_from_us": us(rec.valid_from), "valid_to_us": us(rec.valid_to),
        "observed_us": us(rec.observed_at), "required_scopes": scopes, "allowed_purposes": purposes,
        "supports": sorted(set(rec.supports)), "facts": canonical_bytes(rec.facts).decode(),
        "keys": sorted(set(rec.keys)), "content_hash": h,
        "supersedes": supersedes, "section": section, "doc_ref": doc_ref,
        "_file": disp, "_line": line,
    }


def entity_row(m: SourceManifest, rec: EntityRecord, tenant: str, disp: str, line: int | None) -> dict[str, Any]:
    return {"tenant_id": tenant, "entity_key": rec.entity_key, "entity_type": rec.entity_type, "name": rec.name,
            "aliases": list(rec.aliases), "source_id": m.source_id, "_file": disp, "_line": line}


# The files beside a parser's own input that every parser reads (Parser.entities / relations /
# tombstones), by their path in the snapshot folder.
SIDECARS = ("entities.jsonl", "relations.jsonl", "tombstones.jsonl")


def file_sha256(p: Path, root: Path, under: tuple[str, Path] | None = None) -> bytes:
    """The SHA-256 of a (checked) snapshot file's bytes (``root``, ``under``: as :func:`rel`)."""
    h = hashlib.sha256()
    try:
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", file=rel(p, root, under)) from None
    return h.digest()


def own_object_row(m: SourceManifest, data: dict[str, Any], disp: str, line: int | None) -> dict[str, Any]:
    """The object row of a record in ctx's own fields (``record.object``: parser records, and
    every parser plugin's objects): validated, its tenant the source's, its scopes the source's
    and its own."""
    rec = validate(ObjectRecord, remap_valid_time(m, data, disp, line), disp, line)
    tenant = tenant_of(m, rec.tenant_id, disp, line)
    return object_row(m, rec, object_id=rec.object_id, title=rec.title, content=rec.content, locator=rec.locator,
                      tenant=tenant, version=rec.source_version, supersedes=rec.supersedes,
                      registered_hash=rec.content_hash, section=None, doc_ref=None, disp=disp, line=line)


def own_entity_row(m: SourceManifest, data: dict[str, Any], disp: str, line: int | None) -> dict[str, Any]:
    """The entity row of a ``record.entity`` (entities.jsonl, a plugin's entities)."""
    rec = validate(EntityRecord, data, disp, line)
    return entity_row(m, rec, tenant_of(m, rec.tenant_id, disp, line), disp, line)


def own_relation(m: SourceManifest, data: dict[str, Any], disp: str, line: int | None) -> tuple[RelationRecord, str]:
    """A ``record.relation`` (relations.jsonl, a plugin's relations) and its tenant."""
    rec = validate(RelationRecord, data, disp, line)
    return rec, tenant_of(m, rec.tenant_id, disp, line)


def own_tombstone_row(m: SourceManifest, data: dict[str, Any], disp: str, line: int | None) -> dict[str, Any]:
    """The tombstone row of a ``record.tombstone`` (tombstones.jsonl, a plugin's tombstones)."""
    rec = validate(TombstoneRecord, data, disp, line)
    tenant = tenant_of(m, rec.tenant_id, disp, line)
    return {"tenant_id": tenant, "object_id": rec.object_id,
            "source_id": m.source_id, "deleted_at_us": us(rec.deleted_at), "reason": rec.reason,
            "_file": disp, "_line": line}


def sidecar_entities(ls) -> Iterator[dict[str, Any]]:
    if (p := ls.names.get(SIDECARS[0])) is None:
        return
    m, disp = ls.manifest, ls.shown(p)
    for line, data in iter_jsonl(p, disp, ls):
        try:
            yield own_entity_row(m, data, disp, line)
        except InputError as e:
            report(ls, e)


def sidecar_relations(ls) -> Iterator[tuple[RelationRecord, str, str, int]]:
    """(record, tenant, file, line)."""
    if (p := ls.names.get(SIDECARS[1])) is None:
        return
    m, disp = ls.manifest, ls.shown(p)
    for line, data in iter_jsonl(p, disp, ls):
        try:
            rec, tenant = own_relation(m, data, disp, line)
        except InputError as e:
            report(ls, e)
            continue
        yield rec, tenant, disp, line


def sidecar_tombstones(ls) -> Iterator[dict[str, Any]]:
    if (p := ls.names.get(SIDECARS[2])) is None:
        return
    m, disp = ls.manifest, ls.shown(p)
    if m.deletion_mode is DeletionMode.none:
        raise InputError("tombstones.jsonl present but the source's deletion_mode is none", file=disp)
    for line, data in iter_jsonl(p, disp, ls):
        try:
            yield own_tombstone_row(m, data, disp, line)
        except InputError as e:
            report(ls, e)
