"""Issue 35, item 1: do the shipped static model's embeddings (wordllama l2_supercat-256, the
``vectors`` extra, ``ctxcli.embed.model.load_model``) help the learned layer? Measured on the
**validation side only** of ``train_learned.py`` (the same rows, the same hash split); nothing
here reads ``public/test.jsonl``, ``heldout.jsonl``, ``indirect.jsonl`` or
``business_negatives.jsonl``, and nothing writes or changes the shipped weights.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 \\
        python tests/data/injection/try_embeddings.py [--epochs 600] [--cost-only]

(about five minutes on one core; needs the ``vectors`` extra). Not a test (pytest collects
``test_*.py`` only).

Variants, fixed before any figure was seen (docs/security.md, "Embedding features from the
shipped static model, tried"); every one trained on the training side of the shipped recipe's
rows (public train, dev, benign prose; ``train_learned.py`` with its defaults and
``--selection``), numpy logistic regression with balanced class weights, Adam, 600 epochs, lr
0.1, L2 1e-6 (``train_learned.train``'s recipe); the features of a training row are those of
its whole normal form; a validation row is scored as ``learned.score`` scores it: texts under
``learned.MIN_CHARS`` score 0, longer ones are scored on every window of ``learned.spans``
(240/120 and 720/360 character windows and runs of one to three sentences) and the highest
window score is the text's. The embedding of a window is the L2-normalised sum of the token
vectors (the model's own rule) of the tokens of the normal form that start inside the window:

* ``ngram``  -- the shipped recipe retrained (``train_learned.py --selection``), the reference;
* ``emb``    -- logistic regression on the 256 embedding dimensions alone;
* ``concat`` -- one logistic regression on the hashed n-gram features and the 256 embedding
  dimensions together (a window's z: bias + char mean + word mean + embedding . weights);
* ``avg``    -- the average of the ``ngram`` and ``emb`` scores of a text (each its highest
  window's).

Each variant's threshold is chosen by ``train_learned.THRESHOLD_RULE`` on the validation side
(the lowest, in steps of 0.01 from 0.50, at which the score alone flags at most 0.5 % of the
validation hard negatives and 0.1 % of the validation prose). Printed: recall of the score alone
and of the combined decision (patterns or score) on the validation attacks, false-positive
rates on the validation hard negatives and prose, per source; and the CPU time
(``time.process_time``, median of 5) of each score on 10 KB of ``benchmarks/injection_cost.py``'s
English and mixed prose (and ``+fast``: the same scores with the window vectors summed in
float32 per segment, see ``Embedder.windows``), beside the shipped ``detect_injection``'s.
``--cost-only`` prints the cost lines alone (no training).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2]))

import train_learned as tl  # noqa: E402

from ctxcli.embed.model import load_model  # noqa: E402
from ctxcli.injection import detect_injection, learned  # noqa: E402
from ctxcli.injection.normalize import normalize_for_scan  # noqa: E402

VARIANTS = ("ngram", "emb", "concat", "avg")


class Embedder:
    """Token prefix sums of a text's embedding rows, so every window's vector is one subtraction."""

    def __init__(self) -> None:
        self.model = load_model()
        self.mat = self.model.matrix()
        self.vocab = self.model.vocab
        self.mat32: np.ndarray | None = None

    def whole(self, texts: list[str]) -> np.ndarray:
        """Unit vectors (rows) of whole texts; a zero row for a text without tokens."""
        out = np.zeros((len(texts), self.model.dim))
        encode = getattr(self.model.tokenizer, "encode_batch_fast", self.model.tokenizer.encode_batch)
        for i, enc in enumerate(encode(texts, add_special_tokens=False)):
            ids = [k for k in enc.ids if 0 <= k < self.vocab]
            if ids:
                v = self.mat[ids].sum(axis=0)
                nv = np.linalg.norm(v)
                out[i] = v / nv if nv > 0 else 0.0
        return out

    def windows(self, norm: str, sp: np.ndarray, fast: bool = False) -> np.ndarray:
        """Unit vectors of the windows ``sp`` (start, end in characters) of ``norm``. ``fast``
        (the cost figures only): the same sums from float32 rows added per segment between
        window boundaries (``np.add.reduceat``), then prefix sums over the segments."""
        enc = self.model.tokenizer.encode(norm, add_special_tokens=False)
        pairs = [(k, o[0]) for k, o in zip(enc.ids, enc.offsets) if 0 <= k < self.vocab]
        out = np.zeros((len(sp), self.model.dim))
        if not pairs:
            return out
        ids = np.array([k for k, _ in pairs])
        starts = np.array([s for _, s in pairs])
        order = np.argsort(starts, kind="stable")
        ids, starts = ids[order], starts[order]
        j0 = np.searchsorted(starts, sp[:, 0], "left")
        j1 = np.searchsorted(starts, sp[:, 1], "left")
        if fast:
            if self.mat32 is None:
                self.mat32 = self.mat.astype(np.float32)
            bnd = np.unique(np.concatenate([j0, j1, [0]]))
            bnd = bnd[bnd < len(ids)]
            P = np.zeros((len(bnd) + 1, self.model.dim), dtype=np.float32)
            P[1:] = np.cumsum(np.add.reduceat(self.mat32[ids], bnd, axis=0), axis=0)
            V = (P[np.searchsorted(bnd, j1)] - P[np.searchsorted(bnd, j0)]).astype(np.float64)
        else:
            P = np.zeros((len(ids) + 1, self.model.dim))
            P[1:] = np.cumsum(self.mat[ids], axis=0)
            V = P[j1] - P[j0]
        nv = np.linalg.norm(V, axis=1)
        ok = nv > 0
        out[ok] = V[ok] / nv[ok, None]
        return out


def ngram_z(norm: str, sp: np.ndarray, wc: np.ndarray, ww: np.ndarray) -> np.ndarray:
    """Char mean + word mean of every window (no bias): ``learned.score``'s arithmetic."""
    wb, wp = learned.word_features(norm)
    cs, cc = learned._char_sums(norm, wc)
    ws, wn = learned._window_sums(len(norm), wp, ww[wb])
    a, b = sp[:, 0], sp[:, 1]
    return (cs[b] - cs[a]) / np.maximum(cc[b] - cc[a], 1) + (ws[b] - ws[a]) / np.maximum(wn[b] - wn[a], 1)


