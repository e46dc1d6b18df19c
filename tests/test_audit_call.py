"""ctx audit-call (issue 34 item 6): a recorded agent request ctx did not build, checked span by
span against the store — every planted span flagged, nothing withheld printed."""

from __future__ import annotations

import hashlib
import json

import pytest

from .conftest import REPO, run_cli

AUDIT = REPO / "examples" / "agent" / "audit"
CHAT = AUDIT / "chat-request.json"
OTLP = AUDIT / "otlp-trace.json"

# message index -> (status, [(by, object id or None for a withheld one, status)])
EXPECTED = {
    0: ("unknown_origin", []),
    1: ("unknown_origin", []),
    3: ("admitted", [("content_hash", "DEP-release-2026.07.23.1", "admitted")]),
    4: ("invalid_at_as_of", [("content_hash", "RB-PAY-RECOVERY-v3#steps", "invalid_at_as_of")]),
    5: ("withheld", [("content_hash", None, "withheld")]),        # masked for this subject, sent unmasked
    6: ("withheld", [("text", None, "withheld")]),                # another tenant's runbook
    7: ("injection", []),
    8: ("injection", [("content_hash", "WIKI-PAYAPI-OPS-NOTES", "injection")]),
    9: ("withheld", [("text", None, "withheld"), ("locator", "INC-2026-0723", "admitted")]),
}
WITHHELD_TEXTS = ("OTH-RB-PAYAPI", "tenant-other", "pay-tenant-other-ops", "INC-2026-0723-SEC-01",
                  "security_reviews", "Recovery runbook v9", "card-not-present", "INC-2026-0723-NOTE-01",
                  "CUST-884512", "li.wei@example.com")


def _audit(path, *extra):
    r = run_cli(["audit-call", path, "--case", "INC-2026-0723", "--json", *extra])
    return r, json.loads(r.stdout)


def _by_message(doc):
    out: dict[int, list] = {}
    for s in doc["spans"]:
        i = int(s["span"].split("messages[")[1].split("]")[0])
        out.setdefault(i, []).append(s)
    return out


@pytest.mark.parametrize("path", [CHAT, OTLP], ids=["openai-chat", "otlp-json"])
def test_every_planted_span_is_flagged(store, path):
    r, doc = _audit(path)
    assert r.exit_code == 1, r.output          # a span is withheld, injected or invalid
    assert doc["format"] == ("openai-chat" if path == CHAT else "otlp-json")
    spans = _by_message(doc)
    for i, (status, matches) in EXPECTED.items():
        (s,) = [x for x in spans[i] if "arguments" not in x["span"]]
        got = [(m["by"], m.get("object_id"), m["status"]) for m in s["matches"]]
        assert (s["status"], got) == (status, matches), (i, s)
    assert [s["status"] for s in spans[2]] == ["unknown_origin"] * 3    # the tool calls' arguments
    assert spans[7][0]["injection"]["pattern"] == "override_instructions"
    v3 = spans[4][0]["matches"][0]
    assert (v3["gate"], v3["reason"]) == ("validity", "expired")
    gates = sorted(m["gate"] for s in doc["spans"] for m in s["matches"] if m["status"] == "withheld")
    assert gates == ["redaction", "scope", "tenant"]


def test_nothing_withheld_is_printed_and_refs_are_keyed(store):
    from ctxcli import api
    from ctxcli.util.canon import opaque_ref

    human = run_cli(["audit-call", CHAT, "--case", "INC-2026-0723"])
    assert human.exit_code == 1
    assert "wh-" in human.output and "withheld by tenant" in human.output
    r, doc = _audit(CHAT)
    key = api.store_key(store, create=False)
    refs = {m["ref"] for s in doc["spans"] for m in s["matches"] if m["status"] == "withheld"}
    assert refs == {opaque_ref("tenant-other", "OTH-RB-PAYAPI", key=key),
                    opaque_ref("tenant-demo", "INC-2026-0723-SEC-01", key=key),
                    opaque_ref("tenant-demo", "INC-2026-0723-NOTE-01", key=key)}
    import duckdb

    con = duckdb.connect(str(store), read_only=True)
    digests = [h for (h,) in con.execute("SELECT content_hash FROM objects WHERE object_id IN "
                                         "('OTH-RB-PAYAPI', 'INC-2026-0723-SEC-01', 'INC-2026-0723-NOTE-01')").fetchall()]
    con.close()
    digests += [d.split(":", 1)[1] for d in digests]
    for out in (human.output, r.stdout):
        leaked = [t for t in WITHHELD_TEXTS + tuple(digests) if t in out]
        assert not leaked, leaked


