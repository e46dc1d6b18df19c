"""ctx report (issue 19): one self-contained, deterministic HTML page per run, checked as text
and in a real headless Chromium (Debian's ``chromium``; ``.ci/run`` installs it).

Browser checks go through ``tests/chromium.py``: a Chrome DevTools Protocol client over
``--remote-debugging-pipe``. Every request the page makes, every console message and every
uncaught exception arrives as a CDP event, so "no network" and "no console errors" are
observed, not inferred; links are checked in the live DOM and the screenshot is decoded.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest

from .chromium import Browser, colour_stats, file_url, find_chromium, pdf_pages
from .conftest import REPO, run_cli
from .test_ask import serve  # noqa: F401  (the scripted model server fixture)

RUNS = {  # name -> (case, variant)
    "default": ("C-102", None), "restricted": ("C-102", "restricted"), "c104": ("C-104", None),
    "c105": ("C-105", None), "inc": ("INC-2026-0723", None), "inc-tiny": ("INC-2026-0723", "tiny-budget"),
}


@pytest.fixture(scope="module")
def runs(bundled_store, tmp_path_factory) -> dict[str, Path]:
    """The bundled cases, investigated once for this module through the library API."""
    from ctxcli import api

    base = tmp_path_factory.mktemp("runs")
    out = {}
    for name, (case, variant) in RUNS.items():
        res = api.investigate(api.InvestigateOptions(case=case, variant=variant, db=bundled_store,
                                                     cases_dir=REPO / "examples" / "cases",
                                                     playbooks_dir=REPO / "manifests" / "playbooks"))
        out[name] = api.write_outputs(res, base / name)
    return out


def _page(run_dir: Path, *args) -> str:
    out = run_dir / "report.html"
    r = run_cli(["report", run_dir, *args])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"wrote {out}: "), r.stdout
    return out.read_text(encoding="utf-8")


def _text(page: str) -> str:
    """The page without its layout hints for a phone: the ``<wbr>`` break opportunities inside ids
    and the ``data-label`` a stacked table row shows above each cell. Content assertions (and
    searches for leaked text, which a ``<wbr>`` could otherwise split) read this."""
    return re.sub(r' data-label="[^"]*"', "", page.replace("<wbr>", ""))


def _pack(run_dir: Path) -> dict:
    return json.loads((run_dir / "pack.json").read_text(encoding="utf-8"))


def _list_in_run_json(run_dir: Path, *names: str) -> None:
    """What `ctx ask` does after writing its files: run.json lists them (unsigned run)."""
    from ctxcli.run_manifest import run_manifest

    doc = json.loads((run_dir / "run.json").read_text())
    files = {n: (run_dir / n).read_bytes() for n in [*doc["files"], *names]}
    (run_dir / "run.json").write_bytes(run_manifest(files, _pack(run_dir)))


def _answer(run_dir: Path) -> dict:
    return json.loads((run_dir / "answer.json").read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------ the page as text
def test_report_is_written_beside_the_pack_and_is_self_contained(runs):
    page = _page(runs["default"])
    pack = _pack(runs["default"])
    assert page.startswith("<!DOCTYPE html>\n<html lang=\"en\">")
    assert '<meta name="generator" content="ctx report 1">' in page
    assert ("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;; style-src "
            "&#39;unsafe-inline&#39;; img-src data:; base-uri &#39;none&#39;; form-action &#39;none&#39;\">") in page
    assert f"<title>ctx report · C-102 · {pack['pack_id']}</title>" in page
    # nothing that could load or run: no script, no external reference of any kind
    assert "<script" not in page.lower()
    for needle in ("src=", "<link", "@import", "url(", "http://", "https://", "//fonts"):
        assert needle not in page, needle


def test_same_run_gives_the_same_bytes_from_folder_pack_and_another_cwd(runs, tmp_path, monkeypatch):
    d = runs["default"]
    first = _page(d).encode()
    assert _page(d).encode() == first
    other = tmp_path / "elsewhere.html"
    monkeypatch.chdir(tmp_path)
    r = run_cli(["report", d / "pack.json", "--out", other])
    assert r.exit_code == 0, r.stderr
    assert other.read_bytes() == first


def test_verdict_action_and_claims_with_status_link_to_evidence_cards(runs):
    d = runs["default"]
    page = _text(_page(d))
    ans, pack = _answer(d), _pack(d)
    assert '<div class="verdict v-complete"><span class="label">verdict</span><span class="value">complete</span>' in page
    assert '<span class="value">route_to_human_reviewer</span>' in page
    assert "<dt>run folder</dt><dd>run.json verifies answer.json, answer.md, trace.jsonl · unsigned</dd>" in page
    assert html.escape(ans["recommended_action"]["reason"], quote=False) in page
    for c in ans["claims"]:
        row = re.search(rf'<tr id="claim-{c["claim_id"]}">(.*?)</tr>', page, re.S)
        assert row, c["claim_id"]
        assert f'<span class="badge s-{c["status"]}">{c["status"]}</span>' in row.group(1)
        assert html.escape(c["text"], quote=False) in row.group(1)
        assert re.findall(r'href="#(ev-[0-9a-f]+)"', row.group(1)) == c["evidence"]
    for e in pack["evidence"]:
        card = re.search(rf'<article class="card" id="{e["evidence_id"]}">(.*?)</article>', page, re.S)
        assert card, e["evidence_id"]
        body = card.group(1)
        for value in (e["object_id"], e["source_id"], e["trust_level"], e["locator"], e["observed_at"],
                      e["content_hash"], f'{e["tokens"]} packed'):
            assert html.escape(str(value), quote=False) in body, (e["evidence_id"], value)
        assert f'<pre class="text">{html.escape(e["text"], quote=False)}</pre>' in body


def test_transformations_show_before_and_after_hashes(runs):
    d = runs["inc"]
    page = _text(_page(d))
    redacted = [e for e in _pack(d)["evidence"] if e["transformations"]]
    assert redacted
    for e in redacted:
        card = re.search(rf'<article class="card" id="{e["evidence_id"]}">(.*?)</article>', page, re.S).group(1)
        for t in e["transformations"]:
            assert (f'<td>{t["kind"]}</td><td><code class="hash">{t["before_hash"]}</code><br>{t["before_tokens"]} '
                    f'tokens</td><td><code class="hash">{t["after_hash"]}</code><br>{t["after_tokens"]} tokens</td>') in card


def test_budget_bar_and_evidence_by_type(runs):
    d = runs["default"]
    page = _text(_page(d))
    slots = _pack(d)["slots"]
    total = slots["allocation"]["total"]
    for s in ("instructions", "goal_state", "evidence"):
        used = slots["used"][s]
        assert (f'<div class="seg slot-{s}" style="width: {100 * used / total:.3f}%" '
                f'title="{s}: {used} of {slots["allocation"][s]}"></div>') in page
    assert 'class="seg slot-response_reserve reserve" style="width: 16.667%"' in page
    by_type: dict[str, int] = {}
    for e in _pack(d)["evidence"]:
        by_type[e["selected_for"]] = by_type.get(e["selected_for"], 0) + e["tokens"]
    for t, tokens in by_type.items():
        assert re.search(rf'<tr><th>{t}</th><td class="barcell"><div class="bar" style="width: [0-9.]+%"></div>'
                         rf'</td><td class="num">{tokens}</td>', page), t


def test_omissions_grouped_by_gate_in_gate_order_with_what_would_admit(runs):
    d = runs["default"]
    page = _page(d)
    pack = _pack(d)
    gates = re.findall(r'<h3 id="gate-([a-z_]+)">', page)
    present = {o["gate"] for o in pack["omissions"]}
    assert gates == [g for g in pack["gate_order"] if g in present]
    # the strip names every gate in order, with its count
    strip = re.findall(r'<li class="(?:hit|zero)">(?:<a href="#gate-[a-z_]+">)?([a-z_]+) <b>(\d+)</b>', page)
    assert strip == [(g, str(sum(1 for o in pack["omissions"] if o["gate"] == g))) for g in pack["gate_order"]]
    assert "valid until 2026-01-01T00:00:00+08:00, before as_of 2026-07-23T12:00:00+08:00; replaced by " \
           "RULE-MCS-2026.1 (version rules-2026.07.01)" in page
    assert "an as_of inside its validity (before 2026-01-01T00:00:00+08:00)" in page
    for o in pack["omissions"]:
        if o["withheld"]:
            row = re.search(rf'<tr class="withheld"><td><code>{o["ref"]}</code>(.*?)</tr>', page, re.S)
            assert row, o["ref"]


def test_retrieval_rounds_show_queries_hits_and_each_admitted_items_path(runs):
    d = runs["default"]
    page = _text(_page(d))
    trace = [json.loads(x) for x in (d / "trace.jsonl").read_text().splitlines()]
    for ev in trace:
        if ev["event"] == "retrieval_executed":
            assert re.search(rf'<tr><td><code>{ev["query_id"]}</code></td><td><span class="ch ch-{ev["channel"]}">'
                             rf'{ev["channel"]}</span></td><td>{ev["evidence_type"]}</td><td>[^<]*</td>'
                             rf'<td class="num">{ev["hits"]}</td></tr>', page), ev["query_id"]
    # RULE-MCS-2026.1: found by full text and the graph (template case_ruleset), rank 8 by fused score
    row = re.search(r'<tr><td class="num">(\d+)</td><td><a class="ev" href="#(ev-[0-9a-f]+)">[^<]+</a> '
                    r'<code>RULE-MCS-2026.1</code></td>(.*?)</tr>', page, re.S)
    assert row and row.group(1) == "8"
    assert 'fulltext #4</span> <span class="ch ch-graph">graph #4</span>' in row.group(3)
    assert "<td>case_ruleset</td>" in row.group(3)


def test_trace_timeline_has_every_event_in_order(runs):
    d = runs["default"]
    page = _page(d)
    n = len((d / "trace.jsonl").read_text().splitlines())
    seqs = [int(x) for x in re.findall(r'<span class="seq">(\d+)</span>', page)]
    assert sorted(set(seqs)) == list(range(1, n + 1))
    assert "<b>answer_validated</b> verdict complete, action route_to_human_reviewer" in page


def test_trace_or_answer_of_another_run_is_refused_or_not_shown(runs, tmp_path):
    import shutil

    # in a run folder, run.json records the hashes of trace.jsonl and answer.json: refused
    d = tmp_path / "mixed"
    shutil.copytree(runs["default"], d)
    (d / "report.html").unlink(missing_ok=True)
    shutil.copy(runs["c104"] / "trace.jsonl", d / "trace.jsonl")
    r = run_cli(["report", d])
    assert r.exit_code == 2 and r.stderr.startswith("ctx: error: ") and r.stderr.count("\n") == 1
    assert "trace.jsonl: tampered: the file hashes to" in r.stderr
    assert not (d / "report.html").exists()
    # a loose pack (not a run folder's pack.json) with another run's files beside it: not shown
    loose = tmp_path / "loose"
    loose.mkdir()
    shutil.copy(runs["default"] / "pack.json", loose / "c102.json")
    shutil.copy(runs["c104"] / "trace.jsonl", loose / "trace.jsonl")
    shutil.copy(runs["c104"] / "answer.json", loose / "answer.json")
    r = run_cli(["report", loose / "c102.json"])
    assert r.exit_code == 0, r.stderr
    other = json.loads((runs["c104"] / "pack.json").read_text())["pack_id"]
    mine = json.loads((runs["default"] / "pack.json").read_text())["pack_id"]
    note = f"trace.jsonl is not shown: trace of another pack: event 1 belongs to pack {other}, not {mine}"
    assert "note: " + note in r.stdout
    page = (loose / "report.html").read_text()
    assert note in page
    assert "answer.json is not shown (the pack&#39;s own answer is): it answers pack " in page
    assert "No trace: trace.jsonl beside the pack is missing or does not belong to it." in page
    assert "C-104" not in page.split('<section id="trace">')[1]
    assert "Claims as recorded in the pack (no matching answer.json beside it, so no statements)." in page


def test_compare_shows_the_diff_side_by_side(runs):
    from ctxcli.postmortem import diff

    a, b = runs["default"], runs["restricted"]
    page = _text(_page(a, "--compare", b))
    assert _text(_page(a, "--compare", b)) == page
    d = diff(a / "pack.json", b / "pack.json")
    assert f"A is this run, B is {_pack(b)['pack_id']}: {d.count()} difference(s)" in page
    assert '<tr class="differs"><th>verdict</th><td>complete</td><td>insufficient_evidence</td></tr>' in page
    # every itemised difference of `ctx diff`, as A | B rows
    rows = [(d.evidence_only_a, "a"), (d.omissions_moved, "b"), (d.omissions_only_a, "a"), (d.omissions_only_b, "a")]
    n = 0
    for changes, _ in rows:
        for ch in changes:
            item = html.escape(ch.key + (f" ({ch.source_id})" if ch.source_id else ""), quote=False)
            assert f"<tr><td><code>{item}</code></td><td>{html.escape(ch.a.describe(), quote=False)}</td>" in page
            n += 1
    assert n >= 10
    ev = {e["object_id"]: e["evidence_id"] for e in _pack(a)["evidence"]}
    assert f"<td>admitted as {ev['RULE-MCS-2026.1']}</td>" in page
    assert "<tr><td><code>RULE-MCS-2025.4 (claims-rules)</code></td><td>rejected by validity (expired)</td>" in page
    for cl in d.claims:
        assert f"<tr><td><code>claim {cl.claim_id}</code></td><td>{cl.a_status}" in page


def test_compare_is_the_comparison_of_ctx_diff_with_the_same_store(runs, bundled_store):
    """The same counts and the same reasons as `ctx diff --db` (issue 31.7): the restricted run
    withheld the rules and documents default admitted, and both say so with the counts."""
    a, b = runs["default"], runs["restricted"]
    r = run_cli(["diff", a, b, "--db", bundled_store, "--json"])
    assert r.exit_code == 1
    d = json.loads(r.stdout)
    page = _text(_page(a, "--compare", b, "--db", bundled_store))
    n = len(d["request"]) + len(d["versions"]) + len(d["store"]["sources"]) + sum(
        len(d[k][x]) for k, xs in (("evidence", ("only_a", "only_b", "changed")),
                                   ("omissions", ("moved", "only_a", "only_b"))) for x in xs) \
        + len(d["answer"]) + len(d["claims"]) + len(d["outcome"]) + len(d["other_sections"]) \
        + (d["store"]["digest"] is not None) + (d["store"]["key_id"] is not None)
    assert f"A is this run, B is {_pack(b)['pack_id']}: {n} difference(s)" in page
    only_a = {c["object_id"]: c for c in d["evidence"]["only_a"]}
    assert only_a["RULE-MCS-2026.1"]["b_state"] == ("not a candidate; withheld for access there: policy_version "
                                                    "at least 3 by scope")
    for c in d["evidence"]["only_a"]:
        item = html.escape(c["key"] + (f" ({c['source_id']})" if c["source_id"] else ""), quote=False)
        assert (f"<tr><td><code>{item}</code></td><td>{html.escape(c['a_state'], quote=False)}</td>"
                f"<td>{html.escape(c['b_state'], quote=False)}</td></tr>") in page


def _denied_strings(db: Path, pack: dict) -> list[str]:
    """Titles, contents and content sentences of every object the pack's subject may not see
    (another tenant, a scope it lacks, a purpose not allowed), read from the store — minus
    strings that a visible object also carries."""
    import duckdb

    req = pack["request"]
    scopes = set(req["subject"]["scopes"])
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT object_id, tenant_id, required_scopes, allowed_purposes, title, content "
                       "FROM objects").fetchall()
    con.close()
    denied, visible = [], []
    for _oid, tenant, need, purposes, title, content in rows:
        ok = tenant == req["tenant_id"] and set(need or []) <= scopes and req["purpose"] in (purposes or [])
        strings = [title, content] + [s.strip() for s in re.split(r"(?<=[.;:])\s", content or "")
                                      if len(s.strip()) >= 30]
        (visible if ok else denied).extend(x for x in strings if x)
    seen = "\n".join(visible)
    return sorted({s for s in denied if s not in seen})


def test_restricted_page_shows_no_denied_title_or_content(runs, bundled_store):
    d = runs["restricted"]
    page = _text(_page(d))
    pack = _pack(d)
    text = html.unescape(page)
    secrets = _denied_strings(bundled_store, pack)
    assert len(secrets) > 40   # titles, contents and sentences of the withheld rules, documents, signals …
    leaked = [s for s in secrets if s in page or s in text]
    assert leaked == []
    # withheld inside the statements: no omission names them, the gaps say they were withheld
    assert not [o for o in pack["omissions"] if o["withheld"]]
    assert "withheld_for_access" in text or "withheld for access" in text
    for oid in ("SIU-NOTE-C102", "RULE-MCS-2026.1", "SIG-C102-AMOUNT", "OTHER-CASE-C-102", "DOC-C102-001"):
        assert oid not in text, oid


def test_hostile_title_renders_as_text(project_copy):
    p = project_copy / "sources" / "claims-core" / "objects.jsonl"
    hostile = '<script>alert("x")</script><img src=x onerror=alert(1)> Case \u202eC-102'
    lines = p.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["object_id"] == "CASE-C-102":
            rec["title"] = hostile
            lines[i] = json.dumps(rec, ensure_ascii=False)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert run_cli(["load"]).exit_code == 0
    out = project_copy / "runs" / "hostile"
    assert run_cli(["investigate", "C-102", "--out", out]).exit_code == 0
    page = _page(out)
    assert "<script" not in page and "<img" not in page and "\u202e" not in page
    assert ("<h3>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; "
            "Case \\u202eC-102</h3>") in page
    (project_copy / "page.html").write_text(page, encoding="utf-8")


def test_bidi_isolates_and_embeddings_in_a_title_are_shown_as_escapes(project_copy):
    """U+2066–U+2069 (isolates) reorder text like U+202A–U+202E (embeddings and overrides): every
    one of them is a visible escape on the page, never the character (issue 28 item 7)."""
    p = project_copy / "sources" / "claims-core" / "objects.jsonl"
    marks = [chr(o) for o in (*range(0x2066, 0x206A), *range(0x202A, 0x202F))]
    hostile = "Case " + "".join(f"{m}x{i}" for i, m in enumerate(marks)) + " C-102"
    lines = p.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec["object_id"] == "CASE-C-102":
            rec["title"] = hostile
            lines[i] = json.dumps(rec, ensure_ascii=False)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert run_cli(["load"]).exit_code == 0
    out = project_copy / "runs" / "bidi"
    assert run_cli(["investigate", "C-102", "--out", out]).exit_code == 0
    page = _page(out)
    assert [m for m in marks if m in page] == []
    shown = "Case " + "".join(f"\\u{ord(m):04x}x{i}" for i, m in enumerate(marks)) + " C-102"
    assert f"<h3>{shown}</h3>" in page


# ------------------------------------------------------------------------------ errors
def test_bad_inputs_are_one_line_errors(runs, tmp_path):
    d = runs["c104"]
    cases = []
    r = run_cli(["report", tmp_path / "nope"])
    cases.append((r, "nope: no such file"))
    (tmp_path / "empty").mkdir()
    r = run_cli(["report", tmp_path / "empty"])
    cases.append((r, "a folder without pack.json"))
    pack = _pack(d)
    pack["answer"]["verdict"] = "complete!"
    bad = tmp_path / "tampered" / "pack.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(pack))
    r = run_cli(["report", bad])
    cases.append((r, "tampered"))
    mine = tmp_path / "notes.html"
    mine.write_text("<html>my notes</html>")
    r = run_cli(["report", d, "--out", mine])
    cases.append((r, "exists and was not written by ctx report; not replacing it"))
    r = run_cli(["report", d, "--out", tmp_path])
    cases.append((r, "exists and is not a regular file"))
    r = run_cli(["report", d, "--compare", tmp_path / "nope.json"])
    cases.append((r, "nope.json: no such file"))
    for r, frag in cases:
        assert r.exit_code == 2, (frag, r.stdout, r.stderr)
        assert r.stderr.startswith("ctx: error: ") and r.stderr.count("\n") == 1 and frag in r.stderr, r.stderr
    assert mine.read_text() == "<html>my notes</html>"
    assert not (d / "report.html").exists() or "ctx report" in (d / "report.html").read_text()


def test_an_earlier_report_is_replaced_and_json_summary(runs, tmp_path):
    out = tmp_path / "r.html"
    assert run_cli(["report", runs["c105"], "--out", out]).exit_code == 0
    r = run_cli(["report", runs["c105"], "--out", out, "--json"])
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    data = out.read_bytes()
    import hashlib

    assert doc == {"bytes": len(data), "compare": None, "notes": [], "out": str(out),
                   "pack_id": _pack(runs["c105"])["pack_id"], "sha256": "sha256:" + hashlib.sha256(data).hexdigest()}


def test_page_in_a_run_folder_is_listed_in_its_marker(runs, tmp_path):
    """A run folder lists the files ctx wrote in its `.ctx-run` marker (only such a folder may
    be replaced by a later --out); the page joins that list, the rest of the marker is kept."""
    import shutil

    d = tmp_path / "marked"
    shutil.copytree(runs["c104"], d)
    (d / "report.html").unlink(missing_ok=True)
    marker = d / ".ctx-run"
    if not marker.exists():
        marker.write_text(json.dumps({"schema_version": "ctx.run/1", "ctx_version": "0.1.0",
                                      "files": ["answer.json", "answer.md", "pack.json", "trace.jsonl"]}))
    before = json.loads(marker.read_text())
    _page(d)
    after = json.loads(marker.read_text())
    assert after == {**before, "files": sorted(before["files"] + ["report.html"])}
    _page(d)
    assert json.loads(marker.read_text()) == after
    # a folder without a marker gets none
    plain = tmp_path / "plain"
    plain.mkdir()
    shutil.copy(d / "pack.json", plain / "pack.json")
    _page(plain)
    assert sorted(p.name for p in plain.iterdir()) == ["pack.json", "report.html"]


def test_model_answer_with_validator_marks_is_shown(runs, tmp_path):
    """model_answer.json (the answer and its validation) and model.json (the exchange), in the
    shape `ctx ask` writes them."""
    import shutil

    d = tmp_path / "with-model"
    shutil.copytree(runs["default"], d)
    pack = _pack(d)
    ev = pack["evidence"][0]["evidence_id"]
    (d / "model_answer.json").write_text(json.dumps({
        "pack_id": pack["pack_id"], "content_hash": pack["content_hash"], "status": "rejected",
        "parse": {"ok": True, "method": "json_schema", "error": None},
        "answer": {"verdict": "complete", "recommended_action": "approve_claim", "summary": "Looks fine.",
                   "claims": [{"text": "The case waits for documents.", "status": "fact", "evidence": [ev]},
                              {"text": "The amount is <b>999999</b>.", "status": "fact",
                               "evidence": ["wh-0123456789abcdef"]}]},
        "validation": {
            "violations": [
                {"code": "cites_withheld", "message": "cites wh-0123456789abcdef, an object withheld from the subject",
                 "claim": 1, "id": "wh-0123456789abcdef"},
                {"code": "unsupported_value", "message": "'999999' is not in the evidence the claim cites",
                 "claim": 1, "value": "999999"},
                {"code": "action_not_in_vocabulary", "message": "action 'approve_claim' is not one of the playbook's"}],
            "warnings": [{"code": "action_disagrees", "message": "action 'approve_claim' differs from the deterministic "
                          "'route_to_human_reviewer'"}],
            "claims": [{"claim": 0, "ok": True, "cited": [ev], "in_pack": [ev]},
                       {"claim": 1, "ok": False, "cited": ["wh-0123456789abcdef"], "in_pack": []}],
            "counts": {"claims": 2, "claims_ok": 1, "violations": 3, "warnings": 1}},
        "deterministic": {"verdict": "complete", "recommended_action": "route_to_human_reviewer"},
        "used": "answer.json"}))
    (d / "model.json").write_text(json.dumps({
        "pack_id": pack["pack_id"], "model": "scripted-model", "endpoint": "127.0.0.1:8765", "latency_ms": 12,
        "usage": {"prompt_tokens": 3100, "completion_tokens": 90}}))
    _list_in_run_json(d, "model_answer.json", "model.json")
    page = _page(d)
    sec = page.split('<section id="model">')[1].split("</section>")[0]
    assert "model_answer.json · model scripted-model at 127.0.0.1:8765 · 12 ms" in sec
    assert ('<span class="badge m-rejected">rejected</span> verdict <b>complete</b> (deterministic: complete) · '
            'action <b>approve_claim</b> (deterministic: route_to_human_reviewer) · the answer used: answer.json') in sec
    assert '<li class="mark violation">✗ action_not_in_vocabulary: action &#39;approve_claim&#39; is not one of ' \
           "the playbook&#39;s</li>" in sec
    assert '<li class="mark warning">⚠ action_disagrees: ' in sec
    row0 = re.search(r'<tr id="model-claim-0">(.*?)</tr>', sec, re.S).group(1)
    row1 = re.search(r'<tr id="model-claim-1">(.*?)</tr>', sec, re.S).group(1)
    assert f'<a class="ev" href="#{ev}">{ev}</a>' in row0 and '<div class="mark ok">✓ checked</div>' in row0
    assert "The amount is &lt;b&gt;999999&lt;/b&gt;." in row1
    assert '<span class="ev missing" title="not in this pack">wh-0123456789abcdef</span>' in row1
    assert re.findall(r'<div class="mark violation">✗ ([a-z_]+):', row1) == ["cites_withheld", "unsupported_value"]
    assert "prompt_tokens 3100" in sec
    # the validation sits next to the deterministic claims: a line under them, then the section
    outcome = page.split('<section id="outcome">')[1].split("</section>")[0]
    assert ('<p class="model-line" id="model-verdict"><span class="badge m-rejected">model answer rejected</span> '
            "1 of 2 model claim(s) checked · 3 violation(s): action_not_in_vocabulary, cites_withheld, "
            "unsupported_value · not used: these claims (answer.json) stay the answer — "
            "<a href=\"#model\">the model's claims and the validator's marks</a></p>") in outcome
    assert page.index('<section id="outcome">') < page.index('<section id="model">') \
        < page.index('<section id="budget">') < page.index('<section id="trace">')
    assert '<a href="#outcome">Outcome</a><a href="#model">Model answer</a><a href="#budget">' in page
    # a model answer of another pack is not shown
    other = json.loads((d / "model_answer.json").read_text())
    other["pack_id"] = "pk-0000000000000000"
    (d / "model_answer.json").write_text(json.dumps(other))
    _list_in_run_json(d)
    page = _page(d)
    assert '<section id="model">' not in page
    assert "model_answer.json is not shown: it answers pack pk-0000000000000000, not " + pack["pack_id"] in page


def test_report_of_a_real_ctx_ask_run(store, serve, tmp_path, browser):
    """`ctx ask` against the scripted model server, then `ctx report`: the page shows the
    model's claims with the validator's marks, the trace with the model events, and passes
    the browser checks."""
    from .test_ask import ask, faithful, reply

    ans, pack = faithful()
    wh = "wh-0123456789abcdef"     # an opaque reference: a withheld record is never a candidate now
    ans["claims"].append({"text": "A fraud note exists for this case.", "status": "fact", "evidence": [wh]})
    run = tmp_path / "asked"
    assert ask(serve({"responses": [reply(ans)]}), run).exit_code == 1      # rejected
    page = _page(run)
    assert "is not shown" not in page                        # trace, answer and model files all belong
    sec = page.split('<section id="model">')[1].split("</section>")[0]
    assert "model_answer.json · model test-model at http://127.0.0.1:" in sec
    assert '<span class="badge m-rejected">rejected</span>' in sec
    rows = re.findall(r'<tr id="model-claim-(\d+)">(.*?)</tr>', sec, re.S)
    assert len(rows) == 7
    assert all('<div class="mark ok">✓ checked</div>' in r for _, r in rows[:6])
    assert f'<div class="mark violation">✗ cites_withheld: cites {wh}, an object withheld from the subject</div>' \
        in rows[6][1]
    assert "<b>model_called</b> model test-model at http://127.0.0.1:" in page
    assert "<b>model_answer_validated</b> rejected; violations cites_withheld" in page
    cited = [e for c in _answer(run)["claims"] for e in c["evidence"]]
    _check_in_browser(browser, run / "report.html", cited)


# ------------------------------------------------------------------------------ the audit section
CHAT = REPO / "examples" / "agent" / "audit" / "chat-request.json"


def _audit(tmp_path: Path, *extra) -> Path:
    r = run_cli(["audit-call", CHAT, "--case", "INC-2026-0723", "--json", *extra])
    assert r.exit_code == 1, r.stderr        # it flags spans
    f = tmp_path / "audit.json"
    f.write_text(r.stdout)
    return f


def _span_texts() -> dict[str, str]:
    from ctxcli.agents.audit import read_spans

    return {s.where: s.text for s in read_spans(json.loads(CHAT.read_text()))[1]}


def test_the_audit_section_lists_every_span_and_nothing_withheld(runs, store, tmp_path):
    f = _audit(tmp_path)
    doc = json.loads(f.read_text())
    d = runs["inc"]
    page = _text(_page(d, "--audit", f))
    assert '<a href="#audit">Audit (6 flagged)</a>' in page and '<section id="audit">' in page
    sec = page[page.index('<section id="audit">'):]
    for s in doc["spans"]:
        assert f"<code>{html.escape(s['span'])}</code>" in sec
    assert "3 withheld · 2 injection · 1 invalid_at_as_of · 1 admitted · 5 unknown_origin" in sec
    held = [s for s in doc["spans"] if s["status"] == "withheld"]
    refs = [m["ref"] for s in held for m in s["matches"] if m["status"] == "withheld"]
    assert len(refs) == 3 and all(f"<code>{r}</code> withheld by" in sec for r in refs)
    texts = _span_texts()
    for s in held:          # no 30-character stretch of a withheld span's text reaches the section
        t = texts[s["span"]]
        # (the page may hold the masked form of an object withheld by redaction: the run's own evidence)
        where = sec if s["matches"][0]["gate"] == "redaction" else page
        assert not [t[i:i + 30] for i in range(0, max(1, len(t) - 30)) if html.escape(t[i:i + 30]) in where], s["span"]
    # a doctored document: a withheld match that also names its object is shown by its ref only
    for s in doc["spans"]:
        for m in s["matches"]:
            if m["status"] == "withheld":
                m.update(object_id="OTH-RB-PAYAPI", source_id="pay-tenant-other-ops", text="SECRET-TEXT")
    f.write_text(json.dumps(doc))
    page = _text(_page(d, "--audit", f))
    assert "OTH-RB-PAYAPI" not in page and "pay-tenant-other-ops" not in page and "SECRET-TEXT" not in page
    # an audit made for a subject with other scopes is refused: it could name what this reader may not see
    g = tmp_path / "other.json"
    r = run_cli(["audit-call", CHAT, "--case", "INC-2026-0723", "--subject", "oncall-03", "--scope", "incident:read",
                 "--scope", "security:read", "--json"])
    g.write_text(r.stdout)
    r = run_cli(["report", d, "--audit", g])
    assert r.exit_code == 2 and r.stderr == (
        f"ctx: error: {g}: scopes: the audit was made for other scopes than this run's: an audit is shown only in "
        "a report for the subject, scopes, clearance and purpose it was made for\n")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    r = run_cli(["report", d, "--audit", bad])
    assert r.exit_code == 2 and "not a ctx.audit-call/1 document" in r.stderr
    # issue 46: a FIFO, a folder or a link is exit 2 with one line (a FIFO used to hang)
    import os

    fifo = tmp_path / "audit.fifo"
    os.mkfifo(fifo)
    link = tmp_path / "link.json"
    link.symlink_to(f)
    for p, why in ((fifo, "not a regular file (a FIFO)"), (tmp_path, "not a regular file (a folder)"),
                   (link, "a symbolic link (not followed)")):
        r = run_cli(["report", d, "--audit", p])
        assert r.exit_code == 2 and r.stderr == f"ctx: error: {p}: {why}\n", r.stderr


def test_the_audit_section_in_headless_chromium(runs, store, browser, tmp_path):
    d = runs["inc"]
    _page(d, "--audit", _audit(tmp_path))
    cited = [e for c in _answer(d)["claims"] for e in c["evidence"]]
    _check_in_browser(browser, d / "report.html", cited)
    n = browser.evaluate("document.querySelectorAll('#audit table.audit tbody tr').length")
    assert n == 12


# ------------------------------------------------------------------------------ in a browser
@pytest.fixture(scope="module")
def browser():
    binary = find_chromium()
    if binary is None:
        msg = ("headless Chromium is not installed (Debian package `chromium`; .ci/run installs it with "
               "`apt-get install -y chromium`): the browser checks of ctx report did not run")
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    with Browser(binary) as b:
        yield b


LINKS_JS = """(() => {
  const links = [...document.querySelectorAll('a[href^="#"]')];
  const broken = links.filter(a => !document.getElementById(decodeURIComponent(a.getAttribute('href').slice(1))));
  const claimLinks = [...document.querySelectorAll('#outcome table.claims a.ev')];
  return {links: links.length, broken: broken.map(a => a.getAttribute('href')),
          claimTargets: claimLinks.map(a => { const t = document.getElementById(a.getAttribute('href').slice(1));
                                              return t ? t.tagName + '#' + t.id : null; }),
          scripts: document.scripts.length};
})()"""


def _check_in_browser(b: Browser, page: Path, expected_claim_links: list[str]) -> bytes:
    load = b.open(file_url(page), width=1280, height=900)
    assert load.loaded
    assert load.requests == [file_url(page)], load.requests        # the page itself, nothing else
    assert [c for c in load.console if c["level"] in ("error", "warning")] == [], load.console
    assert load.exceptions == []
    res = b.evaluate(LINKS_JS)
    assert res["broken"] == [] and res["links"] > 0 and res["scripts"] == 0
    assert res["claimTargets"] == ["ARTICLE#" + e for e in expected_claim_links]
    png = b.screenshot()
    colours, ink = colour_stats(png)
    assert colours > 50 and ink > 0.1, (colours, ink)   # text, badges and bars: not a blank page
    return png


@pytest.mark.parametrize("name", list(RUNS))
def test_page_in_headless_chromium(runs, browser, name):
    d = runs[name]
    _page(d)
    cited = [e for c in _answer(d)["claims"] for e in c["evidence"]]
    _check_in_browser(browser, d / "report.html", cited)


def test_compare_page_in_headless_chromium(runs, browser):
    d = runs["default"]
    _page(d, "--compare", runs["restricted"])
    cited = [e for c in _answer(d)["claims"] for e in c["evidence"]]
    _check_in_browser(browser, d / "report.html", cited)
    # following a claim's link scrolls to its card and highlights it (:target)
    first = cited[0]
    browser.evaluate(f"location.hash = '#{first}'")
    assert browser.evaluate(f"getComputedStyle(document.getElementById('{first}')).borderTopColor") == \
        "rgb(11, 87, 208)"


def test_hostile_title_is_text_in_the_browser(project_copy, browser):
    test_hostile_title_renders_as_text(project_copy)
    page = project_copy / "page.html"
    load = browser.open(file_url(page))
    assert load.requests == [file_url(page)] and load.exceptions == []
    assert browser.evaluate("document.scripts.length + document.images.length") == 0
    title = browser.evaluate("document.querySelector('article.card h3').textContent")
    assert title == '<script>alert("x")</script><img src=x onerror=alert(1)> Case \\u202eC-102'


def test_the_harness_sees_requests_console_errors_and_blank_pages(browser, tmp_path):
    """The checks above can fail: a page that fetches, logs an error or is blank is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><img src="http://127.0.0.1:9/x.png"><script>console.error("boom")</script>')
    load = browser.open(file_url(bad))
    assert "http://127.0.0.1:9/x.png" in load.requests
    assert any(c["level"] == "error" and "boom" in c["text"] for c in load.console)
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><title>x</title>")
    browser.open(file_url(blank))
    colours, ink = colour_stats(browser.screenshot())
    assert colours == 1 and ink == 0.0


