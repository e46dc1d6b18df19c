"""Bridge to the untrusted-instruction detector (``ctxcli.gate.injection``)."""

from __future__ import annotations


def scan(fields: list[tuple[str, str]]) -> tuple[str, str, str] | None:
    try:
        from ..gate.injection import scan_fields
    except ImportError:  # TEMP until detector lands
        return None
    hit = scan_fields(fields)
    if hit is None:
        return None
    fld, m = hit
    return fld, m.pattern, m.label