def test_a_subject_with_the_scope_sees_the_security_review_admitted(store):
    r = run_cli(["audit-call", CHAT, "--tenant", "tenant-demo", "--subject", "sec-01", "--scope", "incident:read",
                 "--scope", "security:read", "--scope", "incident:read_raw", "--clearance", "confidential",
                 "--purpose", "incident_review",
                 "--as-of", "2026-07-23T10:30:00+08:00", "--json"])
    doc = json.loads(r.stdout)
    sec = _by_message(doc)[9][0]
    assert ("text", "INC-2026-0723-SEC-01", "admitted") in [(m["by"], m.get("object_id"), m["status"])
                                                             for m in sec["matches"]]
    note = _by_message(doc)[5][0]       # with incident:read_raw the customer notes are no longer masked
    assert (note["status"], note["matches"][0].get("object_id")) == ("admitted", "INC-2026-0723-NOTE-01")
    assert doc["subject"]["scopes"] == ["incident:read", "incident:read_raw", "security:read"]


@pytest.mark.parametrize("body, args, message", [
    ("{", ["--case", "INC-2026-0723"], "x.json: not JSON"),
    ('{"input": []}', ["--case", "INC-2026-0723"], "x.json: neither an OpenAI-style chat request"),
    ('{"messages": []}', ["--tenant", "tenant-demo", "--subject", "s", "--purpose", "incident_review"],
     "--as-of"),
    ('{"messages": []}', ["--case", "INC-2026-0723", "--tenant", "tenant-demo"], "--tenant cannot be combined"),
])
def test_bad_input_is_one_line_exit_2(store, tmp_path, body, args, message):
    f = tmp_path / "x.json"
    f.write_text(body)
    r = run_cli(["audit-call", f, *args])
    assert r.exit_code == 2
    assert message in r.output and len(r.output.strip().splitlines()) == 1, r.output


def test_a_clean_request_exits_0(store, tmp_path):
    chat = json.loads(CHAT.read_text())
    chat["messages"] = chat["messages"][:4]
    f = tmp_path / "clean.json"
    f.write_text(json.dumps(chat))
    r, doc = _audit(f)
    assert r.exit_code == 0 and doc["counts"] == {"admitted": 1, "unknown_origin": 5}
    assert hashlib.sha256(f.read_bytes()).hexdigest() not in r.stdout


# ------------------------------------------------------------------------------ issue 46 item 7: by shape
_CYR = str.maketrans({"a": "а", "e": "е", "o": "о", "p": "р", "c": "с"})


def _leak() -> str:
    return json.loads(CHAT.read_text())["messages"][6]["content"][0]["text"]


def _homoglyphs(text: str) -> str:
    """Every other word with its a/e/o/p/c in Cyrillic: the words still read the same."""
    return " ".join(w.translate(_CYR) if i % 2 else w for i, w in enumerate(text.split(" ")))


def _half(text: str, part: int) -> str:
    words = text.split(" ")
    return " ".join(words[:len(words) // 2] if part == 0 else words[len(words) // 2:])


@pytest.mark.parametrize("messages", [
    [{"role": "user", "content": {"note": _leak()}}],
    [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "save", "arguments": {"query": _leak()}}}]}],
    [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "save", "arguments": json.dumps({"q": [_leak()]})}}]}],
    [{"role": "assistant", "content": None, "refusal": _leak()}],
    [{"role": "user", "content": _half(_leak(), 0)}, {"role": "user", "content": _half(_leak(), 1)}],
    [{"role": "user", "content": _homoglyphs(_leak())}],
    [{"role": "user", "content": _leak().upper().replace(" ", "\u200b ")}],
], ids=["content-object", "arguments-object", "arguments-json-string", "refusal", "split-in-two", "homoglyphs",
        "upper-case-zero-width"])
