"""Explaining one object: admitted, omitted, or why it never became a candidate.

The pack is asked first (evidence; an omission by object id, or by the opaque ref of a
withheld one), then the store. For an object of the pack's tenant that its subject could not
see (a missing scope, clearance or purpose) the answer says only that, and which scope,
clearance or purpose it needs: never a title, content, fact, type or source. An id of another
tenant, and a tombstone in a source the subject may not read, get the very answer an id that
exists nowhere gets: no output tells them apart.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..models.manifest import DEFAULT_CLEARANCE, clearance_rank
from ..util.canon import opaque_ref
from . import sentences
from .packfile import LoadedPack
from .queries import QueryOutcome, query_outcomes, searched_with, would_match


@dataclass
class ObjectExplanation:
    """Why one object is (or is not) in the pack.

    status: admitted | omitted | withheld | not_matched | tombstoned | source_disabled |
    not_found (also for another tenant's ids and for tombstones the subject may not read)."""

    object_id: str
    status: str
    sentence: str
    pack_id: str
    gate: str | None = None
    reason: str | None = None
    ref: str | None = None
    evidence_id: str | None = None
    source_id: str | None = None
    needs: dict[str, Any] = field(default_factory=dict)
    would_admit: list[str] = field(default_factory=list)
    queries: list[QueryOutcome] = field(default_factory=list)
    searched: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: v for k, v in d.items() if v not in (None, [], {})} | {"object_id": self.object_id,
                                                                           "status": self.status}


def _short_hash(h: object) -> str:
    """A digest shortened to its scheme and 12 hex digits."""
    s = str(h)
    scheme, sep, hexd = s.partition(":")
    return f"{scheme}:{hexd[:12]}…" if sep else s[:19] + "…"


def _transformation(t: dict) -> str:
    """How the text the model saw differs from the stored object (never the removed text, nor
    any bit of a digest of the unmasked text)."""
    if t.get("kind") == "compression":
        return (f"; compressed {t.get('before_tokens')} → {t.get('after_tokens')} tokens by {t.get('method')} "
                f"({t.get('kept_sentences')} clauses kept, {t.get('dropped_sentences')} dropped; fidelity checks "
                + ", ".join(f"{k} {'passed' if v else 'FAILED'}" for k, v in sorted((t.get("checks") or {}).items()))
                + f"; text hash {_short_hash(t.get('before_hash'))} → {_short_hash(t.get('after_hash'))})")
    if t.get("kind") == "redaction":
        masked = ", ".join(f"{n} {k}" for k, n in sorted((t.get("masked") or {}).items()))
        return (f"; redacted under {t.get('policy_object') or 'the source policy'} ({masked} masked; "
                f"text hash after masking {_short_hash(t.get('after_hash'))})")
    return f"; transformed ({t.get('kind')})"


def _key(db: Path | None) -> bytes | None:
    """The store secret, if there is one (it is never created here)."""
    from .. import paths
    from ..store.secret import store_key

    return store_key(paths.db_path(db), create=False)


def _ref(tenant: str, object_id: str, key: bytes | None) -> str | None:
    return opaque_ref(tenant, object_id, key=key) if key is not None else None


def explain_object(lp: LoadedPack, object_id: str, db: Path | None = None) -> ObjectExplanation:
    key = _key(db)
    x = _from_pack(lp, object_id, object_id, _ref(lp.tenant, object_id, key))
    if x is not None:
        return x
    from .. import paths
    from ..store import read_errors

    with read_errors(paths.db_path(db)):          # a damaged store: one line, exit 3
        return _from_store(lp, object_id, db, key)


