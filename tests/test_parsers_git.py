"""parser: git — history to versions, supersession, renames, deletions, bundles, positions."""

from __future__ import annotations

import os

from pathlib import Path

import orjson
import pytest
import yaml

from ctxcli.errors import InputError
from ctxcli.load.build import build_store, collect
from ctxcli.store.db import open_reader

from .gitrepo import make_repo

BASE = {
    "source_id": "runbooks", "tenant_id": "t1", "source_type": "runbook_repository", "owner_team": "ops",
    "classification": "internal", "trust_level": "operational", "required_scopes": [],
    "allowed_purposes": ["incident_review"], "refresh_sla": "24h", "deletion_mode": "none",
    "parser": "git", "parser_version": "1", "schema_version": 1, "enabled": True,
    "snapshot": "sources/runbooks",
}
T0 = 1_767_225_600          # 2026-01-01T00:00:00Z
DAY = 86_400


def doc(owner: str, body: str, **extra) -> str:
    fm = {"owner": owner, "service": "checkout", **extra}
    return "---\n" + yaml.safe_dump(fm, sort_keys=True) + "---\n" + body


def project(tmp_path, commits, *, bundle=False, **manifest):
    snap = tmp_path / "sources" / "runbooks"
    snap.mkdir(parents=True)
    if bundle:
        ids = make_repo(tmp_path / "work", commits, bundle=snap / "runbooks.bundle")
        manifest.setdefault("git", {"path": "runbooks.bundle"})
    else:
        ids = make_repo(snap, commits)
    mdir = tmp_path / "manifests" / "sources"
    mdir.mkdir(parents=True)
    m = {**BASE, "mapping": {"set": {"object_type": "runbook"}, "subject_id": "service:{service}",
                             "facts": {"owner": "owner"}}, **manifest}
    (mdir / "runbooks.yaml").write_text(yaml.safe_dump(m, sort_keys=False))
    return ids


def objects(tmp_path):
    loaded, _ = collect(tmp_path / "manifests", tmp_path, None)
    return [o for ls in loaded for o in ls.iter_objects()]


def tombstones(tmp_path):
    loaded, _ = collect(tmp_path / "manifests", tmp_path, None)
    return [t for ls in loaded for t in ls.iter_tombstones()]


def test_every_commit_of_a_file_is_a_version_that_supersedes_the_last(tmp_path):
    ids = project(tmp_path, [
        (T0, {"rb/restart.md": doc("alice", "# Restart\n\n## Steps\nrestart pods\n")}),
        (T0 + DAY, {"rb/restart.md": doc("bob", "# Restart\n\n## Steps\nrestart pods slowly\n"),
                    "README.txt": "not matched"}),
        (T0 + 3 * DAY, {"rb/restart.md": doc("bob", "# Restart\n\n## Steps\ndrain first, then restart\n")}),
    ])
    obs = objects(tmp_path)
    assert [o["object_id"] for o in obs] == [f"rb/restart@{c[:12]}#steps" for c in ids]
    assert [o["source_version"] for o in obs] == ids
    assert [o["locator"] for o in obs] == [f"rb/restart.md@{c[:12]}#steps:L7-L8" for c in ids]
    assert [o["supersedes"] for o in obs] == [None, obs[0]["object_id"], obs[1]["object_id"]]
    us = 1_000_000
    assert [(o["valid_from_us"], o["valid_to_us"], o["observed_us"]) for o in obs] == [
        (T0 * us, (T0 + DAY) * us, T0 * us), ((T0 + DAY) * us, (T0 + 3 * DAY) * us, (T0 + DAY) * us),
        ((T0 + 3 * DAY) * us, None, (T0 + 3 * DAY) * us)]
    assert [orjson.loads(o["facts"])["owner"] for o in obs] == ["alice", "bob", "bob"]
    assert orjson.loads(obs[0]["facts"])["git_author"] == "Ana Ops <ana@example.com>"
    assert {o["subject_id"] for o in obs} == {"service:checkout"}


def test_mapped_front_matter_times_win_over_commit_times(tmp_path):
    project(tmp_path, [
        (T0, {"a.md": doc("alice", "## S\ntext\n", effective="2025-06-01")})],
        mapping={"set": {"object_type": "runbook"}, "valid_from": "effective", "timezone": "Europe/Berlin"})
    (o,) = objects(tmp_path)
    assert o["valid_from_us"] == 1_748_728_800 * 1_000_000      # 2025-06-01T00:00+02:00
    assert o["valid_to_us"] is None


