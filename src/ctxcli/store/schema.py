"""The store's schema, as ordered, named steps recorded in the store.

ctx builds a new store on every load (reusing unchanged sources' rows only from a store of
the same schema), so an old store is never migrated in place: a reader that finds an older or
newer schema fails with a message telling the user to run ``ctx load``. The steps are still recorded, so a store says
exactly which schema it carries.
"""

from __future__ import annotations

SCHEMA_VERSION = 10
MASK_BITS = 63      # postings.supports: bits 0..62 name one evidence type each, bit 63 the rest

STEPS: list[tuple[str, str]] = [
    ("0001_core", """
CREATE TABLE meta(key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL);
CREATE TABLE schema_steps(step INTEGER, name VARCHAR);
CREATE TABLE sources(
    source_id VARCHAR PRIMARY KEY, tenant_id VARCHAR, source_type VARCHAR, owner_team VARCHAR,
    classification VARCHAR, trust_level VARCHAR, required_scopes VARCHAR[], allowed_purposes VARCHAR[],
    refresh_sla VARCHAR, max_age_s BIGINT, valid_from_field VARCHAR, valid_to_field VARCHAR,
    deletion_mode VARCHAR, parser VARCHAR, parser_version VARCHAR, schema_version INTEGER,
    enabled BOOLEAN, snapshot VARCHAR, redaction VARCHAR, manifest_file VARCHAR, digest VARCHAR,
    n_objects BIGINT, n_sections BIGINT, n_entities BIGINT, n_relations BIGINT, n_tombstones BIGINT,
    n_dropped BIGINT, newest_observed_us BIGINT);
CREATE TABLE objects(
    doc_id INTEGER, object_id VARCHAR, tenant_id VARCHAR, source_id VARCHAR, source_version VARCHAR,
    object_type VARCHAR, subject_id VARCHAR, title VARCHAR, content VARCHAR, locator VARCHAR,
    valid_from_us BIGINT, valid_to_us BIGINT, observed_us BIGINT, required_scopes VARCHAR[],
    allowed_purposes VARCHAR[], supports VARCHAR[], facts VARCHAR, keys VARCHAR[],
    content_hash VARCHAR, dedup_hash VARCHAR, supersedes VARCHAR, tokens INTEGER,
    section VARCHAR, doc_ref VARCHAR, fts_text VARCHAR, family BIGINT);
CREATE TABLE entities(
    entity_id BIGINT, tenant_id VARCHAR, entity_key VARCHAR, entity_type VARCHAR, name VARCHAR,
    aliases VARCHAR[], source_id VARCHAR);
CREATE TABLE relations(
    tenant_id VARCHAR, relation_id VARCHAR, src BIGINT, dst BIGINT, rel_type VARCHAR,
    src_type VARCHAR, dst_type VARCHAR, valid_from_us BIGINT, valid_to_us BIGINT,
    evidence_object_id VARCHAR, source_id VARCHAR, source_version VARCHAR, confidence DOUBLE);
CREATE TABLE tombstones(
    tenant_id VARCHAR, object_id VARCHAR, source_id VARCHAR, deleted_at_us BIGINT, reason VARCHAR);
"""),
    # After the load, relations is rebuilt sorted by (src, rel_type, dst) with three more
    # columns for the authorised graph walk (schema 3): access_id (a relation_access row) and
    # ev_valid_from_us / ev_valid_to_us, the validity of its attesting object (NULL when it
    # names none).
    # Side tables derived from objects after they are inserted (see load/build.py):
    # object_keys(tenant_id, key, kind, doc_id) sorted by key, for exact lookups by subject
    # entity ('s'), business key ('k') and object id ('o'); versions(family, …) holds only the
    # objects that take part in a supersession chain, sorted by family.
    ("0002_lookup_tables", """
CREATE TABLE object_keys(tenant_id VARCHAR, key VARCHAR, kind VARCHAR, doc_id INTEGER);
CREATE TABLE versions(family BIGINT, tenant_id VARCHAR, object_id VARCHAR, supersedes VARCHAR,
    source_version VARCHAR, valid_from_us BIGINT, valid_to_us BIGINT, required_scopes VARCHAR[],
    allowed_purposes VARCHAR[]);
"""),
    # One row per distinct access combination of the relations: the source that registered
    # the relation, the source of the entity it leads to, whether it names an attesting object,
    # and that object's source, scopes and purposes. The walk authorises combinations, not rows.
    ("0003_relation_access", """
CREATE TABLE relation_access(access_id INTEGER, source_id VARCHAR, dst_source_id VARCHAR, attested BOOLEAN,
    ev_source_id VARCHAR, ev_required_scopes VARCHAR[], ev_allowed_purposes VARCHAR[]);
"""),
    # Full text, per tenant (load/build.py builds these in SQL from objects.fts_text):
    # tenants(tenant_no, …) holds each tenant's document count and average length;
    # term_stats(tenant_no, term, termid, df), sorted by (tenant_no, term), the tenant's
    # document frequency of each term (termid is one id per term across tenants);
    # postings(tenant_no, termid, doc_id, tf, dl, supports), sorted by (tenant_no, termid, doc_id),
    # carries everything BM25 needs, so a query reads only its terms' postings of its tenant and
    # joins nothing; supports is a bit mask over support_bits (bit 63 is shared by every type
    # past the 63rd, which the query then checks against objects.supports).
    ("0004_tenant_bm25", """
CREATE TABLE tenants(tenant_no INTEGER, tenant_id VARCHAR, num_docs BIGINT, avgdl DOUBLE);
CREATE TABLE term_stats(tenant_no INTEGER, term VARCHAR, termid INTEGER, df BIGINT);
CREATE TABLE postings(tenant_no INTEGER, termid INTEGER, doc_id INTEGER, tf INTEGER, dl INTEGER,
    supports UBIGINT);
CREATE TABLE support_bits(evidence_type VARCHAR, bit INTEGER);
"""),
    # What an incremental load needs to reuse a source's rows exactly (load/reuse.py), and no
    # content of a deleted object: each source's first doc / entity id and record counts, every
    # tombstone line, the ids of the objects tombstones deleted, and the relations dropped
    # because their evidence was deleted (identifiers only).
    ("0005_incremental_load", """
CREATE TABLE source_loads(source_id VARCHAR, first_doc INTEGER, objects_parsed BIGINT, first_entity BIGINT,
    entities BIGINT);
CREATE TABLE source_tombstones(source_id VARCHAR, seq INTEGER, tenant_id VARCHAR, object_id VARCHAR,
    deleted_at_us BIGINT, reason VARCHAR);
CREATE TABLE removed_objects(tenant_id VARCHAR, object_id VARCHAR, source_id VARCHAR, doc_id INTEGER);
CREATE TABLE dropped_relations(
    tenant_id VARCHAR, relation_id VARCHAR, src BIGINT, dst BIGINT, rel_type VARCHAR,
    src_type VARCHAR, dst_type VARCHAR, valid_from_us BIGINT, valid_to_us BIGINT,
    evidence_object_id VARCHAR, source_id VARCHAR, source_version VARCHAR, confidence DOUBLE);
"""),
    # The vector channel (load/vectors.py, engine/vector.py): one unit vector per object that
    # has text, made by the pinned embedding model named in meta (embedding_model,
    # embedding_version, embedding_weights_sha256), sorted by (tenant_id, doc_id) so the
    # tenant predicate skips other tenants' row groups; the evidence types and object type are
    # copied beside the vector so the exact cosine scan joins nothing.
    ("0006_vectors", """
CREATE TABLE vectors(tenant_id VARCHAR, doc_id INTEGER, object_type VARCHAR, supports VARCHAR[], vec FLOAT[256]);
"""),
    # Masked sources (issue 27): term_stats and postings hold the *masked* text of their objects,
    # for every subject. The terms only the unmasked text has are kept apart, per mask group (a
    # distinct unless_scopes list of the sources' redaction policies), and consulted only for a
    # subject holding one of the group's scopes: raw_term_stats(tenant_no, grp, term, termid, df)
    # and raw_postings(tenant_no, grp, termid, doc_id, tf, dl, supports), dl the masked length.
    ("0007_unmasked_terms", """
CREATE TABLE mask_groups(grp INTEGER, unless_scopes VARCHAR[]);
CREATE TABLE raw_term_stats(tenant_no INTEGER, grp INTEGER, term VARCHAR, termid INTEGER, df BIGINT);
CREATE TABLE raw_postings(tenant_no INTEGER, grp INTEGER, termid INTEGER, doc_id INTEGER, tf INTEGER, dl INTEGER,
    supports UBIGINT);
"""),
    # Entity linking at load (issue 30, load/link.py): a relation made by the linker names its
    # extraction_method ('linker:exact' / 'linker:fuzzy'; NULL for a declared relation) beside
    # its confidence; a mention the linker could not resolve to one entity is kept in
    # unresolved_entities with its candidate entity keys and scores (best first), never linked.
    ("0008_entity_linking", """
ALTER TABLE relations ADD COLUMN extraction_method VARCHAR;
ALTER TABLE dropped_relations ADD COLUMN extraction_method VARCHAR;
CREATE TABLE unresolved_entities(tenant_id VARCHAR, source_id VARCHAR, object_id VARCHAR, subject_id VARCHAR,
    field VARCHAR, mention VARCHAR, method VARCHAR, candidates VARCHAR[], scores DOUBLE[]);
"""),
    # What the DuckDB store's BM25 and graph steps read (issue 36, load/build.py write_term_lists),
    # derived from objects, tenants, term_stats and postings in the same load. doc_classes: one
    # row per distinct (supports, source, required scopes, allowed purposes) of the objects, the
    # access rules and the evidence types of a class decided once per statement; tenant_docs
    # (tenant_no, doc_id, dl, cls, validity), sorted by (tenant_no, doc_id); term_lists: one row
    # per (tenant, term) keyed by tkey = '<tenant_no> <term>' (an index), holding the tenant's
    # document frequency and its postings packed as doc_id << 32 | tf, so a query reads exactly
    # its terms' postings in one index probe; subject_docs (subject_id, tenant, doc id, class,
    # validity), sorted by subject (an index), what the graph step reads about reached entities.
    # PostgreSQL keeps its own layout (term_stats, postings, objects): these are not published.
    ("0009_term_lists", """
CREATE TABLE doc_classes(cls INTEGER, supports VARCHAR[], source_id VARCHAR, required_scopes VARCHAR[],
    allowed_purposes VARCHAR[]);
CREATE TABLE tenant_docs(tenant_no INTEGER, doc_id INTEGER, dl INTEGER, cls INTEGER, valid_from_us BIGINT,
    valid_to_us BIGINT);
CREATE TABLE term_lists(tkey VARCHAR, tenant_no INTEGER, df BIGINT, postings BIGINT[]);
CREATE TABLE subject_docs(subject_id VARCHAR, tenant_id VARCHAR, doc_id INTEGER, cls INTEGER, valid_from_us BIGINT,
    valid_to_us BIGINT);
"""),
    # The injection gate's verdict of every object, computed at load (issue 53 item 4,
    # load/verdicts.py), sorted by doc_id: the detector that computed it (detector: the adapter's
    # detector_id, covering the detector's version, rules digest, both learned layers' weights
    # sha256 and thresholds, and the intent word lists' digest), the sha256 of the exact fields
    # it scanned (fields_sha256), and the verdict: field, pattern and label of the first
    # finding, all NULL for a clean object. The gate uses it only while both match the running
    # detector and the object's fields (engine/injection_adapter.gate_scan); else it scans.
    ("0010_injection_verdicts", """
CREATE TABLE injection_verdicts(doc_id INTEGER, tenant_id VARCHAR, detector VARCHAR, fields_sha256 VARCHAR,
    field VARCHAR, pattern VARCHAR, label VARCHAR);
"""),
]

# The tables of 0009, DuckDB's read side only (store/pg/admin.publish leaves them out).
DUCKDB_ONLY_TABLES = ("doc_classes", "tenant_docs", "term_lists", "subject_docs")
