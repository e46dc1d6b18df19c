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

import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import orjson

from ...errors import InputError
from ...models.records import EntityRecord, ObjectRecord, RelationRecord
from ...util.canon import canonical_bytes, sha256_hex
from . import Parser, Unit
from .common import confined, entity_row, record_row, report, tenant_of, validate
from .mapping import Where, apply, empty, resolve, to_time

FORMATS = {".csv": "csv", ".tsv": "tsv", ".parquet": "parquet", ".json": "json", ".jsonl": "jsonl",
           ".ndjson": "jsonl", ".xlsx": "excel", ".sqlite": "sqlite", ".sqlite3": "sqlite", ".db": "sqlite"}
FETCH = 2048
MAX_COLUMNS = 2048          # a table's columns (a CSV/TSV header is counted before DuckDB reads the file)
_HEADER_BYTES = 1024 * 1024


def _csv_header_columns(path: Path, sep: str, disp: str) -> None:
    """Refuse a CSV/TSV whose header has more than MAX_COLUMNS columns, or is longer than
    1 MB, from its first MB alone: DuckDB spends minutes and gigabytes on 100,000 columns."""
    import csv
    import io

    with open(path, "rb") as fh:
        head = fh.read(_HEADER_BYTES + 1)
    text = head[:_HEADER_BYTES].decode("utf-8", "replace")
    if "\n" not in text and len(head) > _HEADER_BYTES:
        raise InputError(f"the header line is longer than {_HEADER_BYTES // (1024 * 1024)} MB", file=disp, line=1)
    try:
        header = next(csv.reader(io.StringIO(text, newline=""), delimiter=sep), [])
    except csv.Error:
        return                                  # DuckDB names the problem
    if len(header) > MAX_COLUMNS:
        raise InputError(f"{len(header)} columns, over the {MAX_COLUMNS}-column limit", file=disp, line=1)


def _ext_file(pkg: str, name: str) -> str:
    import importlib

    import duckdb

    from ...util.distribution import require_extra

    require_extra("tables", pkg, f"reading a table with DuckDB's {name} extension")
    mod = importlib.import_module(pkg)
    path = Path(mod.__file__).parent / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if not path.is_file():
        raise InputError(f"the {name} extension for duckdb {duckdb.__version__} is not installed ({path})")
    return str(path)


def _target(ls) -> tuple[Path | None, str, str]:
    opts = ls.manifest.table
    if opts.format == "postgres":
        return None, f"postgres:{opts.table or 'query'}", "postgres"
    real = confined(ls.snap, opts.file, file=ls.manifest_file, field="table.file")
    p = ls.snap / opts.file
    if not real.is_file():
        raise InputError(f"table.file {opts.file} does not exist", file=ls.manifest_file, field="table.file")
    fmt = opts.format or FORMATS.get(real.suffix.lower())
    if fmt is None:
        raise InputError(f"cannot tell the format of {opts.file} from its extension: set table.format",
                         file=ls.manifest_file, field="table.format")
    return real, ls.shown(p), fmt


def rows(ls) -> Iterator[tuple[int, dict[str, Any], Where]]:
    """(row number from 1, the row, where it is) in the file's order."""
    for n, cols, values, place in _raw_rows(ls):
        yield n, dict(zip(cols, values)), _where(place, n)


def _where(place: tuple[str, int | None, str, str], n: int) -> Where:
    disp, first_line, label = place[:3]
    return Where(disp, n + first_line if first_line is not None else None, f"{label}row {n}", what="column")