PHONE_JS = """JSON.stringify({
  page: document.documentElement.scrollWidth,
  sections: [...document.querySelectorAll('section')].map(s => [s.id, Math.round(s.getBoundingClientRect().right)]),
  verdict: Math.round(document.querySelector('.verdict').getBoundingClientRect().height),
  tables: [...document.querySelectorAll('table')].map(t => Math.round(t.getBoundingClientRect().right)),
})"""


def test_the_page_fits_a_phone_at_390_px(runs, browser):
    """No horizontal scrolling of the page at 390 px: one column, tables scroll in their own box (issue 31.7)."""
    d = runs["default"]
    _page(d, "--compare", runs["restricted"])
    browser.open(file_url(d / "report.html"), width=390, height=900)
    got = json.loads(browser.evaluate(PHONE_JS))
    assert got["page"] <= 390, got
    assert all(right <= 390 for _, right in got["sections"]), got["sections"]
    assert all(right <= 390 for right in got["tables"]), got["tables"]
    assert got["verdict"] < 400, got["verdict"]      # the verdict card is a card, not a 7,000 px column


PRINT_JS = """JSON.stringify({
  nav: getComputedStyle(document.querySelector('nav.toc')).display,
  hidden: [...document.querySelectorAll('details:not([open]) pre, details:not([open]) ol')]
           .filter(e => !e.checkVisibility()).length,
  collapsed: document.querySelectorAll('details:not([open])').length,
  breaks: getComputedStyle(document.getElementById('evidence')).breakBefore,
})"""


