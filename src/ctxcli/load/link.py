"""Entity linking at load: names, aliases and keys of entities found in objects' text.

Declared per source (``linking`` in its manifest, models/manifest.Linking): which entity
types may be named, which fields of each object are read, and the thresholds. Each object of
that source that has a subject entity is read through the same masked view the index uses
(load/derive._indexed), so a mask never hides a word that made an edge. A resolved mention
becomes one relation ``subject -MENTIONS-> entity`` attested by the object (its access rules
and validity authorise the edge like any other, store/access.py); the relation names its
``extraction_method`` (``linker:exact`` / ``linker:fuzzy``) and confidence. An ambiguous or
low-confidence mention is kept as an unresolved entity with its candidates and links nothing.
The matcher is util/entity_match.py (rapidfuzz).
"""

from __future__ import annotations

from typing import Any

from ..util.canon import sha256_hex
from ..util.entity_match import Dictionary, entity_names


class Linker:
    """Collects the tenants' entity names (:meth:`add_entity`), then links objects (:meth:`scan`)."""

    def __init__(self) -> None:
        self.names: dict[tuple[str, str], list[tuple[str, list[str]]]] = {}   # (tenant, type) -> (key, names)
        self.dicts: dict[tuple[str, tuple[str, ...]], Dictionary] = {}

    def add_entity(self, e: dict[str, Any]) -> None:
        self.names.setdefault((e["tenant_id"], e["entity_type"]), []).append((e["entity_key"], entity_names(e)))

    def _dict(self, tenant: str, types: tuple[str, ...]) -> Dictionary:
        d = self.dicts.get((tenant, types))
        if d is None:
            d = Dictionary()
            for t in types:
                for key, names in self.names.get((tenant, t), ()):
                    d.add(key, names)
            self.dicts[(tenant, types)] = d
        return d

    def scan(self, o: dict[str, Any], linking, source_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """(links, unresolved) of one object row: a link per entity named (its best match),
        never the object's own subject; an unresolved row per ambiguous or weak mention."""
        from .derive import indexed_text

        subject = o.get("subject_id")
        if not subject:
            return [], []
        title, content, keys = indexed_text(o)
        texts = {"title": title or "", "content": content or "", "keys": " ; ".join(keys or [])}
        d = self._dict(o["tenant_id"], tuple(sorted(set(linking.entity_types))))
        best: dict[str, tuple[float, str]] = {}
        unresolved: list[dict[str, Any]] = []
        for fld in linking.fields:
            for m in d.find(texts[fld], accept=linking.accept, candidate=linking.candidate, margin=linking.margin,
                            fuzzy=linking.fuzzy):
                if m.resolved is not None:
                    if m.resolved != subject and m.confidence > best.get(m.resolved, (-1.0, ""))[0]:
                        best[m.resolved] = (m.confidence, m.method)
                    continue
                cands = [(k, s) for k, s in m.candidates if k != subject]
                if cands:
                    unresolved.append({
                        "tenant_id": o["tenant_id"], "source_id": source_id, "object_id": o["object_id"],
                        "subject_id": subject, "field": fld, "mention": m.text, "method": "linker:" + m.method,
                        "candidates": [k for k, _ in cands], "scores": [s for _, s in cands]})
        links = [{"tenant_id": o["tenant_id"], "object_id": o["object_id"], "from": subject, "to": key,
                  "type": linking.relation, "confidence": conf, "extraction_method": "linker:" + method,
                  "source_version": o["source_version"],
                  "relation_id": "LNK-" + sha256_hex(f"{o['tenant_id']}\0{o['object_id']}\0{linking.relation}\0{key}"
                                                     .encode())[:24]}
                 for key, (conf, method) in sorted(best.items())]
        return links, unresolved
