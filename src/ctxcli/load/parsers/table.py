"""``parser: table`` — one object per row of a CSV/TSV, Parquet, JSON/JSONL or Excel file, or of
a SQLite or PostgreSQL table or read-only query, all read through DuckDB.

The ``table:`` block names the file (inside the snapshot folder) and, for SQLite, a table or a
single SELECT; the ``mapping:`` turns each row into an object (parsers/mapping.py): key columns
into the object id and business keys, a tenant column (a shared table: with the manifest's
``tenant_id`` set, rows of any other tenant are skipped before anything reads them), time
columns placed in the declared ``timezone`` when naive, typed facts, title and body templates,
an entity per row and relations from columns that name another entity's key (attested by the
row's object). CSV, TSV and Excel cells are read as text (the mapping types them); Parquet,
JSON and SQLite keep their own types.

Extensions (sqlite, excel, postgres_scanner) come from the PyPI ``duckdb-extension-*`` wheels'
own files, never from the network (see NOTES-duckdb.md: sqlite and postgres_scanner are
INSTALLed from the wheel's file into a temporary extension folder, then LOADed by name).

A PostgreSQL table (``format: postgres``, ``database:`` its address, no password in the
manifest: PGPASSFILE or the libpq environment) is attached read-only; its rows live outside
the snapshot folder, so the source's digest also covers every row read (:meth:`TableParser.
content_digest`): a changed row makes a changed source, and an unchanged database a reused one.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

import orjson

from ...errors import InputError
from ...models.records import EntityRecord, ObjectRecord, RelationRecord
from ...util.canon import canonical_bytes, sha256_hex
from . import Parser, Unit, register
from .common import entity_row, record_row, rel, report, tenant_of, validate
from .mapping import Where, apply, empty, resolve, to_time

FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".json": "json", ".jsonl": "jsonl",
           ".ndjson": "jsonl", ".xlsx": "excel", ".sqlite": "sqlite", ".sqlite3": "sqlite", ".db": "sqlite"}
FETCH = 2048


def _ext_file(pkg: str, name: str) -> str:
    import importlib

    import duckdb

    try:
        mod = importlib.import_module(pkg)
    except ImportError:
        raise InputError(f"reading this table needs the {name} extension: pip install "
                         f"duckdb-extension-{name}=={duckdb.__version__}") from None
    path = Path(mod.__file__).parent / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if not path.is_file():
        raise InputError(f"the {name} extension for duckdb {duckdb.__version__} is not installed ({path})")
    return str(path)


def _target(ls) -> tuple[Path | None, str, str]:
    opts = ls.manifest.table
    if opts.format == "postgres":
        return None, f"postgres:{opts.table or 'query'}", "postgres"
    raw = Path(opts.file)
    if raw.is_absolute() or ".." in raw.parts:
        raise InputError("table.file must stay inside the snapshot folder", file=ls.manifest_file, field="table.file")
    p = ls.snap / raw
    real, real_snap = Path(os.path.realpath(p)), Path(os.path.realpath(ls.snap))
    if real_snap not in real.parents:
        raise InputError("table.file escapes the snapshot folder", file=ls.manifest_file, field="table.file")
    if not real.is_file():
        raise InputError(f"table.file {opts.file} does not exist", file=ls.manifest_file, field="table.file")
    fmt = opts.format or FORMATS.get(real.suffix.lower())
    if fmt is None:
        raise InputError(f"cannot tell the format of {opts.file} from its extension: set table.format",
                         file=ls.manifest_file, field="table.format")
    return real, rel(p, ls.root), fmt


def rows(ls) -> Iterator[tuple[int, dict[str, Any], Where]]:
    """(row number from 1, the row, where it is) in the file's order."""
    import duckdb

    path, disp, fmt = _target(ls)
    opts = ls.manifest.table
    with tempfile.TemporaryDirectory(prefix="ctx-table-") as extdir:
        con = duckdb.connect(config={"extension_directory": extdir, "autoinstall_known_extensions": False,
                                     "autoload_known_extensions": False, "threads": 1})
        try:
            sql, params, label, first_line = _query(con, path, fmt, opts, ls.manifest_file)
            try:
                cur = con.execute(sql, params)
            except duckdb.Error as e:
                raise InputError(f"cannot read the table: {_first_line(e, opts)}", file=disp) from None
            cols = [d[0] for d in cur.description]
            n = 0
            while True:
                try:
                    batch = cur.fetchmany(FETCH)
                except duckdb.Error as e:
                    raise InputError(f"cannot read the table after row {n}: {_first_line(e, opts)}",
                                     file=disp) from None
                if not batch:
                    break
                for values in batch:
                    n += 1
                    line = n + first_line if first_line is not None else None
                    yield n, dict(zip(cols, values)), Where(disp, line, f"{label}row {n}", what="column")
        finally:
            con.close()


