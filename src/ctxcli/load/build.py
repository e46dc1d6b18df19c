"""Build a store from manifests and snapshots, atomically.

The new store is written to a staging file beside the live one, checkpointed and closed,
then moved onto the live path with ``os.replace``. Readers that opened the old file keep
it until they reopen; a failed or killed load leaves the live store as it was.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import orjson

from .. import BUILDER_VERSION
from ..errors import InputError, StoreError, UsageError
from ..store.db import fts_extension_path
from ..store.schema import SCHEMA_VERSION, STEPS
from ..tokens import count_batch
from ..util.canon import canonical_bytes, sha256_hex
from . import fts_text
from .parse import LoadedSource, parse_source, read_manifests, relation_tenant

Progress = Callable[[str, int, int], None]


@dataclass
class SourceSummary:
    source_id: str
    enabled: bool
    objects: int
    sections: int
    entities: int
    relations: int
    tombstones: int
    dropped: int
    digest: str


@dataclass
class LoadResult:
    db: str
    store_digest: str
    sources: list[SourceSummary]
    objects: int


def _noop(stage: str, done: int, total: int) -> None:
    pass


def _write_ndjson(rows: list[dict[str, Any]], cols: list[str], fh) -> None:
    for r in rows:
        fh.write(orjson.dumps({c: r.get(c) for c in cols}))
        fh.write(b"\n")


OBJ_COLS = {
    "doc_id": "INTEGER", "object_id": "VARCHAR", "tenant_id": "VARCHAR", "source_id": "VARCHAR",
    "source_version": "VARCHAR", "object_type": "VARCHAR", "subject_id": "VARCHAR", "title": "VARCHAR",
    "content": "VARCHAR", "locator": "VARCHAR", "valid_from_us": "BIGINT", "valid_to_us": "BIGINT",
    "observed_us": "BIGINT", "required_scopes": "VARCHAR[]", "allowed_purposes": "VARCHAR[]",
    "supports": "VARCHAR[]", "facts": "VARCHAR", "keys": "VARCHAR[]", "content_hash": "VARCHAR",
    "dedup_hash": "VARCHAR", "supersedes": "VARCHAR", "tokens": "INTEGER", "section": "VARCHAR",
    "doc_ref": "VARCHAR", "fts_text": "VARCHAR", "family": "BIGINT",
}
ENT_COLS = {"entity_id": "BIGINT", "tenant_id": "VARCHAR", "entity_key": "VARCHAR", "entity_type": "VARCHAR",
            "name": "VARCHAR", "aliases": "VARCHAR[]", "source_id": "VARCHAR"}
REL_COLS = {"tenant_id": "VARCHAR", "relation_id": "VARCHAR", "src": "BIGINT", "dst": "BIGINT",
            "rel_type": "VARCHAR", "src_type": "VARCHAR", "dst_type": "VARCHAR", "valid_from_us": "BIGINT",
            "valid_to_us": "BIGINT", "evidence_object_id": "VARCHAR", "source_id": "VARCHAR",
            "source_version": "VARCHAR", "confidence": "DOUBLE"}
TOMB_COLS = {"tenant_id": "VARCHAR", "object_id": "VARCHAR", "source_id": "VARCHAR", "deleted_at_us": "BIGINT",
             "reason": "VARCHAR"}


def _bulk_insert(con, table: str, cols: dict[str, str], rows: list[dict[str, Any]], tmpdir: str) -> None:
    if not rows:
        return
    path = os.path.join(tmpdir, f"{table}.ndjson")
    with open(path, "wb") as fh:
        _write_ndjson(rows, list(cols), fh)
    spec = "{" + ", ".join(f"'{c}': '{t}'" for c, t in cols.items()) + "}"
    con.execute(f"INSERT INTO {table} SELECT {', '.join(cols)} FROM read_json(?, format='newline_delimited', "
                f"columns={spec}, maximum_object_size=67108864)", [path])
    os.unlink(path)


def collect(manifests_dir: Path, root: Path, sources_dir: Path | None,
            progress: Progress = _noop) -> tuple[list[LoadedSource], str]:
    manifests = read_manifests(manifests_dir, root)
    loaded: list[LoadedSource] = []
    digests: list[tuple[str, str]] = []
    for i, (m, disp, mbytes) in enumerate(manifests):
        progress("read", i, len(manifests))
        if not m.enabled:
            digests.append((m.source_id, "disabled:" + sha256_hex(mbytes)))
            loaded.append(LoadedSource(manifest=m, manifest_file=disp, digest="disabled:" + sha256_hex(mbytes)))
            continue
        ls = parse_source(m, disp, mbytes, root, sources_dir)
        loaded.append(ls)
        digests.append((m.source_id, ls.digest))
    store_digest = "sha256:" + sha256_hex(canonical_bytes(
        {"schema": SCHEMA_VERSION, "builder": BUILDER_VERSION, "sources": sorted(digests)}))
    return loaded, store_digest


def build_store(manifests_dir: Path, db_path: Path, *, root: Path | None = None, sources_dir: Path | None = None,
                progress: Progress = _noop) -> LoadResult:
    manifests_dir = Path(manifests_dir)
    root = Path(root) if root is not None else manifests_dir.resolve().parent
    loaded, store_digest = collect(manifests_dir, root, sources_dir, progress)

    # ---- cross-source checks -------------------------------------------------------------
    objects: list[dict[str, Any]] = []
    where: dict[tuple[str, str], tuple[str, int | None]] = {}
    for ls in loaded:
        for o in ls.objects:
            k = (o["tenant_id"], o["object_id"])
            if k in where:
                f, ln = where[k]
                raise InputError(f"duplicate object id {o['object_id']!r} (first at {f}:{ln})",
                                 file=o["_file"], line=o["_line"], field="object_id")
            where[k] = (o["_file"], o["_line"])
            objects.append(o)
    tomb_keys: set[tuple[str, str]] = set()
    tombstones: list[dict[str, Any]] = []
    for ls in loaded:
        for t in ls.tombstones:
            k = (t["tenant_id"], t["object_id"])
            if k not in tomb_keys:
                tomb_keys.add(k)
                tombstones.append(t)
    removed = {k for k in tomb_keys if k in where}
    objects = [o for o in objects if (o["tenant_id"], o["object_id"]) not in removed]
    known_objects = set(where)

    entities: list[dict[str, Any]] = []
    ent_index: dict[tuple[str, str], dict[str, Any]] = {}
    for ls in loaded:
        for e in ls.entities:
            k = (e["tenant_id"], e["entity_key"])
            if k in ent_index:
                prev = ent_index[k]
                raise InputError(f"duplicate entity key {e['entity_key']!r} (first at {prev['_file']}:{prev['_line']})",
                                 file=e["_file"], line=e["_line"], field="entity_key")
            e["entity_id"] = len(entities) + 1
            ent_index[k] = e
            entities.append(e)
    relations: list[dict[str, Any]] = []
    dropped: dict[str, int] = {}
    rel_ids: set[tuple[str, str]] = set()
    for ls in loaded:
        for rec, disp, line in ls.relations:
            tenant = relation_tenant(ls.manifest, rec)
            for fld, key in (("from", rec.from_), ("to", rec.to)):
                if (tenant, key) not in ent_index:
                    raise InputError(f"relation {rec.relation_id} points to unknown entity {key!r}",
                                     file=disp, line=line, field=fld)
            if (tenant, rec.relation_id) in rel_ids:
                raise InputError(f"duplicate relation id {rec.relation_id!r}", file=disp, line=line,
                                 field="relation_id")
            rel_ids.add((tenant, rec.relation_id))
            ev = rec.evidence_object_id
            if ev is not None and (tenant, ev) not in known_objects:
                raise InputError(f"relation {rec.relation_id} cites unknown evidence object {ev!r}",
                                 file=disp, line=line, field="evidence_object_id")
            if ev is not None and (tenant, ev) in removed:
                dropped[ls.manifest.source_id] = dropped.get(ls.manifest.source_id, 0) + 1
                continue
            s, d = ent_index[(tenant, rec.from_)], ent_index[(tenant, rec.to)]
            relations.append({
                "tenant_id": tenant, "relation_id": rec.relation_id, "src": s["entity_id"], "dst": d["entity_id"],
                "rel_type": rec.type, "src_type": s["entity_type"], "dst_type": d["entity_type"],
                "valid_from_us": _us(rec.valid_from), "valid_to_us": _us(rec.valid_to),
                "evidence_object_id": ev, "source_id": ls.manifest.source_id,
                "source_version": rec.source_version, "confidence": rec.confidence})

    _assign_families(objects)

    # ---- derived columns: doc ids, token counts, full-text shadow --------------------------
    total = len(objects)
    batch = 2048
    for start in range(0, total, batch):
        chunk = objects[start:start + batch]
        counts = count_batch([o["content"] for o in chunk])
        for j, (o, n) in enumerate(zip(chunk, counts)):
            o["doc_id"] = start + j + 1
            o["tokens"] = n
            o["fts_text"] = fts_text.shadow_text(o["title"], o["content"], " ".join(o["keys"]))
        progress("index", min(start + batch, total), total)

    # ---- write the staging store and publish -------------------------------------------------
    db_path = Path(db_path)
    if db_path.is_dir():
        raise UsageError(f"--db {db_path} is a folder, not a store file")
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--db {db_path}: cannot create its folder ({e.strerror})") from None
    fd, staging = tempfile.mkstemp(prefix=f".{db_path.name}.", suffix=".staging", dir=db_path.parent)
    os.close(fd)
    os.unlink(staging)
    import duckdb

    try:
        with tempfile.TemporaryDirectory(prefix="ctx-load-", dir=db_path.parent) as tmpdir:
            con = duckdb.connect(staging, config={"threads": "2"})
            try:
                con.execute(f"LOAD '{fts_extension_path()}'")
                con.execute("BEGIN")
                for i, (name, ddl) in enumerate(STEPS, 1):
                    for stmt in ddl.split(";"):
                        if stmt.strip():
                            con.execute(stmt)
                    con.execute("INSERT INTO schema_steps VALUES (?, ?)", [i, name])
                _bulk_insert(con, "objects", OBJ_COLS, objects, tmpdir)
                _bulk_insert(con, "entities", ENT_COLS, entities, tmpdir)
                rel_sorted = sorted(relations, key=lambda r: (r["src"], r["rel_type"], r["dst"], r["relation_id"]))
                _bulk_insert(con, "relations", REL_COLS, rel_sorted, tmpdir)
                _bulk_insert(con, "tombstones", TOMB_COLS,
                             sorted(tombstones, key=lambda t: (t["tenant_id"], t["object_id"])), tmpdir)
                con.execute("INSERT INTO object_keys SELECT tenant_id, key, kind, doc_id FROM ("
                            " SELECT tenant_id, subject_id AS key, 's' AS kind, doc_id FROM objects"
                            " WHERE subject_id IS NOT NULL"
                            " UNION ALL SELECT tenant_id, unnest(keys) AS key, 'k' AS kind, doc_id FROM objects"
                            " UNION ALL SELECT tenant_id, object_id AS key, 'o' AS kind, doc_id FROM objects)"
                            " ORDER BY key, tenant_id, doc_id")
                con.execute("INSERT INTO versions SELECT family, tenant_id, object_id, supersedes, source_version, "
                            "valid_from_us, valid_to_us, required_scopes, allowed_purposes FROM objects "
                            "WHERE family IS NOT NULL ORDER BY family, object_id")
                summaries = _write_sources(con, loaded, objects, entities, relations, tombstones, removed, dropped)
                meta = {"schema_version": str(SCHEMA_VERSION), "store_digest": store_digest,
                        "builder_version": BUILDER_VERSION, "duckdb_version": duckdb.__version__,
                        "encoding": "cl100k_base", "objects": str(total)}
                for k, v in meta.items():
                    con.execute("INSERT INTO meta VALUES (?, ?)", [k, v])
                con.execute("COMMIT")
                progress("fts", 0, 1)
                if total:
                    con.execute("PRAGMA create_fts_index('objects', 'doc_id', 'fts_text', stemmer='none', "
                                "stopwords='none', ignore='[^\\p{L}\\p{N}_]+', strip_accents=0, lower=1)")
                    con.execute("CREATE TABLE postings AS SELECT t.termid, d.name AS doc_id, count(*)::INTEGER AS tf, "
                                "any_value(d.len)::INTEGER AS dl "
                                "FROM fts_main_objects.terms t JOIN fts_main_objects.docs d ON d.docid = t.docid "
                                "GROUP BY ALL ORDER BY t.termid, d.name")
                else:
                    con.execute("CREATE SCHEMA fts_main_objects")
                    con.execute("CREATE TABLE fts_main_objects.dict(termid BIGINT, term VARCHAR, df BIGINT)")
                    con.execute("CREATE TABLE fts_main_objects.docs(docid BIGINT, name INTEGER, len BIGINT)")
                    con.execute("CREATE TABLE fts_main_objects.stats(num_docs BIGINT, avgdl DOUBLE)")
                    con.execute("CREATE TABLE postings(termid BIGINT, doc_id INTEGER, tf INTEGER, dl INTEGER)")
                progress("fts", 1, 1)
                con.execute("CHECKPOINT")
            finally:
                con.close()
        with open(staging, "rb") as fh:
            os.fsync(fh.fileno())
        # A WAL left beside the live path by a killed writer would be replayed onto the new store.
        stale_wal = Path(str(db_path) + ".wal")
        if stale_wal.exists():
            stale_wal.unlink()
        os.replace(staging, db_path)
        try:
            dfd = os.open(db_path.parent, os.O_RDONLY)
            os.fsync(dfd)
            os.close(dfd)
        except OSError:
            pass
    except duckdb.Error as e:
        raise StoreError(f"could not build the store: {str(e).splitlines()[0]}") from None
    finally:
        for p in (staging, staging + ".wal"):
            if os.path.exists(p):
                os.unlink(p)
    return LoadResult(db=str(db_path), store_digest=store_digest, sources=summaries, objects=total)


def _assign_families(objects: list[dict[str, Any]]) -> None:
    """Number each supersession chain (objects linked by ``supersedes`` within a tenant)."""
    index = {(o["tenant_id"], o["object_id"]): i for i, o in enumerate(objects)}
    parent = list(range(len(objects)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    linked: set[int] = set()
    for i, o in enumerate(objects):
        j = index.get((o["tenant_id"], o["supersedes"])) if o["supersedes"] else None
        if j is not None:
            linked.update((i, j))
            a, b = find(i), find(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    for i, o in enumerate(objects):
        o["family"] = find(i) + 1 if i in linked else None


def _us(dt) -> int | None:
    from .parse import _us as us

    return us(dt)


def _write_sources(con, loaded, objects, entities, relations, tombstones, removed, dropped) -> list[SourceSummary]:
    per: dict[str, dict[str, int]] = {}
    for o in objects:
        d = per.setdefault(o["source_id"], {"objects": 0, "newest": -(1 << 62)})
        d["objects"] += 1
        d["newest"] = max(d["newest"], o["observed_us"])
    out: list[SourceSummary] = []
    for ls in loaded:
        m = ls.manifest
        sid = m.source_id
        n_obj = per.get(sid, {}).get("objects", 0)
        newest = per.get(sid, {}).get("newest")
        n_sec = sum(1 for o in objects if o["source_id"] == sid and o["section"] is not None)
        n_ent = sum(1 for e in entities if e["source_id"] == sid)
        n_rel = sum(1 for r in relations if r["source_id"] == sid)
        n_tomb = len(ls.tombstones)
        from ..util.timeutil import parse_duration

        max_age = int(parse_duration(m.freshness.max_age).total_seconds()) if m.freshness else None
        con.execute("INSERT INTO sources VALUES (" + ", ".join(["?"] * 28) + ")", [
            sid, m.tenant_id, m.source_type, m.owner_team, m.classification.value, m.trust_level.value,
            sorted(m.required_scopes), sorted(m.allowed_purposes), m.refresh_sla, max_age,
            m.valid_time.from_field, m.valid_time.to_field, m.deletion_mode.value, m.parser.value,
            m.parser_version, m.schema_version, m.enabled, m.snapshot,
            canonical_bytes(m.redaction.model_dump(mode="json")).decode() if m.redaction else None,
            ls.manifest_file, ls.digest, n_obj, n_sec, n_ent, n_rel, n_tomb, dropped.get(sid, 0),
            newest if n_obj else None])
        out.append(SourceSummary(source_id=sid, enabled=m.enabled, objects=n_obj, sections=n_sec,
                                 entities=n_ent, relations=n_rel, tombstones=n_tomb,
                                 dropped=dropped.get(sid, 0), digest=ls.digest))
    return out
