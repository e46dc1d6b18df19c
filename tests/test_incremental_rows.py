"""Record-level incremental sync (issue 29 item 7): a reload derives only the records that
changed (tokens, shadow text, terms, vectors are copied for the others), reports added /
changed / removed objects per source, and gives exactly the store a full load gives — for
records, markdown, git and table sources, with a removal and a tombstone."""

from __future__ import annotations

import json

import yaml

from ctxcli.load.build import build_store
from ctxcli.util.canon import content_hash

from .conftest import run_cli
from .gitrepo import make_repo
from .test_incremental import _dump

BASE = {"tenant_id": "t1", "owner_team": "ops", "classification": "internal", "trust_level": "operational",
        "required_scopes": [], "allowed_purposes": ["incident_review"], "refresh_sla": "24h",
        "parser_version": "1", "schema_version": 1, "enabled": True}
T0 = 1_767_225_600
DAY = 86_400


def _record(i: int, text: str = "") -> dict:
    content = text or f"Ticket {i} of the checkout service: pods restarted after deploy {i}."
    return {"object_id": f"T-{i}", "tenant_id": "t1", "source_version": "v1", "object_type": "ticket",
            "subject_id": "service:checkout", "title": f"Ticket {i}", "content": content,
            "locator": f"tickets://{i}", "valid_from": None, "valid_to": None,
            "observed_at": "2026-03-01T10:00:00+00:00", "required_scopes": [], "supports": [],
            "facts": {"n": i}, "keys": [f"T-{i}"], "content_hash": content_hash(content)}


def _md(rev: int, steps: str) -> str:
    return f"---\nid: RB-{rev}\nservice: checkout\nreviewed: 2026-03-01T10:00:00Z\n---\n# Restart\n\n## Steps\n{steps}\n\n## Escalate\nPage the owner.\n"


def _csv(rows: list[tuple[str, str, int]]) -> str:
    return "change_id,service,replicas,at\n" + "".join(f"{c},{s},{r},2026-03-01 10:00:00\n" for c, s, r in rows)


ROWS = [(f"CHG-{i}", "checkout" if i % 2 else "ledger", i) for i in range(1, 9)]
FM = "---\nowner: ops\n---\n"
HIST = [(T0, {"rb/restart.md": FM + "# Restart\n\n## Steps\nrestart pods\n", "rb/drain.md": FM + "# Drain\n\n## Steps\ndrain\n"}),
        (T0 + DAY, {"rb/restart.md": FM + "# Restart\n\n## Steps\nrestart pods slowly\n"})]


def _project(root):
    ms = root / "manifests" / "sources"
    ms.mkdir(parents=True)
    manifests = {
        "tickets": {"source_type": "ticket_store", "parser": "records", "deletion_mode": "tombstone"},
        "wiki": {"source_type": "wiki", "parser": "markdown", "deletion_mode": "none",
                 "mapping": {"object_id": "id", "title": "id", "version": "id", "observed_at": "reviewed", "subject_id": "service:{service}",
                             "set": {"object_type": "runbook"}}},
        "repo": {"source_type": "runbook_repository", "parser": "git", "deletion_mode": "tombstone",
                 "mapping": {"set": {"object_type": "runbook"}}},
        "deploys": {"source_type": "deployment_log", "parser": "table", "deletion_mode": "none",
                    "table": {"file": "deploys.csv"},
                    "mapping": {"object_id": "deploy:{change_id}", "title": "Deployment {change_id}",
                                "body": "{change_id} runs {replicas} replicas of {service}.",
                                "keys": ["change_id"], "observed_at": "at", "timezone": "UTC", "facts": {"replicas": {"from": "replicas", "type": "int"}},
                                "set": {"object_type": "deployment"}}},
    }
    for sid, m in manifests.items():
        (ms / f"{sid}.yaml").write_text(yaml.safe_dump({**BASE, "source_id": sid, "snapshot": f"sources/{sid}", **m}))
        (root / "sources" / sid).mkdir(parents=True)
    (root / "sources" / "tickets" / "objects.jsonl").write_text("".join(json.dumps(_record(i)) + "\n" for i in range(1, 6)))
    (root / "sources" / "wiki" / "a.md").write_text(_md(1, "restart pods"))
    (root / "sources" / "wiki" / "b.md").write_text(_md(2, "drain the node"))
    make_repo(root / "sources" / "repo", HIST)
    (root / "sources" / "deploys" / "deploys.csv").write_text(_csv(ROWS))


def _change(root):
    """One edit of each kind in every source: a changed record and a tombstone (records), an
    edited section (markdown), a commit that changes one file and deletes another (git), a
    changed, a removed and an added row (table)."""
    t = root / "sources" / "tickets"
    rows = [_record(i) for i in range(1, 6)]
    rows[1] = _record(2, "Ticket 2 of the checkout service: reopened, the fix did not hold.")
    (t / "objects.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (t / "tombstones.jsonl").write_text(json.dumps({"object_id": "T-4", "tenant_id": "t1",
                                                    "deleted_at": "2026-03-02T10:00:00+00:00",
                                                    "reason": "filed twice"}) + "\n")
    (root / "sources" / "wiki" / "b.md").write_text(_md(2, "drain the node, then cordon it"))
    make_repo(root / "sources" / "repo", HIST + [(T0 + 2 * DAY, {"rb/restart.md": FM + "# Restart\n\n## Steps\ndrain first\n",
                                                                  "rb/drain.md": None})])
    rows = [r for r in ROWS if r[0] != "CHG-3"] + [("CHG-9", "ledger", 9)]
    rows[0] = ("CHG-1", "checkout", 10)
    (root / "sources" / "deploys" / "deploys.csv").write_text(_csv(rows))