def _first_line(e: Exception, opts) -> str:
    """The first line of a reader's error; a database address's password masked (``***``)."""
    from ...util.passwords import mask

    return mask(str(e).splitlines()[0] if str(e) else type(e).__name__, opts.database)


def _query(con, path: Path | None, fmt: str, opts, mdisp: str) -> tuple[str, list, str, int | None]:
    """(SQL, parameters, row label prefix, the file line of the header for text formats)."""
    if fmt in ("csv", "tsv"):
        sep = "\t" if fmt == "tsv" else ","
        return ("SELECT * FROM read_csv(?, header=true, all_varchar=true, delim=?, strict_mode=true)",
                [str(path), sep], "", 1)
    if fmt == "parquet":
        return "SELECT * FROM read_parquet(?)", [str(path)], "", None
    if fmt == "json":
        return "SELECT * FROM read_json(?, format='array')", [str(path)], "", None
    if fmt == "jsonl":
        return "SELECT * FROM read_json(?, format='newline_delimited')", [str(path)], "", None
    if fmt == "excel":
        con.execute(f"LOAD '{_ext_file('duckdb_extension_excel', 'excel')}'")
        if opts.sheet:
            return ("SELECT * FROM read_xlsx(?, sheet=?, header=true, all_varchar=true)",
                    [str(path), opts.sheet], f"sheet {opts.sheet} ", None)
        return "SELECT * FROM read_xlsx(?, header=true, all_varchar=true)", [str(path)], "", None
    # sqlite and postgres: attached read-only; a table, or one SELECT statement
    import duckdb

    kind = "PostgreSQL" if fmt == "postgres" else "SQLite"
    if (opts.table is None) == (opts.query is None):
        raise InputError(f"a {kind} table needs exactly one of table.table or table.query", file=mdisp, field="table")
    if fmt == "postgres":
        con.execute(f"INSTALL '{_ext_file('duckdb_extension_postgres_scanner', 'postgres_scanner')}'")
        con.execute("LOAD postgres_scanner")
        quoted = opts.database.replace("'", "''")
        try:
            con.execute(f"ATTACH '{quoted}' AS src (TYPE postgres, READ_ONLY)")
        except duckdb.Error as e:
            raise InputError(f"cannot open the PostgreSQL database: {_first_line(e, opts)}", file=mdisp,
                             field="table.database") from None
    else:
        ext = _ext_file("duckdb_extension_sqlite", "sqlite")
        con.execute(f"INSTALL '{ext}'")
        con.execute("LOAD sqlite")
        quoted = str(path).replace("'", "''")       # ATTACH takes no parameter
        con.execute(f"ATTACH '{quoted}' AS src (TYPE sqlite, READ_ONLY)")
    con.execute("USE src")
    if opts.table is not None:
        return f'SELECT * FROM "{opts.table}"', [], f"table {opts.table} ", None
    try:
        stmts = con.extract_statements(opts.query)
    except duckdb.Error as e:
        raise InputError(f"table.query does not parse: {str(e).splitlines()[0]}", file=mdisp,
                         field="table.query") from None
    if len(stmts) != 1 or stmts[0].type != duckdb.StatementType.SELECT:
        raise InputError("table.query must be one read-only SELECT statement", file=mdisp, field="table.query")
    return f"SELECT * FROM ({opts.query})", [], "query ", None


def visible(ls, row: dict[str, Any], where: Where) -> str | None:
    """The row's tenant, or None for a row of another tenant in a shared table (never read)."""
    m, mp = ls.manifest, ls.manifest.mapping
    if mp.tenant_id is None:
        return tenant_of(m, None, where.file, where.line) if m.tenant_id is None else m.tenant_id
    t = resolve(mp.tenant_id, row, where, "tenant_id")
    if m.tenant_id is not None:
        return m.tenant_id if (not empty(t) and str(t) == m.tenant_id) else None
    if empty(t):
        raise where.error(f"{where.what} {mp.tenant_id!r} (the tenant) is empty", field="tenant_id")
    return str(t)


