"""Erasure that reaches run folders already written.

``ctx erase OBJECT_ID --reason …`` records an erasure in ``erasures.jsonl`` (beside the ledger);
every tombstone a load finds is recorded the same way. ``ctx erase --apply`` then rewrites every
run folder ctx wrote in the project that holds an erased object:

* in pack.json, the object's evidence item loses its text, title and facts (``text`` "",
  ``title`` and string facts "[erased]"; ``text_hash`` and ``content_hash`` stay) and carries
  ``erased`` (when, by whom, why); a visible omission of it loses its title; every other string
  of the object (its text, each of its sentences, its title) is replaced by
  "[erased]" wherever it appears in the run's files (trace, answer, answer.md, model exchange)
  except inside other objects' evidence items (a phrase another object shares stays in that
  object's text, which must still match its ``text_hash``);
* the pack records the erasure (``erasure``: the items, when it was applied, and the hash of the
  pack as it is now, ``sealed_hash``, which :func:`postmortem.packfile.check_pack` verifies in
  place of the original ``content_hash``: the pack keeps its id);
* run.json is re-sealed: the new file hashes, re-signed with ``$CTX_SIGNING_KEY`` when the run was
  signed with that key, else marked ``resealed`` (after erasure, unsigned now);
* the folder is replaced in one rename (write.write_run_folder).

Kept store generations (other than the live store) that still hold an erased object (by id, or a
copy of its text under another id) are removed, on both backends (a DuckDB generation file; a
PostgreSQL generation's schema, every row of it): a generation is a cache of the store, and
replay would rebuild the object from it. The live store is named (``current_store_holds``).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from ..erasures import ERASURES_FILE
from ..errors import UsageError
from ..util.canon import sealed_hash
from ..util.masking import map_strings

ERASED = "[erased]"
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _dir(db=None) -> Path:
    from .records import ledger_dir

    return ledger_dir(db)


def read_erasures(db=None) -> list[dict[str, Any]]:
    """The recorded erasures, checked line by line (ctxcli/erasures.py: a bad line is exit 2)."""
    from ..erasures import read

    return read(_dir(db))


def _content_keys(object_id: str, tenant: str | None, db=None, generation: int | None = None) -> list[str]:
    """The keyed content and duplicate hashes of the object as the store (or its kept
    ``generation``) holds it; empty when there is no store or it holds none."""
    from .. import paths
    from ..erasures import content_keys
    from ..store import is_postgres, open_store
    from ..store.secret import store_key

    addr = paths.db_path(db)
    if not is_postgres(addr) and not Path(addr).is_file():
        return []
    con = open_store(addr, generation)
    if con is None:
        return []
    try:
        return content_keys(con, object_id, tenant, store_key(addr))
    finally:
        con.close()


def record(object_id: str, *, reason: str, by: str | None = None, tenant: str | None = None,
           at: str | None = None, via: str = "ctx erase", db=None) -> tuple[dict[str, Any], bool]:
    """Record an erasure (once per object and tenant). Returns it and whether it is new."""
    from .commit import append_synced, locked
    from .records import line_of, now_utc

    if not object_id.strip() or any(ord(c) < 32 for c in object_id):
        raise UsageError("OBJECT_ID: give the object's id")
    if not reason or not reason.strip():
        raise UsageError("--reason: say why the object is erased (it is recorded in every pack it reaches)")
    d = _dir(db)
    with locked(d):
        for e in read_erasures(db):
            if e["object_id"] == object_id and e.get("tenant_id") in (None, tenant):
                return e, False
        e = {"object_id": object_id, "tenant_id": tenant, "reason": reason.strip(),
             "by": by or os.environ.get("USER") or "unknown", "at": at or now_utc(), "via": via}
        keys = _content_keys(object_id, tenant, db)
        if keys:        # copies of the text under other ids are erased too (keyed: no plain digest here)
            e["content_keys"] = keys
        append_synced(d / ERASURES_FILE, line_of(e))
        return e, True


def record_tombstones(rows: list[tuple], db=None) -> int:
    """Record the tombstones a load found ((tenant, object_id, deleted_at, reason) rows), in one append."""
    from .commit import append_synced, locked
    from .records import line_of, now_utc

    if not rows:
        return 0
    d = _dir(db)
    with locked(d):
        have = {(e["object_id"], e.get("tenant_id")) for e in read_erasures(db)}
        anyt = {oid for oid, t in have if t is None}
        new = [{"object_id": oid, "tenant_id": tenant, "reason": reason or "tombstoned",
                "by": "ctx load (tombstone)", "at": deleted_at or now_utc(), "via": "tombstone"}
               for tenant, oid, deleted_at, reason in rows if (oid, tenant) not in have and oid not in anyt]
        for e in new:
            keys = _tombstoned_keys(e["object_id"], e["tenant_id"], db)
            if keys:
                e["content_keys"] = keys
        if new:
            append_synced(d / ERASURES_FILE, b"".join(line_of(e) for e in new))
    return len(new)


def _tombstoned_keys(object_id: str, tenant: str | None, db=None) -> list[str]:
    """A tombstoned object is gone from the store the load just published: its hashes come
    from the newest kept generation that still holds it."""
    from .. import paths
    from ..store import is_postgres, kept_generations

    addr = paths.db_path(db)
    if not is_postgres(addr) and not Path(addr).is_file():
        return []
    for n, _cur in kept_generations(addr):          # newest first
        keys = _content_keys(object_id, tenant, db, n)
        if keys:
            return keys
    return []


def _applies(e: dict[str, Any], tenant: str | None) -> bool:
    return e.get("tenant_id") in (None, tenant)


def _strings(item: dict[str, Any]) -> list[str]:
    """Every string of an evidence item's object that a run folder may repeat, longest first."""
    out = set()
    text = item.get("text") or ""
    if text:
        out.add(text)
        out.update(s.strip() for s in _SENTENCE.split(text) if len(s.strip()) >= 12)
    if isinstance(item.get("title"), str) and item["title"] and item["title"] != ERASED:
        out.add(item["title"])
    out.discard(ERASED)
    return sorted(out, key=lambda s: (-len(s), s))


