"""What of an object a subject is shown, in every output (pack, trace, answer, render).

One :class:`Disclosure` per investigation holds the subject's scopes and the store secret:

- an object withheld by tenant, scope or purpose is named only by its opaque reference,
  keyed with the secret (:func:`~ctxcli.util.canon.opaque_ref`);
- an object its source masks for this subject has every output string masked (text,
  title, locator, source version, facts) and every digest of its unmasked text keyed with
  the secret (content hash, redaction ``before_hash``, integrity hashes, evidence id);
- anything else is shown as stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..util.canon import opaque_ref, sealed_hash
from . import redact as R


@dataclass(frozen=True)
class Disclosure:
    key: bytes
    scopes: frozenset[str]

    def ref(self, o) -> str:
        """The opaque reference of ``o`` (for records of withheld objects)."""
        return opaque_ref(o.tenant_id, o.object_id, key=self.key)

    def masks(self, o) -> bool:
        return R.applies(o, self.scopes)

    def digest(self, o, digest: str | None = None) -> str:
        """A digest of ``o``'s stored text (its content hash unless given) as the subject
        may see it: keyed when the subject may not read the unmasked text."""
        d = o.content_hash if digest is None else digest
        return sealed_hash(d, key=self.key) if self.masks(o) else d

    def item_fields(self, o, count) -> dict[str, Any]:
        """The fields of an evidence item that come from the object's strings."""
        text, title, facts, locator, version, transformations = (
            o.content, o.title, dict(o.facts), o.locator, o.source_version, [])
        if self.masks(o):
            text, title, facts, locator, version, tr = R.redact(o, o.redaction, count, key=self.key)
            if tr is not None:
                transformations.append(tr)
        return {"text": text, "title": title, "facts": facts, "locator": locator, "source_version": version,
                "content_hash": self.digest(o), "transformations": transformations}

    def omission_fields(self, o, rej) -> dict[str, Any]:
        """The object-dependent part of an omission record: ``ref`` and ``detail``, and for
        a record that is not withheld what it may name (masked and keyed as above)."""
        from .gates import WITHHOLDING_GATES

        if rej.gate in WITHHOLDING_GATES:
            return {"ref": self.ref(o), "detail": rej.detail}
        detail = rej.detail
        title, version = o.title, o.source_version
        if self.masks(o):
            pats = R.patterns(o.redaction)
            title, version = R.mask(title, pats), R.mask(version, pats)
            if rej.gate == "integrity":
                detail = {k: (self.digest(o, v) if k in ("registered", "actual") and isinstance(v, str) else v)
                          for k, v in detail.items()}
        return {"ref": o.object_id, "detail": detail, "object_id": o.object_id, "source_id": o.source_id,
                "source_version": version, "title": title, "object_type": o.object_type,
                "supports": list(o.supports), "tokens": o.tokens, "content_hash": self.digest(o),
                "trust_level": o.trust_level}
