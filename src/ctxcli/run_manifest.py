"""The run manifest (``run.json``): what makes a run folder tamper-evident, and optionally signed.

A run folder holds ``pack.json``, ``trace.jsonl``, ``answer.json``, ``answer.md`` and
``run.json``. The pack cannot record the hashes of the other files (they name the pack's id,
which is a hash of the pack), so ``run.json`` records them::

    {"schema_version": "ctx.run/1", "pack_id": "pk-…", "pack_content_hash": "sha256:…",
     "files": {"answer.json": "sha256:…", "answer.md": "sha256:…", "trace.jsonl": "sha256:…"},
     "signature": {"alg": "hmac-sha256", "key_id": "hk-…", "value": "…"}}      # with --sign

The pack is recorded by its content hash (a re-formatted pack.json is the same pack); every
other file by the SHA-256 of its bytes. Files not listed (a marker, files added later) are not
checked, and no reader uses them (:func:`read_run_file`): a file added beside a run is never part
of it. With ``$CTX_SIGNING_KEY`` set, only signed runs are read: a run.json without a signature
(stripped, or written without ``--sign``) and a pack without run.json are errors. The hashes
are *checksums*: anyone who can edit the folder can recompute them. The
signature is an HMAC-SHA256, keyed by ``$CTX_SIGNING_KEY``, over the canonical JSON of the
manifest without its signature; without the key nobody can make one that verifies.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import PackError, UsageError
from .util.canon import canonical_bytes, pretty_bytes

RUN_FILE = "run.json"
RUN_SCHEMA = "ctx.run/1"
KEY_ENV = "CTX_SIGNING_KEY"
MIN_KEY_BYTES = 32
RUN_FILES = ("trace.jsonl", "answer.json", "answer.md")      # files every run folder has beside pack.json
SIDE_FILES = ("case.json", "model.json", "model_answer.json")  # files some run folders have (run.json lists them)
MAX_RUN_JSON = 1024 * 1024
MAX_RUN_FILE = 1024 * 1024 * 1024


# ------------------------------------------------------------------------------ keys
def signing_key(*, required: bool) -> bytes | None:
    """The signing key from ``$CTX_SIGNING_KEY`` (UTF-8 bytes, at least 32); None when unset
    and not ``required``."""
    val = os.environ.get(KEY_ENV)
    if not val:
        if required:
            raise UsageError(f"--sign: set {KEY_ENV} to the signing key (at least {MIN_KEY_BYTES} bytes, "
                             f"e.g. the output of `openssl rand -hex 32`)")
        return None
    try:
        key = val.encode("utf-8")
    except UnicodeEncodeError:      # bytes that are not UTF-8 arrive as surrogates (PEP 383)
        raise UsageError(f"{KEY_ENV} is not UTF-8 text: use printable characters, e.g. the output of "
                         f"`openssl rand -hex 32`") from None
    if len(key) < MIN_KEY_BYTES:
        raise UsageError(f"{KEY_ENV} is too short: a signing key needs at least {MIN_KEY_BYTES} bytes")
    return key


def key_id(key: bytes) -> str:
    """A name for a key that reveals nothing usable about it (keys have at least 256 bits)."""
    return "hk-" + hashlib.sha256(b"ctx-signing-key-id\0" + key).hexdigest()[:12]


def run_mac(key: bytes, body: dict[str, Any]) -> str:
    signed = {k: v for k, v in body.items() if k != "signature"}
    return hmac.new(key, canonical_bytes(signed), hashlib.sha256).hexdigest()


# ------------------------------------------------------------------------------ writing
def run_manifest(files: dict[str, bytes], pack: dict[str, Any], key: bytes | None = None) -> bytes:
    """The bytes of ``run.json`` for a run folder's ``files`` (pack.json is recorded by content hash)."""
    body: dict[str, Any] = {
        "schema_version": RUN_SCHEMA, "pack_id": pack["pack_id"], "pack_content_hash": pack["content_hash"],
        "files": {name: "sha256:" + hashlib.sha256(data).hexdigest()
                  for name, data in sorted(files.items()) if name not in ("pack.json", RUN_FILE)},
    }
    if key is not None:
        body["signature"] = {"alg": "hmac-sha256", "key_id": key_id(key), "value": run_mac(key, body)}
    return pretty_bytes(body)


# ------------------------------------------------------------------------------ verifying
@dataclass
class RunCheck:
    """What was verified beside a pack."""

    manifest: str                     # the run.json path
    files: list[str]                  # the files whose hashes matched
    signed: bool
    key_id: str | None = None
    hashes: dict[str, str] | None = None     # file name -> the sha256 run.json records (readers check again)