@contextmanager
def _opened(ls, *, head_only: bool = False):
    """The table's statement run on a private connection: (cursor, file for messages, row label
    prefix, the file line of the header for text formats, the table options); ``head_only``:
    no rows, only the column names."""
    import duckdb

    path, disp, fmt = _target(ls)
    opts = ls.manifest.table
    if fmt in ("csv", "tsv"):
        _csv_header_columns(path, "\t" if fmt == "tsv" else ",", disp)
    with tempfile.TemporaryDirectory(prefix="ctx-table-") as extdir:
        con = _connect(extdir)
        try:
            sql, params, label, first_line = _query(con, path, fmt, opts, ls.manifest_file)
            try:
                cur = con.execute(f"SELECT * FROM ({sql}) LIMIT 0" if head_only else sql, params)
            except duckdb.Error as e:
                raise InputError(f"cannot read the table: {_first_line(e, opts)}", file=disp) from None
            yield cur, disp, label, (disp, first_line, label, fmt), opts
        finally:
            con.close()


def _raw_rows(ls) -> Iterator[tuple[int, list[str], tuple, tuple[str, int | None, str, str]]]:
    """(row number from 1, the column names, the row's values, (file, the file line of the
    header for text formats, row label prefix, format)) in the file's order: a row's dict and
    :class:`Where` are made only for the rows a pass maps."""
    import duckdb

    with _opened(ls) as (cur, disp, _, place, opts):
        cols = [d[0] for d in cur.description]
        if len(cols) > MAX_COLUMNS:
            raise InputError(f"{len(cols)} columns, over the {MAX_COLUMNS}-column limit", file=disp)
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
                yield n, cols, values, place


def _connect(extdir: str):
    import duckdb

    return duckdb.connect(config={"extension_directory": extdir, "autoinstall_known_extensions": False,
                                  "autoload_known_extensions": False, "threads": 1})


def columns(ls) -> tuple[list[str], str, str]:
    """(the table's column names, its file for messages, the row label prefix), read without
    its rows."""
    with _opened(ls, head_only=True) as (cur, disp, label, _, _opts):
        return [d[0] for d in cur.description], disp, label


_PLAIN = frozenset((str, int, bool, type(None)))
_TEXT_FORMATS = ("csv", "tsv", "excel")


def _unit_raw(head: bytes, values: tuple) -> bytes:
    """What a row's unit digest is made of: the header and the row's values, not its number,
    so a row keeps its identity when rows before it come or go (its copied object takes its
    new locator: :attr:`Unit.locator`). Texts, integers, booleans and nulls as JSON (one
    text per row); any other value by ``repr``, which tells every value DuckDB returns apart
    (NaN from None, 1 from 1.0 and "1"); ``head`` is ``j`` and the column names as JSON."""
    if all(type(v) in _PLAIN for v in values):
        try:
            return head + orjson.dumps(values)
        except TypeError:           # an integer beyond 64 bits
            pass
    return b"r" + head + repr(values).encode("utf-8", "surrogatepass")


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
    _check_query(con, opts.query, mdisp)
    # a second line: from here on DuckDB reads no file but the database already attached
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return f"SELECT * FROM ({opts.query})", [], "query ", None


# scalar functions that read the host (files, environment, settings): never in a table.query
_HOST_FUNCTIONS = frozenset({"getenv", "current_setting", "read_text", "read_blob", "glob", "file_exists"})


def _check_query(con, query: str, mdisp: str) -> None:
    """Refuse a ``table.query`` that reads anything but the declared database's tables: a table
    function (``read_text``, ``read_csv``, ``glob`` …), a host function, or a table of another
    catalog. DuckDB's own parser reads it (``json_serialize_sql``)."""
    import orjson

    tree = orjson.loads(con.execute("SELECT json_serialize_sql(?)", [query]).fetchone()[0])
    if tree.get("error"):
        raise InputError(f"table.query does not parse: {tree.get('error_message', '')}".rstrip(": "), file=mdisp,
                         field="table.query")

    def refuse(what: str) -> InputError:
        return InputError(f"table.query {what}: a table source's query may read only the tables of its "
                          "declared database", file=mdisp, field="table.query")

    stack: list = [tree["statements"]]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
            continue
        if not isinstance(v, dict):
            continue
        if v.get("type") == "TABLE_FUNCTION":
            fn = (v.get("function") or {}).get("function_name", "?")
            raise refuse(f"calls the table function {fn}()")
        if v.get("class") == "FUNCTION" and str(v.get("function_name", "")).lower() in _HOST_FUNCTIONS:
            raise refuse(f"calls {v['function_name']}()")
        if v.get("type") == "BASE_TABLE" and v.get("catalog_name") not in (None, "", "src"):
            raise refuse(f"reads the catalog {v['catalog_name']}")
        stack.extend(v.values())


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