def test_a_rename_keeps_the_documents_identity(tmp_path):
    body = "## Steps\n" + "a long enough body so that the rename is detected by similarity\n" * 5
    ids = project(tmp_path, [
        (T0, {"old/name.md": doc("alice", body)}),
        (T0 + DAY, {"old/name.md": None, "new/place.md": doc("alice", body)}),
    ])
    a, b = objects(tmp_path)
    assert a["object_id"] == f"old/name@{ids[0][:12]}#steps"
    assert b["object_id"] == f"old/name@{ids[1][:12]}#steps"       # the same document, a new version
    assert b["locator"].startswith(f"new/place.md@{ids[1][:12]}#steps")
    assert b["supersedes"] == a["object_id"]
    assert a["valid_to_us"] == (T0 + DAY) * 1_000_000


def test_a_deleted_file_ends_its_last_version_and_is_tombstoned(tmp_path):
    ids = project(tmp_path, [
        (T0, {"a.md": doc("alice", "## S\none\n"), "b.md": doc("bob", "## S\nother\n")}),
        (T0 + DAY, {"a.md": None}),
    ], deletion_mode="tombstone")
    obs = {o["object_id"]: o for o in objects(tmp_path)}
    a = obs[f"a@{ids[0][:12]}#s"]
    assert a["valid_to_us"] == (T0 + DAY) * 1_000_000
    (t,) = tombstones(tmp_path)
    assert (t["object_id"], t["deleted_at_us"]) == (a["object_id"], (T0 + DAY) * 1_000_000)
    assert t["reason"] == f"deleted in commit {ids[1][:12]} (a.md)"
    db = tmp_path / "s.duckdb"
    build_store(tmp_path / "manifests", db, root=tmp_path)
    con = open_reader(db)
    try:
        left = [r[0] for r in con.execute("SELECT object_id FROM objects ORDER BY object_id").fetchall()]
    finally:
        con.close()
    assert left == [f"b@{ids[0][:12]}#s"]


def _policy_and_text(tmp_path):
    db = tmp_path / "s.duckdb"
    build_store(tmp_path / "manifests", db, root=tmp_path)
    con = open_reader(db)
    try:
        (pol,) = con.execute("SELECT redaction FROM sources WHERE source_id = 'runbooks'").fetchone()
        text = " ".join(r[0] for r in con.execute("SELECT fts_text FROM objects").fetchall())
    finally:
        con.close()
    return orjson.loads(pol), text


def test_author_and_committer_e_mails_are_masked_like_pii(tmp_path):
    """The git facts are provenance and PII: the source's redaction gains the git_email mask
    (for every subject without a redaction block; lifted by the manifest's unless_scopes), and
    the index is made from the masked text."""
    project(tmp_path, [(T0, {"a.md": doc("alice", "## S\nwrite to ana@example.com\n")})])
    pol, text = _policy_and_text(tmp_path)
    assert pol == {"unless_scopes": [], "policy_object": None, "patterns": [
        {"name": "git_email", "regex": "[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}",
         "replacement": "[email redacted]"}]}
    assert "ana" not in text.split() and "redacted" in text.split()


def test_a_manifest_redaction_lifts_the_e_mail_mask_for_its_scopes(tmp_path):
    red = {"unless_scopes": ["pii:read"], "patterns": [{"name": "ticket", "regex": "TCK-[0-9]+",
                                                        "replacement": "[ticket]"}]}
    project(tmp_path, [(T0, {"a.md": doc("alice", "## S\ntext\n")})], redaction=red)
    pol, _ = _policy_and_text(tmp_path)
    assert pol["unless_scopes"] == ["pii:read"]
    assert [p["name"] for p in pol["patterns"]] == ["ticket", "git_email"]


def test_a_bundle_file_reads_like_the_repository(tmp_path):
    ids = project(tmp_path, [(T0, {"a.md": doc("alice", "## S\none\n")}),
                             (T0 + DAY, {"a.md": doc("alice", "## S\ntwo\n")})], bundle=True)
    assert [o["source_version"] for o in objects(tmp_path)] == ids


def test_include_exclude_globs_and_ref(tmp_path):
    ids = project(tmp_path, [(T0, {"docs/a.md": doc("a", "## S\none\n"), "docs/drafts/b.md": doc("b", "## S\nx\n"),
                                   "top.md": doc("c", "## S\ny\n")}),
                             (T0 + DAY, {"docs/a.md": doc("a", "## S\ntwo\n")})],
                  git={"include": ["docs/**/*.md"], "exclude": ["docs/drafts/**"], "ref": None})
    assert [o["object_id"] for o in objects(tmp_path)] == [f"docs/a@{ids[0][:12]}#s", f"docs/a@{ids[1][:12]}#s"]


