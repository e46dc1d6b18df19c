"""``parser: api`` — a live HTTP API. A load reads no record of it: the source is registered
(its owner, classification, trust, scopes, purposes, freshness) with the sidecar entities and
relations of its snapshot folder, and its records are fetched per investigation by
:mod:`ctxcli.live`, which gates them as tool results labelled by this manifest."""

from __future__ import annotations

from typing import Any, Iterator

from . import Parser


class ApiParser(Parser):
    name = "api"
    unit = "request"

    def objects(self, ls) -> Iterator[dict[str, Any]]:
        return iter(())
