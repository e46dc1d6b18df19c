"""The vectors table: one unit vector per object, made once at load by the pinned model —
only when something asks for it (:func:`requested`: ``ctx load --vectors``, or a playbook's
``vectors: true``); otherwise the table stays empty and no model is loaded.

Objects of sources reused by an incremental load, and the unchanged objects of changed sources,
keep the vectors the live store holds for them (renumbered like their rows, see load/reuse.py) when that store's vectors were made by the
same weights (sha256 in meta); every other object is embedded here, in doc id order, in
batches. A text's vector depends on nothing but its text and the weights, so an incremental
load gives the same table as a full load.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from ..embed.model import DIM, Model

BATCH = 512


def requested(playbooks_dir: Path, root: Path, flag: bool = False) -> str | None:
    """What asks this load for vectors, as a user would name it (``ctx load --vectors``, or the
    first playbook file under ``playbooks_dir`` with ``vectors: true``), or None."""
    if flag:
        return "ctx load --vectors"
    if not playbooks_dir.is_dir():
        return None
    from .parsers.common import rel

    for p in sorted(x for x in playbooks_dir.iterdir() if x.suffix in (".yaml", ".yml")):
        disp = rel(p, root)
        if asks(p, disp):
            return f"{disp} (vectors: true)"
    return None


def asks(playbook: Path, display: str | None = None) -> bool:
    """Whether a playbook file says ``vectors: true`` (its other fields are checked elsewhere)."""
    from ..util.yamlio import read_yaml_marked

    data = read_yaml_marked(playbook, display=display or str(playbook)).data
    return isinstance(data, dict) and data.get("vectors") is True


def embed_text(title: str | None, content: str | None) -> str:
    """What an object's vector is made from: its title and its content."""
    return "\n".join(t for t in (title, content) if t)


def meta_rows(model: Model) -> dict[str, str]:
    ident = model.identity()
    return {"embedding_model": ident["model"], "embedding_version": ident["version"],
            "embedding_weights_sha256": ident["weights_sha256"], "embedding_dim": str(ident["dim"])}


def write_vectors(con, model: Model, prior=None, progress=None, made: str | None = None) -> dict[str, Any]:
    """Fill ``vectors`` for every object in ``objects`` (final doc ids, tombstoned ones gone).
    With ``prior`` (load/reuse.Prior, attached as ``prior``), the objects of ``prior_docs`` (the
    reused sources' objects and the changed sources' unchanged ones, load/reuse.copy_rows) keep
    their vectors when the live store's were made by the same weights. ``made`` is an
    NDJSON file of the vectors the load's workers made while the rows streamed (load/derive.py,
    the same model and text; objects tombstoned since are skipped). Returns counts."""
    con.execute(f"CREATE TEMP TABLE vec_new(doc_id INTEGER, vec FLOAT[{DIM}])")
    copied = 0
    if prior is not None and _attached(con) and _has_prior_docs(con):
        row = con.execute("SELECT value FROM prior.meta WHERE key = 'embedding_weights_sha256'").fetchone()
        if row is not None and row[0] == model.weights_sha256:
            # prior_docs (load/reuse.copy_rows): every reused object and kept row, old -> new doc id
            con.execute("INSERT INTO vec_new SELECT d.doc_id, v.vec FROM prior.vectors v "
                        "JOIN prior_docs d ON d.old_doc = v.doc_id WHERE d.doc_id IN (SELECT doc_id FROM objects)")
            copied = con.execute("SELECT count(*) FROM vec_new").fetchone()[0]
    streamed = 0
    if made is not None and os.path.getsize(made):
        con.execute(f"INSERT INTO vec_new SELECT doc_id, vec FROM read_json(?, format='newline_delimited', "
                    f"columns={{'doc_id': 'INTEGER', 'vec': 'FLOAT[{DIM}]'}}) "
                    "WHERE doc_id IN (SELECT doc_id FROM objects) AND doc_id NOT IN (SELECT doc_id FROM vec_new)",
                    [made])
        streamed = con.execute("SELECT count(*) FROM vec_new").fetchone()[0] - copied
    todo = [r[0] for r in con.execute(
        "SELECT doc_id FROM objects WHERE doc_id NOT IN (SELECT doc_id FROM vec_new) ORDER BY doc_id").fetchall()]
    embedded = 0
    import orjson

    from ..util.masking import mask, patterns

    # a masked source's objects are embedded from their masked text, as load/derive.py does
    masks = {sid: patterns(orjson.loads(pol)) for sid, pol in con.execute(
        "SELECT source_id, redaction FROM sources WHERE redaction IS NOT NULL").fetchall()}

    def shown(sid: str, t: str | None) -> str | None:
        return mask(t, masks[sid]) if t and sid in masks else t

    # New vectors go through an NDJSON file (orjson writes each float32 value's shortest exact
    # repr; read_json reads it back bit for bit): binding lists of floats as parameters costs
    # ~30 ms per vector, the file ~0.1 ms.
    tmpdir = con.execute("SELECT current_setting('temp_directory')").fetchone()[0] or None
    fd, path = tempfile.mkstemp(prefix="vectors-", suffix=".ndjson", dir=tmpdir if tmpdir and os.path.isdir(tmpdir)
                                else None)
    try:
        with os.fdopen(fd, "wb") as fh:
            for i in range(0, len(todo), BATCH):
                lo, hi = todo[i], todo[min(i + BATCH, len(todo)) - 1]
                rows = con.execute("SELECT doc_id, title, content, source_id FROM objects WHERE doc_id BETWEEN ? AND ? "
                                   "AND doc_id NOT IN (SELECT doc_id FROM vec_new) ORDER BY doc_id",
                                   [lo, hi]).fetchall()
                vecs = model.embed_many([embed_text(shown(sid, t), shown(sid, c)) for _, t, c, sid in rows])
                for (d, _, _, _), v in zip(rows, vecs):
                    if v is not None:
                        fh.write(orjson.dumps({"doc_id": d, "vec": v}))
                        fh.write(b"\n")
                embedded += len(rows)
                if progress is not None:
                    progress("embed", min(i + BATCH, len(todo)), len(todo))
        if embedded:
            con.execute(f"INSERT INTO vec_new SELECT doc_id, vec FROM read_json(?, format='newline_delimited', "
                        f"columns={{'doc_id': 'INTEGER', 'vec': 'FLOAT[{DIM}]'}})", [path])
    finally:
        os.unlink(path)
    con.execute("INSERT INTO vectors SELECT o.tenant_id, o.doc_id, o.object_type, o.supports, v.vec "
                "FROM vec_new v JOIN objects o ON o.doc_id = v.doc_id ORDER BY o.tenant_id, o.doc_id")
    con.execute("DROP TABLE vec_new")
    for k, v in meta_rows(model).items():
        con.execute("INSERT INTO meta VALUES (?, ?)", [k, v])
    return {"copied": copied, "streamed": streamed, "embedded": embedded}


def _has_prior_docs(con) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'prior_docs' "
                            "AND temporary").fetchone()[0])


def _attached(con) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_databases() WHERE database_name = 'prior'").fetchone()[0])
