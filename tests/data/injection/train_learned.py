"""Train the learned layer's weights (src/ctxcli/injection/data/<model>-<version>.npz), offline,
numpy only (no scikit-learn), on a laptop-sized budget (about a minute on one core):

    nice -n 10 python tests/data/injection/train_learned.py [--out FILE] [--report]

Training rows (and only these):
* ``public/train.jsonl`` -- the train side of the public corpora (build_public.py);
* ``dev.jsonl`` -- this repo's development rows (attacks and benign, ten languages);
* benign prose: translated program messages of the machine's gettext catalogues
  (``/usr/share/locale/<lang>/LC_MESSAGES/*.mo``, ten languages, msgid for English) and the
  package descriptions of the installed Python distributions (``*.dist-info/METADATA``), cut
  into windows of the scorer's first window size.
Never used for training: ``public/test.jsonl``, ``heldout.jsonl``, ``indirect.jsonl``,
``business_negatives.jsonl`` and the bundled sources.

Prints the new file's sha256 and the threshold (the 99th percentile of the hard training
negatives' scores -- the benign rows of dev.jsonl and public/train.jsonl --, rounded to two places): put them into ``learned.WEIGHTS_SHA256`` and
``learned.THRESHOLD``. The shipped weights: defaults (600 epochs, Adam, lr 0.1, L2 1e-6,
balanced class weights, no augmentation).
"""

from __future__ import annotations

import argparse
import gettext
import glob
import hashlib
import json
import sys
from email.parser import Parser
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2] / "src"))

from ctxcli.injection import learned  # noqa: E402
from ctxcli.injection.normalize import normalize_for_scan  # noqa: E402

LOCALES = {"de": "de", "fr": "fr", "es": "es", "it": "it", "pt": "pt_BR", "ja": "ja", "ko": "ko",
           "ru": "ru", "zh": "zh_CN"}
PER_LANG = 1500
ENGLISH_WINDOWS = 3000


def _keep(key: str, mod: int, n: int) -> bool:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % mod < n


def _jsonl(p: Path) -> list[dict]:
    return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]


def catalog_strings() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    english: set[str] = set()
    for lang, loc in LOCALES.items():
        texts: set[str] = set()
        for f in sorted(glob.glob(f"/usr/share/locale/{loc}/LC_MESSAGES/*.mo")):
            try:
                with open(f, "rb") as fh:
                    cat = gettext.GNUTranslations(fh)._catalog  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - a catalogue we cannot read is skipped
                continue
            for k, v in cat.items():
                if isinstance(k, str) and isinstance(v, str) and 20 <= len(v) <= 600 and "%" not in v:
                    texts.add(v)
                    if 20 <= len(k) <= 600 and "%" not in k:
                        english.add(k)
        picked = sorted(texts, key=lambda t: hashlib.sha256(t.encode()).hexdigest())[:PER_LANG]
        out += [(lang, t) for t in picked]
    picked = sorted(english, key=lambda t: hashlib.sha256(t.encode()).hexdigest())[:PER_LANG]
    return out + [("en", t) for t in picked]


