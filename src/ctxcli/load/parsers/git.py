"""``parser: git`` — every version of every matched file in a git repository's history.

The repository is a folder (a work tree's ``.git``, or a bare repository) or a ``git bundle``
file inside the snapshot folder, read with dulwich (pure Python: no ``git`` binary needed). The
first-parent history of the ref is walked oldest first; each commit that adds, changes or
renames a matched file makes a new version of that document:

- ``source_version`` is the commit id, ``observed_at`` the commit time, and the locator
  ``path@<short sha>#<section>:L<a>-L<b>``; author and committer are kept as the facts
  ``git_author`` / ``git_committer``, their e-mail addresses masked like any PII (the source's
  redaction gains the mask ``git_email``: lifted only for the manifest's ``redaction.unless_scopes``);
- valid time is the mapped front-matter keys when the manifest maps them, otherwise from the
  commit that introduced the version until the commit that replaced (or deleted) it;
- a version's objects are ``<doc_id>@<short sha>#<section>`` (``git.version_ids: false``:
  ``<doc_id>#<section>``, when the mapped front matter names each version itself);
- each section supersedes the same section of the document's previous version (or, when the
  front matter names the document it replaces, that document's latest version);
- a rename keeps the document's identity (its first path, or its mapped ``object_id``); a file
  deleted in the history ends its last version at the deleting commit, and with
  ``deletion_mode: tombstone`` that version's objects are tombstoned there.

The documents are Markdown with front matter (parsers/markdown.py, ``mapping:`` and
``markdown.split`` apply); defaults under the mapping give each version an id, a title (the
path) and its times, so a repository's own front matter needs only ``object_type``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from ...errors import InputError
from ...util.globs import selected
from ...util.timeutil import iso
from . import Parser, Unit
from .common import MAX_MARKDOWN_BYTES, SIDECARS, confined, file_sha256, report
from .gitstore import confine, stored_size
from .markdown import document_objects, front_keys

SHORT = 12


@dataclass
class Version:
    identity: str           # the document's first matched path: kept through renames
    path: str
    blob: bytes
    commit: str
    when: datetime
    author: str
    committer: str
    until: datetime | None = None       # the commit time of the next version or the deletion
    deleted: tuple[str, datetime] | None = None     # (commit, time) of the deletion that ends it
    chain: str = ""         # digest of this version and every version before it in the walk
    n: int = 0              # its position in the walk


def _t(dt: datetime | None) -> list[int] | None:
    return None if dt is None else [int(dt.timestamp()), int(dt.utcoffset().total_seconds())]


def _chained(prev: str, v: Version) -> str:
    import orjson

    return hashlib.sha256(orjson.dumps([prev, v.identity, v.path, v.blob.decode(), v.commit, _t(v.when), v.author,
                                        v.committer])).hexdigest()[:32]


def _dump(v: Version) -> list:
    """A version's metadata as the sync entry's walk state records it (not its author and
    committer: PII, read again from the commit when the state is loaded)."""
    return [v.identity, v.path, v.blob.decode(), v.commit, _t(v.when), _t(v.until),
            [v.deleted[0], *_t(v.deleted[1])] if v.deleted else None, v.chain]


def _load(n: int, r: list, people) -> Version:
    ident, path, blob, commit, when, until, deleted, chain = r
    author, committer = people(commit)
    return Version(ident, path, blob.encode(), commit, _when(*when), author, committer,
                   _when(*until) if until is not None else None,
                   (deleted[0], _when(deleted[1], deleted[2])) if deleted is not None else None, chain, n)


def _people(c) -> tuple[str, str]:
    return c.author.decode("utf-8", "replace"), c.committer.decode("utf-8", "replace")


@dataclass
class Walk:
    """What :func:`history` walked: every version oldest first, and how (``cursor``: the
    commits after the last loaded tip only, or why the whole history)."""

    repo: Any
    disp: str
    tip: str
    versions: list[Version]
    live: dict[str, Version]
    cursor: dict[str, Any]


def _when(ts: int, offset: int) -> datetime:
    return datetime.fromtimestamp(ts, tz=timezone(timedelta(seconds=offset)))


def open_repo(ls):
    """(repository, its display path, the tip commit id) of the source's ``git:`` block."""
    from ...util.distribution import require_extra

    require_extra("git", "dulwich", f"source {ls.manifest.source_id}: the git parser")
    from dulwich.errors import NotGitRepository

    opts = ls.manifest.git
    raw, target, real = _location(ls)
    disp = ls.shown(target)
    if real.is_file():
        from dulwich.bundle import read_bundle
        from dulwich.repo import MemoryRepo

        repo = MemoryRepo()
        try:
            with open(real, "rb") as fh:
                b = read_bundle(fh)
                if b.prerequisites:
                    raise InputError("the bundle needs prerequisite commits (make it from the full history)",
                                     file=disp)
                b.store_objects(repo.object_store)
                refs = dict(b.references)
        except (ValueError, AssertionError, KeyError, OSError) as e:
            raise InputError(f"not a readable git bundle ({e})", file=disp) from None
    elif real.is_dir():
        from dulwich.repo import Repo

        confine(real, Path(os.path.realpath(ls.snap)), disp)
        try:
            repo = Repo(str(real))
        except NotGitRepository:
            raise InputError("not a git repository (no .git folder, not a bare repository)", file=disp) from None
        refs = {k: v for k, v in repo.get_refs().items()}
    else:
        raise InputError(f"git.path {raw.as_posix()} does not exist", file=ls.manifest_file, field="git.path")
    if ls.pin is not None:      # the tip the source's digest names (GitParser.snapshot_digest)
        return repo, disp, ls.pin
    return repo, disp, _tip(repo, refs, opts.ref if opts is not None else None, disp)


