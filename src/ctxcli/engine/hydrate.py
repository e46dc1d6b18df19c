"""Hydrate: read the candidates that retrieval found from the store, as :class:`Obj` rows
with their source's governance columns — metadata first, content only for the candidates
that pass the metadata gates — and the version chains that name an expired object's
replacement and find the version that supersedes one.

Candidates are read by doc id alone (the store's ``object_metadata`` / ``object_content``), as
point reads. The statements do not filter by tenant: the doc ids come from retrieval statements that do,
and every row read here is checked again by the tenant gate before anything is used.
"""

from __future__ import annotations

from typing import Any

import orjson

from ..models.manifest import clearance_rank
from .gates import Obj

# A version row: (object_id, supersedes, source_version, valid_from_us, valid_to_us,
# required_scopes, allowed_purposes, source_id, observed_us).
Version = tuple


def row_to_obj(r: tuple) -> Obj:
    """A row of object columns (the store's ``object_metadata`` order), source columns and family."""
    return Obj(
        doc_id=r[0], object_id=r[1], tenant_id=r[2], source_id=r[3], source_version=r[4], object_type=r[5],
        subject_id=r[6], title=r[7], content=r[8], locator=r[9], valid_from_us=r[10], valid_to_us=r[11],
        observed_us=r[12], required_scopes=list(r[13] or []), allowed_purposes=list(r[14] or []),
        supports=list(r[15] or []), facts=orjson.loads(r[16]) if r[16] else {}, keys=list(r[17] or []),
        content_hash=r[18], dedup_hash=r[19], supersedes=r[20], tokens=r[21], section=r[22], doc_ref=r[23],
        trust_level=r[24], classification=r[25], max_age_s=r[26],
        redaction=orjson.loads(r[27]) if r[27] else None, owner_team=r[28], family=r[29])


class Hydrator:
    """Reads objects for one build; caches the sources table and the version chains read so far."""

    def __init__(self, con, tenant: str) -> None:
        self.con = con
        self.tenant = tenant
        self.sources = {r[0]: tuple(r[1:]) for r in con.source_governance()}
        # fields an authoritative source's manifest accepts unscanned (injection.accept_fields)
        accept = con.meta().get("injection_accept")
        self.injection_accept: dict[str, tuple[str, ...]] = (
            {k: tuple(v) for k, v in orjson.loads(accept).items()} if accept else {})
        self.families: dict[int, list[Version]] = {}

    def metadata(self, doc_ids: list[int]) -> dict[int, Obj]:
        """Every object of ``doc_ids`` without its content (``content`` is None), and the
        version chains of their families."""
        if not doc_ids:
            return {}
        objs = {r[0]: row_to_obj(tuple(r[:24]) + self.sources[r[3]] + (r[24],))
                for r in self.con.object_metadata(doc_ids)}
        if self.injection_accept:
            for o in objs.values():
                o.injection_accept = self.injection_accept.get(o.source_id, ())
        self._read_versions(sorted({o.family for o in objs.values() if o.family is not None} - set(self.families)))
        return objs

    def fill_content(self, objs: dict[int, Obj], doc_ids: list[int]) -> None:
        """Read the content of ``doc_ids`` into their objects, with the injection verdict the
        load stored for each (``Obj.injection_verdict``; the gate checks it is still valid)."""
        if not doc_ids:
            return
        for d, text, det, digest, fld, pattern, label in self.con.object_content(doc_ids):
            o = objs[d]
            o.content = text
            if det is not None:
                o.injection_verdict = (det, digest, None if fld is None else (fld, pattern, label))

    def _read_versions(self, fams: list[int]) -> None:
        if not fams:
            return
        for r in self.con.versions(self.tenant, fams):
            self.families.setdefault(r[0], []).append(r[1:])


def _valid_at(vf: int | None, vt: int | None, t: int) -> bool:
    return (vf is None or vf <= t) and (vt is None or vt > t)


