"""ctx replay, ctx explain-omissions, ctx diff: post-mortems of a pack."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from .cmd_load import DbOpt, JsonOpt
from .common import emit_json, handle_errors

PackArg = Annotated[Path, typer.Argument(help="A run folder written by `ctx investigate`, its pack.json, or "
                                            "`latest` (the newest run: `ctx runs`).", show_default=False)]


def register(app: typer.Typer) -> None:
    app.command("replay")(replay)
    app.command("explain-omissions")(explain_omissions)
    app.command("diff")(diff)


def _short(h: Any, n: int = 12) -> str:
    s = "none" if h is None else str(h)
    if s.startswith("sha256:") and len(s) > 7 + n:
        return s[: 7 + n] + "…"
    return s


def _val(v: Any, limit: int = 80) -> str:
    if v is None:
        return "-"
    if isinstance(v, str):
        s = v
    elif isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        s = ", ".join(str(x) for x in v) or "(none)"
    else:
        from ..util.canon import canonical_bytes

        s = canonical_bytes(v).decode()
    return s if len(s) <= limit else s[: limit - 1] + "…"


# ---------------------------------------------------------------------------------- replay
def _live_human(pack: dict, lres: list | None) -> None:
    """What a replay did with the pack's live data: replayed as recorded, or asked again."""
    from .console import console, safe

    made = [r for r in pack.get("live_requests") or [] if r.get("status") == "fetched"]
    if lres is None:
        if made:
            console().print(safe(f"live data: {len(made)} recorded response{'s' if len(made) != 1 else ''} "
                                 "replayed as recorded (offline; --live asks again)"))
        return
    for r in lres:
        tail = {"unchanged": "unchanged since the pack", "changed": f"changed since the pack (sha256 now "
                f"{r.get('sha256', '')[:12]}…, recorded {r['recorded_sha256'][:12]}…)",
                "failed": f"failed: {r.get('error')}"}[r["status"]]
        console().print(safe(f"live data, re-fetched: {r['source_id']}/{r['request']} {tail}"))