def _scrub(v: Any, strings: list[str], keep: set[str]) -> Any:
    """``v`` with every erased string replaced by "[erased]" in every string value (the
    strings in ``keep`` and the values of id fields left as they are)."""
    def erase(t: str) -> str:
        if t in keep:
            return t
        for s in strings:
            if s in t:
                t = t.replace(s, ERASED)
        return t

    return map_strings(v, erase, skip=_IDS)


# fields that hold ids and hashes: never rewritten (the erasure keeps them)
_IDS = {"object_id", "evidence_id", "pack_id", "content_hash", "text_hash", "run", "ref", "source_id", "hash",
        "sealed_hash", "subject_id", "case_id", "tenant_id", "locator"}


def erasure_hash(pack: dict[str, Any]) -> str:
    """The hash an erased pack is sealed with: its content now, without its ids and this hash."""
    from ..util.canon import obj_hash

    body = {k: v for k, v in pack.items() if k not in ("content_hash", "pack_id")}
    er = dict(body.get("erasure") or {})
    er.pop("sealed_hash", None)
    body["erasure"] = er
    return obj_hash(body)


def erase_pack(pack: dict[str, Any], erasures: list[dict[str, Any]], applied_at: str, *,
               every: dict[str, Any] | None = None, key: bytes | None = None,
               digests: dict[str, str] | None = None) -> tuple[dict, list[str]]:
    """The pack with the erased objects' content removed, and the strings removed (for the other
    files). ``every`` (an erasure note): every object's content, for retention and --no-text.
    ``digests`` (filled when given): each plain digest of an erased text → what replaces it
    (keyed with the store secret ``key``; "[erased]" without one) — an erasure leaves no plain
    SHA-256 of the text to confirm a guess against."""
    tenant = (pack.get("request") or {}).get("tenant_id")
    by_id = {e["object_id"]: e for e in erasures if _applies(e, tenant)}
    strings: set[str] = set()
    done = list((pack.get("erasure") or {}).get("erased") or [])
    have = {x["evidence_id"] for x in done}
    for item in pack.get("evidence") or []:
        e = every or by_id.get(item.get("object_id"))
        if e is None or item.get("evidence_id") in have:
            continue
        strings.update(_strings(item))
        note = {"at": e["at"], "by": e["by"], "reason": e["reason"]}
        item.update(text="", title=ERASED, facts=_erase_facts(item.get("facts")), erased=note)
        if digests is not None and every is None:
            for f in ("content_hash", "text_hash"):
                h = item.get(f)
                if isinstance(h, str) and h.startswith("sha256:"):
                    digests[h] = sealed_hash(h, key=key) if key is not None else ERASED
                    item[f] = digests[h]
        done.append({"object_id": item["object_id"], "evidence_id": item["evidence_id"], **note})
    for om in pack.get("omissions") or []:
        if isinstance(om, dict) and (every or om.get("object_id") in by_id) and om.get("title") not in (None, ERASED):
            strings.add(om["title"])
            om["title"] = ERASED
    if not strings:
        return pack, []
    order = sorted(strings - {ERASED}, key=lambda s: (-len(s), s))
    keep = {str(pack.get(k)) for k in ("pack_id", "content_hash")}
    # other objects' evidence is theirs (a phrase they share with the erased one stays, and their
    # text still matches its text_hash); everything else the run says is scrubbed
    pack = {k: (v if k == "evidence" else _scrub(v, order, keep)) for k, v in pack.items()}
    if digests:
        pack = _rekey(pack, digests)
    pack["erasure"] = {"erased": sorted(done, key=lambda x: x["evidence_id"]), "applied_at": applied_at}
    pack["erasure"]["sealed_hash"] = erasure_hash(pack)
    return pack, order


