"""Small git repositories for tests, written with dulwich (no git binary)."""

from __future__ import annotations

from pathlib import Path

from dulwich.index import commit_tree
from dulwich.objects import Blob, Commit
from dulwich.repo import Repo


def make_repo(path: Path, commits: list[tuple[int, dict[str, str | None]]], *, bundle: Path | None = None,
              author: str = "Ana Ops <ana@example.com>", branch: str = "main") -> list[str]:
    """Commit each (unix time, {path: text or None to delete}) in order onto ``branch``; the
    files not named stay. Returns the commit ids; with ``bundle`` also writes a bundle file."""
    repo = Repo(str(path)) if (path / ".git").exists() else Repo.init(str(path), mkdir=not path.exists())
    files: dict[str, bytes] = {}
    parent: list[bytes] = []
    ids = []
    for when, changes in commits:
        for p, text in changes.items():
            if text is None:
                files.pop(p, None)
            else:
                files[p] = text.encode()
        blobs = []
        for p, data in sorted(files.items()):
            b = Blob.from_string(data)
            repo.object_store.add_object(b)
            blobs.append((p.encode(), b.id, 0o100644))
        c = Commit()
        c.tree = commit_tree(repo.object_store, blobs)
        c.parents = parent
        c.author = c.committer = author.encode()
        c.author_time = c.commit_time = when
        c.author_timezone = c.commit_timezone = 0
        c.message = f"change at {when}".encode()
        repo.object_store.add_object(c)
        parent = [c.id]
        ids.append(c.id.decode())
    repo.refs[b"refs/heads/" + branch.encode()] = parent[0]
    repo.refs.set_symbolic_ref(b"HEAD", b"refs/heads/" + branch.encode())
    if bundle is not None:
        from dulwich.bundle import create_bundle_from_repo, write_bundle

        with open(bundle, "wb") as fh:
            write_bundle(fh, create_bundle_from_repo(repo, refs=[b"refs/heads/" + branch.encode()]))
    return ids