def replay(
    pack: PackArg,
    *,
    db: DbOpt = None,
    out: Annotated[Optional[Path], typer.Option("--out", help="Also write the rebuilt run folder here (a new or "
                                                "empty folder, or a run folder ctx wrote).",
                                                show_default=False)] = None,
    re_ask: Annotated[bool, typer.Option("--re-ask", help="With a recorded model exchange (model.json): ask the "
                                         "model again and diff its answer against the recorded one.")] = False,
    endpoint: Annotated[Optional[str], typer.Option("--endpoint", help="Endpoint for --re-ask (else "
                                                    "$CTX_MODEL_ENDPOINT, else ctx.toml; never the one the run "
                                                    "folder records).", show_default=False)] = None,
    model: Annotated[Optional[str], typer.Option("--model", help="Model for --re-ask (default: the recorded one).",
                                                 show_default=False)] = None,
    state_version: Annotated[Optional[str], typer.Option("--state-version", help="The caller's current task-state "
                                                         "version: a pack built for an older one is stale (exit 1).",
                                                         show_default=False)] = None,
    against: Annotated[str, typer.Option("--against", help="built: rebuild on the store generation the pack "
                                         "names while it is kept (else the current one, said so); current: "
                                         "on the current store.")] = "built",
    live: Annotated[bool, typer.Option("--live", help="Ask each live API source again for every response the "
                                       "pack recorded and say whether it changed (a changed or failed one: "
                                       "exit 1). Without it the recorded results are replayed offline.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Verify a pack, rebuild it from its recorded request against the store generation it was
    built on (kept in <store>.generations/ by `ctx load`; the current store, or --db, when that
    generation was pruned or with --against current), and report `identical` (exit 0) or
    `drifted` with every difference itemised (exit 1). Run it twice, --against built and
    --against current, to tell "reproducible" from "the store has moved on since".
    With --state-version, a pack built for an older task state than the current one is
    reported stale (exit 1), whatever the store says.

    A pack whose content no longer matches its hash, whose evidence text no longer matches
    its text_hash, or whose run folder no longer matches its run.json (an edited answer, a
    deleted or forged trace event, a bad signature) is reported as tampered, naming the file,
    and nothing in it is used (exit 2). The same request limits as `ctx investigate` apply.
    Cited evidence whose object has since been deleted is reported as purged, without its
    content. A run folder written by `ctx ask` also has its recorded model exchange
    re-validated offline (no model call); --re-ask asks the model again and diffs the
    answers. A different validation or answer is drift (exit 1).
    A trace.jsonl beside the pack must be the pack's (every event names its pack id and run):
    a trace of another pack is refused (exit 2); the rebuilt trace is compared with it.
    Records a pack fetched from live API sources are replayed as recorded (offline);
    --live asks each source again and reports every response unchanged, changed or failed.

    Example: ctx replay latest
    """
    with handle_errors(), ExitStack() as stack:
        from ..errors import CheckFailed
        from ..postmortem import replay as pm_replay

        if out is not None:
            from ..write import check_out_dir

            check_out_dir(out)   # refuse before the rebuild, not after it
        from ..paths import project_of
        from ..run_list import pack_path

        pack = pack_path(pack)
        stack.enter_context(project_of(pack))     # the pack's own project: its case, playbook, store
        res = pm_replay(pack, db, against=against)
        from .. import api as _api

        mres = _api.replay_model(res.pack, db, re_ask=re_ask, endpoint=endpoint, model=model)
        lres = _api.refetch_live(res.pack.data) if live else None
        replayed = {"replay_of": res.pack.pack_id, "replay_status": res.status, "against": res.against}
        if out is not None:
            from .. import api

            api.write_outputs(api.InvestigateResult(pack=res.rebuilt, answer=res.answer, trace=res.trace,
                                                    case=res.case), out, command="replay", db=db,
                              extra=replayed)
        else:
            from ..ledger.idempotency import record

            record("replay", res.rebuilt, res.answer, out=None, files={}, write=None, db=db, extra=replayed)
        state = None
        if state_version is not None:
            from ..agents.state import check

            state = check(res.pack.data.get("state_version"), state_version)
        if as_json:
            doc = res.to_json()
            if mres is not None:
                doc["model"] = mres
            if state is not None:
                doc["state"] = state
            if lres is not None:
                doc["live"] = lres
            emit_json(doc)
        else:
            _replay_human(res)
            if mres is not None:
                _model_replay_human(mres)
            if state is not None:
                from .console import console, safe

                console().print(safe(state["sentence"]))
            _live_human(res.pack.data, lres)
        live_moved = lres is not None and any(r["status"] != "unchanged" for r in lres)
        if not res.identical or (mres is not None and not mres["identical"]) or (state and state["stale"]) \
                or live_moved:
            raise typer.Exit(CheckFailed.exit_code)


def _model_replay_human(m: dict[str, Any]) -> None:
    from .console import console, safe

    c = console()
    if m["revalidated_as_recorded"]:
        c.print(f"model exchange ({safe(m['model'])}): re-validated offline: [bold]{m['status']}[/bold], "
                "as recorded")
    else:
        why = []
        if not m["same_pack"]:
            why.append("recorded for another pack")
        if not m["same_request"]:
            why.append("the messages rendered from the pack differ from the recorded request")
        if m["recorded"] != m["revalidated"]:
            why.append(f"validation was {m['recorded']['status'] if m['recorded'] else 'not recorded'}, "
                       f"now {m['revalidated']['status']} ({', '.join(m['revalidated']['violations']) or 'no violations'})")
        c.print(f"model exchange ({safe(m['model'])}): re-validated offline: [bold]{m['status']}[/bold]"
                + (f" — {safe('; '.join(why))}" if why else ""))
    ra = m.get("re_ask")
    if ra:
        c.print(f"re-asked {safe(ra['model'])} at {safe(ra['endpoint'])}: {ra['status']}, "
                + ("same answer" if ra["same_answer"] else f"{len(ra['differences'])} difference(s)"))
        for d in ra["differences"]:
            c.print(f"  {safe(d)}")


def _replay_human(res) -> None:
    from .console import console, safe

    c = console()
    req = res.pack.request
    g = res.generation or {}
    if g.get("recorded") is not None and g.get("kept") is False:
        c.print(f"generation {g['recorded']} (the pack's) is no longer kept; rebuilt against the current "
                f"generation {g.get('used') if g.get('used') is not None else '(unnumbered)'}")
    elif g.get("used") is not None and g.get("used") != g.get("current"):
        moved = (f": its sources {', '.join(g.get('sources_changed') or [])} differ from the pack's — "
                 f"`ctx replay --against current` itemises the drift" if g.get("current_differs")
                 else ", which holds the same data for this pack")
        c.print(safe(f"rebuilt against generation {g['used']} (the pack's); the current generation is "
                     f"{g.get('current')}{moved}"))
    head = f"{safe(res.pack.pack_id)} (case {safe(req['case_id'])}" + (
        f", variant {safe(req['variant'])}" if req.get("variant") else "") + ")"
    if res.identical:
        how = "byte for byte" if res.byte_identical else "same content hash (the file's formatting differs)"
        store = safe(_short(res.rebuilt["store"]["digest"]))
        if res.erased:
            how = "same content hash as the pack as built"
        c.print(f"{head}: [bold]identical[/bold] — rebuilt against store {store}, {how}")
        for ln in _erased_lines(res):
            c.print("- " + safe(ln))
        return
    c.print(f"{head}: [bold]drifted[/bold] — rebuilt as {safe(res.rebuilt['pack_id'])} against {safe(res.db)}")
    for ln in _drift_lines(res):
        c.print("- " + safe(ln))


def _drift_lines(res) -> list[str]:
    """One line per difference between the pack and its rebuild, store and versions first."""
    d = res.diff
    lines: list[str] = []
    if d.store_digest:
        lines.append(f"store digest changed: {_short(d.store_digest.a)} → {_short(d.store_digest.b)}")
    if d.store_key:
        lines.append(f"store secret changed: {_val(d.store_key.a)} → {_val(d.store_key.b)} (opaque refs and "
                     f"keyed digests differ)")
    for s in d.sources:
        if s.change == "changed":
            lines.append(f"source {s.source_id} changed: {_short(s.a)} → {_short(s.b)}")
        else:
            lines.append(f"source {s.source_id} {s.change}")
    for f in d.versions:
        lines.append(f"{f.field} changed: {_val(f.a)} → {_val(f.b)}")
    for f in d.request:
        lines.append(f"request {f.field} changed (case file edited?): {_val(f.a)} → {_val(f.b)}")
    erased = {e["object_id"] for e in res.erased}
    lines.extend(_erased_lines(res))
    purged = {p.object_id for p in res.purged} | erased
    for p in res.purged:
        if p.object_id not in erased:
            lines.append(f"purged: {p.sentence()}")
    for ch in d.evidence_only_a:
        if ch.key in purged:
            continue
        lines.append(f"evidence removed: {ch.key}{_src(ch)} was {ch.a.describe()}, now {ch.b.describe()}")
    for ch in d.evidence_only_b:
        lines.append(f"evidence added: {ch.key}{_src(ch)} was {ch.a.describe()}, now {ch.b.describe()}")
    for ch in d.evidence_changed:
        if ch.key in erased:
            continue
        what = (f"content {_short(ch.a.content_hash)} → {_short(ch.b.content_hash)}"
                if ch.a.content_hash != ch.b.content_hash else "same content")
        lines.append(f"evidence changed: {ch.key}{_src(ch)}: {what}; fields {', '.join(ch.fields)}")
    for ch in d.omissions_moved:
        lines.append(f"omission changed: {ch.key}{_src(ch)}: {ch.a.describe()} → {_moved(ch)}")
    for ch in d.omissions_only_b:
        lines.append(f"omission added: {ch.key}{_src(ch)}: now {ch.b.describe()}")
    for ch in d.omissions_only_a:
        lines.append(f"omission gone: {ch.key}{_src(ch)}: was {ch.a.describe()}, now not a candidate")
    for f in d.answer:
        lines.append(f"{f.field.replace('_', ' ')} changed: {_val(f.a)} → {_val(f.b)}")
    lines.extend(_claim_lines(d))
    for f in d.outcome:
        lines.append(f"{f.field} changed: {_val(f.a)} → {_val(f.b)}")
    if d.other_sections:
        lines.append(f"also differs: {', '.join(d.other_sections)}")
    if res.answer_identical is False:
        lines.append("answer.json differs from the rebuilt answer" + (" (content erased from it)" if res.erased
                                                                      else " (edited after the run was written?)"))
    return lines


def _erased_lines(res) -> list[str]:
    return [f"erased: {e['object_id']} (cited as {e['evidence_id']}) was erased on {e['at']} by {e['by']}: "
            f"{e['reason']} (its content is no longer in the pack; its hashes are)" for e in res.erased]


def _moved(ch) -> str:
    """The new state of an omission that changed; says which record fields changed when the
    gate and reason did not."""
    if ch.a.gate == ch.b.gate and ch.a.reason == ch.b.reason:
        return f"{ch.b.describe()} ({', '.join(ch.fields)} changed)"
    return ch.b.describe()


def _src(ch) -> str:
    return f" (source {ch.source_id})" if ch.source_id else ""


def _claim_lines(d) -> list[str]:
    out = []
    for cl in d.claims:
        if cl.change != "changed":
            out.append(f"claim {cl.claim_id} only in {'A' if cl.change == 'only_a' else 'B'}")
            continue
        parts = []
        if "status" in cl.fields:
            parts.append(f"status {cl.a_status} → {cl.b_status}")
        for f in cl.facts:
            parts.append(f"{f.field} {_val(f.a, 40)} → {_val(f.b, 40)}")
        if "evidence" in cl.fields:
            parts.append(f"evidence {_val(cl.a_evidence, 60)} → {_val(cl.b_evidence, 60)}")
        out.append(f"claim {cl.claim_id}: " + "; ".join(parts))
    return out


# ---------------------------------------------------------------------------------- explain-omissions
def explain_omissions(
    pack: PackArg,
    *,
    gate: Annotated[Optional[str], typer.Option("--gate", help="Only omissions decided by this gate.",
                                                show_default=False)] = None,
    object_id: Annotated[Optional[str], typer.Option("--object", help="Explain one object id, whether or not it "
                                                     "was ever a candidate.", show_default=False)] = None,
    db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Explain every omitted candidate of a pack, grouped by gate in gate order: the facts that
    decided it and what would have admitted it.

    With --object ID, explain one object: admitted, omitted (and why), or never a candidate —
    no channel matched it (the full-text terms, structured keys and graph paths that ran are
    shown), it was tombstoned, its source is disabled, or it is not found (exit 1). For objects the pack's
    subject could not see, only the scope, clearance or purpose they need is shown; an id of
    another tenant, or a tombstone in a source the subject may not read, is answered exactly
    like an id that exists nowhere. A trace.jsonl beside the pack
    of another pack is refused (exit 2).

    Example: ctx explain-omissions runs/restricted --gate scope
    """
    with handle_errors(), ExitStack() as stack:
        from ..errors import UsageError
        from ..postmortem import explain_object, explain_omissions as pm_explain, load_pack

        if gate is not None and object_id is not None:
            raise UsageError("--gate and --object cannot be combined")
        from ..postmortem.packfile import read_linked_trace

        from ..paths import project_of
        from ..run_list import pack_path

        pack = pack_path(pack)
        stack.enter_context(project_of(pack))
        lp = load_pack(pack)
        read_linked_trace(lp)       # a trace.jsonl beside the pack must be this pack's (exit 2 otherwise)
        if object_id is not None:
            x = explain_object(lp, object_id, db)
            if as_json:
                emit_json(x.to_json())
            else:
                _object_human(x)
            if x.status == "not_found":      # one line (or the JSON), exit 1: a typo is not an answer
                from ..errors import ExitCode

                raise typer.Exit(ExitCode.FAILED)
            return
        rep = pm_explain(lp, gate)
        if as_json:
            emit_json(rep.to_json())
        else:
            _omissions_human(rep)


def _omissions_human(rep) -> None:
    from .console import console, safe, show, table

    c = console()
    c.print(f"{safe(rep.pack_id)} · case {safe(rep.case_id)}"
            + (f" ({safe(rep.variant)})" if rep.variant else "")
            + f" · subject {safe(rep.subject_id)} (scopes: {safe(', '.join(rep.scopes) or 'none')})"
            + f" · purpose {safe(rep.purpose)} · as_of {safe(rep.as_of)}")
    if rep.withheld:
        c.print("withheld for access by " + ", by ".join(f"{g}: at least {n} item(s)" for g, n in rep.withheld.items())
                + " (never candidates: counted inside the statements, not named)")
    if rep.inputs:
        t = table(f"caller inputs dropped — {len(rep.inputs)}", ["input", "why"])
        t.expand = True
        t.columns[0].no_wrap = True
        for x in rep.inputs:
            t.add_row(safe(f"{x['ref']}\n({'withheld' if x['withheld'] else x['section']})"), safe(x["sentence"]))
        show(c, t)
    if not rep.groups:
        c.print("no omissions" + (f" by gate {safe(rep.gate_filter)}" if rep.gate_filter else ""))
        if rep.missing:
            _missing_line(c, rep.missing)
        return
    c.print(f"{rep.total} omitted candidate(s), by gate in gate order")
    for g in rep.groups:
        t = table(f"{g.gate} — {len(g.items)}", ["object", "why, and what would have admitted it"])
        t.expand = True
        t.columns[0].no_wrap = True
        for x in g.items:
            who = (f"{x.ref}\n(withheld)" if x.withheld
                   else f"{x.object_id}" + (f"\n{x.source_id}" if x.source_id else ""))
            would = "; or ".join(x.would_admit) or "-"
            t.add_row(safe(who), safe(x.sentence) + "\n[dim]would have admitted it:[/dim] " + safe(would))
        show(c, t)
    if rep.missing:
        _missing_line(c, rep.missing)


def _missing_line(c, missing) -> None:
    from .console import safe

    c.print("missing evidence types: " + safe(", ".join(f"{m.get('type')} ({m.get('reason')})" for m in missing)))


def _object_human(x) -> None:
    from .console import console, safe, show, table

    c = console()
    c.print(f"[bold]{safe(x.object_id)}[/bold]: {safe(x.sentence)}")
    if x.would_admit:
        c.print("would have admitted it: " + safe("; or ".join(x.would_admit)))
    if x.searched:
        s = x.searched
        c.print("searched: " + safe(
            f"full-text terms {', '.join(s['fulltext_terms']) or 'none'}; "
            f"structured object types {', '.join(s['structured_object_types']) or 'none'} with seeds "
            f"{', '.join(s['seeds']) or 'none'} and business keys {', '.join(s['business_keys']) or 'none'}; "
            f"graph templates {', '.join(s['graph_templates']) or 'none'}"))
    if x.queries:
        t = table("Queries that ran", ["query", "channel", "looked for", "ran with", "hits", "why not this object"])
        for q in x.queries:
            rw = "; ".join(f"{k} {_val(v, 200)}" for k, v in q.ran_with.items())
            t.add_row(safe(f"r{q.round} {q.query_id}"), safe(q.channel), safe(q.evidence_type), safe(rw),
                      "-" if q.hits is None else str(q.hits), safe(q.outcome))
        show(c, t)
    for n in x.notes:
        c.print("note: " + safe(n))


# ---------------------------------------------------------------------------------- diff
def diff(
    pack_a: Annotated[Path, typer.Argument(help="The first run: a run folder, its pack.json or `latest`.",
                                          show_default=False)],
    pack_b: Annotated[Path, typer.Argument(help="The second run: a run folder, its pack.json or `latest`.",
                                          show_default=False)],
    *,
    db: Annotated[Optional[str], typer.Option("--db", help="The store both packs were built on: its secret "
                                              "matches an object withheld in one pack to its id in the other "
                                              "(default: $CTX_DB or .ctx/ctx.duckdb; never created).",
                                              show_default=False)] = None,
    as_json: JsonOpt = False,
) -> None:
    """Compare two packs side by side: request differences (as_of, subject, budget …), evidence
    only in A, only in B or changed, omissions that moved between gates, and changes to the
    verdict, action and claims. Exit 0 when the packs are the same, 1 when they differ.

    Example: ctx diff runs/default runs/restricted
    """
    with handle_errors():
        from ..errors import CheckFailed
        from ..postmortem import compare, load_pack

        from .. import api, paths

        from ..run_list import pack_path

        a, b = load_pack(pack_path(pack_a)), load_pack(pack_path(pack_b))
        d = compare(a.data, b.data, key=api.store_key(paths.db_path(db), create=False))
        if as_json:
            emit_json({"a": a.display, "b": b.display, **d.to_json()})
        else:
            _diff_human(d, a, b)
        if not d.same:
            raise typer.Exit(CheckFailed.exit_code)


def _diff_human(d, a, b) -> None:
    from .console import console, safe, show, table

    c = console()
    if d.same:
        c.print(f"packs are the same: {safe(a.pack_id)} ({safe(_short(a.content_hash))})")
        return
    t = table(f"A {safe(a.pack_id)} vs B {safe(b.pack_id)}", ["what", "item", "A", "B"])
    t.columns[0].no_wrap = True
    groups: list[list[tuple[str, str, str, str]]] = []
    groups.append([("request", f.field, _val(f.a), _val(f.b)) for f in d.request])
    g = [("version", f.field, _val(f.a), _val(f.b)) for f in d.versions]
    if d.store_digest:
        g.append(("store", "digest", _short(d.store_digest.a), _short(d.store_digest.b)))
    if d.store_key:
        g.append(("store", "secret (key_id)", _val(d.store_key.a), _val(d.store_key.b)))
    g += [("source", s.source_id, _short(s.a), _short(s.b)) for s in d.sources]
    groups.append(g)
    g = [("answer", f.field, _val(f.a), _val(f.b)) for f in d.answer]
    for cl in d.claims:
        fa = "; ".join(f"{f.field} {_val(f.a, 40)}" for f in cl.facts)
        fb = "; ".join(f"{f.field} {_val(f.b, 40)}" for f in cl.facts)
        g.append(("claim", cl.claim_id, (cl.a_status or "absent") + (f" · {fa}" if fa else ""),
                  (cl.b_status or "absent") + (f" · {fb}" if fb else "")))
    g += [("outcome", f.field, _val(f.a), _val(f.b)) for f in d.outcome]
    groups.append(g)
    groups.append([("evidence only in A", ch.key + _src(ch), ch.a.describe(), ch.b.describe())
                   for ch in d.evidence_only_a])
    groups.append([("evidence only in B", ch.key + _src(ch), ch.a.describe(), ch.b.describe())
                   for ch in d.evidence_only_b])
    groups.append([("evidence changed", ch.key + _src(ch), f"content {_short(ch.a.content_hash)}",
                    f"content {_short(ch.b.content_hash)} ({', '.join(ch.fields)})") for ch in d.evidence_changed])
    groups.append([("omission moved", ch.key + _src(ch), ch.a.describe(), _moved(ch)) for ch in d.omissions_moved])
    groups.append([("omission only in A", ch.key + _src(ch), ch.a.describe(), ch.b.describe())
                   for ch in d.omissions_only_a])
    groups.append([("omission only in B", ch.key + _src(ch), ch.a.describe(), ch.b.describe())
                   for ch in d.omissions_only_b])
    first = True
    for grp in groups:
        if not grp:
            continue
        if not first:
            t.add_section()
        first = False
        for what, item, va, vb in grp:
            t.add_row(safe(what), safe(item), safe(va), safe(vb))
    show(c, t)
    if d.other_sections:
        c.print("also differs: " + safe(", ".join(d.other_sections)))
    c.print(f"packs differ: {d.count()} difference(s)")
