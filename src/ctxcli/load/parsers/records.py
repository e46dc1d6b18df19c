"""``parser: records`` — ctx's own snapshot: one object per line of ``objects.jsonl``."""

from __future__ import annotations

from typing import Any, Iterator

from ...errors import InputError
from ...models.records import ObjectRecord
from . import Parser, Unit, register
from .common import iter_raw_lines, line_object, object_row, remap_valid_time, report, tenant_of, validate


@register
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
        m = ls.manifest
        data = line_object(raw, disp, line, ls)
        if data is None:
            return []
        try:
            rec = validate(ObjectRecord, remap_valid_time(m, data, disp, line), disp, line)
            tenant = tenant_of(m, rec.tenant_id, disp, line)
            return [object_row(
                m, rec, object_id=rec.object_id, title=rec.title, content=rec.content, locator=rec.locator,
                tenant=tenant, version=rec.source_version, supersedes=rec.supersedes,
                registered_hash=rec.content_hash, section=None, doc_ref=None, disp=disp, line=line)]
        except InputError as e:
            report(ls, e)
            return []
