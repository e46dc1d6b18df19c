"""Write sales-store_001-2026-07-08.csv: the 5,000 raw rows a SQL tool returns for STORE_001 in
July and August 2026 (the Context Builder article's retail loop). Deterministic (fixed seed):
run it again and the bytes are the same.

Totals by month (VND): July revenue 2,000,000,000, cost 1,600,000,000; August revenue
2,300,000,000 (+15 %), cost 2,000,000,000 (+25 %) — so profit falls from 400,000,000 to
300,000,000 (−25 %). Each row has revenue, cost and profit only: no cost breakdown.

    python examples/agent/retail/make_sales.py
"""

from __future__ import annotations

import random
from pathlib import Path

OUT = Path(__file__).with_name("sales-store_001-2026-07-08.csv")
ROWS_PER_MONTH = 2500
TOTALS = {"2026-07": (2_000_000_000, 1_600_000_000), "2026-08": (2_300_000_000, 2_000_000_000)}
PRODUCTS = ["rice-5kg", "fish-sauce", "instant-noodles", "coffee-beans", "green-tea", "cooking-oil", "soy-milk",
            "dried-mango"]


def split(total: int, weights: list[float]) -> list[int]:
    """``total`` in whole VND over the weights: floors, the remainder to the first rows."""
    w = sum(weights)
    parts = [int(total * x // w) for x in weights]
    for i in range(total - sum(parts)):
        parts[i % len(parts)] += 1
    return parts


def rows() -> list[list[str]]:
    rnd = random.Random(45)
    out = []
    for month, (revenue, cost) in TOTALS.items():
        sizes = [rnd.uniform(0.2, 1.8) for _ in range(ROWS_PER_MONTH)]
        rev = split(revenue, sizes)
        cst = split(cost, [s * rnd.uniform(0.9, 1.1) for s in sizes])
        days = 31
        for i in range(ROWS_PER_MONTH):
            day = 1 + (i * days) // ROWS_PER_MONTH
            out.append([f"S-{month.replace('-', '')}-{i + 1:05d}", f"{month}-{day:02d}", month, "STORE_001",
                        PRODUCTS[rnd.randrange(len(PRODUCTS))], str(rev[i]), str(cst[i]), str(rev[i] - cst[i])])
    return out


def main() -> None:
    lines = ["sale_id,date,month,store,product,revenue,cost,profit"] + [",".join(r) for r in rows()]
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT.name}: {len(lines) - 1} rows")


if __name__ == "__main__":
    main()
