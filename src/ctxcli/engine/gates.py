"""Gates: an ordered sequence of small functions with one signature.

Each per-candidate gate takes ``(obj, ctx)`` and returns ``None`` (pass) or a
:class:`Rejection`. The order is fixed and documented (docs/gates.md):

    tenant → scope → classification → purpose → erasure → validity → knowledge_time →
    freshness → integrity → injection → duplicate → relevance → budget

The last three depend on what has already been admitted and run inside the packer, in the
same order. Rejections by tenant, scope, classification or purpose are *withheld*: their
records carry an opaque reference and the missing scope, clearance or purpose, never a title,
content or fact. The erasure gate rejects an object recorded as erased (by id, or a copy of
an erased text: same content or duplicate hash) before its content is read (ctxcli/erasures.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Callable

from ..models.manifest import DEFAULT_CLEARANCE, clearance_rank
from ..util.canon import content_hash
from ..util.timeutil import us_to_dt
from .checks import Rejection, after, ended, missing_scopes, other_label, purpose_denied, too_old
from .injection_fields import accepted, gated_fields, injection_fields  # noqa: F401  (the gate's fields)

__all__ = ["Rejection"]


@dataclass
class Obj:
    """A candidate object as read from the store, with its source's governance fields."""

    doc_id: int
    object_id: str
    tenant_id: str
    source_id: str
    source_version: str
    object_type: str
    subject_id: str | None
    title: str
    content: str
    locator: str
    valid_from_us: int | None
    valid_to_us: int | None
    observed_us: int
    required_scopes: list[str]
    allowed_purposes: list[str]
    supports: list[str]
    facts: dict[str, Any]
    keys: list[str]
    content_hash: str
    dedup_hash: str
    supersedes: str | None
    tokens: int
    section: str | None
    doc_ref: str | None
    trust_level: str
    classification: str
    max_age_s: int | None
    redaction: dict[str, Any] | None
    owner_team: str
    family: int | None = None
    injection_accept: tuple[str, ...] = ()   # fields its manifest accepts unscanned (authoritative sources)
    # the injection verdict stored at load (detector id, fields sha256, verdict or None), if
    # any: used only while both match (engine/injection_adapter.gate_scan, load/verdicts.py)
    injection_verdict: tuple | None = None


@dataclass
class GateContext:
    tenant: str
    scopes: frozenset[str]
    purpose: str
    as_of: datetime
    as_of_us: int
    known_at_us: int | None
    replacement: Callable[[Obj], dict[str, Any] | None]
    clearance: str = DEFAULT_CLEARANCE
    # (superseded, the visible replacement or None): whether a version valid at as_of (and
    # known at known_at) supersedes the object along its chain, whatever its own valid_to
    successor: Callable[[Obj], tuple[bool, dict[str, Any] | None]] = lambda o: (False, None)
    # the recorded erasures of the tenant (ctxcli.erasures.Erased), read when the run started
    erased: Any = None

    @property
    def known_us(self) -> int:
        """The knowledge time: ``known_at`` when given, else the question's time ``as_of``."""
        return self.as_of_us if self.known_at_us is None else self.known_at_us


@dataclass(frozen=True)
class Access:
    """What the subject may read, for checks outside the per-candidate gates (the graph walk)."""

    scopes: frozenset[str]
    purpose: str
    clearance: str = DEFAULT_CLEARANCE

    def cleared(self, classification: str) -> bool:
        return clearance_rank(classification) <= clearance_rank(self.clearance)

    def source_ok(self, required_scopes: list[str] | None, allowed_purposes: list[str] | None,
                  classification: str) -> bool:
        """A source whose every object the scope, classification and purpose gates would pass
        (records may add scopes or narrow purposes; the walk checks those per object)."""
        return (set(required_scopes or []) <= self.scopes and self.purpose in (allowed_purposes or [])
                and self.cleared(classification))


def g_tenant(o: Obj, c: GateContext) -> Rejection | None:
    if other_label(o.tenant_id, c.tenant):
        return Rejection("tenant", "other_tenant", {})
    return None


def g_scope(o: Obj, c: GateContext) -> Rejection | None:
    missing = missing_scopes(o.required_scopes, c.scopes)
    if missing:
        return Rejection("scope", "missing_scope", {"needs": missing, "subject_has": sorted(c.scopes)})
    return None


def g_classification(o: Obj, c: GateContext) -> Rejection | None:
    if clearance_rank(o.classification) > clearance_rank(c.clearance):
        return Rejection("classification", "clearance_too_low",
                         {"needs": o.classification, "subject_has": c.clearance})
    return None


def g_purpose(o: Obj, c: GateContext) -> Rejection | None:
    if purpose_denied(o.allowed_purposes, c.purpose, empty_allows=False):
        return Rejection("purpose", "purpose_not_allowed", {"purpose": c.purpose, "allowed": list(o.allowed_purposes)})
    return None


def g_erasure(o: Obj, c: GateContext) -> Rejection | None:
    m = c.erased.match(o.object_id, o.content_hash, o.dedup_hash) if c.erased else None
    if m is None:
        return None
    how, e = m
    detail = {"erased_at": e.get("at"), "matched": how}
    if how == "content":        # a copy of an erased text under another id
        detail["copy_of"] = e.get("object_id")
    return Rejection("erasure", "erased", detail)


