"""Record or compare the output files of every bundled run, for proving that a refactor
changes no byte.

Every case in examples/cases/ (the base case and each variant) runs through each strategy
(full, topk, governed, dynamic, hybrid) against a fresh store of the bundled data, and its four
files (pack.json, trace.jsonl, answer.json, answer.md) are written under
``DIR/<case>[-<variant>]-<strategy>/``. timings.json (wall-clock figures) is left out, and the
store secret is fixed (``CTX_SECRET``, unless already set) so keyed digests match across stores.

    python benchmarks/golden.py record /tmp/golden-base     # before the change
    python benchmarks/golden.py check /tmp/golden-base      # after: exit 1 on any difference
    python benchmarks/golden.py check-schema-bump /tmp/golden-base

``check-schema-bump``: for a change that bumps the store schema (store/schema.py) and nothing
else. The store's recorded ``schema_version`` and digest, and so the pack's content hash and id
(and run.json's file hashes), change by construction; each recorded run's values are mapped to
the new ones (read from the two pack.json files) before the bytes are compared, so any other
difference still fails.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STRATEGIES = ("full", "topk", "governed", "dynamic", "hybrid")


def runs(db: Path) -> dict[str, dict[str, bytes]]:
    from ctxcli import api
    from ctxcli.models.case import CaseFile
    from ctxcli.util.yamlio import read_yaml

    out: dict[str, dict[str, bytes]] = {}
    for f in sorted((REPO / "examples" / "cases").glob("*.yaml")):
        case = CaseFile.model_validate(read_yaml(f, display=f.name))
        for variant in [None, *case.variants]:
            for strategy in STRATEGIES:
                res = api.investigate(api.InvestigateOptions(case=str(f), variant=variant, strategy=strategy, db=db))
                name = case.case_id + (f"-{variant}" if variant else "") + f"-{strategy}"
                out[name] = {fn: data for fn, data in api.output_files(res).items() if fn != "timings.json"}
    return out


def _unbump(recorded: Path, files: dict[str, bytes]) -> dict[str, bytes]:
    """``files`` (a new run) with the values a store schema bump changes put back to the recorded
    run's: the store's schema version and digest, the pack's content hash and id, and run.json's
    hashes of the files so restored."""
    import hashlib
    import json

    old, new = json.loads((recorded / "pack.json").read_bytes()), json.loads(files["pack.json"])
    pairs = [(new["store"]["digest"], old["store"]["digest"]), (new["content_hash"], old["content_hash"])]
    subs = []
    for n, o in pairs:
        nh, oh = n.split(":", 1)[1], o.split(":", 1)[1]
        subs += [(nh, oh), (nh[:16], oh[:16]), (nh[:7], oh[:7])]
    out = {}
    for fn, data in files.items():
        text = data.decode("utf-8")
        for n, o in subs:
            text = text.replace(n, o)
        if fn == "pack.json":
            text = text.replace(f'"schema_version": {new["store"]["schema_version"]}',
                                f'"schema_version": {old["store"]["schema_version"]}')
        out[fn] = text.encode("utf-8")
    if "run.json" in out:
        text = out["run.json"].decode("utf-8")
        for fn, data in files.items():
            if fn != "run.json":
                text = text.replace(hashlib.sha256(data).hexdigest(), hashlib.sha256(out[fn]).hexdigest())
        out["run.json"] = text.encode("utf-8")
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("record", "check", "check-schema-bump"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, target = argv[0], Path(argv[1])
    import os

    os.environ["CTX_ROOT"] = str(REPO)
    os.environ.setdefault("CTX_SECRET", "golden-runs-fixed-secret")
    from ctxcli.load.build import build_store

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "ctx.duckdb"
        build_store(REPO / "manifests", db, root=REPO)
        got = runs(db)
    if mode == "record":
        for name, files in got.items():
            (target / name).mkdir(parents=True, exist_ok=True)
            for fn, data in files.items():
                (target / name / fn).write_bytes(data)
        print(f"recorded {len(got)} runs ({sum(len(f) for f in got.values())} files) in {target}")
        return 0
    diffs = []
    expected = sorted(p.name for p in target.iterdir() if p.is_dir())
    if expected != sorted(got):
        diffs.append(f"run names differ: missing {sorted(set(expected) - set(got))}, "
                     f"new {sorted(set(got) - set(expected))}")
    for name, files in sorted(got.items()):
        if mode == "check-schema-bump" and (target / name / "pack.json").is_file():
            files = _unbump(target / name, files)
        for fn, data in sorted(files.items()):
            p = target / name / fn
            if not p.is_file() or p.read_bytes() != data:
                diffs.append(f"{name}/{fn}")
    for d in diffs:
        print("DIFFERS:", d)
    n = sum(len(f) for f in got.values())
    print(f"{len(got)} runs, {n} files: {'all byte-identical' if not diffs else f'{len(diffs)} differ'}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
