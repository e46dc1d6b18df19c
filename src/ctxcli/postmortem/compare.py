"""Comparing two packs item by item: the engine behind ``ctx diff`` and ``ctx replay``.

Objects are matched across packs by object id; an object withheld in one pack is known there
only by its opaque ref, which is matched to an object id the *other* pack shows (the ref is
``opaque_ref(tenant, object_id, key=store secret)``, so this needs the secret of the store the
packs were built on; without it withheld refs match only each other). Nothing here copies
content, titles or facts of objects: only ids, hashes, gates and reasons.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..util.canon import canonical_bytes, opaque_ref

REQUEST_FIELDS = ["case_id", "tenant_id", "variant", "question", "purpose", "as_of", "known_at", "subject.id",
                  "subject.scopes", "subject.clearance", "budget", "max_rounds", "strategy", "seeds", "business_keys"]
VERSION_FIELDS = ["schema_version", "builder_version", "encoding", "playbook.playbook_id", "playbook.version",
                  "playbook.hash", "store.embedding.model", "store.embedding.version",
                  "store.embedding.weights_sha256", "detector.version", "detector.rules_sha256",
                  "detector.learned.weights_sha256", "detector.learned.threshold",
                  "detector.intent.weights_sha256", "detector.intent.threshold"]
ITEMISED = {"content_hash", "pack_id", "schema_version", "builder_version", "encoding", "request", "playbook",
            "store", "evidence", "omissions", "answer", "missing", "state",
            "erasure"}      # what `ctx erase --apply` removed: replay reports it as "erased on …"


@dataclass
class FieldChange:
    field: str
    a: Any
    b: Any


@dataclass
class SourceChange:
    source_id: str
    change: str                 # changed | added | removed
    a: str | None
    b: str | None


@dataclass
class ObjectState:
    """What one pack did with one object."""

    state: str                  # evidence | omitted | absent | unmatched (see describe)
    gate: str | None = None
    reason: str | None = None
    withheld: bool = False
    evidence_id: str | None = None
    content_hash: str | None = None
    round: int | None = None
    withheld_there: str | None = None   # absent: what that pack withheld of the object's evidence types

    def describe(self) -> str:
        if self.state == "evidence":
            return f"admitted as {self.evidence_id}"
        if self.state == "omitted":
            if self.withheld:
                return f"withheld by {self.gate}"
            return f"rejected by {self.gate} ({self.reason})"
        if self.state == "unmatched":
            # the other pack withheld the object: only the store's secret tells which one it is
            return "unknown (matching a withheld object needs the store's secret: --db)"
        if self.withheld_there:
            return f"not a candidate; withheld for access there: {self.withheld_there}"
        return "not a candidate"


@dataclass
class ObjectChange:
    key: str                    # the object id, or the opaque ref when both packs withheld it
    object_id: str | None
    source_id: str | None
    a: ObjectState
    b: ObjectState
    fields: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "object_id": self.object_id, "source_id": self.source_id,
                "a": {k: v for k, v in asdict(self.a).items() if v is not None},
                "b": {k: v for k, v in asdict(self.b).items() if v is not None},
                "a_state": self.a.describe(), "b_state": self.b.describe(), "fields": self.fields}


@dataclass
class ClaimChange:
    claim_id: str
    change: str                 # changed | only_a | only_b
    a_status: str | None
    b_status: str | None
    fields: list[str]
    facts: list[FieldChange] = field(default_factory=list)
    a_evidence: list[str] = field(default_factory=list)
    b_evidence: list[str] = field(default_factory=list)


@dataclass
class PackDiff:
    a_pack_id: str
    b_pack_id: str
    a_hash: str
    b_hash: str
    request: list[FieldChange] = field(default_factory=list)
    versions: list[FieldChange] = field(default_factory=list)
    store_digest: FieldChange | None = None
    store_key: FieldChange | None = None
    sources: list[SourceChange] = field(default_factory=list)
    evidence_only_a: list[ObjectChange] = field(default_factory=list)
    evidence_only_b: list[ObjectChange] = field(default_factory=list)
    evidence_changed: list[ObjectChange] = field(default_factory=list)
    omissions_moved: list[ObjectChange] = field(default_factory=list)
    omissions_only_a: list[ObjectChange] = field(default_factory=list)
    omissions_only_b: list[ObjectChange] = field(default_factory=list)
    answer: list[FieldChange] = field(default_factory=list)
    claims: list[ClaimChange] = field(default_factory=list)
    outcome: list[FieldChange] = field(default_factory=list)
    other_sections: list[str] = field(default_factory=list)

    @property
    def same(self) -> bool:
        return self.a_hash == self.b_hash

    def count(self) -> int:
        return (len(self.request) + len(self.versions) + (1 if self.store_digest else 0)
                + (1 if self.store_key else 0) + len(self.sources)
                + len(self.evidence_only_a) + len(self.evidence_only_b) + len(self.evidence_changed)
                + len(self.omissions_moved) + len(self.omissions_only_a) + len(self.omissions_only_b)
                + len(self.answer) + len(self.claims) + len(self.outcome) + len(self.other_sections))

    def to_json(self) -> dict[str, Any]:
        return {
            "same": self.same, "a": {"pack_id": self.a_pack_id, "content_hash": self.a_hash},
            "b": {"pack_id": self.b_pack_id, "content_hash": self.b_hash},
            "request": [asdict(c) for c in self.request],
            "versions": [asdict(c) for c in self.versions],
            "store": {"digest": asdict(self.store_digest) if self.store_digest else None,
                      "key_id": asdict(self.store_key) if self.store_key else None,
                      "sources": [asdict(s) for s in self.sources]},
            "evidence": {"only_a": [c.to_json() for c in self.evidence_only_a],
                         "only_b": [c.to_json() for c in self.evidence_only_b],
                         "changed": [c.to_json() for c in self.evidence_changed]},
            "omissions": {"moved": [c.to_json() for c in self.omissions_moved],
                          "only_a": [c.to_json() for c in self.omissions_only_a],
                          "only_b": [c.to_json() for c in self.omissions_only_b]},
            "answer": [asdict(c) for c in self.answer],
            "claims": [asdict(c) for c in self.claims],
            "outcome": [asdict(c) for c in self.outcome],
            "other_sections": list(self.other_sections),
        }


# ---------------------------------------------------------------------------------- helpers
def _get(d: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def _eq(x: Any, y: Any) -> bool:
    return canonical_bytes(x) == canonical_bytes(y)


def _fields(paths: list[str], a: dict[str, Any], b: dict[str, Any]) -> list[FieldChange]:
    return [FieldChange(f, _get(a, f), _get(b, f)) for f in paths if not _eq(_get(a, f), _get(b, f))]


@dataclass
class _Entry:
    state: ObjectState
    object_id: str | None
    source_id: str | None
    record: dict[str, Any]


def _entries(pack: dict[str, Any]) -> dict[str, _Entry]:
    out: dict[str, _Entry] = {}
    for e in pack.get("evidence", []):
        out[e["object_id"]] = _Entry(ObjectState("evidence", evidence_id=e.get("evidence_id"),
                                                 content_hash=e.get("content_hash"), round=e.get("round")),
                                     e["object_id"], e.get("source_id"), e)
    for o in pack.get("omissions", []):
        withheld = bool(o.get("withheld"))
        st = ObjectState("omitted", gate=o.get("gate"), reason=o.get("reason"), withheld=withheld,
                         content_hash=None if withheld else o.get("content_hash"), round=o.get("round"))
        oid = None if withheld else o.get("object_id", o["ref"])
        out.setdefault(o["ref"], _Entry(st, oid, None if withheld else o.get("source_id"), o))
    return out


def _unify(mine: dict[str, _Entry], tenant: str, theirs: dict[str, _Entry], key: bytes | None) -> dict[str, _Entry]:
    """Re-key my withheld refs by the object id the other pack shows, where it shows one."""
    if key is None:
        return mine
    refs = {opaque_ref(tenant, e.object_id, key=key): e.object_id for e in theirs.values() if e.object_id}
    out: dict[str, _Entry] = {}
    for k, e in mine.items():
        if e.object_id is None and k in refs:
            out[refs[k]] = e
        else:
            out[k] = e
    return out


_RANKS = {"round", "rrf", "channels", "queries", "graph_templates", "retrieval_scores"}   # where and how high it ranked


def _withheld_by_type(pack: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per evidence type, at least how many records the pack's queries withheld for access, by
    gate (from the counts each round records per query: objects withheld inside the statements
    are never candidates, so this is all a pack says of them)."""
    out: dict[str, dict[str, int]] = {}
    for r in pack.get("rounds") or []:
        types = {q.get("query_id"): q.get("evidence_type") for q in r.get("queries") or [] if isinstance(q, dict)}
        for qid, by_gate in (r.get("withheld") or {}).items():
            t = types.get(qid)
            if t is None or not isinstance(by_gate, dict):
                continue
            for g, n in by_gate.items():
                # queries of one type may withhold the same records: at least the largest count
                out.setdefault(t, {})[g] = max(out.get(t, {}).get(g, 0), int(n))
    return out