def _sig(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


class Scorers:
    """The fitted variants; ``score(norm)`` gives each variant's text score."""

    def __init__(self, emb: Embedder, fits: dict) -> None:
        self.emb = emb
        # as shipped: n-gram weights stored as float16, read as float32
        self.ng = [fits["ngram"][0][:learned.DIM].astype(np.float16).astype(np.float32),
                   fits["ngram"][0][learned.DIM:].astype(np.float16).astype(np.float32), fits["ngram"][1]]
        wcat, we_cat, bcat = fits["concat"]
        self.cat = [wcat[:learned.DIM].astype(np.float16).astype(np.float32),
                    wcat[learned.DIM:].astype(np.float16).astype(np.float32), we_cat, bcat]
        self.e = fits["emb"]

    def score(self, norm: str, which: tuple[str, ...] = VARIANTS, fast: bool = False) -> dict[str, float]:
        if len(norm) < learned.MIN_CHARS:
            return dict.fromkeys(which, 0.0)
        sp = learned.spans(norm)
        out: dict[str, float] = {}
        if {"ngram", "avg"} & set(which):
            out["ngram"] = float(_sig(self.ng[2] + ngram_z(norm, sp, self.ng[0], self.ng[1])).max())
        if {"emb", "concat", "avg"} & set(which):
            U = self.emb.windows(norm, sp, fast)
            if {"emb", "avg"} & set(which):
                out["emb"] = float(_sig(self.e[1] + U @ self.e[0]).max())
            if "concat" in which:
                wc, ww, we, b = self.cat
                out["concat"] = float(_sig(b + ngram_z(norm, sp, wc, ww) + U @ we).max())
        if "avg" in which:
            out["avg"] = (out["ngram"] + out["emb"]) / 2
        return {k: out[k] for k in which}


def adam_lr(R, C, V, E, y, sw, *, epochs: int, l2: float, lr: float):  # noqa: ANN001
    """``train_learned.train``'s logistic regression and Adam steps (the same arithmetic, one
    parameter vector) over sparse n-grams (R, C, V: COO from ``train_learned.design``, or None)
    and dense features E (or None); returns (sparse weights, dense weights, bias)."""
    n = len(y)
    d = 2 * learned.DIM if R is not None else 0
    k = E.shape[1] if E is not None else 0
    theta = np.zeros(d + k + 1)
    m, v = np.zeros_like(theta), np.zeros_like(theta)
    b1, b2 = 0.9, 0.999
    for t in range(1, epochs + 1):
        z = np.full(n, theta[-1])
        if d:
            z += np.bincount(R, weights=V * theta[C], minlength=n)
        if k:
            z += E @ theta[d:d + k]
        g = (1.0 / (1.0 + np.exp(-z)) - y) * sw
        grad = np.zeros_like(theta)
        if d:
            grad[:d] = np.bincount(C, weights=V * g[R], minlength=d)
        if k:
            grad[d:d + k] = E.T @ g
        grad[:-1] += l2 * theta[:-1]
        grad[-1] = g.sum()
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        theta -= lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + 1e-8)
    return theta[:d], theta[d:d + k], float(theta[-1])