def test_another_tenants_text_is_withheld_whatever_its_shape(store, tmp_path, messages):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"messages": messages}))
    r, doc = _audit(f)
    assert r.exit_code == 1, r.output
    withheld = [(s["span"], m["gate"]) for s in doc["spans"] for m in s["matches"] if m["status"] == "withheld"]
    assert withheld and {g for _, g in withheld} == {"tenant"}, doc["spans"]
    for t in WITHHELD_TEXTS[:3]:
        assert t not in r.stdout


def test_each_half_alone_is_not_withheld_so_the_joined_span_is_what_finds_it(store, tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"messages": [{"role": "user", "content": _half(_leak(), 0)},
                                          {"role": "user", "content": _half(_leak(), 1)}]}))
    r, doc = _audit(f)
    assert [(s["span"], s["status"]) for s in doc["spans"]] == [
        ("messages[0].content", "unknown_origin"), ("messages[1].content", "unknown_origin"),
        ("messages[0] + messages[1] (joined)", "withheld")]


@pytest.mark.parametrize("messages, says", [
    ([1], "messages[0]: not a message object"),
    ([{"role": "assistant", "tool_calls": "x"}], "messages[0].tool_calls: not a list of tool-call objects"),
    ([{"role": "assistant", "tool_calls": [1]}], "messages[0].tool_calls: not a list of tool-call objects"),
    ([{"role": "assistant", "tool_calls": [{"function": "f"}]}], "messages[0].tool_calls[0].function: not an object"),
])
def test_a_malformed_transcript_is_one_line_exit_2(store, tmp_path, messages, says):
    f = tmp_path / "x.json"
    f.write_text(json.dumps({"messages": messages}))
    r = run_cli(["audit-call", f, "--case", "INC-2026-0723"])
    assert r.exit_code == 2 and r.output.strip() == f"ctx: error: {f}: {says}", r.output


def test_one_string_of_an_object_that_is_an_objects_content_matches_by_its_hash(store, tmp_path):
    note = json.loads(CHAT.read_text())["messages"][5]["content"]      # the masked customer notes, sent unmasked
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"messages": [{"role": "tool", "content": {"ticket": "PAY-4097", "notes": note}}]}))
    r, doc = _audit(f)
    (s,) = doc["spans"]
    assert (s["span"], s["status"]) == ("messages[0].content", "withheld")
    assert [(m["by"], m["gate"]) for m in s["matches"]] == [("content_hash", "redaction")]


def test_an_objects_content_written_as_json_inside_a_string_matches_by_its_hash(store, tmp_path):
    note = json.loads(CHAT.read_text())["messages"][5]["content"]
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"messages": [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "save", "arguments": json.dumps({"notes": note})}}]}]}))
    r, doc = _audit(f)
    (s,) = [x for x in doc["spans"] if x["span"] == "messages[0].tool_calls[0].arguments"]
    assert [(m["by"], m["gate"]) for m in s["matches"]] == [("content_hash", "redaction")]


# ------------------------------------------------------------------------------ issue 45 item 7: by facts
def _one(tmp_path, messages):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"messages": messages}))
    return _audit(f)


@pytest.mark.parametrize("text, status", [
    ("Their partner paid 8,400 CNY on policy PX-7731 for a windscreen.", "withheld"),   # two rare values
    ("Their partner paid 8,400 CNY for a windscreen.", "unknown_origin"),              # one short one
    ("The claimant's card is 32050219900412561X.", "withheld"),                          # one long one
])
def test_restated_figures_of_an_object_the_subject_may_not_see_are_withheld(store, tmp_path, text, status):
    r, doc = _one(tmp_path, [{"role": "user", "content": text}])
    (s,) = doc["spans"]
    assert s["status"] == status, s
    if status == "withheld":
        assert r.exit_code == 1 and [m["by"] for m in s["matches"]] == ["values"]
        assert "OTHER-CASE" not in r.stdout and "DOC-C102" not in r.stdout and "tenant-other" not in r.stdout
    else:
        assert r.exit_code == 0


def _row(n, text):
    return (n, "t", f"OBJ-{n}", None, f"h{n}", text)


