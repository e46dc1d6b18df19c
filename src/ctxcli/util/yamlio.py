"""Safe YAML reading: no aliases (no "billion laughs"), bounded depth and size, no duplicate
keys, regular files only. Timestamps stay text (the models parse them, offset required), so a
bad date is a field error rather than a crash in the YAML library."""

from __future__ import annotations

import stat
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


def loads_yaml(text: str, *, file: str, first_line: int = 1) -> Any:
    """Parse ``text``; errors name ``file`` and the line, counting from ``first_line`` (the
    file line where ``text`` starts, e.g. 2 for Markdown front matter)."""
    try:
        loader = _NoAliasLoader(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
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


def read_text(path: Path, *, display: str, limit: int) -> str:
    try:
        st = path.stat()
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", file=display) from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError("not a regular file: a folder", file=display)
    if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
        raise InputError("not a regular file", file=display)
    size = st.st_size
    if size > limit:
        raise InputError(f"file is {size} bytes, over the {limit}-byte limit", file=display)
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", file=display) from None
    if len(data) > limit:  # grew after the size check
        raise InputError(f"file is over the {limit}-byte limit", file=display)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 (byte {e.start})", file=display, line=line) from None


def read_yaml(path: Path, *, display: str) -> Any:
    return loads_yaml(read_text(path, display=display, limit=MAX_YAML_BYTES), file=display)
