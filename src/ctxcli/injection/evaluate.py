"""Recall and false-positive rate of the injection detector on the labelled evaluation set
(``tests/data/injection/heldout.jsonl`` and ``dev.jsonl``), per language and per family.

    python -m ctxcli.injection.evaluate [--data DIR] [--json] [--markdown]

Exit 0 when the held-out figures meet the floors below, 1 when any is missed, 2 when the
data cannot be read. The floors are the documented figures (docs/security.md): CI fails
when the detector drops below them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# Held-out floors (measured figures rounded down; see docs/security.md).
FLOORS = {
    "recall_overall": 0.90,
    "recall_per_language": 0.80,
    "fpr_overall": 0.02,
}
LANG_ORDER = ("en", "zh", "de", "fr", "es", "it", "pt", "ja", "ko", "ru")


def _default_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "tests" / "data" / "injection"


def load_rows(path: Path) -> list[dict[str, Any]]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("label") not in ("attack", "benign") or not isinstance(r.get("text"), str):
                raise ValueError(f"{path}:{i}: row needs label attack|benign and a text")
            rows.append(r)
    return rows


def evaluate_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    from . import detect_injection

    def blank() -> dict[str, int]:
        return {"attacks": 0, "caught": 0, "benign": 0, "false_alarms": 0}

    overall, by_lang, by_fam, by_obf, by_carrier = blank(), {}, {}, {}, {}
    missed: list[str] = []
    false_alarms: list[str] = []
    for r in rows:
        hit = detect_injection(r["text"]) is not None
        keys = [(by_lang, r.get("lang") or "?")]
        if r["label"] == "attack":
            keys += [(by_fam, r.get("family") or "?"), (by_obf, r.get("obfuscation") or "none"),
                     (by_carrier, r.get("carrier") or "direct")]
        for table, key in [(None, None)] + keys:
            t = overall if table is None else table.setdefault(key, blank())
            if r["label"] == "attack":
                t["attacks"] += 1
                t["caught"] += hit
            else:
                t["benign"] += 1
                t["false_alarms"] += hit
        if r["label"] == "attack" and not hit:
            missed.append(r.get("id", "?"))
        if r["label"] == "benign" and hit:
            false_alarms.append(r.get("id", "?"))

    def rates(t: dict[str, int]) -> dict[str, Any]:
        return {**t, "recall": (t["caught"] / t["attacks"]) if t["attacks"] else None,
                "fpr": (t["false_alarms"] / t["benign"]) if t["benign"] else None}

    return {
        "rows": len(rows), "overall": rates(overall),
        "by_language": {k: rates(by_lang[k]) for k in sorted(by_lang, key=_lang_key)},
        "by_family": {k: rates(v) for k, v in sorted(by_fam.items())},
        "by_obfuscation": {k: rates(v) for k, v in sorted(by_obf.items())},
        "by_carrier": {k: rates(v) for k, v in sorted(by_carrier.items())},
        "missed": missed, "false_alarms": false_alarms,
    }


def _lang_key(k: str) -> tuple[int, str]:
    return (LANG_ORDER.index(k) if k in LANG_ORDER else len(LANG_ORDER), k)


def check_floors(res: dict[str, Any]) -> list[str]:
    """What the held-out result misses (empty: all floors met)."""
    out = []
    o = res["overall"]
    if o["recall"] is not None and o["recall"] < FLOORS["recall_overall"]:
        out.append(f"recall {o['recall']:.1%} < {FLOORS['recall_overall']:.0%}")
    if o["fpr"] is not None and o["fpr"] > FLOORS["fpr_overall"]:
        out.append(f"false-positive rate {o['fpr']:.1%} > {FLOORS['fpr_overall']:.0%}")
    for lang, t in res["by_language"].items():
        if t["recall"] is not None and t["recall"] < FLOORS["recall_per_language"]:
            out.append(f"recall in {lang} {t['recall']:.1%} < {FLOORS['recall_per_language']:.0%}")
    return out


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def markdown(name: str, res: dict[str, Any]) -> str:
    lines = [f"**{name}** ({res['rows']} rows; overall recall {_pct(res['overall']['recall'])} "
             f"({res['overall']['caught']}/{res['overall']['attacks']}), false-positive rate "
             f"{_pct(res['overall']['fpr'])} ({res['overall']['false_alarms']}/{res['overall']['benign']}))",
             "", "| language | attacks | recall | benign | FPR |", "|---|---:|---:|---:|---:|"]
    for k, t in res["by_language"].items():
        lines.append(f"| {k} | {t['attacks']} | {_pct(t['recall'])} | {t['benign']} | {_pct(t['fpr'])} |")
    lines += ["", "| family | attacks | recall |", "|---|---:|---:|"]
    for k, t in res["by_family"].items():
        lines.append(f"| {k} | {t['attacks']} | {_pct(t['recall'])} |")
    lines += ["", "| obfuscation / carrier | attacks | recall |", "|---|---:|---:|"]
    for k, t in res["by_obfuscation"].items():
        lines.append(f"| {k} | {t['attacks']} | {_pct(t['recall'])} |")
    for k, t in res["by_carrier"].items():
        lines.append(f"| carrier: {k} | {t['attacks']} | {_pct(t['recall'])} |")
    return "\n".join(lines) + "\n"


def _text_report(name: str, res: dict[str, Any], show_ids: bool = True) -> str:
    o = res["overall"]
    out = [f"{name}: {res['rows']} rows  recall {_pct(o['recall'])} ({o['caught']}/{o['attacks']})  "
           f"FPR {_pct(o['fpr'])} ({o['false_alarms']}/{o['benign']})"]
    out.append("  per language: " + "  ".join(
        f"{k} {_pct(t['recall'])}/{_pct(t['fpr'])}" for k, t in res["by_language"].items()))
    out.append("  per family:   " + "  ".join(
        f"{k} {_pct(t['recall'])}" for k, t in res["by_family"].items()))
    if show_ids and res["missed"]:
        out.append("  missed: " + " ".join(res["missed"]))
    if show_ids and res["false_alarms"]:
        out.append("  false alarms: " + " ".join(res["false_alarms"]))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ctxcli.injection.evaluate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=_default_dir(), help="folder with heldout.jsonl and dev.jsonl")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables (for docs/security.md)")
    ap.add_argument("--show-heldout-ids", action="store_true",
                    help="also list which held-out rows were missed (not used while tuning)")
    a = ap.parse_args(argv)
    results = {}
    try:
        for name in ("heldout", "dev"):
            results[name] = evaluate_rows(load_rows(a.data / f"{name}.jsonl"))
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    missed = check_floors(results["heldout"])
    if a.json:
        print(json.dumps({**results, "floors": FLOORS, "floors_missed": missed}, indent=1, sort_keys=True))
    elif a.markdown:
        print(markdown("Held-out part", results["heldout"]))
        print(markdown("Development part", results["dev"]))
    else:
        print(_text_report("held-out", results["heldout"], a.show_heldout_ids))
        print(_text_report("dev", results["dev"]))
        print("floors: " + ("met" if not missed else "MISSED: " + "; ".join(missed)))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
