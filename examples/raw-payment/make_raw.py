"""Re-express three payment-incident sources in the forms a company has them, from the bundled
snapshots (run from the repository root: ``python examples/raw-payment/make_raw.py``):

- ``pay-deployments/deployments.csv`` — the CD system's export, one row per change;
- ``pay-org/ownership.csv`` — the org registry's ownership export, with validity columns;
- ``pay-service-catalog/catalog.sqlite`` — the service catalog's SQLite database;
- ``pay-incidents/incidents.json`` — the incident store's JSON export: tickets with their
  timeline, findings, notes and security reviews nested inside;
- ``pay-runbooks/runbooks.bundle`` — the runbook repository as a ``git bundle``: one file,
  ``runbooks/payment-recovery.md``, committed as v3, v4 and v5 at the times each took effect,
  with the team's own front matter (``id``, ``version``, ``service``, ``reviewed``, ``codes``).

``manifests/*.yaml`` map them (parsers table, json-export, git), ``evidence-rules.yaml`` gives the playbook rules
that replace the records' ``supports`` labels; tests/test_raw_payment.py puts them in place of
the bundled JSONL objects and checks that every payment-incident case keeps its verdicts.
The entities and relations of these sources stay in their JSONL sidecars. (The bundle's bytes
may differ from run to run — dulwich's pack order — its commits and their contents do not.)
"""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def objects(source: str) -> list[dict]:
    p = REPO / "sources" / source / "objects.jsonl"
    return [json.loads(ln) for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]


def _csv(path: Path, cols: list[str], rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: "" if r.get(c) is None else r[c] for c in cols})


def deployments() -> None:
    rows = []
    for o in objects("pay-deployments"):
        f = o["facts"]
        rows.append({"change_id": f["change_id"], "record_type": o["object_type"], "change_kind": f["change_kind"],
                     "service": f["service"], "impacted_services": ";".join(f.get("impacted_services", [])),
                     "completed_at": f["completed_at"], "commit": f.get("commit"),
                     "environment": f.get("environment"), "rule_version": f.get("rule_version"),
                     "valid_from": o["valid_from"], "valid_to": o["valid_to"], "observed_at": o["observed_at"],
                     "replaces": o["supersedes"], "export": o["source_version"], "title": o["title"],
                     "description": o["content"]})
    _csv(HERE / "pay-deployments" / "deployments.csv", list(rows[0]), rows)


def ownership() -> None:
    rows = [{"record_id": o["object_id"], "service": o["facts"]["service"], "owner_team": o["facts"]["owner_team"],
             "oncall_rotation": o["facts"]["oncall_rotation"], "valid_from": o["valid_from"],
             "valid_to": o["valid_to"], "recorded_at": o["observed_at"], "replaces": o["supersedes"],
             "export": o["source_version"], "title": o["title"], "description": o["content"]}
            for o in objects("pay-org")]
    _csv(HERE / "pay-org" / "ownership.csv", list(rows[0]), rows)


def catalog() -> None:
    p = HERE / "pay-service-catalog" / "catalog.sqlite"
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.exists():
        p.unlink()
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE services (name TEXT PRIMARY KEY, tier INTEGER, depends_on TEXT, in_service_since "
                "TEXT, reviewed_at TEXT, export TEXT, title TEXT, description TEXT)")
    for o in objects("pay-service-catalog"):
        f = o["facts"]
        con.execute("INSERT INTO services VALUES (?,?,?,?,?,?,?,?)",
                    (f["service"], f["tier"], ";".join(f.get("depends_on", [])), o["valid_from"], o["observed_at"],
                     o["source_version"], o["title"], o["content"]))
    con.commit()
    con.execute("VACUUM")
    con.close()


NESTED = {"timeline_event": "timeline", "finding": "findings", "incident_note": "notes",
          "security_review": "security_reviews"}


def incidents() -> None:
    tickets: dict[str, dict] = {}
    for o in objects("pay-incidents"):
        common = {"title": o["title"], "text": o["content"], "at": o["valid_from"], "recorded_at": o["observed_at"],
                  "labels": o["keys"]}
        if o["object_type"] == "incident":
            tickets[o["object_id"]] = {"id": o["object_id"], "export": o["source_version"], **common, **o["facts"],
                                       **{k: [] for k in NESTED.values()}}
        else:
            parent = tickets[o["subject_id"].split(":", 1)[1]]
            parent[NESTED[o["object_type"]]].append(
                {"entry_id": o["object_id"][len(parent["id"]) + 1:], **common, **o["facts"]})
    p = HERE / "pay-incidents" / "incidents.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps({"export": {"system": "incidentdb", "tickets": list(tickets.values())}}, indent=2,
                            ensure_ascii=False) + "\n", encoding="utf-8")


def runbooks() -> None:
    import tempfile

    import yaml
    from dulwich.bundle import create_bundle_from_repo, write_bundle
    from dulwich.index import commit_tree
    from dulwich.objects import Blob, Commit
    from dulwich.repo import Repo

    from ctxcli.util.timeutil import parse_ts

    folder = REPO / "sources" / "pay-runbooks" / "payment-recovery"
    versions = []
    for p in sorted(folder.glob("*.md")):
        text = p.read_text(encoding="utf-8")
        _, fm, body = text.split("---\n", 2)
        d = yaml.safe_load(fm)
        own = {"id": d["doc_id"].rsplit("-", 1)[0], "version": d["version"], "title": d["title"],
               "service": d["subject_id"].split(":", 1)[1], "runbook": d["facts"]["runbook"],
               "owner": "payments-core", "reviewed": d["observed_at"], "codes": d["keys"]}
        versions.append((parse_ts(d["valid_from"]), "---\n" + yaml.safe_dump(own, sort_keys=False) + "---\n" + body))
    out = HERE / "pay-runbooks" / "runbooks.bundle"
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repo.init(tmp)
        parent: list[bytes] = []
        for when, text in versions:
            b = Blob.from_string(text.encode("utf-8"))
            repo.object_store.add_object(b)
            c = Commit()
            c.tree = commit_tree(repo.object_store, [(b"runbooks/payment-recovery.md", b.id, 0o100644)])
            c.parents = parent
            c.author = c.committer = b"payments-core <payments-core@example.invalid>"
            c.author_time = c.commit_time = int(when.timestamp())
            c.author_timezone = c.commit_timezone = int(when.utcoffset().total_seconds())
            c.message = f"payment-recovery runbook {yaml.safe_load(text.split('---')[1])['version']}\n".encode()
            repo.object_store.add_object(c)
            parent = [c.id]
        repo.refs[b"refs/heads/main"] = parent[0]
        with open(out, "wb") as fh:
            write_bundle(fh, create_bundle_from_repo(repo, refs=[b"refs/heads/main"]))


if __name__ == "__main__":
    deployments()
    ownership()
    catalog()
    incidents()
    runbooks()
