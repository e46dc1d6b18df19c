"""The optional extras a project's sources need, checked before a load reads any source: the
git parser needs ``dulwich`` (the ``git`` extra), the table parser on SQLite, Excel or
PostgreSQL needs DuckDB's extension wheel (the ``tables`` extra). CSV, TSV, Parquet and JSON
tables, records, markdown and JSON exports need nothing beyond the default install."""

from __future__ import annotations

from pathlib import PurePath

from ..util.distribution import require_extra

# table format -> the wheel that carries its DuckDB extension
TABLE_EXTENSIONS = {"sqlite": "duckdb_extension_sqlite", "excel": "duckdb_extension_excel",
                    "postgres": "duckdb_extension_postgres_scanner"}


def needed(m, disp: str) -> tuple[str, str, str] | None:
    """(extra, module, what needs it) for one source manifest (``disp``: its file), or None."""
    if m.parser == "git":
        return "git", "dulwich", f"{disp}: source {m.source_id} (parser: git)"
    if m.parser == "table" and m.table is not None:
        from .parsers.table import FORMATS

        fmt = m.table.format or (FORMATS.get(PurePath(m.table.file).suffix.lower()) if m.table.file else None)
        if fmt in TABLE_EXTENSIONS:
            return "tables", TABLE_EXTENSIONS[fmt], f"{disp}: source {m.source_id} (a {fmt} table)"
    return None


def require_for(manifests) -> None:
    """Refuse the first enabled source whose extra is not installed (one line, exit 2);
    ``manifests`` as :func:`.parse.read_manifests` gives them."""
    for m, disp, _ in manifests:
        need = needed(m, disp) if m.enabled else None
        if need is not None:
            require_extra(*need)
