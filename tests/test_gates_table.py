"""One ordered gate table (engine/gates.py:GATES): every list of gates derives from it, each
gate function rejects under its own name, and docs/gates.md shows the same table."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from ctxcli.engine import gates

DOC = Path(__file__).resolve().parents[1] / "docs" / "gates.md"


def doc_rows() -> list[tuple[str, str, str, bool]]:
    rows = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\| (\d+) \| (\w+) \| (\w+) \| (yes|no) \|", line)
        if m:
            rows.append((m.group(1), m.group(2), m.group(3), m.group(4) == "yes"))
    return rows


def test_docs_gates_table_is_the_gate_table():
    assert doc_rows() == [(str(i), g.name, g.phase, g.withholding) for i, g in enumerate(gates.GATES, 1)]


def test_every_list_of_gates_is_the_table_in_its_order():
    assert gates.GATE_ORDER == ["tenant", "scope", "classification", "purpose", "erasure", "validity", "knowledge_time",
                                "freshness", "integrity", "injection", "duplicate", "relevance", "budget"]
    assert {"tenant", "scope", "classification", "purpose"} == gates.WITHHOLDING_GATES
    assert gates.PER_CANDIDATE == gates.META_GATES + gates.CONTENT_GATES
    assert [g.phase for g in gates.GATES] == sorted((g.phase for g in gates.GATES),
                                                    key=["metadata", "content", "pack"].index)


def test_each_gate_function_rejects_under_its_own_name():
    for g in gates.GATES:
        if g.check is None:
            continue
        named = set(re.findall(r'Rejection\(\s*"(\w+)"', inspect.getsource(g.check)))
        assert named == {g.name}, (g.check.__name__, named)


def test_docs_show_the_tool_result_and_memory_gate_tables():
    from ctxcli.agents.memory import MEMORY_GATES
    from ctxcli.agents.tool_results import TOOL_GATES
    from ctxcli.engine.checks import markdown

    text = DOC.read_text(encoding="utf-8")
    assert "### Tool results\n\n" + markdown(TOOL_GATES) + "\n" in text
    assert "### Memory records\n\n" + markdown(MEMORY_GATES) + "\n" in text
    assert [g.name for g in TOOL_GATES] == ["tenant", "scope", "purpose", "named_object", "validity",
                                            "knowledge_time", "freshness", "injection", "raw_check", "duplicate",
                                            "budget"]
    assert [g.name for g in MEMORY_GATES if g.withholding] == ["tenant", "subject", "scope", "purpose"]


def test_docs_show_the_working_state_message_table():
    from ctxcli.agents.memory import MESSAGE_GATES, WORKING_GATE_ORDER
    from ctxcli.engine.checks import markdown

    assert "### Working-state messages\n" in DOC.read_text(encoding="utf-8")
    assert "\n" + markdown(MESSAGE_GATES) + "\n" in DOC.read_text(encoding="utf-8")
    assert [g.name for g in MESSAGE_GATES] == ["knowledge_time", "freshness", "injection", "budget"]
    assert [n for n in WORKING_GATE_ORDER if n in {g.name for g in MESSAGE_GATES}] == [g.name for g in MESSAGE_GATES]
