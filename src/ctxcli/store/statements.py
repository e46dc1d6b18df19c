"""Statements both backends run, each written once.

A :class:`Pair` holds one statement's DuckDB form (``$name`` / ``?`` parameters, IN lists of
bound names, ``list_contains``) and its PostgreSQL form (``%(name)s`` / ``%s`` parameters,
``= ANY(array)``, byte-order collation ``COLLATE "C"`` where DuckDB's default order is
already bytewise). Each is written once: :func:`one` builds both from one text through the
backends' :class:`~.access.Dialect` (what the two write differently), :func:`both` when the text
is the same but for its parameters. The backends (duckdb_store.py, pg/reader.py) run
``PAIR.duckdb`` and ``PAIR.postgres``; the statements shaped by one engine's planner (the DuckDB
index probes, BM25, the walk, the vector scan) stay beside the code that builds them, their
predicates from store/access.py, and the parity tests of tests/test_postgres.py hold both to the
same rows (docs/modules.md).
"""

from __future__ import annotations

import re
from typing import Callable, NamedTuple

from .access import DUCKDB, POSTGRES, C, Dialect, entity_readable, links_at  # noqa: F401 (C: pg/reader's statements)


class Pair(NamedTuple):
    duckdb: str
    postgres: str


def both(sql: str) -> Pair:
    """One statement both dialects read alike, written once: its ``$name`` parameters (DuckDB)
    become ``%(name)s`` (PostgreSQL); the text holds no other ``$`` or ``%``."""
    return Pair(sql, re.sub(r"\$(\w+)", r"%(\1)s", sql))


def one(build: Callable[[Dialect], str]) -> Pair:
    """One statement written once as ``build(dialect)``, its ``$name`` parameters in each
    backend's form."""
    return Pair(*(d.params(build(d)) for d in (DUCKDB, POSTGRES)))


# ------------------------------------------------------------------------------ the source registry
SOURCE_DIGESTS = one(lambda d: f"SELECT source_id, digest FROM sources ORDER BY {d.by('source_id')}")
TENANT_SOURCES = one(lambda d: (
    "SELECT source_id, enabled, required_scopes, allowed_purposes, classification FROM sources "
    f"WHERE tenant_id = {d.q} OR tenant_id IS NULL ORDER BY {d.by('source_id')}"))
# (the callers index the rows by source id: their order does not reach an output)
SOURCE_ACCESS = one(lambda d: (
    f"SELECT source_id, required_scopes, allowed_purposes, classification FROM sources ORDER BY {d.by('source_id')}"))
SOURCE_GOVERNANCE = one(lambda d: (
    "SELECT source_id, trust_level, classification, max_age_s, redaction, owner_team FROM sources "
    f"ORDER BY {d.by('source_id')}"))
SOURCE_POLICY = one(lambda d: (
    f"SELECT required_scopes, allowed_purposes, classification, redaction FROM sources WHERE source_id = {d.q}"))
DISABLED_SOURCES = one(lambda d: f"SELECT source_id FROM sources WHERE NOT enabled ORDER BY {d.by('source_id')}")


def _source_freshness(tenant: bool) -> Pair:
    return one(lambda d: (
        "SELECT s.source_id, s.refresh_sla, (SELECT max(o.observed_us) FROM objects o WHERE o.source_id = s.source_id "
        "AND o.observed_us <= $asof" + (" AND o.tenant_id = $tenant" if tenant else "") + ") FROM sources s"
        + (" WHERE s.tenant_id = $tenant OR s.tenant_id IS NULL" if tenant else "") + f" ORDER BY {d.by('s.source_id')}"))


# Each source (of the tenant and the global ones, or every source) with its refresh SLA and its
# newest observation at or before $asof (of the tenant's objects), by (tenant given):
# engine/freshness.py.
SOURCE_FRESHNESS = {t: _source_freshness(t) for t in (False, True)}


def source_freshness_params(tenant: str | None, as_of_us: int) -> dict:
    """The parameters of ``SOURCE_FRESHNESS[tenant is not None]``."""
    return {"asof": as_of_us} if tenant is None else {"asof": as_of_us, "tenant": tenant}


