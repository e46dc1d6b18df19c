"""The retail loop of issue 45 (examples/agent/retail/, a project of its own): recalled memory
that contradicts admitted evidence is packed only as a conflict; a tool result too big for its
room is shaped further when the registry allows it; the whole loop through the CLI and MCP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import run_cli

TENANT = ["--tenant", "tenant-retail", "--subject", "manager-store-001"]
AT = "2026-09-01T09:00:00+07:00"
CAUSE = "Advertising caused the August profit fall at STORE_001."
WRONG = "STORE_001 profit in 2026-08 was 350,000,000 VND."
RIGHT = "STORE_001 profit in 2026-08 was 300,000,000 VND."
HEDGED = "Advertising may have caused the August profit fall at STORE_001."


def _remember(mem: Path, text: str) -> str:
    r = run_cli(["remember", text, *TENANT, "--ttl", "30d", "--reviewed-by", "finance-lead", "--at", AT,
                 "--memories", mem, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["memory_id"]


def _investigate(out: Path, *extra) -> dict:
    r = run_cli(["investigate", "RETAIL-0902", "--out", out, *extra])
    assert r.exit_code == 0, r.output
    return json.loads((out / "pack.json").read_text())


def _ev(pack: dict, object_id: str) -> str:
    return next(i["evidence_id"] for i in pack["evidence"] if i["object_id"] == object_id)


def test_a_memory_that_contradicts_the_evidence_is_packed_only_as_a_conflict(retail, tmp_path):
    mem = tmp_path / "mem"
    cause, wrong, right, hedged = (_remember(mem, t) for t in (CAUSE, WRONG, RIGHT, HEDGED))
    out = tmp_path / "o"
    pack = _investigate(out, "--recall", "--memories", mem)
    analysis, jul, aug = (_ev(pack, o) for o in ("AN-STORE_001-2026-08-ADS", "LEDGER-STORE_001-2026-07",
                                                 "LEDGER-STORE_001-2026-08"))
    # what agrees with the evidence (or keeps its hedge) stays a memory
    assert sorted(r["memory_id"] for r in pack["episodic_memory"]) == sorted([right, hedged])
    assert {c["memory_id"]: c["conflict"] for c in pack["memory_conflicts"]} == {
        cause: {"code": "status_upgraded", "status": "fact", "evidence": [analysis]},
        wrong: {"code": "value_differs", "field": "profit", "given": "350000000",
                "admitted": ["300000000", "400000000"], "evidence": sorted([jul, aug])}}
    assert {c["trust_level"] for c in pack["memory_conflicts"]} == {"contradicted_memory"}
    names = [s["section"] for s in pack["slots"]["sections"]]
    assert names.index("episodic_memory") + 1 == names.index("conflicts") < names.index("gaps_and_exclusions")
    # the reason is in the trace, one event per record
    events = [json.loads(x) for x in (out / "trace.jsonl").read_text().splitlines()]
    assert sorted((e["ref"], e["reason"]) for e in events if e["event"] == "input_conflict") == sorted(
        [(cause, "status_upgraded"), (wrong, "value_differs")])
    assert {e["ref"] for e in events if e["event"] == "input_admitted"
            and e["section"] == "episodic_memory"} == {right, hedged}
    # rendered only under the conflict rule, never among the memories
    r = run_cli(["render", out / "pack.json", "--format", "markdown"])
    memories, conflicts = r.output.split("## Memories", 1)[1].split("## Conflicts", 1)
    assert CAUSE not in memories and WRONG not in memories and RIGHT in memories
    conflicts = conflicts.split("## Known gaps", 1)[0]
    assert CAUSE in conflicts and WRONG in conflicts and RIGHT not in conflicts
    assert f"conflict: value_differs: profit 350000000 given; {', '.join(sorted([jul, aug]))} hold(s) " \
           "300000000, 400000000" in conflicts
    assert f"conflict: status_upgraded: states as fact a cause that {analysis} hold(s) unverified" in conflicts
    assert run_cli(["replay", out / "pack.json"]).exit_code == 0


def test_a_memory_is_read_only_against_evidence_the_subject_may_see(retail, tmp_path):
    """STORE_002's ledger is not admitted for this subject: a memory naming STORE_002's profit has
    nothing to contradict and stays a memory (nothing of STORE_002's ledger is compared or shown)."""
    mem = tmp_path / "mem"
    other = _remember(mem, "STORE_002 profit in 2026-08 was 1 VND.")
    exact = _remember(mem, "STORE_001 profit in 2026-08 was 300000000.0 VND.")
    pack = _investigate(tmp_path / "o", "--recall", "--memories", mem)
    assert sorted(r["memory_id"] for r in pack["episodic_memory"]) == sorted([other, exact])
    assert "memory_conflicts" not in pack
    assert "450000000" not in (tmp_path / "o" / "pack.json").read_text()


LEDGER = {"evidence_id": "ev-l", "object_id": "LEDGER-ST1-08", "subject_id": "store:ST1",
          "facts": {"profit": 300, "owner_team": "team-red"}, "text": "Ledger of ST1."}
NOTE = {"evidence_id": "ev-n", "object_id": "AN-ST1", "subject_id": "store:ST1", "facts": {"verified": False},
        "text": "Advertising spend may have caused the profit fall at ST1."}
VISITS = {"evidence_id": "ev-v", "object_id": "VISITS-ST1", "subject_id": "store:ST1", "facts": {},
          "text": "Footfall possibly fell in August at ST1."}


@pytest.mark.parametrize("text,code", [
    ("ST1 profit was 300.", None),
    ("ST1 profit was 301.", "value_differs"),
    ("ST2 profit was 301.", None),                                  # another entity: nothing to contradict
    ("ST1 profit fell 25 %.", None),                                # no value bound to the field
    ("ST1 is owned by team-red.", None),
    ("ST1 is owned by team-blue.", "misbound_entity"),
    ("Advertising caused the profit fall at ST1.", "status_upgraded"),
    ("Advertising may have caused the profit fall at ST1.", None),
    ("Footfall fell in August at ST1.", "hedge_dropped"),
    ("Footfall possibly fell in August at ST1.", None),
])
def test_each_conflict_check_on_both_sides(text, code):
    from ctxcli.agents.conflicts import conflict

    got = conflict(text, [LEDGER, NOTE, VISITS])
    assert (got or {}).get("code") == code
