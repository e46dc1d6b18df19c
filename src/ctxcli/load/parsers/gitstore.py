"""What a git source may read: only its snapshot folder, and no blob inflated past the limit.

A repository folder can point elsewhere: a ``.git`` *file* (``gitdir: …``, as in a linked work
tree or a submodule), a ``commondir`` file, ``objects/info/alternates``, or a symbolic link
anywhere under the control folder. :func:`confine` refuses each one that leads outside the
snapshot folder, before dulwich opens the repository. :func:`stored_size` reads an object's size
from its header (a loose object's first inflated bytes; a packed object's header, or a delta's
target size) so an oversized blob is refused without being inflated.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

from ...errors import InputError

_HEAD_BYTES = 4096             # compressed bytes read to decode an object's header
_OFS_DELTA, _REF_DELTA = 6, 7


def _inside(p: Path, root: Path) -> bool:
    return p == root or root in p.parents


def _pointer(path: Path, disp: str, what: str) -> str:
    from ...util.safeio import NotReadable, read_regular

    try:
        return read_regular(path, _HEAD_BYTES, follow=False).decode("utf-8", "replace")
    except NotReadable as e:
        raise InputError(f"{what}: {e}", file=disp) from None


def confine(real: Path, real_snap: Path, disp: str) -> None:
    """Refuse a repository folder whose control data leads outside ``real_snap``."""
    out = "leads outside the snapshot folder; clone the repository into it instead"
    control = real / ".git"
    if control.is_symlink() or control.is_file() or control.is_dir():
        if control.is_file() and not control.is_symlink():
            text = _pointer(control, disp, ".git")
            if not text.startswith("gitdir:"):
                raise InputError(".git is a file but not a 'gitdir:' pointer", file=disp)
            control = real / text[len("gitdir:"):].strip()
            where = ".git (gitdir:)"
        else:
            where = ".git"
    else:
        control, where = real, "the repository"     # a bare repository
    control = Path(os.path.realpath(control))
    if not _inside(control, real_snap):
        raise InputError(f"{where} {out}", file=disp)
    common = control / "commondir"
    if common.exists() or common.is_symlink():
        target = Path(os.path.realpath(control / _pointer(common, disp, "commondir").strip()))
        if not _inside(target, real_snap):
            raise InputError(f"commondir {out}", file=disp)
        _links(target, real_snap, disp, out)
    _links(control, real_snap, disp, out)


def _links(control: Path, real_snap: Path, disp: str, out: str) -> None:
    for top, dirs, files in os.walk(control, followlinks=False):
        for name in (*dirs, *files):
            p = Path(top) / name
            if p.is_symlink() and not _inside(Path(os.path.realpath(p)), real_snap):
                raise InputError(f"{p.relative_to(control).as_posix()} is a link that {out}", file=disp)
        for name in ("alternates", "http-alternates"):
            if Path(top).name == "info" and name in files:
                objects = Path(top).parent
                for line in _pointer(Path(top) / name, disp, f"objects/info/{name}").splitlines():
                    line = line.strip()
                    if not line or line.startswith("#"):
                        continue
                    if name == "http-alternates" or not _inside(Path(os.path.realpath(objects / line)), real_snap):
                        raise InputError(f"objects/info/{name} {out}", file=disp)


def _varint_le(data: bytes, i: int) -> tuple[int, int]:
    """A delta header's size (7 bits a byte, least significant first) and the next index."""
    n = shift = 0
    while True:
        if i >= len(data):
            raise ValueError("truncated delta header")
        b = data[i]
        n |= (b & 0x7F) << shift
        shift += 7
        i += 1
        if not b & 0x80:
            return n, i


def _packed_size(path: str, offset: int) -> int:
    with open(path, "rb") as fh:
        fh.seek(offset)
        head = fh.read(_HEAD_BYTES)
    b = head[0]
    kind, size, shift, i = (b >> 4) & 7, b & 0x0F, 4, 1
    while b & 0x80:
        b = head[i]
        size |= (b & 0x7F) << shift
        shift += 7
        i += 1
    if kind not in (_OFS_DELTA, _REF_DELTA):
        return size
    if kind == _OFS_DELTA:
        while head[i] & 0x80:
            i += 1
        i += 1
    else:
        i += 20
    delta = zlib.decompressobj().decompress(head[i:], 32)    # base size, then the target's size
    _, j = _varint_le(delta, 0)
    return _varint_le(delta, j)[0]


def stored_size(store, sha: bytes) -> int | None:
    """The inflated size of object ``sha`` (hex) from its header alone; None when the store
    keeps it in memory (a bundle) or elsewhere."""
    for pack in getattr(store, "packs", ()):
        try:
            offset = pack.index.object_offset(sha)
        except KeyError:
            continue
        try:
            return _packed_size(os.fspath(pack.data.path), offset)
        except (IndexError, ValueError, zlib.error):
            return None         # a damaged header: dulwich reads the object and names the damage
    base = getattr(store, "path", None)
    if base is None:
        return None
    from dulwich.objects import hex_to_filename

    path = hex_to_filename(os.fspath(base), sha.decode() if isinstance(sha, bytes) else sha)
    try:
        with open(path, "rb") as fh:
            head = zlib.decompressobj().decompress(fh.read(_HEAD_BYTES), 64)
    except FileNotFoundError:
        return None
    except zlib.error:
        return None             # damaged: dulwich reads the object and names the damage
    try:
        return int(head.split(b"\0", 1)[0].split(b" ", 1)[1])
    except (IndexError, ValueError):
        return None
