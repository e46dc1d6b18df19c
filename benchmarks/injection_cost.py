"""Cost of the injection detector (``ctxcli.injection.detect_injection``) on ordinary
prose: per 10 KB, per MB, and on both sides of 64 Ki characters (where the matcher
switches from per-rule to per-lead-keyword regexes). One core, CPU time
(``time.process_time``), best of N runs after one warm-up (regexes compiled).

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


def main() -> int:
    from ctxcli.injection import detect_injection

    rows = []
    for name, sents in (("english", EN), ("mixed", MIXED)):
        for size, runs in ((10_000, 20), (65_535, 5), (65_536, 5), (65_537, 5), (131_072, 5),
                           (1_000_000, 3)):
            text = prose(sents, size)
            assert detect_injection(text) is None, "benchmark prose must be clean"
            s = best_cpu(detect_injection, text, runs)
            rows.append({"prose": name, "chars": size, "seconds": round(s, 4),
                         "ms_per_10kb": round(s * 1000 * 10_000 / size, 2),
                         "s_per_mb": round(s * 1_000_000 / size, 3)})
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
    else:
        print(f"{'prose':8} {'chars':>9} {'seconds':>9} {'ms/10KB':>8} {'s/MB':>7}")
        for r in rows:
            print(f"{r['prose']:8} {r['chars']:>9} {r['seconds']:>9.4f} {r['ms_per_10kb']:>8.2f} "
                  f"{r['s_per_mb']:>7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
