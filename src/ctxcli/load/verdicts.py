"""The injection gate's verdict of every object, computed once at load (issue 53 item 4).

For each object of the staging store: the fields the evidence gate scans
(:func:`ctxcli.engine.injection_fields.gated_fields`: title, content, facts, the header fields, minus its
manifest's ``injection.accept_fields``; the gate scans the object as stored, never a masked
view), their sha256 (:func:`.injection_adapter.fields_sha256`) and the verdict, written to
``injection_verdicts`` with the running detector's id (:func:`.injection_adapter.detector_id`).
At query time the gate uses a stored verdict only while both still match
(:func:`.injection_adapter.gate_scan`); else it scans, as without a stored verdict.

An incremental load takes a verdict from the live store (attached as ``prior``) only when the
live store's row was computed by this same detector from the same fields (same sha256): an
unchanged object keeps its verdict under an unchanged detector; an edited object, or any
object after a detector change, is scanned again. A full load (``--full``, or one that fell back
from an incremental load) scans every object. With a worker pool (load/derive.py) the scans
run in the workers.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any

import orjson

from ..util.canon import json_list

CHUNK = 2048
_SEQ = itertools.count()
# Objects to scan (not held by this process's verdict memo) below which the pool is not used
# (each worker sets the detector up first; measured 2026-12-07, the bundled store's 197 objects:
# a load takes 2.9-3.5 s with two workers scanning, 4.2-5.0 s scanning in the loader).
POOL_MIN = 64
_COLS = ("doc_id", "tenant_id", "object_id", "source_id", "source_version", "object_type", "title", "content",
         "locator", "facts", "supports", "section")


def _fields(r: tuple, accept: dict[str, tuple[str, ...]]) -> list[tuple[str, str]]:
    """The gated fields of an objects row (:data:`_COLS`), built as hydration builds the
    object the gate reads (engine/hydrate.row_to_obj)."""
    from ..engine.injection_fields import gated_fields

    o = SimpleNamespace(object_id=r[2], source_id=r[3], source_version=r[4], object_type=r[5], title=r[6],
                        content=r[7], locator=r[8], facts=orjson.loads(r[9]) if r[9] else {},
                        supports=list(r[10] or []), section=r[11], injection_accept=accept.get(r[3], ()))
    return gated_fields(o)      # type: ignore[arg-type]


def scan_batch(batch: list[tuple[tuple[str, str], ...]]) -> list[tuple[str, str, str] | None]:
    """The verdicts of a batch of field tuples (a worker's task)."""
    from ..engine import injection_adapter as ia

    return ia.scan_fresh(batch)


def scan_spooled(path: str) -> list[tuple[str, str, str] | None]:
    """:func:`scan_batch` of a batch the parent spooled to ``path`` (a pickle; removed once
    read): a task names a file, never carries the texts through the pool's pipe (see
    load/derive.Deriver: a large task can hang ``Pool.terminate()`` after Ctrl-C)."""
    import os
    import pickle

    with open(path, "rb") as fh:
        batch = pickle.load(fh)
    os.unlink(path)
    return scan_batch(batch)


def _pool_scan(pool, batch: list[tuple[tuple[str, str], ...]], spool: str) -> list[tuple[str, str, str] | None]:
    import os
    import pickle

    step = max(1, -(-len(batch) // (2 * getattr(pool, "_processes", 1))))
    paths = []
    for j in range(0, len(batch), step):
        paths.append(os.path.join(spool, f"verdicts-{os.getpid()}-{next(_SEQ)}.pickle"))
        with open(paths[-1], "wb") as fh:
            pickle.dump(batch[j:j + step], fh, protocol=pickle.HIGHEST_PROTOCOL)
    return [h for part in pool.map(scan_spooled, paths) for h in part]


def write_verdicts(con, accept: dict[str, tuple[str, ...]], prior_attached: bool, pool=None,
                   spool: str = "") -> dict[str, int]:
    """Fill ``injection_verdicts`` of the staging store ``con`` (its ``objects`` final).
    ``prior_attached``: the live store is attached as ``prior`` and its verdicts may be reused.
    ``pool`` (load/derive.start_pool) scans in its workers, the batches spooled to files in
    ``spool`` (the load's temporary folder). Returns {"reused": …, "scanned": …}."""
    from ..engine import injection_adapter as ia

    det = ia.detector_id()
    cols = ", ".join(_COLS)
    lo, hi = con.execute("SELECT min(doc_id), max(doc_id) FROM objects").fetchone()
    # (the staging connection's open transaction holds the objects: read in doc id ranges on it,
    # never through another cursor, and never all rows at once)
    ranges = [(a, a + CHUNK - 1) for a in range(lo, hi + 1, CHUNK)] if lo is not None else []
    con.execute("CREATE TEMP TABLE vkeys(doc_id INTEGER, tenant_id VARCHAR, fields_sha256 VARCHAR)")
    con.execute("CREATE TEMP TABLE vgot(doc_id INTEGER, tenant_id VARCHAR, fields_sha256 VARCHAR, field VARCHAR, "
                "pattern VARCHAR, label VARCHAR)")
    if prior_attached:
        for a, b in ranges:
            rows = con.execute(f"SELECT {cols} FROM objects WHERE doc_id BETWEEN ? AND ? ORDER BY doc_id",
                               [a, b]).fetchall()
            if rows:
                con.execute("INSERT INTO vkeys SELECT unnest(from_json(?, '[\"INTEGER\"]')), "
                            "unnest(from_json(?, '[\"VARCHAR\"]')), unnest(from_json(?, '[\"VARCHAR\"]'))",
                            [json_list(r[0] for r in rows), json_list(r[1] for r in rows),
                             json_list(ia.fields_sha256(_fields(r, accept)) for r in rows)])
        # a live verdict of this detector over the same fields (the verdict is a function of both)
        con.execute("INSERT INTO vgot SELECT k.doc_id, k.tenant_id, k.fields_sha256, p.field, p.pattern, p.label "
                    "FROM vkeys k JOIN (SELECT fields_sha256, any_value(field) AS field, any_value(pattern) AS pattern, "
                    " any_value(label) AS label FROM prior.injection_verdicts WHERE detector = ? "
                    " GROUP BY fields_sha256) p ON p.fields_sha256 = k.fields_sha256", [det])
    reused = con.execute("SELECT count(*) FROM vgot").fetchone()[0]
    scanned = 0
    for a, b in ranges:
        rows = con.execute(f"SELECT {cols} FROM objects WHERE doc_id BETWEEN $a AND $b AND doc_id NOT IN "
                           "(SELECT doc_id FROM vgot WHERE doc_id BETWEEN $a AND $b) ORDER BY doc_id",
                           {"a": a, "b": b}).fetchall()
        if not rows:
            continue
        scanned += len(rows)
        batch = [_fields(r, accept) for r in rows]
        # this process's memo first (the same content loaded again: a test suite, a reload
        # after --full); what is left is scanned here, or by the pool when it is worth it
        hits = ia.scan_many(batch, (lambda todo: _pool_scan(pool, todo, spool) if len(todo) >= POOL_MIN
                                    else scan_batch(todo)) if pool is not None and spool else None)
        con.execute("INSERT INTO vgot SELECT unnest(from_json(?, '[\"INTEGER\"]')), "
                    "unnest(from_json(?, '[\"VARCHAR\"]')), unnest(from_json(?, '[\"VARCHAR\"]')), "
                    "unnest(from_json(?, '[\"VARCHAR\"]')), unnest(from_json(?, '[\"VARCHAR\"]')), "
                    "unnest(from_json(?, '[\"VARCHAR\"]'))",
                    [json_list(r[0] for r in rows), json_list(r[1] for r in rows),
                     json_list(ia.fields_sha256(f) for f in batch), json_list(h and h[0] for h in hits),
                     json_list(h and h[1] for h in hits), json_list(h and h[2] for h in hits)])
    con.execute("INSERT INTO injection_verdicts SELECT doc_id, tenant_id, ?, fields_sha256, field, pattern, label "
                "FROM vgot ORDER BY doc_id", [det])
    con.execute("CREATE INDEX injection_verdicts_doc_id ON injection_verdicts(doc_id)")
    con.execute("DROP TABLE vgot")
    con.execute("DROP TABLE vkeys")
    return {"reused": int(reused), "scanned": int(scanned)}


def info(con) -> dict[str, Any]:
    """Per detector id: how many verdicts the store holds, and how many are findings."""
    return {d: {"verdicts": n, "findings": f} for d, n, f in con.execute(
        "SELECT detector, count(*), count(field) FROM injection_verdicts GROUP BY detector ORDER BY detector"
    ).fetchall()}
