"""Build a store from manifests and snapshots, atomically.

The new store is written to a staging file beside the live one, checkpointed and closed,
then published as the store's next generation and moved onto the live path with ``os.replace``
(store/generations.py). Readers that opened the old file keep
it until they reopen; a failed or killed load leaves the live store as it was.
"""

from __future__ import annotations

import itertools
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .. import BUILDER_VERSION
from ..errors import InputError, UsageError
from ..store.schema import SCHEMA_VERSION, STEPS
from ..util.canon import canonical_bytes, json_list, sha256_hex
from .derive import BATCH, Deriver, row_line, start_pool
from .parse import LoadedSource, parse_source, read_manifests
from .parsers.common import us
from .parsers import redaction

# progress(phase, done, total): total 0 when the phase's total is not known (yet); a phase ends
# when the next one starts, or when the load returns
Progress = Callable[[str, int, int], None]


@dataclass
class SourceSummary:
    source_id: str
    enabled: bool
    objects: int
    sections: int
    entities: int
    relations: int
    tombstones: int
    dropped: int
    digest: str
    reused: bool = False
    # objects against the previous store's, by tenant and id (no comparable store: all added)
    added: int | None = None
    changed: int | None = None
    removed: int | None = None
    # a changed source read unit by unit (load/sync.py): {"read": units parsed again, "of": units,
    # "unit": "line" / "file"}; None when its parser reads it whole or it was not read
    units: dict[str, Any] | None = None


@dataclass
class LoadResult:
    db: str
    store_digest: str
    sources: list[SourceSummary]
    objects: int
    warnings: list[str] = field(default_factory=list)      # e.g. dangling references skipped
    warning_kinds: list[str] = field(default_factory=list)  # what kind each warning is (one per warning)
    compared: bool = True       # False: no previous store of this schema and builder to count changes against
    generation: int | None = None       # the generation this load published (None: nothing new)
    pruned: list[int] = field(default_factory=list)     # generations dropped after it (ctx.toml [generations] keep)

    @property
    def reused(self) -> list[str]:
        """Sources whose rows were copied from the previous store (digest unchanged)."""
        return [s.source_id for s in self.sources if s.reused]

    def warning_summary(self) -> list[str]:
        """One line per kind of warning, in the order the kinds first occur: the warning
        itself when it is the only one of its kind, else how many there are and the first."""
        kinds: dict[str, list[str]] = {}
        for kind, w in zip(self.warning_kinds, self.warnings):
            kinds.setdefault(kind, []).append(w)
        return [ws[0] if len(ws) == 1 else
                f"{kind.format(n=len(ws))}, the first {ws[0].removeprefix(SKIPPED)} (each one: --verbose)"
                for kind, ws in kinds.items()]


SKIPPED = "skipped (on_dangling: skip): "


def _noop(stage: str, done: int, total: int) -> None:
    pass


OBJ_COLS = {
    "doc_id": "INTEGER", "object_id": "VARCHAR", "tenant_id": "VARCHAR", "source_id": "VARCHAR",
    "source_version": "VARCHAR", "object_type": "VARCHAR", "subject_id": "VARCHAR", "title": "VARCHAR",
    "content": "VARCHAR", "locator": "VARCHAR", "valid_from_us": "BIGINT", "valid_to_us": "BIGINT",
    "observed_us": "BIGINT", "required_scopes": "VARCHAR[]", "allowed_purposes": "VARCHAR[]",
    "supports": "VARCHAR[]", "facts": "VARCHAR", "keys": "VARCHAR[]", "content_hash": "VARCHAR",
    "dedup_hash": "VARCHAR", "supersedes": "VARCHAR", "tokens": "INTEGER", "section": "VARCHAR",
    "doc_ref": "VARCHAR", "fts_text": "VARCHAR", "family": "BIGINT",
}
ENT_COLS = {"entity_id": "BIGINT", "tenant_id": "VARCHAR", "entity_key": "VARCHAR", "entity_type": "VARCHAR",
            "name": "VARCHAR", "aliases": "VARCHAR[]", "source_id": "VARCHAR"}
REL_COLS = {"tenant_id": "VARCHAR", "relation_id": "VARCHAR", "src": "BIGINT", "dst": "BIGINT",
            "rel_type": "VARCHAR", "src_type": "VARCHAR", "dst_type": "VARCHAR", "valid_from_us": "BIGINT",
            "valid_to_us": "BIGINT", "evidence_object_id": "VARCHAR", "source_id": "VARCHAR",
            "source_version": "VARCHAR", "confidence": "DOUBLE",
             "extraction_method": "VARCHAR"}
UNRES_COLS = {"tenant_id": "VARCHAR", "source_id": "VARCHAR", "object_id": "VARCHAR", "subject_id": "VARCHAR",
              "field": "VARCHAR", "mention": "VARCHAR", "method": "VARCHAR", "candidates": "VARCHAR[]",
              "scores": "DOUBLE[]"}
# A changed source's objects whose text is unchanged (load/reuse.py): their row, without the
# values derived from that text (copied from the live store), and the live store's doc id.
KEPT_COLS = {**{c: t for c, t in OBJ_COLS.items() if c not in ("tokens", "fts_text", "dedup_hash")},
             "old_doc": "INTEGER"}
# The objects of a changed source's unchanged units (load/sync.py): copied whole from the live
# store, with the unit's current locator when it names the unit's position (a table row's).
SAME_COLS = {"old_doc": "INTEGER", "doc_id": "INTEGER", "locator": "VARCHAR"}
TERM_COLS = {"doc_id": "INTEGER", "terms": "VARCHAR[]", "tfs": "INTEGER[]", "raw_terms": "VARCHAR[]",
             "raw_tfs": "INTEGER[]"}
TLINE_COLS = {"source_id": "VARCHAR", "seq": "INTEGER", "tenant_id": "VARCHAR", "object_id": "VARCHAR",
              "deleted_at_us": "BIGINT", "reason": "VARCHAR"}
TOMB_COLS = {"tenant_id": "VARCHAR", "object_id": "VARCHAR", "source_id": "VARCHAR", "deleted_at_us": "BIGINT",
             "reason": "VARCHAR"}


def collect(manifests_dir: Path, root: Path, sources_dir: Path | None,
            progress: Progress = _noop, vectors: bool = True) -> tuple[list[LoadedSource], str]:
    from .evidence_rules import read_rules

    manifests = read_manifests(manifests_dir, root)
    from .extras import require_for

    require_for(manifests)          # a missing extra before any source is read
    rules = read_rules(manifests_dir / "playbooks", root)
    loaded: list[LoadedSource] = []
    digests: list[tuple[str, str]] = []
    for i, (m, disp, mbytes) in enumerate(manifests):
        progress("read", i, len(manifests))
        if not m.enabled:
            digests.append((m.source_id, "disabled:" + sha256_hex(mbytes)))
            loaded.append(LoadedSource(manifest=m, manifest_file=disp, digest="disabled:" + sha256_hex(mbytes)))
            continue
        ls = parse_source(m, disp, mbytes, root, sources_dir, rules)
        loaded.append(ls)
        digests.append((m.source_id, ls.digest))
    progress("read", len(manifests), len(manifests))
    embedding = None
    if vectors:
        from ..embed import model_identity

        embedding = model_identity()["weights_sha256"]
    from ..engine.injection_adapter import detector_id

    # the detector too: the store holds its verdicts (load/verdicts.py), so another detector
    # builds another store (a reload after an upgrade scans again instead of doing nothing)
    store_digest = "sha256:" + sha256_hex(canonical_bytes(
        {"schema": SCHEMA_VERSION, "builder": BUILDER_VERSION, "sources": sorted(digests),
         "embedding": embedding, "detector": detector_id()}))
    return loaded, store_digest


class _Writer:
    """Rows appended to an NDJSON file in the load's temporary folder, inserted in bulk later."""

    def __init__(self, tmpdir: str, table: str, cols: dict[str, str]) -> None:
        self.table, self.cols, self.n = table, cols, 0
        self.path = os.path.join(tmpdir, f"{table}-{next(_SEQ)}.ndjson")
        self.fh = open(self.path, "wb")

    def write(self, row: dict[str, Any]) -> None:
        self.fh.write(row_line(row, self.cols))
        self.fh.write(b"\n")
        self.n += 1

    def write_lines(self, lines: bytes, n: int) -> None:
        """``n`` rows already serialised as :meth:`write` would (load/derive.py)."""
        self.fh.write(lines)
        self.n += n

    def insert(self, con) -> None:
        self.fh.close()
        if self.n:
            spec = "{" + ", ".join(f"'{c}': '{t}'" for c, t in self.cols.items()) + "}"
            con.execute(f"INSERT INTO {self.table} SELECT {', '.join(self.cols)} FROM read_json(?, "
                        f"format='newline_delimited', columns={spec}, maximum_object_size=67108864)", [self.path])
        os.unlink(self.path)


