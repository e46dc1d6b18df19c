"""Replay: rebuild a pack from its recorded request and say whether anything drifted.

The pack is verified first (:func:`load_pack`); a tampered pack stops everything. The
rebuild uses the case file and playbook as they are now and the store generation the pack was
built on while it is kept (``--against built``, the default; else, or with ``--against
current``, the current store or the one named), so a drift is itemised against all three. Evidence that was cited but whose object
has since been deleted is reported as *purged*, by id, source and deletion time only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import PackError
from .compare import PackDiff, compare
from .packfile import LoadedPack, load_pack


@dataclass
class Purged:
    object_id: str
    source_id: str | None
    evidence_id: str | None
    how: str                    # tombstoned | gone
    deleted_at: str | None = None
    reason: str | None = None

    def sentence(self) -> str:
        src = f" (source {self.source_id})" if self.source_id else ""
        if self.how == "tombstoned":
            return f"{self.object_id}{src} was cited as {self.evidence_id} and has been tombstoned on {self.deleted_at}"
        return f"{self.object_id}{src} was cited as {self.evidence_id} and is no longer in the store"


@dataclass
class ReplayResult:
    pack: LoadedPack
    rebuilt: dict[str, Any]
    answer: dict[str, Any]
    trace: list[dict[str, Any]]
    diff: PackDiff
    byte_identical: bool
    db: str
    purged: list[Purged] = field(default_factory=list)
    case: Any = None            # the case file the rebuild used (models.case.CaseFile)
    trace_identical: bool | None = None     # the linked trace beside the pack vs the rebuilt one; None: no trace
    answer_identical: bool | None = None    # answer.json of the run vs the rebuilt answer; None: no answer.json
    against: str = "built"      # "built": the pack's own generation when kept; "current": the live store
    generation: dict[str, Any] = field(default_factory=dict)   # recorded, used, current, kept

    @property
    def erased(self) -> list[dict[str, Any]]:
        """What `ctx erase --apply` removed from the pack: object, evidence id, when, by whom, why."""
        er = self.pack.data.get("erasure")
        return list(er.get("erased") or []) if isinstance(er, dict) else []

    @property
    def identical(self) -> bool:
        return self.diff.same and self.answer_identical is not False

    @property
    def status(self) -> str:
        return "identical" if self.identical else "drifted"

    def to_json(self) -> dict[str, Any]:
        d = self.diff
        purged = {p.object_id for p in self.purged} | {e["object_id"] for e in self.erased}
        return {
            "status": self.status,
            "pack": self.pack.display,
            "pack_id": self.pack.pack_id,
            "content_hash": self.pack.content_hash,
            "rebuilt_pack_id": self.rebuilt["pack_id"],
            "rebuilt_content_hash": self.rebuilt["content_hash"],
            "byte_identical": self.byte_identical,
            "trace_identical": self.trace_identical,
            "answer_identical": self.answer_identical,
            "db": self.db,
            "against": self.against,
            "generation": self.generation,
            "store": {"recorded": self.pack.data["store"].get("digest"), "current": self.rebuilt["store"].get("digest"),
                      "sources_changed": [asdict(s) for s in d.sources]},
            "request": [asdict(c) for c in d.request],
            "versions": [asdict(c) for c in d.versions],
            "evidence_added": [c.to_json() for c in d.evidence_only_b],
            "evidence_removed": [c.to_json() for c in d.evidence_only_a if c.key not in purged],
            "evidence_changed": [c.to_json() for c in d.evidence_changed],
            "purged": [asdict(p) for p in self.purged],
            "erased": self.erased,
            "omissions_changed": [c.to_json() for c in d.omissions_moved],
            "omissions_added": [c.to_json() for c in d.omissions_only_b],
            "omissions_removed": [c.to_json() for c in d.omissions_only_a],
            "answer": [asdict(c) for c in d.answer],
            "claims": [asdict(c) for c in d.claims],
            "outcome": [asdict(c) for c in d.outcome],
            "other_sections": list(d.other_sections),
        }


def rebuild_options(lp: LoadedPack, db: Path | None = None):
    """The :class:`~ctxcli.request_policy.InvestigateOptions` that reproduce the pack's recorded request."""
    from ..request_policy import InvestigateOptions
    from ..util.timeutil import parse_ts

    req = lp.request
    try:
        as_of = parse_ts(req["as_of"], what="request.as_of")
        known_at = parse_ts(req["known_at"], what="request.known_at") if req.get("known_at") else None
    except ValueError as e:
        raise PackError(f"not a pack: {e}", file=lp.display) from None
    subj = req["subject"]
    scopes = subj.get("scopes")
    if not isinstance(subj.get("id"), str) or not isinstance(scopes, list):
        raise PackError("not a pack: request.subject needs id and scopes", file=lp.display, field="request.subject")
    strategy = req.get("strategy") or "dynamic"
    # the same limits as the command line's flags: a pack cannot ask for more than a user could
    from ..models.request import request_problem

    bad = request_problem(subject=subj["id"], scopes=scopes, budget=req["budget"], max_rounds=req["max_rounds"],
                          strategy=strategy)
    if bad is not None:
        where = {"subject": "request.subject.id", "scopes": "request.subject.scopes"}.get(bad[0], f"request.{bad[0]}")
        raise PackError(f"refused: {bad[1]} (the command line refuses it too)", file=lp.display, field=where)

    from ..models.manifest import CLEARANCE_LEVELS, DEFAULT_CLEARANCE

    deadline = req.get("deadline_seconds")
    if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, (int, float))
                                 or not 0 <= deadline <= 86_400):
        raise PackError(f"refused: deadline_seconds {deadline!r} is not a number of seconds from 0 to 86400 (the "
                        "command line refuses it too)", file=lp.display, field="request.deadline_seconds")
    clearance = subj.get("clearance", DEFAULT_CLEARANCE)   # packs before clearances: the default
    if clearance not in CLEARANCE_LEVELS:
        raise PackError(f"refused: {clearance!r} is not one of {', '.join(CLEARANCE_LEVELS)} (the command line "
                        f"refuses it too)", file=lp.display, field="request.subject.clearance")
    return InvestigateOptions(case=req["case_id"], as_of=as_of, known_at=known_at, subject_id=subj["id"],
                                  scopes=[str(s) for s in scopes], clearance=clearance, purpose=req["purpose"],
                                  budget=req["budget"], max_rounds=req["max_rounds"], variant=req.get("variant"),
                                  strategy=strategy, db=db, state_version=lp.data.get("state_version"),
                                  params=dict(req["params"]) if isinstance(req.get("params"), dict) else None,
                                  deadline_seconds=req.get("deadline_seconds"))


