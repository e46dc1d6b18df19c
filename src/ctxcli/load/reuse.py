"""Incremental load: reuse the rows of sources whose digest is unchanged from the live store.

A source is reused when the live store was built by this builder and schema and records the
same digest for it (the digest covers its manifest and every file of its snapshot). Its rows
are not parsed, validated, tokenised or counted again: its entities, objects, term
frequencies, relations and tombstone lines are copied from the live store into the staging
store, with entity and document ids renumbered exactly as a full load numbers them (sources
in manifest order, records in file order). Everything that spans sources — tombstones,
dropped relations, supersession families, lookup tables, per-tenant BM25 statistics and the
postings — is rebuilt from the combined rows, so the result is the store a full load gives.

Within a source whose digest changed, each object whose title, content and keys are those of
the live store's object of the same tenant and id (:func:`row_key`), under the same redaction
policy, keeps what was derived from them — token count, dedup hash, shadow text, its terms and
unmasked-only terms, and its vector — instead of being tokenised and embedded again: only
the records that changed are derived (``kept_objects`` rows, load/build.py). The per-source
added / changed / removed counts compare the new objects with the live store's (:func:`deltas`).

When that cannot be guaranteed from what the store holds, the load falls back to a full load
(``Fallback``): a reused source's record collides with a changed source's (the full load
reports which line), an object of a reused source deleted by a tombstone is no longer
deleted (its content was never kept), or a reused relation's entity or evidence is gone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class Fallback(Exception):
    """The incremental load cannot reproduce a full load; run a full one."""


@dataclass
class PriorSource:
    first_doc: int
    objects: list[tuple[str, str, int, str | None]]         # (tenant, object id, old doc id, supersedes)
    removed: set[tuple[str, str]]                             # its objects a tombstone deleted
    first_entity: int
    entities: list[tuple[str, str, str, str, list[str]]]      # (tenant, key, type, name, aliases), in id order
    tombstones: list[dict[str, Any]]


@dataclass
class Prior:
    path: Path
    sources: dict[str, PriorSource] = field(default_factory=dict)
    store_digest: str = ""
    summaries: list[tuple] = field(default_factory=list)     # the sources table's counts, in load order
    # changed sources under an unchanged redaction policy: (tenant, object id) -> (doc id, row_key;
    # None for a source read by units, whose row keys are read when needed)
    rows: dict[str, dict[tuple[str, str], tuple[int, bytes | None]]] = field(default_factory=dict)
    # the live store's sync file (load/sync.py): its entries that match the store, per source,
    # and for the changed sources among them, what their units can copy
    sync: dict[str, dict] = field(default_factory=dict)
    units: dict[str, Any] = field(default_factory=dict)      # source -> sync.PriorUnits


# What load/derive.py derives an object's values from, besides its source's redaction policy.
DERIVED = ("tokens", "fts_text", "dedup_hash")


def row_key(title: str | None, content: str, keys: list[str]) -> bytes:
    """The digest of what an object's derived values (:data:`DERIVED`, its terms and vector)
    are made from: equal keys give equal derived values under one builder and policy."""
    import hashlib

    import orjson

    return hashlib.sha256(orjson.dumps([title, content, list(keys)])).digest()


def read_prior(db: Path, digests: dict[str, str], builder: str, schema: int,
               policies: dict[str, str | None] | None = None) -> Prior | None:
    """What the live store at ``db`` holds for the sources whose digest is unchanged, and the
    row keys of the changed ones whose redaction policy (``policies``: source -> the sources
    table's ``redaction`` text) is the same — and, where the live store's sync file
    (load/sync.py) records their units, what those units can copy; None when there is no
    usable store (missing, another schema or builder, unreadable)."""
    if not db.is_file() or Path(str(db) + ".wal").exists():
        return None             # no store, or a killed writer's log: its rows are not trusted
    import duckdb

    try:
        con = duckdb.connect(str(db), read_only=True, config={"threads": "1"})
    except duckdb.InterruptException:    # Ctrl-C: never taken for an unreadable prior store
        raise KeyboardInterrupt from None
    except duckdb.Error:
        return None
    try:
        meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("schema_version") != str(schema) or meta.get("builder_version") != builder:
            return None
        old = dict(con.execute("SELECT source_id, digest FROM sources WHERE enabled").fetchall())
        same = sorted(s for s, d in digests.items() if old.get(s) == d)
        prior = Prior(db, store_digest=meta.get("store_digest", ""))
        prior.summaries = con.execute(
            "SELECT s.source_id, s.enabled, s.n_objects, s.n_sections, s.n_entities, s.n_relations, s.n_tombstones, "
            "s.n_dropped, s.digest FROM sources s JOIN source_loads l ON l.source_id = s.source_id "
            "ORDER BY l.first_entity, l.first_doc, s.source_id").fetchall()
        if policies is not None:
            from . import sync

            prior.sync = sync.read(db, {s: (d, f) for s, d, f in con.execute(
                "SELECT s.source_id, s.digest, l.first_doc FROM sources s "
                "JOIN source_loads l ON l.source_id = s.source_id WHERE s.enabled").fetchall()})
            pols = dict(con.execute("SELECT source_id, redaction FROM sources WHERE enabled").fetchall())
            for sid in sorted(s for s in digests if s in old and old[s] != digests[s]):
                if sid not in policies or pols.get(sid) != policies[sid]:
                    continue
                rows: dict[tuple[str, str], tuple[int, bytes | None]] = {}
                entry = prior.sync.get(sid)
                # (a unit's digest covers the source's context: a changed manifest or rule matches none)
                units = sync.PriorUnits(entry["first_doc"], [tuple(u) for u in entry["units"]]) \
                    if entry and "units" in entry else None
                # read by units, most objects are copied whole: the row key of a parsed one is
                # read when it is needed (None here; load/build.py _resolve_pending)
                text = "title, content, keys" if units is None else "NULL, NULL, NULL"
                cur = con.execute(f"SELECT tenant_id, object_id, doc_id, {text}, supersedes "
                                  "FROM objects WHERE source_id = ?", [sid])
                while chunk := cur.fetchmany(4096):
                    for t, o, d, ti, c, k, sup in chunk:
                        rows[(t, o)] = (d, row_key(ti, c, k) if units is None else None)
                        if units is not None:
                            units.docs[d] = (t, o, sup)
                prior.rows[sid] = rows
                if units is not None:
                    prior.units[sid] = units
        if not same:
            return prior
        loads = {r[0]: r[1:] for r in con.execute(
            "SELECT source_id, first_doc, objects_parsed, first_entity FROM source_loads").fetchall()}
        for sid in same:
            if sid not in loads:
                continue
            first_doc, parsed, first_ent = loads[sid]
            objs = con.execute(
                "SELECT tenant_id, object_id, doc_id, supersedes FROM objects WHERE source_id = ? "
                "UNION ALL SELECT tenant_id, object_id, doc_id, NULL FROM removed_objects WHERE source_id = ? "
                "ORDER BY doc_id", [sid, sid]).fetchall()
            if len(objs) != parsed or (objs and (objs[0][2] != first_doc or objs[-1][2] != first_doc + parsed - 1)):
                continue
            removed = {(t, o) for t, o in con.execute(
                "SELECT tenant_id, object_id FROM removed_objects WHERE source_id = ?", [sid]).fetchall()}
            ents = con.execute("SELECT tenant_id, entity_key, entity_type, name, aliases FROM entities "
                               "WHERE source_id = ? ORDER BY entity_id", [sid]).fetchall()
            tombs = [dict(zip(("tenant_id", "object_id", "source_id", "deleted_at_us", "reason"), r))
                     for r in con.execute("SELECT tenant_id, object_id, source_id, deleted_at_us, reason "
                                          "FROM source_tombstones WHERE source_id = ? ORDER BY seq", [sid]).fetchall()]
            prior.sources[sid] = PriorSource(first_doc, objs, removed, first_ent, ents, tombs)
        return prior
    except duckdb.InterruptException:    # Ctrl-C: never taken for an unreadable prior store
        raise KeyboardInterrupt from None
    except duckdb.Error:
        return None
    finally:
        con.close()


def attach(con, prior: Prior) -> None:
    """The live store, read-only, as ``prior`` in the staging connection."""
    path = str(prior.path).replace("'", "''")
    con.execute(f"ATTACH '{path}' AS prior (READ_ONLY)")


def copy_rows(con, prior: Prior, reused: dict[str, tuple[int, int]], removed: set[tuple[str, str]],
              per: dict[str, dict[str, int]], obj_cols: tuple[str, ...] = ()) -> None:
    """Copy the reused sources' rows, the derived values of the changed sources' kept
    objects (``kept_objects``, columns ``obj_cols`` but :data:`DERIVED`, plus ``old_doc``) and
    the whole rows of their unchanged units' objects (``same_objects``: old doc -> new doc),
    from the live store (attached read-only as ``prior``) into the staging store. ``reused``
    maps a source to its (new first doc id, new first entity id). Relations are renumbered
    through entity keys and split into kept and dropped by the load's tombstones; checks that
    a full load makes on them raise Fallback. Leaves ``prior_docs`` (old doc id -> new doc id
    of every object whose terms and vector are copied) for load/vectors.py."""
    kept = con.execute("SELECT count(*) FROM kept_objects").fetchone()[0]
    same = con.execute("SELECT count(*) FROM same_objects").fetchone()[0]
    if not reused and not kept and not same:
        return
    con.execute("CREATE TEMP TABLE reuse_src(source_id VARCHAR, doc_off BIGINT, ent_off BIGINT)")
    from ..util.canon import json_list

    con.execute("INSERT INTO reuse_src SELECT unnest(from_json(?, '[\"VARCHAR\"]')), "
                "unnest(from_json(?, '[\"BIGINT\"]')), unnest(from_json(?, '[\"BIGINT\"]'))",
                [json_list(reused), json_list(reused[s][0] - prior.sources[s].first_doc for s in reused),
                 json_list(reused[s][1] - prior.sources[s].first_entity for s in reused)])
    con.execute("INSERT INTO entities SELECT e.* REPLACE (e.entity_id + r.ent_off AS entity_id) "
                "FROM prior.entities e JOIN reuse_src r ON r.source_id = e.source_id")
    con.execute("INSERT INTO objects SELECT o.* REPLACE ((o.doc_id + r.doc_off)::INTEGER AS doc_id, "
                "NULL::BIGINT AS family) FROM prior.objects o JOIN reuse_src r ON r.source_id = o.source_id")
    if kept:        # the new row, with the values derived from its unchanged text
        cols = ", ".join(f"p.{c}" if c in DERIVED else f"k.{c}" for c in obj_cols)
        con.execute(f"INSERT INTO objects ({', '.join(obj_cols)}) SELECT {cols} FROM kept_objects k "
                    "JOIN prior.objects p ON p.doc_id = k.old_doc")
    if same:        # an unchanged unit of a changed source (load/sync.py): the live row, renumbered
        con.execute("INSERT INTO objects SELECT p.* REPLACE (s.doc_id AS doc_id, NULL::BIGINT AS family, "
                    "coalesce(s.locator, p.locator) AS locator) "
                    "FROM same_objects s JOIN prior.objects p ON p.doc_id = s.old_doc")
    # term frequencies of the reused documents, from the postings (tenant-local term ids -> terms)
    con.execute("CREATE TEMP TABLE prior_docs AS SELECT o.doc_id AS old_doc, (o.doc_id + r.doc_off)::INTEGER AS doc_id "
                "FROM prior.objects o JOIN reuse_src r ON r.source_id = o.source_id "
                "UNION ALL SELECT old_doc, doc_id FROM kept_objects UNION ALL SELECT old_doc, doc_id FROM same_objects")
    con.execute("INSERT INTO doc_len SELECT d.doc_id, CASE WHEN o.fts_text = '' THEN 0 "
                "ELSE len(string_split(o.fts_text, ' ')) END FROM prior.objects o "
                "JOIN prior_docs d ON d.old_doc = o.doc_id")
    # as term ids (integers): the live store's term ids are global (one per term), so the few
    # million distinct terms are joined once, not the ~100 postings of every reused document
    # (at 1M objects, strings per posting ran the load out of its memory; load/build.py _FULLTEXT)
    con.execute("INSERT INTO doc_rows SELECT d.doc_id, p.termid, p.tf FROM prior.postings p "
                "JOIN prior_docs d ON d.old_doc = p.doc_id")
    con.execute("INSERT INTO old_terms SELECT DISTINCT termid, term FROM prior.term_stats")
    # and their unmasked-only terms (a masked source; schema 0007), regrouped by source later
    con.execute("INSERT INTO raw_rows SELECT d.doc_id, ts.term, p.tf FROM prior.raw_postings p "
                "JOIN prior_docs d ON d.old_doc = p.doc_id JOIN prior.raw_term_stats ts "
                "ON ts.tenant_no = p.tenant_no AND ts.grp = p.grp AND ts.termid = p.termid")
    # relations (kept and dropped ones) with their ends renumbered by entity key
    con.execute("CREATE TEMP TABLE emap AS SELECT o.entity_id AS old_id, n.entity_id AS new_id, n.entity_type "
                "FROM prior.entities o JOIN entities n ON n.tenant_id = o.tenant_id AND n.entity_key = o.entity_key")
    cols = "tenant_id, relation_id, src, dst, rel_type, src_type, dst_type, valid_from_us, valid_to_us, " \
           "evidence_object_id, source_id, source_version, confidence, extraction_method"
    con.execute("CREATE TEMP TABLE rrel AS SELECT r.* REPLACE (a.new_id AS src, b.new_id AS dst, "
                "a.entity_type AS src_type, b.entity_type AS dst_type) FROM ("
                f" SELECT {cols} FROM prior.relations UNION ALL SELECT {cols} FROM prior.dropped_relations) r "
                "JOIN reuse_src s ON s.source_id = r.source_id "
                "LEFT JOIN emap a ON a.old_id = r.src LEFT JOIN emap b ON b.old_id = r.dst")
    con.execute("CREATE TEMP TABLE gone(tenant_id VARCHAR, object_id VARCHAR)")
    if removed:
        ks = sorted(removed)
        con.execute("INSERT INTO gone SELECT unnest(from_json(?, '[\"VARCHAR\"]')), "
                    "unnest(from_json(?, '[\"VARCHAR\"]'))", [json_list(t for t, _ in ks), json_list(o for _, o in ks)])
    bad = con.execute(
        "SELECT count(*) FROM rrel r WHERE r.src IS NULL OR r.dst IS NULL OR (r.evidence_object_id IS NOT NULL "
        "AND NOT EXISTS (SELECT 1 FROM objects o WHERE o.tenant_id = r.tenant_id AND o.object_id = r.evidence_object_id) "
        "AND NOT EXISTS (SELECT 1 FROM gone g WHERE g.tenant_id = r.tenant_id AND g.object_id = r.evidence_object_id))"
    ).fetchone()[0]
    if bad:
        raise Fallback("a reused relation lost an entity or its evidence")
    _split_dropped(con, "rrel", "gone", cols, per)
    dup = con.execute("SELECT count(*) FROM (SELECT tenant_id, relation_id FROM ("
                      " SELECT tenant_id, relation_id FROM relations UNION ALL "
                      " SELECT tenant_id, relation_id FROM dropped_relations) GROUP BY ALL HAVING count(*) > 1)"
                      ).fetchone()[0]
    if dup:
        raise Fallback("a relation id of a reused source is used again")
    for t in ("rrel", "emap", "gone", "reuse_src"):
        con.execute(f"DROP TABLE {t}")


def _split_dropped(con, rel: str, gone: str, cols: str, per: dict[str, dict[str, int]]) -> None:
    """Move the copied relations of temporary table ``rel`` into ``relations``, or into
    ``dropped_relations`` when this load's tombstones (table ``gone``) deleted their attesting
    object, and count both per source."""
    con.execute(f"ALTER TABLE {rel} ADD COLUMN dropped BOOLEAN")
    con.execute(f"UPDATE {rel} SET dropped = EXISTS (SELECT 1 FROM {gone} g WHERE g.tenant_id = {rel}.tenant_id "
                f"AND g.object_id = {rel}.evidence_object_id)")
    con.execute(f"INSERT INTO relations SELECT {cols} FROM {rel} WHERE NOT dropped")
    con.execute(f"INSERT INTO dropped_relations SELECT {cols} FROM {rel} WHERE dropped")
    for sid, kept, dropped in con.execute(
            "SELECT source_id, count(*) FILTER (WHERE NOT dropped), count(*) FILTER (WHERE dropped) "
            f"FROM {rel} GROUP BY source_id").fetchall():
        per[sid]["relations"] += kept
        per[sid]["dropped"] += dropped


def copy_unit_relations(con, sources: list[str], removed: set[tuple[str, str]], per: dict[str, dict[str, int]]) -> None:
    """The relations of ``sources`` (whose parser copies them: Parser.copies_relations) attested
    by the objects of their copied units (``same_objects``), copied from the live store with
    their ends renumbered by entity key, kept or dropped by this load's tombstones (``removed``).
    An end that is no entity any more, or a relation id used again, raises Fallback: the full
    load reports it (or skips it, ``on_dangling: skip``)."""
    from ..util.canon import json_list

    cols = "tenant_id, relation_id, src, dst, rel_type, src_type, dst_type, valid_from_us, valid_to_us, " \
           "evidence_object_id, source_id, source_version, confidence, extraction_method"
    con.execute("CREATE TEMP TABLE uobj AS SELECT p.tenant_id, p.object_id, p.source_id FROM same_objects s "
                "JOIN prior.objects p ON p.doc_id = s.old_doc "
                "WHERE p.source_id IN (SELECT unnest(from_json(?, '[\"VARCHAR\"]')))", [json_list(sources)])
    con.execute("CREATE TEMP TABLE urel AS SELECT r.* REPLACE (a.entity_id AS src, b.entity_id AS dst, "
                "a.entity_type AS src_type, b.entity_type AS dst_type) FROM ("
                f" SELECT {cols} FROM prior.relations UNION ALL SELECT {cols} FROM prior.dropped_relations) r "
                "JOIN uobj o ON o.source_id = r.source_id AND o.tenant_id = r.tenant_id "
                " AND o.object_id = r.evidence_object_id "
                "LEFT JOIN prior.entities pa ON pa.entity_id = r.src LEFT JOIN prior.entities pb ON pb.entity_id = r.dst "
                "LEFT JOIN entities a ON a.tenant_id = pa.tenant_id AND a.entity_key = pa.entity_key "
                "LEFT JOIN entities b ON b.tenant_id = pb.tenant_id AND b.entity_key = pb.entity_key")
    if con.execute("SELECT count(*) FROM urel WHERE src IS NULL OR dst IS NULL").fetchone()[0]:
        raise Fallback("a copied row's relation lost an entity")
    ks = sorted(removed)
    con.execute("CREATE TEMP TABLE ugone AS SELECT unnest(from_json(?, '[\"VARCHAR\"]')) AS tenant_id, "
                "unnest(from_json(?, '[\"VARCHAR\"]')) AS object_id",
                [json_list(t for t, _ in ks), json_list(o for _, o in ks)])
    _split_dropped(con, "urel", "ugone", cols, per)
    for t in ("urel", "uobj", "ugone"):
        con.execute(f"DROP TABLE {t}")
    if con.execute("SELECT count(*) FROM (SELECT tenant_id, relation_id FROM ("
                   " SELECT tenant_id, relation_id FROM relations UNION ALL "
                   " SELECT tenant_id, relation_id FROM dropped_relations) GROUP BY ALL HAVING count(*) > 1)"
                   ).fetchone()[0]:
        raise Fallback("a copied row's relation id is used again")


def deltas(con, obj_cols: tuple[str, ...], moved: dict[str, str] | None = None) -> dict[str, tuple[int, int, int]]:
    """Per source: (added, changed, removed) objects of the staging store's ``objects``
    against the live store's (attached as ``prior``), by tenant and object id; changed means
    any column but the doc id and family differs — but for the sources in ``moved`` (source ->
    the pattern of the part of a locator that only says where a record sits: Parser.position),
    a locator that differs only in that part: the record moved (a row before it came or went)."""
    from ..util.canon import json_list

    diff = " OR ".join(f"n.{c} IS DISTINCT FROM p.{c}" for c in obj_cols if c not in ("doc_id", "family", "locator"))
    loc = "n.locator IS DISTINCT FROM p.locator"
    params: list = []
    for pat in sorted(set((moved or {}).values())):     # a parser's own constant, not user input
        q = "'" + pat.replace("'", "''") + "'"
        loc += (" AND NOT (n.source_id IN (SELECT unnest(from_json(?, '[\"VARCHAR\"]'))) AND "
                f"regexp_replace(n.locator, {q}, '') = regexp_replace(p.locator, {q}, ''))")
        params.append(json_list(sorted(s for s, p in moved.items() if p == pat)))
    out: dict[str, list[int]] = {}
    for sid, a, c, r in con.execute(
            "SELECT coalesce(n.source_id, p.source_id), count(*) FILTER (WHERE p.object_id IS NULL), "
            f"count(*) FILTER (WHERE n.object_id IS NOT NULL AND p.object_id IS NOT NULL AND ({diff} OR ({loc}))), "
            "count(*) FILTER (WHERE n.object_id IS NULL) FROM objects n FULL JOIN prior.objects p "
            "ON p.source_id = n.source_id AND p.tenant_id = n.tenant_id AND p.object_id = n.object_id "
            "GROUP BY ALL", params).fetchall():
        out[sid] = (a, c, r)
    return out

