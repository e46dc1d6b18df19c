"""Safe YAML reading: no aliases (no "billion laughs"), bounded depth and size, no duplicate
keys, regular files only. Timestamps stay text (the models parse them, offset required), so a
bad date is a field error rather than a crash in the YAML library."""

from __future__ import annotations

import hashlib
import stat
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError

MAX_YAML_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64


class _NoAliasLoader(yaml.SafeLoader):
    # No implicit timestamps: ``2026-02-30`` would raise a bare ValueError inside PyYAML, and
    # ``2026-07-23 12:00:00`` would become a naive datetime. Unquoted times stay strings.
    yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def construct_object(self, node, deep=False):  # type: ignore[override]
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, OverflowError) as e:  # e.g. !!int "abc", !!float "x"
            raise yaml.constructor.ConstructorError(
                None, None, f"invalid {node.tag.rsplit(':', 1)[-1]} value ({e})", node.start_mark) from None

    def construct_mapping(self, node, deep=False):  # type: ignore[override]
        if isinstance(node, yaml.MappingNode):
            seen: set = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(key_node, yaml.ScalarNode):
                    continue
                key = self.construct_object(key_node)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r}", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def compose_node(self, parent, index):  # type: ignore[override]
        if self.check_event(yaml.AliasEvent):
            ev = self.peek_event()
            raise yaml.constructor.ConstructorError(
                None, None, "YAML aliases are not allowed", ev.start_mark)
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                ev = self.peek_event()
                raise yaml.constructor.ConstructorError(
                    None, None, f"nesting deeper than {MAX_DEPTH} levels", ev.start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _finite_float(loader, node):
    """A YAML float, refused when it is ``.inf`` or ``.nan``: JSON has no such number, and a
    fact that silently became ``null`` in a pack would be a different fact."""
    v = yaml.SafeLoader.construct_yaml_float(loader, node)
    if v != v or v in (float("inf"), float("-inf")):
        raise yaml.constructor.ConstructorError(
            None, None, f"non-finite number {node.value!r} (JSON has no infinity or NaN)", node.start_mark)
    return v


_NoAliasLoader.add_constructor("tag:yaml.org,2002:float", _finite_float)


# libyaml's scanner and parser (C) under the same composer (the checks above) and constructor:
# the events, hence the data and marks, are the same; only a failure differs in wording, so
# any failure is re-read by the pure-Python loader above, whose message is the one reported.
if getattr(yaml, "__with_libyaml__", False):
    class _FastLoader(yaml.cyaml.CParser, _NoAliasLoader):  # type: ignore[misc]
        def __init__(self, text: str) -> None:
            yaml.cyaml.CParser.__init__(self, text)
            yaml.composer.Composer.__init__(self)
            yaml.constructor.SafeConstructor.__init__(self)
            yaml.resolver.Resolver.__init__(self)

        get_single_node = yaml.composer.Composer.get_single_node
        compose_document = yaml.composer.Composer.compose_document
        compose_scalar_node = yaml.composer.Composer.compose_scalar_node
        compose_sequence_node = yaml.composer.Composer.compose_sequence_node
        compose_mapping_node = yaml.composer.Composer.compose_mapping_node
else:  # pragma: no cover - PyYAML without libyaml
    _FastLoader = None  # type: ignore[assignment,misc]


class WrittenInt(int):
    """A YAML integer that remembers its text as written (``007``, ``1_000``)."""


class WrittenFloat(float):
    """A YAML float that remembers its text as written (``1.10`` stays ``1.10`` as text)."""


def _written(v: Any, text: str) -> Any:
    w = WrittenInt(v) if type(v) is int else WrittenFloat(v)
    w.written = text
    return w


class Marks:
    """Where each node of a YAML document starts: ``path -> (line, column)``, 1-based. A
    mapping entry is marked at its key, a list item at the item. ``find`` maps a Pydantic
    error location (or a dotted validator path such as ``facts.total``) to the nearest
    marked node: list items may be named by their ``id`` / ``name`` / ``type``."""

    def __init__(self, data: Any, marks: dict[tuple[str, ...], tuple[int, int]],
                 numbers: dict[tuple[str, ...], str] | None = None) -> None:
        self.data = data
        self.marks = marks
        self.numbers = numbers or {}    # path -> the text of a YAML number as written

    def written_numbers(self) -> Any:
        """The data with each YAML number replaced by a :class:`WrittenInt` / :class:`WrittenFloat`
        carrying its text as written (Markdown front matter: ``version: 1.10`` is text "1.10" in
        a text field, and still the number 1.1 in a fact)."""

        def walk(x: Any, path: tuple[str, ...]) -> Any:
            if isinstance(x, dict):
                return {k: walk(v, path + (str(k),)) for k, v in x.items()}
            if isinstance(x, list):
                return [walk(v, path + (str(i),)) for i, v in enumerate(x)]
            if type(x) in (int, float) and path in self.numbers:
                return _written(x, self.numbers[path])
            return x
        return walk(self.data, ()) if self.numbers else self.data

    def find(self, loc: Any) -> tuple[int, int] | None:
        parts = [str(p) for p in loc if str(p) != "__root__"] if not isinstance(loc, str) else \
            [p for p in loc.split(".") if p]
        parts = ["from" if p == "from_" else p for p in parts]
        node, path = self.data, ()
        for p in parts:
            step = None
            if isinstance(node, dict):
                for k in node:
                    if str(k) == p:
                        step, node = str(k), node[k]
                        break
            elif isinstance(node, list):
                if p.isdigit() and int(p) < len(node):
                    step, node = p, node[int(p)]
                else:
                    for i, item in enumerate(node):
                        if isinstance(item, dict) and any(str(item.get(f)) == p for f in _ITEM_NAMES):
                            step, node = str(i), item
                            break
            if step is None:
                break
            path += (step,)
        while path not in self.marks and path:
            path = path[:-1]
        return self.marks.get(path)


_ITEM_NAMES = ("id", "name", "type", "playbook_id")


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _walk_marks(loader: yaml.SafeLoader, node: yaml.Node, path: tuple[str, ...], first_line: int,
                out: dict[tuple[str, ...], tuple[int, int]], numbers: dict[tuple[str, ...], str]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = str(loader.construct_object(key_node))
            out[path + (key,)] = (key_node.start_mark.line + first_line, key_node.start_mark.column + 1)
            _walk_marks(loader, value_node, path + (key,), first_line, out, numbers)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            out[path + (str(i),)] = (item.start_mark.line + first_line, item.start_mark.column + 1)
            _walk_marks(loader, item, path + (str(i),), first_line, out, numbers)
    elif node.tag in _NUMBER_TAGS:
        numbers[path] = node.value


def loads_yaml(text: str, *, file: str, first_line: int = 1) -> Any:
    """Parse ``text``; errors name ``file`` and the line, counting from ``first_line`` (the
    file line where ``text`` starts, e.g. 2 for Markdown front matter)."""
    return loads_yaml_marked(text, file=file, first_line=first_line).data


# Parsed texts of this process, keyed by the text's sha256 and its first line: a load reads the
# same manifests, playbooks and cases more than once (and a copy of a project, whose files are
# new to the path cache below, holds the same texts). A parse is a function of the text alone;
# callers get their own copy; a text that does not parse is never kept. Bounded by the texts'
# total size, the least recently used going first.
_BY_TEXT: OrderedDict[tuple[bytes, int], tuple[Marks, int]] = OrderedDict()
_BY_TEXT_MAX_CHARS = 32 * 1024 * 1024
_by_text_chars = 0
_BY_TEXT_LOCK = threading.Lock()


def loads_yaml_marked(text: str, *, file: str, first_line: int = 1) -> Marks:
    """Like :func:`loads_yaml`, also recording where every node starts."""
    global _by_text_chars
    key = (hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest(), first_line)
    with _BY_TEXT_LOCK:         # (a warm `ctx serve` answers calls on several threads)
        kept = _BY_TEXT.get(key)
        if kept is not None:
            _BY_TEXT.move_to_end(key)
    if kept is None:
        hit = _parse_marked(text, file=file, first_line=first_line)
        with _BY_TEXT_LOCK:
            if key not in _BY_TEXT:
                _BY_TEXT[key] = (hit, len(text))
                _by_text_chars += len(text)
            while _by_text_chars > _BY_TEXT_MAX_CHARS and len(_BY_TEXT) > 1:
                _by_text_chars -= _BY_TEXT.popitem(last=False)[1][1]
    else:
        hit = kept[0]
    data = _copy(hit.data)
    return Marks(data, dict(hit.marks), hit.numbers)


def _parse_marked(text: str, *, file: str, first_line: int) -> Marks:
    if _FastLoader is not None and not yaml.reader.Reader.NON_PRINTABLE.search(text):
        try:
            return _load_marked(_FastLoader, text, first_line)
        except (yaml.YAMLError, RecursionError, ValueError, TypeError):
            pass            # the pure-Python loader below reports it, in its own words
    try:
        return _load_marked(_NoAliasLoader, text, first_line)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + first_line if mark else None
        msg = e.problem or e.context or "invalid YAML"
        raise InputError(f"invalid YAML: {msg}", file=file, line=line) from None
    except yaml.reader.ReaderError as e:  # a control character or bad encoding in the text
        line = text[: e.position].count("\n") + first_line
        ch = e.character if isinstance(e.character, int) else ord(str(e.character)[:1] or "\0")
        raise InputError(f"invalid YAML: character U+{ch:04X} is not allowed", file=file, line=line) from None
    except yaml.YAMLError as e:
        raise InputError(f"invalid YAML: {e}", file=file) from None
    except RecursionError:
        raise InputError("invalid YAML: nesting too deep", file=file) from None


def _load_marked(loader_cls, text: str, first_line: int) -> Marks:  # noqa: ANN001
    loader = loader_cls(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return Marks(None, {})
        marks: dict[tuple[str, ...], tuple[int, int]] = {
            (): (node.start_mark.line + first_line, node.start_mark.column + 1)}
        data = loader.construct_document(node)
        numbers: dict[tuple[str, ...], str] = {}
        _walk_marks(loader, node, (), first_line, marks, numbers)
        return Marks(data, marks, numbers)
    finally:
        loader.dispose()


def read_text(path: Path, *, display: str, limit: int) -> str:
    """A YAML/text file a user names (playbook, case, manifest, working state, memory record):
    opened without waiting (a FIFO never hangs), checked on the opened file (regular, at most
    ``limit`` bytes), read in bounded chunks."""
    from .safeio import NotReadable, read_regular

    try:
        data = read_regular(path, limit)
    except NotReadable as e:
        raise InputError(str(e), file=display) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 (byte {e.start})", file=display, line=line) from None


def read_yaml(path: Path, *, display: str) -> Any:
    return read_yaml_marked(path, display=display).data


# Parsed files of this process, keyed by path and the file's identity and change times: one
# investigation reads its playbook and case more than once, and a warm `ctx serve` reads the
# case, the playbook and every source manifest at each call. Callers get their own copy. A file
# changed in the last 2 s is not kept (as git does with "racily clean" entries): two writes of
# the same size within the file system's clock tick would otherwise look alike; any later
# change sets its ctime to after the kept one's, so it never matches a kept entry.
_PARSED: dict[tuple, Marks] = {}
_PARSED_MAX = 512
_SETTLED_NS = 2_000_000_000


def _identity(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled_identity(path: Path) -> tuple | None:
    """The file's identity (as the parse cache keys it) when it has not changed in the last
    2 s, else None (a caller keeping something derived from the file must not keep it)."""
    ident = _identity(path)
    if ident is None or time.time_ns() - max(ident[3], ident[4]) <= _SETTLED_NS:
        return None
    return ident


def _copy(x: Any) -> Any:
    """A copy of parsed YAML: new dicts and lists, the scalars (immutable) shared."""
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy(v) for v in x]
    if isinstance(x, (set, tuple)):      # !!set, and the pairs of !!omap / !!pairs
        return type(x)(_copy(v) for v in x)
    return x


def read_yaml_marked(path: Path, *, display: str) -> Marks:
    before = _identity(path)
    key = (str(path), display, before)
    hit = _PARSED.get(key) if before is not None else None
    if hit is None:
        hit = loads_yaml_marked(read_text(path, display=display, limit=MAX_YAML_BYTES), file=display)
        settled = before is not None and time.time_ns() - max(before[3], before[4]) > _SETTLED_NS
        if settled and _identity(path) == before:     # unchanged while it was read
            if len(_PARSED) >= _PARSED_MAX:
                _PARSED.clear()
            _PARSED[key] = hit
        else:
            return hit
    return Marks(_copy(hit.data), dict(hit.marks), hit.numbers)