def _withheld_note(record: dict[str, Any], withheld: dict[str, dict[str, int]]) -> str | None:
    """'policy_version at least 3 by scope', for the evidence types an object supports that the other
    pack withheld records of (None when it withheld none)."""
    parts = []
    for t in sorted(set(record.get("supports") or [])):
        if t in withheld:
            gates = ", ".join(f"at least {n} by {g}" for g, n in sorted(withheld[t].items()))
            parts.append(f"{t} {gates}")
    return "; ".join(parts) or None


def _store(d: PackDiff, a: dict[str, Any], b: dict[str, Any]) -> None:
    """The store section: digest, key id and each source's digest."""
    sa, sb = a.get("store", {}) or {}, b.get("store", {}) or {}
    if sa.get("digest") != sb.get("digest"):
        d.store_digest = FieldChange("store.digest", sa.get("digest"), sb.get("digest"))
    if sa.get("key_id") != sb.get("key_id"):
        d.store_key = FieldChange("store.key_id", sa.get("key_id"), sb.get("key_id"))
    d.sources = _sources(sa.get("sources") or {}, sb.get("sources") or {})


def _sources(srca: dict[str, Any], srcb: dict[str, Any]) -> list[SourceChange]:
    out = []
    for sid in sorted(set(srca) | set(srcb)):
        x, y = srca.get(sid), srcb.get(sid)
        if x != y:
            out.append(SourceChange(sid, "added" if x is None else "removed" if y is None else "changed", x, y))
    return out


