"""Train the learned layer's weights (src/ctxcli/injection/data/<model>-<version>.npz), offline,
numpy only (no scikit-learn), on a laptop-sized budget (a few minutes on one core):

    nice -n 10 python tests/data/injection/train_learned.py [--out FILE] [--no-report]

Rows (committed files only, so the same command gives the same weights -- the same sha256 --
on any machine with the same numpy):
* ``public/train.jsonl`` -- the train side of the public corpora (build_public.py);
* ``dev.jsonl`` -- this repo's development rows (attacks and benign, ten languages);
* with ``--with extra``: ``public/train_extra.jsonl`` -- training-only public corpora
  (build_public.py --extra; seven packages since issue 35's second round); with ``--with
  more``: ``train_more.jsonl`` -- more rows written for training (build_train_more.py):
  attacks hidden in tickets, e-mails, front matter, table cells, code comments and chat logs,
  and business hard negatives in the same carriers, ten languages.
  Both tried, neither in the shipped weights (docs/security.md). With ``--framing`` the
  rows are featurised as ``learned.score`` reads them for weights that record it: with the
  quotes the patterns treat as framed examples masked (``learned.mask``; tried, not shipped). The validation-side rows of
  both are always part of the validation figures, whatever ``--with`` says;
* ``benign_prose.jsonl`` -- benign prose frozen once from a machine (``--freeze-benign``):
  1,500 translated program messages per language of the gettext catalogues
  (``/usr/share/locale/<lang>/LC_MESSAGES/*.mo``, nine languages plus their English msgids)
  and 2,961 240-character windows of the installed Python distributions' descriptions.
Never read: ``public/test.jsonl``, ``heldout.jsonl``, ``indirect.jsonl``,
``business_negatives.jsonl`` and the bundled sources.

Every row's group (a spikee template, a dev sentence with its carriers, a train_more concept
with its translations, a prose row) goes to the training or the validation side by a hash
(about one in five to validation). The weights are trained on the training side only; the
epochs, the sources and the threshold are chosen on the validation side, whose figures are
printed with ``--selection`` (the threshold: THRESHOLD_RULE below; the recipe: the highest
combined recall on the validation attacks at that threshold, a lead of one attack or less
going to the recipe with fewer validation false positives; and the shipped weights must keep
the false-positive floors of ``ctxcli.injection.evaluate``). Without ``--selection`` the chosen
recipe -- the defaults -- is refitted on both sides: the shipped weights. Put the printed sha256
and the selection run's threshold into ``injection_identity.WEIGHTS_SHA256`` and ``THRESHOLD``.
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
BENIGN_FILE = HERE / "benign_prose.jsonl"
EPOCHS, L2, LR, HARD_SHARE = 600, 1e-6, 0.1, 0.0
# the sources read besides public/train.jsonl, dev.jsonl and the prose (``--with``): none for
# the shipped weights (ngram-lr@2). The recipe that won on the validation side in issue 35's
# second round (``--with extra --hard-share 0.25``) is not shipped: on the test sets it broke the
# false-positive floors, and so did the third, pre-registered candidate, the same recipe with
# ``--framing`` (docs/security.md)
WITH = ""
# the threshold: the lowest (in steps of 0.01) at which the learned layer alone flags at most
# this share of the validation side's hard negatives and of its benign prose. Tightened to
# target (c) for the third candidate (0.5 %, was 1 %); ngram-lr@2's 0.93 was chosen by the
# first rule, (0.01, 0.001)
THRESHOLD_RULE = (0.005, 0.001)
# train and score the text with the framed quotes masked (learned.mask; the weights record
# ``framing`` 1 and learned.score masks only for them): off for ngram-lr@2 (the third candidate,
# not shipped, had it on)
FRAMING = False


def _keep(key: str, mod: int, n: int) -> bool:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % mod < n


def _jsonl(p: Path) -> list[dict]:
    return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()]


def catalog_strings() -> list[tuple[str, str]]:
    """(lang, text) of the machine's gettext catalogues (``--freeze-benign`` only)."""
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
    """Windows of the installed distributions' descriptions (``--freeze-benign`` only)."""
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