def test_print_opens_every_collapsed_section(runs, browser):
    d = runs["default"]
    _page(d)
    browser.open(file_url(d / "report.html"), width=1000, height=900)
    assert json.loads(browser.evaluate(PRINT_JS))["hidden"] > 0           # on screen: collapsed
    browser.call("Emulation.setEmulatedMedia", {"media": "print"})
    got = json.loads(browser.evaluate(PRINT_JS))
    assert got["collapsed"] > 0 and got["hidden"] == 0, got
    assert (got["nav"], got["breaks"]) == ("none", "page")


# A phone (issue 49 item 12): stacked table rows, ids wrapped only after a separator.
STACK_JS = r"""(() => {
  const main = document.querySelector('main');
  const cells = [...main.querySelectorAll('td')].filter(c => c.textContent.trim() && !c.classList.contains('lead'));
  const narrow = cells.filter(c => c.getBoundingClientRect().width < 150)
                      .map(c => [Math.round(c.getBoundingClientRect().width), c.textContent.trim().slice(0, 40)]);
  const lines = el => {            // the distinct line tops of an element's text, character by character
    const r = document.createRange(), tops = [];
    const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      for (let i = 0; i < n.data.length; i++) {
        r.setStart(n, i); r.setEnd(n, i + 1);
        const rs = r.getClientRects();
        if (rs.length) tops.push([Math.round(rs[0].top), n.data[i]]);
      }
    }
    return tops;
  };
  const badBreaks = [], wrapped = [];
  for (const el of main.querySelectorAll('code:not(.hash), a.ev, .evid, dl.kv dt, dl.kv dd:not(:has(.hash)), td.lead')) {
    const tops = lines(el), text = tops.map(t => t[1]).join(''), hex = new Set();
    for (const m of text.matchAll(/[0-9a-f]{16,}/g)) for (let k = m.index + 1; k < m.index + m[0].length; k++) hex.add(k);
    for (let i = 1; i < tops.length; i++) {
      if (tops[i][0] > tops[i - 1][0] + 2) {
        wrapped.push(el.textContent);
        // a break after a separator or a space, or inside a hash (a hex run, which has no separator)
        if (!/[-_.\/:@#,=\s]/.test(tops[i - 1][1]) && !hex.has(i)) badBreaks.push(text.slice(0, 80) + ' | after ' + tops[i - 1][1]);
      }
    }
  }
  const oneLine = sel => [...main.querySelectorAll(sel)].filter(e => new Set(lines(e).map(t => t[0])).size > 1)
                                                       .map(e => e.textContent);
  const dts = [...main.querySelectorAll('dl.kv dt')].filter(d => d.textContent === 'unless_scopes');
  return JSON.stringify({page: document.documentElement.scrollWidth, cells: cells.length, narrow, badBreaks,
                         wrapped: wrapped.length, evidence_ids: oneLine('a.ev, .evid'), keys: oneLine('dl.kv dt'),
                         unless: dts.map(d => [Math.round(d.getBoundingClientRect().width),
                                               Math.round(d.nextElementSibling.getBoundingClientRect().width)]),
                         thead: getComputedStyle(main.querySelector('thead')).display});
})()"""


