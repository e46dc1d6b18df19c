"""Statements both backends run, each as a pair of its two dialects side by side.

A :class:`Pair` holds one statement's DuckDB form (``$name`` / ``?`` parameters, IN lists of
bound names, ``list_contains``) and its PostgreSQL form (``%(name)s`` / ``%s`` parameters,
``= ANY(array)``, byte-order collation ``COLLATE "C"`` where DuckDB's default order is
already bytewise), so that a change to one shows next to the other in a review. The backends
(duckdb_store.py, pg/reader.py) run ``PAIR.duckdb`` and ``PAIR.postgres``; the statements
shaped by one engine's planner (the DuckDB index probes, BM25, the walk, the time window, the
vector scan) stay beside the code that builds them, their PostgreSQL twins name them, and the
parity tests of tests/test_postgres.py hold both to the same rows (docs/modules.md).

Where the two forms of a pair differ in more than dialect, the comment says why.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .access import links_at, pg

C = 'COLLATE "C"'       # PostgreSQL: order text by bytes, as DuckDB does


class Pair(NamedTuple):
    duckdb: str
    postgres: str


def both(sql: str) -> Pair:
    """One statement both dialects read alike, written once: its ``$name`` parameters (DuckDB)
    become ``%(name)s`` (PostgreSQL); the text holds no other ``$`` or ``%``."""
    return Pair(sql, re.sub(r"\$(\w+)", r"%(\1)s", sql))


# ------------------------------------------------------------------------------ the source registry
SOURCE_DIGESTS = Pair(
    "SELECT source_id, digest FROM sources ORDER BY source_id",
    f"SELECT source_id, digest FROM sources ORDER BY source_id {C}")
TENANT_SOURCES = Pair(
    "SELECT source_id, enabled, required_scopes, allowed_purposes, classification FROM sources "
    "WHERE tenant_id = ? OR tenant_id IS NULL ORDER BY source_id",
    "SELECT source_id, enabled, required_scopes, allowed_purposes, classification FROM sources "
    f"WHERE tenant_id = %s OR tenant_id IS NULL ORDER BY source_id {C}")
# (the callers index the rows by source id: their order does not reach an output)
SOURCE_ACCESS = Pair(
    "SELECT source_id, required_scopes, allowed_purposes, classification FROM sources",
    f"SELECT source_id, required_scopes, allowed_purposes, classification FROM sources ORDER BY source_id {C}")
SOURCE_GOVERNANCE = Pair(
    "SELECT source_id, trust_level, classification, max_age_s, redaction, owner_team FROM sources",
    "SELECT source_id, trust_level, classification, max_age_s, redaction, owner_team FROM sources "
    f"ORDER BY source_id {C}")
SOURCE_POLICY = Pair(
    "SELECT required_scopes, allowed_purposes, classification, redaction FROM sources WHERE source_id = ?",
    "SELECT required_scopes, allowed_purposes, classification, redaction FROM sources WHERE source_id = %s")
DISABLED_SOURCES = Pair(
    "SELECT source_id FROM sources WHERE NOT enabled ORDER BY source_id",
    f"SELECT source_id FROM sources WHERE NOT enabled ORDER BY source_id {C}")

# ------------------------------------------------------------------------------ objects
_OBJ_COLS = """o.doc_id, o.object_id, o.tenant_id, o.source_id, o.source_version, o.object_type, o.subject_id,
       o.title, NULL::{text} AS content, o.locator, o.valid_from_us, o.valid_to_us, o.observed_us, o.required_scopes,
       o.allowed_purposes, o.supports, o.facts, o.keys, o.content_hash, o.dedup_hash, o.supersedes, o.tokens,
       o.section, o.doc_ref"""
# Every column but the content (hydration reads it apart, for the items it keeps).
OBJECT_METADATA = Pair(
    "SELECT " + _OBJ_COLS.format(text="VARCHAR") + ", o.family FROM objects o WHERE o.doc_id IN ({ids})",
    "\nSELECT " + _OBJ_COLS.format(text="text") + ", o.family\n"
    "FROM objects o WHERE o.doc_id = ANY(%(ids)s::integer[]) ORDER BY o.doc_id\n")
# Each object's content and the injection verdict stored for it at load (NULL detector: none).
OBJECT_CONTENT = Pair(
    "SELECT o.doc_id, o.content, v.detector, v.fields_sha256, v.field, v.pattern, v.label FROM objects o "
    "LEFT JOIN (SELECT * FROM injection_verdicts WHERE doc_id IN ({ids})) v ON v.doc_id = o.doc_id "
    "WHERE o.doc_id IN ({ids})",
    "SELECT o.doc_id, o.content, v.detector, v.fields_sha256, v.field, v.pattern, v.label FROM objects o "
    "LEFT JOIN injection_verdicts v ON v.doc_id = o.doc_id WHERE o.doc_id = ANY(%s::integer[]) ORDER BY o.doc_id")
# Each version's source (for its classification) comes from the objects row of the same family.
VERSIONS = Pair("""
SELECT v.family, v.object_id, v.supersedes, v.source_version, v.valid_from_us, v.valid_to_us, v.required_scopes,
       v.allowed_purposes, o.source_id, o.observed_us
