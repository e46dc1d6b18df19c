"""Reading a pack file and proving it is the pack ctx wrote.

Everything a post-mortem says rests on the pack, so a pack is read in one place, by
replay, explain-omissions, diff and render alike: it must be a regular file of at most
256 MB (never a FIFO or a device), a JSON object of the known schema with the sections every
pack has; its content hash (over the pack without ``content_hash`` and ``pack_id``) must
match the recorded hash and id, and every evidence item's text must match its
``text_hash``. When the pack is the ``pack.json`` of a run folder, the folder's ``run.json``
is checked too (the hashes of the trace and answer files, and the signature when there is
one: :mod:`ctxcli.run_manifest`). A pack edited by hand is *tampered* and nothing in it is used.

These hashes are checksums, not signatures: whoever can edit a pack can recompute them.
Only a signed run (``ctx investigate --sign``) proves who wrote it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import PackError
from ..util.packid import PACK_SCHEMAS, pack_hash, pack_id_for

# section -> expected JSON type
_REQUIRED: dict[str, type] = {
    "content_hash": str, "pack_id": str, "builder_version": str, "request": dict, "playbook": dict,
    "store": dict, "gate_order": list, "rounds": list, "budget": dict, "evidence": list, "omissions": list,
    "missing": list, "state": dict, "answer": dict,
}
_REQUEST: dict[str, type] = {"case_id": str, "tenant_id": str, "purpose": str, "as_of": str, "subject": dict,
                             "budget": int, "max_rounds": int}
MAX_PACK_BYTES = 256 * 1024 * 1024


@dataclass
class LoadedPack:
    """A verified pack: its parsed content, its bytes on disk, and where it came from."""

    path: Path
    data: dict[str, Any]
    raw: bytes
    run: Any = None             # run_manifest.RunCheck when the pack's run folder was verified

    @property
    def pack_id(self) -> str:
        return self.data["pack_id"]

    @property
    def content_hash(self) -> str:
        return self.data["content_hash"]

    @property
    def request(self) -> dict[str, Any]:
        return self.data["request"]

    @property
    def tenant(self) -> str:
        return self.data["request"]["tenant_id"]

    @property
    def display(self) -> str:
        return str(self.path)

    def run_file(self, name: str, max_bytes: int | None = None) -> bytes | None:
        """A file of the pack's run folder, only when run.json lists it and it still verifies
        (run_manifest.read_run_file): None when absent, PackError when unlisted or changed."""
        from ..run_manifest import MAX_RUN_FILE, read_run_file

        return read_run_file(self.run, self.path.parent, name, max_bytes or MAX_RUN_FILE)


__all__ = ["LoadedPack", "PACK_SCHEMAS", "check_pack", "load_pack", "pack_hash", "pack_id_for"]


def load_pack(path: Path | str) -> LoadedPack:
    """Read, check and verify a pack file (and its run folder); raise :class:`PackError` (exit 2) otherwise."""
    from ..run_manifest import verify_run_folder
    from ..util.safeio import NotReadable, read_regular

    p = Path(path)
    disp = str(path)
    try:
        raw = read_regular(p, MAX_PACK_BYTES)
    except NotReadable as e:
        msg = str(e)
        raise PackError(msg if msg == "no such file" or msg.startswith("cannot") else f"not a pack: {msg}",
                        file=disp) from None
    import orjson

    from ..util import jsonstrict

    try:
        data = jsonstrict.loads(raw)
    except orjson.JSONDecodeError as e:
        raise PackError(f"not a pack: not valid JSON ({str(e).splitlines()[0]})", file=disp) from None
    except jsonstrict.StrictJSONError as e:   # ctx never writes a duplicate key or a huge integer
        raise PackError(f"not a pack: {e}", file=disp) from None
    check_pack(data, disp)
    run = verify_run_folder(p, data)
    if run is None:
        from ..run_manifest import KEY_ENV, signing_key

        if signing_key(required=False) is not None:
            raise PackError(f"unsigned: {KEY_ENV} is set, so only signed runs are read, and the pack has no "
                            f"run.json beside it", file=disp)
    return LoadedPack(path=p, data=data, raw=raw, run=run)


def check_pack(data: Any, disp: str) -> None:
    """Shape, schema version and content hash of a parsed pack."""
    if not isinstance(data, dict):
        raise PackError(f"not a pack: a JSON {_kind(data)}, not an object", file=disp)
    if "schema_version" not in data:
        raise PackError("not a pack: no schema_version", file=disp)
    sv = data["schema_version"]
    if sv not in PACK_SCHEMAS:
        raise PackError(f"unknown pack schema version {sv!r} (this ctx reads {', '.join(PACK_SCHEMAS)})",
                        file=disp, field="schema_version")
    for key, typ in _REQUIRED.items():
        if key not in data:
            raise PackError(f"not a pack: no {key!r}", file=disp)
        if not isinstance(data[key], typ) or (typ is int and isinstance(data[key], bool)):
            raise PackError(f"not a pack: {key} is a JSON {_kind(data[key])}", file=disp, field=key)
    erasure = data.get("erasure")
    if erasure is not None:     # rewritten by `ctx erase --apply`: sealed anew, its id kept (ledger/erasure.py)
        from ..ledger.erasure import erasure_hash

        h = erasure_hash(data) if isinstance(erasure, dict) else None
        if h is None or erasure.get("sealed_hash") != h or not str(data["pack_id"]).startswith("pk-"):
            raise PackError(f"tampered: the erased pack's content hashes to {h}, but it records "
                            f"{erasure.get('sealed_hash') if isinstance(erasure, dict) else None}; nothing in it "
                            f"is trusted", file=disp)
        erased = {x.get("evidence_id") for x in erasure.get("erased") or [] if isinstance(x, dict)}
    else:
        erased = set()
        h = pack_hash(data)
    if erasure is None and (data["content_hash"] != h or data["pack_id"] != pack_id_for(h)):
        raise PackError(f"tampered: the pack's content hashes to {h}, but it records "
                        f"{data['pack_id']} / {data['content_hash']}; nothing in it is trusted", file=disp)
    # The hash proves ctx wrote these bytes; the rest only guards against a pack from a
    # future or broken writer that happens to hash correctly.
    req = data["request"]
    for key, typ in _REQUEST.items():
        if not isinstance(req.get(key), typ):
            raise PackError(f"not a pack: request.{key} is missing or a JSON {_kind(req.get(key))}",
                            file=disp, field=f"request.{key}")
    from ..util.canon import content_hash

    for i, item in enumerate(data["evidence"]):
        if not isinstance(item, dict) or not isinstance(item.get("object_id"), str):
            raise PackError("not a pack: an evidence item without object_id", file=disp, field=f"evidence[{i}]")
        text, th = item.get("text"), item.get("text_hash")
        if not isinstance(text, str) or not isinstance(th, str):
            raise PackError("not a pack: an evidence item without text or text_hash", file=disp,
                            field=f"evidence[{i}]")
        if item.get("evidence_id") in erased and isinstance(item.get("erased"), dict) and text == "":
            continue            # its text was erased; its text_hash stays
        if content_hash(text) != th:
            raise PackError(f"tampered: the text of evidence {item.get('evidence_id')} ({item['object_id']}) "
                            f"hashes to {content_hash(text)[:19]}…, but it records text_hash {th[:19]}…",
                            file=disp, field=f"evidence[{i}].text")
    for i, om in enumerate(data["omissions"]):
        if not isinstance(om, dict) or not isinstance(om.get("ref"), str) or not isinstance(om.get("gate"), str):
            raise PackError("not a pack: an omission without ref or gate", file=disp, field=f"omissions[{i}]")


def _kind(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


MAX_TRACE_BYTES = 256 * 1024 * 1024


def read_linked_trace(lp: LoadedPack, path: Path | None = None) -> list[dict[str, Any]] | None:
    """The trace beside the pack (``trace.jsonl``), proven to be this pack's: every event must
    carry the pack's ``pack_id`` and the run id of its request (``run-`` + request hash).
    None when there is no trace file; :class:`PackError` (exit 2) for a trace of another pack
    or run, or one that does not parse."""
    import orjson

    from ..engine.trace import request_hash, run_id_for

    p = Path(path) if path is not None else lp.path.parent / "trace.jsonl"
    disp = str(p)
    if lp.run is not None and p == lp.path.parent / "trace.jsonl":    # the run's own: listed and verified
        raw = lp.run_file("trace.jsonl", MAX_TRACE_BYTES)
        if raw is None:
            return None
    else:
        if not p.is_file():
            return None
        try:
            if p.stat().st_size > MAX_TRACE_BYTES:
                raise PackError(f"not a trace: larger than {MAX_TRACE_BYTES // (1024 * 1024)} MB", file=disp)
            raw = p.read_bytes()
        except OSError as e:
            raise PackError(f"cannot read the trace: {e.strerror or e}", file=disp) from None
    run = run_id_for(request_hash(lp.request))
    events: list[dict[str, Any]] = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            ev = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise PackError("not a trace: not valid JSON", file=disp, line=n) from None
        if not isinstance(ev, dict):
            raise PackError(f"not a trace: a JSON {_kind(ev)}, not an event", file=disp, line=n)
        pid = ev.get("pack_id")
        if pid != lp.pack_id:
            why = f"belongs to pack {pid}" if isinstance(pid, str) else "names no pack (not linked)"
            raise PackError(f"trace of another pack: event {ev.get('seq')} {why}, not {lp.pack_id}",
                            file=disp, line=n)
        if ev.get("run") != run:
            raise PackError(f"trace of another run: event {ev.get('seq')} has run {ev.get('run')}, "
                            f"but the pack's request is run {run}", file=disp, line=n)
        events.append(ev)
    return events
