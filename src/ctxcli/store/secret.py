"""The store secret: the key of every keyed digest and opaque reference ctx writes.

It is never in the store file nor in any output. ``CTX_SECRET`` (at least 16 characters)
wins; otherwise ``secret.key`` beside the store holds 32 random bytes in hex, created once
by ctx (mode 0600, atomically) and reused, so that the same store and secret give
byte-identical packs. Deleting it gives new opaque references and keyed hashes: packs built
before no longer replay identically.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
import tempfile
from pathlib import Path

from ..errors import StoreError, UsageError

ENV = "CTX_SECRET"
KEY_FILE = "secret.key"
_MIN_ENV = 16
_HEX = re.compile(rb"[0-9a-f]{64}\n?")


def key_path(db: Path) -> Path:
    """Where the key file of the store ``db`` lives (beside it)."""
    return Path(db).parent / KEY_FILE


def store_key(db: Path | str, *, create: bool = True) -> bytes | None:
    """The secret for the store ``db``: ``$CTX_SECRET``, else its key file (created when
    missing and ``create``; None when missing and not ``create``); for a PostgreSQL store,
    else the key in its ``ctx_meta.secret`` table (created by ``ctx store init``, readable only
    by roles the store's owner grants it to)."""
    env = os.environ.get(ENV)
    if env is not None:
        raw = env.encode("utf-8", "surrogateescape")
        if len(raw) < _MIN_ENV:
            raise UsageError(f"{ENV} must be at least {_MIN_ENV} characters")
        return raw
    if isinstance(db, str):
        from .pg.admin import read_secret

        return read_secret(db)
    p = key_path(db)
    key = _read(p)
    if key is None and create:
        _create(p)
        key = _read(p)
    return key


def _read(p: Path) -> bytes | None:
    try:
        st = os.stat(p)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise StoreError(f"{p}: cannot read the store secret ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode) or st.st_size > 1024:
        raise StoreError(f"{p}: not a ctx secret key (a regular file of 64 hex digits)")
    try:
        data = p.read_bytes()
    except OSError as e:
        raise StoreError(f"{p}: cannot read the store secret ({e.strerror})") from None
    if not _HEX.fullmatch(data):
        raise StoreError(f"{p}: not a ctx secret key (a regular file of 64 hex digits); remove it to let ctx "
                         f"create a new one (earlier packs will then no longer replay identically)")
    return bytes.fromhex(data[:64].decode("ascii"))


def _create(p: Path) -> None:
    """Write a fresh key to a private temporary file and link it into place: a concurrent
    creator's key wins if it got there first, and nobody ever reads a half-written key."""
    data = secrets.token_hex(32).encode("ascii") + b"\n"
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{KEY_FILE}.", suffix=".tmp", dir=p.parent)   # mode 0600
    except OSError as e:
        raise StoreError(f"{p}: cannot create the store secret ({e.strerror}); set {ENV} or make the "
                         f"store's folder writable") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, p)
        except FileExistsError:
            pass
        except OSError as e:
            raise StoreError(f"{p}: cannot create the store secret ({e.strerror}); set {ENV} instead") from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