def _rekey(v: Any, digests: dict[str, str]) -> Any:
    """``v`` with every plain digest of an erased text replaced (ids and hashes included)."""
    return map_strings(v, lambda t: digests.get(t, t))


def _erase_facts(v: Any) -> Any:
    """Every string among the facts erased (numbers, booleans and the names kept)."""
    return map_strings(v, lambda t: ERASED)


def _scrub_file(name: str, data: bytes, strings: list[str]) -> bytes:
    import orjson

    from ..util.canon import canonical_bytes, pretty_bytes

    if name.endswith(".jsonl"):
        lines = [ln for ln in data.split(b"\n") if ln.strip()]
        return b"".join(canonical_bytes(_scrub(orjson.loads(ln), strings, set())) + b"\n" for ln in lines)
    if name.endswith(".json"):
        try:
            return pretty_bytes(_scrub(orjson.loads(data), strings, set()))
        except orjson.JSONDecodeError:
            pass
    text = data.decode("utf-8", errors="surrogateescape")
    for s in strings:
        text = text.replace(s, ERASED)
    return text.encode("utf-8", errors="surrogateescape")


def _reseal(run_raw: bytes, files: dict[str, bytes], applied_at: str, *, mark: bool = True) -> bytes:
    import hashlib

    import orjson

    from ..run_manifest import key_id, run_mac, signing_key
    from ..util.canon import pretty_bytes

    body = orjson.loads(run_raw)
    body["files"] = {n: "sha256:" + hashlib.sha256(b).hexdigest() for n, b in sorted(files.items())
                     if n in body.get("files", {})}
    sig = body.pop("signature", None)
    key = signing_key(required=False)
    if mark:
        body["resealed"] = {"after": "erasure", "at": applied_at}
    if sig is not None and key is not None and key_id(key) == sig.get("key_id"):
        body["signature"] = {"alg": "hmac-sha256", "key_id": sig["key_id"], "value": run_mac(key, body)}
    elif sig is not None:
        body.setdefault("resealed", {"after": "erasure", "at": applied_at})
        body["resealed"]["unsigned"] = f"was signed with {sig.get('key_id')}; no key to sign it again"
    return pretty_bytes(body)


def _folders(db=None) -> list[Path]:
    from .. import paths
    from ..run_list import run_folders
    from ..write import RUN_MARKER
    from .commit import records
    from .records import ledger_dir, resolve

    seen: dict[str, Path] = {}
    for f in run_folders(paths.runs_dir()):
        seen[str(f.resolve())] = f
    for r in records(ledger_dir(db)):
        f = resolve(r.get("folder"))
        if f is not None and (f / RUN_MARKER).is_file() and (f / "pack.json").is_file():
            seen.setdefault(str(f.resolve()), f)
    return [seen[k] for k in sorted(seen)]


