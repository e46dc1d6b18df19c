"""The trace of one build: numbered events, written to trace.jsonl in this order.

Every event carries ``run``: the run id, ``run-`` and the first 16 hex digits of the request
hash (:func:`request_hash`, over the pack's ``request`` section), known before anything runs.
The first event, ``run_started``, names the request hash and the builder version. The pack
id is only known once the pack is sealed (it hashes the answer too), so :meth:`Trace.link`
stamps ``pack_id`` on every event then, and ``pack_sealed`` is the last event of the build.
A trace is therefore tied to exactly one pack: postmortem commands refuse a trace whose
``pack_id`` or ``run`` is not the pack's (see ``postmortem.packfile.read_linked_trace``).
"""

from __future__ import annotations

from typing import Any


def request_hash(request: dict[str, Any]) -> str:
    """The hash of a pack's ``request`` section (canonical JSON)."""
    from ..util.canon import obj_hash

    return obj_hash(request)


def run_id_for(req_hash: str) -> str:
    return "run-" + req_hash.split(":", 1)[-1][:16]


class Trace:
    def __init__(self, run: str | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self.run = run

    def emit(self, event: str, **fields: Any) -> None:
        ev: dict[str, Any] = {"seq": len(self.events) + 1, "event": event, **fields}
        if self.run is not None:
            ev["run"] = self.run
        self.events.append(ev)

    def link(self, pack_id: str) -> None:
        """Stamp the sealed pack's id on every event."""
        for ev in self.events:
            ev["pack_id"] = pack_id
