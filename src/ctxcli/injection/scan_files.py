"""Library side of ``ctx scan``: read text files and report every untrusted instruction
the injection detector finds in them. Never prints or exits."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from ..errors import InputError

MAX_FILE_BYTES = 64 << 20
LEARNED_FAMILY = "a learned layer scores a segment or window of the text at or above its threshold"


def read_text_file(path: Path) -> str:
    """A regular UTF-8 text file of at most MAX_FILE_BYTES, or InputError (exit 2)."""
    disp = str(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError("no such file", file=disp) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", file=disp) from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError("not a regular file", file=disp)
    if st.st_size > MAX_FILE_BYTES:
        raise InputError(f"larger than {MAX_FILE_BYTES >> 20} MiB", file=disp)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", file=disp) from None
    if len(data) > MAX_FILE_BYTES:
        raise InputError(f"larger than {MAX_FILE_BYTES >> 20} MiB", file=disp)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", file=disp) from None


def scan_files(paths: list[Path]) -> list[dict[str, Any]]:
    """One entry per file, in the given order: ``{"file", "findings": [...]}``; each
    finding has pattern (the family id, or ``learned:<model>@<version>`` for the learned
    layer, whose rule carries its score), family, rule, language, decoded_from, span
    (offsets into the normalised or decoded view named by decoded_from) and excerpt.
    Every file is read (and checked) before any is scanned."""
    texts = [(str(p), read_text_file(p)) for p in paths]
    from . import FAMILIES, intent_finding, learned_finding, normalize_for_scan, scan_text

    out = []
    for disp, text in texts:
        norm = normalize_for_scan(text) if text else ""
        found = scan_text(text, norm=norm)
        for layer in (intent_finding, learned_finding):
            lf = layer(text, norm=norm) if text else None
            if lf is not None:
                found.append(lf)
        findings = [{
            "pattern": f.pattern, "family": FAMILIES.get(f.pattern, LEARNED_FAMILY), "rule": f.label,
            "language": f.lang, "decoded_from": f.decoded_from or None, "span": [f.start, f.end],
            "excerpt": f.excerpt,
        } for f in found]
        out.append({"file": disp, "findings": findings})
    return out