_CANON = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def _row_hash(row: dict[str, Any]) -> str:
    """The digest of a row's canonical JSON; a value JSON has no type for is its ``str``
    (the same bytes as converting each such value first: ``default`` applies at any depth)."""
    return sha256_hex(orjson.dumps(row, default=str, option=_CANON))


def mapped_rows(ls) -> Iterator[tuple[int, dict[str, Any], dict[str, Any], str, Where]]:
    """(row number, the raw row, its ctx fields, tenant, where) for each visible row."""
    for n, row, where in rows(ls):
        got = mapped_row(ls, row, where)
        if got is not None:
            yield n, row, got[0], got[1], where


def mapped_row(ls, row: dict[str, Any], where: Where) -> tuple[dict[str, Any], str] | None:
    """(its ctx fields, tenant) of one row; None for another tenant's row or a bad one (reported)."""
    try:
        tenant = visible(ls, row, where)
        if tenant is None:
            return None
        fields = apply(ls.manifest.mapping, row, where)
    except InputError as e:
        report(ls, e)           # the row is skipped; the rest is read to gather every problem
        return None
    fields.pop("tenant_id", None)
    return fields, tenant


def _record(ls, n: int, row: dict[str, Any], fields: dict[str, Any], tenant: str, where: Where) -> ObjectRecord:
    opts = ls.manifest.table
    base = opts.file if opts.format != "postgres" else "postgres"
    return mapped_record(row, fields, where, f"{base}" + (f":{opts.table}" if opts.table else "") + f"#row-{n}")


def mapped_record(row: dict[str, Any], fields: dict[str, Any], where: Where, locator: str) -> ObjectRecord:
    """The ObjectRecord of one mapped record: ``body`` is its content, its version the mapped
    one or a hash of the record, its locator ``locator``."""
    data = {k: v for k, v in fields.items() if k != "body"}
    data["content"] = fields.get("body", "")
    data.setdefault("title", "")
    data.setdefault("source_version", "row:" + _row_hash(row)[:16])
    if "version" in data:
        data["source_version"] = data.pop("version")
    data.setdefault("locator", locator)
    for k in ("object_id", "object_type", "observed_at"):
        if k not in data:
            raise where.error(f"the mapping gives no {k} (map a column or set a constant)", field=k)
    return validate(ObjectRecord, data, where.file, where.line, where=where.label)


@register
class TableParser(Parser):
    name = "table"
    unit = "row"

    def check(self, ls) -> None:
        _target(ls)

    def content_digest(self, ls) -> bytes | None:
        """A database table's rows are not in the snapshot folder: their digest, in the
        order read (None for files, which the snapshot digest covers)."""
        if ls.manifest.table.format != "postgres":
            return None
        import hashlib

        h = hashlib.sha256()
        for _, row, _ in rows(ls):
            h.update(_row_hash(row).encode() + b"\n")
        return h.digest()

    def objects(self, ls) -> Iterator[dict[str, Any]]:
        m = ls.manifest
        if m.table.row_groups is not None:
            yield from group_objects(ls)
            return
        for n, row, where in rows(ls):
            yield from self._row_objects(ls, n, row, where)

    def units(self, ls) -> Iterator[Unit] | None:
        """One unit per row (its number, line and values: a row's locator names its number);
        none for row groups, whose objects span rows."""
        if ls.manifest.table.row_groups is not None:
            return None
        # repr tells every value DuckDB returns apart (NaN from None, 1 from 1.0 and "1")
        return (Unit(repr((n, where.line, tuple(row.items()))).encode(), where.file, where.line,
                     lambda n=n, row=row, where=where: self._row_objects(ls, n, row, where))
                for n, row, where in rows(ls))

    def _row_objects(self, ls, n: int, row: dict[str, Any], where: Where) -> list[dict[str, Any]]:
        got = mapped_row(ls, row, where)
        if got is None:
            return []
        fields, tenant = got
        try:
            rec = _record(ls, n, row, fields, tenant, where)
        except InputError as e:
            report(ls, e)
            return []
        return [record_row(ls.manifest, rec, tenant, where)]

    def entities(self, ls) -> Iterator[dict[str, Any]]:
        yield from super().entities(ls)
        em = ls.manifest.mapping.entity
        if em is None:
            return
        seen: set[tuple[str, str]] = set()
        for _n, row, _fields, tenant, where in mapped_rows(ls):
            try:
                got = list(entity_of(ls.manifest, em, row, tenant, where, seen))
            except InputError as e:
                report(ls, e)
                continue
            yield from got

    def relations(self, ls) -> Iterator[tuple[RelationRecord, str, str, int]]:
        yield from super().relations(ls)
        mp = ls.manifest.mapping
        if not mp.relations:
            return
        for n, row, fields, tenant, where in mapped_rows(ls):
            try:
                rec = _record(ls, n, row, fields, tenant, where)
                got = list(relations_of(mp, row, fields, rec, tenant, where, n))
            except InputError as e:
                report(ls, e)
                continue
            yield from got


