"""The source digest of ``parser: git`` (issue 29): a repository folder is digested by the commit
its ref resolves to and the sidecar files, not by hashing the repository's own files; a bundle
is hashed as the file it is. What would change the loaded rows changes the digest (a new
commit, a moved ref, a changed sidecar, a changed manifest); nothing else does."""

from __future__ import annotations

import json
import os

import pytest
import yaml
from dulwich.objects import Blob
from dulwich.repo import Repo

from ctxcli.errors import InputError
from ctxcli.load.build import collect

from .gitrepo import make_repo
from .test_parsers_git import DAY, T0, doc, project

HISTORY = [(T0, {"a.md": doc("alice", "## Steps\nrestart\n")}),
           (T0 + DAY, {"a.md": doc("alice", "## Steps\nrestart slowly\n")})]


def digest(tmp_path) -> str:
    (ls,), _ = collect(tmp_path / "manifests", tmp_path, None)
    return ls.digest


def _manifest(tmp_path, **changes) -> None:
    m = tmp_path / "manifests" / "sources" / "runbooks.yaml"
    m.write_text(yaml.safe_dump({**yaml.safe_load(m.read_text()), **changes}, sort_keys=False))


def test_a_repository_folder_is_digested_by_its_tip_not_its_files(tmp_path):
    ids = project(tmp_path, HISTORY)
    snap = tmp_path / "sources" / "runbooks"
    before = digest(tmp_path)
    repo = Repo(str(snap))
    # what the walk never reads: another branch, an unreachable object, the objects repacked, a work tree file
    repo.refs[b"refs/heads/other"] = ids[0].encode()
    repo.object_store.add_object(Blob.from_string(b"dangling"))
    repo.object_store.pack_loose_objects()
    (snap / "a.md").write_text("an uncommitted edit in the work tree\n")
    assert digest(tmp_path) == before
    # a moved ref, and back: the digest names the commit
    repo.refs[b"refs/heads/main"] = ids[0].encode()
    moved = digest(tmp_path)
    assert moved != before
    repo.refs[b"refs/heads/main"] = ids[1].encode()
    assert digest(tmp_path) == before
    # a new commit
    make_repo(snap, [*HISTORY, (T0 + 2 * DAY, {"a.md": doc("alice", "## Steps\ndrain first\n")})])
    assert digest(tmp_path) not in (before, moved)


def test_a_sidecar_or_the_manifest_changes_a_repository_digest(tmp_path):
    ids = project(tmp_path, HISTORY)
    snap = tmp_path / "sources" / "runbooks"
    seen = [digest(tmp_path)]
    row = {"entity_key": "service:checkout", "entity_type": "service", "name": "Checkout", "aliases": []}
    (snap / "entities.jsonl").write_text(json.dumps(row) + "\n")
    seen.append(digest(tmp_path))
    (snap / "entities.jsonl").write_text(json.dumps({**row, "name": "Checkout API"}) + "\n")
    seen.append(digest(tmp_path))
    _manifest(tmp_path, git={"ref": "main"})          # the same tip, named another way
    seen.append(digest(tmp_path))
    _manifest(tmp_path, git={"ref": ids[1]})
    seen.append(digest(tmp_path))
    assert len(set(seen)) == len(seen), seen


def test_a_bundle_is_digested_by_its_bytes(tmp_path):
    from dulwich.bundle import create_bundle_from_repo, write_bundle

    project(tmp_path, HISTORY, bundle=True, git={"path": "runbooks.bundle", "ref": "main"})
    before = digest(tmp_path)
    repo = Repo(str(tmp_path / "work"))
    repo.refs[b"refs/heads/copy"] = repo.refs[b"refs/heads/main"]
    with open(tmp_path / "sources" / "runbooks" / "runbooks.bundle", "wb") as fh:   # the same tip, more refs
        write_bundle(fh, create_bundle_from_repo(repo, refs=[b"refs/heads/copy", b"refs/heads/main"]))
    assert digest(tmp_path) != before


def test_the_walk_reads_the_tip_the_digest_named(tmp_path):
    ids = project(tmp_path, HISTORY)
    (ls,), _ = collect(tmp_path / "manifests", tmp_path, None)
    make_repo(tmp_path / "sources" / "runbooks",
              [*HISTORY, (T0 + 2 * DAY, {"a.md": doc("alice", "## Steps\ndrain first\n")})])
    assert [o["source_version"] for o in ls.iter_objects()] == ids


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_the_repository_files_are_still_checked(tmp_path, kind):
    project(tmp_path, HISTORY)
    bad = tmp_path / "sources" / "runbooks" / ".git" / "info" / "bad"
    bad.parent.mkdir(exist_ok=True)
    if kind == "symlink":
        (tmp_path / "outside").write_text("secret\n")
        os.symlink(tmp_path / "outside", bad)
    else:
        os.mkfifo(bad)
    with pytest.raises(InputError) as e:
        digest(tmp_path)
    assert str(e.value) == ("sources/runbooks/.git/info/bad: " + (
        "file is a symlink that leads outside the snapshot folder" if kind == "symlink" else "not a regular file"))
