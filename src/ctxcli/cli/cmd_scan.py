"""ctx scan."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import emit_json, handle_errors


def register(app: typer.Typer) -> None:
    app.command("scan")(scan)


def scan(
    files: Annotated[list[Path], typer.Argument(help="Text files to check (UTF-8; e-mails, tickets, wiki "
                                                "pages, snapshot JSONL ...).", show_default=False)],
    *,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON document: one entry per file with "
                                          "its findings.")] = False,
) -> None:
    """Check files for untrusted instructions (prompt injection) before registering them.

    Runs the same detector as the injection gate: the text itself, a deobfuscated view
    (markup, spaced-out letters, look-alike letters, leetspeak) and decoded encoded spans
    (base64, base32, hex, percent, \\u escapes, rot13, reversed), then the two learned
    layers (learned:intent-lr@1, which scores each sentence, line or cell and names the
    strongest one's offset, and learned:ngram-lr@2; each with its score). Each finding names
    its pattern id (family), language, what it was decoded from and its span in that view.
    The first line (and "detector" in --json) names the detector: its version, its rules'
    sha256 and each learned layer with its weights' sha256 and threshold, as a pack records them.
    Exit 1 when anything is found, 0 when every file is clean, 2 when a file cannot be
    read.

    Example: ctx scan sources/external-mailbox/objects.jsonl --json
    """
    with handle_errors():
        from ..injection.scan_files import scan_files

        from ..injection_identity import identity

        res = scan_files(list(files))
        n = sum(len(r["findings"]) for r in res)
        det = identity()
        if as_json:
            emit_json({"detector": det, "files": res, "findings": n})
        else:
            from .console import console, safe

            c = console()
            ln, it = det["learned"], det["intent"]
            c.print(f"detector {det['version']} (rules sha256 {det['rules_sha256'][:12]}), {it['name']} "
                    f"(weights sha256 {it['weights_sha256'][:12]}, threshold {it['threshold']}), {ln['name']} "
                    f"(weights sha256 {ln['weights_sha256'][:12]}, threshold {ln['threshold']})")
            for r in res:
                if not r["findings"]:
                    c.print(f"{safe(r['file'])}: clean")
                for f in r["findings"]:
                    via = safe(f" [decoded from {f['decoded_from']}]") if f["decoded_from"] else ""
                    lang = f" ({f['language']})" if f["language"] else ""
                    c.print(f"{safe(r['file'])}: {f['pattern']}{lang}{via} "
                            f"at {f['span'][0]}-{f['span'][1]}: {safe(f['rule'])}: \"{safe(f['excerpt'])}\"")
            c.print(f"{n} finding(s) in {len(res)} file(s)")
        if n:
            from ..errors import ExitCode

            raise typer.Exit(ExitCode.FAILED)