# ------------------------------------------------------------------------------ entities
def _entity_names(keys: bool, types: bool) -> Pair:
    return one(lambda d: (
        "SELECT entity_key, entity_type, name, aliases, tenant_id, source_id FROM entities WHERE " + entity_readable(d)
        + (" AND " + d.member("entity_key", d.arr("keys", "text")) if keys else "")
        + (" AND " + d.member("entity_type", d.arr("types", "text")) if types else "")
        + f" ORDER BY {d.by('entity_key')}"))


# Names and aliases of the tenant's entities of readable sources (alias resolution,
# engine/resolve.py), by (keys given, types given): narrowed to ``$keys`` / ``$types``.
ENTITY_NAMES = {(k, t): _entity_names(k, t) for k in (False, True) for t in (False, True)}


def entity_names_params(tenant: str, readable, keys, types) -> dict:
    """The parameters of ``ENTITY_NAMES[keys is not None, types is not None]``."""
    params = {"tenant": tenant, "readable": sorted(readable)}
    if keys is not None:
        params["keys"] = sorted(keys)
    if types is not None:
        params["types"] = sorted(types)
    return params


# ------------------------------------------------------------------------------ objects
_OBJ_COLS = """o.doc_id, o.object_id, o.tenant_id, o.source_id, o.source_version, o.object_type, o.subject_id,
       o.title, NULL::{text} AS content, o.locator, o.valid_from_us, o.valid_to_us, o.observed_us, o.required_scopes,
       o.allowed_purposes, o.supports, o.facts, o.keys, o.content_hash, o.dedup_hash, o.supersedes, o.tokens,
       o.section, o.doc_ref"""
# Every column but the content (hydration reads it apart, for the items it keeps).
OBJECT_METADATA = one(lambda d: (
    "SELECT " + _OBJ_COLS.format(text=d.t("text")) + ", o.family FROM objects o "
    f"WHERE {d.in_ids('o.doc_id', 'ids', 'integer')} ORDER BY o.doc_id"))
# Each object's content and the injection verdict stored for it at load (NULL detector: none).
OBJECT_CONTENT = one(lambda d: (
    "SELECT o.doc_id, o.content, v.detector, v.fields_sha256, v.field, v.pattern, v.label FROM objects o "
    f"LEFT JOIN (SELECT * FROM injection_verdicts WHERE {d.in_ids('doc_id', 'ids', 'integer')}) v ON v.doc_id = o.doc_id "
    f"WHERE {d.in_ids('o.doc_id', 'ids', 'integer')} ORDER BY o.doc_id"))
# Each version's source (for its classification) comes from the objects row of the same family.
VERSIONS = one(lambda d: f"""
SELECT v.family, v.object_id, v.supersedes, v.source_version, v.valid_from_us, v.valid_to_us, v.required_scopes,
       v.allowed_purposes, o.source_id, o.observed_us
FROM versions v JOIN objects o ON o.family = v.family AND o.object_id = v.object_id AND o.tenant_id = v.tenant_id
WHERE v.tenant_id = $tenant AND {d.in_ids('v.family', 'fams', 'bigint')} AND {d.in_ids('o.family', 'fams', 'bigint')}
ORDER BY v.family, {d.by('v.object_id')}
""")
OBJECT_TEXTS = one(lambda d: (
    f"SELECT object_id, content, content_hash FROM objects WHERE tenant_id = {d.q} AND "
    f"{d.member('object_id', d.arr_q('text'))} ORDER BY {d.by('object_id')}, doc_id"))
AUDIT_INDEX = both(
    "SELECT doc_id, tenant_id, object_id, locator, content_hash, content FROM objects ORDER BY doc_id")

# ------------------------------------------------------------------------------ postmortem lookups
TOMBSTONE = one(lambda d: (
    f"SELECT source_id, deleted_at_us, reason FROM tombstones WHERE tenant_id = {d.q} AND "
    f"object_id = {d.q} ORDER BY deleted_at_us, {d.by('source_id')} LIMIT 1"))
OBJECT_EXISTS = one(lambda d: f"SELECT 1 FROM objects WHERE tenant_id = {d.q} AND object_id = {d.q} LIMIT 1")
OBJECT_SUMMARY = one(lambda d: (
    "SELECT doc_id, source_id, object_type, subject_id, supports, keys, required_scopes, allowed_purposes, "
    "(SELECT classification FROM sources s WHERE s.source_id = objects.source_id) "
    f"FROM objects WHERE tenant_id = {d.q} AND object_id = {d.q} ORDER BY doc_id LIMIT 1"))