def g_validity(o: Obj, c: GateContext) -> Rejection | None:
    tz = c.as_of.tzinfo
    early = o.valid_from_us is not None and after(o.valid_from_us, c.as_of_us)
    late = ended(o.valid_to_us, c.as_of_us)
    vf, vt = us_to_dt(o.valid_from_us, tz), us_to_dt(o.valid_to_us, tz)
    when = {"valid_from": vf.isoformat() if vf else None, "valid_to": vt.isoformat() if vt else None,
            "as_of": c.as_of.isoformat()}
    if early or late:
        return Rejection("validity", "not_yet_valid" if early else "expired", {**when, "replacement": c.replacement(o)})
    superseded, replacement = c.successor(o)
    if superseded:     # a later version in force at as_of replaces it, whatever its own valid_to
        return Rejection("validity", "superseded_before_as_of", {**when, "replacement": replacement})
    return None


def g_knowledge_time(o: Obj, c: GateContext) -> Rejection | None:
    """Judged at the knowledge time (``known_at``); without one, nothing is cut off."""
    if after(o.observed_us, c.known_us):
        tz = c.as_of.tzinfo
        return Rejection("knowledge_time", "not_yet_known", {
            "observed_at": us_to_dt(o.observed_us, tz).isoformat(),
            "known_at": us_to_dt(c.known_us, tz).isoformat()})
    return None


def g_freshness(o: Obj, c: GateContext) -> Rejection | None:
    """An observation's age at the knowledge time (``known_at``, else ``as_of``)."""
    if too_old(o.observed_us, c.known_us, None if o.max_age_s is None else o.max_age_s * 1_000_000):
        from ..util.timeutil import fmt_duration

        age = timedelta(microseconds=c.known_us - o.observed_us)
        return Rejection("freshness", "stale", {
            "observed_at": us_to_dt(o.observed_us, c.as_of.tzinfo).isoformat(),
            "age_days": round(age.total_seconds() / 86400, 1),
            "max_age": fmt_duration(timedelta(seconds=o.max_age_s))})
    return None


def g_integrity(o: Obj, c: GateContext) -> Rejection | None:
    actual = content_hash(o.content)
    if actual != o.content_hash:
        return Rejection("integrity", "hash_mismatch", {"registered": o.content_hash, "actual": actual})
    return None


def g_injection(o: Obj, c: GateContext) -> Rejection | None:
    """Every trust level is scanned; an authoritative source's manifest may accept named fields.
    A verdict stored at load is used when the running detector computed it from these fields."""
    from .injection_adapter import gate_scan

    hit = gate_scan(gated_fields(o), o.injection_verdict)
    if hit is None:
        return None
    fld, pattern, label = hit
    return Rejection("injection", "instruction_like_text", {
        "trust_level": o.trust_level, "field": fld, "pattern": pattern, "matched": label})


GateFn = Callable[[Obj, GateContext], Rejection | None]


@dataclass(frozen=True)
class Gate:
    """One row of :data:`GATES`."""

    name: str                # as recorded in omissions and traces (``Rejection.gate``)
    check: GateFn | None     # the per-candidate function; None: decided while packing (engine/pack.py)
    phase: str               # metadata (before content is read) | content | pack
    withholding: bool        # a rejection here withholds the object: nothing of it is disclosed


# The gates in their one order (docs/gates.md, whose table tests/test_gates_table.py checks).
# Every other list derives from this one.
GATES: tuple[Gate, ...] = (
    Gate("tenant", g_tenant, "metadata", True),
    Gate("scope", g_scope, "metadata", True),
    Gate("classification", g_classification, "metadata", True),
    Gate("purpose", g_purpose, "metadata", True),
    Gate("erasure", g_erasure, "metadata", False),
    Gate("validity", g_validity, "metadata", False),
    Gate("knowledge_time", g_knowledge_time, "metadata", False),
    Gate("freshness", g_freshness, "metadata", False),
    Gate("integrity", g_integrity, "content", False),
    Gate("injection", g_injection, "content", False),
    Gate("duplicate", None, "pack", False),
    Gate("relevance", None, "pack", False),
    Gate("budget", None, "pack", False),
)
GATE_ORDER = [g.name for g in GATES]
WITHHOLDING_GATES = {g.name for g in GATES if g.withholding}
PER_CANDIDATE: list[GateFn] = [g.check for g in GATES if g.check is not None]
# Gates that need only an object's metadata, and those that read its content. The builder
# fetches content only for candidates that pass the first group (the order is unchanged).
META_GATES = [g.check for g in GATES if g.check is not None and g.phase == "metadata"]
CONTENT_GATES = [g.check for g in GATES if g.check is not None and g.phase == "content"]
_NAMES = {g.check: g.name for g in GATES if g.check is not None}


def run_gates(o: Obj, c: GateContext, gates=PER_CANDIDATE) -> tuple[Rejection | None, list[str]]:
    """The first rejection (or None) and the names of the gates that ran and passed."""
    passed = []
    for g in gates:
        r = g(o, c)
        if r is not None:
            return r, passed
        passed.append(_NAMES[g])
    return None, passed