@pytest.mark.parametrize("name", ["default", "inc"])
def test_tables_stack_into_rows_and_ids_wrap_only_after_separators_at_390_px(runs, browser, store, tmp_path, name):
    """At 390 px (issue 49 item 12): the page never scrolls sideways; every table is stacked rows
    (each cell a full-width line under its column's name, so ``unless_scopes`` is a word, not a
    column of letters); an evidence id is never wrapped; any other id, key or value wraps only
    after a separator (- _ . / : @ # , =) or a space."""
    d = runs[name]
    if name == "default":
        _page(d, "--compare", runs["restricted"])
    else:
        _page(d, "--audit", _audit(tmp_path))
    browser.open(file_url(d / "report.html"), width=390, height=900)
    got = json.loads(browser.evaluate(STACK_JS))
    assert got["page"] <= 390, got["page"]
    assert got["thead"] == "none" and got["cells"] > 100, got
    assert got["narrow"] == [], got["narrow"]
    assert got["badBreaks"] == [], got["badBreaks"]
    assert got["wrapped"] > 0          # long ids and lists do wrap (at their separators): the check saw wraps
    assert got["evidence_ids"] == [] and got["keys"] == [], got
    assert got["unless"] and all(dt >= 70 and dd >= 150 for dt, dd in got["unless"]), got["unless"]


