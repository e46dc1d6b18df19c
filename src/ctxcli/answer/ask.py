"""Asking a model over a pack: messages, exchange, validation, records.

``ask_over_pack`` is the whole loop for one pack: render the model-visible messages (``ctx
render --format messages``, unchanged, then one answer-format message), call the endpoint,
parse the reply, validate it against the pack, and return the two records a run folder gets
(``model.json``, ``model_answer.json``) and the trace events ``model_called`` and
``model_answer_validated``. Nothing here prints or exits.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlsplit

from ..util.canon import canonical_bytes, obj_hash, pretty_bytes
from . import schema as S
from .model import ModelConfig, chat, parse_content
from .validate import validate

MODEL_SCHEMA = "ctx.model/1"
POLICY = ("rejected when any violation is found (a verdict or action that differs from the deterministic one "
          "is a violation unless disagreement was accepted with --accept-disagreement); accepted_with_warnings "
          "when only warnings; accepted otherwise. A rejected model answer is never used: answer.json stays "
          "the answer.")


@dataclass
class AskOutcome:
    model_record: dict[str, Any]
    model_answer: dict[str, Any]
    events: list[dict[str, Any]]

    @property
    def status(self) -> str:
        return self.model_answer["status"]


def messages_for(pack: dict[str, Any], action_vocab: list[str]) -> list[dict[str, str]]:
    from ..engine.render import render_messages

    return render_messages(pack) + [{"role": "user", "content": S.format_message(action_vocab)}]


def rejected_texts(pack: dict[str, Any], db: Path | None) -> dict[str, str] | None:
    """Stored text of the pack's omitted, not withheld, objects whose content hash still matches
    the pack's record (read-only; tenant-filtered). None when no store is at hand."""
    from .. import paths

    want = {o["object_id"]: o.get("content_hash") for o in pack["omissions"]
            if not o.get("withheld") and o.get("object_id") and o["gate"] != "duplicate"}
    p = paths.db_path(db)
    present = isinstance(p, str) or p.is_file()     # a postgresql:// store is always "at hand"
    if not want or not present:
        return None if not present else {}
    from ..store import open_store

    con = open_store(p)
    try:
        rows = con.object_texts(pack["request"]["tenant_id"], sorted(want))
    finally:
        con.close()
    return {oid: text or "" for oid, text, h in rows if want.get(oid) == h}


def _scan():
    from functools import partial

    from ..injection import detect_injection

    # patterns only: the learned layer is trained on retrieved text, not on model answers
    return partial(detect_injection, use_learned=False)


def _rules(pack: dict[str, Any]) -> dict[str, str] | None:
    """The pack's playbook claims' conditions (claim id -> ``when``), for the claim checker; None
    when the playbook cannot be read as the pack recorded it (the rule check is then skipped)."""
    from ..errors import CtxError

    try:
        pb = playbook_for(pack, str((pack.get("request") or {}).get("case_id") or "pack"))
    except (CtxError, OSError, KeyError, TypeError, AttributeError):
        return None
    return {c.id: c.when for c in pb.claims if c.when}


def answer_record(pack: dict[str, Any], parsed: Any, method: str | None, error: str | None,
                  action_vocab: list[str], texts: dict[str, str] | None,
                  messages: list[dict[str, str]], *, accept_disagreement: bool = False) -> dict[str, Any]:
    """model_answer.json: the parsed answer and its validation."""
    shown = "\n".join(m["content"] for m in messages)
    if error is not None:
        val = {"status": "rejected", "violations": [{"code": "unparseable", "message": error}], "warnings": [],
               "claims": [], "counts": {"claims": 0, "claims_ok": 0, "citations": 0, "citations_supported": 0,
                                        "violations": 1, "warnings": 0}}
    else:
        val = validate(parsed, pack, action_vocab, rejected_texts=texts, shown_text=shown, scan=_scan(),
                       accept_disagreement=accept_disagreement, rules=_rules(pack))
    det = pack.get("answer") or {}
    return {
        "schema_version": S.MODEL_ANSWER_SCHEMA,
        "pack_id": pack["pack_id"], "content_hash": pack["content_hash"],
        "case_id": pack["request"]["case_id"], "variant": pack["request"].get("variant"),
        "status": val["status"],
        "parse": {"ok": error is None, "method": method, "error": error},
        "answer": parsed if error is None else None,
        "validation": {k: val[k] for k in ("violations", "warnings", "claims", "counts")},
        "rejected_text_check": "stored text and titles" if texts is not None else "titles only (no store)",
        "deterministic": {"verdict": det.get("verdict"), "recommended_action": det.get("recommended_action")},
        "used": "answer.json" if val["status"] == "rejected" else "model_answer.json",
        "accept_disagreement": accept_disagreement,
        "policy": POLICY,
    }