def _from_pack(lp: LoadedPack, object_id: str, shown_id: str, ref: str | None) -> ObjectExplanation | None:
    """The pack's answer for the object it names ``shown_id`` (its id with the source's masks
    applied, when they apply) or withholds as ``ref``; None when the pack does not name it."""
    pack = lp.data
    base = {"object_id": object_id, "pack_id": lp.pack_id}
    for e in pack["evidence"]:
        if e["object_id"] == shown_id:
            return ObjectExplanation(
                **base, status="admitted", evidence_id=e.get("evidence_id"), source_id=e.get("source_id"),
                sentence=f"admitted as {e.get('evidence_id')} in round {e.get('round')}"
                         + (f", selected for {e['selected_for']}" if e.get("selected_for") not in (None, "extra")
                            else " as an extra item")
                         + "".join(_transformation(t) for t in e.get("transformations") or []))
    for om in pack["omissions"]:
        if om.get("withheld") and ref is not None and om["ref"] == ref:
            sentence, would = sentences.explain(om, pack)
            return ObjectExplanation(**base, status="withheld", gate=om["gate"], reason=om.get("reason"), ref=ref,
                                     sentence=sentence, needs=sentences.needs(om), would_admit=would)
        if not om.get("withheld") and om.get("object_id", om["ref"]) == shown_id:
            sentence, would = sentences.explain(om, pack)
            return ObjectExplanation(**base, status="omitted", gate=om["gate"], reason=om.get("reason"),
                                     source_id=om.get("source_id"), sentence=f"rejected by {om['gate']}: {sentence}",
                                     would_admit=would)
    return None


def _masks(con, source_id: str, scopes: set[str]):
    """The mask patterns ``source_id`` applies for a subject holding ``scopes``, or None."""
    import orjson

    from ..engine import redact

    row = con.source_policy(source_id)
    policy = orjson.loads(row[3]) if row and row[3] else None
    if not policy or set(policy.get("unless_scopes", [])) & scopes:
        return None
    return redact.patterns(policy)


def _from_store(lp: LoadedPack, object_id: str, db: Path | None, key: bytes | None) -> ObjectExplanation:
    from .. import paths
    from ..store import open_store

    pack = lp.data
    tenant = lp.tenant
    req = pack["request"]
    scopes = set(req["subject"].get("scopes", []))
    clearance = req["subject"].get("clearance", DEFAULT_CLEARANCE)
    purpose = req["purpose"]
    base = {"object_id": object_id, "pack_id": lp.pack_id}
    con = open_store(paths.db_path(db))
    try:
        notes: list[str] = []

        # A pack records the store digest keyed with the secret; without it, no digest is shown.
        recorded = (pack.get("store") or {}).get("digest")
        from ..pipeline import store_info

        digest = store_info(con, key, tenant=tenant, clearance=clearance)["digest"] if key is not None else None
        if digest is None or digest != recorded:
            notes.append("the store has changed since the pack was built"
                         + (f" (digest {digest}, the pack recorded {recorded})" if digest else " (or lost its secret)")
                         + ": this answer describes the current store")
        row = con.object_summary(tenant, object_id)
        if row is not None:
            doc_id, source_id, otype, subj, supports, keys, rscopes, purposes, level = row
            w = _withheld(rscopes or [], purposes or [], scopes, purpose, level=level, clearance=clearance)
            if w is not None:
                return ObjectExplanation(**base, status="withheld", ref=_ref(tenant, object_id, key),
                                         notes=notes, **w)
            from ..engine.redact import mask

            pats = _masks(con, source_id, scopes)
            shown = mask(object_id, pats) if pats else object_id
            x = _from_pack(lp, object_id, shown, None) if shown != object_id else None
            if x is not None:       # the pack names it by its masked id
                return x
            outcomes = query_outcomes(con, lp, doc_id, otype, subj, list(supports or []),
                                       list(keys or []))
            about = subj or "no entity"
            if pats:                # nothing the source masks for this subject is echoed from the store
                about = mask(about, pats)
                for q in outcomes:
                    q.outcome = mask(q.outcome, pats)
            return ObjectExplanation(
                **base, status="not_matched", source_id=source_id, queries=outcomes, notes=notes,
                searched=searched_with(pack),
                sentence=f"never a candidate: no channel matched it (it is a {otype} about {about}, "
                         f"supporting {', '.join(supports or []) or 'no evidence type'})",
                would_admit=[mask(w, pats) if pats else w for w in would_match(outcomes, list(supports or []))])
        tomb = con.tombstone(tenant, object_id)
        if tomb is not None:
            x = _tombstoned(con, lp, object_id, tomb, scopes, purpose, notes)
            if x is not None:
                return x
        disabled = con.disabled_sources()
    finally:
        con.close()
    found = _in_disabled_source(disabled, tenant, object_id)
    if found is not None:
        sid, rec = found
        w = _withheld(rec.get("required_scopes") or [], rec.get("allowed_purposes") or [], scopes, purpose,
                      level=rec.get("_classification"), clearance=clearance)
        if w is not None:
            return ObjectExplanation(**base, status="withheld", ref=_ref(tenant, object_id, key),
                                     notes=notes, **w)
        return ObjectExplanation(**base, status="source_disabled", source_id=sid, notes=notes,
                                 sentence=f"never a candidate: its source {sid} is disabled "
                                          f"(registered but not loaded)",
                                 would_admit=[f"enabling source {sid} and reloading the store"])
    return ObjectExplanation(**base, status="not_found", notes=notes,
                             sentence=f"not found: no object {object_id} that the pack's subject may know of, "
                                      f"in the store, its tombstones or a disabled source")