def verify_run_folder(pack_path: Path, pack: dict[str, Any]) -> RunCheck | None:
    """Check ``run.json`` beside a ``pack.json``: the pack it names, every file's hash and the
    signature. None when the pack is not in a run folder (its file is not called pack.json,
    or nothing of a run is beside it). Raises :class:`PackError` naming the offending file."""
    from .util.safeio import NotReadable, read_regular

    pack_path = Path(pack_path)
    if pack_path.name != "pack.json":
        return None
    folder = pack_path.parent
    rp = folder / RUN_FILE
    disp = str(rp)
    if not os.path.lexists(rp):
        present = [n for n in RUN_FILES + SIDE_FILES if os.path.lexists(folder / n)]
        if present:
            raise PackError(f"missing: {', '.join(present)} beside the pack cannot be verified without it "
                            f"(deleted, or written by an older ctx: investigate again)", file=disp)
        return None
    try:
        raw = read_regular(rp, MAX_RUN_JSON)
    except NotReadable as e:
        raise PackError(f"not a run manifest: {e}", file=disp) from None
    import orjson

    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise PackError("not a run manifest: not valid JSON", file=disp) from None
    if not isinstance(body, dict) or body.get("schema_version") != RUN_SCHEMA:
        raise PackError(f"not a run manifest of schema {RUN_SCHEMA}", file=disp)
    files = body.get("files")
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise PackError("not a run manifest: files must map file names to hashes", file=disp, field="files")
    if body.get("pack_content_hash") != pack["content_hash"] or body.get("pack_id") != pack["pack_id"]:
        raise PackError(f"tampered: it records pack {body.get('pack_id')!r}, but pack.json is {pack['pack_id']} "
                        f"({pack['content_hash']})", file=disp)
    checked = []
    for name, want in sorted(files.items()):
        if name in ("", ".", "..") or "/" in name or "\\" in name or "\0" in name or name in ("pack.json", RUN_FILE):
            raise PackError(f"not a run manifest: {name!r} is not a file of the run folder", file=disp, field="files")
        fp = folder / name
        try:
            data = read_regular(fp, MAX_RUN_FILE)
        except NotReadable as e:
            raise PackError(f"tampered: {e} (run.json records its hash)", file=str(fp)) from None
        got = "sha256:" + hashlib.sha256(data).hexdigest()
        if got != want:
            raise PackError(f"tampered: the file hashes to {got[:19]}…, run.json records {want[:19]}…", file=str(fp))
        checked.append(name)
    sig = body.get("signature")
    if sig is None:
        if signing_key(required=False) is not None:
            raise PackError(f"unsigned: {KEY_ENV} is set, so only signed runs are read, and run.json has no "
                            f"signature (stripped after signing, or written without --sign)", file=disp)
        return RunCheck(manifest=disp, files=checked, signed=False, hashes=dict(files))
    if not isinstance(sig, dict) or sig.get("alg") != "hmac-sha256" or not isinstance(sig.get("value"), str):
        raise PackError("bad signature: not an hmac-sha256 signature", file=disp, field="signature")
    kid = sig.get("key_id")
    key = signing_key(required=False)
    if key is None:
        raise PackError(f"the run is signed (key {kid}); set {KEY_ENV} to verify its signature", file=disp)
    if key_id(key) != kid:
        raise PackError(f"bad signature: signed with key {kid}, {KEY_ENV} is key {key_id(key)}", file=disp)
    if not hmac.compare_digest(run_mac(key, body).encode(), sig["value"].encode("utf-8")):
        raise PackError("bad signature: the run folder was changed after it was signed", file=disp)
    return RunCheck(manifest=disp, files=checked, signed=True, key_id=kid, hashes=dict(files))


def read_run_file(run: RunCheck | None, folder: Path, name: str, max_bytes: int = MAX_RUN_FILE) -> bytes | None:
    """The bytes of ``name`` in a verified run folder, only when ``run.json`` lists it and the
    bytes read now still have the hash it records. None when the file is absent; PackError
    when it is there but not listed (a file added after the run was written — a forged
    model answer beside a signed run — is never part of the run), or changed since."""
    from .util.safeio import NotReadable, read_regular

    fp = Path(folder) / name
    if run is None:     # a loose pack (no run folder): its neighbours are read as they are, unverified
        if not os.path.lexists(fp):
            return None
        try:
            return read_regular(fp, max_bytes)
        except NotReadable as e:
            raise PackError(f"cannot be read: {e}", file=str(fp)) from None
    listed = (run.hashes or {}).get(name)
    if listed is None:
        if not os.path.lexists(fp):
            return None
        raise PackError("not part of the run: run.json does not list it (added after the run was written); "
                        "not used", file=str(fp))
    try:
        data = read_regular(fp, max_bytes)
    except NotReadable as e:
        raise PackError(f"tampered: {e} (run.json records its hash)", file=str(fp)) from None
    got = "sha256:" + hashlib.sha256(data).hexdigest()
    if got != listed:
        raise PackError(f"tampered: the file hashes to {got[:19]}…, run.json records {listed[:19]}…", file=str(fp))
    return data