FROM versions v JOIN objects o ON o.family = v.family AND o.object_id = v.object_id AND o.tenant_id = v.tenant_id
WHERE v.tenant_id = $tenant AND v.family IN ({fams}) AND o.family IN ({fams}) ORDER BY v.family, v.object_id
""", f"""
SELECT v.family, v.object_id, v.supersedes, v.source_version, v.valid_from_us, v.valid_to_us, v.required_scopes,
       v.allowed_purposes, o.source_id, o.observed_us
FROM versions v JOIN objects o ON o.family = v.family AND o.object_id = v.object_id AND o.tenant_id = v.tenant_id
WHERE v.tenant_id = %(tenant)s AND v.family = ANY(%(fams)s::bigint[]) AND o.family = ANY(%(fams)s::bigint[])
ORDER BY v.family, v.object_id {C}
""")
OBJECT_TEXTS = Pair(
    "SELECT object_id, content, content_hash FROM objects WHERE tenant_id = ? AND "
    "list_contains(?, object_id) ORDER BY object_id",
    "SELECT object_id, content, content_hash FROM objects WHERE tenant_id = %s AND "
    f"object_id = ANY(%s::text[]) ORDER BY object_id {C}, doc_id")
AUDIT_INDEX = Pair(
    "SELECT doc_id, tenant_id, object_id, locator, content_hash, content FROM objects ORDER BY doc_id",
    "SELECT doc_id, tenant_id, object_id, locator, content_hash, content FROM objects ORDER BY doc_id")

# ------------------------------------------------------------------------------ postmortem lookups
TOMBSTONE = Pair(
    "SELECT source_id, deleted_at_us, reason FROM tombstones WHERE tenant_id = ? AND "
    "object_id = ? ORDER BY deleted_at_us LIMIT 1",
    "SELECT source_id, deleted_at_us, reason FROM tombstones WHERE tenant_id = %s AND "
    f"object_id = %s ORDER BY deleted_at_us, source_id {C} LIMIT 1")
OBJECT_EXISTS = Pair(
    "SELECT 1 FROM objects WHERE tenant_id = ? AND object_id = ? LIMIT 1",
    "SELECT 1 FROM objects WHERE tenant_id = %s AND object_id = %s LIMIT 1")
OBJECT_SUMMARY = Pair(
    "SELECT doc_id, source_id, object_type, subject_id, supports, keys, required_scopes, allowed_purposes, "
    "(SELECT classification FROM sources s WHERE s.source_id = objects.source_id) "
    "FROM objects WHERE tenant_id = ? AND object_id = ? LIMIT 1",
    "SELECT doc_id, source_id, object_type, subject_id, supports, keys, required_scopes, allowed_purposes, "
    "(SELECT classification FROM sources s WHERE s.source_id = objects.source_id) "
    "FROM objects WHERE tenant_id = %s AND object_id = %s ORDER BY doc_id LIMIT 1")
# Any tenant's objects: the eval's store facts (evaluate/facts.py) pick the pack's own row.
# Every entity with the objects linked to it (objects of its tenant whose subject_id is its
# key; NULL object_id when none): what tool results and tool-call arguments are matched against.
# The sources of the tenant that declare each of some entity keys, whether or not the subject
# may read them: a time window whose entity only an unreadable source declares says so in its
# gap (engine/retrieve.py; the source is never named there, only what would admit it).
ENTITY_DECLARERS = Pair(
    "SELECT entity_key, source_id, tenant_id FROM entities "
    "WHERE tenant_id = $tenant AND list_contains(CAST($keys AS VARCHAR[]), entity_key) "
    "GROUP BY entity_key, source_id, tenant_id ORDER BY entity_key, source_id",
    "SELECT entity_key, source_id, tenant_id FROM entities "
    "WHERE tenant_id = %(tenant)s AND entity_key = ANY(%(keys)s::text[]) "
    f"GROUP BY entity_key, source_id, tenant_id ORDER BY entity_key {C}, source_id {C}")
# The edges of the tenant from some walked entities (by id) that the subject may not walk
# (access id not in $access_ok) but that link at as_of as known at $known (the walk's validity
# rules, duckdb_store._EDGES_SQL), with the key of the entity each leads to: a graph walk that
# found nothing says when its next hop is an entity only withheld sources declare
# (engine/retrieve.hop_withheld; the key never reaches an output).
WITHHELD_EDGES = Pair(
    "SELECT r.src, r.rel_type, r.dst_type, r.access_id, r.confidence, r.extraction_method, d.entity_key, "
    "r.tenant_id FROM relations r JOIN entities d ON d.entity_id = r.dst "
    "WHERE r.tenant_id = $tenant AND d.tenant_id = $tenant AND list_contains(CAST($nodes AS BIGINT[]), r.src) "
    "AND NOT list_contains(CAST($access_ok AS INTEGER[]), r.access_id) "
    f"AND {links_at('r.')} "
    "ORDER BY r.src, r.rel_type, d.entity_key, r.relation_id",
    "SELECT r.src, r.rel_type, r.dst_type, r.access_id, r.confidence, r.extraction_method, d.entity_key, "
    "r.tenant_id FROM relations r JOIN entities d ON d.entity_id = r.dst "
    "WHERE r.tenant_id = %(tenant)s AND d.tenant_id = %(tenant)s AND r.src = ANY(%(nodes)s::bigint[]) "
    "AND NOT (r.access_id = ANY(%(access_ok)s::integer[])) "
    f"AND {pg(links_at('r.'))} "
    f"ORDER BY r.src, r.rel_type {C}, d.entity_key {C}, r.relation_id {C}")
ENTITY_LINKS = both("""
SELECT e.tenant_id, e.entity_key, e.name, e.aliases, o.object_id
FROM entities e LEFT JOIN objects o ON o.tenant_id = e.tenant_id AND o.subject_id = e.entity_key
ORDER BY e.tenant_id, e.entity_key, o.object_id""")

OBJECT_FACTS = Pair("""
SELECT o.object_id, o.tenant_id, o.source_id, o.valid_from_us, o.valid_to_us, o.observed_us, o.required_scopes,
       o.allowed_purposes, o.content_hash, o.dedup_hash, o.title, o.content, o.facts,
       s.trust_level, s.max_age_s, s.required_scopes, s.allowed_purposes, s.classification