def test_a_reload_derives_only_changed_records_and_equals_a_full_load(tmp_path, monkeypatch):
    import ctxcli.load.derive as derive

    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _project(root)
    first = build_store(root / "manifests", live, root=root)
    assert {s.source_id: (s.added, s.changed, s.removed) for s in first.sources} == {
        "deploys": (8, 0, 0), "repo": (3, 0, 0), "tickets": (5, 0, 0), "wiki": (4, 0, 0)}
    _change(root)

    derived: list[str] = []
    real = derive.derive

    def counting(rows, *a):
        derived.extend(r["object_id"] for r in rows)
        return real(rows, *a)
    monkeypatch.setattr(derive, "derive", counting)
    monkeypatch.setenv("CTX_LOAD_WORKERS", "1")
    inc = build_store(root / "manifests", live, root=root)
    monkeypatch.setattr(derive, "derive", real)
    # only the records whose title, content or keys changed were tokenised and embedded again
    # (the repository's third commit is a new version; CHG-1's body names its replicas)
    assert sorted(derived) == sorted(["T-2", "RB-2#steps", "deploy:CHG-1", "deploy:CHG-9"]
                                     + [o for o in derived if o.startswith("rb/restart@")])
    assert len([o for o in derived if o.startswith("rb/restart@")]) == 1
    assert inc.reused == []
    # T-4 tombstoned; the drain runbook's version ends at the deleting commit and is tombstoned;
    # the previous restart version now ends where the new one starts (changed); the five rows
    # after the removed CHG-3 moved up a row (their locators say so) but did not change
    assert {s.source_id: (s.added, s.changed, s.removed) for s in inc.sources} == {
        "deploys": (1, 1, 1), "repo": (1, 1, 1), "tickets": (0, 1, 1), "wiki": (0, 1, 0)}

    full = tmp_path / "full.duckdb"
    build_store(root / "manifests", full, root=root, incremental=False)
    a, b = _dump(live), _dump(full)
    assert a.keys() == b.keys()
    for t in a:
        assert a[t] == b[t], t


def test_ctx_load_reports_added_changed_removed_per_source(tmp_path, monkeypatch):
    root = tmp_path / "proj"
    _project(root)
    monkeypatch.setenv("CTX_ROOT", str(root))
    db = tmp_path / "s.duckdb"
    r = run_cli(["load", "--manifests", root / "manifests", "--db", db])
    assert r.exit_code == 0 and "no previous store to compare with: every object is new" in r.stdout
    _change(root)
    r = run_cli(["load", "--manifests", root / "manifests", "--db", db, "--json"])
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert {s["source_id"]: (s["added"], s["changed"], s["removed"]) for s in doc["sources"]} == {
        "deploys": (1, 1, 1), "repo": (1, 1, 1), "tickets": (0, 1, 1), "wiki": (0, 1, 0)}
    r = run_cli(["load", "--manifests", root / "manifests", "--db", db])
    assert r.exit_code == 0
    assert "changes since the previous store: none" in r.stdout
    (root / "sources" / "deploys" / "deploys.csv").write_text(_csv(ROWS))
    r = run_cli(["load", "--manifests", root / "manifests", "--db", db, "--full"])
    assert "changes since the previous store: deploys +1 ~1 -1" in r.stdout


def test_a_changed_redaction_policy_derives_the_sources_records_again(tmp_path):
    """The index and vectors are made from masked text: when a source's masks change, none of
    its records keeps what was derived under the old ones."""
    root, live = tmp_path / "proj", tmp_path / "live.duckdb"
    _project(root)
    build_store(root / "manifests", live, root=root)
    m = root / "manifests" / "sources" / "tickets.yaml"
    doc = yaml.safe_load(m.read_text())
    doc["redaction"] = {"unless_scopes": [], "patterns": [{"name": "pods", "regex": "pods",
                                                           "replacement": "[masked]"}]}
    m.write_text(yaml.safe_dump(doc))
    build_store(root / "manifests", live, root=root)
    full = tmp_path / "full.duckdb"
    build_store(root / "manifests", full, root=root, incremental=False)
    a, b = _dump(live), _dump(full)
    for t in a:
        assert a[t] == b[t], t
    import duckdb

    con = duckdb.connect(str(live), read_only=True)
    texts = [t for (t,) in con.execute("SELECT fts_text FROM objects WHERE source_id = 'tickets'").fetchall()]
    con.close()
    assert len(texts) == 5 and all("pods" not in t.split() and "masked" in t.split() for t in texts)
