"""Record-level sync of ``parser: git`` (issue 29 item 7): a reload parses only the versions a
new commit made or ended — the others' rows are copied from the live store — and walks only
the commits after the last loaded one when that commit is a first-parent ancestor of the tip
(the cursor); the store, its sync file and its tombstones equal a full load's."""

from __future__ import annotations

import json

import pytest

from ctxcli.load import sync
from ctxcli.load.build import build_store
from ctxcli.load.parsers import git

from .conftest import run_cli
from .gitrepo import make_repo
from .test_parsers_git import DAY, T0, doc, project
from .test_sync_units import _same_as_full

LONG = "\n".join(f"line {i} of a body long enough for rename detection by similarity" for i in range(8))
HISTORY = [
    (T0, {"a.md": doc("alice", "## Steps\nrestart\n"), "b.md": doc("bob", "## Steps\nbe careful\n"),
          "c.md": doc("carol", f"## Body\n{LONG}\n")}),
    (T0 + DAY, {"a.md": doc("alice", "## Steps\nrestart slowly\n"),
                "d.md": doc("dave", "## Steps\nthe new way\n", replaces="a")}),
    (T0 + 2 * DAY, {"b.md": doc("bob", "## Steps\nbe very careful\n## Check\nlook at the graphs\n")}),
]


@pytest.fixture
def parsed(monkeypatch):
    """The versions the git parser parses: (commit, path)."""
    seen: list[tuple[str, str]] = []
    real = git.version_objects

    def counting(ls, repo, disp, v, prev, latest):
        seen.append((v.commit, v.path))
        return real(ls, repo, disp, v, prev, latest)
    monkeypatch.setattr(git, "version_objects", counting)
    return seen


def _setup(tmp_path, **manifest):
    ids = project(tmp_path, HISTORY, deletion_mode="tombstone",
                  mapping={"set": {"object_type": "runbook"}, "subject_id": "service:{service}",
                           "facts": {"owner": "owner"}, "supersedes": "replaces"}, **manifest)
    live = tmp_path / "live.duckdb"
    build_store(tmp_path / "manifests", live, root=tmp_path)
    return ids, live


def _commit(tmp_path, history):
    return make_repo(tmp_path / "sources" / "runbooks", history)


def _units(res):
    (s,) = res.sources
    return s.units


def test_one_more_commit_parses_its_versions_and_the_ones_it_ended(tmp_path, parsed):
    ids, live = _setup(tmp_path)
    assert len(parsed) == 6
    parsed.clear()
    hist = HISTORY + [(T0 + 3 * DAY, {"b.md": doc("bob", "## Steps\nbe careful again\n"),
                                      "README.txt": "not matched"})]
    new = _commit(tmp_path, hist)
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    # b's last version (its validity now ends at the new commit) and b's new version
    assert parsed == [(ids[2], "b.md"), (new[3], "b.md")]
    assert _units(inc) == {"read": 2, "of": 7, "unit": "version",
                           "cursor": {"used": True, "from": ids[2], "commits": 1}}
    (s,) = inc.sources
    assert (s.added, s.changed, s.removed) == (1, 2, 0)     # b's 2 sections ended, 1 new section
    full = _same_as_full(tmp_path, live, tmp_path)
    assert _units(full)["cursor"] == {"used": False, "reason": "no walk state recorded"}
    assert _units(full)["read"] == 7

    # the tip unchanged, a file the parser does not read added: the source's digest is unchanged
    # (load/parsers/git.py, GitParser.snapshot_digest), the source reused whole
    (tmp_path / "sources" / "runbooks" / "NOTES").write_text("not part of the repository\n")
    parsed.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert parsed == [] and inc.sources[0].reused
    # a sidecar the parser reads added: nothing walked, nothing parsed
    (tmp_path / "sources" / "runbooks" / "entities.jsonl").write_text(
        '{"entity_key": "service:checkout", "entity_type": "service", "name": "Checkout"}\n')
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert parsed == [] and _units(inc)["cursor"] == {"used": True, "from": new[3], "commits": 0}
    _same_as_full(tmp_path, live, tmp_path)


def test_a_rename_ends_the_old_paths_version_and_keeps_the_identity(tmp_path, parsed):
    ids, live = _setup(tmp_path)
    hist = HISTORY + [(T0 + 3 * DAY, {"c.md": None, "e.md": doc("carol", f"## Body\n{LONG}\n")})]
    new = _commit(tmp_path, hist)
    parsed.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert parsed == [(ids[0], "c.md"), (new[3], "e.md")]
    assert _units(inc)["cursor"]["used"] is True and _units(inc)["read"] == 2
    _same_as_full(tmp_path, live, tmp_path)
    state = json.loads(sync.path_of(live).read_bytes())["sources"]["runbooks"]["state"]
    assert state["versions"][-1][:2] == ["c.md", "e.md"]      # identity kept through the rename
    assert sorted(state["live"]) == ["a.md", "b.md", "d.md", "e.md"]


