"""Throughput of the source parsers (issue 29, "Measured"): objects per second through the
parser alone (read, map, validate; no store), and the peak memory of the process.

    python benchmarks/parsers.py table --rows 100000
    python benchmarks/parsers.py git --files 1000 --commits 5
    python benchmarks/parsers.py table --rows 20000 --reload    # + full load, reload after 1 % changed
    python benchmarks/parsers.py git --files 200 --commits 5 --reload   # + reload after one more commit
    python benchmarks/parsers.py table --rows 20000 --reload --repeat 3   # medians of 3 reloads
    python benchmarks/parsers.py git --files 2000 --commits 6 --reload --no-parse   # loads only

``table`` writes a CSV of N rows (id, tenant, service, time, a typed int, a 200-character
description) mapped with templates, a timezone, typed facts and a tenant column; ``git``
writes a repository of F Markdown files changed in C commits (every commit changes every
file: F×C versions). Figures are for one process on the machine it runs on. With ``--reload``
the project is also loaded into a store (``ctx load``'s path, workers included), then 1 % of the
table's rows are changed (or one commit changes 1 % of the files) and the store is loaded
again incrementally (record-level sync, issue 29 item 7): both times are printed. With
``--repeat N`` the change and the reload are made N times (each a fresh 1 % change: the
table's rows alternate between two descriptions, the repository gains one commit each time)
and the median reload and its share of the full load are printed with every run's figure; each
load's CPU seconds (this process and its reaped worker pool) beside its wall clock, and each
source's units read again and, for git, whether the cursor was used. ``--no-parse`` skips
timing the parser alone.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BASE = {"tenant_id": "t1", "source_type": "bench", "owner_team": "bench", "classification": "internal",
        "trust_level": "operational", "required_scopes": [], "allowed_purposes": ["incident_review"],
        "refresh_sla": "24h", "deletion_mode": "none", "parser_version": "1", "schema_version": 1, "enabled": True}


def _project(tmp: Path, name: str, manifest: dict) -> Path:
    (tmp / "manifests" / "sources").mkdir(parents=True)
    (tmp / "manifests" / "sources" / f"{name}.yaml").write_text(
        yaml.safe_dump({**BASE, "source_id": name, "snapshot": f"sources/{name}", **manifest}))
    snap = tmp / "sources" / name
    snap.mkdir(parents=True)
    return snap


def table(tmp: Path, rows: int, count: bool = True) -> tuple[int, float]:
    snap = _project(tmp, "rows", {"parser": "table", "table": {"file": "rows.csv"}, "mapping": {
        "object_id": "ROW-{id}", "title": "Change {id} of {service}", "body": "{description}", "keys": ["id"],
        "tenant_id": "tenant", "observed_at": "at", "valid_from": "at", "timezone": "Europe/Berlin",
        "facts": {"service": "service", "n": {"from": "n", "type": "int"}}, "set": {"object_type": "change"}}})
    with open(snap / "rows.csv", "w") as fh:
        fh.write("id,tenant,service,at,n,description\n")
        for i in range(rows):
            fh.write(f"{i},t{1 + i % 2},svc-{i % 50},2026-03-01 10:{i % 60:02d}:00,{i},{'x' * 190} {i}\n")
    return _count(tmp) if count else (0, 0.0)


def git(tmp: Path, files: int, commits: int, count: bool = True) -> tuple[int, float]:
    from tests.gitrepo import make_repo

    snap = _project(tmp, "docs", {"parser": "git", "mapping": {"set": {"object_type": "runbook"}}})
    make_repo(snap, _git_history(files, commits))
    return _count(tmp) if count else (0, 0.0)


def _git_history(files: int, commits: int) -> list:
    return [(1_767_225_600 + c * 3600, {f"d/{f}.md": f"---\nservice: s{f}\n---\n# T\n\n## A\nrev {c} of {f}\n\n"
                                         f"## B\n{'text ' * 40}\n" for f in range(files)}) for c in range(commits)]


CPU: list[float] = []       # CPU seconds of the last _count (the figure that holds on a shared machine)


def _count(tmp: Path) -> tuple[int, float]:
    from ctxcli.load.build import collect

    t0, c0 = time.perf_counter(), time.process_time()
    loaded, _ = collect(tmp / "manifests", tmp, None)
    n = sum(1 for ls in loaded for _ in ls.iter_objects(dedup=False))
    CPU[:] = [time.process_time() - c0]
    return n, time.perf_counter() - t0


def _cpu() -> float:
    """CPU seconds of this process and of its reaped children (the load's worker pool)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


RELOAD_CPU: list[float] = []    # CPU seconds (process + workers) of the last _reload: full load, then each reload


def _reload(tmp: Path, parser: str, files: int, commits: int, repeat: int = 1) -> tuple[float, list[float], list[str]]:
    """(full load s, incremental reload s after each 1 % change, what each reload reported);
    their CPU seconds in :data:`RELOAD_CPU`."""
    from ctxcli.load.build import build_store

    db = tmp / "s.duckdb"
    t0, c0 = time.perf_counter(), _cpu()
    build_store(tmp / "manifests", db, root=tmp)
    full = time.perf_counter() - t0
    RELOAD_CPU[:] = [_cpu() - c0]
    hist = _git_history(files, commits)
    times, said = [], []
    for r in range(repeat):
        if parser == "table":
            p = tmp / "sources" / "rows" / "rows.csv"
            lines = p.read_text().splitlines(True)
            a, b = ("x" * 190, "y" * 190) if r % 2 == 0 else ("y" * 190, "x" * 190)
            for i in range(1, len(lines), 100):            # every 100th row: a new description
                lines[i] = lines[i].replace(a, b)
            p.write_text("".join(lines))
        else:
            from tests.gitrepo import make_repo

            hist.append((hist[-1][0] + 3600, {f"d/{f}.md": f"---\nservice: s{f}\n---\n# T\n\n## A\nrev {r} of {f}\n"
                                              for f in range(0, files, 100)}))
            make_repo(tmp / "sources" / "docs", hist)
        t0, c0 = time.perf_counter(), _cpu()
        stages: dict[str, float] = {}

        def seen(stage: str, done: int, total: int, stages=stages, t0=t0) -> None:   # when each stage began
            stages.setdefault(stage, round(time.perf_counter() - t0, 1))
        c0 = _cpu()
        res = build_store(tmp / "manifests", db, root=tmp, progress=seen)
        times.append(time.perf_counter() - t0)
        RELOAD_CPU.append(_cpu() - c0)
        said.append(", ".join(f"{s.source_id} +{s.added} ~{s.changed} -{s.removed}"
                              + (f" read {s.units['read']} of {s.units['of']} {s.units['unit']}(s)"
                                 if getattr(s, "units", None) else "")
                              + (f" cursor {s.units['cursor']}" if (getattr(s, "units", None) or {}).get("cursor")
                                 else "") for s in res.sources)
                    + f"; stages began at {stages} s")
    return full, times, said


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("parser", choices=["table", "git"])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--commits", type=int, default=5)
    ap.add_argument("--reload", action="store_true", help="also time a full load and a reload after a 1 %% change")
    ap.add_argument("--repeat", type=int, default=1, help="changes and reloads to take the median of")
    ap.add_argument("--no-parse", action="store_true", help="skip timing the parser alone (with --reload)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        if a.no_parse and a.reload:     # only write the input
            table(Path(d), a.rows, count=False) if a.parser == "table" else git(Path(d), a.files, a.commits,
                                                                                count=False)
        else:
            n, s = table(Path(d), a.rows) if a.parser == "table" else git(Path(d), a.files, a.commits)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{a.parser}: {n} objects in {s:.2f} s = {n / s:,.0f} objects/s (CPU {CPU[0]:.2f} s = "
                  f"{n / CPU[0]:,.0f} objects/s); peak RSS {peak:.0f} MB", flush=True)
        if a.reload:
            full, times, said = _reload(Path(d), a.parser, a.files, a.commits, a.repeat)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            cpu_full = RELOAD_CPU[0]
            for t, c, x in zip(times, RELOAD_CPU[1:], said):
                print(f"reload after a 1 % change {t:.2f} s = {100 * t / full:.0f} %, CPU {c:.2f} s = "
                      f"{100 * c / cpu_full:.1f} % ({x})")
            med, cmed = statistics.median(times), statistics.median(RELOAD_CPU[1:])
            print(f"full load {full:.2f} s (CPU {cpu_full:.2f} s); median reload after a 1 % change {med:.2f} s = "
                  f"{100 * med / full:.0f} % (CPU {cmed:.2f} s = {100 * cmed / cpu_full:.1f} %) of {len(times)}; "
                  f"peak RSS of the loading process {peak:.0f} MB (workers not counted)")


if __name__ == "__main__":
    main()