def freeze_benign(path: Path) -> int:
    """Write BENIGN_FILE from this machine's gettext catalogues and installed package
    descriptions: done once (2026-12-02, in the project's .venv on Debian); training reads the
    committed file only, so the weights do not depend on the machine."""
    rows = [{"source": "gettext:" + lang, "lang": lang, "text": t} for lang, t in catalog_strings()]
    rows += [{"source": "metadata", "lang": "en", "text": t} for t in metadata_windows()]
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    return len(rows)


def _validation(key: str) -> bool:
    """Whether a row's group goes to the validation side (about one group in five)."""
    return _keep("val:" + key, 10, 2)


def all_rows() -> list[tuple[str, int, str, bool, str]]:
    """(normal form, label 1 attack / 0 benign, source, on the validation side, text) of every
    row training may read -- committed files only, in a fixed order."""
    rows: list[tuple[str, int, str, bool, str]] = []

    def add(text: str, label: str, source: str, group: str) -> None:
        rows.append((normalize_for_scan(text), int(label == "attack"), source, _validation(group), text))

    for r in _jsonl(HERE / "public" / "train.jsonl"):
        grp = r["category"] if r["corpus"] == "spikee" else r["id"]   # a spikee template stays on one side
        add(r["text"], r["label"], "public:" + r["corpus"], r["corpus"] + ":" + grp)
    for r in _jsonl(HERE / "public" / "train_extra.jsonl"):
        add(r["text"], r["label"], "public:" + r["corpus"], r["corpus"] + ":" + r["id"].split("#")[0])
    for r in _jsonl(HERE / "dev.jsonl"):
        add(r["text"], r["label"], "dev", "dev:" + r["id"].rsplit("-", 1)[0])
    for r in _jsonl(HERE / "train_more.jsonl"):
        add(r["text"], r["label"], "more", "more:" + r["group"])
    for r in _jsonl(BENIGN_FILE):
        add(r["text"], "benign", r["source"], "prose:" + r["text"])
    return [r for r in rows if r[0]]


def extra_sources() -> list[str]:
    """The sources of ``public/train_extra.jsonl`` (``--with extra``), ``public:<corpus>``."""
    return sorted({"public:" + r["corpus"] for r in _jsonl(HERE / "public" / "train_extra.jsonl")})