def test_a_deleted_file_is_tombstoned_as_a_full_load_does(tmp_path, parsed):
    ids, live = _setup(tmp_path)
    hist = HISTORY + [(T0 + 3 * DAY, {"d.md": None})]
    new = _commit(tmp_path, hist)
    parsed.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert parsed == [(ids[1], "d.md")]
    assert _units(inc) == {"read": 1, "of": 6, "unit": "version",
                           "cursor": {"used": True, "from": ids[2], "commits": 1}}
    (s,) = inc.sources
    assert (s.tombstones, s.removed) == (1, 1)
    _same_as_full(tmp_path, live, tmp_path)
    # one more commit: the tombstoned version's rows are not in the live store, so it is parsed
    # again (with the sections of the versions before it), as are the versions the commit makes
    hist.append((T0 + 4 * DAY, {"a.md": doc("alice", "## Steps\nrestart, then watch\n")}))
    new = _commit(tmp_path, hist)
    parsed.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert parsed == [(ids[1], "a.md"), (ids[1], "d.md"), (new[4], "a.md")]
    _same_as_full(tmp_path, live, tmp_path)


def test_a_rewritten_history_walks_it_whole_and_copies_what_it_can(tmp_path, parsed):
    ids, live = _setup(tmp_path)
    amended = HISTORY[:2] + [(T0 + 2 * DAY, {"b.md": doc("bob", "## Steps\nbe very, very careful\n")})]
    new = _commit(tmp_path, amended)
    assert new[:2] == ids[:2] and new[2] != ids[2]
    parsed.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    # every version before the amended commit is copied (its history is the same)
    assert parsed == [(new[2], "b.md")]
    assert _units(inc) == {"read": 1, "of": 6, "unit": "version", "cursor": {
        "used": False, "reason": f"last loaded commit {ids[2][:12]} is not a first-parent ancestor of the tip "
                                 f"{new[2][:12]}"}}
    _same_as_full(tmp_path, live, tmp_path)


def test_a_changed_manifest_or_an_unreadable_state_walks_the_whole_history(tmp_path, parsed):
    ids, live = _setup(tmp_path)
    m = tmp_path / "manifests" / "sources" / "runbooks.yaml"
    m.write_text(m.read_text().replace("refresh_sla: 24h", "refresh_sla: 12h"))
    parsed.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert len(parsed) == 6
    assert _units(inc)["cursor"] == {"used": False, "reason": "manifest or evidence rules changed"}
    _same_as_full(tmp_path, live, tmp_path)
    p = sync.path_of(live)
    doc_ = json.loads(p.read_bytes())
    doc_["sources"]["runbooks"]["state"]["versions"][0] = ["truncated"]
    p.write_bytes(json.dumps(doc_).encode())
    _commit(tmp_path, HISTORY + [(T0 + 3 * DAY, {"a.md": doc("alice", "## Steps\nrestart now\n")})])
    parsed.clear()
    inc = build_store(tmp_path / "manifests", live, root=tmp_path)
    assert _units(inc)["cursor"] == {"used": False, "reason": "recorded walk state unreadable"}
    assert _units(inc)["read"] == 2             # the units still copy: their digests are recorded
    _same_as_full(tmp_path, live, tmp_path)


def test_ctx_load_reports_the_cursor(tmp_path, monkeypatch):
    ids, _ = _setup(tmp_path)
    monkeypatch.setenv("CTX_ROOT", str(tmp_path))
    db = tmp_path / "s.duckdb"
    args = ["load", "--manifests", tmp_path / "manifests", "--db", db]
    assert run_cli(args).exit_code == 0
    new = _commit(tmp_path, HISTORY + [(T0 + 3 * DAY, {"a.md": doc("alice", "## Steps\nrestart now\n")})])
    r = run_cli(args)
    assert r.exit_code == 0, r.stderr
    assert "read again, the rest copied from the previous store: runbooks 2 of 7 version(s)" in r.stdout
    assert f"git history walked: runbooks 1 new commit(s) after {ids[2][:12]}" in r.stdout
    _commit(tmp_path, HISTORY[:2] + [(T0 + 5 * DAY, {"a.md": doc("alice", "## Steps\nrestart later\n")})])
    r = run_cli([*args, "--json"])
    units = {s["source_id"]: s["units"] for s in json.loads(r.stdout)["sources"]}["runbooks"]
    assert units["cursor"] == {"used": False, "reason": f"last loaded commit {new[3][:12]} is not a first-parent "
                                                       f"ancestor of the tip {units['cursor']['reason'][-12:]}"}
    r = run_cli(args[:-2] + ["--db", tmp_path / "other.duckdb"])      # a first load: nothing to say
    assert "git history walked" not in r.stdout
