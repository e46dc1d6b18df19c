"""Train the intent layer's weights (``src/ctxcli/injection/data/intent-lr-3.json``, issue 53),
numpy only, in seconds, on committed training rows only:

* the **train** side of the shared dev set (``shared/dev.jsonl`` by ``shared/split.json``);
* ``dev.jsonl``, ``public/train.jsonl``, ``public/train_extra.jsonl``, ``train_more.jsonl``,
  ``intent_train.jsonl`` (written for issue 53) and ``benign_prose.jsonl``.

Never read: the shared set's validation and test sides, ``public/test.jsonl``, ``heldout.jsonl``,
``indirect.jsonl``, ``business_negatives.jsonl``.

    python tests/data/injection/train_intent.py [--out FILE]

A document's score is its strongest unit's (segment or window of two), so training is
multiple-instance: a benign document's every unit is a negative example; an attack contributes
its strongest unit under the current weights (five rounds, starting from weights that trust
every pair of features). A logistic regression with an L2 penalty, fitted by Newton steps.
The hard negatives (every benign training row but the frozen prose) weigh as much as the prose.
The threshold: the lowest (in steps of 0.01) at which at most 1 % of the training hard
negatives and at most 0.1 % of the prose score at or above it. Prints the weights' sha256 and the threshold for
``ctxcli.injection_identity`` (``INTENT_SHA256``, ``INTENT_THRESHOLD``)."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "src"))

from ctxcli.injection import intent  # noqa: E402
from ctxcli.injection.normalize import normalize_for_scan  # noqa: E402

FILES = ("dev.jsonl", "public/train.jsonl", "public/train_extra.jsonl", "train_more.jsonl",
         "intent_train.jsonl", "benign_prose.jsonl")
L2 = 1.0
ROUNDS = 5
HARD_RULE = 0.01     # at most 1 % of the training hard negatives (the false-positive target)
PROSE_RULE = 0.001   # and at most 0.1 % of the ordinary prose (most of what ctx reads)


def shared_rows(side: str) -> list[dict]:
    """The rows of one side of the shared dev set, labels as attack/benign."""
    split = json.loads((HERE / "shared" / "split.json").read_text())["units"]
    out = []
    for line in (HERE / "shared" / "dev.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if split[unit_of(r)] == side:
            out.append({**r, "label": "attack" if r["label"] == 1 else "benign"})
    return out


def unit_of(r: dict) -> str:
    """A shared row's split unit: its source (synthreat: its source and language)."""
    return f"{r['source']}|{r['lang']}" if r["source"].startswith("synthreat") else r["source"]


def training_rows() -> list[dict]:
    rows = shared_rows("train")
    for name in FILES:
        for line in (HERE / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                if name == "benign_prose.jsonl":
                    r["label"], r["_prose"] = "benign", True
                rows.append(r)
    return rows


def doc_units(text: str) -> np.ndarray:
    """The distinct feature vectors of a document's units (a featureless one if none)."""
    keys = {(m, rc) for _, _, m, rc in intent.units(normalize_for_scan(text))} or {(0, 0)}
    return np.array([intent.vector(m, rc) for m, rc in sorted(keys)])


def fit(x: np.ndarray, y: np.ndarray, sw: np.ndarray) -> np.ndarray:
    """Weights (bias first) of an L2-penalised logistic regression (Newton steps)."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], L2)
    reg[0] = 0.0
    for _ in range(30):
        p = 1 / (1 + np.exp(-(xb @ w)))
        g = xb.T @ (sw * (p - y)) + reg * w
        h = (xb * (sw * p * (1 - p))[:, None]).T @ xb + np.diag(reg + 1e-9)
        step = np.linalg.solve(h, g)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=intent.WEIGHTS_FILE)
    a = ap.parse_args()
    rows = training_rows()
    docs = [(doc_units(r["text"]), r["label"] == "attack") for r in rows]
    prose = [r.get("_prose", False) for r in rows]
    neg_docs = [(u, p) for (u, att), p in zip(docs, prose) if not att]
    neg = np.vstack([u for u, _ in neg_docs])
    # the hard negatives (every benign row but the frozen prose) weigh as much as the prose
    n_hard = sum(1 for _, p in neg_docs if not p)
    n_prose = len(neg_docs) - n_hard
    neg_w = np.concatenate([np.full(len(u), max(n_prose / max(n_hard, 1), 1.0) if not p else 1.0)
                            for u, p in neg_docs])
    n_neg_docs = len(neg_docs)
    pos_docs = [u for u, att in docs if att]
    nb = len(intent.ALONE)
    w = np.concatenate([[-3.0], np.zeros(nb), np.ones(len(intent.PAIRS))])
    for _ in range(ROUNDS):
        pos = np.vstack([u[int(np.argmax(u @ w[1:]))] for u in pos_docs])
        x = np.vstack([pos, neg])
        y = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))])
        sw = np.concatenate([np.full(len(pos), neg_w.sum() / len(pos)), neg_w])
        w = fit(x, y, sw)

    def doc_scores(att: bool) -> np.ndarray:
        return np.array([1 / (1 + np.exp(-(w[0] + (u @ w[1:]).max()))) for u, a2 in docs if a2 == att])

    sb, sa = doc_scores(False), doc_scores(True)
    hard = np.array([not p for _, p in neg_docs])
    thr = next(t for t in np.round(np.arange(0.05, 1.0, 0.01), 2)
               if (sb[hard] >= t).mean() <= HARD_RULE and (sb[~hard] >= t).mean() <= PROSE_RULE)
    weights = {"bias": round(float(w[0]), 6)}
    weights.update({f: round(float(v), 6) for f, v in zip(intent.FEATURES, w[1:])})
    data = json.dumps({"model": intent.INTENT_MODEL, "version": intent.INTENT_VERSION, "weights": weights}, indent=1, sort_keys=True) + "\n"
    a.out.write_text(data)
    print(f"rows {len(rows)} (attacks {len(pos_docs)}, benign {n_neg_docs}); negative units {len(neg)}")
    print(f"threshold {thr}: training recall {(sa >= thr).mean():.3f}, training FPR hard negatives "
          f"{(sb[hard] >= thr).mean():.4f} ({hard.sum()}), prose {(sb[~hard] >= thr).mean():.4f} ({(~hard).sum()})")
    print(f"{a.out.name} sha256 {hashlib.sha256(data.encode()).hexdigest()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