_SEQ = itertools.count()


def build_store(manifests_dir: Path, db_path: Path, *, root: Path | None = None, sources_dir: Path | None = None,
                progress: Progress = _noop, incremental: bool = True, vectors: bool = False,
                generations: bool = True) -> LoadResult:
    """Validate every source and publish a new store at ``db_path``.

    Records are streamed: entities, then objects (token counts and full-text text computed in
    batches), then tombstones, then relations are validated and written to NDJSON files in a
    temporary folder beside the store; only small id maps stay in memory. The files are then
    inserted into a staging database, derived tables and the full-text index are built, and
    the staging file replaces the live store in one rename.

    With ``incremental`` (the default), sources whose digest equals the live store's are not
    read again: their rows are copied from the live store, and the objects of a changed source
    whose text is unchanged keep their derived values (see load/reuse.py). Either way, each
    source's added / changed / removed objects are counted against the live store.

    The vectors table is built when ``vectors`` (``ctx load --vectors``) or a playbook under
    ``manifests_dir/playbooks`` asks for it (:func:`.vectors.requested`); otherwise the store
    holds none and the embedding model is never loaded (nor needs to be installed).
    """
    manifests_dir = Path(manifests_dir)
    root = Path(root) if root is not None else manifests_dir.resolve().parent
    db_path = Path(db_path)
    if db_path.is_dir():
        raise UsageError(f"--db {db_path} is a folder, not a store file")
    memory_limit()          # a bad $CTX_LOAD_MEMORY_LIMIT is said before any source is read
    try:
        db_path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--db {db_path}: cannot create its folder ({e.strerror})") from None
    from .vectors import requested

    why = requested(manifests_dir / "playbooks", root, vectors)
    vectors = why is not None
    if why:
        from ..embed.model import require

        require(why)
    from ..util.signals import raise_if_terminated, terminate_interrupts

    def checked(stage: str, done: int, total: int) -> None:     # the caller's progress, after a check
        raise_if_terminated()
        progress(stage, done, total)

    remove_leftover_tmp(db_path.parent)     # what a load stopped by SIGKILL (or a power cut) left
    # SIGTERM (CI cancellation, timeout, docker stop) stops the load as Ctrl-C does: the pool
    # stopped, the temporary folder removed, nothing published (util/signals.py)
    with terminate_interrupts():
        loaded, store_digest = collect(manifests_dir, root, sources_dir, checked, vectors)
        # Workers fork before this process opens any DuckDB database (see load/derive.py).
        pool = start_pool(vectors) if sum(o.manifest.enabled for o in loaded) else None
        try:
            return _build(loaded, store_digest, db_path, checked, incremental, pool,
                          manifests_dir=manifests_dir, vectors=vectors, generations=generations)
        finally:
            if pool is not None:
                pool.terminate()
                pool.join()


# A load's temporary folder beside the store: ``ctx-load-`` + tempfile's 8 characters, holding
# TMP_MARKER with the pid of the load that made it. Only such a folder, whose load is no longer
# running, is ever removed by a later load: nothing ctx did not make.
TMP_PREFIX = "ctx-load-"
TMP_MARKER = ".ctx-load"
_TMP_NAME = re.compile(r"ctx-load-[a-z0-9_]{8}")
_MARKER_TEXT = re.compile(r"ctx load temporary folder; pid ([0-9]+)\n")


def _mark_tmp(tmpdir: str) -> None:
    with open(os.path.join(tmpdir, TMP_MARKER), "x", encoding="utf-8") as fh:
        fh.write(f"ctx load temporary folder; pid {os.getpid()}\n")


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:             # another user's process: alive
        return True
    return True


def remove_leftover_tmp(folder: Path) -> list[str]:
    """Remove the temporary folders of loads that were stopped without cleaning up (SIGTERM or
    SIGKILL, a power cut): named as ctx names them, marked by ctx, and made by a process that
    no longer runs. Returns their names."""
    import shutil

    gone: list[str] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return gone
    for e in entries:
        if not _TMP_NAME.fullmatch(e.name) or not e.is_dir(follow_symlinks=False):
            continue
        try:
            with open(os.path.join(e.path, TMP_MARKER), encoding="utf-8") as fh:
                m = _MARKER_TEXT.fullmatch(fh.read(200))
        except (OSError, UnicodeDecodeError):
            continue
        if m is None or int(m.group(1)) == os.getpid() or _running(int(m.group(1))):
            continue
        shutil.rmtree(e.path, ignore_errors=True)
        gone.append(e.name)
    return gone


def _build(loaded: list[LoadedSource], store_digest: str, db_path: Path, progress: Progress, incremental: bool,
           pool, *, manifests_dir: Path | None = None, vectors: bool = True, generations: bool = True) -> LoadResult:
    from .reuse import read_prior

    if incremental:
        # A source that declares linking is read again on every load (its links depend on other
        # sources' entities, which a reused source supplies from the live store): a digest that
        # never matches, so it counts as changed and only its records whose text changed are derived.
        prior = read_prior(db_path, {ls.manifest.source_id: "relink:" + ls.digest if ls.manifest.linking
                                     else ls.digest for ls in loaded if ls.manifest.enabled},
                           BUILDER_VERSION, SCHEMA_VERSION,
                           policies={ls.manifest.source_id: _policy_text(ls.manifest) for ls in loaded
                                     if ls.manifest.enabled})
        if prior is not None and prior.store_digest == store_digest:
            # Same builder, schema and source digests: the live store is the store this load
            # would build, byte for byte in every table. Nothing to do.
            by_id = {r[0]: r for r in prior.summaries}
            if set(by_id) == {ls.manifest.source_id for ls in loaded}:
                sums = [SourceSummary(*by_id[ls.manifest.source_id], reused=True, added=0, changed=0, removed=0)
                        for ls in loaded]
                return LoadResult(db=str(db_path), store_digest=store_digest, sources=sums,
                                  objects=sum(x.objects for x in sums))
    else:       # nothing is reused; the live store only tells what changed
        prior = read_prior(db_path, {}, BUILDER_VERSION, SCHEMA_VERSION)

    fd, staging = tempfile.mkstemp(prefix=f".{db_path.name}.", suffix=".staging", dir=db_path.parent)
    os.close(fd)
    os.unlink(staging)
    import duckdb

    from .reuse import Fallback

    reuse = incremental         # the live store's injection verdicts may be taken (load/verdicts.py)
    try:
        while True:
            try:
                stats = _build_staging(loaded, prior, db_path, staging, store_digest, progress, pool,
                                       manifests_dir=manifests_dir, vectors=vectors, reuse=reuse)
                break
            except Fallback:            # a full load gives the answer (or the exact error)
                from .reuse import read_prior

                prior = read_prior(db_path, {}, BUILDER_VERSION, SCHEMA_VERSION)    # for the counts only
                reuse = False
                for p in (staging, staging + ".wal", staging + ".sync"):
                    if os.path.exists(p):
                        os.unlink(p)
        with open(staging, "rb") as fh:
            os.fsync(fh.fileno())
        # A WAL left beside the live path by a killed writer would be replayed onto the new store.
        stale_wal = Path(str(db_path) + ".wal")
        if stale_wal.exists():
            stale_wal.unlink()
        from ..store.generations import publish
        from ..util.signals import raise_if_terminated

        raise_if_terminated()           # never publish after a SIGTERM (util/signals.py)
        generation = publish(staging, db_path, numbered=generations)   # the next generation, the live store
        if generations:     # a build published elsewhere (a team store) is not loaded onto again
            from . import sync

            sync.publish(staging + ".sync", db_path)       # what the next load's units are compared with
    except duckdb.InterruptException:      # Ctrl-C during a statement: an interrupt, not a broken store
        raise KeyboardInterrupt from None
    except duckdb.Error as e:
        from ..errors import StoreUnusableError     # disk full, read-only folder: exit 3

        hint = (f"; ${MEMORY_ENV} raises the load's memory limit, now {memory_limit()}"
                if isinstance(e, duckdb.OutOfMemoryException) else "")
        raise StoreUnusableError(f"could not build the store {db_path}: {str(e).splitlines()[0]} "
                                 f"(the previous store, if any, is unchanged{hint})") from None
    finally:
        for p in (staging, staging + ".wal", staging + ".sync"):
            if os.path.exists(p):
                os.unlink(p)
    return LoadResult(db=str(db_path), store_digest=store_digest, sources=stats["summaries"],
                      objects=stats["objects"], warnings=stats["warnings"], warning_kinds=stats["warning_kinds"],
                      compared=stats["compared"],
                      generation=generation)


