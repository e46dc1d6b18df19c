"""The report's audit section: a ``ctx audit-call --json`` document shown beside a run.

Shown only in a report for the subject the audit was made for (the same tenant, subject,
scopes, clearance and purpose as the run): an audit made for a subject who may see more would
name objects this run's reader may not. Only the fields below are taken from the document —
a withheld match by its keyed reference and gate alone, whatever else a file may carry — and
the counts are recomputed from the spans.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..agents.audit import AUDIT_SCHEMA, MATCHED_BY
from ..agents.audit import SEVERITY as STATUSES
from ..errors import InputError

_REF = re.compile(r"^wh-[0-9a-f]{16}$")


def _subject_of_run(req: dict[str, Any]) -> dict[str, Any]:
    s = req["subject"]
    return {"tenant_id": req["tenant_id"], "subject": s.get("id"), "scopes": sorted(s.get("scopes") or []),
            "clearance": s.get("clearance"), "purpose": req["purpose"]}


MAX_AUDIT_BYTES = 64 * 1024 * 1024


def read_audit(path: Path, pack: dict[str, Any]) -> dict[str, Any]:
    """The audit section's view of the audit document at ``path`` for the run ``pack``; an
    input error (exit 2, naming the file) for anything else, or an audit of another subject."""
    import orjson

    from ..util.safeio import NotReadable, read_regular

    disp = str(path)
    try:        # a regular file only (never a FIFO, device or link), read in bounded chunks
        doc = orjson.loads(read_regular(path, MAX_AUDIT_BYTES, follow=False))
    except NotReadable as e:
        raise InputError(str(e), file=disp) from None
    except orjson.JSONDecodeError:
        raise InputError("not a JSON document (give the output of ctx audit-call --json)", file=disp) from None
    if not isinstance(doc, dict) or doc.get("schema_version") != AUDIT_SCHEMA:
        raise InputError(f"not a {AUDIT_SCHEMA} document (give the output of ctx audit-call --json)", file=disp)
    sub = doc.get("subject") if isinstance(doc.get("subject"), dict) else {}
    mine = _subject_of_run(pack["request"])
    theirs = {k: (sorted(sub.get(k) or []) if k == "scopes" else sub.get(k)) for k in mine}
    if theirs != mine:
        diff = next(k for k in mine if theirs[k] != mine[k])
        raise InputError(f"the audit was made for other {diff} than this run's: an audit is shown only in a report "
                         "for the subject, scopes, clearance and purpose it was made for", file=disp, field=diff)
    spans = []
    for i, s in enumerate(doc.get("spans") or []):
        if not isinstance(s, dict) or s.get("status") not in STATUSES:
            raise InputError(f"span {i} has no known status", file=disp, field=f"spans[{i}].status")
        matches = []
        for m in s.get("matches") or []:
            if not isinstance(m, dict) or m.get("by") not in MATCHED_BY:
                continue
            if m.get("status") == "withheld":
                ref = m.get("ref")
                if not isinstance(ref, str) or not _REF.match(ref):
                    raise InputError(f"span {i}: a withheld match must name only a keyed reference (wh-…)", file=disp,
                                     field=f"spans[{i}].matches")
                matches.append({"by": m["by"], "status": "withheld", "ref": ref, "gate": str(m.get("gate") or "")})
            else:
                matches.append({"by": m["by"], "status": str(m.get("status")), "ref": str(m.get("object_id") or ""),
                                "source": str(m.get("source_id") or ""), "gate": str(m.get("gate") or ""),
                                "reason": str(m.get("reason") or "")})
        inj = s.get("injection") if isinstance(s.get("injection"), dict) else None
        spans.append({"span": str(s.get("span") or ""), "role": str(s.get("role") or ""),
                      "chars": s.get("chars") if isinstance(s.get("chars"), int) else None,
                      "status": s["status"], "matches": matches,
                      "injection": str(inj.get("pattern") or "") if inj else None})
    counts = [(k, sum(1 for s in spans if s["status"] == k)) for k in STATUSES]
    return {"file": Path(path).name, "format": str(doc.get("format") or ""), "spans": spans,
            "counts": [(k, n) for k, n in counts if n],
            "flagged": sum(n for k, n in counts if k not in ("admitted", "unknown_origin"))}