def metadata_windows() -> list[str]:
    size = learned.WINDOWS[0][0]
    chunks: list[str] = []
    for f in sorted(glob.glob(sys.prefix + "/lib/python3*/site-packages/*.dist-info/METADATA")):
        body = Parser().parsestr(Path(f).read_text(encoding="utf-8", errors="replace")).get_payload()
        if not isinstance(body, str):
            continue
        norm = normalize_for_scan(body)
        chunks += [norm[i:i + size] for i in range(0, max(len(norm) - size // 2, 0), size)]
    chunks = [c for c in chunks if len(c) >= 60]
    return sorted(chunks, key=lambda t: hashlib.sha256(t.encode()).hexdigest())[:ENGLISH_WINDOWS]


def training_rows(augment: bool = False) -> list[tuple[str, int, str]]:
    """(normal form, label 1 attack / 0 benign, source) of every training row. With
    ``augment``, every training attack is also planted between two benign prose windows
    (a retrieved document carrying an instruction)."""
    rows: list[tuple[str, int, str]] = []
    for r in _jsonl(HERE / "public" / "train.jsonl"):
        rows.append((normalize_for_scan(r["text"]), int(r["label"] == "attack"), "public:" + r["corpus"]))
    for r in _jsonl(HERE / "dev.jsonl"):
        rows.append((normalize_for_scan(r["text"]), int(r["label"] == "attack"), "dev"))
    for lang, t in catalog_strings():
        rows.append((normalize_for_scan(t), 0, "gettext:" + lang))
    prose = metadata_windows()
    for t in prose:
        rows.append((t, 0, "metadata"))
    if augment:
        attacks = [t for t, lab, _ in rows if lab == 1]
        for i, t in enumerate(attacks):
            a, b = prose[(2 * i) % len(prose)], prose[(2 * i + 1) % len(prose)]
            rows.append((a[: len(a) // 2] + "\n" + t + "\n" + b[: len(b) // 2], 1, "augmented"))
    return [r for r in rows if r[0]]


def design(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """COO (row, column, value) of the mean-normalised char (columns < DIM) and word
    (columns >= DIM) features."""
    R, C, V = [], [], []
    for i, t in enumerate(texts):
        cb, _ = learned.char_features(t)
        wb, _ = learned.word_features(t)
        for b, off in ((cb, 0), (wb, learned.DIM)):
            if len(b):
                u, k = np.unique(b, return_counts=True)
                R.append(np.full(len(u), i))
                C.append(u + off)
                V.append(k / len(b))
    return np.concatenate(R), np.concatenate(C), np.concatenate(V)


def train(texts: list[str], y: np.ndarray, *, epochs: int, l2: float, lr: float) -> tuple[np.ndarray, float]:
    R, C, V = design(texts)
    n, d = len(texts), 2 * learned.DIM
    pos = y.sum()
    sw = np.where(y == 1, 0.5 / pos, 0.5 / (n - pos))          # balanced classes
    w = np.zeros(d)
    b = 0.0
    m, v = np.zeros(d), np.zeros(d)
    mb, vb = 0.0, 0.0
    b1, b2 = 0.9, 0.999
    for t in range(1, epochs + 1):
        z = np.bincount(R, weights=V * w[C], minlength=n) + b
        p = 1.0 / (1.0 + np.exp(-z))
        g = (p - y) * sw
        gw = np.bincount(C, weights=V * g[R], minlength=d) + l2 * w
        gb = g.sum()
        m = b1 * m + (1 - b1) * gw
        v = b2 * v + (1 - b2) * gw * gw
        mb = b1 * mb + (1 - b1) * gb
        vb = b2 * vb + (1 - b2) * gb * gb
        w -= lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + 1e-8)
        b -= lr * (mb / (1 - b1 ** t)) / (np.sqrt(vb / (1 - b2 ** t)) + 1e-8)
    return w, b


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=learned.WEIGHTS_FILE)
    ap.add_argument("--epochs", type=int, default=600)
    ap.add_argument("--l2", type=float, default=1e-6)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--augment", action="store_true", help="also plant every attack in benign prose "
                    "(tried: more recall on indirect rows, more false alarms; not the shipped weights)")
    a = ap.parse_args(argv)
    rows = training_rows(augment=a.augment)
    texts = [t for t, _, _ in rows]
    y = np.array([lab for _, lab, _ in rows], dtype=np.float64)
    print(f"training rows: {len(rows)} ({int(y.sum())} attacks)", file=sys.stderr)
    w, b = train(texts, y, epochs=a.epochs, l2=a.l2, lr=a.lr)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    wc = w[: learned.DIM].astype(np.float16)
    ww = w[learned.DIM:].astype(np.float16)
    tmp = a.out.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, char=wc, word=ww, bias=np.array([b], dtype=np.float64))
    tmp.replace(a.out)
    sha = hashlib.sha256(a.out.read_bytes()).hexdigest()
    # the threshold: the 99th percentile of the hard training negatives (the benign rows of
    # dev.jsonl and public/train.jsonl: business text with trigger words), training data only
    learned.WEIGHTS_FILE, learned.WEIGHTS_SHA256 = a.out, sha
    learned.weights.cache_clear()
    hard = np.sort([learned.score(t).score for t, lab, src in rows if lab == 0 and not src.startswith(("gettext", "metadata"))])
    print(f"sha256 {sha}\nthreshold (99th percentile of the hard training negatives) {hard[int(0.99 * len(hard))]:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