def mapped_rows(ls, skip: set[int] | None = None) -> Iterator[tuple[int, dict[str, Any], dict[str, Any], str, Where]]:
    """(row number, the raw row, its ctx fields, tenant, where) for each visible row (but the
    rows numbered 1 + an element of ``skip``)."""
    for n, cols, values, place in _raw_rows(ls):
        if skip and n - 1 in skip:
            continue
        row, where = dict(zip(cols, values)), _where(place, n)
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
    return mapped_record(row, fields, where, f"{_base(ls)}#row-{n}")


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


class TableParser(Parser):
    name = "table"
    unit = "row"
    position = "#row-[0-9]+$"

    def check(self, ls) -> None:
        _target(ls)

    def field_names(self, ls):
        from .names import FieldNames

        cols, disp, label = columns(ls)
        where = f"{disp} ({label.strip()})" if label else disp
        return FieldNames({"": (set(cols), f"no column {{name!r}} in {where}")})

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
        foreign = _foreign(ls)
        for n, cols, values, place in _raw_rows(ls):
            row = dict(zip(cols, values))
            if foreign is None or not foreign(row):
                yield from self._row_objects(ls, n, row, _where(place, n))

    def units(self, ls) -> Iterator[Unit] | None:
        """One unit per row, identified by its values (not its number: a row that moves keeps
        its unit and its object, which takes the row's new locator); none for row groups,
        whose objects span rows."""
        if ls.manifest.table.row_groups is not None:
            return None
        base = _base(ls) if "locator" not in ls.manifest.mapping.set else None
        foreign = _foreign(ls)

        def objects_of(n: int, cols: list[str], values: tuple, place: tuple) -> list[dict[str, Any]]:
            row = dict(zip(cols, values))
            if foreign is not None and foreign(row):
                return []
            return self._row_objects(ls, n, row, _where(place, n))
        return (Unit(raw, place[0], line, lambda n=n, cols=cols, values=values, place=place:
                     objects_of(n, cols, values, place), f"{base}#row-{n}" if base is not None else None)
                for n, cols, values, place, raw, line in _unit_rows(ls))

    def copies_relations(self, ls) -> bool:
        """A copied row's relations are the live store's (attested by its object): its
        relations are not mapped again, unless a relations.jsonl beside the table also
        names the source's objects as evidence (then every row is mapped, as before)."""
        return bool(ls.manifest.mapping.relations) and ls.manifest.table.row_groups is None \
            and "relations.jsonl" not in ls.names

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
        """The mapping's entity of each row, once per key in row order. On a reload, a row
        whose unit the live store's sync file records (``ls.known_units``: same values, same
        manifest and rules) was mapped and validated before: only its tenant and entity key
        and name are read from it, not its whole mapping."""
        yield from super().entities(ls)
        em = ls.manifest.mapping.entity
        if em is None:
            return
        seen: set[tuple[str, str]] = set()
        known = getattr(ls, "known_units", None) or None
        for _n, row, where, unit in _entity_rows(ls, known):
            try:
                if unit is not None and unit in known:
                    tenant = visible(ls, row, where)
                    got = [] if tenant is None else list(entity_of(ls.manifest, em, row, tenant, where, seen))
                else:
                    got = self._row_entity(ls, em, row, where, seen)
            except InputError as e:
                report(ls, e)
                continue
            yield from got

    @staticmethod
    def _row_entity(ls, em, row: dict[str, Any], where: Where, seen: set[tuple[str, str]]) -> list[dict[str, Any]]:
        got = mapped_row(ls, row, where)
        if got is None:
            return []
        return list(entity_of(ls.manifest, em, row, got[1], where, seen))

    def relations(self, ls) -> Iterator[tuple[RelationRecord, str, str, int]]:
        """The mapping's relations of each row; on a reload not those of the rows whose object
        was copied from the live store (``ls.copied_units``, their row numbers - 1), whose
        relations are copied with it (load/reuse.py ``copy_unit_relations``)."""
        yield from super().relations(ls)
        mp = ls.manifest.mapping
        if not mp.relations:
            return
        copied = getattr(ls, "copied_units", None) if self.copies_relations(ls) else None
        for n, row, fields, tenant, where in mapped_rows(ls, copied):
            try:
                rec = _record(ls, n, row, fields, tenant, where)
                got = list(relations_of(mp, row, fields, rec, tenant, where, n))
            except InputError as e:
                report(ls, e)
                continue
            yield from got


