"""ctx render."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import emit_json, handle_errors


class Format(str, Enum):
    markdown = "markdown"
    messages = "messages"


def register(app: typer.Typer) -> None:
    app.command("render")(render)


def render(
    pack: Annotated[Path, typer.Argument(help="A run folder written by `ctx investigate`, its pack.json, or "
                                         "`latest` (the newest run).", show_default=False)],
    *,
    fmt: Annotated[Format, typer.Option("--format", help="markdown: the model-visible text; messages: a JSON "
                                        "list of {role, content} (system, user) for an OpenAI-compatible "
                                        "chat call.")] = Format.markdown,
    encoding: Annotated[Optional[str], typer.Option("--encoding", help="Tokenizer to count with (default: the "
                                                    "pack's, cl100k_base).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the rendering to this file (atomically) "
                                                "instead of stdout; an existing file is replaced only when it is "
                                                "an earlier ctx render output.", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary (sections, token counts, "
                                          "matches_pack) instead of the rendering.")] = False,
) -> None:
    """Re-render the model-visible context of a pack and check its token counts.

    The pack is verified first, as replay verifies it (a regular file; schema version,
    content hash, every evidence text against its text_hash, and the run folder's run.json
    and signature when there is one): a tampered pack is refused, exit 2. Every section is rendered again, counted with the tokenizer, and compared with
    the counts recorded in the pack; any difference is render drift (exit 1, nothing
    written). The same pack always renders to the same bytes.

    Example: ctx render runs/default --format messages --out messages.json
    """
    with handle_errors():
        from .. import api

        from ..engine.render import is_rendering
        from ..run_list import pack_path
        from ..write import check_output_file

        if out is not None:     # never over a file ctx render did not write (refused before the work)
            check_output_file(out, "--out", "ctx render", is_rendering)
        res = api.render_pack(pack_path(pack), fmt.value, encoding)
        doc = {"format": res.format, "sections": res.sections, "total_tokens": res.total_tokens,
               "matches_pack": res.matches_pack, "out": str(out) if out is not None else None}
        if not res.matches_pack:
            from ..errors import CheckFailed

            if as_json:
                emit_json(doc)
            raise CheckFailed(f"render drift: {'; '.join(res.drift)}")
        if out is not None:
            from ..write import write_output_file

            write_output_file(out, res.data, "--out", "ctx render", is_rendering)
        if as_json:
            emit_json(doc)
        elif out is None:
            sys.stdout.buffer.write(res.data)
            sys.stdout.flush()
        else:
            from .console import console, safe

            console().print(f"wrote {safe(out)} ({res.format}, {res.total_tokens} tokens, "
                            f"matches the pack's counts)")