def test_claim_ids_keep_one_line_beside_their_row_on_a_wide_screen(runs, browser):
    """The break opportunities a phone needs do not fold a claim id on a wide screen (or on paper):
    at 1280 px every claim id is one line, at 390 px a claim id may wrap after a separator."""
    d = runs["default"]
    _page(d)
    js = ("[...document.querySelectorAll('table.claims td.lead code')]"
          ".map(e => new Set([...e.getClientRects()].map(r => Math.round(r.top))).size)")     # its lines
    browser.open(file_url(d / "report.html"), width=1280, height=900)
    assert browser.evaluate(js) == [1] * len(_answer(d)["claims"])
    assert browser.evaluate("getComputedStyle(document.querySelector('table.claims td.lead wbr')).display") == "none"
    browser.open(file_url(d / "report.html"), width=390, height=900)
    assert browser.evaluate("getComputedStyle(document.querySelector('table.claims td.lead wbr')).display") == "inline"


PRINT_LAYOUT_JS = """JSON.stringify({
  media: matchMedia('print').matches,
  thead: getComputedStyle(document.querySelector('table.claims thead')).display,
  cell: getComputedStyle(document.querySelector('table.claims td')).display,
  row_tops: new Set([...document.querySelector('table.claims tbody tr').children]
                    .map(c => Math.round(c.getBoundingClientRect().top))).size,
  columns: document.querySelector('table.claims tbody tr').children.length,
  nav: getComputedStyle(document.querySelector('nav.toc')).display,
  sticky: [...document.querySelectorAll('body *')].filter(e => e.checkVisibility() && ['sticky', 'fixed'].includes(getComputedStyle(e).position)).length,
  header_bg: getComputedStyle(document.querySelector('header.top')).backgroundColor,
})"""


