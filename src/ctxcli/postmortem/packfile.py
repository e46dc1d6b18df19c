"""Reading a pack file and proving it is the pack ctx wrote.

Everything a post-mortem says rests on the pack, so a pack is read in one place: it must be
a JSON object of the known schema with the sections every pack has, and its content hash
(over the pack without ``content_hash`` and ``pack_id``) must match the recorded hash and
id. A pack edited by hand is *tampered* and nothing in it is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import PackError

PACK_SCHEMAS = ("ctx.pack/1",)

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


def pack_hash(data: dict[str, Any]) -> str:
    """The content hash a pack should record: over everything but ``content_hash`` and ``pack_id``."""
    from ..util.canon import obj_hash

    return obj_hash({k: v for k, v in data.items() if k not in ("content_hash", "pack_id")})


def pack_id_for(h: str) -> str:
    return "pk-" + h.split(":", 1)[-1][:16]


def load_pack(path: Path | str) -> LoadedPack:
    """Read, check and verify a pack file; raise :class:`PackError` (exit 2) otherwise."""
    p = Path(path)
    disp = str(path)
    if not p.exists():
        raise PackError("no such file", file=disp)
    if not p.is_file():
        raise PackError("not a pack: not a file", file=disp)
    try:
        if p.stat().st_size > MAX_PACK_BYTES:
            raise PackError(f"not a pack: larger than {MAX_PACK_BYTES // (1024 * 1024)} MB", file=disp)
        raw = p.read_bytes()
    except OSError as e:
        raise PackError(f"cannot read the pack: {e.strerror or e}", file=disp) from None
    import orjson

    from ..util import jsonstrict

    try:
        data = jsonstrict.loads(raw)
    except orjson.JSONDecodeError as e:
        raise PackError(f"not a pack: not valid JSON ({str(e).splitlines()[0]})", file=disp) from None
    except jsonstrict.StrictJSONError as e:   # ctx never writes a duplicate key or a huge integer
        raise PackError(f"not a pack: {e}", file=disp) from None
    check_pack(data, disp)
    return LoadedPack(path=p, data=data, raw=raw)


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
    h = pack_hash(data)
    if data["content_hash"] != h or data["pack_id"] != pack_id_for(h):
        raise PackError(f"tampered: the pack's content hashes to {h}, but it records "
                        f"{data['pack_id']} / {data['content_hash']}; nothing in it is trusted", file=disp)
    # The hash proves ctx wrote these bytes; the rest only guards against a pack from a
    # future or broken writer that happens to hash correctly.
    req = data["request"]
    for key, typ in _REQUEST.items():
        if not isinstance(req.get(key), typ):
            raise PackError(f"not a pack: request.{key} is missing or a JSON {_kind(req.get(key))}",
                            file=disp, field=f"request.{key}")
    for i, item in enumerate(data["evidence"]):
        if not isinstance(item, dict) or not isinstance(item.get("object_id"), str):
            raise PackError("not a pack: an evidence item without object_id", file=disp, field=f"evidence[{i}]")
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
