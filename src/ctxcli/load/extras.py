"""The optional extras a project's sources need, checked before a load reads any source: the
git parser needs ``dulwich`` (the ``git`` extra), the table parser on SQLite, Excel or
PostgreSQL needs DuckDB's extension wheel (the ``tables`` extra). CSV, TSV, Parquet and JSON
tables, records, markdown and JSON exports need nothing beyond the default install."""

from __future__ import annotations

from pathlib import Path, PurePath

from ..util.distribution import require_extra

# table format -> the wheel that carries its DuckDB extension
TABLE_EXTENSIONS = {"sqlite": "duckdb_extension_sqlite", "excel": "duckdb_extension_excel",
                    "postgres": "duckdb_extension_postgres_scanner"}


def extra_for(parser: str, table_format: str | None, table_file: str | None) -> tuple[str, str, str] | None:
    """(extra, module, why) a source with this parser (and ``table:`` format or file) needs, or None."""
    if parser == "git":
        return "git", "dulwich", "parser: git"
    if parser == "table":
        from .parsers.table import FORMATS

        fmt = table_format or (FORMATS.get(PurePath(table_file).suffix.lower()) if table_file else None)
        if fmt in TABLE_EXTENSIONS:
            return "tables", TABLE_EXTENSIONS[fmt], f"a {fmt} table"
    return None


def needed(m, disp: str) -> tuple[str, str, str] | None:
    """(extra, module, what needs it) for one source manifest (``disp``: its file), or None."""
    t = m.table
    need = extra_for(m.parser, t.format if t is not None else None, t.file if t is not None else None)
    return None if need is None else (need[0], need[1], f"{disp}: source {m.source_id} ({need[2]})")


def missing_for_files(manifest_files) -> list[str]:
    """The extras, not installed, that these source manifest files (YAML) need: what ``ctx init``
    tells to install first."""
    import yaml

    from ..util.distribution import installed

    out: list[str] = []
    for f in manifest_files:
        try:
            doc = yaml.safe_load(Path(f).read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            continue
        table = doc.get("table") if isinstance(doc.get("table"), dict) else {}
        need = extra_for(str(doc.get("parser")), table.get("format"), table.get("file"))
        if need is not None and need[0] not in out and not installed(need[1]):
            out.append(need[0])
    return out


def require_for(manifests) -> None:
    """Refuse the first enabled source whose extra is not installed (one line, exit 2);
    ``manifests`` as :func:`.parse.read_manifests` gives them."""
    for m, disp, _ in manifests:
        need = needed(m, disp) if m.enabled else None
        if need is not None:
            require_extra(*need)
