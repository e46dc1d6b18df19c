"""``parser: markdown`` — ``*.md`` documents with YAML front matter, one object per section.

Sections are cut at ``## `` headings (``markdown.split: h2``, the default) or at every heading
of any level (``split: headings``: the heading path, e.g. ``rollback/verify``, names the
section and its locator). The front matter is ctx's own (``doc_id``, ``title`` …) or the
document's own keys mapped by the manifest's ``mapping:`` (parsers/mapping.py).
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from ...errors import InputError
from ...models.manifest import SourceManifest
from ...models.records import DocumentFrontMatter
from ...util.yamlio import loads_yaml, loads_yaml_marked, read_text
from . import Parser, Unit
from .common import MAX_MARKDOWN_BYTES, object_row, remap_valid_time, report, tenant_of, validate
from .mapping import Where, apply

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*\r?\n", re.S)
_FACTS_BLOCK = re.compile(r"^```facts[ \t]*\n(.*?)^```[ \t]*$\n?", re.S | re.M)
_HEAD = re.compile(r"^##[ \t]+(.+?)[ \t#]*$")
_ANY_HEAD = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
NATIVE = tuple(DocumentFrontMatter.model_fields)


def anchor(heading: str) -> str:
    a = re.sub(r"[^0-9a-z\u4e00-\u9fff]+", "-", heading.strip().casefold()).strip("-")
    return a or "section"


def _lines(body: str) -> list[str]:
    # Split at "\n" only (str.splitlines also splits at U+2028, \x0c, \x1c … and would shift
    # every later line number away from the file's).
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def split_markdown(body: str, first_line: int) -> list[tuple[str, str, str, int, int]]:
    """(anchor, heading, text, start line, end line) per section; text before the first
    ``## `` heading is section ``overview`` (dropped when empty or only headings, e.g. a
    ``# Title``). Headings inside fenced code
    blocks are text."""
    sections: list[list[Any]] = [["overview", "Overview", [], first_line, first_line]]
    fence = False
    for i, line in enumerate(_lines(body)):
        n = first_line + i
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        m = None if fence else _HEAD.match(line)
        if m:
            sections.append([anchor(m.group(1)), m.group(1).strip(), [], n, n])
        else:
            sections[-1][2].append(line)
            sections[-1][4] = n
    return _finish(sections)


def split_headings(body: str, first_line: int) -> list[tuple[str, str, str, int, int]]:
    """Like :func:`split_markdown`, cut at every heading (``#`` to ``######``): a section's anchor
    is the path of anchors of its enclosing headings (``runbook/rollback/verify``), its heading
    the path of titles joined by " › "."""
    sections: list[list[Any]] = [["overview", "Overview", [], first_line, first_line]]
    stack: list[tuple[int, str, str]] = []      # (level, anchor, title)
    fence = False
    for i, line in enumerate(_lines(body)):
        n = first_line + i
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        m = None if fence else _ANY_HEAD.match(line)
        if m:
            level, title = len(m.group(1)), m.group(2).strip()
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, anchor(title), title))
            sections.append(["/".join(a for _, a, _ in stack), " › ".join(t for _, _, t in stack), [], n, n])
        else:
            sections[-1][2].append(line)
            sections[-1][4] = n
    return _finish(sections, keep_empty=False)


def _finish(sections: list[list[Any]], keep_empty: bool = True) -> list[tuple[str, str, str, int, int]]:
    out = []
    used: dict[str, int] = {}
    for a, h, lines, s, e in sections:
        text = "\n".join(lines).strip()
        if a == "overview" and all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.split("\n")):
            continue   # empty, or only a title: not worth an object (nor its tokens)
        if not keep_empty and not text:
            continue   # a heading with only sub-headings: its children carry the text
        if a in used:
            used[a] += 1
            a = f"{a}-{used[a]}"
        else:
            used[a] = 1
        out.append((a, h, text, s, e))
    return out


def _section_facts(m: SourceManifest, front, data: dict[str, Any], text: str, body: str, start: int,
                   first: int, disp: str):
    """A section's own facts: a fenced ```facts block (a YAML mapping) overrides the document's
    facts for that section only (``null`` drops one); the block is not part of the content."""
    blk = _FACTS_BLOCK.search(text)
    if blk is None:
        return front, text
    lines = body.split("\n")
    line = next((first + i for i in range(max(start - first, 0), len(lines))
                 if lines[i].startswith("```facts")), start)    # the file line of the ```facts fence
    sec = loads_yaml(blk.group(1), file=disp, first_line=line + 1)
    if not isinstance(sec, dict):
        raise InputError("a facts block must be a YAML mapping", file=disp, line=line)
    facts = {**(data.get("facts") or {}), **sec}
    facts = {k: v for k, v in facts.items() if v is not None}
    sec_front = validate(DocumentFrontMatter, remap_valid_time(m, {**data, "facts": facts}, disp, line), disp, line)
    return sec_front, (text[: blk.start()] + text[blk.end():]).strip()


def read_front(text: str, disp: str) -> tuple[dict[str, Any], Any, str, int]:
    """(front matter, its marks, body, the file line where the body starts)."""
    fm = _FRONT.match(text)
    if not fm:
        raise InputError("Markdown document has no YAML front matter (--- … ---)", file=disp, line=1)
    marks = loads_yaml_marked(fm.group(1), file=disp, first_line=2)
    if not isinstance(marks.data, dict):
        raise InputError("front matter must be a YAML mapping", file=disp, line=2)
    return marks.written_numbers(), marks, text[fm.end():], text[: fm.end()].count("\n") + 1


def front_keys(text: str, disp: str) -> set[str]:
    """The keys of a document's front matter (none when it has none or it does not read: the
    load reports that document)."""
    fm = _FRONT.match(text)
    if not fm:
        return set()
    try:
        data = loads_yaml(fm.group(1), file=disp, first_line=2)
    except InputError:
        return set()
    return {str(k) for k in data} if isinstance(data, dict) else set()


def front_fields(m: SourceManifest, data: dict[str, Any], marks, disp: str, label: str = "",
                 defaults: dict[str, Any] | None = None) -> tuple[dict[str, Any], int]:
    """The document's ctx fields (mapped when the manifest has a ``mapping``; ``defaults``
    under them) and the line to report a field problem at."""
    if m.mapping is None:
        return {**(defaults or {}), **data}, 1
    where = Where(disp, 1, label, what="front-matter key")
    mapped = apply(m.mapping, data, where, native=NATIVE)
    if "object_id" in mapped:
        mapped["doc_id"] = mapped.pop("object_id")
    mapped.pop("body", None)
    return {**(defaults or {}), **mapped}, 1


def validate_front(m: SourceManifest, fields: dict[str, Any], marks, disp: str, label: str = ""):
    """DocumentFrontMatter of ``fields``; a problem names the front-matter line of the key."""
    from pydantic import ValidationError

    from ...util.pyd import first_error

    try:
        return DocumentFrontMatter.model_validate(remap_valid_time(m, fields, disp, 1))
    except ValidationError as e:
        loc, msg = first_error(e)
        key = loc.split(".")[0] if loc else ""
        src = getattr(m.mapping, key, None) if m.mapping is not None and key else None
        mark = marks.find([src if isinstance(src, str) and "{" not in src else key]) if marks else None
        line, col = mark if mark else (1, None)
        raise InputError(f"{label}: {msg}" if label else msg, file=disp, line=line, column=col,
                         field=loc) from None


def document_objects(m: SourceManifest, relname: str, disp: str, text: str, *, locator: str | None = None,
                     label: str = "", defaults: dict[str, Any] | None = None,
                     object_id: Any = None, supersedes: Any = None, version: str | None = None,
                     facts: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """The objects of one Markdown document. ``locator`` is the path part of each section's
    locator (default ``relname``); ``object_id(front, anchor)`` and ``supersedes(front, anchor)``
    override how section ids and predecessors are named, ``version`` the source version and
    ``facts`` are added under the document's own (the git parser's versions). ``relname`` and
    the front matter as written ride along in each row for the evidence rules."""
    data, marks, body, first = read_front(text, disp)
    if m.mapping is None and defaults is None:
        front = validate(DocumentFrontMatter, remap_valid_time(m, data, disp, 1), disp, 1)
        fields = data
    else:
        fields, _ = front_fields(m, data, marks, disp, label, defaults)
        if facts:
            fields["facts"] = {**facts, **(fields.get("facts") or {})}
        front = validate_front(m, fields, marks, disp, label)
    tenant = tenant_of(m, front.tenant_id, disp, 1)
    split = split_headings if m.markdown is not None and m.markdown.split == "headings" else split_markdown
    loc = locator or relname
    for a, heading, sec_text, s, e in split(body, first):
        oid = object_id(front, a) if object_id else f"{front.doc_id}#{a}"
        sec_front, sec_text = _section_facts(m, front, fields, sec_text, body, s, first, disp)
        sup = supersedes(front, a) if supersedes else (f"{front.supersedes}#{a}" if front.supersedes else None)
        row = object_row(
            m, sec_front, object_id=oid, title=f"{front.title} — {heading}", content=sec_text,
            locator=f"{loc}#{a}:L{s}-L{e}", tenant=tenant, version=version or front.version,
            supersedes=sup, registered_hash=None, section=a, doc_ref=front.doc_id, disp=disp, line=s)
        # for the playbooks' path and front-matter rules (load/evidence_rules.py drops them)
        row["_path"], row["_front"] = relname, data
        yield row


class MarkdownParser(Parser):
    name = "markdown"
    unit = "file"

    def objects(self, ls) -> Iterator[dict[str, Any]]:
        for u in self.units(ls):
            yield from u.rows()

    def units(self, ls) -> Iterator[Unit]:
        """One unit per ``.md`` file: its path and bytes."""
        for relname, p in ls.names.items():
            if not relname.endswith(".md"):
                continue
            disp = ls.shown(p)
            try:
                with open(p, "rb") as fh:
                    raw = fh.read(MAX_MARKDOWN_BYTES + 1)
            except OSError:
                raw = b""           # read_text reports it when the unit is parsed
            yield Unit(relname.encode() + b"\0" + raw, disp, None,
                       lambda relname=relname, p=p, disp=disp: self._rows(ls, relname, p, disp))

    def field_names(self, ls):
        """The front-matter keys of every document (the mapping names them)."""
        from .names import FieldNames

        have: set[str] = set()
        for relname, p in ls.names.items():
            if relname.endswith(".md"):
                try:
                    have |= front_keys(read_text(p, display=relname, limit=MAX_MARKDOWN_BYTES), relname)
                except InputError:
                    continue        # reported when the document is parsed
        return FieldNames({"": (have, f"no document of {ls.shown(ls.snap)} has the front-matter key "
                                      f"{{name!r}}")})

    def _rows(self, ls, relname: str, p, disp: str) -> list[dict[str, Any]]:
        try:
            text = read_text(p, display=disp, limit=MAX_MARKDOWN_BYTES)
            return list(document_objects(ls.manifest, relname, disp, text))
        except InputError as e:
            report(ls, e)         # the document is skipped; the load goes on to gather the rest
            return []
