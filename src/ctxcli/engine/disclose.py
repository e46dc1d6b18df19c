"""What of an object a subject is shown, in every output (pack, trace, answer, render).

One :class:`Disclosure` per investigation holds the subject's scopes and the store secret:

- an object withheld by tenant, scope or purpose is named only by its opaque reference,
  keyed with the secret (:func:`~ctxcli.util.canon.opaque_ref`);
- an object its source masks for this subject has every output string masked (text, title,
  locator, source version, object and subject ids, facts, omission details) and every digest
  of its unmasked text keyed with the secret (content hash, redaction ``before_hash``,
  integrity hashes; the evidence id is derived from the keyed content hash);
- anything else is shown as stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..util.canon import opaque_ref, sealed_hash
from . import redact as R

_HASH_KEYS = ("registered", "actual")      # integrity-gate details: digests of the stored text


@dataclass(frozen=True)
class Disclosure:
    key: bytes
    scopes: frozenset[str]

    def masks(self, o) -> bool:
        return R.applies(o, self.scopes)

    def hides_text(self, o) -> bool:
        """Whether the masks change ``o``'s text or title as this subject sees them (what a
        text score — BM25, cosine — is computed over)."""
        if not self.masks(o):
            return False
        pats = R.patterns(o.redaction)
        return any(R.mask(x, pats) != x for x in (o.content, o.title) if isinstance(x, str) and x)

    def ref(self, o, withheld: bool = True) -> str:
        """How records name ``o``: its opaque reference when withheld, else its id as shown."""
        if withheld:
            return opaque_ref(o.tenant_id, o.object_id, key=self.key)
        return R.mask(o.object_id, R.patterns(o.redaction)) if self.masks(o) else o.object_id

    def digest(self, o, digest: str | None = None) -> str:
        """A digest of ``o``'s stored text (its content hash unless given) as the subject may
        see it: keyed when the subject may not read the unmasked text."""
        d = o.content_hash if digest is None else digest
        return sealed_hash(d, key=self.key) if self.masks(o) else d

    def view(self, o, count) -> tuple[Any, list[dict[str, Any]], str]:
        """(``o`` as shown, its transformations, its content hash as shown) for an evidence item."""
        if not self.masks(o):
            return o, [], o.content_hash
        m, tr = R.redact(o, o.redaction, count, key=self.key)
        return m, [tr] if tr is not None else [], self.digest(o)

    def omission_fields(self, o, rej) -> dict[str, Any]:
        """The object-dependent part of an omission record: ``ref`` and ``detail``, and for a
        record that is not withheld what it may name (masked and keyed as above)."""
        from .gates import WITHHOLDING_GATES

        if rej.gate in WITHHOLDING_GATES:
            return {"ref": self.ref(o), "detail": rej.detail}
        if rej.gate == "erasure":       # nothing of its text: no title, a keyed digest only
            return {"ref": o.object_id, "detail": rej.detail, "object_id": o.object_id, "source_id": o.source_id,
                    "source_version": o.source_version, "title": "[erased]", "object_type": o.object_type,
                    "supports": list(o.supports), "tokens": o.tokens,
                    "content_hash": sealed_hash(o.content_hash, key=self.key), "trust_level": o.trust_level}
        shown, detail = o, rej.detail
        if self.masks(o):
            pats = R.patterns(o.redaction)
            shown = R.masked_copy(o, pats)
            detail = {k: (self.digest(o, v) if k in _HASH_KEYS and isinstance(v, str) else R.mask_value(v, pats))
                      for k, v in detail.items()}
        return {"ref": shown.object_id, "detail": detail, "object_id": shown.object_id,
                "source_id": o.source_id, "source_version": shown.source_version, "title": shown.title,
                "object_type": o.object_type, "supports": list(o.supports), "tokens": o.tokens,
                "content_hash": self.digest(o), "trust_level": o.trust_level}