def _states(x: _Entry | None, y: _Entry | None, key: bytes | None,
            held_a: dict[str, dict[str, int]], held_b: dict[str, dict[str, int]]) -> tuple[ObjectState, ObjectState]:
    """What each pack did with one object: its own state, or absent (with what that pack withheld
    of the object's evidence types), or unmatched when only the store's secret could tell."""
    absent = ObjectState("absent")
    sx, sy = (x.state if x else absent), (y.state if y else absent)
    if key is None:     # an unmatched withheld ref may be any object of the other pack
        if x is None and y is not None and y.object_id is None:
            sx = ObjectState("unmatched")
        if y is None and x is not None and x.object_id is None:
            sy = ObjectState("unmatched")
    if y is None and x is not None and sy.state == "absent":
        sy = ObjectState("absent", withheld_there=_withheld_note(x.record, held_b))
    if x is None and y is not None and sx.state == "absent":
        sx = ObjectState("absent", withheld_there=_withheld_note(y.record, held_a))
    return sx, sy


def _file(d: PackDiff, ch: ObjectChange, x: _Entry | None, y: _Entry | None) -> None:
    """Put one object's change in its list (or nowhere: the same state and the same record)."""
    sx, sy = ch.a, ch.b
    if sx.state == sy.state and sx.state in ("evidence", "omitted"):
        diff = sorted(f for f in set(x.record) | set(y.record)
                      if f not in _RANKS and not _eq(x.record.get(f), y.record.get(f)))
        if diff:
            ch.fields = diff
            (d.evidence_changed if sx.state == "evidence" else d.omissions_moved).append(ch)
    elif sx.state == "evidence":
        d.evidence_only_a.append(ch)
    elif sy.state == "evidence":
        d.evidence_only_b.append(ch)
    elif sx.state == "omitted":
        d.omissions_only_a.append(ch)
    elif sy.state == "omitted":
        d.omissions_only_b.append(ch)


def _objects(d: PackDiff, a: dict[str, Any], b: dict[str, Any], key: bytes | None) -> None:
    """The evidence and omissions sections: every object either pack admitted or omitted."""
    ea, eb = _entries(a), _entries(b)
    ea_u = _unify(ea, a.get("request", {}).get("tenant_id", ""), eb, key)
    eb_u = _unify(eb, b.get("request", {}).get("tenant_id", ""), ea, key)
    held_a, held_b = _withheld_by_type(a), _withheld_by_type(b)
    for k in sorted(set(ea_u) | set(eb_u)):
        x, y = ea_u.get(k), eb_u.get(k)
        sx, sy = _states(x, y, key, held_a, held_b)
        oid = (x.object_id if x else None) or (y.object_id if y else None)
        src = (x.source_id if x else None) or (y.source_id if y else None)
        _file(d, ObjectChange(k, oid, src, sx, sy), x, y)