def test_print_has_its_own_layout_and_a_bounded_page_count(runs, browser):
    """Printed (issue 49 item 12: the PDF used to print the phone layout, 27 pages): even from a
    phone-sized window, print uses its own layout — tables with their headings and columns side
    by side, no navigation, nothing sticky, no dark header — and the bundled C-102 run prints on
    A4 in at most 13 pages (measured: 12, and 14 compared with the restricted run; the phone
    layout printed 24 and 28)."""
    d = runs["default"]
    _page(d)
    browser.open(file_url(d / "report.html"), width=390, height=900)
    browser.call("Emulation.setEmulatedMedia", {"media": "print"})
    got = json.loads(browser.evaluate(PRINT_LAYOUT_JS))
    assert got == {"media": True, "thead": "table-header-group", "cell": "table-cell", "row_tops": 1, "columns": 4,
                   "nav": "none", "sticky": 0, "header_bg": "rgba(0, 0, 0, 0)"}, got
    # nothing is wider than an A4 page's printable width (210 - 2 × 11 mm: 703 px), so nothing is cut off
    browser.open(file_url(d / "report.html"), width=703, height=900)
    browser.call("Emulation.setEmulatedMedia", {"media": "print"})
    assert browser.evaluate("document.documentElement.scrollWidth") <= 703
    browser.call("Emulation.setEmulatedMedia", {"media": ""})
    pages = pdf_pages(browser.pdf())
    assert 3 <= pages <= 13, pages
    _page(d, "--compare", runs["restricted"])
    browser.open(file_url(d / "report.html"), width=390, height=900)
    assert pdf_pages(browser.pdf()) <= 15


