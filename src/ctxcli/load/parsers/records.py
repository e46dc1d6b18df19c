"""``parser: records`` — ctx's own snapshot: one object per line of ``objects.jsonl``."""

from __future__ import annotations

from typing import Any, Iterator

from ...errors import InputError
from ...models.records import ObjectRecord
from . import Parser, register
from .common import iter_jsonl, object_row, rel, remap_valid_time, report, tenant_of, validate


@register
class RecordsParser(Parser):
    name = "records"

    def check(self, ls) -> None:
        if "objects.jsonl" not in ls.names:
            raise InputError("snapshot has no objects.jsonl (parser: records)", file=ls.manifest_file,
                             field="snapshot")

    def objects(self, ls) -> Iterator[dict[str, Any]]:
        m = ls.manifest
        p = ls.names["objects.jsonl"]
        disp = rel(p, ls.root)
        for line, data in iter_jsonl(p, disp, ls):
            try:
                rec = validate(ObjectRecord, remap_valid_time(m, data, disp, line), disp, line)
                tenant = tenant_of(m, rec.tenant_id, disp, line)
                row = object_row(
                    m, rec, object_id=rec.object_id, title=rec.title, content=rec.content, locator=rec.locator,
                    tenant=tenant, version=rec.source_version, supersedes=rec.supersedes,
                    registered_hash=rec.content_hash, section=None, doc_ref=None, disp=disp, line=line)
            except InputError as e:
                report(ls, e)
                continue
            yield row