def redact_files(files: dict[str, bytes], erasures: list[dict[str, Any]], at: str, *,
                 every: dict[str, Any] | None = None, mark: bool = True,
                 key: bytes | None = None) -> dict[str, bytes] | None:
    """A run folder's files with the erased content removed and run.json re-sealed; None when
    the pack holds nothing to erase. ``mark`` false: run.json is written anew, not "re-sealed".
    ``key`` (the store secret): the plain digests of erased texts become keyed ones in every file."""
    import orjson

    from ..run_manifest import RUN_FILE
    from ..util.canon import pretty_bytes

    try:
        pack = orjson.loads(files["pack.json"])
    except (KeyError, orjson.JSONDecodeError):
        return None
    digests: dict[str, str] = {}
    new, strings = erase_pack(pack, erasures, at, every=every, key=key, digests=digests)
    if not strings:
        return None
    files = {n: (b if n in ("pack.json", RUN_FILE, "timings.json") else _scrub_file(n, b, strings))
             for n, b in files.items()}
    for plain, keyed in digests.items():        # trace, answer, model exchange: the same digests keyed
        files = {n: (b if n in ("pack.json", RUN_FILE) else b.replace(plain.encode(), keyed.encode()))
                 for n, b in files.items()}
    files["pack.json"] = pretty_bytes(new)
    if RUN_FILE in files:
        files[RUN_FILE] = _reseal(files[RUN_FILE], files, at, mark=mark)
    return files


NO_TEXT = {"at": "when written", "by": "ctx investigate --no-text", "reason": "written without text (--no-text)"}


def without_text(files: dict[str, bytes]) -> dict[str, bytes]:
    """A new run's files written with ids, hashes and decisions only (deterministic: no clock)."""
    return redact_files(files, [], NO_TEXT["at"], every=NO_TEXT, mark=False) or files


def retention_days(explicit: int | None = None) -> int | None:
    """Days a run folder keeps evidence text: ``explicit``, else ``[retention] text_days`` in ctx.toml."""
    from ..paths import toml_count

    return toml_count("retention", "text_days", explicit, flag="--older-than", minimum=0, default=None,
                      what="a whole number of days, 0 or more")


def redact_text(db=None, *, older_than: int | None = None, now: float | None = None) -> dict[str, Any]:
    """Retention: every run folder whose pack.json is older than the retention period keeps only
    ids, hashes and decisions (every evidence item's text and title removed, as for an erasure)."""
    import time

    days = retention_days(older_than)
    if days is None:
        raise UsageError("--redact-text needs a retention period: --older-than DAYS or [retention] text_days "
                         "in ctx.toml")
    limit = (now if now is not None else time.time()) - days * 86400

    def every(folder: Path) -> dict[str, Any] | None:
        try:
            old = (folder / "pack.json").stat().st_mtime < limit
        except OSError:
            return None
        return {"at": _now(), "by": "ctx erase --redact-text",
                "reason": f"retention: evidence text is kept {days} day(s)"} if old else None

    return apply(db, every=every, generations=False)


def _now() -> str:
    from .records import now_utc

    return now_utc()


def apply(db=None, *, every=None, generations: bool = True) -> dict[str, Any]:
    """Rewrite every run folder holding an erased object; drop kept generations holding one.
    ``every(folder)``: an erasure note for all of that folder's content, or None to leave it.
    A file ctx did not write inside a run folder (or one it cannot read as a regular file) is
    left as it is and reported in ``skipped``; the folder's own files are still rewritten, and
    every other folder too."""
    from ..write import RUN_MARKER, marker_files
    from .records import display, now_utc

    erasures = read_erasures(db) if every is None else []
    key = _store_key(db) if every is None else None
    at = now_utc()
    rewritten: list[str] = []
    skipped: list[dict[str, str]] = []
    for folder in _folders(db):
        listed = marker_files(folder)
        if listed is None:
            continue
        note = every(folder) if every is not None else None
        if every is not None and note is None:
            continue
        files, bad = _read_folder(folder, listed - {RUN_MARKER})
        out = redact_files(files, erasures, at, every=note, key=key)
        if out is None:
            continue
        bad += _write_back(folder, out, listed)
        skipped += [{"file": display(folder / n), "why": why} for n, why in bad]
        rewritten.append(display(folder))
    dropped, still = _generations(db, erasures) if generations else ([], [])
    return {"erasures": len(erasures), "rewritten": rewritten, "skipped": skipped,
            "generations_dropped": dropped, "current_store_holds": still}