def test_every_mark_has_a_legend(runs):
    page = _page(runs["default"])
    for lid, words in (("legend-budget", ["hatched: reserved for the model's response", "pale: allocated, unused"]),
                       ("legend-status", ["fact</span>", "inference</span>", "hypothesis</span>", "unknown</span>"]),
                       ("legend-trust", ["authoritative</span>", "operational</span>", "untrusted</span>"])):
        m = re.search(rf'<ul class="legend marks-legend" id="{lid}">(.*?)</ul>', page, re.S)
        assert m, lid
        for w in words:
            assert w in m.group(1), (lid, w)


def test_compare_matches_a_withheld_object_with_the_store_secret_as_ctx_diff_does(runs, bundled_store, monkeypatch,
                                                                                  tmp_path):
    """An object B withheld as an opaque ref (made here: the statements withhold before
    retrieval now) is matched to A's evidence with the store's secret (--db, as `ctx diff`), and
    is unknown without it — never "not a candidate"."""
    import ctxcli.report as report_mod
    from ctxcli import api
    from ctxcli.util.canon import opaque_ref

    a, b = runs["default"], runs["restricted"]
    tenant = _pack(b)["request"]["tenant_id"]
    ref = opaque_ref(tenant, "RULE-MCS-2026.1", key=api.store_key(bundled_store, create=False))
    real = report_mod.load_run

    def with_withheld(p):
        run = real(p)
        if Path(p) == b:
            run.pack["omissions"].append({"ref": ref, "withheld": True, "gate": "scope", "reason": "missing_scope",
                                          "detail": {"needs": ["policy:read"]}, "round": 1,
                                          "channels": {"structured": 3}, "rrf": 0.016})
        return run

    monkeypatch.setattr(report_mod, "load_run", with_withheld)
    ev = {e["object_id"]: e["evidence_id"] for e in _pack(a)["evidence"]}["RULE-MCS-2026.1"]
    row = (f"<tr><td><code>RULE-MCS-2026.1 (claims-rules)</code></td><td>admitted as {ev}</td>"
           "<td>withheld by scope</td></tr>")
    page = _text(_page(a, "--compare", b, "--db", bundled_store))
    assert row in page and ref not in page
    monkeypatch.setenv("CTX_DB", str(tmp_path / "elsewhere" / "ctx.duckdb"))
    page = _text(_page(a, "--compare", b))
    assert row not in page
    assert (f"<tr><td><code>{ref}</code></td><td>unknown (matching a withheld object needs the store&#39;s secret: "
            "--db)</td><td>withheld by scope</td></tr>") in page
    assert not (tmp_path / "elsewhere").exists()           # the report never creates a secret