def test_a_folder_pattern_excludes_the_folder_and_a_class_includes_its_names(tmp_path):
    ids = project(tmp_path, [(T0, {"docs/a.md": doc("a", "## S\none\n"), "docs/drafts/b.md": doc("b", "## S\nx\n"),
                                   "docs/c.md": doc("c", "## S\ny\n"), "docs/drafts.md": doc("d", "## S\nz\n")})],
                  git={"include": ["docs/[ad]*.md", "docs/**/b.md"], "exclude": ["docs/drafts"], "ref": None})
    assert [o["object_id"] for o in objects(tmp_path)] == [f"docs/a@{ids[0][:12]}#s", f"docs/drafts@{ids[0][:12]}#s"]


def test_ref_names_a_commit_and_a_bad_ref_is_an_error(tmp_path):
    ids = project(tmp_path, [(T0, {"a.md": doc("a", "## S\none\n")}), (T0 + DAY, {"a.md": doc("a", "## S\ntwo\n")})],
                  git={"ref": "main"})
    assert len(objects(tmp_path)) == 2
    m = tmp_path / "manifests" / "sources" / "runbooks.yaml"
    data = yaml.safe_load(m.read_text())
    data["git"] = {"ref": ids[0]}
    m.write_text(yaml.safe_dump(data))
    assert [o["source_version"] for o in objects(tmp_path)] == ids[:1]
    data["git"] = {"ref": "nope"}
    m.write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match="git.ref 'nope' is not a branch, tag or commit"):
        objects(tmp_path)


def test_a_bad_version_names_the_commit_and_path(tmp_path):
    ids = project(tmp_path, [(T0, {"a.md": doc("a", "## S\none\n")}),
                             (T0 + DAY, {"a.md": "---\nowner: [unclosed\n---\n## S\n"})])
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value).startswith(f"sources/runbooks@{ids[1][:12]}:a.md:")


def test_a_missing_template_field_names_the_commit_path_and_key(tmp_path):
    ids = project(tmp_path, [(T0, {"a.md": "---\nowner: x\n---\n## S\none\n"})])
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value) == (f"sources/runbooks@{ids[0][:12]}:a.md:1: subject_id: commit {ids[0][:12]} a.md: "
                            f"front-matter key 'service' (in the subject_id template 'service:{{service}}') "
                            f"is missing or empty (write {{service?}} if it may be, or {{service|default}})")


# --- what a repository folder may read (issue 46 item 10) -----------------------------------

ONE = [(T0, {"a.md": doc("alice", "## S\ntext\n")})]


def _refused(tmp_path, fragment: str, where: str = "sources/runbooks: ") -> str:
    with pytest.raises(InputError) as e:
        objects(tmp_path)
    assert str(e.value).startswith(where) and fragment in str(e.value), str(e.value)
    return str(e.value)


def test_a_git_file_pointing_outside_the_snapshot_is_refused_and_one_inside_is_read(tmp_path):
    make_repo(tmp_path / "outside", ONE)
    snap = tmp_path / "sources" / "runbooks"
    snap.mkdir(parents=True)
    project_manifest(tmp_path)
    (snap / ".git").write_text(f"gitdir: {tmp_path / 'outside' / '.git'}\n")
    _refused(tmp_path, ".git (gitdir:) leads outside the snapshot folder")
    # the same pointer to a repository kept inside the snapshot folder is a repository like any other
    (snap / ".git").unlink()
    make_repo(snap / "kept", ONE)
    (snap / ".git").write_text("gitdir: kept/.git\n")
    assert [o["object_id"].split("@")[0] for o in objects(tmp_path)] == ["a"]


def project_manifest(tmp_path, **manifest) -> None:
    mdir = tmp_path / "manifests" / "sources"
    mdir.mkdir(parents=True, exist_ok=True)
    m = {**BASE, "mapping": {"set": {"object_type": "runbook"}, "subject_id": "service:{service}",
                             "facts": {"owner": "owner"}}, **manifest}
    (mdir / "runbooks.yaml").write_text(yaml.safe_dump(m, sort_keys=False))


def test_a_git_folder_linked_from_outside_is_refused(tmp_path):
    make_repo(tmp_path / "outside", ONE)
    snap = tmp_path / "sources" / "runbooks"
    snap.mkdir(parents=True)
    project_manifest(tmp_path)
    (snap / ".git").symlink_to(tmp_path / "outside" / ".git")
    # the snapshot's walk refuses the symlinked folder first; the repository's own check says why
    _refused(tmp_path, "folder is a symlink that leads outside the snapshot folder", "sources/runbooks/.git: ")
    _confine_refuses(tmp_path, ".git leads outside the snapshot folder")


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_alternates_are_read_only_inside_the_snapshot(tmp_path, where):
    project(tmp_path, ONE)
    snap = tmp_path / "sources" / "runbooks"
    other = (tmp_path / "elsewhere" / "objects") if where == "outside" else (snap / "shared" / "objects")
    other.mkdir(parents=True)
    (snap / ".git" / "objects" / "info").mkdir(exist_ok=True)
    (snap / ".git" / "objects" / "info" / "alternates").write_text(f"# shared objects\n{other}\n")
    if where == "outside":
        _refused(tmp_path, "objects/info/alternates leads outside the snapshot folder")
    else:
        assert len(objects(tmp_path)) == 1