def _claim(cid: Any, x: dict[str, Any] | None, y: dict[str, Any] | None) -> ClaimChange | None:
    """One claim's change: only in one pack, or its status, facts or evidence changed (None: same)."""
    if x is None or y is None:
        return ClaimChange(str(cid), "only_b" if x is None else "only_a",
                           x.get("status") if x else None, y.get("status") if y else None, [],
                           a_evidence=list(x.get("evidence", [])) if x else [],
                           b_evidence=list(y.get("evidence", [])) if y else [])
    flds = [f for f in ("status", "facts", "evidence") if not _eq(x.get(f), y.get(f))]
    if not flds:
        return None
    fa, fb = x.get("facts") or {}, y.get("facts") or {}
    facts = [FieldChange(k, fa.get(k), fb.get(k)) for k in sorted(set(fa) | set(fb))
             if not _eq(fa.get(k), fb.get(k))]
    return ClaimChange(str(cid), "changed", x.get("status"), y.get("status"), flds, facts,
                       list(x.get("evidence", [])), list(y.get("evidence", [])))


def _claims(ansa: dict[str, Any], ansb: dict[str, Any]) -> list[ClaimChange]:
    """Claims in a's order, then those only b makes."""
    ca = {c.get("claim_id"): c for c in ansa.get("claims", []) if isinstance(c, dict)}
    cb = {c.get("claim_id"): c for c in ansb.get("claims", []) if isinstance(c, dict)}
    order = list(ca) + [c for c in cb if c not in ca]
    changes = (_claim(cid, ca.get(cid), cb.get(cid)) for cid in order)
    return [c for c in changes if c is not None]


def _answer(d: PackDiff, a: dict[str, Any], b: dict[str, Any]) -> None:
    """The answer section: verdict, recommended action and each claim."""
    ansa, ansb = a.get("answer", {}) or {}, b.get("answer", {}) or {}
    d.answer = _fields(["verdict", "recommended_action"], ansa, ansb)
    d.claims = _claims(ansa, ansb)


def _outcome(a: dict[str, Any], b: dict[str, Any]) -> list[FieldChange]:
    """How the investigation ended: stop reason, rounds and the evidence still missing."""
    out = _fields(["state.stop_reason", "state.rounds"], a, b)
    ma = [f"{m.get('type')} ({m.get('reason')})" for m in a.get("missing", [])]
    mb = [f"{m.get('type')} ({m.get('reason')})" for m in b.get("missing", [])]
    if ma != mb:
        out.append(FieldChange("missing", ma, mb))
    return out


def _covered(d: PackDiff) -> dict[str, bool]:
    """Per top-level section of a pack, whether an itemised change already accounts for it."""
    return {
        "request": bool(d.request), "playbook": bool(d.versions), "schema_version": bool(d.versions),
        "builder_version": bool(d.versions), "encoding": bool(d.versions),
        "detector": any(c.field.startswith("detector.") for c in d.versions),
        "store": bool(d.store_digest or d.store_key or d.sources or any(c.field.startswith("store.") for c in d.versions)),
        "evidence": bool(d.evidence_only_a or d.evidence_only_b or d.evidence_changed),
        "omissions": bool(d.omissions_moved or d.omissions_only_a or d.omissions_only_b
                          or any(c.b.state == "omitted" for c in d.evidence_only_a)
                          or any(c.a.state == "omitted" for c in d.evidence_only_b)),
        "answer": bool(d.answer or d.claims), "missing": bool(d.outcome), "state": bool(d.outcome),
    }


def _other_sections(d: PackDiff, a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Sections that differ without an itemised change (ranks, slot sizes, plans), by name."""
    covered = _covered(d)
    return sorted(k + (" (ranks and fusion scores)" if k in ("evidence", "omissions") else "")
                  for k in set(a) | set(b)
                  if k not in ("content_hash", "pack_id") and not covered.get(k, False)
                  and not _eq(a.get(k), b.get(k)))


def compare(a: dict[str, Any], b: dict[str, Any], *, key: bytes | None = None) -> PackDiff:
    """Every difference between two verified packs, itemised. ``key`` is the store secret the
    packs' opaque refs were keyed with (None: withheld refs are matched only to each other)."""
    d = PackDiff(a.get("pack_id", ""), b.get("pack_id", ""), a.get("content_hash", ""), b.get("content_hash", ""))
    d.request = _fields(REQUEST_FIELDS, a.get("request", {}), b.get("request", {}))
    d.versions = _fields(VERSION_FIELDS, a, b)
    _store(d, a, b)
    _objects(d, a, b, key)
    _answer(d, a, b)
    d.outcome = _outcome(a, b)
    d.other_sections = _other_sections(d, a, b)
    return d