def figures(sc: np.ndarray, pat: np.ndarray, val: list, th: float | None = None) -> tuple[float, dict, list[str]]:
    """The threshold by THRESHOLD_RULE (or ``th``), the summary at it, and per-source lines."""
    y = np.array([r[1] for r in val])
    prose_src = np.array([r[2].startswith(("gettext", "metadata")) for r in val])
    hard = (y == 0) & ~prose_src
    prose = (y == 0) & prose_src
    more = np.array([r[2] == "more" for r in val]) & (y == 1)
    if th is None:
        th = 0.99
        for t in np.round(np.arange(0.50, 1.0, 0.01), 2):
            f = sc >= t
            if f[hard].mean() <= tl.THRESHOLD_RULE[0] and f[prose].mean() <= tl.THRESHOLD_RULE[1]:
                th = float(t)
                break
    f = sc >= th
    c = f | pat
    s = {"threshold": th, "learned_recall": f[y == 1].mean(), "learned_hard": f[hard].mean(),
         "learned_prose": f[prose].mean(), "combined_recall": c[y == 1].mean(),
         "combined_attacks": int(c[y == 1].sum()), "combined_carriers": c[more].mean(),
         "combined_hard": c[hard].mean(), "combined_prose": c[prose].mean()}
    return th, s, tl.per_source(val, y, f, c)