def ask_over_pack(pack: dict[str, Any], action_vocab: list[str], cfg: ModelConfig, *,
                  db: Path | None = None, sleep: Callable[[float], None] | None = None,
                  texts: dict[str, str] | None | bool = True, accept_disagreement: bool = False) -> AskOutcome:
    messages = messages_for(pack, action_vocab)
    ex = chat(cfg, messages, S.json_schema(action_vocab), sleep=sleep)
    parsed, method, error = parse_content(ex.content)
    if texts is True:
        texts = rejected_texts(pack, db)
    ma = answer_record(pack, parsed, method, error, action_vocab, texts if isinstance(texts, dict) else None,
                       messages, accept_disagreement=accept_disagreement)
    u = urlsplit(cfg.endpoint)
    record = {
        "schema_version": MODEL_SCHEMA,
        "pack_id": pack["pack_id"], "content_hash": pack["content_hash"],
        "endpoint": cfg.host, "path": u.path or "/", "url_path": urlsplit(cfg.url).path,
        "model": cfg.model, "parameters": cfg.parameters(),
        "request": {"messages_hash": obj_hash(messages), "messages": len(messages),
                    "response_format_used": ex.response_format_used},
        "response": {"status": ex.status_code, "body": ex.body, "content": ex.content},
        "usage": ex.usage, "latency_ms": ex.latency_ms, "attempts": ex.attempts,
    }
    record = _scrubbed(record, cfg.api_key)
    ma = _scrubbed(ma, cfg.api_key)
    events = [
        {"event": "model_called", "endpoint": cfg.host, "model": cfg.model,
         "messages_hash": record["request"]["messages_hash"], "attempts": len(ex.attempts),
         "status": ex.status_code, "latency_ms": ex.latency_ms, "usage": ex.usage,
         "response_format": ex.response_format_used},
        validated_event(ma),
    ]
    events = _scrubbed(events, cfg.api_key)
    return AskOutcome(model_record=record, model_answer=ma, events=events)


def validated_event(ma: dict[str, Any]) -> dict[str, Any]:
    v = ma["validation"]
    return {"event": "model_answer_validated", "status": ma["status"],
            "violations": [x["code"] for x in v["violations"]], "warnings": [x["code"] for x in v["warnings"]],
            "claims": v["counts"]["claims"], "claims_ok": v["counts"]["claims_ok"]}