MEMORY_ENV = "CTX_LOAD_MEMORY_LIMIT"
_MEMORY = re.compile(r"([1-9][0-9]*(\.[0-9]+)?|0\.[0-9]*[1-9][0-9]*)\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)


def memory_limit() -> str:
    """The load's DuckDB buffer pool: $CTX_LOAD_MEMORY_LIMIT (such as ``4GB``), else 2GB. Past
    it DuckDB spills to a temporary folder beside the store (the postings sort is the peak)."""
    env = os.environ.get(MEMORY_ENV, "").strip()
    if not env:
        return "2GB"
    if not _MEMORY.fullmatch(env):
        raise UsageError(f"${MEMORY_ENV}: {env!r} is not a size such as 2GB or 512MB")
    return env


def _policy_text(m) -> str | None:
    """A source's redaction policy as the sources table records it."""
    red = redaction(m)
    return canonical_bytes(red.model_dump(mode="json")).decode() if red else None


def _build_staging(loaded: list[LoadedSource], prior, db_path: Path, staging: str, store_digest: str,
                   progress: Progress, pool, *, manifests_dir: Path | None = None,
                   vectors: bool = True, reuse: bool = False) -> dict[str, Any]:
    import duckdb

    with tempfile.TemporaryDirectory(prefix=TMP_PREFIX, dir=db_path.parent) as tmpdir:
        _mark_tmp(tmpdir)
        opened: list = []
        try:
            stats = _stream_rows(loaded, tmpdir, progress, prior, pool, opened, vectors=vectors)
            # A bounded buffer pool: DuckDB spills to the load's temporary folder instead of
            # taking 80 % of the machine (the postings sort is the peak).
            con = duckdb.connect(staging, config={"threads": "2", "memory_limit": memory_limit(),
                                                  "temp_directory": tmpdir})
            try:
                _write_store(con, loaded, stats, store_digest, progress, prior, manifests_dir=manifests_dir,
                             vectors=vectors, pool=pool, reuse=reuse, spool=tmpdir)
            finally:
                con.close()
            from . import sync

            sync.write(staging + ".sync", stats["sync"])
        finally:
            # On an error the row files are deleted with the folder, but a handle still open on
            # one would keep its space taken (a full disk stays full) until the traceback goes.
            for fh in opened:
                try:
                    fh.close()
                except OSError:
                    pass            # its buffer could not be flushed (disk full): the fd is closed anyway
    return stats


@dataclass
class _Rows:
    """What streaming the sources' records gathers: one NDJSON writer per table, the id maps a
    later table checks its references against, and per-source counts."""

    loaded: list[LoadedSource]
    tmpdir: str
    problems: Any
    reuse: dict[str, Any]                   # source -> reuse.PriorSource (its digest is unchanged)
    prior_rows: dict[str, Any]              # changed source -> its live objects' (doc id, row key)
    writers: dict[str, _Writer]
    per: dict[str, dict[str, int]]
    first: dict[str, list[int]] = field(default_factory=dict)  # source -> [first doc, parsed, first entity, entities]
    warnings: list[str] = field(default_factory=list)
    warning_kinds: list[str] = field(default_factory=list)
    linker: Any = None
    links: list[tuple[str, dict[str, Any]]] = field(default_factory=list)        # (source, link) found in the objects
    unresolved: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    ents: dict[tuple[str, str], tuple[int, str, str, int]] = field(default_factory=dict)   # -> (id, type, file, line)
    objs: dict[tuple[str, str], tuple[int, str, int | None, str]] = field(default_factory=dict)  # -> (doc, file, line, source)
    sup: list[tuple[int, str, str]] = field(default_factory=list)                # (doc id, tenant, supersedes)
    removed: set[tuple[str, str]] = field(default_factory=set)
    rel_ids: set[tuple[str, str]] = field(default_factory=set)
    vectors: str = ""
    prior_units: dict[str, Any] = field(default_factory=dict)   # changed source -> sync.PriorUnits
    sync_prior: dict[str, dict] = field(default_factory=dict)   # the live store's sync entries
    reread: dict[str, tuple[int, int]] = field(default_factory=dict)   # source -> (units parsed, units)
    sync: dict[str, dict] = field(default_factory=dict)        # the new store's sync file entries
    prior_db: Path | None = None        # the live store (row keys of pending objects are read from it)
    prior_con: Any = None
    pending: list[tuple[dict[str, Any], int]] = field(default_factory=list)     # (object, live doc id)


_TABLES = (("objects", OBJ_COLS), ("entities", ENT_COLS), ("relations", REL_COLS), ("tombstones", TOMB_COLS),
           ("doc_terms", TERM_COLS), ("dropped_relations", REL_COLS), ("source_tombstones", TLINE_COLS),
           ("unresolved_entities", UNRES_COLS), ("kept_objects", KEPT_COLS), ("same_objects", SAME_COLS))


def _stream_rows(loaded: list[LoadedSource], tmpdir: str, progress: Progress, prior=None,
                 pool=None, opened: list | None = None, *, vectors: bool = True) -> dict[str, Any]:
    """Every source's records, validated and written to one NDJSON file per table: entities
    first (relations need them), then objects, tombstones, relations and linked mentions.
    Every bad record is gathered; all are raised at the end."""
    from .parsers.common import Problems

    problems = Problems()
    for ls in loaded:
        ls.problems = problems
    writers = {t: _Writer(tmpdir, t, cols) for t, cols in _TABLES}
    if opened is not None:
        opened.extend(w.fh for w in writers.values())
    st = _Rows(loaded, tmpdir, problems, prior.sources if prior is not None else {},
               prior.rows if prior is not None else {}, writers,
               {ls.manifest.source_id: {"objects": 0, "sections": 0, "entities": 0, "relations": 0,
                                        "tombstones": 0, "dropped": 0} for ls in loaded},
               prior_units=prior.units if prior is not None else {}, sync_prior=prior.sync if prior is not None else {},
               prior_db=prior.path if prior is not None else None)
    for ls in loaded:       # a reload: what the table parser's entity pass may read cheaply
        pu = st.prior_units.get(ls.manifest.source_id)
        ls.known_units = frozenset(h for h, _ in pu.units) if pu is not None else frozenset()
        ls.copied_units = None
    _check_names(st)
    if any(ls.manifest.enabled and ls.manifest.linking for ls in loaded):
        from .link import Linker

        st.linker = Linker()
    _stream_entities(st)
    try:
        _stream_objects(st, progress, pool, opened, vectors)
    finally:        # the live store, opened for pending objects' row keys (_resolve_pending)
        if st.prior_con is not None:
            st.prior_con.close()
            st.prior_con = None
    removed_docs = _stream_tombstones(st)
    _stream_relations(st)
    _stream_links(st)
    problems.raise_if_any()
    objs, removed = st.objs, st.removed
    families = _families(objs, st.sup, set(removed_docs))
    gone = sorted((t, o, objs[(t, o)][3], objs[(t, o)][0]) for t, o in removed if (t, o) in objs)
    return {"writers": tuple(writers.values()), "per": st.per,
            "removed_docs": removed_docs, "removed": removed, "removed_objects": gone, "first": st.first,
            "families": families, "objects": len(objs) - len(removed_docs), "summaries": [],
            "vectors": st.vectors, "warnings": st.warnings, "warning_kinds": st.warning_kinds,
            "sync": st.sync, "reread": st.reread}


def _check_names(st: _Rows) -> None:
    """Each source read again whose mapping names a field no record of it has (parsers/names.py):
    a problem at the manifest's line, and the source is not read (its records would each
    repeat it)."""
    from .parsers.names import unknown_names

    for ls in st.loaded:
        if ls.manifest.enabled and ls.manifest.source_id not in st.reuse:
            ls.sync_entry = st.sync_prior.get(ls.manifest.source_id)     # (git: its history read once)
            errs = unknown_names(ls)
            for e in errs:
                st.problems.add(e)
            ls.refused = bool(errs)


def _stream_entities(st: _Rows) -> None:
    """The entities table: a reused source's from the live store (ids renumbered later), a
    changed source's parsed; a duplicate key is a problem of the record that repeats it."""
    from .reuse import Fallback

    ents, w_ent = st.ents, st.writers["entities"]
    for ls in st.loaded:
        sid = ls.manifest.source_id
        st.first[sid] = [0, 0, len(ents) + 1, 0]
        if sid in st.reuse:
            for tenant, key, etype, name, aliases in st.reuse[sid].entities:
                if (tenant, key) in ents:
                    raise Fallback("entity key")
                ents[(tenant, key)] = (len(ents) + 1, etype, "", 0)
                if st.linker is not None:
                    st.linker.add_entity({"tenant_id": tenant, "entity_key": key, "entity_type": etype,
                                          "name": name, "aliases": list(aliases or [])})
            st.per[sid]["entities"] = st.first[sid][3] = len(st.reuse[sid].entities)
            continue
        for e in ls.iter_entities():
            k = (e["tenant_id"], e["entity_key"])
            if k in ents:
                if not ents[k][2]:
                    raise Fallback("entity key")
                _, _, f, ln = ents[k]
                st.problems.add(InputError(f"duplicate entity key {e['entity_key']!r} (first at {f}:{ln})",
                                           file=e["_file"], line=e["_line"], field="entity_key"))
                continue
            e["entity_id"] = len(ents) + 1
            ents[k] = (e["entity_id"], e["entity_type"], e["_file"], e["_line"])
            if st.linker is not None:
                st.linker.add_entity(e)
            w_ent.write(e)
            st.per[e["source_id"]]["entities"] += 1
            st.first[sid][3] += 1


def _stream_objects(st: _Rows, progress: Progress, pool, opened: list | None, vectors: bool) -> None:
    """The objects, doc_terms and kept_objects tables and the vectors file: a reused source's
    objects only take their doc ids; a changed source's objects whose text is unchanged are
    kept (their derived values copied later, load/reuse.py); the others are derived in batches
    (token counts, full-text shadow text, vectors) in worker processes."""
    from .reuse import Fallback

    objs, sup, w = st.objs, st.sup, st.writers
    batch: list[dict[str, Any]] = []
    st.vectors = os.path.join(st.tmpdir, f"vectors-{next(_SEQ)}.ndjson")
    vec_fh = open(st.vectors, "wb")
    if opened is not None:
        opened.append(vec_fh)

    def written(n: int, lines: tuple[bytes, bytes, bytes]) -> None:
        w["objects"].write_lines(lines[0], n)
        w["doc_terms"].write_lines(lines[1], n)
        vec_fh.write(lines[2])
        progress("index", len(objs), 0)     # objects read so far: their number is known only at the end

    deriver = Deriver(written, tuple(OBJ_COLS), tuple(TERM_COLS), pool, vectors=vectors, spool=st.tmpdir)
    for ls in st.loaded:
        sid = ls.manifest.source_id
        st.first[sid][0] = len(objs) + 1
        if sid in st.reuse:
            for tenant, oid, _, supersedes in st.reuse[sid].objects:
                if (tenant, oid) in objs:
                    raise Fallback("object id")
                objs[(tenant, oid)] = (len(objs) + 1, "", None, sid)
                if supersedes:
                    sup.append((len(objs), tenant, supersedes))
            st.first[sid][1] = len(st.reuse[sid].objects)
            if sid in st.sync_prior:
                st.sync[sid] = {**st.sync_prior[sid], "first_doc": st.first[sid][0]}
            continue
        # the index and the vector of a masked source are made from its masked text (load/derive.py)
        red = redaction(ls.manifest)
        policy = red.model_dump(mode="json") if red else None
        linking = ls.manifest.linking if st.linker is not None else None
        kept = st.prior_rows.get(sid, {})      # its objects in the live store, if their policy is this one

        src = (sid, policy, linking, kept)

        def add(o: dict[str, Any], src=src) -> None:
            _add_object(st, o, src, batch, deriver)

        ls.sync_entry = st.sync_prior.get(sid)       # a parser's walk state (git's cursor), if any
        units = ls.iter_units() if linking is None else None      # linking scans every object's text
        if units is None:
            for o in ls.iter_objects(dedup=False):
                add(o)
            continue
        _stream_units(st, ls, units, add)
    _resolve_pending(st, batch, deriver)
    if batch:
        deriver.add(batch)
    deriver.close()
    vec_fh.close()


def _add_object(st: _Rows, o: dict[str, Any], src: tuple, batch: list[dict[str, Any]], deriver: Deriver) -> None:
    """One parsed object of a changed source: numbered, checked for a duplicate id, scanned for
    links, then kept (its text is the live store's: derived values copied) or queued to derive.
    ``src``: (source, redaction policy, linking, its live objects' (doc id, row key))."""
    from .reuse import Fallback, row_key

    sid, policy, linking, kept = src
    objs = st.objs
    o["_redact"] = policy
    k = (o["tenant_id"], o["object_id"])
    if k in objs:
        if not objs[k][1]:
            raise Fallback("object id")
        _, f, ln, _ = objs[k]
        st.problems.add(InputError(f"duplicate object id {o['object_id']!r} (first at {f}:{ln})",
                                   file=o["_file"], line=o["_line"], field="object_id"))
        return
    o["doc_id"] = len(objs) + 1
    objs[k] = (o["doc_id"], o["_file"], o["_line"], sid)
    st.first[sid][1] += 1
    if o["supersedes"]:
        st.sup.append((o["doc_id"], o["tenant_id"], o["supersedes"]))
    if linking is not None:
        found, weak = st.linker.scan(o, linking, sid)
        st.links.extend((sid, x) for x in found)
        st.unresolved.extend((sid, x) for x in weak)
    was = kept.get(k)
    if was is not None and was[1] is None:      # its live row key is read in a batch (reuse.read_prior)
        st.pending.append((o, was[0]))
        if len(st.pending) >= BATCH:
            _resolve_pending(st, batch, deriver)
        return
    if was is not None and was[1] == row_key(o["title"], o["content"], o["keys"]):
        o["old_doc"] = was[0]       # same text: its derived values are copied, not derived again
        st.writers["kept_objects"].write(o)
        return
    batch.append(o)
    if len(batch) >= BATCH:
        deriver.add(list(batch))
        batch.clear()


def _resolve_pending(st: _Rows, batch: list[dict[str, Any]], deriver: Deriver) -> None:
    """The pending objects (a unit reload's parsed objects whose id the live store holds): kept
    when their text is the live object's (row keys read from the live store in one statement),
    else queued to derive."""
    from .reuse import row_key

    if not st.pending:
        return
    if st.prior_con is None:
        import duckdb

        st.prior_con = duckdb.connect(str(st.prior_db), read_only=True, config={"threads": "1"})
    keys = {d: row_key(ti, c, k) for d, ti, c, k in st.prior_con.execute(
        "SELECT doc_id, title, content, keys FROM objects WHERE doc_id IN "
        "(SELECT unnest(from_json(?, '[\"INTEGER\"]')))", [json_list(d for _, d in st.pending)]).fetchall()}
    for o, d in st.pending:
        if keys.get(d) == row_key(o["title"], o["content"], o["keys"]):
            o["old_doc"] = d
            st.writers["kept_objects"].write(o)
            continue
        batch.append(o)
        if len(batch) >= BATCH:
            deriver.add(list(batch))
            batch.clear()
    st.pending.clear()


def _stream_units(st: _Rows, ls: LoadedSource, units, add: Callable[[dict[str, Any]], None]) -> None:
    """A changed source read unit by unit (load/sync.py): a unit whose digest the live store's
    sync file records brings its objects from the live store (``same_objects``); any other is
    parsed and each of its objects passed to ``add``. Records the new sync file's entry."""
    from . import sync
    from .reuse import Fallback

    sid = ls.manifest.source_id
    objs, sup = st.objs, st.sup
    pu = st.prior_units.get(sid)
    avail = pu.available() if pu is not None else None
    from orjson import dumps

    digest = sync.digester(ls.context)
    w_same = st.writers["same_objects"]      # lines as _Writer.write writes them (SAME_COLS)
    done: list[list] = []
    copied: set[int] = set()
    parsed = 0
    for i, u in enumerate(units):
        h = digest(u.raw)
        olds = avail.take(h) if avail is not None else None
        if olds is not None and all(d in pu.docs for d in olds):
            for d in olds:
                tenant, oid, supersedes = pu.docs[d]
                if (tenant, oid) in objs:
                    raise Fallback("object id")      # the full load names the line
                objs[(tenant, oid)] = (len(objs) + 1, "", None, sid)
                st.first[sid][1] += 1
                if supersedes:
                    sup.append((len(objs), tenant, supersedes))
                w_same.write_lines(b'{"old_doc":%d,"doc_id":%d,"locator":%s}\n' % (d, len(objs), dumps(u.locator)), 1)
            done.append([h, len(olds)])
            copied.add(i)
            continue
        parsed += 1
        rows = u.rows()
        for o in rows:
            add(o)
        done.append([h, len(rows)])
    st.sync[sid] = {"digest": ls.digest, "context": ls.context, "first_doc": st.first[sid][0], "units": done}
    if ls.sync_state is not None:       # the parser's walk state (git: where the next load goes on from)
        st.sync[sid]["state"] = ls.sync_state
    st.reread[sid] = (parsed, len(done))
    ls.copied_units = copied        # their relations are copied too, where the parser says so


def _stream_tombstones(st: _Rows) -> list[int]:
    """The tombstones and source_tombstones tables; returns the doc ids the tombstones delete
    (they leave objects, the index and the graph)."""
    from .reuse import Fallback

    objs, removed = st.objs, st.removed
    for ls in st.loaded:
        sid = ls.manifest.source_id
        lines = st.reuse[sid].tombstones if sid in st.reuse else ls.iter_tombstones()
        for seq, t in enumerate(lines):
            st.writers["source_tombstones"].write({**t, "seq": seq})
            k = (t["tenant_id"], t["object_id"])
            if k in objs and objs[k][3] != t["source_id"]:
                # A source deletes only its own objects: a tombstone line elsewhere must not
                # remove another source's rule or case snapshot.
                st.problems.add(InputError(f"tombstone names {t['object_id']!r}, an object of source "
                                           f"{objs[k][3]!r}; a source may only delete its own objects",
                                           file=t["_file"], line=t["_line"], field="object_id"))
                continue
            st.per[t["source_id"]]["tombstones"] += 1
            if k not in removed:
                removed.add(k)
                st.writers["tombstones"].write(t)
    for _sid, src in st.reuse.items():
        if src.removed - removed:
            raise Fallback("a deleted object of a reused source is back")
    return sorted(objs[k][0] for k in removed if k in objs)


def _stream_relations(st: _Rows) -> None:
    """The relations and dropped_relations tables from the changed sources' relation records
    (a reused source's are copied and checked in SQL, reuse.copy_rows): both ends known
    entities of the tenant, the evidence a known object; attested by a deleted object, dropped."""
    ents, objs = st.ents, st.objs
    bad_records = len(st.problems.items)
    for ls in st.loaded:
        sid = ls.manifest.source_id
        if sid in st.reuse:
            continue
        skip = ls.manifest.on_dangling == "skip"
        for rec, tenant, disp, line in ls.iter_relations():
            ev = rec.evidence_object_id
            dangling = [InputError(f"relation {rec.relation_id} points to unknown entity {key!r}",
                                   file=disp, line=line, field=fld)
                        for fld, key in (("from", rec.from_), ("to", rec.to)) if (tenant, key) not in ents]
            if ev is not None and (tenant, ev) not in objs:
                dangling.append(InputError(f"relation {rec.relation_id} cites unknown evidence object {ev!r}",
                                           file=disp, line=line, field="evidence_object_id"))
            if dangling and bad_records:
                continue        # a record that failed may be the one it names: reported once that is fixed
            if dangling:
                if skip:        # the manifest says so (on_dangling: skip): reported, not loaded
                    st.warnings.append(f"{SKIPPED}{dangling[0]}")
                    what = "an unknown evidence object" if dangling[0].field == "evidence_object_id" else \
                        "an unknown entity"
                    st.warning_kinds.append(f"{SKIPPED}{{n}} relations of {sid} naming {what}")
                else:
                    st.problems.add(dangling[0])
                continue
            ends = [ents[(tenant, rec.from_)], ents[(tenant, rec.to)]]
            if (tenant, rec.relation_id) in st.rel_ids:
                st.problems.add(InputError(f"duplicate relation id {rec.relation_id!r}", file=disp, line=line,
                                           field="relation_id"))
                continue
            st.rel_ids.add((tenant, rec.relation_id))
            (s_id, s_type, _, _), (d_id, d_type, _, _) = ends
            dropped = ev is not None and (tenant, ev) in st.removed
            st.writers["dropped_relations" if dropped else "relations"].write({
                "tenant_id": tenant, "relation_id": rec.relation_id, "src": s_id, "dst": d_id,
                "rel_type": rec.type, "src_type": s_type, "dst_type": d_type,
                "valid_from_us": us(rec.valid_from), "valid_to_us": us(rec.valid_to),
                "evidence_object_id": ev, "source_id": sid, "source_version": rec.source_version,
                "confidence": rec.confidence})
            st.per[sid]["dropped" if dropped else "relations"] += 1


def _stream_links(st: _Rows) -> None:
    """Linked mentions (load/link.py) into relations / dropped_relations and
    unresolved_entities: from the object's subject entity (an object whose subject is no
    entity of the tenant links nothing) to the entity named, attested by the object."""
    ents = st.ents
    for sid, x in st.links:
        tenant = x["tenant_id"]
        src, dst = ents.get((tenant, x["from"])), ents.get((tenant, x["to"]))
        if src is None or dst is None or (tenant, x["relation_id"]) in st.rel_ids:
            continue
        st.rel_ids.add((tenant, x["relation_id"]))
        gone_ev = (tenant, x["object_id"]) in st.removed
        st.writers["dropped_relations" if gone_ev else "relations"].write({
            "tenant_id": tenant, "relation_id": x["relation_id"], "src": src[0], "dst": dst[0], "rel_type": x["type"],
            "src_type": src[1], "dst_type": dst[1], "valid_from_us": None, "valid_to_us": None,
            "evidence_object_id": x["object_id"], "source_id": sid, "source_version": x["source_version"],
            "confidence": x["confidence"], "extraction_method": x["extraction_method"]})
        st.per[sid]["dropped" if gone_ev else "relations"] += 1
    for _sid, x in st.unresolved:
        if (x["tenant_id"], x["object_id"]) not in st.removed:
            st.writers["unresolved_entities"].write(x)


def _families(objs: dict[tuple[str, str], tuple[int, str, int | None, str]], sup: list[tuple[int, str, str]],
              removed: set[int]) -> list[tuple[int, int]]:
    """(doc id, family) for every object in a supersession chain; a family is numbered by its
    smallest doc id, so numbering is deterministic."""
    parent: dict[int, int] = {}

    def find(i: int) -> int:
        parent.setdefault(i, i)
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for doc, tenant, target in sup:
        t = objs.get((tenant, target))
        if t is None or doc in removed or t[0] in removed:
            continue
        a, b = find(doc), find(t[0])
        if a != b:
            parent[max(a, b)] = min(a, b)
    return sorted((d, find(d)) for d in parent)


def _write_store(con, loaded: list[LoadedSource], stats: dict[str, Any], store_digest: str,
                 progress: Progress, prior=None, *, manifests_dir: Path | None = None, vectors: bool = True,
                 pool=None, reuse: bool = False, spool: str = "") -> None:
    """The staging store in one transaction: the schema, the streamed rows (and the reused
    ones, copied from the live store), then each table in the order its inputs are ready."""
    con.execute("BEGIN")
    for i, (name, ddl) in enumerate(STEPS, 1):
        for stmt in ddl.split(";"):
            if stmt.strip():
                con.execute(stmt)
        con.execute("INSERT INTO schema_steps VALUES (?, ?)", [i, name])
    # progress: the tables in steps of known number (a real total), then the full-text index
    # as one statement (no total: an indeterminate phase, never a false fraction)
    total = 7 if vectors else 6
    done = iter(range(1, total + 1))

    def step() -> None:
        progress("tables", next(done), total)

    progress("tables", 0, total)
    _stage_rows(con, loaded, stats, prior)
    step()
    _write_objects(con, stats)
    step()
    _write_relations(con)
    step()
    _write_ledgers(con, stats)
    step()
    _write_lookups(con)
    step()
    delta = None
    stats["compared"] = prior is not None
    if prior is not None:
        from .reuse import deltas

        delta = deltas(con, tuple(OBJ_COLS), {ls.manifest.source_id: ls.parser.position for ls in loaded
                                              if ls.manifest.enabled and ls.parser.position})
    stats["summaries"] = _write_sources(con, loaded, stats["per"], set(prior.sources) if prior else set(), delta,
                                        stats["reread"])
    _write_meta(con, loaded, stats["objects"], store_digest, manifests_dir)
    from .verdicts import write_verdicts

    stats["verdicts"] = write_verdicts(con, _accept_fields(loaded), prior is not None and reuse, pool, spool)
    step()
    if vectors:         # else the vectors table stays empty and meta names no embedding model
        from ..embed import load_model
        from .vectors import write_vectors

        write_vectors(con, load_model(), prior, made=stats["vectors"])
        step()
    con.execute("DROP TABLE IF EXISTS prior_docs")
    # Committed here, the rows written so far leave the transaction's memory for the staging
    # file; the postings sort then has the buffer pool (a 1M-object reload ran out of memory in
    # that sort; load/build.py's memory_limit). Nothing reads the staging file before it is
    # published, so a second transaction does not expose a half-built store.
    con.execute("COMMIT")
    con.execute("BEGIN")
    progress("fts", 0, 0)
    _write_fulltext(con)
    con.execute("COMMIT")
    con.execute("CHECKPOINT")


def _stage_rows(con, loaded: list[LoadedSource], stats: dict[str, Any], prior) -> None:
    """The streamed row files inserted (objects, entities and relations unsorted yet; term
    frequencies and lengths in temporary tables), and the reused sources' rows and the kept
    objects' derived values copied from the live store (reuse.copy_rows)."""
    con.execute("CREATE TEMP TABLE doc_terms(doc_id INTEGER, terms VARCHAR[], tfs INTEGER[], raw_terms VARCHAR[], "
                "raw_tfs INTEGER[])")
    _mask_groups(con, loaded)
    # reused documents: their live postings with the live store's term ids, and those ids' terms
    con.execute("CREATE TEMP TABLE doc_rows(doc_id INTEGER, old_termid INTEGER, tf INTEGER)")
    con.execute("CREATE TEMP TABLE old_terms(old_termid INTEGER, term VARCHAR)")
    con.execute("CREATE TEMP TABLE raw_rows(doc_id INTEGER, term VARCHAR, tf INTEGER)")    # their raw_postings
    con.execute("CREATE TEMP TABLE doc_len(doc_id INTEGER, dl INTEGER)")
    con.execute("CREATE TEMP TABLE kept_objects(" + ", ".join(f"{c} {t}" for c, t in KEPT_COLS.items()) + ")")
    con.execute("CREATE TEMP TABLE same_objects(old_doc INTEGER, doc_id INTEGER, locator VARCHAR)")
    for w in stats["writers"]:
        w.insert(con)
    con.execute("INSERT INTO doc_len SELECT doc_id, coalesce(list_sum(tfs), 0) FROM doc_terms")
    if prior is not None:
        from .reuse import attach, copy_rows

        attach(con, prior)
        reused = {sid: (stats["first"][sid][0], stats["first"][sid][2]) for sid in prior.sources}
        # the objects of this load the tombstones delete: a tombstone naming no object of this
        # load deletes nothing, and a relation citing that id cites an unknown object
        removed = {(t, o) for t, o, _, _ in stats["removed_objects"]}
        copy_rows(con, prior, reused, removed, stats["per"], tuple(OBJ_COLS))
        units = [ls.manifest.source_id for ls in loaded if ls.copied_units and ls.parser.copies_relations(ls)]
        if units:
            from .reuse import copy_unit_relations

            copy_unit_relations(con, units, removed, stats["per"])
    con.execute("DROP TABLE kept_objects")
    con.execute("DROP TABLE same_objects")


def _write_objects(con, stats: dict[str, Any]) -> None:
    """objects in doc id order for range pruning (tombstoned objects left out, supersession
    families set) and entities in id order."""
    con.execute("CREATE TEMP TABLE gone_docs AS SELECT unnest(from_json(?, '[\"INTEGER\"]')) AS doc_id",
                [json_list(stats["removed_docs"])])
    fam = stats["families"]
    con.execute("CREATE TEMP TABLE fam AS SELECT unnest(from_json(?, '[\"INTEGER\"]')) AS doc_id, "
                "unnest(from_json(?, '[\"BIGINT\"]')) AS family",
                [json_list(d for d, _ in fam), json_list(f for _, f in fam)])
    con.execute("CREATE TABLE objects_sorted AS SELECT o.* REPLACE (f.family AS family) FROM objects o "
                "LEFT JOIN fam f ON f.doc_id = o.doc_id WHERE o.doc_id NOT IN (SELECT doc_id FROM gone_docs) "
                "ORDER BY o.doc_id")
    con.execute("DROP TABLE objects")
    con.execute("ALTER TABLE objects_sorted RENAME TO objects")
    con.execute("DROP TABLE fam")
    con.execute("DROP TABLE gone_docs")
    con.execute("CREATE TABLE entities_sorted AS SELECT * FROM entities ORDER BY entity_id")
    con.execute("DROP TABLE entities")
    con.execute("ALTER TABLE entities_sorted RENAME TO entities")
    # Candidates are fetched by doc id (a few dozen random rows): an ART index turns that into
    # point reads instead of decompressing every vector that holds one of them.
    con.execute("CREATE INDEX objects_doc_id ON objects(doc_id)")


def _write_relations(con) -> None:
    """relation_access and relations clustered by source node. What the graph walk needs to
    authorise an edge (store/schema.py): each distinct combination of its source, its target
    entity's source and its attesting object's source, scopes and purposes becomes one
    relation_access row; the relation keeps that row's id and the attesting object's validity,
    so the walk reads two small columns, not lists."""
    con.execute("CREATE TEMP TABLE rel_acc AS SELECT r.*, d.source_id AS dst_source_id, "
                "r.evidence_object_id IS NOT NULL AS attested, o.source_id AS ev_source_id, "
                "o.required_scopes AS ev_required_scopes, o.allowed_purposes AS ev_allowed_purposes, "
                "o.valid_from_us AS ev_valid_from_us, o.valid_to_us AS ev_valid_to_us "
                "FROM relations r LEFT JOIN objects o ON o.tenant_id = r.tenant_id AND o.object_id = r.evidence_object_id "
                "LEFT JOIN entities d ON d.entity_id = r.dst")
    con.execute("CREATE TEMP TABLE rel_acc2 AS SELECT *, dense_rank() OVER (ORDER BY source_id, dst_source_id, "
                "attested, ev_source_id, ev_required_scopes, ev_allowed_purposes)::INTEGER AS access_id FROM rel_acc")
    con.execute("INSERT INTO relation_access SELECT DISTINCT access_id, source_id, dst_source_id, attested, "
                "ev_source_id, ev_required_scopes, ev_allowed_purposes FROM rel_acc2 ORDER BY access_id")
    con.execute(f"CREATE TABLE relations_sorted AS SELECT {', '.join(REL_COLS)}, access_id, ev_valid_from_us, "
                "ev_valid_to_us FROM rel_acc2 ORDER BY src, rel_type, dst, relation_id")
    con.execute("DROP TABLE rel_acc")
    con.execute("DROP TABLE rel_acc2")
    con.execute("DROP TABLE relations")
    con.execute("ALTER TABLE relations_sorted RENAME TO relations")


def _write_ledgers(con, stats: dict[str, Any]) -> None:
    """dropped_relations and source_tombstones sorted; removed_objects (what the tombstones
    deleted) and source_loads (each source's first doc and entity ids, what the next
    incremental load renumbers from)."""
    for t, order in (("dropped_relations", "tenant_id, relation_id"), ("source_tombstones", "source_id, seq")):
        con.execute(f"CREATE TABLE {t}_sorted AS SELECT * FROM {t} ORDER BY {order}")
        con.execute(f"DROP TABLE {t}")
        con.execute(f"ALTER TABLE {t}_sorted RENAME TO {t}")
    gone = stats["removed_objects"]
    con.execute("INSERT INTO removed_objects SELECT unnest(from_json(?, '[\"VARCHAR\"]')), "
                "unnest(from_json(?, '[\"VARCHAR\"]')), unnest(from_json(?, '[\"VARCHAR\"]')), "
                "unnest(from_json(?, '[\"INTEGER\"]'))",
                [json_list(g[i] for g in gone) for i in range(4)])
    fl = stats["first"]
    con.execute("INSERT INTO source_loads SELECT unnest(from_json(?, '[\"VARCHAR\"]')), "
                "unnest(from_json(?, '[\"INTEGER\"]')), unnest(from_json(?, '[\"BIGINT\"]')), "
                "unnest(from_json(?, '[\"BIGINT\"]')), unnest(from_json(?, '[\"BIGINT\"]'))",
                [json_list(fl), *(json_list(v[i] for v in fl.values()) for i in range(4))])


def _write_lookups(con) -> None:
    """object_keys (subject, keys and id of every object), the point-lookup indexes, and
    versions (the supersession families)."""
    con.execute("INSERT INTO object_keys SELECT tenant_id, key, kind, doc_id FROM ("
                " SELECT tenant_id, subject_id AS key, 's' AS kind, doc_id FROM objects"
                " WHERE subject_id IS NOT NULL"
                " UNION ALL SELECT tenant_id, unnest(keys) AS key, 'k' AS kind, doc_id FROM objects"
                " UNION ALL SELECT tenant_id, object_id AS key, 'o' AS kind, doc_id FROM objects)"
                " ORDER BY key, tenant_id, doc_id")
    # Point lookups by key, entity key and edge source (store/duckdb_store.py): ART indexes,
    # used when the indexed column is a statement's only filter.
    con.execute("CREATE INDEX object_keys_key ON object_keys(key)")
    con.execute("CREATE INDEX entities_entity_key ON entities(entity_key)")
    con.execute("CREATE INDEX relations_src ON relations(src)")
    con.execute("INSERT INTO versions SELECT family, tenant_id, object_id, supersedes, source_version, "
                "valid_from_us, valid_to_us, required_scopes, allowed_purposes FROM objects "
                "WHERE family IS NOT NULL ORDER BY family, object_id")


def _accept_fields(loaded: list[LoadedSource]) -> dict[str, tuple[str, ...]]:
    """Per source, the fields its manifest's ``injection.accept_fields`` accepts unscanned
    (meta ``injection_accept``, read by engine/hydrate.py; load/verdicts.py leaves them out too)."""
    return {ls.manifest.source_id: tuple(sorted(ls.manifest.injection.accept_fields))
            for ls in loaded if ls.manifest.injection is not None}


def _write_meta(con, loaded: list[LoadedSource], total: int, store_digest: str, manifests_dir: Path | None) -> None:
    """meta: schema, digest, builder, object count and what the store was loaded from."""
    import duckdb

    from .parse import manifest_digest

    meta = {"schema_version": str(SCHEMA_VERSION), "store_digest": store_digest,
            "builder_version": BUILDER_VERSION, "encoding": "cl100k_base", "objects": str(total),
            # what the store was loaded from: api.stale_sources compares it with those manifests now
            "manifest_digests": canonical_bytes({ls.manifest.source_id: manifest_digest(ls.manifest)
                                                 for ls in loaded}).decode("utf-8")}
    accept = {k: list(v) for k, v in _accept_fields(loaded).items()}
    if accept:      # fields of authoritative sources the injection gate leaves unscanned (engine/gates.py)
        meta["injection_accept"] = canonical_bytes(accept).decode("utf-8")
    if manifests_dir is not None:
        meta["manifests_dir"] = str(Path(manifests_dir).resolve())
        from .. import paths

        try:        # inside the project: where it lies in the project, so a copied project checks its own
            meta["manifests_in_project"] = Path(manifests_dir).resolve().relative_to(
                paths.root().resolve()).as_posix()
        except ValueError:
            pass
    meta["duckdb_version"] = duckdb.__version__
    for k, v in meta.items():
        con.execute("INSERT INTO meta VALUES (?, ?)", [k, v])


# Full-text tables, per tenant, from the shadow text (terms separated by single spaces).
# Scores are Okapi BM25 over the tenant's own documents: N, avgdl and df never count another
# tenant's objects. Built in SQL: no Python per posting.
_FULLTEXT = [
    # terms of the documents this load derived (the reused ones' are in doc_rows by term id)
    """CREATE TEMP VIEW dt AS
       SELECT doc_id, unnest(terms) AS term, unnest(tfs) AS tf FROM doc_terms""",
    # per object still in the store (tombstoned ones are gone): tenant number, length, mask
    """INSERT INTO tenants SELECT (row_number() OVER (ORDER BY tenant_id))::INTEGER, tenant_id, count(*),
              avg(coalesce(l.dl, 0))
       FROM objects o LEFT JOIN doc_len l ON l.doc_id = o.doc_id GROUP BY tenant_id ORDER BY tenant_id""",
    """INSERT INTO support_bits SELECT evidence_type, (row_number() OVER (ORDER BY evidence_type) - 1)::INTEGER
       FROM (SELECT DISTINCT unnest(supports) AS evidence_type FROM objects) ORDER BY evidence_type""",
    """CREATE TEMP TABLE docmask AS
       SELECT o.doc_id, t.tenant_no, coalesce(l.dl, 0)::INTEGER AS dl, coalesce(m.mask, 0::UBIGINT) AS mask
       FROM objects o JOIN tenants t ON t.tenant_id = o.tenant_id LEFT JOIN doc_len l ON l.doc_id = o.doc_id
       LEFT JOIN (SELECT s.doc_id, bit_or(1::UBIGINT << least(b.bit, {maxbit})) AS mask
                  FROM (SELECT doc_id, unnest(supports) AS evidence_type FROM objects) s
                  JOIN support_bits b ON b.evidence_type = s.evidence_type GROUP BY s.doc_id) m
         ON m.doc_id = o.doc_id""",
    # document frequency per (tenant, term); one term id per term, in term order
    # (a reused document's terms counted by live term id first, then named: one join per term)
    """CREATE TEMP TABLE tdf AS
       SELECT tenant_no, term, sum(df)::BIGINT AS df FROM (
         SELECT m.tenant_no, t.term, count(*) AS df FROM dt t JOIN docmask m ON m.doc_id = t.doc_id
         GROUP BY m.tenant_no, t.term
         UNION ALL
         SELECT r.tenant_no, o.term, r.df FROM (
           SELECT m.tenant_no, r.old_termid, count(*) AS df FROM doc_rows r JOIN docmask m ON m.doc_id = r.doc_id
           GROUP BY m.tenant_no, r.old_termid) r JOIN old_terms o ON o.old_termid = r.old_termid)
       GROUP BY tenant_no, term""",
    """CREATE TEMP TABLE dict AS
       SELECT term, (row_number() OVER (ORDER BY term))::INTEGER AS termid FROM (SELECT DISTINCT term FROM tdf)""",
    """INSERT INTO term_stats SELECT f.tenant_no, f.term, d.termid, f.df
       FROM tdf f JOIN dict d ON d.term = f.term ORDER BY f.tenant_no, f.term""",
    # a query's few terms are found through this index (store/duckdb_store.py _BM25_TERMS)
    # instead of a scan of the tenant's whole vocabulary
    "CREATE INDEX term_stats_term ON term_stats(term)",
    # the live store's term ids -> this store's (a reused document's postings stay integers)
    """CREATE TEMP TABLE termmap AS
       SELECT o.old_termid, d.termid FROM old_terms o JOIN dict d ON d.term = o.term""",
    """INSERT INTO postings
       SELECT tenant_no, termid, doc_id, tf, dl, mask FROM (
         SELECT m.tenant_no, d.termid, t.doc_id, t.tf, m.dl, m.mask
         FROM dt t JOIN docmask m ON m.doc_id = t.doc_id JOIN dict d ON d.term = t.term
         UNION ALL
         SELECT m.tenant_no, x.termid, r.doc_id, r.tf, m.dl, m.mask
         FROM doc_rows r JOIN docmask m ON m.doc_id = r.doc_id JOIN termmap x ON x.old_termid = r.old_termid)
       ORDER BY tenant_no, termid, doc_id""",
    # the reused documents' rows are spent: their buffers go back to the pool (a 1M reload ran
    # out of memory in the term lists' aggregate while they were still held)
    "DROP TABLE doc_rows", "DROP TABLE termmap", "DROP TABLE old_terms", "DROP TABLE tdf",
    # the terms only a masked source's unmasked text has, per mask group (schema 0007): term ids
    # after every masked-text term's, the masked text's length and support bits
    """CREATE TEMP TABLE rdf AS
       SELECT m.tenant_no, g.grp, t.term, count(*) AS df
       FROM (SELECT doc_id, unnest(raw_terms) AS term FROM doc_terms UNION ALL SELECT doc_id, term FROM raw_rows) t
       JOIN docmask m ON m.doc_id = t.doc_id JOIN objects o ON o.doc_id = t.doc_id
       JOIN src_grp g ON g.source_id = o.source_id GROUP BY m.tenant_no, g.grp, t.term""",
    """INSERT INTO dict SELECT term, ((SELECT coalesce(max(termid), 0) FROM dict)
              + row_number() OVER (ORDER BY term))::INTEGER
       FROM (SELECT DISTINCT term FROM rdf WHERE term NOT IN (SELECT term FROM dict))""",
    """INSERT INTO raw_term_stats SELECT f.tenant_no, f.grp, f.term, d.termid, f.df
       FROM rdf f JOIN dict d ON d.term = f.term ORDER BY f.tenant_no, f.grp, f.term""",
    """INSERT INTO raw_postings
       SELECT m.tenant_no, g.grp, d.termid, t.doc_id, t.tf, m.dl, m.mask
       FROM (SELECT doc_id, unnest(raw_terms) AS term, unnest(raw_tfs) AS tf FROM doc_terms
             UNION ALL SELECT doc_id, term, tf FROM raw_rows) t
       JOIN docmask m ON m.doc_id = t.doc_id JOIN objects o ON o.doc_id = t.doc_id
       JOIN src_grp g ON g.source_id = o.source_id JOIN dict d ON d.term = t.term
       ORDER BY m.tenant_no, g.grp, d.termid, t.doc_id""",
    "DROP VIEW dt", "DROP TABLE rdf", "DROP TABLE dict", "DROP TABLE docmask",
    "DROP TABLE doc_terms", "DROP TABLE raw_rows", "DROP TABLE doc_len", "DROP TABLE src_grp",
]


def _mask_groups(con, loaded: list[LoadedSource]) -> None:
    """mask_groups (one row per distinct unless_scopes list of the sources' redaction policies;
    a policy nobody may lift has no group) and the temporary src_grp (source -> group)."""
    reds = {ls.manifest.source_id: redaction(ls.manifest) for ls in loaded if ls.manifest.enabled}
    per = {sid: tuple(sorted(set(r.unless_scopes))) for sid, r in reds.items() if r and r.unless_scopes}
    groups = {g: i for i, g in enumerate(sorted(set(per.values())), 1)}
    for g, i in groups.items():
        con.execute("INSERT INTO mask_groups VALUES (?, ?)", [i, list(g)])
    con.execute("CREATE TEMP TABLE src_grp AS SELECT unnest(from_json(?, '[\"VARCHAR\"]')) AS source_id, "
                "unnest(from_json(?, '[\"INTEGER\"]')) AS grp", [json_list(per), json_list(groups[g] for g in per.values())])


def _write_fulltext(con) -> None:
    from ..store import schema

    import time

    FULLTEXT_SECONDS.clear()
    for stmt in _FULLTEXT:
        if stmt == "DROP TABLE docmask":        # the term lists read the documents' lengths from it
            con.execute("COMMIT")       # the postings leave the transaction's memory first
            con.execute("BEGIN")
            t0 = time.perf_counter()
            write_term_lists(con, lengths="docmask")
            FULLTEXT_SECONDS.append(("term lists (0009)", round(time.perf_counter() - t0, 3)))
        t0 = time.perf_counter()
        con.execute(stmt.replace("{maxbit}", str(schema.MASK_BITS)))
        FULLTEXT_SECONDS.append((" ".join(stmt.split()[:4]), round(time.perf_counter() - t0, 3)))


# What the DuckDB store's BM25 and graph steps read (store/schema.py 0009), derived from
# objects, tenants, term_stats and postings: the access classes, each tenant's documents, one
# packed postings list per (tenant, term) and the objects by subject. The lists are not
# ordered: a document occurs once per list, so its score sums its terms in the query's order
# whatever the order inside a list.
_TERM_LISTS = [
    "DELETE FROM doc_classes", "DELETE FROM tenant_docs", "DELETE FROM term_lists", "DELETE FROM subject_docs",
    """INSERT INTO doc_classes
       SELECT (row_number() OVER (ORDER BY supports, source_id, required_scopes, allowed_purposes) - 1)::INTEGER,
              supports, source_id, required_scopes, allowed_purposes
       FROM (SELECT DISTINCT supports, source_id, required_scopes, allowed_purposes FROM objects)""",
    """INSERT INTO tenant_docs
       SELECT t.tenant_no, o.doc_id, coalesce(l.dl, 0)::INTEGER, c.cls, o.valid_from_us, o.valid_to_us
       FROM objects o JOIN tenants t ON t.tenant_id = o.tenant_id
       LEFT JOIN (SELECT DISTINCT doc_id, dl FROM {lengths}) l ON l.doc_id = o.doc_id
       JOIN doc_classes c ON c.supports IS NOT DISTINCT FROM o.supports AND c.source_id IS NOT DISTINCT FROM o.source_id
        AND c.required_scopes IS NOT DISTINCT FROM o.required_scopes
        AND c.allowed_purposes IS NOT DISTINCT FROM o.allowed_purposes
       ORDER BY t.tenant_no, o.doc_id""",
    """INSERT INTO term_lists
       SELECT s.tenant_no::VARCHAR || ' ' || s.term, s.tenant_no, s.df, p.postings
       FROM (SELECT tenant_no, termid, list((doc_id::BIGINT << 32) | tf::BIGINT) AS postings
             FROM postings GROUP BY tenant_no, termid) p
       JOIN term_stats s ON s.tenant_no = p.tenant_no AND s.termid = p.termid
       ORDER BY s.tenant_no, s.term""",
    "CREATE INDEX IF NOT EXISTS term_lists_tkey ON term_lists(tkey)",
    """INSERT INTO subject_docs
       SELECT o.subject_id, o.tenant_id, o.doc_id, d.cls, o.valid_from_us, o.valid_to_us
       FROM objects o JOIN tenant_docs d ON d.doc_id = o.doc_id WHERE o.subject_id IS NOT NULL
       ORDER BY o.subject_id, o.doc_id""",
    "CREATE INDEX IF NOT EXISTS subject_docs_subject ON subject_docs(subject_id)",
]


def write_term_lists(con, *, lengths: str = "postings") -> None:
    """(Re)write the 0009 tables from the store's objects and full-text tables; ``lengths``: a
    table or view with (doc_id, dl) for the documents that hold a term (the load passes its
    temporary docmask; a document with no term has length 0)."""
    for stmt in _TERM_LISTS:
        con.execute(stmt.replace("{lengths}", lengths))


FULLTEXT_SECONDS: list[tuple[str, float]] = []    # the last load's statements and their times (benchmarks)


def _delta(delta: dict[str, tuple[int, int, int]] | None, sid: str, n_obj: int) -> dict[str, int | None]:
    """A source's added / changed / removed objects; with no comparable previous store, all added."""
    if delta is None:
        return {"added": n_obj, "changed": 0, "removed": 0}
    a, c, r = delta.get(sid, (0, 0, 0))
    return {"added": a, "changed": c, "removed": r}


def _write_sources(con, loaded: list[LoadedSource], per: dict[str, dict[str, int]],
                   reused: set[str], delta: dict[str, tuple[int, int, int]] | None = None,
                   reread: dict[str, tuple[int, int]] | None = None) -> list[SourceSummary]:
    from ..util.timeutil import parse_duration

    counted = {r[0]: r[1:] for r in con.execute(
        "SELECT source_id, count(*), count(section), max(observed_us) FROM objects GROUP BY source_id").fetchall()}
    out: list[SourceSummary] = []
    for ls in loaded:
        m = ls.manifest
        sid = m.source_id
        n_obj, n_sec, newest = counted.get(sid, (0, 0, None))
        c = per[sid]
        max_age = int(parse_duration(m.freshness.max_age).total_seconds()) if m.freshness else None
        con.execute("INSERT INTO sources VALUES (" + ", ".join(["?"] * 28) + ")", [
            sid, m.tenant_id, m.source_type, m.owner_team, m.classification.value, m.trust_level.value,
            sorted(m.required_scopes), sorted(m.allowed_purposes), m.refresh_sla, max_age,
            m.valid_time.from_field, m.valid_time.to_field, m.deletion_mode.value, m.parser,
            m.parser_version, m.schema_version, m.enabled, m.snapshot,
            _policy_text(m),
            ls.manifest_file, ls.digest, n_obj, n_sec, c["entities"], c["relations"], c["tombstones"],
            c["dropped"], newest])
        out.append(SourceSummary(source_id=sid, enabled=m.enabled, objects=n_obj, sections=n_sec,
                                 entities=c["entities"], relations=c["relations"], tombstones=c["tombstones"],
                                 dropped=c["dropped"], digest=ls.digest, reused=sid in reused,
                                 **_delta(delta, sid, n_obj),
                                 units={"read": reread[sid][0], "of": reread[sid][1], "unit": ls.parser.unit,
                                        **(ls.sync_report or {})} if reread and sid in reread else None))
    return out
