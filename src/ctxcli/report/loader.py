"""Reading a run for the report: the verified pack, and the files beside it that belong to it.

The pack is read by :func:`ctxcli.postmortem.load_pack` (shape, schema and content hash), so a
tampered pack is refused before anything is shown. ``trace.jsonl`` and ``answer.json`` beside
the pack are used only when they agree with the pack (the trace's queries, selections and
counts; the answer's pack id, verdict, action and claims); otherwise the page says why they
are not shown. A model answer (``model_answer.json``, with ``model.json``, the recorded exchange,
when present) is shown when it names the pack. Every file beside the pack is read through the run
folder's check (:func:`ctxcli.run_manifest.read_run_file`): a file ``run.json`` does not list (added
after the run was written, e.g. a forged model answer beside a signed run) is never shown as part
of the run; the page says it is not shown and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..postmortem import LoadedPack, load_pack

MAX_SIDE_FILE_BYTES = 256 * 1024 * 1024
MODEL_ANSWER, MODEL_RECORD = "model_answer.json", "model.json"


@dataclass
class Run:
    """A verified pack and the run files that belong to it."""

    lp: LoadedPack
    trace: list[dict[str, Any]] | None = None
    answer: dict[str, Any] | None = None
    model: dict[str, Any] | None = None           # model_answer.json: the answer and its validation
    model_record: dict[str, Any] | None = None    # model.json: the recorded exchange
    model_file: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def pack(self) -> dict[str, Any]:
        return self.lp.data


def pack_path(path: Path | str) -> Path:
    """RUN_DIR, PACK or ``latest``: the pack file a report is about."""
    from ..run_list import pack_path as _pack_path

    return _pack_path(path)


def load_run(path: Path | str) -> Run:
    """Load a run folder or a pack file; raise PackError (exit 2) for a bad or tampered pack."""
    lp = load_pack(pack_path(path))
    run = Run(lp)
    folder = lp.path.parent
    trace, why = _read_trace(folder / "trace.jsonl", lp)
    if trace is not None:
        run.trace = trace
    elif why:
        run.notes.append(f"trace.jsonl is not shown: {why}")
    answer, why = _read_answer(lp, "answer.json")
    if answer is not None:
        run.answer = answer
    elif why:
        run.notes.append(f"answer.json is not shown (the pack's own answer is): {why}")
    for name in (MODEL_ANSWER, MODEL_RECORD):
        doc, why = _read_run_json(lp, name)
        if doc is None and why is None:
            continue
        if not isinstance(doc, dict):
            run.notes.append(f"{name} is not shown: {why or 'not a JSON object'}")
            continue
        if doc.get("pack_id") != lp.pack_id:
            run.notes.append(f"{name} is not shown: it answers pack {doc.get('pack_id')}, not {lp.pack_id}")
            continue
        if name == MODEL_ANSWER:
            run.model, run.model_file = doc, name
        else:
            run.model_record = doc
    return run


def _read_run_json(lp: LoadedPack, name: str) -> tuple[Any, str | None]:
    """A JSON file of the pack's run folder, only when run.json lists and verifies it:
    (value, None), (None, why), or (None, None) when absent."""
    import orjson

    from ..errors import PackError

    try:
        raw = lp.run_file(name, MAX_SIDE_FILE_BYTES)
    except PackError as e:
        return None, e.detail
    if raw is None:
        return None, None
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError:
        return None, "not valid JSON"


def _read_trace(p: Path, lp: LoadedPack) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The run's trace through the one linked-trace reader (postmortem/packfile.py), then
    checked against the pack: numbered events, and the queries and selections it records."""
    from ..errors import PackError
    from ..postmortem.packfile import read_linked_trace

    if p.exists() and not p.is_file():
        return None, "not a regular file"
    try:
        events = read_linked_trace(lp, p)
    except PackError as e:
        return None, e.detail
    if events is None:
        return None, None
    bad = next((n for n, e in enumerate(events, 1) if not isinstance(e.get("event"), str)), None)
    if bad is not None:
        return None, f"event {bad} is not a trace event"
    if [e.get("seq") for e in events] != list(range(1, len(events) + 1)):
        return None, "its events are not numbered 1, 2, 3 …"
    return (events, None) if _trace_matches(events, lp.data) else (None, "it belongs to another pack")


def _trace_matches(events: list[dict[str, Any]], pack: dict[str, Any]) -> bool:
    """The trace names the pack (every event's ``pack_id``, engine/trace.py), and its queries,
    selections (less those evicted later) and final counts are the pack's (the pack link is
    checked by the reader)."""
    recorded = {(r.get("round"), q.get("query_id")): q for r in pack["rounds"] if isinstance(r, dict)
                for q in r.get("queries", []) if isinstance(q, dict)}
    ran = {(e.get("round"), e.get("query_id")): e.get("query") for e in events if e["event"] == "retrieval_executed"}
    if ran != recorded:
        return False
    selected = [e.get("evidence_id") for e in events if e["event"] == "evidence_selected"]
    for e in events:     # an item evicted once its anchor was known (engine/builder.py) left the pack
        evicted = e.get("detail", {}).get("evicted") if e["event"] == "candidate_rejected" \
            and isinstance(e.get("detail"), dict) else None
        if isinstance(evicted, dict) and evicted.get("evidence_id") in selected:
            selected.remove(evicted["evidence_id"])
    if sorted(selected) != sorted(str(x.get("evidence_id")) for x in pack["evidence"]):
        return False
    built = [e for e in events if e["event"] == "pack_built"]
    return len(built) == 1 and built[0].get("evidence") == len(pack["evidence"]) \
        and built[0].get("omissions") == len(pack["omissions"])


def _claim_core(claims: Any) -> list[Any]:
    if not isinstance(claims, list):
        return []
    return [{k: c.get(k) for k in ("claim_id", "status", "facts", "evidence")} if isinstance(c, dict) else c
            for c in claims]


def _read_answer(lp: LoadedPack, name: str) -> tuple[dict[str, Any] | None, str | None]:
    pack = lp.data
    doc, why = _read_run_json(lp, name)
    if doc is None:
        return None, why
    if not isinstance(doc, dict):
        return None, "not a JSON object"
    if doc.get("pack_id") != pack["pack_id"]:
        return None, f"it answers pack {doc.get('pack_id')}, not {pack['pack_id']}"
    a = pack["answer"]
    act = doc.get("recommended_action")
    act = act.get("action") if isinstance(act, dict) else act
    if doc.get("verdict") != a.get("verdict") or act != a.get("recommended_action") \
            or _claim_core(doc.get("claims")) != _claim_core(a.get("claims")):
        return None, "its verdict, action or claims differ from the pack's"
    return doc, None