def cost(scorers: Scorers) -> list[str]:
    """CPU time of each variant's score of 10 KB of the cost benchmark's prose (its normal form),
    median of 5 after a warm-up; ``+fast``: the embedding windows summed as ``Embedder.windows``
    with ``fast`` (the same scores up to float32 rounding, printed)."""
    sys.path.insert(0, str(HERE.parents[2] / "benchmarks"))
    import injection_cost as ic

    lines = [f"{'variant':12} {'prose':8} ms/10KB (CPU, median of 5; the learned score of the normal form only; "
             "detector: the shipped detect_injection, patterns and learned layer, on the raw text)"]
    for name, sents in (("english", ic.EN), ("mixed", ic.MIXED)):
        raw = ic.prose(sents, 10_000)
        norm = normalize_for_scan(raw)
        fns = {"detector": lambda _t, raw=raw: detect_injection(raw), "shipped": lambda t: learned.score(t)}
        fns.update({v: (lambda t, v=v: scorers.score(t, (v,))) for v in VARIANTS})
        fns.update({v + "+fast": (lambda t, v=v: scorers.score(t, (v,), fast=True)) for v in VARIANTS[1:]})
        for v, fn in fns.items():
            fn(norm)
            reps = []
            for _ in range(5):
                t0 = time.process_time()
                fn(norm)
                reps.append(time.process_time() - t0)
            lines.append(f"{v:12} {name:8} {statistics.median(reps) * 1000:7.2f}")
        d = max(abs(scorers.score(norm)[v] - scorers.score(norm, fast=True)[v]) for v in VARIANTS)
        lines.append(f"  fast against exact scores, {name}: max |difference| {d:.1e}")
    from ctxcli.embed import model as em

    em._CACHE.clear()
    t0 = time.process_time()
    load_model().matrix()
    lines.append(f"model load + float64 matrix, once per process: {time.process_time() - t0:.2f} s CPU")
    return lines


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--epochs", type=int, default=tl.EPOCHS)
    ap.add_argument("--cost-only", action="store_true",
                    help="no training, no validation figures: the cost lines only (random weights of the "
                    "variants' shapes; the time does not depend on their values)")
    a = ap.parse_args(argv)
    if a.cost_only:
        rng = np.random.default_rng(0)
        fits = {"ngram": (rng.normal(0, 1, 2 * learned.DIM), -1.0), "emb": (rng.normal(0, 1, 256), -1.0),
                "concat": (rng.normal(0, 1, 2 * learned.DIM), rng.normal(0, 1, 256), -1.0)}
        print("\n".join(cost(Scorers(Embedder(), fits))))
        return 0
    rows = tl.all_rows()
    # the shipped recipe's rows (train_learned.py's defaults: no --with)
    gone = set(tl.extra_sources()) | {"more"}
    kept = [r for r in rows if r[2] not in gone]
    train_rows = tl.training_rows(rows=kept)
    val = [r for r in rows if r[3]]          # as validation_report: every validation-side row
    texts = [t for t, _, _ in train_rows]
    y = np.array([lab for _, lab, _ in train_rows], dtype=np.float64)
    sw = tl.sample_weights(y, np.zeros(len(y), dtype=bool), 0.0)
    print(f"trained on {len(train_rows)} rows ({int(y.sum())} attacks); validation {len(val)} rows "
          f"({sum(r[1] for r in val)} attacks)", flush=True)
    emb = Embedder()
    E = emb.whole(texts)
    R, C, V = tl.design(texts)
    kw = {"epochs": a.epochs, "l2": tl.L2, "lr": tl.LR}
    t0 = time.process_time()
    w_ng, b_ng = tl.train(texts, y, sw=sw, **kw)      # the shipped recipe, as --selection trains it
    print(f"ngram fitted ({time.process_time() - t0:.0f} s CPU)", flush=True)
    _, we, be = adam_lr(None, None, None, E, y, sw, **kw)
    print("emb fitted", flush=True)
    wc, wce, bc = adam_lr(R, C, V, E, y, sw, **kw)
    print("concat fitted", flush=True)
    sc = Scorers(emb, {"ngram": (w_ng, b_ng), "emb": (we, be), "concat": (wc, wce, bc)})
    # check: the ngram variant scores as learned.score does with the same weights saved as shipped
    shipped = (learned.WEIGHTS_FILE, learned.WEIGHTS_SHA256)
    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "w.npz"
        tl.use_weights(f, tl.save(w_ng, b_ng, f))
        diff = max(abs(learned.score(norm).score - sc.score(norm, ("ngram",))["ngram"]) for norm, *_ in val[:300])
    tl.use_weights(*shipped)        # the shipped weights again (the cost figures' reference)
    print(f"ngram variant against learned.score, 300 validation rows: max |difference| {diff:.2e}", flush=True)
    pat = np.array([detect_injection(raw, use_learned=False) is not None for *_, raw in val])
    S = {v: np.zeros(len(val)) for v in VARIANTS}
    for i, (norm, *_) in enumerate(val):
        for v, s in sc.score(norm).items():
            S[v][i] = s
    y_val = np.array([r[1] for r in val])
    print(f"patterns alone: recall {pat[y_val == 1].mean():.1%} ({int(pat[y_val == 1].sum())})")
    print("variant (threshold)  learned: recall  hard-FPR  prose-FPR | combined: recall (n)  carriers  hard-FPR  prose-FPR")
    report = []
    for v in VARIANTS:
        runs = [(v, None)] + ([(v + "@0.93", 0.93)] if v == "ngram" else [])
        for label, th in runs:
            th, s, lines = figures(S[v], pat, val, th)
            print(f"{label:12s} ({th:.2f})  {s['learned_recall']:7.1%}  {s['learned_hard']:7.2%}  "
                  f"{s['learned_prose']:8.3%} | {s['combined_recall']:7.1%} ({s['combined_attacks']})  "
                  f"{s['combined_carriers']:7.1%}  {s['combined_hard']:7.2%}  {s['combined_prose']:8.3%}", flush=True)
            report += [f"{label} at {th:.2f}, per source (score alone / combined):"] + lines
    print("\n".join(report))
    print("\n".join(cost(sc)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