# Any tenant's objects: the eval's store facts (evaluate/facts.py) pick the pack's own row.
# Every entity with the objects linked to it (objects of its tenant whose subject_id is its
# key; NULL object_id when none): what tool results and tool-call arguments are matched against.
# The sources of the tenant that declare each of some entity keys, whether or not the subject
# may read them: a time window whose entity only an unreadable source declares says so in its
# gap (engine/retrieve.py; the source is never named there, only what would admit it).
ENTITY_DECLARERS = one(lambda d: (
    "SELECT entity_key, source_id, tenant_id FROM entities "
    f"WHERE tenant_id = $tenant AND {d.member('entity_key', d.arr('keys', 'text'))} "
    f"GROUP BY entity_key, source_id, tenant_id ORDER BY {d.by('entity_key')}, {d.by('source_id')}"))
# The edges of the tenant from some walked entities (by id) that the subject may not walk
# (access id not in $access_ok) but that link at as_of as known at $known (the walk's validity
# rules, duckdb_store._EDGES_SQL), with the key of the entity each leads to: a graph walk that
# found nothing says when its next hop is an entity only withheld sources declare
# (engine/retrieve.hop_withheld; the key never reaches an output).
WITHHELD_EDGES = one(lambda d: (
    "SELECT r.src, r.rel_type, r.dst_type, r.access_id, r.confidence, r.extraction_method, d.entity_key, "
    "r.tenant_id FROM relations r JOIN entities d ON d.entity_id = r.dst "
    f"WHERE r.tenant_id = $tenant AND d.tenant_id = $tenant AND {d.member('r.src', d.arr('nodes', 'bigint'))} "
    f"AND NOT ({d.member('r.access_id', d.arr('access_ok', 'integer'))}) "
    f"AND {links_at('r.')} "
    f"ORDER BY r.src, {d.by('r.rel_type')}, {d.by('d.entity_key')}, {d.by('r.relation_id')}"))
ENTITY_LINKS = both("""
SELECT e.tenant_id, e.entity_key, e.name, e.aliases, o.object_id
FROM entities e LEFT JOIN objects o ON o.tenant_id = e.tenant_id AND o.subject_id = e.entity_key
ORDER BY e.tenant_id, e.entity_key, o.object_id""")

OBJECT_FACTS = one(lambda d: f"""
SELECT o.object_id, o.tenant_id, o.source_id, o.valid_from_us, o.valid_to_us, o.observed_us, o.required_scopes,
       o.allowed_purposes, o.content_hash, o.dedup_hash, o.title, o.content, o.facts,
       s.trust_level, s.max_age_s, s.required_scopes, s.allowed_purposes, s.classification
FROM objects o LEFT JOIN sources s ON s.source_id = o.source_id
WHERE {d.member('o.object_id', d.arr('ids', 'text'))}
ORDER BY {d.by('o.object_id')}, {d.by('o.tenant_id')}, o.doc_id
""")
# The hashes of objects named by id (any tenant): the erasure gate's duplicate links (ledger/erasure.py).
OBJECT_HASHES = one(lambda d: (
    f"SELECT tenant_id, object_id, content_hash, dedup_hash FROM objects WHERE {d.in_ids('object_id', 'ids', 'text')} "
    f"ORDER BY {d.by('tenant_id')}, {d.by('object_id')}, {d.by('content_hash')}"))
# Erasure (ledger/erasure.py): does a store generation hold an erased object, by id (of one
# tenant, or of any when $t is NULL) or by content (its hashes, keyed by the caller)?
HOLDS_OBJECT = both("SELECT 1 FROM objects WHERE object_id = $o AND ($t::text IS NULL OR tenant_id = $t) LIMIT 1")
CONTENT_HASHES = both("SELECT DISTINCT tenant_id, content_hash, dedup_hash FROM objects")
TOMBSTONED_IDS = one(lambda d: (
    f"SELECT DISTINCT object_id FROM tombstones WHERE tenant_id = $t AND {d.member('object_id', d.arr('ids', 'text'))} "
    f"ORDER BY {d.by('object_id')}"))
MASK_GROUPS = both("SELECT grp, unless_scopes FROM mask_groups ORDER BY grp")