def _withheld(rscopes: list[str], purposes: list[str], scopes: set[str], purpose: str, *,
              level: str | None = None, clearance: str = DEFAULT_CLEARANCE) -> dict[str, Any] | None:
    """The withholding gate that rejects an object (in gate order), or None."""
    missing = sorted(set(rscopes) - scopes)
    if missing:
        word = "scope" if len(missing) == 1 else "scopes"
        return {"gate": "scope", "needs": {"scopes": missing},
                "sentence": f"withheld: needs {word} {', '.join(missing)}, "
                            f"subject has {', '.join(sorted(scopes)) or 'none'}",
                "would_admit": [f"granting {word} {', '.join(missing)} to the subject"]}
    if level is not None and clearance_rank(level) > clearance_rank(clearance):
        return {"gate": "classification", "needs": {"clearance": level},
                "sentence": f"withheld: needs clearance {level}, subject has {clearance}",
                "would_admit": [f"clearing the subject for {level} (--clearance {level})"]}
    if purpose not in purposes:
        return {"gate": "purpose", "needs": {"purposes": sorted(purposes)},
                "sentence": f"withheld: purpose {purpose} is not allowed, it needs purpose "
                            f"{', '.join(sorted(purposes)) or 'none'}",
                "would_admit": [f"a purpose in its allowed list ({', '.join(sorted(purposes))})"] if purposes
                else ["nothing: it allows no purpose"]}
    return None


def _tombstoned(con, lp: LoadedPack, object_id: str, tomb, scopes: set[str], purpose: str,
                notes: list[str]) -> ObjectExplanation | None:
    """The answer for a tombstoned object; None when the subject may not read its source
    (then the id is answered as one that does not exist: no deletion time, source or reason)."""
    from datetime import timezone

    from ..util.timeutil import us_to_dt
    from ..util.timeutil import parse_ts

    sid, deleted_us, reason = tomb
    src = con.source_policy(sid)
    clearance = lp.request["subject"].get("clearance", DEFAULT_CLEARANCE)
    if src is None or _withheld(src[0] or [], src[1] or [], scopes, purpose, level=src[2],
                                clearance=clearance) is not None:
        return None
    try:
        tz = parse_ts(lp.request["as_of"]).tzinfo
    except ValueError:
        tz = timezone.utc
    when = us_to_dt(deleted_us, tz)
    sentence = f"never a candidate: tombstoned on {when.isoformat() if when else 'an unknown date'} in source {sid}"
    if reason:
        sentence += f" (reason: {reason})"
    return ObjectExplanation(object_id=object_id, pack_id=lp.pack_id, status="tombstoned", source_id=sid,
                             sentence=sentence, notes=notes,
                             would_admit=["nothing: deleted objects, their content and relations are purged"])


def _in_disabled_source(disabled: list[str], tenant: str, object_id: str) -> tuple[str, dict[str, Any]] | None:
    """Look for the tenant's object in the snapshots of disabled sources (not loaded into the store)."""
    if not disabled:
        return None
    from .. import paths
    from ..errors import CtxError
    from ..load.parse import parse_source, read_manifests

    try:
        manifests = read_manifests(paths.manifests_dir(), paths.root())
    except (CtxError, OSError):
        return None
    for m, disp, mbytes in manifests:
        if m.source_id not in disabled:
            continue
        try:
            ls = parse_source(m, disp, mbytes, paths.root(), None)
        except (CtxError, OSError):
            continue
        for o in ls.iter_objects():
            if o["object_id"] == object_id and o["tenant_id"] == tenant:
                return m.source_id, {**o, "_classification": m.classification.value}
    return None