def _foreign(ls):
    """For a shared table read for one tenant through a plain tenant column: a test of a row
    that is another tenant's (or names none), made before the row is mapped or even named —
    :func:`visible` gives None for exactly these rows; None when there is no such column."""
    m, spec = ls.manifest, ls.manifest.mapping.tenant_id
    if m.tenant_id is None or spec is None or "{" in spec:
        return None
    mine = m.tenant_id

    def foreign(row: dict[str, Any]) -> bool:
        t = row.get(spec)
        return t != mine and (empty(t) or str(t) != mine)
    return foreign


def _base(ls) -> str:
    """What a row's locator starts with: the file (or ``postgres``) and the table's name."""
    opts = ls.manifest.table
    return (opts.file if opts.format != "postgres" else "postgres") + (f":{opts.table}" if opts.table else "")


def _unit_rows(ls) -> Iterator[tuple[int, list[str], tuple, tuple, bytes, int | None]]:
    """(row number, columns, values, place, the unit's raw bytes, its file line) of every row."""
    head: bytes | None = None
    texts = False
    dumps = orjson.dumps
    for n, cols, values, place in _raw_rows(ls):
        if head is None:
            head = b"j" + dumps(cols)
            # CSV, TSV and Excel cells are read as text or null: JSON tells them apart unchecked
            texts = place[3] in _TEXT_FORMATS
        raw = head + dumps(values) if texts else _unit_raw(head, values)
        yield n, cols, values, place, raw, n + place[1] if place[1] is not None else None


def _entity_rows(ls, known) -> Iterator[tuple[int, dict[str, Any], Where, str | None]]:
    """(row number, row, where, its unit digest when ``known`` is given) of every row."""
    if not known:
        for n, row, where in rows(ls):
            yield n, row, where, None
        return
    from ..sync import digester

    digest = digester(ls.context)
    for n, cols, values, place, raw, _line in _unit_rows(ls):
        yield n, dict(zip(cols, values)), _where(place, n), digest(raw)


def group_objects(ls) -> Iterator[dict[str, Any]]:
    """``table.row_groups``: one object per run of at most ``rows`` consecutive rows of one
    tenant with equal ``by`` values (models.manifest.RowGroups)."""
    from .mapping import as_text

    m, rg = ls.manifest, ls.manifest.table.row_groups
    base = _base(ls)
    group: list[tuple[int, dict[str, Any], dict[str, Any], str, Where]] = []

    def flush() -> Iterator[dict[str, Any]]:
        n0, row0, fields0, tenant, where = group[0]
        cols = list(rg.columns) or list(row0)
        a, b = n0, group[-1][0]
        lines = [" | ".join(cols)] + [" | ".join("" if empty(r.get(c)) else as_text(r.get(c)) for c in cols)
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