@pytest.mark.parametrize("objects, span, hit", [
    (["paid 8400 for PX-7731"], "8400 and PX-7731", True),
    (["paid 840 for PX-773"], "840 and PX-773", False),                     # three digits each: not values
    (["card 1234567"], "card 1234567", True),                               # seven digits: enough alone
    (["card 123456"], "card 123456", False),                                # six: not alone
    (["signed on 2026-05-20 at 09:50, paid on 2026-06-01 after a review of the whole file"],
     "dates 2026-05-20 09:50 2026-06-01", False),                         # when, not what
    (["8400 PX-7731", "8400 PX-7731"], "8400 PX-7731", True),              # held by two objects: rare
    (["8400 PX-7731", "8400 PX-7731", "8400 PX-7731"], "8400 PX-7731", False),   # by three: common
])
def test_values_match_only_rare_values_with_enough_digits(objects, span, hit):
    from ctxcli.agents.audit import AuditIndex, match

    ix = AuditIndex.of([_row(n, t) for n, t in enumerate(objects)])
    got = [by for _, by, _ in match(ix, span)]
    assert (bool(got) and set(got) == {"values"}) == hit, got


def _named_row(n, name, text="unrelated words of no interest here"):
    return (n, "t", name, None, f"h{n}", text)


@pytest.mark.parametrize("name, span, hit", [
    ("AB-123", "see AB-123 now", True),                 # six characters: a name
    ("AB-12", "see AB-12 now", False),                  # five: too short to say where a text came from
    ("AB-123", "see XAB-123 now", False),               # inside a longer token
    ("AB-123", "see AB-1234 now", False),
    ("AB-123", "see #AB-123 now", False),               # joined by an id character on either side
    ("AB-123", "see AB-123/v2 now", False),
    ("AB-123", "(AB-123)", True),                       # punctuation ends it
])
def test_a_span_names_an_object_by_a_whole_name_of_six_characters_or_more(name, span, hit):
    from ctxcli.agents.audit import AuditIndex, match

    got = [by for _, by, _ in match(AuditIndex.of([_named_row(0, name)]), span)]
    assert got == (["locator"] if hit else []), got


def _words(n: int, start: int = 0) -> str:
    return " ".join(f"word{i}" for i in range(start, start + n))


@pytest.mark.parametrize("obj_words, span, hit", [
    (7, _words(5), True),                     # 2 of the object's 4 shingles: exactly half counts
    (6, _words(4), False),                    # 1 of 3 shingles: a third, under half
    (6, _words(5), True),                     # 2 of 3: over half
    (7, _words(5) + " other", True),          # 2 of 4: exactly half counts
    (7, _words(4) + " other", False),         # 1 of 4
    (5, _words(5), False),                    # an object of 2 shingles is too short to say anything
    (6, _words(6), True),                     # of 3: enough
])
def test_a_span_holding_half_of_an_objects_shingles_holds_its_text(obj_words, span, hit):
    """Word 4-grams: an object of at least 3 is matched by a span holding at least half of them."""
    from ctxcli.agents.audit import AuditIndex, match

    got = [by for _, by, _ in match(AuditIndex.of([_row(0, _words(obj_words))]), span)]
    assert got == (["text"] if hit else []), got


def test_a_span_equal_to_an_object_but_for_surrounding_white_space_matches_its_hash():
    from ctxcli.agents.audit import AuditIndex, match
    from ctxcli.util.canon import content_hash

    text = "The pool was exhausted."
    ix = AuditIndex.of([(0, "t", "OBJ-0", None, content_hash(text), text)])
    assert [by for _, by, _ in match(ix, "\n  " + text + "  \n")] == ["content_hash"]


def test_two_tenants_objects_under_one_id_are_judged_apart(project_copy, tmp_path):
    """tenant-other holds an object under the id of tenant-demo's accident certificate: a call that
    quotes both (in either order) has the demo document admitted and the other tenant's withheld
    by tenant — one verdict is never taken for the other."""
    from ctxcli.util.canon import content_hash

    docs = project_copy / "sources" / "claims-documents" / "objects.jsonl"
    mine = next(json.loads(x) for x in docs.read_text().splitlines() if '"DOC-C102-003"' in x)
    partner = project_copy / "sources" / "partner-claims" / "objects.jsonl"
    base = json.loads(partner.read_text().splitlines()[0])
    theirs = "Partner archive record for claim C-102: identity papers of policy holder PX-7731, filed 2026-05-03."
    partner.write_text(partner.read_text() + json.dumps(dict(base, object_id="DOC-C102-003", content=theirs,
                                                             content_hash=content_hash(theirs))) + "\n")
    assert run_cli(["load"]).exit_code == 0
    for order in ((mine["content"], theirs), (theirs, mine["content"])):
        f = tmp_path / "call.json"
        f.write_text(json.dumps({"messages": [{"role": "user", "content": t} for t in order]}))
        r = run_cli(["audit-call", f, "--case", "C-102", "--json"])
        got = {s["span"]: s for s in json.loads(r.stdout)["spans"]}
        i = order.index(mine["content"])
        assert [(m["status"], m["object_id"]) for m in got[f"messages[{i}].content"]["matches"]] == [
            ("admitted", "DOC-C102-003")]
        assert [(m["by"], m["status"], m["gate"]) for m in got[f"messages[{1 - i}].content"]["matches"]] == [
            ("content_hash", "withheld", "tenant")]
        assert theirs not in r.stdout


