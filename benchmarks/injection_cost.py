"""Cost of the injection detector (``ctxcli.injection.detect_injection``, every layer) on
ordinary prose and on documents (the benign rows of the shared dev set): ms per 10 KB and s
per MB, and each layer alone (patterns; the intent layer; the n-gram layer). One core, CPU
time (``time.process_time``), best of N runs after one warm-up (regexes compiled).

    python benchmarks/injection_cost.py [--json]

Not a timed test: the figures are reported in docs/security.md. The prose is
generated from fixed sentences (runbooks, policies, e-mails; English, and a mixed
English/Chinese/German/Russian variant), so runs are comparable.
"""

from __future__ import annotations

import json
import sys
import time

EN = [
    "The on-call engineer checks the payment dashboard and confirms that the error rate is below one percent.",
    "If the alert clears within five minutes, ignore it and add a short note to the incident log.",
    "Run the following command to restart the worker pool, then watch the queue depth for ten minutes.",
    "Refunds above five thousand euros need the approval of a second reviewer before they are paid.",
    "Dear customer, thank you for your e-mail; your claim has been forwarded to our assessment team.",
    "The quarterly report summarises latency, availability and the cost of the three regions.",
    "Act as incident commander until the duty manager takes over, and keep the status page current.",
    "To override the default timeout, set REQUEST_TIMEOUT in the service configuration file.",
]
MIXED = EN + [
    "运维手册：如果告警在五分钟内恢复，可以忽略，并在事件日志中记录。",
    "根据公司规则，理赔须经两名审核员批准后方可执行付款。",
    "Bitte senden Sie die Rechnung bis Freitag an die Buchhaltung.",
    "Системный администратор еженедельно проверяет резервные копии.",
]


def prose(sentences: list[str], n: int) -> str:
    unit = "\n".join(sentences) + "\n"
    return (unit * (n // len(unit) + 1))[:n]


def best_cpu(fn, text: str, runs: int) -> float:  # noqa: ANN001
    fn(text)  # warm-up: regexes compiled, tables loaded
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        fn(text)
        best = min(best, time.process_time() - t)
    return best


def documents() -> list[str]:
    """The benign rows of the shared dev set (reports, WHOIS records, threat reports in four
    languages; tests/data/injection/shared): documents of the kind the detector reads."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "tests" / "data" / "injection" / "shared" / "dev.jsonl"
    return [r["text"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if r["label"] == 0]


def main() -> int:
    from functools import partial

    from ctxcli.injection import detect_injection, intent, learned, normalize_for_scan

    layers = {  # the whole detector, then each layer alone on the normal form
        "detector": detect_injection,
        "patterns": partial(detect_injection, use_learned=False),
        "intent": lambda t: intent.score(normalize_for_scan(t)),
        "ngram": lambda t: learned.score(normalize_for_scan(t)),
    }
    corpora = [("english", EN, None), ("mixed", MIXED, None)]
    docs = "\n\n".join(d for d in documents() if detect_injection(d) is None)
    corpora.append(("docs", None, docs))
    rows = []
    for name, sents, whole in corpora:
        for size, runs in ((10_000, 20), (65_536, 5), (1_000_000, 3)):
            text = prose(sents, size) if whole is None else (whole * (size // len(whole) + 1))[:size]
            assert name == "docs" or detect_injection(text) is None, "benchmark prose must be clean"
            row = {"prose": name, "chars": size}
            for layer, fn in layers.items():
                s = best_cpu(fn, text, runs)
                row[layer] = {"seconds": round(s, 4), "ms_per_10kb": round(s * 1000 * 10_000 / size, 2),
                              "s_per_mb": round(s * 1_000_000 / size, 3)}
            rows.append(row)
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
    else:
        print(f"{'prose':8} {'chars':>9} {'ms/10KB':>8} {'s/MB':>7}   ms/10KB: {'patterns':>8} {'intent':>7} {'ngram':>7}")
        for r in rows:
            d = r["detector"]
            print(f"{r['prose']:8} {r['chars']:>9} {d['ms_per_10kb']:>8.2f} {d['s_per_mb']:>7.3f}   "
                  f"         {r['patterns']['ms_per_10kb']:>8.2f} {r['intent']['ms_per_10kb']:>7.2f} "
                  f"{r['ngram']['ms_per_10kb']:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
