"""Safe YAML reading: no aliases (no "billion laughs"), bounded depth and size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError

MAX_YAML_BYTES = 5 * 1024 * 1024
MAX_DEPTH = 64


class _NoAliasLoader(yaml.SafeLoader):
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


def loads_yaml(text: str, *, file: str) -> Any:
    try:
        loader = _NoAliasLoader(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        msg = e.problem or e.context or "invalid YAML"
        raise InputError(f"invalid YAML: {msg}", file=file, line=line) from None
    except yaml.YAMLError as e:
        raise InputError(f"invalid YAML: {e}", file=file) from None
    except RecursionError:
        raise InputError(f"invalid YAML: nesting too deep", file=file) from None


def read_text(path: Path, *, display: str, limit: int) -> str:
    try:
        size = path.stat().st_size
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", file=display) from None
    if size > limit:
        raise InputError(f"file is {size} bytes, over the {limit}-byte limit", file=display)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror}", file=display) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"not valid UTF-8 (byte {e.start})", file=display, line=line) from None


def read_yaml(path: Path, *, display: str) -> Any:
    return loads_yaml(read_text(path, display=display, limit=MAX_YAML_BYTES), file=display)
