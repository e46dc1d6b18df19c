"""Bridge to the untrusted-instruction detector (``ctxcli.gate.injection``), imported on first
use so commands that never gate (``--help``, ``sources``) do not pay for compiling it."""

from __future__ import annotations


def scan(fields: list[tuple[str, str]]) -> tuple[str, str, str] | None:
    from ..gate.injection import scan_fields

    hit = scan_fields(fields)
    if hit is None:
        return None
    fld, m = hit
    return fld, m.pattern, m.label
