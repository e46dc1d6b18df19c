"""ctx render."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .common import emit_json, handle_errors

PACK_SCHEMAS = ("ctx.pack/1",)


class Format(str, Enum):
    markdown = "markdown"
    messages = "messages"


def register(app: typer.Typer) -> None:
    app.command("render")(render)


def render(
    pack: Annotated[Path, typer.Argument(help="A pack.json written by `ctx investigate`.", show_default=False)],
    *,
    fmt: Annotated[Format, typer.Option("--format", help="markdown: the model-visible text; messages: a JSON "
                                        "list of {role, content} (system, user) for an OpenAI-compatible "
                                        "chat call.")] = Format.markdown,
    encoding: Annotated[Optional[str], typer.Option("--encoding", help="Tokenizer to count with (default: the "
                                                    "pack's, cl100k_base).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Write the rendering to this file (atomically) "
                                                "instead of stdout.", show_default=False)] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary (sections, token counts, "
                                          "matches_pack) instead of the rendering.")] = False,
) -> None:
    """Re-render the model-visible context of a pack and check its token counts.

    The pack is verified first (schema version, content hash: a tampered pack is refused,
    exit 2). Every section is rendered again, counted with the tokenizer, and compared with
    the counts recorded in the pack; any difference is render drift (exit 1, nothing
    written). The same pack always renders to the same bytes.

    Example: ctx render runs/C-102-1a2b3c4d/pack.json --format messages --out messages.json
    """
    with handle_errors():
        res = render_pack(pack, fmt.value, encoding)
        doc = {"format": res["format"], "sections": res["sections"], "total_tokens": res["total_tokens"],
               "matches_pack": res["matches_pack"], "out": str(out) if out is not None else None}
        if not res["matches_pack"]:
            from ..errors import CheckFailed

            if as_json:
                emit_json(doc)
            raise CheckFailed(f"render drift: {res['drift']}")
        if out is not None:
            from ..write import write_file_atomic

            write_file_atomic(out, res["data"])
        if as_json:
            emit_json(doc)
        elif out is None:
            sys.stdout.buffer.write(res["data"])
            sys.stdout.flush()
        else:
            from .console import console, safe

            console().print(f"wrote {safe(out)} ({res['format']}, {res['total_tokens']} tokens, "
                            f"matches the pack's counts)")


def render_pack(pack_path: Path, fmt: str, encoding: str | None) -> dict[str, Any]:
    """Load, verify, render and count; never prints. (Library-grade: a candidate for ``api``.)"""
    from ..engine.render import render_markdown, render_messages, section_texts
    from ..errors import PackError, UsageError
    from ..tokens import count, encoding as get_encoding
    from ..util.canon import pretty_bytes

    p = read_pack(pack_path)
    enc = encoding or p.get("encoding") or "cl100k_base"
    get_encoding(enc)                     # unknown encoding: one-line UsageError, exit 2
    if p.get("encoding") and enc != p["encoding"]:
        raise UsageError(f"--encoding: the pack was counted with {p['encoding']}; counts in {enc} cannot be "
                         f"checked against it")
    try:
        secs = section_texts(p)
        recorded = p["slots"]["sections"]
        recorded_total = p["slots"]["total_tokens"]
        if fmt == "markdown":
            data = render_markdown(p).encode("utf-8")
        else:
            data = pretty_bytes(render_messages(p))
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
        raise PackError(f"{pack_path}: not a complete ctx pack ({type(e).__name__}: {e})") from None
    sections = []
    drift: list[str] = []
    rec_by_pos = list(recorded) if isinstance(recorded, list) else []
    for i, (name, slot, trust, text) in enumerate(secs):
        n = count(text, enc)
        rec = rec_by_pos[i] if i < len(rec_by_pos) and isinstance(rec_by_pos[i], dict) else {}
        rn = rec.get("tokens")
        if rec.get("section") != name:
            drift.append(f"section {i + 1} is {name}, the pack records {rec.get('section')!r}")
        elif rn != n:
            drift.append(f"section {name} has {n} tokens, the pack records {rn}")
        sections.append({"section": name, "slot": slot, "trust": trust, "tokens": n, "recorded_tokens": rn})
    if len(rec_by_pos) != len(secs):
        drift.append(f"the pack records {len(rec_by_pos)} sections, the renderer has {len(secs)}")
    if fmt == "markdown":
        total = count(data.decode("utf-8"), enc)
    else:
        total = sum(count(m["content"], enc) for m in render_messages(p))
    if total != recorded_total:
        drift.append(f"the rendering has {total} tokens, the pack records {recorded_total}")
    if sum(s["tokens"] for s in sections) != total:
        drift.append(f"the sections sum to {sum(s['tokens'] for s in sections)} tokens but the whole "
                     f"rendering has {total}")
    return {"format": fmt, "sections": sections, "total_tokens": total, "matches_pack": not drift,
            "drift": "; ".join(drift), "data": data}


def read_pack(path: Path) -> dict[str, Any]:
    """A verified pack: readable, JSON, a known schema, and its content hash intact."""
    import orjson

    from ..errors import PackError
    from ..util.canon import obj_hash

    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise PackError(f"{path}: no such pack file") from None
    except IsADirectoryError:
        raise PackError(f"{path}: is a folder, not a pack file (pass …/pack.json)") from None
    except OSError as e:
        raise PackError(f"{path}: cannot read: {e.strerror or e}") from None
    from ..util import jsonstrict

    try:
        p = jsonstrict.loads(raw)
    except orjson.JSONDecodeError as e:
        raise PackError(f"{path}: not JSON ({e})") from None
    except jsonstrict.StrictJSONError as e:   # a duplicate key or an integer beyond 64 bits
        raise PackError(f"{path}: not a pack: {e}") from None
    if not isinstance(p, dict):
        raise PackError(f"{path}: not a ctx pack (a JSON object is expected)")
    sv = p.get("schema_version")
    if sv not in PACK_SCHEMAS:
        raise PackError(f"{path}: unknown pack schema_version {sv!r} (supported: {', '.join(PACK_SCHEMAS)})")
    h = p.get("content_hash")
    body = {k: v for k, v in p.items() if k not in ("content_hash", "pack_id")}
    actual = obj_hash(body)
    if not isinstance(h, str) or h != actual:
        raise PackError(f"{path}: content hash mismatch: the pack was modified after it was built "
                        f"(recorded {h!r}, actual {actual})")
    if p.get("pack_id") != "pk-" + actual.split(":")[1][:16]:
        raise PackError(f"{path}: pack_id {p.get('pack_id')!r} does not match the content hash")
    return p