def group_objects(ls) -> Iterator[dict[str, Any]]:
    """``table.row_groups``: one object per run of at most ``rows`` consecutive rows of one
    tenant with equal ``by`` values (models.manifest.RowGroups)."""
    from .mapping import _text

    m, rg = ls.manifest, ls.manifest.table.row_groups
    base = (m.table.file if m.table.format != "postgres" else "postgres") + (f":{m.table.table}" if m.table.table else "")
    group: list[tuple[int, dict[str, Any], dict[str, Any], str, Where]] = []

    def flush() -> Iterator[dict[str, Any]]:
        n0, row0, fields0, tenant, where = group[0]
        cols = list(rg.columns) or list(row0)
        a, b = n0, group[-1][0]
        lines = [" | ".join(cols)] + [" | ".join("" if empty(r.get(c)) else _text(r.get(c)) for c in cols)
                                      for _, r, _, _, _ in group]
        fields = dict(fields0)
        head = fields.get("body")
        fields["body"] = "\n".join(([head] if head else []) + lines)
        keys: list[str] = []
        for _, _, f, _, _ in group:
            keys.extend(k for k in f.get("keys", []) if k not in keys)
        fields["keys"] = keys
        if "object_id" in fields:
            fields["object_id"] = f"{fields['object_id']}#rows-{a}-{b}"
        if "version" not in fields:
            fields["version"] = "rows:" + sha256_hex(canonical_bytes([_row_hash(r) for _, r, _, _, _ in group]))[:16]
        try:
            rec = mapped_record(row0, fields, where, f"{base}#rows-{a}-{b}")
        except InputError as e:
            report(ls, e)
            return
        yield record_row(m, rec, tenant, where)

    for item in mapped_rows(ls):
        n, row, fields, tenant, where = item
        if group:
            r0 = group[0]
            if (len(group) >= rg.rows or tenant != r0[3]
                    or any(row.get(c) != r0[1].get(c) for c in rg.by)):
                yield from flush()
                group = []
        for c in rg.by:
            if c not in row:
                report(ls, where.error(f"{where.what} {c!r} (table.row_groups.by) is not a column",
                                       field="table.row_groups.by"))
                return
        group.append(item)
    if group:
        yield from flush()


def entity_of(m, em, row: dict[str, Any], tenant: str, where: Where,
              seen: set[tuple[str, str]]) -> Iterator[dict[str, Any]]:
    """The entity a record declares (once per key: many rows may be about one entity)."""
    data = {"entity_key": resolve(em.key, row, where, "entity.key"), "entity_type": em.type,
            "name": resolve(em.name, row, where, "entity.name")}
    rec = validate(EntityRecord, data, where.file, where.line, where=where.label)
    if (tenant, rec.entity_key) not in seen:
        seen.add((tenant, rec.entity_key))
        yield entity_row(m, rec, tenant, where.file, where.line)


def relations_of(mp, row: dict[str, Any], fields: dict[str, Any], rec: ObjectRecord, tenant: str, where: Where,
                 n: int) -> Iterator[tuple[RelationRecord, str, str, int]]:
    """The relations a record attests (its object is their evidence); an empty end: none."""
    for rm in mp.relations:
        try:
            src = resolve(rm.from_, row, where, "relations.from")
            dst = resolve(rm.to, row, where, "relations.to")
        except InputError:
            continue            # an empty column: this row attests no such relation
        if empty(src) or empty(dst):
            continue
        data = {"relation_id": f"{rec.object_id}:{rm.type}:{dst}", "from": str(src), "type": rm.type,
                "to": str(dst), "evidence_object_id": rec.object_id, "source_version": rec.source_version,
                "confidence": rm.confidence,
                "valid_from": to_time(fields.get("valid_from"), mp.timezone, where, "valid_from"),
                "valid_to": to_time(fields.get("valid_to"), mp.timezone, where, "valid_to")}
        yield validate(RelationRecord, data, where.file, where.line, where=where.label), tenant, \
            where.file, where.line or n
