"""Entity-linking figures (issue 30): the cost of linking per 10k objects, and what linking
finds on the bundled payment-incident data.

    python benchmarks/linking.py            # both
    python benchmarks/linking.py cost       # synthetic: 10k objects of ~120 words, 500 entities (3 names each)
    python benchmarks/linking.py bundled    # links of pay-incidents and pay-postmortems, printed

``cost`` times load/link.Linker.scan alone (the matcher: exact phrases, then rapidfuzz over the
windows no exact phrase covers), in this process, without the rest of the load. ``bundled``
loads a copy of the project with a ``linking`` block added to the incident and postmortem
manifests (entity types service, team, change) and prints every link and unresolved mention,
for judging precision by hand.
"""

from __future__ import annotations

import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def cost(n: int = 10_000, n_ent: int = 500, fuzzy: bool = True) -> dict:
    from ctxcli.load.link import Linker
    from ctxcli.models.manifest import Linking

    rnd = random.Random(7)
    names = sorted({"".join(rnd.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rnd.randint(5, 10)))
                    for _ in range(n_ent * 3)})[:n_ent]
    # filler: 3,000 made-up lowercase words of 3-9 letters, and a few common ones
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["".join(rnd.choice(letters) for _ in range(rnd.randint(3, 9))) for _ in range(3000)] + \
        ["service", "team", "payment", "error", "the", "and", "release"]
    lk = Linker()
    for i in range(n_ent):
        lk.add_entity({"tenant_id": "t", "entity_key": f"service:{names[i]}-api", "entity_type": "service",
                       "name": f"{names[i]}-api", "aliases": [f"{names[i]} service", f"the {names[i]} app"]})
    spec = Linking(entity_types=["service"], fuzzy=fuzzy)
    objs = []
    for j in range(n):
        text = [rnd.choice(words) for _ in range(120)]
        for _ in range(2):
            k = rnd.randrange(n_ent)
            text.insert(rnd.randrange(len(text)), rnd.choice([f"{names[k]}-api", f"{names[k]} service"]))
        objs.append({"tenant_id": "t", "object_id": f"o{j}", "subject_id": "incident:x", "title": "t",
                     "content": " ".join(text), "keys": [], "source_version": "1"})
    t0 = time.perf_counter()
    links = unresolved = 0
    for o in objs:
        a, b = lk.scan(o, spec, "s")
        links += len(a)
        unresolved += len(b)
    return {"objects": n, "entities": n_ent, "fuzzy": fuzzy, "seconds": round(time.perf_counter() - t0, 2),
            "links": links, "unresolved": unresolved}


def bundled() -> None:
    import duckdb

    from ctxcli.load.build import build_store

    with tempfile.TemporaryDirectory() as tmp:
        proj = Path(tmp) / "p"
        for name in ("manifests", "sources", "examples"):
            shutil.copytree(REPO / name, proj / name, symlinks=True)
        for m in ("pay-incidents.yaml", "pay-postmortems.yaml", "pay-deployments.yaml"):
            p = proj / "manifests" / "sources" / m
            p.write_text(p.read_text() + "\nlinking:\n  entity_types: [service, team, change]\n")
        db = Path(tmp) / "ctx.duckdb"
        build_store(proj / "manifests", db, root=proj)
        con = duckdb.connect(str(db), read_only=True)
        for row in con.execute(
                "SELECT r.evidence_object_id, s.entity_key, d.entity_key, r.extraction_method, r.confidence "
                "FROM relations r JOIN entities s ON s.entity_id = r.src JOIN entities d ON d.entity_id = r.dst "
                "WHERE r.extraction_method IS NOT NULL AND r.tenant_id = 'tenant-demo' ORDER BY 1, 3").fetchall():
            print("link      ", *row)
        for row in con.execute("SELECT object_id, mention, candidates, scores FROM unresolved_entities "
                               "WHERE tenant_id = 'tenant-demo' ORDER BY 1, 2").fetchall():
            print("unresolved", *row)


if __name__ == "__main__":
    what = sys.argv[1:] or ["cost", "bundled"]
    if "cost" in what:
        print(cost())
        print(cost(fuzzy=False))
    if "bundled" in what:
        bundled()
