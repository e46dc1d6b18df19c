"""Post-mortems of packs (issue 4): ctx replay, ctx explain-omissions, ctx diff.

Packs are built through the CLI into tmp_path; stores are the bundled one (read-only) or a
private project copy that a test edits and reloads.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from .conftest import run_cli

SECRETS = ("SIU referral note", "Special investigations unit", "SIU-NOTE-C102")


# ------------------------------------------------------------------------------ helpers
def _pack(out: Path, *args) -> Path:
    r = run_cli(["investigate", "C-102", "--out", out, *args])
    assert r.exit_code == 0, r.stderr
    return out / "pack.json"


def _json(r) -> dict:
    return json.loads(r.stdout)


def _record(proj: Path, rel: str, object_id: str) -> dict:
    for line in (proj / rel).read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("object_id") == object_id:
            return rec
    raise AssertionError(object_id)


def _edit_record(proj: Path, rel: str, object_id: str, fn) -> None:
    p = proj / rel
    lines = p.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        if rec.get("object_id") == object_id:
            lines[i] = json.dumps(fn(rec), ensure_ascii=False)
            break
    else:
        raise AssertionError(object_id)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _load(proj: Path) -> None:
    r = run_cli(["load"])
    assert r.exit_code == 0, r.stderr


def _one_line_error(r, *fragments: str) -> str:
    assert r.exit_code == 2, (r.exit_code, r.stdout[-400:], r.stderr)
    err = r.stderr
    assert err.startswith("ctx: error: ") and err.count("\n") == 1, repr(err)
    assert "Traceback" not in err and "internal error" not in err
    for f in fragments:
        assert f in err, (f, err)
    return err


@pytest.fixture
def c102(store, tmp_path) -> Path:
    return _pack(tmp_path / "default")


@pytest.fixture
def restricted(store, tmp_path) -> Path:
    return _pack(tmp_path / "restricted", "--variant", "restricted")


# ------------------------------------------------------------------------------ replay
def test_replay_fresh_pack_is_identical_byte_for_byte(c102, tmp_path):
    r = run_cli(["replay", c102])
    assert r.exit_code == 0, r.stderr
    assert "identical" in r.stdout and "byte for byte" in r.stdout

    r = run_cli(["replay", c102, "--json", "--out", tmp_path / "again"])
    assert r.exit_code == 0
    doc = _json(r)
    assert doc["status"] == "identical" and doc["byte_identical"] is True
    assert doc["rebuilt_pack_id"] == doc["pack_id"] == json.loads(c102.read_text())["pack_id"]
    assert doc["evidence_added"] == doc["evidence_removed"] == doc["evidence_changed"] == doc["purged"] == []
    assert (tmp_path / "again" / "pack.json").read_bytes() == c102.read_bytes()


def test_replay_after_content_edit_drifts_naming_object_and_source(project_copy, tmp_path):
    _load(project_copy)
    pack = _pack(tmp_path / "p")
    _edit_record(project_copy, "sources/claims-rules/objects.jsonl", "RULE-MCS-2026.1",
                 lambda r: {**{k: v for k, v in r.items() if k != "content_hash"},
                            "content": r["content"] + " Amended after the pack was built."})
    _load(project_copy)

    r = run_cli(["replay", pack, "--against", "current"])
    assert r.exit_code == 1, r.stderr
    assert "drifted" in r.stdout
    assert "source claims-rules changed" in r.stdout
    assert "evidence changed: RULE-MCS-2026.1 (source claims-rules)" in r.stdout
    assert "store digest changed" in r.stdout

    r = run_cli(["replay", pack, "--json", "--against", "current"])
    assert r.exit_code == 1
    doc = _json(r)
    assert doc["status"] == "drifted" and doc["byte_identical"] is False
    assert doc["store"]["recorded"] != doc["store"]["current"]
    assert [s["source_id"] for s in doc["store"]["sources_changed"]] == ["claims-rules"]
    changed = {c["object_id"]: c for c in doc["evidence_changed"]}
    assert changed["RULE-MCS-2026.1"]["source_id"] == "claims-rules"
    assert "content_hash" in changed["RULE-MCS-2026.1"]["fields"]
    assert changed["RULE-MCS-2026.1"]["a"]["content_hash"] != changed["RULE-MCS-2026.1"]["b"]["content_hash"]
    assert doc["purged"] == []


def test_replay_after_tombstone_reports_purged_without_content(project_copy, tmp_path):
    _load(project_copy)
    pack = _pack(tmp_path / "p")
    cited = {e["object_id"] for e in json.loads(pack.read_text())["evidence"]}
    assert "DOC-C102-003" in cited
    rec = _record(project_copy, "sources/claims-documents/objects.jsonl", "DOC-C102-003")
    with open(project_copy / "sources/claims-documents/tombstones.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"object_id": "DOC-C102-003", "tenant_id": "tenant-demo",
                             "deleted_at": "2026-07-24T09:00:00+08:00",
                             "reason": "Filed under the wrong claim."}) + "\n")
    _load(project_copy)

    r = run_cli(["replay", pack, "--against", "current"])
    assert r.exit_code == 1, r.stderr
    assert "drifted" in r.stdout
    assert "purged: DOC-C102-003 (source claims-documents)" in r.stdout
    assert "tombstoned on 2026-07-24T09:00:00+08:00" in r.stdout
    rj = run_cli(["replay", pack, "--json", "--against", "current"])
    assert rj.exit_code == 1
    doc = _json(rj)
    purged = {p["object_id"]: p for p in doc["purged"]}
    assert purged["DOC-C102-003"]["how"] == "tombstoned"
    assert purged["DOC-C102-003"]["source_id"] == "claims-documents"
    assert "DOC-C102-003" not in {c["object_id"] for c in doc["evidence_removed"]}
    for out in (r.stdout, rj.stdout):
        assert rec["content"] not in out and rec["content"][:40] not in out
        assert rec["title"] not in out


def test_replay_of_hand_edited_pack_is_tampered(c102):
    data = json.loads(c102.read_text())
    data["answer"]["verdict"] = "insufficient_evidence"
    c102.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    for cmd in (["replay", c102], ["replay", c102, "--json"], ["explain-omissions", c102], ["diff", c102, c102]):
        r = run_cli(cmd)
        _one_line_error(r, "tampered", str(c102))
        assert r.stdout == ""


def test_reformatted_pack_is_not_tampered(c102):
    data = json.loads(c102.read_text())
    c102.write_text(json.dumps(data))   # same content, other formatting
    r = run_cli(["replay", c102, "--json"])
    assert r.exit_code == 0
    assert _json(r)["status"] == "identical" and _json(r)["byte_identical"] is False


def test_replay_names_a_changed_playbook(project_copy, tmp_path):
    _load(project_copy)
    pack = _pack(tmp_path / "p")
    pb = project_copy / "manifests" / "playbooks" / "motor-claim-review.yaml"
    pb.write_text(pb.read_text(encoding="utf-8").replace('version: "1.0.0"', 'version: "1.0.1"', 1)
                  .replace("Side effects: none.", "Side effects: none, ever.", 1), encoding="utf-8")
    r = run_cli(["replay", pack, "--json"])
    assert r.exit_code == 1
    versions = {c["field"]: (c["a"], c["b"]) for c in _json(r)["versions"]}
    assert versions["playbook.version"] == ("1.0.0", "1.0.1")
    assert "playbook.hash" in versions
    assert _json(r)["store"]["sources_changed"] == []
    r = run_cli(["replay", pack])
    assert "playbook.version changed: 1.0.0 → 1.0.1" in r.stdout


def test_replay_against_a_missing_store(c102, tmp_path):
    _one_line_error(run_cli(["replay", c102, "--db", tmp_path / "nowhere.duckdb"]), "no store at")


# ------------------------------------------------------------------------------ bad input
BAD_PACKS = [
    ("missing", None, "no such file"),
    ("not_json", b"{not json", "not valid JSON"),
    ("array", b"[1, 2]", "not an object"),
    ("no_schema", b'{"pack_id": "pk-1"}', "no schema_version"),
    ("unknown_schema", b'{"schema_version": "ctx.pack/9"}', "unknown pack schema version 'ctx.pack/9'"),
    ("not_a_pack", b'{"schema_version": "ctx.pack/1", "hello": 1}', "not a pack"),
]


@pytest.mark.parametrize("name,content,fragment", BAD_PACKS, ids=[b[0] for b in BAD_PACKS])
@pytest.mark.parametrize("cmd", ["replay", "explain-omissions", "diff", "render"])
def test_bad_pack_is_one_line_exit_2(store, tmp_path, name, content, fragment, cmd):
    p = tmp_path / "pack.json"
    if content is not None:
        p.write_bytes(content)
    args = [cmd, p] + ([p] if cmd == "diff" else [])
    r = run_cli(args)
    _one_line_error(r, fragment, str(p))
    assert r.stdout == ""


def test_replay_when_case_or_playbook_is_gone(project_copy, tmp_path):
    _load(project_copy)
    pack = _pack(tmp_path / "p")
    pb = project_copy / "manifests" / "playbooks" / "motor-claim-review.yaml"
    saved = pb.read_bytes()
    pb.unlink()
    _one_line_error(run_cli(["replay", pack]), "the pack's playbook 'motor-claim-review' no longer exists")
    pb.write_bytes(saved)
    (project_copy / "examples" / "cases" / "C-102.yaml").unlink()
    err = _one_line_error(run_cli(["replay", pack]), "the pack's case 'C-102' no longer exists")
    assert str(project_copy) not in err


# ------------------------------------------------------------------------------ explain-omissions
def test_explain_omissions_c102_validity_and_order(c102):
    r = run_cli(["explain-omissions", c102, "--json"])
    assert r.exit_code == 0, r.stderr
    doc = _json(r)
    pack = json.loads(c102.read_text())
    gates = [g["gate"] for g in doc["gates"]]
    assert gates == [g for g in pack["gate_order"] if g in gates]
    assert doc["total"] == len(pack["omissions"])
    by_id = {o.get("object_id", o["ref"]): (g["gate"], o) for g in doc["gates"] for o in g["omissions"]}
    gate, om = by_id["RULE-MCS-2025.4"]
    assert gate == "validity"
    assert om["sentence"] == ("valid until 2026-01-01T00:00:00+08:00, before as_of 2026-07-23T12:00:00+08:00; "
                              "replaced by RULE-MCS-2026.1 (version rules-2026.07.01)")
    assert om["would_admit"] == ["an as_of inside its validity (before 2026-01-01T00:00:00+08:00)"]
    assert by_id["DOC-C102-001-REEXPORT"][0] == "duplicate"
    # the SIU note (scope) and the audit extract (purpose) were withheld inside the statements:
    # never candidates, so no omission names them; what was withheld is a count per gate
    assert not [o for g in doc["gates"] for o in g["omissions"] if o["withheld"]]
    assert doc["withheld"] == {"scope": 1, "purpose": 1}

    r = run_cli(["explain-omissions", c102])
    assert r.exit_code == 0
    out = r.stdout
    assert "RULE-MCS-2025.4" in out
    assert "replaced by RULE-MCS-2026.1" in out
    assert "withheld for access by scope: at least 1 item(s), by purpose: at least 1 item(s)" in " ".join(out.split())
    assert "would have admitted it" in out
    assert out.index("validity — ") < out.index("relevance — ")
    for s in SECRETS:
        assert s not in out and s not in json.dumps(doc)


def test_explain_omissions_c102_untrusted_email(c102):
    r = run_cli(["explain-omissions", c102, "--gate", "injection", "--json"])
    assert r.exit_code == 0
    doc = _json(r)
    assert [g["gate"] for g in doc["gates"]] == ["injection"]
    om = {o["object_id"]: o for o in doc["gates"][0]["omissions"]}["MAIL-7781"]
    assert om["sentence"].startswith("untrusted source (trust untrusted), matched instruction pattern '")
    assert om["would_admit"] == ["text without instruction-like wording", "an authoritative source whose "
                                 "manifest accepts content (injection.accept_fields)"]
    r = run_cli(["explain-omissions", c102, "--gate", "injection"])
    assert "MAIL-7781" in r.stdout and "untrusted source (trust untrusted)" in r.stdout


def test_explain_omissions_gate_filter(c102):
    r = run_cli(["explain-omissions", c102, "--gate", "validity", "--json"])
    assert r.exit_code == 0
    doc = _json(r)
    assert [g["gate"] for g in doc["gates"]] == ["validity"]
    assert {o["object_id"] for o in doc["gates"][0]["omissions"]} == {"RULE-MCS-2025.4", "RULE-MCS-2026.3"}
    _one_line_error(run_cli(["explain-omissions", c102, "--gate", "colour"]), "unknown gate 'colour'")


def test_explain_omissions_restricted_lists_withheld_with_scopes_only(restricted):
    r = run_cli(["explain-omissions", restricted, "--json"])
    assert r.exit_code == 0
    doc = _json(r)
    # withheld inside the statements: counted per gate, never listed one by one
    assert not any(g["gate"] == "scope" for g in doc["gates"])
    assert doc["withheld"]["scope"] > 10
    needs = {s for m in doc["missing"] for s in m["withheld"]["needs_scopes"]}
    assert {"policy:read", "document:read", "risk:read", "fraud:read"} <= needs
    human = run_cli(["explain-omissions", restricted])
    assert human.exit_code == 0
    assert f"withheld for access by purpose: at least 1 item(s), by scope: at least {doc['withheld']['scope']}" \
        not in human.stdout
    assert f"by scope: at least {doc['withheld']['scope']} item(s)" in " ".join(human.stdout.split())
    assert "policy_version (withheld_for_access)" in " ".join(human.stdout.split())
    for out in (human.stdout, r.stdout):
        for s in SECRETS + ("RULE-MCS-2026.1", "MAIL-7781", "road traffic accident"):
            assert s not in out

    # asking for the SIU note by id says only that it is withheld and what it needs
    for args in (["--object", "SIU-NOTE-C102"], ["--object", "SIU-NOTE-C102", "--json"]):
        r = run_cli(["explain-omissions", restricted, *args])
        assert r.exit_code == 0
        assert "withheld" in r.stdout and "fraud:read" in r.stdout
        for s in SECRETS[:2] + ("risk-signals", "risk_signal", "claim_amount_signal"):
            assert s not in r.stdout


def test_explain_object_that_matched_no_channel(c102):
    r = run_cli(["explain-omissions", c102, "--object", "CASE-C-101", "--json"])
    assert r.exit_code == 0, r.stderr
    doc = _json(r)
    assert doc["status"] == "not_matched"
    assert doc["sentence"].startswith("never a candidate: no channel matched it")
    assert "102" in doc["searched"]["fulltext_terms"]
    assert doc["searched"]["seeds"] == ["case:C-102"] and doc["searched"]["business_keys"] == ["C-102"]
    assert "case_ruleset" in doc["searched"]["graph_templates"]
    q1 = doc["queries"][0]
    assert q1["channel"] == "structured" and q1["evidence_type"] == "case_status"
    assert q1["outcome"].startswith("it is about case:C-101, not a seed (case:C-102)")
    assert {q["channel"] for q in doc["queries"]} == {"structured", "fulltext", "graph"}

    r = run_cli(["explain-omissions", c102, "--object", "CASE-C-101"])
    assert r.exit_code == 0
    assert "CASE-C-101: never a candidate: no channel matched it" in r.stdout
    assert "searched: full-text terms motor_claim_standard" in r.stdout
    assert "Queries that ran" in r.stdout

    r = run_cli(["explain-omissions", c102, "--object", "HB-MOTOR-CLAIMS-2026#scope", "--json"])
    doc = _json(r)
    assert doc["status"] == "not_matched"
    assert all("does not support" in q["outcome"] for q in doc["queries"])
    assert doc["would_admit"] == ["a playbook evidence type it supports (handbook_guidance)"]


def test_explain_object_in_another_tenant_says_nothing_else(c102, store):
    from ctxcli.store.db import open_reader

    con = open_reader(store)
    title, source = con.execute("SELECT title, source_id FROM objects WHERE object_id = 'OTHER-CASE-C-102'").fetchone()
    con.close()
    for args in ([], ["--json"]):
        r = run_cli(["explain-omissions", c102, "--object", "OTHER-CASE-C-102", *args])
        assert r.exit_code == 1 and r.stderr == ""              # as for an id that exists nowhere
        assert "another tenant" not in r.stdout                  # answered like an id that exists nowhere
        assert title not in r.stdout and source not in r.stdout and "tenant-other" not in r.stdout
        none = run_cli(["explain-omissions", c102, "--object", "NO-SUCH-OBJECT-X", *args])
        assert none.exit_code == 1
        assert r.stdout.replace("OTHER-CASE-C-102", "ID") == none.stdout.replace("NO-SUCH-OBJECT-X", "ID")
    doc = _json(r)
    assert doc["status"] == "not_found"
    assert set(doc) == {"object_id", "pack_id", "status", "sentence"}


def test_explain_object_admitted_omitted_tombstoned_missing(c102):
    def ask(oid):
        r = run_cli(["explain-omissions", c102, "--object", oid, "--json"])
        assert r.exit_code == (1 if oid.startswith("NO-SUCH") else 0), r.stderr
        return _json(r)

    assert ask("RULE-MCS-2026.1")["status"] == "admitted"
    om = ask("RULE-MCS-2025.4")
    assert om["status"] == "omitted" and om["gate"] == "validity" and "replaced by RULE-MCS-2026.1" in om["sentence"]
    t = ask("DOC-C102-009")
    assert t["status"] == "tombstoned" and t["sentence"].startswith("never a candidate: tombstoned on 2026-07-09")
    assert t["source_id"] == "claims-documents"
    assert ask("NO-SUCH-OBJECT")["status"] == "not_found"
    r = run_cli(["explain-omissions", c102, "--object", "NO-SUCH-OBJECT"])
    assert r.exit_code == 1 and r.stderr == "" and len(r.stdout.splitlines()) == 1     # issue 49: one line, exit 1
    assert r.stdout.startswith("NO-SUCH-OBJECT: not found")
    _one_line_error(run_cli(["explain-omissions", c102, "--object", "X", "--gate", "scope"]), "--gate and --object")


def test_explain_object_of_disabled_source(project_copy, tmp_path):
    m = project_copy / "manifests" / "sources" / "claims-handbook.yaml"
    m.write_text(m.read_text(encoding="utf-8").replace("enabled: true", "enabled: false"), encoding="utf-8")
    _load(project_copy)
    pack = _pack(tmp_path / "p")
    r = run_cli(["explain-omissions", pack, "--object", "HB-MOTOR-CLAIMS-2026#scope", "--json"])
    assert r.exit_code == 0, r.stderr
    doc = _json(r)
    assert doc["status"] == "source_disabled" and doc["source_id"] == "claims-handbook"
    assert "its source claims-handbook is disabled" in doc["sentence"]


# ------------------------------------------------------------------------------ diff
def test_diff_default_vs_restricted(c102, restricted):
    r = run_cli(["diff", c102, restricted, "--json"])
    assert r.exit_code == 1, r.stderr
    doc = _json(r)
    assert doc["same"] is False
    req = {c["field"]: (c["a"], c["b"]) for c in doc["request"]}
    assert req["subject.id"] == ("investigator-01", "intern-07")
    assert req["variant"] == (None, "restricted")
    only_a = {c["object_id"]: c for c in doc["evidence"]["only_a"]}
    assert {"RULE-MCS-2026.1", "DOC-C102-003", "SIG-C102-AMOUNT", "RULE-MANUAL-REVIEW"} <= set(only_a)
    # withheld inside the statements, it was never a candidate of the restricted pack
    assert only_a["RULE-MCS-2026.1"]["b_state"] == ("not a candidate; withheld for access there: policy_version "
                                                    "at least 3 by scope")
    assert "CASE-C-102" not in only_a
    assert doc["evidence"]["only_b"] == []
    ans = {c["field"]: (c["a"], c["b"]) for c in doc["answer"]}
    assert ans["verdict"] == ("complete", "insufficient_evidence")
    assert ans["recommended_action"] == ("route_to_human_reviewer", "request_missing_evidence")
    claims = {c["claim_id"]: c for c in doc["claims"]}
    assert (claims["applicable_rule_version"]["a_status"], claims["applicable_rule_version"]["b_status"]) == \
        ("fact", "unknown")
    # the expired rule is an omission of A only: B's subject never had it as a candidate
    assert "RULE-MCS-2025.4" in {c.get("object_id", c.get("key")) for c in doc["omissions"]["only_a"]}

    r = run_cli(["diff", c102, restricted])
    assert r.exit_code == 1
    out = r.stdout
    assert "evidence only in A" in out and "RULE-MCS-2026.1" in out
    assert "insufficient_evidence" in out and "complete" in out
    assert "packs differ:" in out
    for s in SECRETS:
        assert s not in out and s not in json.dumps(doc)


def test_diff_with_itself_is_the_same(c102, tmp_path):
    r = run_cli(["diff", c102, c102])
    assert r.exit_code == 0
    assert "packs are the same" in r.stdout
    again = _pack(tmp_path / "again")
    r = run_cli(["diff", c102, again, "--json"])
    assert r.exit_code == 0
    doc = _json(r)
    assert doc["same"] is True and doc["evidence"] == {"only_a": [], "only_b": [], "changed": []}


def test_diff_as_of_moves_rules_between_gates(c102, tmp_path):
    old = _pack(tmp_path / "old", "--variant", "as-of-2025")
    r = run_cli(["diff", c102, old, "--json"])
    assert r.exit_code == 1
    doc = _json(r)
    req = {c["field"]: (c["a"], c["b"]) for c in doc["request"]}
    assert req["as_of"] == ("2026-07-23T12:00:00+08:00", "2025-11-15T12:00:00+08:00")
    only_a = {c["object_id"]: c for c in doc["evidence"]["only_a"]}
    only_b = {c["object_id"]: c for c in doc["evidence"]["only_b"]}
    assert only_a["RULE-MCS-2026.1"]["b_state"].startswith("rejected by validity")
    assert only_b["RULE-MCS-2025.4"]["a_state"] == "rejected by validity (expired)"


PINNED = Path(__file__).parent / "data" / "diff"


def _keyed_ids_fixed(text: str, a: Path, b: Path) -> str:
    """``text`` with what the store's random secret keys made the same for every store: the two
    packs' content hashes and ids, evidence ids and keyed content hashes (each of the same length)."""
    for path, tag in ((a, "a"), (b, "b")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        text = text.replace(doc["content_hash"], "sha256:" + tag * 64).replace(doc["pack_id"], "pk-" + tag * 16)
    text = re.sub(r"hmac-sha256:[0-9a-f]{64}", "hmac-sha256:" + "h" * 64, text)
    return re.sub(r"\bev-[0-9a-f]{10}\b", "ev-" + "e" * 10, text)


@pytest.mark.parametrize("variant", ["restricted", "as-of-2025"])
def test_diff_of_the_bundled_variants_is_pinned(c102, tmp_path, variant):
    """The whole of `ctx diff` (table and --json) of C-102 against two of its variants, byte for
    byte. After an intended change of the output: PIN_DIFF_WRITE=1 pytest -k pinned, then review."""
    other = _pack(tmp_path / variant, "--variant", variant)
    for suffix, args in ((".txt", []), (".json", ["--json"])):
        r = run_cli(["diff", c102, other, *args])
        assert r.exit_code == 1 and r.stderr == ""
        got = _keyed_ids_fixed(r.stdout, c102, other)
        pinned = PINNED / f"c102-vs-{variant}{suffix}"
        if os.environ.get("PIN_DIFF_WRITE") == "1":
            pinned.parent.mkdir(exist_ok=True)
            pinned.write_text(got, encoding="utf-8")
        assert got == pinned.read_text(encoding="utf-8"), f"ctx diff output differs from {pinned.name}"


def test_diff_lists_claims_in_a_order_then_those_only_b_makes():
    from ctxcli.postmortem.compare import compare

    a = {"answer": {"claims": [{"claim_id": "x", "status": "fact"}, {"claim_id": "y", "status": "fact"}]}}
    b = {"answer": {"claims": [{"claim_id": "z", "status": "fact"}, {"claim_id": "y", "status": "unknown"},
                               {"claim_id": "x", "status": "unknown"}]}}
    assert [(c.claim_id, c.change, c.a_status, c.b_status) for c in compare(a, b).claims] == [
        ("x", "changed", "fact", "unknown"), ("y", "changed", "fact", "unknown"), ("z", "only_b", None, "fact")]


# ------------------------------------------------------------------------------ help
@pytest.mark.parametrize("cmd", ["replay", "explain-omissions", "diff"])
def test_help_ends_with_an_example(cmd):
    r = run_cli([cmd, "--help"])
    assert r.exit_code == 0
    assert "Example: ctx " + cmd in " ".join(r.stdout.split())


def test_explain_object_names_redaction_and_its_hashes(store, tmp_path):
    from ctxcli import api

    res = api.investigate(api.InvestigateOptions(case="INC-2026-0723"))
    out = api.write_outputs(res, tmp_path / "inc")
    r = run_cli(["explain-omissions", out / "pack.json", "--object", "INC-2026-0723-NOTE-01", "--json"])
    assert r.exit_code == 0
    text = r.stdout
    assert "redacted under POL-INCIDENT-READ-01" in text
    assert "masked" in text and "text hash after masking sha256:" in text
    assert "@example.com" not in text
    from ctxcli.store.db import open_reader

    con = open_reader(store)
    (plain,) = con.execute("SELECT content_hash FROM objects WHERE object_id = 'INC-2026-0723-NOTE-01'").fetchone()
    con.close()
    assert plain.split(":")[1][:8] not in text              # no bit of the unmasked text's plain hash


def test_compression_is_explained_with_tokens_checks_and_hashes():
    from ctxcli.postmortem.objects import _transformation

    s = _transformation({"kind": "compression", "method": "extractive-sentences/1", "before_tokens": 266,
                         "after_tokens": 240, "kept_sentences": 4, "dropped_sentences": 2,
                         "before_hash": "sha256:" + "a" * 64, "after_hash": "sha256:" + "b" * 64,
                         "checks": {"numbers": True, "negations": True, "identifiers": True, "dates": True,
                                    "hedges": True}})
    assert s == ("; compressed 266 → 240 tokens by extractive-sentences/1 (4 clauses kept, 2 dropped; fidelity "
                 "checks dates passed, hedges passed, identifiers passed, negations passed, numbers passed; "
                 "text hash sha256:aaaaaaaaaaaa… → sha256:bbbbbbbbbbbb…)")


def test_a_withheld_ref_is_matched_with_the_store_secret_and_unknown_without_it():
    """compare() (ctx diff, ctx report --compare): an object one pack withheld (an opaque ref)
    and the other admitted is one change with the secret; without it, the ref's other side is
    unknown, never "not a candidate"."""
    from ctxcli.postmortem import compare
    from ctxcli.util.canon import opaque_ref

    key = b"k" * 32
    ref = opaque_ref("t", "X", key=key)
    a = {"pack_id": "pk-a", "content_hash": "h-a", "request": {"tenant_id": "t"}, "evidence": [],
         "omissions": [{"ref": ref, "withheld": True, "gate": "scope", "reason": "scope"}]}
    b = {"pack_id": "pk-b", "content_hash": "h-b", "request": {"tenant_id": "t"}, "omissions": [],
         "evidence": [{"object_id": "X", "evidence_id": "ev-1", "supports": ["t1"]}]}
    d = compare(a, b, key=key)
    assert [(c.key, c.a.describe(), c.b.describe()) for c in d.evidence_only_b] == [
        ("X", "withheld by scope", "admitted as ev-1")]
    assert d.omissions_only_a == []
    d = compare(a, b)
    unknown = "unknown (matching a withheld object needs the store's secret: --db)"
    assert [(c.key, c.a.describe(), c.b.describe()) for c in d.omissions_only_a] == [
        (ref, "withheld by scope", unknown)]
    assert [(c.key, c.a.describe(), c.b.describe()) for c in d.evidence_only_b] == [
        ("X", "not a candidate", "admitted as ev-1")]