MAX_RUN_FILE = 512 * 1024 * 1024


def _read_folder(folder: Path, names: set[str]) -> tuple[dict[str, bytes], list[tuple[str, str]]]:
    """The run folder's own files that are regular files (never a link, FIFO or device), and
    (name, why) of those that are not."""
    from ..util.safeio import NotReadable, read_regular

    files: dict[str, bytes] = {}
    bad: list[tuple[str, str]] = []
    for n in sorted(names):
        try:
            files[n] = read_regular(folder / n, MAX_RUN_FILE, follow=False)
        except NotReadable as e:
            if str(e) != "no such file":
                bad.append((n, f"{e}; left as it is"))
    return files, bad


def _write_back(folder: Path, files: dict[str, bytes], listed: set[str]) -> list[tuple[str, str]]:
    """Replace the folder in one rename when it holds only ctx's files; else replace ctx's own
    files one by one (each atomically) and name the others, which are left as they are."""
    from ..errors import UsageError
    from ..write import RUN_MARKER, write_file_atomic, write_run_folder

    try:
        write_run_folder(folder, files)
        return []
    except UsageError:
        pass
    for n, b in files.items():
        write_file_atomic(folder / n, b)
    try:
        names = sorted(e.name for e in os.scandir(folder))
    except OSError:
        names = []
    return [(n, "not written by ctx: left as it is (it may still hold erased text)") for n in names
            if n != RUN_MARKER and n not in listed]


def _store_key(db=None) -> bytes | None:
    from .. import paths
    from ..store import is_postgres
    from ..store.secret import store_key

    addr = paths.db_path(db)
    if is_postgres(addr) or Path(addr).is_file():
        return store_key(addr)
    return None


def _generations(db, erasures: list[dict[str, Any]]) -> tuple[list[int], list[str]]:
    """Remove kept generations (not the live store) holding an erased object, by id or by
    content (a copy under another id: its keyed hashes), on both backends (a DuckDB file, a
    PostgreSQL schema with every row of it); name those the live store still holds (only a
    load without them removes them)."""
    from .. import paths
    from ..erasures import content_keys, held
    from ..store import drop_generations, is_postgres, kept_generations, open_store
    from ..store.secret import store_key

    addr = paths.db_path(db)
    if not erasures or (not is_postgres(addr) and not Path(addr).is_file()):
        return [], []
    key = store_key(addr)
    gens = kept_generations(addr)
    stores = [(n, cur, open_store(addr, n)) for n, cur in gens]
    stores = [(n, cur, con) for n, cur, con in stores if con is not None]
    if not any(cur for _, cur, _ in stores):
        stores.append((None, True, open_store(addr)))      # a store loaded before generations
    try:
        # the erased objects' keyed hashes as any generation holds them: copies under other ids
        keys = {id(e): set(e.get("content_keys") or []) for e in erasures}
        for _, _, con in stores:
            for e in erasures:
                keys[id(e)].update(content_keys(con, e["object_id"], e.get("tenant_id"), key))
        drop: list[int] = []
        still: list[str] = []
        for n, cur, con in stores:
            here = held(con, erasures, key, keys)
            if here and cur:
                still = here
            elif here and n is not None:
                drop.append(n)
    finally:
        for _, _, con in stores:
            con.close()
    return sorted(drop_generations(addr, drop)), still


def record_load_tombstones(db: Path) -> int:
    """Record the tombstones of the store just loaded at ``db`` as erasures (once each)."""
    from datetime import timezone

    from ..store import open_store
    from ..util.timeutil import us_to_dt

    con = open_store(db)
    try:
        rows = con.all_tombstones()
    finally:
        con.close()
    out = []
    for tenant, oid, us, reason in rows:
        dt = us_to_dt(us, timezone.utc) if us is not None else None
        out.append((tenant, oid, dt.isoformat() if dt else None, reason))
    return record_tombstones(out, db)
