"""``ctx eval --junit FILE``: the eval report as JUnit XML, for CI systems that show test results.

One ``<testsuite>`` per strategy, one ``<testcase>`` per run (classname = case id, name =
variant and strategy). A failing run of a gated strategy is a ``<failure>`` naming the first
broken layer and its failed checks; a failing run of full or topk (which bypass the gates by
design and never set the exit code) is ``<skipped>`` with the same message."""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree as ET


def _message(r: dict[str, Any]) -> str:
    d = r.get("diagnosis") or {}
    checks = ", ".join(f"{c['layer']}.{c['check']}" for c in r.get("failed_checks", []))
    head = f"first broken layer: {d.get('layer', '?')}"
    return f"{head}; failed checks: {checks}" if checks else head


def junit_bytes(doc: dict[str, Any]) -> bytes:
    runs = doc["runs"]
    root = ET.Element("testsuites", name="ctx eval", tests=str(len(runs)),
                      failures=str(sum(1 for r in runs if r["gated"] and not r["passed"])))
    for strategy in doc["strategies"]:
        mine = [r for r in runs if r["strategy"] == strategy]
        suite = ET.SubElement(root, "testsuite", name=f"ctx eval · {strategy}", tests=str(len(mine)),
                              failures=str(sum(1 for r in mine if r["gated"] and not r["passed"])),
                              skipped=str(sum(1 for r in mine if not r["gated"] and not r["passed"])))
        for r in mine:
            case = ET.SubElement(suite, "testcase", classname=r["case_id"],
                                 name=f"{r['variant'] or 'base'} ({strategy}{'+rerank' if r.get('rerank') else ''})", file=r.get("file", ""),
                                 time=f"{r.get('cost', {}).get('latency_ms', 0.0) / 1000:.3f}")
            if r["passed"]:
                continue
            msg = _message(r)
            if r["gated"]:
                ET.SubElement(case, "failure", message=msg, type=(r.get("diagnosis") or {}).get("layer", "eval")).text = \
                    "\n".join(f"{c['layer']}.{c['check']}: expected {c.get('expected')!r}, got {c.get('actual')!r}"
                              + (f" ({c['message']})" if c.get("message") else "")
                              for c in r.get("failed_checks", []))
            else:
                ET.SubElement(case, "skipped", message=f"not gated ({strategy} bypasses the gates): {msg}")
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8", xml_declaration=False) + b"\n"


def is_ctx_junit(raw: bytes) -> bool:
    """Whether ``raw`` is an earlier ``--junit`` file (what ``--junit`` may replace)."""
    return raw.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="ctx eval" ')
