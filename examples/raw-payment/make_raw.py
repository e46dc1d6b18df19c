"""Make the two binary raw sources of the bundled payment-incident domain from their text
inputs here (run from the repository root: ``python examples/raw-payment/make_raw.py``):

- ``sources/pay-runbooks/runbooks.bundle`` — the runbook repository as a ``git bundle``: one
  file, ``runbooks/payment-recovery.md``, committed once per version in
  ``runbook-versions/`` (v3, v4, v5) at the time each took effect (its ``effective`` key), with
  the team's own front matter;
- ``sources/pay-service-catalog/catalog.sqlite`` — the service catalog's SQLite database, from
  ``catalog.sql``.

The other raw sources are text and are edited where they are: ``sources/pay-deployments/
deployments.csv`` (the CD system's export), ``sources/pay-org/ownership.csv`` (ownership with
validity columns), ``sources/pay-incidents/incidents.json`` (the incident store's export: tickets
with their timeline, findings, notes and security reviews nested). Their manifests map them
(parsers git, table and json-export) and the playbook's evidence rules replace ``supports``
labels. The bundle's bytes may differ from run to run (dulwich's pack order); its commits
and their contents do not.
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


def runbooks(out: Path) -> list[str]:
    """Write the bundle; returns its commit ids, oldest first."""
    import yaml
    from dulwich.bundle import create_bundle_from_repo, write_bundle
    from dulwich.index import commit_tree
    from dulwich.objects import Blob, Commit
    from dulwich.repo import Repo

    sys.path.insert(0, str(REPO / "src"))
    from ctxcli.util.timeutil import parse_ts

    versions = []
    for p in sorted((HERE / "runbook-versions").glob("*.md")):
        text = p.read_text(encoding="utf-8")
        fm = yaml.safe_load(text.split("---\n", 2)[1])
        versions.append((parse_ts(fm["effective"]), fm["version"], text))
    versions.sort()
    ids = []
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repo.init(tmp)
        parent: list[bytes] = []
        for when, version, text in versions:
            b = Blob.from_string(text.encode("utf-8"))
            repo.object_store.add_object(b)
            c = Commit()
            c.tree = commit_tree(repo.object_store, [(b"runbooks/payment-recovery.md", b.id, 0o100644)])
            c.parents = parent
            c.author = c.committer = b"payments-core <payments-core@example.invalid>"
            c.author_time = c.commit_time = int(when.timestamp())
            c.author_timezone = c.commit_timezone = int(when.utcoffset().total_seconds())
            c.message = f"payment-recovery runbook {version}\n".encode()
            repo.object_store.add_object(c)
            parent = [c.id]
            ids.append(c.id.decode())
        repo.refs[b"refs/heads/main"] = parent[0]
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "wb") as fh:
            write_bundle(fh, create_bundle_from_repo(repo, refs=[b"refs/heads/main"]))
    return ids


def catalog(out: Path) -> None:
    if out.exists():
        out.unlink()
    con = sqlite3.connect(out)
    con.executescript((HERE / "catalog.sql").read_text(encoding="utf-8"))
    con.commit()
    con.close()


if __name__ == "__main__":
    runbooks(REPO / "sources" / "pay-runbooks" / "runbooks.bundle")
    catalog(REPO / "sources" / "pay-service-catalog" / "catalog.sqlite")