def read_case_and_playbook(lp: LoadedPack):
    """The pack's case and playbook as they are now; a one-line PackError if either is gone."""
    from .. import paths
    from ..errors import UnknownCaseError, UsageError
    from ..project import read_case

    case_id = lp.request["case_id"]
    pb_id = lp.data["playbook"].get("playbook_id")
    if lp.request.get("adhoc") is True:
        return _adhoc_case_and_playbook(lp, pb_id)
    try:
        case, _ = read_case(case_id)
    except UnknownCaseError:
        raise PackError(f"the pack's case {case_id!r} no longer exists "
                        f"(no {_rel(paths.cases_dir() / (case_id + '.yaml'))})", file=lp.display) from None
    except UsageError as e:
        raise PackError(f"not a pack: request.case_id: {e.detail}", file=lp.display) from None
    pb, pb_hash = _pack_playbook(lp, pb_id)
    return case, pb, pb_hash


def _pack_playbook(lp: LoadedPack, pb_id):
    """The playbook a pack names, with its hash; a missing or unreadable one is a PackError."""
    from .. import paths
    from ..errors import InputError, UsageError
    from ..project import read_playbook

    if not isinstance(pb_id, str):
        raise PackError("not a pack: playbook.playbook_id is missing", file=lp.display)
    try:
        pb, pb_hash = read_playbook(pb_id)
    except UsageError as e:
        raise PackError(f"not a pack: playbook.playbook_id: {e.detail}", file=lp.display) from None
    except InputError:
        path = paths.playbooks_dir() / f"{pb_id}.yaml"
        if not path.is_file():
            raise PackError(f"the pack's playbook {pb_id!r} no longer exists (no {_rel(path)})",
                            file=lp.display) from None
        raise
    return pb, pb_hash


