"""Injection verdicts carried into each planted-bug run (tests/mutants.py).

A run that loads a store (a copy of the project, an edited source, a load on PostgreSQL) scans
every object with the injection detector in a fresh process: ~3 s of CPU for the bundled
sources, most of such a run. A pytest worker of the suite scans them once and then serves them
from its verdict memo (engine/injection_adapter); a planted-bug run starts with an empty memo.

So the runner, once per planted-bug run and on the unmutated tree:

1. while it fills the store cache (tests/store_cache.py), notes every field list the detector is
   asked about (``TESTS_VERDICT_CAPTURE``: the bundled and the retail stores' objects);
2. scans them again in a fresh process (:func:`record`), and keeps each verdict with the sha256
   of every ctxcli module that process loaded (the detector, the adapter and what they import);

and each later run, before its tests, puts those verdicts into its own memo
(``TESTS_VERDICT_SEED``; :func:`install`, from tests/conftest.py) — only when every one of those
modules is unchanged in its copy. A verdict is a function of the fields and of that code alone,
so the memo holds what the run would have computed itself; a mutant in the detector or in the
adapter finds the modules changed and the run scans as before. A test that counts scans clears
the memo first (as it must in the suite, whose workers' memos are warm).
"""

from __future__ import annotations

import atexit
import os
import pickle
import sys
from pathlib import Path

CAPTURE = "TESTS_VERDICT_CAPTURE"   # a file: the field lists scanned in this session are appended
SEED = "TESTS_VERDICT_SEED"         # a file written by record(): verdicts and the modules behind them


def install() -> None:
    """Called by tests/conftest.py at import: capture or seed, as the environment says."""
    if os.environ.get(CAPTURE):
        _capture(Path(os.environ[CAPTURE]))
    elif os.environ.get(SEED):
        _seed(Path(os.environ[SEED]))


def _capture(out: Path) -> None:
    from ctxcli.engine import injection_adapter as ia

    seen: dict[tuple, None] = {}
    real = ia.scan_many

    def noting(batch, scanner=None):
        for f in batch:
            seen[tuple(tuple(x) for x in f)] = None
        return real(batch, scanner)

    ia.scan_many = noting

    def write() -> None:
        with open(out, "ab") as fh:
            pickle.dump(list(seen), fh, protocol=pickle.HIGHEST_PROTOCOL)

    atexit.register(write)


def _seed(path: Path) -> None:
    from . import store_cache

    with open(path, "rb") as fh:
        rec = pickle.load(fh)
    src = Path(__file__).resolve().parents[1] / "src"
    if not store_cache.modules_unchanged({"base": "", "modules": rec["modules"]}, src, ""):
        return                          # the detector's code differs in this copy: scan as usual
    from ctxcli.engine import injection_adapter as ia

    verdicts = rec["verdicts"]
    ia.scan_many(list(verdicts), lambda todo: [verdicts[f] for f in todo])


def record(captured: Path, out: Path) -> int:
    """Scan every field list in ``captured`` in this (fresh) process and write the seed file."""
    from ctxcli.engine import injection_adapter as ia

    from . import store_cache

    fields: dict[tuple, None] = {}
    with open(captured, "rb") as fh:
        while True:
            try:
                fields.update(dict.fromkeys(pickle.load(fh)))
            except EOFError:
                break
    todo = list(fields)
    verdicts = dict(zip(todo, ia.scan_fresh(todo)))
    src = Path(__file__).resolve().parents[1] / "src"
    tmp = out.with_suffix(".part")
    with open(tmp, "wb") as fh:
        pickle.dump({"modules": store_cache.loaded_modules(src), "verdicts": verdicts}, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, out)
    return len(verdicts)


if __name__ == "__main__":
    # python -m tests.verdict_seed CAPTURED OUT
    print(f"{record(Path(sys.argv[1]), Path(sys.argv[2]))} verdicts recorded")