def _call(*assistant):
    release = json.loads(CHAT.read_text())["messages"][3]["content"]
    return [{"role": "user", "content": "Did the 10:02 release affect payment-api?"},
            {"role": "tool", "tool_call_id": "c1", "content": release},
            *({"role": "assistant", "content": a} for a in assistant)]


@pytest.mark.parametrize("said, codes", [
    ("Release release-2026.07.23.1 completed at 09:54 with commit 8c41e7d.", []),
    ("The release completed at 09:54, before the 10:02 errors; it may have caused them.", []),
    ("The release release-2026.07.23.1 caused the errors at 10:02.", ["status_upgraded"]),
    ("The release completed at 09:54, after the 10:02 errors.", ["wrong_comparison"]),
    ("Release release-2026.07.23.1 completed at 09:54 with commit 9f00aa1.", ["unsupported_value"]),
])
def test_the_assistants_output_is_judged_against_what_the_call_contained(store, tmp_path, said, codes):
    r, doc = _one(tmp_path, _call(said))
    (s,) = [x for x in doc["spans"] if x["span"] == "messages[2].content"]
    assert [v["code"] for v in s.get("output_check", [])] == codes, s
    assert (s["status"] == "unsupported") == bool(codes) and r.exit_code == (1 if codes else 0)


def test_withheld_or_injected_text_supports_nothing_the_assistant_says(store, tmp_path):
    """What the call gave from an object the subject may not see is no support: the assistant's
    restatement of it is judged without it (and its own matching finds it withheld anyway)."""
    leak = _leak()
    r, doc = _one(tmp_path, [{"role": "user", "content": leak},
                             {"role": "assistant", "content": "Check the certificate bundle first (runbook v9)."}])
    (s,) = [x for x in doc["spans"] if x["span"] == "messages[1].content"]
    assert [v["code"] for v in s["output_check"]] == ["unsupported_value"] and r.exit_code == 1
    # the finding names no value of the withheld text it restates
    assert s["output_check"] == [{"code": "unsupported_value",
                                  "message": "a value the call gave only in a withheld span"}]
    assert "v9" not in r.stdout


def test_a_tool_call_asking_about_an_entity_the_subject_may_not_see_is_withheld(bundled_store, tmp_path,
                                                                                 monkeypatch):
    """Issue 45 item 7: tool-call arguments naming STORE_002 (all of whose objects need a scope
    the subject lacks) are withheld by entity, reported by a keyed reference only; STORE_001,
    a 3-character name and a name inside a longer token are not."""
    from .test_agents import _retail

    _retail(tmp_path, bundled_store, monkeypatch)

    def call(args):
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "sales.query", "arguments": json.dumps(args)}}]}

    r, doc = _one(tmp_path, [call({"store": "STORE_002"}), call({"store": "store_001"}), call({"store": "MRT"}),
                             call({"store": "XSTORE_002"})])
    got = {s["span"]: s for s in doc["spans"] if ".arguments" in s["span"]}
    s = got["messages[0].tool_calls[0].arguments"]
    assert s["status"] == "withheld" and r.exit_code == 1
    (m,) = s["matches"]
    assert (m["by"], m["status"], m["gate"]) == ("entity", "withheld", "scope") and m["ref"].startswith("wh-")
    assert set(m) == {"by", "status", "gate", "ref"}
    assert [got[f"messages[{i}].tool_calls[0].arguments"]["status"] for i in (1, 2, 3)] == ["unknown_origin"] * 3
    assert "STORE_002" not in r.stdout and "SALES-STORE" not in r.stdout and "333777000" not in r.stdout
