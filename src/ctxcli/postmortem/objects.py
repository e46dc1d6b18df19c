"""Explaining one object: admitted, omitted, or why it never became a candidate.

The pack is asked first (evidence; an omission by object id, or by the opaque ref of a
withheld one), then the store. For an object the pack's subject could not see (another
tenant, a missing scope or purpose) the answer says only that, and which scope or purpose it
needs: never a title, content, fact, type or source.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..util.canon import opaque_ref
from . import sentences
from .packfile import LoadedPack
from .queries import QueryOutcome, query_outcomes, searched_with, would_match


@dataclass
class ObjectExplanation:
    """Why one object is (or is not) in the pack.

    status: admitted | omitted | withheld | not_matched | tombstoned | other_tenant |
    source_disabled | not_found."""

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


def _transformation(t: dict) -> str:
    """How the text the model saw differs from the stored object (never the removed text)."""
    if t.get("kind") == "compression":
        return (f"; compressed {t.get('before_tokens')} → {t.get('after_tokens')} tokens by {t.get('method')} "
                f"({t.get('kept_sentences')} clauses kept, {t.get('dropped_sentences')} dropped; fidelity checks "
                + ", ".join(f"{k} {'passed' if v else 'FAILED'}" for k, v in sorted((t.get("checks") or {}).items()))
                + f"; text hash {str(t.get('before_hash'))[:19]}… → {str(t.get('after_hash'))[:19]}…)")
    if t.get("kind") == "redaction":
        masked = ", ".join(f"{n} {k}" for k, n in sorted((t.get("masked") or {}).items()))
        return (f"; redacted under {t.get('policy_object') or 'the source policy'} ({masked} masked; "
                f"text hash {str(t.get('before_hash'))[:19]}… → {str(t.get('after_hash'))[:19]}…)")
    return f"; transformed ({t.get('kind')})"


def explain_object(lp: LoadedPack, object_id: str, db: Path | None = None) -> ObjectExplanation:
    pack = lp.data
    tenant = lp.tenant
    base = {"object_id": object_id, "pack_id": lp.pack_id}
    for e in pack["evidence"]:
        if e["object_id"] == object_id:
            return ObjectExplanation(
                **base, status="admitted", evidence_id=e.get("evidence_id"), source_id=e.get("source_id"),
                sentence=f"admitted as {e.get('evidence_id')} in round {e.get('round')}"
                         + (f", selected for {e['selected_for']}" if e.get("selected_for") not in (None, "extra")
                            else " as an extra item")
                         + "".join(_transformation(t) for t in e.get("transformations") or []))
    ref = opaque_ref(tenant, object_id)
    for om in pack["omissions"]:
        if om.get("withheld") and om["ref"] == ref:
            sentence, would = sentences.explain(om, pack)
            return ObjectExplanation(**base, status="withheld", gate=om["gate"], reason=om.get("reason"), ref=ref,
                                     sentence=sentence, needs=sentences.needs(om), would_admit=would)
        if not om.get("withheld") and om.get("object_id", om["ref"]) == object_id:
            sentence, would = sentences.explain(om, pack)
            return ObjectExplanation(**base, status="omitted", gate=om["gate"], reason=om.get("reason"),
                                     source_id=om.get("source_id"), sentence=f"rejected by {om['gate']}: {sentence}",
                                     would_admit=would)
    from .. import paths
    from ..store.db import store_errors

    with store_errors(paths.db_path(db)):          # a damaged store: one line, exit 3
        return _from_store(lp, object_id, db)


def _from_store(lp: LoadedPack, object_id: str, db: Path | None) -> ObjectExplanation:
    from .. import paths
    from ..store.db import open_reader, store_meta

    pack = lp.data
    tenant = lp.tenant
    req = pack["request"]
    scopes = set(req["subject"].get("scopes", []))
    purpose = req["purpose"]
    base = {"object_id": object_id, "pack_id": lp.pack_id}
    con = open_reader(paths.db_path(db))
    try:
        notes: list[str] = []
        digest = store_meta(con).get("store_digest")
        if digest != (pack.get("store") or {}).get("digest"):
            notes.append(f"the store has changed since the pack was built (digest {digest}, the pack recorded "
                         f"{(pack.get('store') or {}).get('digest')}): this answer describes the current store")
        row = con.execute(
            "SELECT doc_id, source_id, object_type, subject_id, supports, keys, required_scopes, allowed_purposes "
            "FROM objects WHERE tenant_id = ? AND object_id = ? LIMIT 1", [tenant, object_id]).fetchone()
        if row is not None:
            doc_id, source_id, otype, subj, supports, keys, rscopes, purposes = row
            w = _withheld(rscopes or [], purposes or [], scopes, purpose)
            if w is not None:
                return ObjectExplanation(**base, status="withheld", ref=opaque_ref(tenant, object_id), notes=notes,
                                         **w)
            outcomes = query_outcomes(con, lp, doc_id, otype, subj, list(supports or []),
                                       list(keys or []))
            return ObjectExplanation(
                **base, status="not_matched", source_id=source_id, queries=outcomes, notes=notes,
                searched=searched_with(pack),
                sentence=f"never a candidate: no channel matched it (it is a {otype} about {subj or 'no entity'}, "
                         f"supporting {', '.join(supports or []) or 'no evidence type'})",
                would_admit=would_match(outcomes, list(supports or [])))
        tomb = con.execute("SELECT source_id, deleted_at_us, reason FROM tombstones WHERE tenant_id = ? AND "
                           "object_id = ? ORDER BY deleted_at_us LIMIT 1", [tenant, object_id]).fetchone()
        if tomb is not None:
            return _tombstoned(con, lp, object_id, tomb, scopes, purpose, notes)
        other = con.execute("SELECT 1 FROM objects WHERE object_id = ? AND tenant_id <> ? UNION ALL "
                            "SELECT 1 FROM tombstones WHERE object_id = ? AND tenant_id <> ? LIMIT 1",
                            [object_id, tenant, object_id, tenant]).fetchone()
        disabled = [r[0] for r in con.execute("SELECT source_id FROM sources WHERE NOT enabled ORDER BY source_id")
                    .fetchall()]
    finally:
        con.close()
    if other is not None:
        return ObjectExplanation(**base, status="other_tenant", notes=notes,
                                 sentence="withheld: it belongs to another tenant",
                                 would_admit=["nothing: another tenant's objects are never admitted"])
    found = _in_disabled_source(disabled, object_id)
    if found is not None:
        sid, rec = found
        if rec["tenant_id"] != tenant:
            return ObjectExplanation(**base, status="other_tenant", notes=notes,
                                     sentence="withheld: it belongs to another tenant",
                                     would_admit=["nothing: another tenant's objects are never admitted"])
        w = _withheld(rec.get("required_scopes") or [], rec.get("allowed_purposes") or [], scopes, purpose)
        if w is not None:
            return ObjectExplanation(**base, status="withheld", ref=opaque_ref(tenant, object_id), notes=notes,
                                     **w)
        return ObjectExplanation(**base, status="source_disabled", source_id=sid, notes=notes,
                                 sentence=f"never a candidate: its source {sid} is disabled "
                                          f"(registered but not loaded)",
                                 would_admit=[f"enabling source {sid} and reloading the store"])
    return ObjectExplanation(**base, status="not_found", notes=notes,
                             sentence=f"does not exist: no object {object_id} in the store, its tombstones or a "
                                      f"disabled source")


def _withheld(rscopes: list[str], purposes: list[str], scopes: set[str], purpose: str) -> dict[str, Any] | None:
    missing = sorted(set(rscopes) - scopes)
    if missing:
        word = "scope" if len(missing) == 1 else "scopes"
        return {"gate": "scope", "needs": {"scopes": missing},
                "sentence": f"withheld: needs {word} {', '.join(missing)}, "
                            f"subject has {', '.join(sorted(scopes)) or 'none'}",
                "would_admit": [f"granting {word} {', '.join(missing)} to the subject"]}
    if purpose not in purposes:
        return {"gate": "purpose", "needs": {"purposes": sorted(purposes)},
                "sentence": f"withheld: purpose {purpose} is not allowed, it needs purpose "
                            f"{', '.join(sorted(purposes)) or 'none'}",
                "would_admit": [f"a purpose in its allowed list ({', '.join(sorted(purposes))})"] if purposes
                else ["nothing: it allows no purpose"]}
    return None


def _tombstoned(con, lp: LoadedPack, object_id: str, tomb, scopes: set[str], purpose: str,
                notes: list[str]) -> ObjectExplanation:
    from datetime import timezone

    from ..util.timeutil import us_to_dt
    from ..util.timeutil import parse_ts

    sid, deleted_us, reason = tomb
    try:
        tz = parse_ts(lp.request["as_of"]).tzinfo
    except ValueError:
        tz = timezone.utc
    when = us_to_dt(deleted_us, tz)
    sentence = f"never a candidate: tombstoned on {when.isoformat() if when else 'an unknown date'} in source {sid}"
    src = con.execute("SELECT required_scopes, allowed_purposes FROM sources WHERE source_id = ?", [sid]).fetchone()
    # The deletion reason is shown only to a subject who may read the source it was deleted from.
    if reason and src is not None and _withheld(src[0] or [], src[1] or [], scopes, purpose) is None:
        sentence += f" (reason: {reason})"
    return ObjectExplanation(object_id=object_id, pack_id=lp.pack_id, status="tombstoned", source_id=sid,
                             sentence=sentence, notes=notes,
                             would_admit=["nothing: deleted objects, their content and relations are purged"])


def _in_disabled_source(disabled: list[str], object_id: str) -> tuple[str, dict[str, Any]] | None:
    """Look for the object in the snapshots of disabled sources (not loaded into the store)."""
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
            if o["object_id"] == object_id:
                return m.source_id, o
    return None