def _scrubbed(obj: Any, key: str | None) -> Any:
    """Last guard: whatever a server echoed (the key, part of it, its base64 or hex), no form of
    the key reaches a record: every string, keys included, is scrubbed."""
    if not key:
        return obj
    from .model import scrub

    def walk(x: Any) -> Any:
        if isinstance(x, str):
            return scrub(x, key)
        if isinstance(x, dict):
            return {walk(k): walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return walk(obj)


def trace_with(trace_raw: bytes, events: list[dict[str, Any]]) -> bytes:
    """The trace with the model events appended (earlier model events replaced), seq continued."""
    import orjson

    lines = [ln for ln in trace_raw.splitlines() if ln.strip()]
    kept = []
    seq = 0
    link: dict[str, Any] = {}   # the run and pack id the build events carry (engine.trace)
    for ln in lines:
        try:
            e = orjson.loads(ln)
        except orjson.JSONDecodeError:
            kept.append(ln)
            continue
        if isinstance(e, dict) and e.get("event") in ("model_called", "model_answer_validated"):
            continue
        kept.append(ln)
        if isinstance(e, dict) and isinstance(e.get("seq"), int):
            seq = max(seq, e["seq"])
        if isinstance(e, dict) and not link:
            link = {k: e[k] for k in ("run", "pack_id") if k in e}
    out = [ln + b"\n" for ln in kept]
    for e in events:
        seq += 1
        out.append(canonical_bytes({**e, **link, "seq": seq}) + b"\n")
    return b"".join(out)


def record_files(outcome: AskOutcome) -> dict[str, bytes]:
    return {"model.json": pretty_bytes(outcome.model_record), "model_answer.json": pretty_bytes(outcome.model_answer)}


# ---------------------------------------------------------------------------------- replay
MAX_RECORD_BYTES = 64 * 1024 * 1024


def _read_record(raw: bytes | None, path: Path, missing_ok: bool = False) -> dict[str, Any] | None:
    """A JSON object ctx wrote beside a pack, as ``run_file`` gave it (only a file run.json lists
    and verifies), parsed bounded and strict."""
    from ..errors import PackError
    from .model import loads_bounded

    if raw is None:
        if missing_ok:
            return None
        raise PackError("cannot read the recorded exchange: no such file", file=str(path))
    if len(raw) > MAX_RECORD_BYTES:
        raise PackError(f"cannot read the recorded exchange: larger than {MAX_RECORD_BYTES} bytes", file=str(path))
    obj, why = loads_bounded(raw)
    if why is not None:
        raise PackError(f"cannot read the recorded exchange: {why}", file=str(path))
    if not isinstance(obj, dict):
        raise PackError("not a model record: not a JSON object", file=str(path))
    return obj


def read_model_record(run_dir: Path, run_file: Callable[[str], bytes | None]) -> dict[str, Any]:
    """model.json beside a pack (through ``run_file``: only a file run.json lists), with the fields
    replay reads of the right types; one line (exit 2) naming the file otherwise."""
    from ..errors import PackError

    p = run_dir / "model.json"
    rec = _read_record(run_file("model.json"), p)
    assert rec is not None
    if rec.get("schema_version") != MODEL_SCHEMA:
        raise PackError(f"not a model record (schema {MODEL_SCHEMA})", file=str(p))
    req, resp = rec.get("request"), rec.get("response")
    if not isinstance(req, dict) or not isinstance(resp, dict):
        raise PackError("not a model record: request and response must be objects", file=str(p))
    if not (resp.get("content") is None or isinstance(resp.get("content"), str)):
        raise PackError("not a model record: response.content must be a string or null", file=str(p))
    for k in ("model", "content_hash"):
        if rec.get(k) is not None and not isinstance(rec.get(k), str):
            raise PackError(f"not a model record: {k} must be a string", file=str(p))
    return rec


def revalidate(run_dir: Path, pack: dict[str, Any], action_vocab: list[str], db: Path | None = None, *,
               run_file: Callable[[str], bytes | None]) -> dict[str, Any]:
    """Re-validate the recorded exchange beside a pack, offline. Compares with the recorded
    model_answer.json: same status and same violation codes, or the difference. ``run_file``
    reads a file of the run folder (``LoadedPack.run_file``: only files run.json lists)."""
    rec = read_model_record(run_dir, run_file)
    prev = _read_record(run_file("model_answer.json"), run_dir / "model_answer.json", missing_ok=True)
    if prev is not None and not (prev.get("schema_version") == S.MODEL_ANSWER_SCHEMA
                                 and isinstance(prev.get("status"), str)
                                 and isinstance(prev.get("validation"), dict)
                                 and all(isinstance(prev["validation"].get(k), list)
                                         for k in ("violations", "warnings"))
                                 and all(isinstance(v, dict) and isinstance(v.get("code"), str)
                                         for k in ("violations", "warnings") for v in prev["validation"][k])):
        from ..errors import PackError

        raise PackError(f"not a model answer record (schema {S.MODEL_ANSWER_SCHEMA}: a status, and a "
                        "validation with violations and warnings)", file=str(run_dir / "model_answer.json"))
    messages = messages_for(pack, action_vocab)
    same_request = obj_hash(messages) == rec["request"].get("messages_hash")
    same_pack = rec.get("content_hash") == pack["content_hash"]
    content = rec["response"].get("content")
    parsed, method, error = parse_content(content)
    accept = isinstance(prev, dict) and prev.get("accept_disagreement") is True    # as recorded
    ma = answer_record(pack, parsed, method, error, action_vocab, rejected_texts(pack, db), messages,
                       accept_disagreement=accept)
    now = _codes(ma)
    was = _codes(prev) if isinstance(prev, dict) and "validation" in prev else None
    return {"model": rec.get("model"), "endpoint": rec.get("endpoint"), "same_pack": same_pack,
            "same_request": same_request, "recorded_status": prev.get("status") if isinstance(prev, dict) else None,
            "status": ma["status"], "recorded": was, "revalidated": now,
            "identical": bool(same_pack and same_request and was == now),
            "revalidated_as_recorded": bool(same_pack and same_request and was == now),
            "accept_disagreement": accept, "model_answer": ma}


def _codes(ma: dict[str, Any]) -> dict[str, Any]:
    v = ma["validation"]
    return {"status": ma["status"], "violations": sorted(x["code"] for x in v["violations"]),
            "warnings": sorted(x["code"] for x in v["warnings"])}


def diff_answers(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """Differences between two parsed model answers, one line each (verdict, action, claims)."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return [] if a == b else ["one of the answers could not be parsed"]
    out = []
    for k in ("verdict", "recommended_action"):
        if a.get(k) != b.get(k):
            out.append(f"{k}: {a.get(k)!r} → {b.get(k)!r}")
    ca, cb = a.get("claims") or [], b.get("claims") or []
    for i in range(max(len(ca), len(cb))):
        x = ca[i] if i < len(ca) else None
        y = cb[i] if i < len(cb) else None
        if x == y:
            continue
        if x is None:
            out.append(f"claim {i} added: {y.get('text') if isinstance(y, dict) else y}")
        elif y is None:
            out.append(f"claim {i} removed: {x.get('text') if isinstance(x, dict) else x}")
        else:
            fields = [k for k in ("text", "status", "evidence") if (x or {}).get(k) != (y or {}).get(k)]
            out.append(f"claim {i} changed: {', '.join(fields) or 'other fields'}")
    return out


# ---------------------------------------------------------------------------------- eval
def eval_metrics(pack: dict[str, Any], det_answer: dict[str, Any], outcome: AskOutcome) -> dict[str, Any]:
    """Answer-layer metrics of one model answer: citation precision, claim faithfulness, verdict,
    action and fact agreement with the deterministic answer, latency and tokens."""
    from .validate import haystack, norm, values_in

    ma = outcome.model_answer
    c = ma["validation"]["counts"]
    ans = ma["answer"] if isinstance(ma["answer"], dict) else {}
    det_vals = set()
    for cl in det_answer.get("claims", []):
        for v in (cl.get("facts") or {}).values():
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                det_vals.add(str(int(v)) if isinstance(v, float) and v.is_integer() else str(v))
    text = " ".join(str(x.get("text", "")) for x in ans.get("claims", []) if isinstance(x, dict))
    hay = haystack([text])
    mentioned = [v for v in sorted(det_vals)
                 if (all(norm(t) in hay for t in values_in(v)) if values_in(v) else v.lower() in text.lower())]
    usage = outcome.model_record.get("usage") or {}
    det_action = (det_answer.get("recommended_action") or {}).get("action")
    return {
        "status": ma["status"],
        "violations": sorted({x["code"] for x in ma["validation"]["violations"]}),
        "claims": c["claims"], "claims_accepted": c["claims_ok"],
        "claim_faithfulness": round(c["claims_ok"] / c["claims"], 4) if c["claims"] else None,
        "citations": c["citations"], "citations_supported": c["citations_supported"],
        "citation_precision": round(c["citations_supported"] / c["citations"], 4) if c["citations"] else None,
        "verdict_agrees": ans.get("verdict") == det_answer.get("verdict") if ans else False,
        "action_agrees": ans.get("recommended_action") == det_action if ans else False,
        "facts": len(det_vals), "facts_stated": len(mentioned),
        "fact_agreement": round(len(mentioned) / len(det_vals), 4) if det_vals else None,
        "playbook_claims": c.get("playbook_claims", 0), "playbook_claims_covered": c.get("playbook_claims_covered", 0),
        "claim_coverage": (round(c["playbook_claims_covered"] / c["playbook_claims"], 4)
                           if c.get("playbook_claims") else None),
        "latency_ms": outcome.model_record["latency_ms"],
        "prompt_tokens": usage.get("prompt_tokens"), "completion_tokens": usage.get("completion_tokens"),
    }


def aggregate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def ratio(a: str, b: str) -> float | None:
        den = sum(r[b] or 0 for r in rows)
        return round(sum(r[a] or 0 for r in rows) / den, 4) if den else None

    n = len(rows)
    lat = sorted(r["latency_ms"] for r in rows)
    return {
        "runs": n, "accepted": sum(r["status"] == "accepted" for r in rows),
        "accepted_with_warnings": sum(r["status"] == "accepted_with_warnings" for r in rows),
        "rejected": sum(r["status"] == "rejected" for r in rows),
        "citation_precision": ratio("citations_supported", "citations"),
        "claim_faithfulness": ratio("claims_accepted", "claims"),
        "verdict_agreement": round(sum(r["verdict_agrees"] for r in rows) / n, 4) if n else None,
        "action_agreement": round(sum(r["action_agrees"] for r in rows) / n, 4) if n else None,
        "fact_agreement": ratio("facts_stated", "facts"),
        "claim_coverage": ratio("playbook_claims_covered", "playbook_claims"),
        "latency_ms_p50": lat[(n - 1) // 2] if n else None,
        "prompt_tokens_mean": _mean([r["prompt_tokens"] for r in rows]),
        "completion_tokens_mean": _mean([r["completion_tokens"] for r in rows]),
    }


def _mean(xs: list[Any]) -> float | None:
    vals = [x for x in xs if isinstance(x, (int, float))]
    return round(sum(vals) / len(vals), 1) if vals else None


# ---------------------------------------------------------------------------------- commands
@dataclass
class AskOptions:
    target: str                      # a case id / case file, or a pack.json
    model: str | None = None
    endpoint: str | None = None
    as_of: Any = None
    variant: str | None = None
    out: Path | None = None
    db: Path | None = None
    timeout: float | None = None
    sleep: Callable[[float], None] | None = None
    accept_disagreement: bool = False   # a changed verdict or action is a warning, not a rejection
    idempotency_key: str | None = None  # recorded with the run in the ledger (ledger/idempotency.py)


@dataclass
class AskResult:
    pack: dict[str, Any]
    answer: dict[str, Any]
    outcome: AskOutcome
    out_dir: Path
    from_pack: bool
    store_loaded_now: bool = False


def is_pack_path(target: str) -> bool:
    p = Path(target)
    return p.suffix == ".json" or p.is_dir() and (p / "pack.json").is_file()


def playbook_for(pack: dict[str, Any], display: str):
    """The pack's playbook, which must still hash to what the pack records."""
    from ..errors import PackError
    from ..project import read_playbook

    pb_id = (pack.get("playbook") or {}).get("playbook_id")
    if not isinstance(pb_id, str):
        raise PackError("not a pack: playbook.playbook_id is missing", file=display)
    pb, h = read_playbook(pb_id)
    if pack["playbook"].get("hash") and pack["playbook"]["hash"] != h:
        raise PackError(f"playbook {pb_id} changed since the pack was built (hash {h[:19]}…, pack records "
                        f"{str(pack['playbook']['hash'])[:19]}…); rebuild the pack", file=display)
    return pb


def _record(opts: AskOptions, pack: dict[str, Any], outcome, out_dir: Path, files: dict[str, bytes], write) -> None:
    """Write the run folder with its ledger record and outbox event (all or none); the record's
    verdict is the model answer's status."""
    from ..ledger.idempotency import record

    ma = outcome.model_answer or {}
    record("ask", pack, {"verdict": ma.get("status")}, out=out_dir, files=files, write=write, db=opts.db,
           key=opts.idempotency_key, extra={"model": (outcome.model_record or {}).get("model")})


def run_ask(opts: AskOptions, *, build: Callable[[Any], tuple[Any, dict[str, bytes], Path]]) -> AskResult:
    """Ask over a pack (``opts.target`` a pack.json or run folder), or over a case's new pack:
    ``build`` is the API's investigation, called with the case's
    :class:`~ctxcli.request_policy.InvestigateOptions`; it returns the result, its run-folder files and
    its default run folder. (This module sits below the API and does not import it.)"""
    from ..postmortem.packfile import load_pack
    from ..write import add_to_run_folder, write_run_folder
    from .model import resolve_config

    cfg = resolve_config(endpoint=opts.endpoint, model=opts.model, timeout=opts.timeout)
    if is_pack_path(opts.target):
        if opts.as_of is not None or opts.variant:
            from ..errors import UsageError

            raise UsageError("--as-of and --variant apply to a case; a pack is asked as it was built")
        p = Path(opts.target)
        lp = load_pack(p / "pack.json" if p.is_dir() else p)
        pb = playbook_for(lp.data, lp.display)
        outcome = ask_over_pack(lp.data, S.actions(pb), cfg, db=opts.db, sleep=opts.sleep,
                                accept_disagreement=opts.accept_disagreement)
        src_dir = lp.path.parent
        out_dir = Path(opts.out) if opts.out is not None else src_dir
        trace_path = src_dir / "trace.jsonl"
        trace_raw = trace_path.read_bytes() if trace_path.is_file() else b""
        files = record_files(outcome)
        files["trace.jsonl"] = trace_with(trace_raw, outcome.events)
        # run.json records the hashes of the run's files, the new ones included (re-signed when
        # the run was signed: load_pack has just verified it with the key)
        from ..run_manifest import RUN_FILE, run_manifest, signing_key

        kept = {name: (src_dir / name).read_bytes() for name in ("answer.json", "answer.md")
                if (src_dir / name).is_file()}
        key = signing_key(required=True) if lp.run is not None and lp.run.signed else None
        manifest = run_manifest({**kept, **files}, lp.data, key)
        if out_dir.resolve() == src_dir.resolve():
            added = {**files, RUN_FILE: manifest}
            written = {**kept, "pack.json": lp.raw, **added}

            def write() -> None:
                add_to_run_folder(out_dir, added)
        else:
            files.update(kept)
            files["pack.json"] = lp.raw
            files[RUN_FILE] = manifest
            written = files

            def write() -> None:
                write_run_folder(out_dir, files)
        _record(opts, lp.data, outcome, out_dir, written, write)
        det = {}
        if (src_dir / "answer.json").is_file():
            import orjson

            try:
                det = orjson.loads((src_dir / "answer.json").read_bytes())
            except orjson.JSONDecodeError:
                det = {}
        return AskResult(pack=lp.data, answer=det, outcome=outcome, out_dir=out_dir, from_pack=True)
    from ..request_policy import InvestigateOptions

    res, files, default_out = build(InvestigateOptions(case=opts.target, as_of=opts.as_of, variant=opts.variant,
                                                       db=opts.db))
    pb = playbook_for(res.pack, opts.target)
    outcome = ask_over_pack(res.pack, S.actions(pb), cfg, db=opts.db, sleep=opts.sleep,
                            accept_disagreement=opts.accept_disagreement)
    files["trace.jsonl"] = trace_with(files["trace.jsonl"], outcome.events)
    files.update(record_files(outcome))
    from ..run_manifest import RUN_FILE, run_manifest

    files[RUN_FILE] = run_manifest(files, res.pack)      # the hashes of the files as written
    out_dir = Path(opts.out) if opts.out is not None else default_out
    _record(opts, res.pack, outcome, out_dir, files, lambda: write_run_folder(out_dir, files))
    return AskResult(pack=res.pack, answer=res.answer, outcome=outcome, out_dir=out_dir, from_pack=False,
                     store_loaded_now=res.store_loaded_now)


MAX_ANSWER_BYTES = 16 * 1024 * 1024     # a model answer file (validate-answer); the pack reader's checks


def read_answer_file(path: Path) -> Any:
    """A model answer from a file: a bare answer object, or a model_answer.json (its ``answer``).
    Read like every pack file: a regular file (never a FIFO or a device) of at most 16 MB."""
    from ..errors import UsageError
    from ..util.safeio import NotReadable, read_regular

    try:
        raw = read_regular(Path(path), MAX_ANSWER_BYTES)
    except NotReadable as e:
        raise UsageError(f"cannot read the answer: {e}", file=str(path)) from None
    data = loads_answer(raw, str(path))
    if isinstance(data, dict) and data.get("schema_version") == S.MODEL_ANSWER_SCHEMA:
        return data.get("answer")
    return data


def loads_answer(raw: bytes, display: str) -> Any:
    """Strict, bounded JSON of an answer file: one line naming the file for invalid JSON, a
    duplicate key, an integer beyond 64 bits or nesting deeper than the parser's limit."""
    import orjson

    from ..errors import UsageError
    from ..util import jsonstrict

    try:
        return jsonstrict.loads(raw)
    except orjson.JSONDecodeError as e:
        raise UsageError(f"the answer is not valid JSON ({str(e).splitlines()[0]})", file=display) from None
    except jsonstrict.StrictJSONError as e:
        raise UsageError(f"the answer is not usable JSON ({e})", file=display) from None


def validate_answer_file(pack_path: Path, answer_path: Path, db: Path | None = None, *,
                         accept_disagreement: bool = False) -> dict[str, Any]:
    """`ctx validate-answer`: the validation record of an answer produced elsewhere."""
    from ..postmortem.packfile import load_pack

    lp = load_pack(pack_path)
    pb = playbook_for(lp.data, lp.display)
    ans = read_answer_file(answer_path)
    vocab = S.actions(pb)
    rec = answer_record(lp.data, ans, "file", None, vocab, rejected_texts(lp.data, db),
                        messages_for(lp.data, vocab), accept_disagreement=accept_disagreement)
    rec["parse"] = {"ok": True, "method": "file", "error": None}
    return rec


def replay_model(lp, db: Path | None = None, *, re_ask: bool = False, endpoint: str | None = None,
                 model: str | None = None, sleep: Callable[[float], None] | None = None) -> dict[str, Any] | None:
    """`ctx replay` on a run folder with a recorded exchange: re-validate it offline, and with
    ``re_ask`` ask the model again and diff the new answer against the recorded one. None when
    the pack has no model.json beside it (and no re-ask was asked for)."""
    from ..errors import UsageError

    import os

    run_dir = lp.path.parent
    if not os.path.lexists(run_dir / "model.json"):
        if re_ask:
            raise UsageError(f"--re-ask: no model.json beside {lp.display}; run `ctx ask` first")
        return None
    pb = playbook_for(lp.data, lp.display)
    vocab = S.actions(pb)
    out = revalidate(run_dir, lp.data, vocab, db, run_file=lp.run_file)
    recorded_answer = out["model_answer"]["answer"]
    out["model_answer"] = {k: out["model_answer"][k] for k in ("status", "validation")}
    if re_ask:
        rec = read_model_record(run_dir, lp.run_file)
        from .model import resolve_config

        # the endpoint is the user's (--endpoint, CTX_MODEL_ENDPOINT or ctx.toml), never the one a run
        # folder records: a forged folder must not direct the key and the pack elsewhere
        name = model or rec.get("model")
        cfg = resolve_config(endpoint=endpoint, model=name, what="--re-ask")
        new = ask_over_pack(lp.data, vocab, cfg, db=db, sleep=sleep, accept_disagreement=out["accept_disagreement"])
        diffs = diff_answers(recorded_answer, new.model_answer["answer"])
        out["re_ask"] = {"model": cfg.model, "endpoint": cfg.host, "status": new.status,
                         "latency_ms": new.model_record["latency_ms"], "usage": new.model_record["usage"],
                         "violations": sorted({v["code"] for v in new.model_answer["validation"]["violations"]}),
                         "differences": diffs, "same_answer": not diffs}
        out["identical"] = out["identical"] and not diffs
    return out


def eval_run(pack: dict[str, Any], det_answer: dict[str, Any], cfg: ModelConfig, db: Path | None = None,
             sleep: Callable[[float], None] | None = None) -> dict[str, Any]:
    """`ctx eval --answerer model`: ask the model over one run's pack and score its answer."""
    pb = playbook_for(pack, pack["request"]["case_id"])
    outcome = ask_over_pack(pack, S.actions(pb), cfg, db=db, sleep=sleep)
    return {"model": cfg.model, **eval_metrics(pack, det_answer, outcome)}