def _adhoc_case_and_playbook(lp: LoadedPack, pb_id):
    """An ad-hoc run has no case file: its case is rebuilt from the request the pack records
    (the run folder's case.json holds the same case for people to read)."""
    from pydantic import ValidationError

    from ..request_policy import case_from_request

    pb, pb_hash = _pack_playbook(lp, pb_id)
    try:
        case = case_from_request(lp.request, pb_id)
    except ValidationError as e:
        loc = ".".join(str(x) for x in e.errors()[0].get("loc", ()))
        raise PackError(f"not a pack: the ad-hoc request does not make a case ({loc})", file=lp.display,
                        field=f"request.{loc}") from None
    return case, pb, pb_hash


def _rel(p: Path) -> str:
    from .. import paths

    try:
        return p.relative_to(paths.root()).as_posix()
    except ValueError:
        return str(p)


AGAINST = ("built", "current")


def replay(pack_path: Path | str, db: Path | None = None, *, against: str = "built") -> ReplayResult:
    """Verify the pack, rebuild it from its recorded request, and compare."""
    lp = load_pack(pack_path)
    return replay_loaded(lp, db, against=against)


def _open_for(db_path, lp: LoadedPack, against: str, req, key):
    """The store to rebuild on, and what the result says about generations. With ``built``: the
    generation the pack names while it is kept and its view of the store (``store.digest``) is
    the pack's (a generation of the same number in another store is not); else the current one,
    ``kept`` false. When that is not the current generation, ``current`` also says whether the
    current store's view differs from the pack's (``sources_changed``) without rebuilding."""
    from ..errors import UsageError
    from ..pipeline import store_info
    from ..store import is_postgres, open_store

    if against not in AGAINST:
        raise UsageError(f"--against {against!r}: must be one of {', '.join(AGAINST)}")
    ws = lp.data.get("store") or {}
    recorded = ws.get("generation")
    recorded = recorded if isinstance(recorded, int) and not isinstance(recorded, bool) else None
    info: dict[str, Any] = {"recorded": recorded}

    def view(c) -> dict[str, Any]:
        with c.errors():
            return store_info(c, key, tenant=req.tenant_id, clearance=req.clearance)

    con = None
    if against == "built" and recorded is not None and not is_postgres(db_path):
        con = open_store(db_path, recorded)
        if con is not None and view(con).get("digest") != ws.get("digest"):
            con.close()
            con = None
        info["kept"] = con is not None
    if con is None:
        con = open_store(db_path)
        info["current"] = getattr(con, "generation", None)
    info["used"] = getattr(con, "generation", None)
    if "current" not in info:
        cur = open_store(db_path)
        try:
            info["current"] = getattr(cur, "generation", None)
            if info["current"] != info["used"]:
                now = view(cur)
                srca, srcb = ws.get("sources") or {}, now.get("sources") or {}
                info["current_differs"] = now.get("digest") != ws.get("digest")
                info["sources_changed"] = sorted(s for s in set(srca) | set(srcb) if srca.get(s) != srcb.get(s))
        finally:
            cur.close()
    return con, info


def replay_loaded(lp: LoadedPack, db: Path | None = None, *, against: str = "built") -> ReplayResult:
    from .. import paths
    from ..pipeline import investigate as run_pipeline, store_info
    from ..request_policy import make_request
    from ..project import require_current_manifests
    from ..store.secret import store_key
    from ..util.canon import pretty_bytes

    from .packfile import read_linked_trace

    recorded_trace = read_linked_trace(lp)      # a trace of another pack stops here (exit 2)
    # the run's own answer.json (listed in run.json and verified); a loose pack has none
    recorded_answer = lp.run_file("answer.json") if lp.run is not None else None
    case, pb, pb_hash = read_case_and_playbook(lp)
    opts = rebuild_options(lp, db)
    req = make_request(case, pb, opts, adhoc=lp.request.get("adhoc") is True)
    import dataclasses

    # the caller's inputs are the pack's, as gated then (below), never the case file's `inputs` again
    req = dataclasses.replace(req, tool_results=[], working_state=None, memory_records=None)
    db_path = paths.db_path(db)
    key = store_key(db_path) if not isinstance(db_path, Path) or db_path.is_file() else None
    con, gen_info = _open_for(db_path, lp, against, req, key)
    try:
        key = store_key(db_path)
        with con.errors():
            require_current_manifests(con)     # a rebuild with permissions older than the manifests: exit 3
            from ..agents.memory import recorded as recorded_memory
            from ..agents.tool_results import recorded

            res = run_pipeline(con, pb, pb_hash, req, store_info(con, key, tenant=req.tenant_id,
                                                                 clearance=req.clearance), key=key,
                               tools=recorded(lp.data),     # the caller's tool results, as gated then
                               memory=recorded_memory(lp.data))   # and its working state and memories
            diff = compare(lp.data, res.pack, key=key)
            purged = _purged(con, lp, diff)
    finally:
        con.close()
    return ReplayResult(pack=lp, rebuilt=res.pack, answer=res.answer, trace=res.trace, diff=diff,
                        byte_identical=pretty_bytes(_as_recorded_backend(res.pack, lp.data)) == lp.raw,
                        db=con.address, purged=purged, case=case,
                        trace_identical=_same_trace(recorded_trace, res.trace),
                        answer_identical=_same_answer(recorded_answer, res.answer), against=against,
                        generation=gen_info)


