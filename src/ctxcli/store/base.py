"""The store interface: everything ctx reads from a store, as small typed calls.

Nothing above ``store/`` executes SQL or knows which backend it has: the engine, postmortem,
eval and ``ctx ask`` call these methods on the object :func:`ctxcli.store.open_store` returns.
Two implementations live side by side: :mod:`.duckdb_store` (the embedded file, the default)
and :mod:`.pg` (a shared PostgreSQL server). Both return the same rows for the same
store: tuples in the documented column order, lists for array columns, explicit orderings.

Tenant isolation and the access rules are part of every candidate query: the ``tenant`` and
``readable`` arguments are predicates inside the statement, before its limit, never a filter
applied afterwards (store/access.py).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol, Sequence

from .access import Readable


class Found(NamedTuple):
    """What a candidate query returns: the readable hits, in rank order, and a count of the
    matches the access rules withheld, per access combination of the subject's own tenant:
    (query key, source id, required scopes, allowed purposes, count) — never a doc id."""

    hits: list[tuple]
    withheld: list[tuple]


class Store(Protocol):
    """A read-only view of one store generation (one snapshot) for one investigation."""

    backend: str        # "duckdb" or "postgresql"
    address: str        # where it is, with any password masked: safe to print

    # -- opening, describing -------------------------------------------------------------------
    def close(self) -> None: ...
    def errors(self) -> AbstractContextManager[None]:
        """Turn a backend failure while reading into StoreUnusableError (exit 3)."""
    def meta(self) -> dict[str, str]:
        """The store's meta table (schema_version, store_digest, …)."""
    def describe(self) -> dict[str, Any]:
        """What ``pack.store`` records about the backend beside the digest (empty for DuckDB)."""

    # -- source registry -----------------------------------------------------------------------
    def source_digests(self) -> dict[str, str]: ...
    def source_rows(self, cols: Sequence[str]) -> list[tuple]:
        """``cols`` of every source, ordered by source id."""
    def tenant_sources(self, tenant: str) -> list[tuple]:
        """(source_id, enabled, required_scopes, allowed_purposes, classification) of the tenant's
        and per-record-tenant sources, by source id."""
    def source_access(self) -> list[tuple]:
        """(source_id, required_scopes, allowed_purposes, classification) of every source."""
    def source_governance(self) -> list[tuple]:
        """(source_id, trust_level, classification, max_age_s, redaction, owner_team)."""
    def source_freshness(self, tenant: str | None, as_of_us: int) -> list[tuple]:
        """(source_id, refresh_sla, newest observed_us ≤ as_of of its objects [of tenant])."""
    def source_policy(self, source_id: str) -> tuple | None:
        """(required_scopes, allowed_purposes, classification, redaction) of one source."""
    def disabled_sources(self) -> list[str]: ...

    # -- candidate queries, one per channel ----------------------------------------------------
    def structured(self, queries: list[tuple[str, str, list[str]]], *, seeds: list[str],
                   business_keys: list[str], tenant: str, readable: Readable, as_of_us: int,
                   limit: int) -> Found:
        """hits: (query id, doc id) for each (query id, evidence type, object types), rank order;
        withheld keyed by query id."""
    def bm25(self, queries: list[tuple[str, list[str]]], *, tenant: str, readable: Readable, as_of_us: int,
             limit: int, unmasked: Sequence[int] = ()) -> Found:
        """Exact Okapi BM25 (ctx's postings, the tenant's statistics) per (evidence type,
        terms): hits (query index, doc id, score rounded to 9 places), rank order; withheld
        keyed by query index. The masked text of masked sources is indexed for everyone; the
        unmasked-only terms of the mask groups ``unmasked`` count too (for a subject holding one
        of their unless_scopes)."""
    def mask_groups(self) -> list[tuple[int, list[str]]]:
        """(group, unless_scopes) of every mask group, by group."""
    def window(self, queries: list[tuple[str, str, list[str], dict[str, Any], int]], *, tenant: str,
               readable: Readable | None, as_of_us: int, access_ok: Sequence[int],
               entity_sources: Sequence[str], known_us: int | None = None) -> Found:
        """The time-window channel per (query id, evidence type, object types, window query
        (engine/plan.window_query), limit): hits (query id, doc id, event time µs), nearest to
        the anchor first; withheld keyed by query id. ``access_ok``/``entity_sources``: the
        relations and entity sources the subject may use (as for ``walk``, relations judged as
        there with ``known_us``)."""
    def vector(self, queries: list[tuple[str, list[str], int, list[float]]], *,
               tenant: str, readable: Readable, as_of_us: int) -> Found:
        """Exact cosine top-k per (evidence type, object types, limit, unit query vector) over the
        tenant's vectors: hits (query index, doc id, cosine rounded to 6 places), rank order;
        withheld keyed by query index."""
    def relation_access(self) -> list[tuple]:
        """relation_access rows, by access id."""
    def walk(self, *, steps: list[tuple[str, int, str, str, float, bool]], starts: list[tuple[str, str]],
             seeds: list[str], tenant: str, max_hops: int, as_of_us: int, fanout: int, readable: list[str],
             access_ok: list[int], known_us: int | None = None) -> list[tuple]:
        """(template id, depth, entity path, relation ids, entity key) ordered by template,
        depth, path. An edge (and the object attesting it) links when it begins by the knowledge
        time ``known_us`` (default: as_of) and has not ended by as_of, the question's time. A step (template, step, edge, target type, least confidence, inferred
        allowed) walks only edges of at least that confidence, and no linked (inferred) edge
        when the last is false."""
    def entity_names(self, tenant: str, readable: list[str], *, keys: list[str] | None = None,
                     types: list[str] | None = None) -> list[tuple]:
        """(entity key, entity type, name, aliases) of the tenant's entities registered by a
        ``readable`` source (of ``keys`` / of ``types`` when given), by entity key."""
    def entity_declarers(self, tenant: str, keys: list[str]) -> list[tuple[str, str]]:
        """(entity key, source id) of every source of ``tenant`` that declares one of ``keys``,
        readable or not (a window's gap, engine/retrieve.py), by key and source."""
    def withheld_edges(self, nodes: list[int], *, tenant: str, as_of_us: int, access_ok: list[int],
                       known_us: int | None = None) -> list[tuple]:
        """(source entity id, rel type, target type, access id, confidence, extraction method,
        target entity key) of the tenant's edges from ``nodes`` (entity ids of walk paths) that
        the subject may not walk (access id not in ``access_ok``) but that link at as_of as known
        at ``known_us`` (as :meth:`walk`), by (source, rel type, target key, relation id)."""
    def relations_among(self, keys: list[str], *, rel_types: list[str], tenant: str, as_of_us: int,
                        access_ok: list[int], known_us: int | None = None) -> list[tuple]:
        """(relation id, rel type, from key, to key, evidence object id, confidence) of the
        tenant's relations of ``rel_types`` linking at as_of as known at ``known_us`` (as :meth:`walk`) whose two ends are both in ``keys``
        and that the subject may walk (``access_ok``, as :meth:`walk`), by relation id."""
    def graph_hits(self, keys: list[str], *, tenant: str, readable: Readable, as_of_us: int) -> Found:
        """hits: (entity key, doc id, supports, valid at as_of) of the tenant's readable objects
        about ``keys``, by (key, doc id); withheld: (entity key, supports, source id, required
        scopes, allowed purposes, count)."""

    # -- objects -------------------------------------------------------------------------------
    def object_metadata(self, doc_ids: list[int]) -> list[tuple]:
        """Object columns without content (hydrate.row_to_obj order) and family."""
    def object_content(self, doc_ids: list[int]) -> list[tuple]:
        """(doc_id, content, and the injection verdict stored at load: detector, fields_sha256,
        field, pattern, label; the last five NULL when none is stored)."""
    def versions(self, tenant: str, families: list[int]) -> list[tuple]:
        """(family, object_id, supersedes, source_version, valid_from_us, valid_to_us,
        required_scopes, allowed_purposes, source_id, observed_us) of the tenant's versions."""
    def object_texts(self, tenant: str, object_ids: list[str]) -> list[tuple[str, str, str]]:
        """(object_id, content, content_hash) of the tenant's objects."""
    def audit_index(self) -> list[tuple[int, str, str, str | None, str, str]]:
        """(doc_id, tenant_id, object_id, locator, content_hash, content) of every object of every
        tenant, in doc_id order: what ``ctx audit-call`` matches a recorded request against."""

    # -- postmortem lookups --------------------------------------------------------------------
    def tombstone(self, tenant: str, object_id: str) -> tuple | None:
        """(source_id, deleted_at_us, reason) of the object's first tombstone."""
    def object_exists(self, tenant: str, object_id: str) -> bool: ...
    def object_summary(self, tenant: str, object_id: str) -> tuple | None: ...
    def entity_links(self) -> list[tuple]:
        """(tenant_id, entity_key, name, aliases, object_id) of every entity and each object of its
        tenant whose subject_id is its key (object_id NULL when it has none)."""
    def object_facts(self, object_ids: list[str]) -> list[tuple]:
        """evaluate's store facts of objects (any tenant), by object id, tenant."""
    def object_hashes(self, object_ids: list[str]) -> list[tuple]:
        """(tenant_id, object_id, content_hash, dedup_hash) of the objects named (any tenant)."""
    def tombstoned_ids(self, tenant: str, object_ids: list[str]) -> list[str]: ...
    def holds_object(self, object_id: str, tenant: str | None) -> bool:
        """Whether any object ``object_id`` (of ``tenant``, or of any tenant when None) is stored."""
    def content_hashes(self) -> list[tuple]:
        """(tenant_id, content_hash, dedup_hash) of every object, distinct: erasure matches copies by them."""
