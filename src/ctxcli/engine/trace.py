"""The trace of one build: numbered events, written to trace.jsonl in this order."""

from __future__ import annotations

from typing import Any


class Trace:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def emit(self, event: str, **fields: Any) -> None:
        self.events.append({"seq": len(self.events) + 1, "event": event, **fields})