FROM objects o LEFT JOIN sources s ON s.source_id = o.source_id
WHERE list_contains($ids, o.object_id)
ORDER BY o.object_id, o.tenant_id
""", f"""
SELECT o.object_id, o.tenant_id, o.source_id, o.valid_from_us, o.valid_to_us, o.observed_us, o.required_scopes,
       o.allowed_purposes, o.content_hash, o.dedup_hash, o.title, o.content, o.facts,
       s.trust_level, s.max_age_s, s.required_scopes, s.allowed_purposes, s.classification
FROM objects o LEFT JOIN sources s ON s.source_id = o.source_id
WHERE o.object_id = ANY(%(ids)s::text[])
ORDER BY o.object_id {C}, o.tenant_id {C}, o.doc_id
""")
# The hashes of objects named by id (any tenant): the erasure gate's duplicate links (ledger/erasure.py).
OBJECT_HASHES = Pair(
    "SELECT tenant_id, object_id, content_hash, dedup_hash FROM objects WHERE list_contains($ids, object_id) "
    "ORDER BY tenant_id, object_id, content_hash",
    "SELECT tenant_id, object_id, content_hash, dedup_hash FROM objects WHERE object_id = ANY(%(ids)s::text[]) "
    f"ORDER BY tenant_id {C}, object_id {C}, content_hash {C}")
# Erasure (ledger/erasure.py): does a store generation hold an erased object, by id (of one
# tenant, or of any when $t is NULL) or by content (its hashes, keyed by the caller)?
HOLDS_OBJECT = both("SELECT 1 FROM objects WHERE object_id = $o AND ($t::text IS NULL OR tenant_id = $t) LIMIT 1")
CONTENT_HASHES = both("SELECT DISTINCT tenant_id, content_hash, dedup_hash FROM objects")
TOMBSTONED_IDS = Pair(
    "SELECT DISTINCT object_id FROM tombstones WHERE tenant_id = $t AND list_contains($ids, object_id) "
    "ORDER BY object_id",
    "SELECT DISTINCT object_id FROM tombstones WHERE tenant_id = %s AND "
    f"object_id = ANY(%s::text[]) ORDER BY object_id {C}")
MASK_GROUPS = Pair(
    "SELECT grp, unless_scopes FROM mask_groups ORDER BY grp",
    "SELECT grp, unless_scopes FROM mask_groups ORDER BY grp")