def _location(ls) -> tuple[Path, Path, Path]:
    """(``git.path`` as written, inside the snapshot folder, its real path)."""
    opts = ls.manifest.git
    raw = Path(opts.path if opts is not None else ".")
    real = confined(ls.snap, raw.as_posix(), file=ls.manifest_file, field="git.path")
    return raw, ls.snap / raw, real


def _tip(repo, refs: dict[bytes, bytes], ref: str | None, disp: str) -> bytes:
    if ref is None:
        if b"HEAD" in refs:
            return refs[b"HEAD"]
        heads = sorted(k for k in refs if k.startswith(b"refs/heads/"))
        if len(heads) == 1:
            return refs[heads[0]]
        raise InputError(f"no HEAD and {len(heads)} branches: name one as git.ref "
                         f"({', '.join(h.decode()[11:] for h in heads) or 'none'})", file=disp)
    r = ref.encode()
    for k in (r, b"refs/heads/" + r, b"refs/tags/" + r):
        if k in refs:
            sha = refs[k]
            obj = repo.object_store[sha]
            while obj.type_name == b"tag":          # an annotated tag: the commit it names
                sha = obj.object[1]
                obj = repo.object_store[sha]
            return sha
    if re.fullmatch(r"[0-9a-f]{40}", ref) and ref.encode() in repo.object_store:
        return ref.encode()
    raise InputError(f"git.ref {ref!r} is not a branch, tag or commit of the repository", file=disp)


def _first_parents(store, tip: bytes, stop: bytes | None) -> list:
    """The tip's first-parent history, oldest first: from the root, or from the commit after
    ``stop`` when ``stop`` is in it (then empty when the tip is ``stop``)."""
    chain, sha = [], tip
    while sha != stop:
        c = store[sha]
        chain.append(c)
        if not c.parents:
            break
        sha = c.parents[0]
    chain.reverse()
    return chain