def test_a_link_inside_the_git_folder_that_leads_outside_is_refused(tmp_path):
    project(tmp_path, ONE)
    (tmp_path / "elsewhere").mkdir()
    refs = tmp_path / "sources" / "runbooks" / ".git" / "refs" / "tags"
    (refs / "stolen").symlink_to(tmp_path / "elsewhere")
    _refused(tmp_path, "folder is a symlink that leads outside the snapshot folder",
             "sources/runbooks/.git/refs/tags/stolen: ")
    _confine_refuses(tmp_path, "refs/tags/stolen is a link that leads outside the snapshot folder")


def _confine_refuses(tmp_path, message: str) -> None:
    """The repository's own check (parsers/gitstore.confine), a second line behind the walk."""
    import os

    from ctxcli.load.parsers.gitstore import confine

    snap = tmp_path / "sources" / "runbooks"
    with pytest.raises(InputError) as e:
        confine(Path(os.path.realpath(snap)), Path(os.path.realpath(snap)), "sources/runbooks")
    assert str(e.value) == f"sources/runbooks: {message}; clone the repository into it instead"


@pytest.mark.parametrize("storage", ["loose", "packed", "deltified"])
def test_an_oversized_blob_is_refused_from_its_header_without_being_inflated(tmp_path, monkeypatch, storage):
    """A blob over the Markdown limit is refused by the size in its header: the object store is
    never asked for its text. Sizes read from headers equal the real sizes for every object."""
    from dulwich.object_store import DiskObjectStore
    from dulwich.repo import Repo

    from ctxcli.load.parsers import git as gitparser
    from ctxcli.load.parsers.gitstore import stored_size

    big = doc("alice", "## S\n" + "grow the pool. " * 400 + "\n")
    project(tmp_path, [(T0, {"a.md": doc("alice", "## S\n" + "grow the pool. " * 390 + "\n")}), (T0 + DAY, {"a.md": big})])
    snap = tmp_path / "sources" / "runbooks"
    repo = Repo(str(snap))
    store = repo.object_store
    if storage != "loose":
        from dulwich.pack import write_pack

        objs = [store[s] for s in list(store)]
        write_pack(str(snap / ".git" / "objects" / "pack" / "pack-test"), objs, store.object_format,
                   deltify=storage == "deltified")
        for s in [o.id for o in objs]:
            os.unlink(snap / ".git" / "objects" / s[:2].decode() / s[2:].decode())
        repo = Repo(str(snap))
        store = repo.object_store
        assert not any(store.contains_loose(o.id) for o in objs) and len(list(store)) == len(objs)
    sizes = {s: stored_size(store, s) for s in store}
    assert sizes == {s: len(store[s].as_raw_string()) for s in store}
    if storage == "deltified":
        assert any(u.pack_type_num in (6, 7) for p in store.packs for u in p.iter_unpacked())
    big_sha = next(s for s in store if store[s].type_name == b"blob" and len(store[s].as_raw_string()) == len(big))
    asked = []
    real_get_raw = DiskObjectStore.get_raw
    monkeypatch.setattr(DiskObjectStore, "get_raw", lambda self, name: (asked.append(name), real_get_raw(self, name))[1])
    monkeypatch.setattr(gitparser, "MAX_MARKDOWN_BYTES", len(big) - 1)
    _refused(tmp_path, f"over {len(big) - 1} bytes", where="sources/runbooks@")
    assert asked and big_sha not in asked and big_sha.decode() not in asked
    monkeypatch.setattr(gitparser, "MAX_MARKDOWN_BYTES", len(big))
    assert len(objects(tmp_path)) == 2


def test_a_damaged_loose_object_header_is_left_to_dulwich_not_a_crash(tmp_path):
    """stored_size never raises on a damaged object: None, and the read that follows names it."""
    from dulwich.objects import hex_to_filename
    from dulwich.repo import Repo

    from ctxcli.load.parsers.gitstore import stored_size

    project(tmp_path, ONE)
    store = Repo(str(tmp_path / "sources" / "runbooks")).object_store
    sha = next(s for s in store if store[s].type_name == b"blob")
    path = hex_to_filename(os.fspath(store.path), sha.decode())
    os.chmod(path, 0o644)
    with open(path, "wb") as fh:
        fh.write(b"not zlib at all")
    assert stored_size(store, sha) is None
