"""The store facts ``ctx eval`` scores against, read from the store itself, independently of
the gates (the shape is in the package's docstring), and the injection detector they use."""

from __future__ import annotations

from typing import Any

def detector():
    """``ctxcli.injection.scan_fields`` or None when the detector is not installed."""
    try:
        from ..injection import scan_fields  # type: ignore[import-not-found]
    except ImportError:
        return None
    return scan_fields


def _text_fields(title: str, content: str, facts: dict[str, Any]) -> list[tuple[str, str]]:
    out = [("title", title or ""), ("content", content or "")]

    def walk(path: str, v: Any) -> None:
        if isinstance(v, str):
            out.append((path, v))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(f"{path}[{i}]", x)
        elif isinstance(v, dict):
            for k in sorted(v):
                walk(f"{path}.{k}", v[k])

    for k in sorted(facts):
        walk(f"facts.{k}", facts[k])
    return out


def store_facts(con, pack: dict[str, Any], scan=None, key: bytes | None = None,
                stored: list[str] | tuple[str, ...] = ()) -> dict[str, Any]:
    """The store facts of every admitted item of ``pack`` (any tenant), read from ``con``.
    ``key`` (the store secret) keys the content hash of items the pack shows masked, as the
    builder does, so that it compares with theirs. ``stored``: object ids asked about (an
    expectation's ``withheld``); ``facts["stored"]`` lists those the store holds (any tenant)."""
    import orjson

    from ..util.canon import content_hash, sealed_hash, sha256_hex

    items = pack.get("evidence", [])
    ids = sorted({e["object_id"] for e in items})
    tenant = pack.get("request", {}).get("tenant_id")
    rows: dict[str, list[tuple]] = {}
    if ids:
        for r in con.object_facts(ids):
            rows.setdefault(r[0], []).append(r)
    want_ev = {e["object_id"]: e.get("evidence_id") for e in items}
    sealed = {e["object_id"] for e in items if str(e.get("content_hash", "")).startswith("hmac-sha256:")}

    def shown(r: tuple) -> str:
        return sealed_hash(r[8], key=key) if key is not None and r[0] in sealed and r[8] else r[8]

    from ..engine.gates import accepted

    accept = orjson.loads(con.meta().get("injection_accept") or "{}") if scan is not None else {}
    objects: dict[str, dict[str, Any]] = {}
    for oid, rs in rows.items():
        # the row the pack item came from: its evidence id, else the request's tenant
        def ev(r: tuple) -> str:
            return "ev-" + sha256_hex(f"{r[1]}\0{r[0]}\0{shown(r)}")[:10]

        r = next((x for x in rs if ev(x) == want_ev.get(oid)), None) or next(
            (x for x in rs if x[1] == tenant), rs[0])
        ofacts = orjson.loads(r[12]) if r[12] else {}
        inj = None
        if scan is not None:        # every trust level; minus the fields its manifest accepts
            flds = _text_fields(r[10], r[11], ofacts)
            acc = tuple(accept.get(r[2], ()))
            hit = scan([(n, t) for n, t in flds if not accepted(n, acc)] if acc else flds)
            if hit is not None:
                fld, m = hit
                inj = {"field": fld, "pattern": getattr(m, "pattern", str(m)), "label": getattr(m, "label", "")}
        objects[oid] = {
            "tenant_id": r[1], "source_id": r[2], "valid_from_us": r[3], "valid_to_us": r[4], "observed_us": r[5],
            "required_scopes": sorted(set(r[6] or []) | set(r[15] or [])),
            "allowed_purposes": sorted(r[7] if r[7] is not None else (r[16] or [])),
            "content_hash": shown(r), "dedup_hash": r[9], "integrity_ok": content_hash(r[11] or "") == r[8],
            "trust_level": r[13], "max_age_s": r[14], "injection": inj, "classification": r[17]}
    tomb = []
    if ids:
        tomb = con.tombstoned_ids(tenant, ids)
    out = {"objects": objects, "tombstones": tomb, "injection_detector": scan is not None}
    if stored:
        out["stored"] = sorted({r[0] for r in con.object_facts(sorted(set(stored)))})
    return out