def history(ls, state: dict[str, Any] | None = None, why: str = "no walk state recorded") -> Walk:
    """Every version of every matched document, oldest first. With ``state`` (a previous
    walk's, :meth:`GitParser.units`) whose tip is a first-parent ancestor of the tip, only the
    commits after it are walked, from its versions and ``live`` map; otherwise the whole
    first-parent history (``why`` says why, when there is no state)."""
    repo, disp, tip = open_repo(ls)          # first: it says when the git extra is missing
    from dulwich.diff_tree import CHANGE_ADD, CHANGE_DELETE, CHANGE_RENAME, RenameDetector, tree_changes

    opts = ls.manifest.git
    include = list(opts.include) if opts is not None else ["**/*.md"]
    exclude = list(opts.exclude) if opts is not None else []
    store = repo.object_store
    versions: list[Version] = []
    live: dict[str, Version] = {}                 # path -> its document's latest version
    stop = state.get("tip") if state is not None else None
    stop = stop.encode() if isinstance(stop, str) else None
    if state is not None and stop is None:
        why = "recorded walk state unreadable"
    chain = _first_parents(store, tip, stop)
    cursor: dict[str, Any] = {"used": False, "reason": why}
    parent_tree = None
    if stop is not None and (not chain or chain[0].parents[:1] == [stop]):      # the cursor: after ``stop``
        people = lru_cache(maxsize=None)(lambda commit: _people(store[commit.encode()]))
        try:
            versions = [_load(i, r, people) for i, r in enumerate(state["versions"])]
            live = {p: versions[i] for p, i in state["live"].items()}
            parent_tree = store[stop].tree
            cursor = {"used": True, "from": stop.decode(), "commits": len(chain)}
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError, AssertionError):
            versions, live = [], {}
            cursor = {"used": False, "reason": "recorded walk state unreadable"}
            chain = _first_parents(store, tip, None)
    elif stop is not None:
        cursor = {"used": False, "reason": f"last loaded commit {stop.decode()[:SHORT]} is not a first-parent "
                                           f"ancestor of the tip {tip.decode()[:SHORT]}"}
    detector = RenameDetector(store)
    for c in chain:
        commit = c.id.decode()
        when = _when(c.commit_time, c.commit_timezone)
        author, committer = _people(c)
        for ch in tree_changes(store, parent_tree, c.tree, rename_detector=detector):
            old = ch.old.path.decode("utf-8", "replace") if ch.old is not None and ch.old.path else None
            new = ch.new.path.decode("utf-8", "replace") if ch.new is not None and ch.new.path else None
            old_in = old is not None and old in live
            new_in = new is not None and ch.type != CHANGE_DELETE and selected(new, include, exclude)
            prev = live.get(old) if old_in else None
            if old_in and (ch.type in (CHANGE_DELETE, CHANGE_RENAME) or not new_in):
                del live[old]
            if not new_in:
                if prev is not None:            # deleted, or renamed out of the matched paths
                    prev.until, prev.deleted = when, (commit, when)
                continue
            if prev is not None:
                prev.until = when
            if ch.type == CHANGE_ADD or prev is None:
                ident = new
            else:
                ident = prev.identity
            v = Version(ident, new, ch.new.sha, commit, when, author, committer, n=len(versions))
            v.chain = _chained(versions[-1].chain if versions else "", v)
            versions.append(v)
            live[new] = v
        parent_tree = c.tree
    return Walk(repo, disp, tip.decode(), versions, live, cursor)