def training_rows(augment: bool = False, rows: list | None = None) -> list[tuple[str, int, str]]:
    """(normal form, label, source) of the training side. With ``augment``, every training
    attack is also planted between two benign prose windows (a retrieved document carrying an
    instruction)."""
    rows = [(t, lab, src) for t, lab, src, val, _ in (all_rows() if rows is None else rows) if not val]
    if augment:
        prose = [t for t, _, src in rows if src == "metadata"]
        attacks = [t for t, lab, _ in rows if lab == 1]
        for i, t in enumerate(attacks):
            a, b = prose[(2 * i) % len(prose)], prose[(2 * i + 1) % len(prose)]
            rows.append((a[: len(a) // 2] + "\n" + t + "\n" + b[: len(b) // 2], 1, "augmented"))
    return rows


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


def sample_weights(y: np.ndarray, prose: np.ndarray, hard_share: float) -> np.ndarray:
    """Attacks weigh 0.5 in all; the benign rows the other half, of which the hard negatives
    (benign rows that are not frozen prose) get ``hard_share`` and the prose the rest (with
    ``hard_share`` 0, every benign row weighs the same: the first recipe)."""
    pos = y.sum()
    if hard_share <= 0:
        return np.where(y == 1, 0.5 / pos, 0.5 / (len(y) - pos))
    hard = (y == 0) & ~prose
    return np.where(y == 1, 0.5 / pos, np.where(hard, hard_share / hard.sum(), (0.5 - hard_share) / prose.sum()))


def train(texts: list[str], y: np.ndarray, *, epochs: int, l2: float, lr: float,
          sw: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    R, C, V = design(texts)
    n, d = len(texts), 2 * learned.DIM
    if sw is None:
        sw = sample_weights(y, np.zeros(n, dtype=bool), 0.0)
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


def save(w: np.ndarray, b: float, out: Path, framing: bool = False) -> str:
    """Write the weights (float16) to ``out``; return its sha256. The archive is written
    with fixed member times, so the same weights give the same bytes. ``framing``: the
    weights were trained on masked text (recorded as ``framing`` 1; nothing recorded without)."""
    import io
    import zipfile

    out.parent.mkdir(parents=True, exist_ok=True)
    arrays = {"char": w[: learned.DIM].astype(np.float16), "word": w[learned.DIM:].astype(np.float16),
              "bias": np.array([b], dtype=np.float64)}
    if framing:
        arrays["framing"] = np.array([1], dtype=np.int64)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, arr in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, arr, allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, member.getvalue())
    out.write_bytes(buf.getvalue())
    return hashlib.sha256(buf.getvalue()).hexdigest()


def use_weights(path: Path, sha: str) -> None:
    """Score with the weights at ``path`` in this process (the training report)."""
    learned.WEIGHTS_FILE, learned.WEIGHTS_SHA256 = path, sha
    learned.weights.cache_clear()


def validation_report(rows: list[tuple[str, int, str, bool, str]]) -> tuple[float, list[str]]:
    """Figures of the learned layer alone and of the combined decision on the validation side,
    per threshold; returns the chosen threshold (THRESHOLD_RULE) and the report lines."""
    from ctxcli.injection import detect_injection

    val = [r for r in rows if r[3]]
    sc = np.array([learned.score(t).score for t, *_ in val])
    pat = np.array([detect_injection(raw, use_learned=False) is not None for *_, raw in val])
    y = np.array([r[1] for r in val])
    hard = np.array([r[1] == 0 and not r[2].startswith(("gettext", "metadata")) for r in val])
    prose = np.array([r[1] == 0 and r[2].startswith(("gettext", "metadata")) for r in val])
    more = np.array([r[2] == "more" for r in val])
    lines = [f"validation: {len(val)} rows, {int(y.sum())} attacks ({int((more & (y == 1)).sum())} indirect of "
             f"train_more), {int(hard.sum())} hard negatives, {int(prose.sum())} prose negatives",
             "threshold  learned: recall  hard-FPR  prose-FPR | combined: recall  indirect  hard-FPR  prose-FPR"]
    chosen = None
    for th in np.round(np.arange(0.50, 1.0, 0.01), 2):
        f = sc >= th
        c = f | pat
        hard_fpr, prose_fpr = f[hard].mean(), f[prose].mean()
        first = chosen is None and hard_fpr <= THRESHOLD_RULE[0] and prose_fpr <= THRESHOLD_RULE[1]
        if first:
            chosen = float(th)
        if first or round(th * 100) % 5 == 0:
            lines.append(f"  {th:.2f}   {f[y == 1].mean():7.1%}  {hard_fpr:7.2%}  {prose_fpr:8.3%} |"
                         f" {c[y == 1].mean():7.1%}  {c[more & (y == 1)].mean():7.1%}  {c[hard].mean():7.2%}"
                         f"  {c[prose].mean():8.3%}")
    chosen = chosen if chosen is not None else 0.99
    f = sc >= chosen
    c = f | pat
    lines.append(f"at {chosen:.2f}, per source (learned / combined):")
    lines.extend(per_source(val, y, f, c))
    return chosen, lines


def per_source(val: list, y: np.ndarray, f: np.ndarray, c: np.ndarray) -> list[str]:
    """One line per validation source and label: the learned layer's and the combined
    decision's share of its rows flagged (``f``, ``c``: flags per row of ``val``)."""
    lines = []
    for src in sorted({r[2] for r in val}, key=lambda x: (x.startswith(("gettext", "metadata")), x)):
        m = np.array([r[2] == src for r in val])
        for lab, what in ((1, "recall"), (0, "FPR")):
            k = m & (y == lab)
            if k.any():
                lines.append(f"  {src:28s} {what:6s} {f[k].mean():7.1%} / {c[k].mean():7.1%}  ({int(k.sum())} rows)")
    return lines


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=learned.WEIGHTS_FILE)
    ap.add_argument("--epochs", type=int, default=EPOCHS)
    ap.add_argument("--l2", type=float, default=L2)
    ap.add_argument("--lr", type=float, default=LR)
    ap.add_argument("--hard-share", type=float, default=HARD_SHARE,
                    help="weight of the hard negatives among the benign half (0: all benign rows alike)")
    ap.add_argument("--augment", action="store_true", help="also plant every attack in benign prose "
                    "(tried: more recall on indirect rows, more false alarms; not the shipped weights)")
    ap.add_argument("--no-report", action="store_true", help="skip the validation report")
    ap.add_argument("--selection", action="store_true",
                    help="train on the training side only and report the validation figures (how the recipe and "
                    "threshold were chosen); without it, the shipped weights: the chosen recipe refitted on both sides")
    ap.add_argument("--freeze-benign", action="store_true",
                    help=f"rewrite {BENIGN_FILE.name} from this machine (maintainers, once) and stop")
    ap.add_argument("--with", dest="with_", default=WITH, help="comma-separated further sources (tried, not "
                    "shipped: more = train_more.jsonl, extra = public/train_extra.jsonl)")
    ap.add_argument("--framing", action=argparse.BooleanOptionalAction, default=FRAMING,
                    help="mask the framed quotes (learned.mask) in training and record it in the weights")
    ap.add_argument("--score-only", action="store_true",
                    help="no training: report the validation figures of the weights at --out (default: the shipped ones)")
    a = ap.parse_args(argv)
    if a.score_only:
        use_weights(a.out, hashlib.sha256(a.out.read_bytes()).hexdigest())
        th, lines = validation_report(all_rows())
        print("\n".join(lines))
        return 0
    if a.freeze_benign:
        print(f"{BENIGN_FILE.name}: {freeze_benign(BENIGN_FILE)} rows")
        return 0
    rows = all_rows()
    extra = {"more": "more", "extra": " ".join(extra_sources())}
    wanted = set(" ".join(extra[k] for k in a.with_.split(",") if k).split())
    gone = set(" ".join(extra.values()).split()) - wanted
    kept = [r for r in rows if r[2] not in gone]
    if not a.selection:     # the shipped weights: every row, validation side included
        kept = [(t, lab, src, False, raw) for t, lab, src, _, raw in kept]
    train_rows = training_rows(augment=a.augment, rows=kept)
    texts = [learned.mask(t)[0] if a.framing else t for t, _, _ in train_rows]   # as learned.score reads them
    y = np.array([lab for _, lab, _ in train_rows], dtype=np.float64)
    n_val = sum(r[3] for r in kept)
    print(f"rows read: {len(rows)} ({sum(r[1] for r in rows)} attacks); trained on {len(train_rows)} "
          f"({int(y.sum())} attacks)" + (f"; validation side {n_val}" if a.selection else
                                          " (both sides: the shipped weights)"), file=sys.stderr)
    prose = np.array([src.startswith(("gettext", "metadata")) for _, _, src in train_rows])
    w, b = train(texts, y, epochs=a.epochs, l2=a.l2, lr=a.lr, sw=sample_weights(y, prose, a.hard_share))
    sha = save(w, b, a.out, framing=a.framing)
    print(f"sha256 {sha}")
    if a.no_report or not a.selection:
        return 0
    use_weights(a.out, sha)
    th, lines = validation_report(rows)
    print("\n".join(lines))
    print(f"threshold (THRESHOLD_RULE on the validation side) {th:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