def _same_answer(recorded: bytes | None, rebuilt: dict[str, Any]) -> bool | None:
    """answer.json of the run (its content, whatever its formatting) against the rebuilt answer:
    an answer.json edited beside an unchanged pack is drift, not "identical"."""
    if recorded is None:
        return None
    import orjson

    try:
        return orjson.loads(recorded) == orjson.loads(orjson.dumps(rebuilt))
    except orjson.JSONDecodeError:
        return False


def _as_recorded_backend(rebuilt: dict[str, Any], recorded: dict[str, Any]) -> dict[str, Any]:
    """The rebuilt pack with the recorded pack's ``store.backend`` and ``store.generation``: a
    pack built on one backend (or generation) and rebuilt on another holding the same data is
    not drift (both are outside the pack's content hash)."""
    from ..util.packid import STORE_WHERE

    rs, ws = rebuilt.get("store"), recorded.get("store")
    if not isinstance(rs, dict) or not isinstance(ws, dict) or all(rs.get(k) == ws.get(k) for k in STORE_WHERE):
        return rebuilt
    store = {k: v for k, v in rs.items() if k not in STORE_WHERE}
    for k in STORE_WHERE:
        if ws.get(k) is not None:
            store[k] = ws[k]
    return {**rebuilt, "store": store}


def _same_trace(recorded: list[dict[str, Any]] | None, rebuilt: list[dict[str, Any]]) -> bool | None:
    """The recorded build events (up to ``pack_sealed``; model events appended by ``ctx ask``
    follow it) against the rebuilt trace."""
    if recorded is None:
        return None
    n = next((i + 1 for i, e in enumerate(recorded) if e.get("event") == "pack_sealed"), len(recorded))
    return recorded[:n] == rebuilt


def _purged(con, lp: LoadedPack, diff: PackDiff) -> list[Purged]:
    """Cited evidence whose object has been deleted from the store since."""
    from datetime import timezone

    from ..util.timeutil import us_to_dt
    from ..util.timeutil import parse_ts

    out: list[Purged] = []
    if not diff.evidence_only_a:
        return out
    tenant = lp.tenant
    try:
        tz = parse_ts(lp.request["as_of"]).tzinfo
    except ValueError:
        tz = timezone.utc
    req = lp.request
    scopes = set((req.get("subject") or {}).get("scopes") or [])
    for ch in diff.evidence_only_a:
        oid = ch.object_id or ch.key
        row = con.tombstone(tenant, oid)
        if row is not None and not _may_read_source(con, row[0], scopes, req.get("purpose")):
            row = None      # a tombstone in a source the subject may not read: no time, source or reason
        if row is not None:
            dt = us_to_dt(row[1], tz)
            out.append(Purged(oid, row[0] or ch.source_id, ch.a.evidence_id, "tombstoned",
                              dt.isoformat() if dt else None, row[2]))
            continue
        if not con.object_exists(tenant, oid):
            out.append(Purged(oid, ch.source_id, ch.a.evidence_id, "gone"))
    return out


def _may_read_source(con, source_id: str, scopes: set[str], purpose: str | None) -> bool:
    src = con.source_policy(source_id)
    return src is not None and not (set(src[0] or []) - scopes) and purpose in (src[1] or [])