def version_objects(ls, repo, disp: str, v: Version, prev_sections: dict[str, str],
                    latest: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    m = ls.manifest
    where = f"{disp}@{v.commit[:SHORT]}:{v.path}"
    size = stored_size(repo.object_store, v.blob)        # from the header: never inflated when too big
    if size is not None and size > MAX_MARKDOWN_BYTES:
        raise InputError(f"over {MAX_MARKDOWN_BYTES} bytes", file=where)
    blob = repo.object_store[v.blob].as_raw_string()
    if len(blob) > MAX_MARKDOWN_BYTES:
        raise InputError(f"over {MAX_MARKDOWN_BYTES} bytes", file=where)
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not valid UTF-8 (byte {e.start})", file=where) from None
    ident = v.identity[:-3] if v.identity.endswith(".md") else v.identity
    defaults = {"doc_id": ident, "title": v.path, "version": v.commit, "observed_at": iso(v.when),
                "valid_from": iso(v.when), "valid_to": iso(v.until)}
    short = v.commit[:SHORT]
    versioned = m.git is None or m.git.version_ids

    def supersedes(front, a: str) -> str | None:
        if a in prev_sections:
            return prev_sections[a]
        if front.supersedes and a in latest.get(front.supersedes, {}):
            return latest[front.supersedes][a]
        return None

    rows = list(document_objects(
        m, v.path, where, text, locator=f"{v.path}@{short}", label=f"commit {short} {v.path}",
        defaults=defaults, object_id=(lambda front, a: f"{front.doc_id}@{short}#{a}") if versioned else None,
        supersedes=supersedes,
        version=v.commit, facts={"git_author": v.author, "git_committer": v.committer}))
    return rows


# The e-mail addresses of authors and committers (the same pattern the bundled incident
# store masks): provenance, and PII.
EMAIL_MASK = {"name": "git_email", "regex": r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}",
              "replacement": "[email redacted]"}


