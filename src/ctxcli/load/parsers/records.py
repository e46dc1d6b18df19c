"""``parser: records`` — ctx's own snapshot: one object per line of ``objects.jsonl``."""

from __future__ import annotations

from typing import Any, Iterator

from ...errors import InputError
from . import Parser, Unit
from .common import iter_raw_lines, line_object, own_object_row, report


class RecordsParser(Parser):
    name = "records"
    unit = "line"

    def check(self, ls) -> None:
        if "objects.jsonl" not in ls.names:
            raise InputError("snapshot has no objects.jsonl (parser: records)", file=ls.manifest_file,
                             field="snapshot")

    def objects(self, ls) -> Iterator[dict[str, Any]]:
        for u in self.units(ls):
            yield from u.rows()

    def units(self, ls) -> Iterator[Unit]:
        """One unit per line of ``objects.jsonl``."""
        p = ls.names["objects.jsonl"]
        disp = ls.shown(p)
        for line, raw in iter_raw_lines(p, disp):
            yield Unit(raw, disp, line, lambda raw=raw, line=line: self._rows(ls, raw, disp, line))

    def _rows(self, ls, raw: bytes, disp: str, line: int) -> list[dict[str, Any]]:
        data = line_object(raw, disp, line, ls)
        if data is None:
            return []
        try:
            return [own_object_row(ls.manifest, data, disp, line)]
        except InputError as e:
            report(ls, e)
            return []