def _visible(m: Version, purpose: str, scopes: frozenset[str], clearance: str, sources: dict[str, tuple]) -> bool:
    """Whether the subject may see version ``m`` (its scopes, purposes and its source's classification)."""
    rs, ap, sid = m[5], m[6], m[7]
    # sources[sid][1] is the source's classification (the store's source_governance)
    return not (set(rs or []) - scopes) and purpose in (ap or []) and sid in sources \
        and clearance_rank(sources[sid][1]) <= clearance_rank(clearance)


def _later(members: list[Version], o: Obj) -> list[tuple[int, Version]]:
    """(depth, version) of every version that replaces ``o`` directly or along its chains, nearest
    first. An object may be replaced by more than one version (a branch): each is followed."""
    kids: dict[str, list[Version]] = {}
    for m in sorted(members):
        if m[1] is not None:
            kids.setdefault(m[1], []).append(m)
    out, seen, frontier, depth = [], {o.object_id}, [o.object_id], 0
    while frontier:
        depth += 1
        nxt = []
        for cur in frontier:
            for m in kids.get(cur, ()):
                if m[0] not in seen:
                    seen.add(m[0])
                    out.append((depth, m))
                    nxt.append(m[0])
        frontier = nxt
    return out


def _newest(depth: int, m: Version) -> tuple:
    """Which of several versions in force is named: the one later in its chain, then the one
    valid from later, then the larger object id."""
    return depth, m[3] is not None, m[3] or 0, m[0]


def find_replacement(members: list[Version], o: Obj, purpose: str, as_of_us: int,
                     scopes: frozenset[str], *, clearance: str, sources: dict[str, tuple],
                     known_at_us: int | None = None) -> dict[str, Any] | None:
    """The visible version valid at as_of along the supersession chains, if any: forward (what
    replaced an expired object: the nearest in force and observed by ``known_at_us`` when given,
    across every branch, never past a version the subject may not see) or backward (what a
    not-yet-valid one will replace)."""
    forward = o.valid_to_us is not None and o.valid_to_us <= as_of_us
    if forward:
        hidden: set[str] = set()
        found: list[tuple[int, Version]] = []
        for depth, m in _later(members, o):
            if m[1] in hidden or not _visible(m, purpose, scopes, clearance, sources):
                hidden.add(m[0])
            elif _valid_at(m[3], m[4], as_of_us) and (known_at_us is None or m[8] <= known_at_us) \
                    and (not found or found[0][0] == depth):
                found.append((depth, m))
        if not found:
            return None
        m = max(found, key=lambda f: _newest(*f))[1]
        return {"object_id": m[0], "version": m[2]}
    by_id = {m[0]: m for m in members}
    cur = o.supersedes
    for _ in range(50):
        if cur is None:
            return None
        m = by_id.get(cur)
        if m is None:
            return None
        if not _visible(m, purpose, scopes, clearance, sources):
            return None
        oid, sup, ver, vf, vt = m[:5]
        if _valid_at(vf, vt, as_of_us):
            return {"object_id": oid, "version": ver}
        cur = sup
    return None


def find_successor(members: list[Version], o: Obj, purpose: str, as_of_us: int, known_at_us: int | None,
                   scopes: frozenset[str], *, clearance: str,
                   sources: dict[str, tuple]) -> tuple[bool, dict[str, Any] | None]:
    """Whether a later version that supersedes ``o`` (directly or along its chains, every branch)
    is valid at as_of and known at known_at — whatever ``o``'s own ``valid_to`` says — and the
    newest such version (``{"object_id", "version"}``) when the subject may see it, else None."""
    now = [(d, m) for d, m in _later(members, o)
           if _valid_at(m[3], m[4], as_of_us) and (known_at_us is None or m[8] <= known_at_us)]
    if not now:
        return False, None
    last = max(now, key=lambda f: _newest(*f))[1]
    return True, ({"object_id": last[0], "version": last[2]}
                  if _visible(last, purpose, scopes, clearance, sources) else None)