class GitParser(Parser):
    name = "git"
    unit = "version"

    def masks(self, m) -> list[dict[str, str]]:
        return [EMAIL_MASK]

    def snapshot_digest(self, ls) -> bytes | None:
        """A repository folder: the commit its ref resolves to (``git.path`` and ``git.ref`` are
        in the manifest, digested already) — content-addressed, it pins every commit, tree and
        blob the walk reads, so a new commit or a moved ref changes it and repacking, other
        branches, a work tree or the reflog do not — and the sidecar files; that tip is pinned
        for this load's walk. A bundle: None, hashed as the one file it is (its bytes change
        with its tip; the bundled packs keep their store digest)."""
        if not _location(ls)[2].is_dir():
            return None
        _, _, tip = open_repo(ls)
        ls.pin = tip
        h = hashlib.sha256(b"git tip\0" + tip + b"\0")
        for name in SIDECARS:
            if (p := ls.names.get(name)) is not None:
                h.update(name.encode() + b"\0" + file_sha256(p, ls.root, ls.data_root) + b"\0")
        return h.digest()

    def field_names(self, ls):
        """The front-matter keys of every version in the history. None on a reload whose live
        store holds this manifest's versions (same manifest and rules: its names were checked
        when it was loaded), so a reload after a commit does not read the whole history again."""
        from .names import FieldNames

        if _prior_state(ls, ls.sync_entry)[2]:
            return None
        walk = ls.names_walk = history(ls)
        have: set[str] = set()
        seen: set[bytes] = set()
        for v in walk.versions:
            if v.blob in seen:
                continue
            seen.add(v.blob)
            if (stored_size(walk.repo.object_store, v.blob) or 0) > MAX_MARKDOWN_BYTES:
                continue                # reported when the version is parsed
            try:
                have |= front_keys(walk.repo.object_store[v.blob].as_raw_string().decode("utf-8"), v.path)
            except (UnicodeDecodeError, KeyError):
                continue            # reported when the version is parsed
        return FieldNames({"": (have, f"no version of a matched file in {walk.disp} has the front-matter key "
                                      f"{{name!r}}")})

    def objects(self, ls) -> Iterator[dict[str, Any]]:
        for u in self._units(ls, None):
            yield from u.rows()

    def units(self, ls) -> Iterator[Unit]:
        """One unit per version, in walk order (see the module's docstring); from the live
        store's sync entry (``ls.sync_entry``) its walk state, when it describes this manifest."""
        return self._units(ls, ls.sync_entry)

    def _units(self, ls, entry: dict | None) -> Iterator[Unit]:
        import orjson

        from ..sync import unit_digest

        state, why, known = _prior_state(ls, entry)
        walk, ls.names_walk = ls.names_walk, None
        if walk is not None and state is None:      # the names check walked the same whole history
            walk.cursor = {"used": False, "reason": why}
        else:
            walk = history(ls, state, why)
        by_ident: dict[str, dict[str, str]] = {}     # identity -> section -> object id (latest version)
        latest: dict[str, dict[str, str]] = {}       # doc_id -> section -> object id
        infos: list[dict[str, Any] | None] = []
        for v in walk.versions:
            raw = orjson.dumps([v.chain, _t(v.until), [v.deleted[0], *_t(v.deleted[1])] if v.deleted else None])
            box: list[list[dict[str, Any]] | None] = []

            def rows(v=v, box=box) -> list[dict[str, Any]]:
                if not box:         # parsed with the sections of the versions before it
                    try:
                        box.append(version_objects(ls, walk.repo, walk.disp, v, by_ident.get(v.identity, {}),
                                                   latest))
                    except InputError as e:
                        report(ls, e)       # this version is skipped; the others are still read
                        box.append(None)
                return box[0] or []

            yield Unit(raw, f"{walk.disp}@{v.commit[:SHORT]}:{v.path}", None, rows)
            info = known.get(unit_digest(ls.context, raw)) if not box else None
            if info is None:        # parsed, or not copied and not recorded: parsed now
                rows()
                got = box[0]
                info = None if got is None else {"d": got[0]["doc_ref"] if got else None,
                                                 "t": got[0]["tenant_id"] if got else None,
                                                 "r": [[r["section"], r["object_id"], r["_line"]] for r in got]}
            infos.append(info)
            if info is not None:
                secs = {a: oid for a, oid, _ in info["r"]}
                by_ident[v.identity] = secs
                if info["r"]:
                    latest[info["d"]] = secs
        ls.sync_state = {"tip": walk.tip, "versions": [_dump(v) for v in walk.versions], "rows": infos,
                         "live": {p: v.n for p, v in walk.live.items()}}
        ls.sync_report = {"cursor": walk.cursor}
        ls.walk = (walk.disp, walk.versions, infos)

    def tombstones(self, ls) -> Iterator[dict[str, Any]]:
        yield from super().tombstones(ls)
        from ...models.manifest import DeletionMode
        from .common import us

        if ls.manifest.deletion_mode is not DeletionMode.tombstone:
            return
        if ls.walk is None:         # not walked by this load yet
            for u in self._units(ls, None):
                u.rows()
        disp, versions, infos = ls.walk
        for v, info in zip(versions, infos):
            if v.deleted is None or info is None:
                continue
            commit, when = v.deleted
            for _, oid, line in info["r"]:
                yield {"tenant_id": info["t"], "object_id": oid, "source_id": ls.manifest.source_id,
                       "deleted_at_us": us(when), "reason": f"deleted in commit {commit[:SHORT]} ({v.path})",
                       "_file": f"{disp}@{v.commit[:SHORT]}:{v.path}", "_line": line}


def _prior_state(ls, entry: dict | None) -> tuple[dict | None, str, dict[str, dict]]:
    """(the live store's walk state, or None; why not; unit digest -> the sections its version
    gave) from the source's sync entry. Not used when the manifest, the parser's masks or the
    evidence rules changed (``context``) or when it does not match its units."""
    if not isinstance(entry, dict) or not isinstance(entry.get("state"), dict):
        return None, "no walk state recorded", {}
    if entry.get("context") != ls.context:
        return None, "manifest or evidence rules changed", {}
    state, units = entry["state"], entry.get("units")
    try:
        known = {h: {"d": info["d"], "t": info["t"], "r": [[str(a), str(oid), int(line)] for a, oid, line in info["r"]]}
                 for (h, _), info in zip(units, state["rows"], strict=True) if info is not None}
        if len(state["versions"]) != len(units):
            raise ValueError
    except (KeyError, TypeError, ValueError):
        return None, "recorded walk state unreadable", {}
    return state, "", known
