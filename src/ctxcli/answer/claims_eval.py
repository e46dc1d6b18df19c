"""The claim checker on its labelled corpus: ``python -m ctxcli.answer.claims_eval [corpus.jsonl]``.

Prints, per split and per expected violation kind, how many wrong claims are rejected and how
many right claims are rejected. Exits 1 when, on the held-out split, fewer than ``--min-wrong``
of the wrong claims are rejected or more than ``--max-right`` of the right ones are (defaults: the
issue-44 floors, 95 % and 2 %). The corpus (tests/data/claims/, see its generate.py) carries
the cited items in ``items.json`` beside it (with the deterministic answer's claims, ``twins``, and
the playbook's rule conditions, ``rules``: claim id -> ``when``, as ``ctx validate-answer`` has them).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from .validate import check_cited


def evaluate(corpus: Path) -> dict[str, dict[str, list[int]]]:
    """split -> kind -> [rejected, total]; right claims are counted under kind ``right``."""
    side = json.loads((corpus.parent / "items.json").read_text(encoding="utf-8"))
    items, twins, rules = side["items"], side["twins"], side.get("rules")
    out: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for line in corpus.read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        vs = check_cited(r["text"], r["status"], [items[c] for c in r["cites"]], twins=twins, rules=rules,
                          req_texts=[r["case"]])
        rejected = any(v.get("severity") != "warning" for v in vs)
        kind = r["kind"] if r["label"] == "wrong" else "right"
        cell = out[r["split"]][kind]
        cell[0] += rejected
        cell[1] += 1
        wrong = out[r["split"]]["all wrong"] if r["label"] == "wrong" else None
        if wrong is not None:
            wrong[0] += rejected
            wrong[1] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ctxcli.answer.claims_eval")
    ap.add_argument("corpus", nargs="?", default="tests/data/claims/corpus.jsonl")
    ap.add_argument("--min-wrong", type=float, default=0.95)
    ap.add_argument("--max-right", type=float, default=0.02)
    a = ap.parse_args(argv)
    res = evaluate(Path(a.corpus))
    for split in ("tuning", "heldout"):
        for kind, (rej, n) in sorted(res[split].items()):
            print(f"{split:8} {kind:18} rejected {rej:4}/{n:<4} {rej / n:7.1%}")
    w, r = res["heldout"]["all wrong"], res["heldout"]["right"]
    ok = w[1] and r[1] and w[0] / w[1] >= a.min_wrong and r[0] / r[1] <= a.max_right
    print(f"held-out: wrong rejected {w[0] / max(w[1], 1):.1%} (floor {a.min_wrong:.0%}), right rejected "
          f"{r[0] / max(r[1], 1):.1%} (ceiling {a.max_right:.0%}): {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
