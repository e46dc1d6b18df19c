"""Reading a file a user names, without hanging or exhausting memory.

The file is opened non-blocking (a FIFO does not wait for a writer), must be a regular file
(not a folder, FIFO, socket or device such as ``/dev/zero``) and at most ``limit`` bytes; the
checks are made on the opened descriptor, so a file swapped after the check is not read.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class NotReadable(Exception):
    """Why a file cannot be read, as a short phrase ("not a regular file (a FIFO)")."""


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: Path | str, limit: int, *, follow: bool = True) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; :class:`NotReadable` otherwise.
    ``follow`` false: a symbolic link (as the last part of the path) is refused, not followed."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise NotReadable("no such file") from None
    except IsADirectoryError:
        raise NotReadable("not a regular file (a folder)") from None
    except OSError as e:
        if not follow and e.errno == errno.ELOOP:
            raise NotReadable("a symbolic link (not followed)") from None
        raise NotReadable(f"cannot read it ({e.strerror or e})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotReadable(f"not a regular file ({_kind(st.st_mode)})")
        if st.st_size > limit:
            raise NotReadable(f"larger than {_size(limit)}")
        chunks, total = [], 0
        while True:
            try:
                b = os.read(fd, 1 << 20)
            except OSError as e:
                raise NotReadable(f"cannot read it ({e.strerror or e})") from None
            if not b:
                break
            total += len(b)
            if total > limit:              # grew while being read
                raise NotReadable(f"larger than {_size(limit)}")
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n >= 1024 * 1024 else f"{n} bytes"
