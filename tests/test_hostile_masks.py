"""Hostile inputs against masking (issue 27 items 3, 8, 11 and the mask part of 10).

A subject without ``pii:read`` must learn nothing about a masked span: not from the index
(ranks, scores, counts of a guess), not from facts (numbers, fact names), not through
full-width digits or a zero-width space, and a manifest's pattern must not make a masking pass
run without bound.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO, run_cli

AS_OF = "2026-07-23T12:00:00+08:00"
SCOPES = ["case:read", "policy:read", "document:read", "risk:read"]
ADHOC = ["--playbook", "motor-claim-review", "--seed", "case:C-102", "--tenant", "tenant-demo",
         "--subject", "investigator-01", *[x for s in SCOPES for x in ("--scope", s)],
         "--purpose", "claim_review", "--as-of", AS_OF]
DOCS = "sources/claims-documents/objects.jsonl"
PHONE, ID_NO = "13912345678", "32050219900412561X"      # both in DOC-C102-001, masked unless pii:read
# what the masked number is in the other store: the same shape and token count
WRONG = {PHONE: "13912345670", ID_NO: "32050219900412562X"}


def _normalised(files: dict[str, bytes]) -> dict[str, str]:
    """The run's files with every digest replaced: a plain one changes with the store (the
    store digest, the digests of other sources), a keyed one with the masked text, and
    neither tells a subject which number the mask hides. What is left may not depend on it."""
    def walk(v, key=""):
        # A masked item's block carries its keyed digest, whose token count varies with the key
        # (random per store), not with anything a subject can test a guess against.
        # The store generation counts loads (each run here loads anew): where the store is, not content.
        if isinstance(v, dict):
            return {k: ("N" if ("tokens" in k or key == "used" or (key == "store" and k == "generation"))
                        and isinstance(x, int) else walk(x, k))
                    for k, x in v.items()}
        return [walk(x) for x in v] if isinstance(v, list) else v

    out = {}
    for name, blob in files.items():
        if name.endswith(".jsonl"):
            t = "\n".join(json.dumps(walk(json.loads(x)), sort_keys=True) for x in blob.splitlines())
        else:
            t = json.dumps(walk(json.loads(blob)), sort_keys=True, indent=1)
        for rx, to in ((r"hmac-sha256:[0-9a-f]{64}", "HM"), (r"sha256:[0-9a-f]{64}", "SHA"),
                       (r"pk-[0-9a-f]{16}", "PK"), (r"run-[0-9a-f]{16}", "RUN"), (r"ev-[0-9a-f]+", "EV")):
            t = re.sub(rx, to, t)
        out[name] = t
    return out


def _same(a: dict[str, str], b: dict[str, str]) -> None:
    for name in a:
        diff = [(x, y) for x, y in zip(a[name].splitlines(), b[name].splitlines()) if x != y]
        assert not diff, (name, diff[:2])
        assert a[name] == b[name], name


def _put(proj: Path, old: str, new: str) -> None:
    """The bundled documents with ``old`` written as ``new`` (content hashes left to the load)."""
    path = proj / DOCS
    recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    assert old in path.read_text(encoding="utf-8")
    for r in recs:
        r.pop("content_hash", None)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs).replace(old, new)
    path.write_text(text, encoding="utf-8")
    r = run_cli(["load"])
    assert r.exit_code == 0, r.stderr


def _cli_run(out: Path, question: str) -> dict[str, bytes]:
    r = run_cli(["investigate", *ADHOC, "--question", question, "--out", out])
    assert r.exit_code == 0, r.stderr
    return {n: (out / n).read_bytes() for n in ("pack.json", "trace.jsonl", "answer.json")}


@pytest.mark.parametrize("secret", [PHONE, ID_NO])
def test_a_masked_number_is_not_confirmed_by_ranks_from_the_cli(project_copy, tmp_path, secret, monkeypatch):
    """The same question ("is it this number?") against a store where the masked number is the
    guess and one where it is not: the subject without pii:read gets the same files."""
    monkeypatch.setenv("CTX_SECRET", "a fixed test secret, 32 chars..")
    _put(project_copy, secret, secret)
    right = _cli_run(tmp_path / "right", f'"{secret}"')
    _put(project_copy, secret, WRONG[secret])
    wrong = _cli_run(tmp_path / "wrong", f'"{secret}"')
    assert b'"fulltext"' in right["trace.jsonl"] and secret.lower().encode() in right["trace.jsonl"]
    _same(_normalised(right), _normalised(wrong))


def test_a_masked_number_is_not_confirmed_by_ranks_through_the_adhoc_question(project_copy, monkeypatch):
    """The path an agent takes (the MCP ``investigate`` tool's ``question``): api.investigate."""
    from ctxcli import api
    from ctxcli.util.timeutil import parse_ts

    def run() -> dict[str, bytes]:
        opts = api.InvestigateOptions(adhoc=api.AdhocSpec(playbook="motor-claim-review", seeds=["case:C-102"],
                                                          tenant_id="tenant-demo", question=f"who called from {PHONE}?"),
                                      subject_id="investigator-01", scopes=SCOPES, purpose="claim_review",
                                      as_of=parse_ts(AS_OF), clearance="confidential")
        files = api.output_files(api.investigate(opts))
        return {n: files[n] for n in ("pack.json", "trace.jsonl", "answer.json")}

    monkeypatch.setenv("CTX_SECRET", "a fixed test secret, 32 chars..")
    _put(project_copy, PHONE, PHONE)
    right = run()
    _put(project_copy, PHONE, WRONG[PHONE])
    _same(_normalised(right), _normalised(run()))


def _fulltext_rank(trace: bytes, object_id: str) -> int | None:
    for line in trace.splitlines():
        ev = json.loads(line)
        if ev["event"] == "candidate_retrieved" and ev.get("ref") == object_id:
            return ev["channels"].get("fulltext")
    return None


def test_a_subject_holding_the_unmasking_scope_finds_a_masked_number_by_full_text(store, tmp_path):
    """The unmasked-only terms are searched for a subject holding pii:read, and only for it."""
    runs = {}
    for who, extra in (("pii", ["--scope", "pii:read"]), ("plain", [])):
        out = tmp_path / who
        r = run_cli(["investigate", *ADHOC, *extra, "--clearance", "confidential", "--question", f'"{PHONE}"',
                     "--out", out])
        assert r.exit_code == 0, r.stderr
        runs[who] = (out / "trace.jsonl").read_bytes()
    pii, plain = (_fulltext_rank(runs[w], "DOC-C102-001") for w in ("pii", "plain"))
    assert pii is not None and (plain is None or pii < plain), (pii, plain)


def test_the_index_holds_no_term_of_a_masked_span(project_copy):
    from ctxcli.store.db import open_reader

    assert run_cli(["load"]).exit_code == 0
    con = open_reader(project_copy / ".ctx" / "ctx.duckdb")
    try:
        terms = {t for (t,) in con.execute("SELECT term FROM term_stats").fetchall()}
    finally:
        con.close()
    assert PHONE not in terms and ID_NO.lower() not in terms
    assert "redacted" in terms                   # the replacement text is what is indexed
    con = open_reader(project_copy / ".ctx" / "ctx.duckdb")
    try:                                         # kept apart, for subjects who may unmask them
        raw = dict(con.execute("SELECT r.term, g.unless_scopes FROM raw_term_stats r "
                               "JOIN mask_groups g ON g.grp = r.grp").fetchall())
    finally:
        con.close()
    assert raw[PHONE] == ["pii:read"] and raw[ID_NO.lower()] == ["pii:read"]


# ------------------------------------------------------------------ item 8: facts, fact names, normalisation
def _rewrite_doc(proj: Path, object_id: str, change) -> None:
    path = proj / DOCS
    recs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    for r in recs:
        if r["object_id"] == object_id:
            change(r)
            r.pop("content_hash", None)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs), encoding="utf-8")


def test_numeric_facts_fact_names_and_full_width_digits_are_masked(project_copy, tmp_path):
    def plant(r):
        r["facts"]["phone_number"] = 13811112222                  # an int fact
        r["facts"]["backup_phone"] = 13822223333.0                 # a float fact
        r["facts"]["tel_13833334444"] = "named after the number"  # a fact name
        r["content"] += " 备用电话 １３８４４４４５５５５，值班 138\u200b55556666。"   # full width, zero-width space
        r["content"] += " Home 138-7777-8888, office 138\u20109999\u20100000, ID 110105-19900101-0012."   # dashed

    _rewrite_doc(project_copy, "DOC-C102-001", plant)
    r = run_cli(["load"])
    assert r.exit_code == 0, r.stderr
    out = tmp_path / "run"
    r = run_cli(["investigate", "C-102", "--out", out])
    assert r.exit_code == 0, r.stderr
    msgs = run_cli(["render", out / "pack.json", "--format", "messages"])
    assert msgs.exit_code == 0, msgs.stderr
    blobs = {n: (out / n).read_text(encoding="utf-8") for n in ("pack.json", "trace.jsonl", "answer.json", "answer.md")}
    blobs["messages"] = msgs.stdout
    for where, text in blobs.items():
        for digits in ("13811112222", "13822223333", "13833334444", "13844445555", "13855556666",
                       "138-7777-8888", "138\u20109999\u20100000", "138-9999-0000", "110105-19900101-0012"):
            assert digits not in text, (where, digits)
        assert "１３８４４４４５５５５" not in text and "138\u200b55556666" not in text, where
    pack = json.loads(blobs["pack.json"])
    (ev,) = [e for e in pack["evidence"] if e["object_id"] == "DOC-C102-001"]
    assert ev["facts"]["phone_number"] == "[PHONE REDACTED]"
    assert ev["facts"]["tel_[PHONE REDACTED]"] == "named after the number"
    assert ev["transformations"][0]["masked"]["cn_mobile_phone"] >= 7
    assert ev["transformations"][0]["masked"]["cn_resident_id"] >= 1


# ------------------------------------------------------------------ item 11: patterns run in linear time
_SOURCE = "manifests/sources/claims-documents.yaml"


def _set_pattern(proj: Path, field: str, value: str) -> None:
    import yaml

    p = proj / _SOURCE
    m = yaml.safe_load(p.read_text(encoding="utf-8"))
    m["redaction"]["patterns"][1][field] = value
    p.write_text(yaml.safe_dump(m, allow_unicode=True, sort_keys=False), encoding="utf-8")


@pytest.mark.parametrize("regex", [r"(a)\1", r"x(?=y)z", r"(?<=tel )[0-9]+", r"a*"])
def test_a_pattern_the_linear_engine_cannot_run_is_refused_by_file_and_field(project_copy, regex):
    _set_pattern(project_copy, "regex", regex)
    r = run_cli(["load"])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "claims-documents.yaml" in r.stderr and "redaction.patterns[1].regex" in r.stderr


@pytest.mark.parametrize("repl", [r"\1", r"\g<9>", "[PHONE]\x1b[2J", "a\\b"])
def test_a_replacement_that_is_not_literal_text_is_refused(project_copy, repl):
    _set_pattern(project_copy, "replacement", repl)
    r = run_cli(["load"])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "claims-documents.yaml" in r.stderr and "redaction.patterns[1].replacement" in r.stderr


_EVIL = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_CPU, (5, 5))         # a bound on work: CPU seconds, not a clock
from ctxcli.util.masking import mask, patterns
pol = {"patterns": [{"name": "evil", "regex": "(a|aa)+$", "replacement": "[X]"},
                    {"name": "evil2", "regex": "(a+)+b", "replacement": "[Y]"},
                    {"name": "evil3", "regex": "(?<![0-9])([0-9]+)+x(?![0-9])", "replacement": "[Z]"}]}
text = ("b " + "a" * 48 + "! " + "x" + "1" * 48 + "! ") * 200
out = mask(text, patterns(pol))
assert out == text, out[:80]
print("ok")
"""


def test_a_catastrophic_pattern_runs_in_bounded_work():
    """``(a|aa)+$`` over 48 a's takes a backtracking engine (the `regex` module included) about
    Fibonacci(48) steps at each start; RE2 reads the text once.
    The child process gets 5 CPU seconds (killed by SIGXCPU past them; RE2 needs a fraction of one)."""
    r = subprocess.run([sys.executable, "-c", _EVIL], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and r.stdout == "ok\n", (r.returncode, r.stderr[-300:])


def test_the_rewritten_guards_match_what_a_backtracking_engine_matches():
    import random

    import regex

    from ctxcli.util.masking import compile_pattern

    rnd = random.Random(7)
    for src in (r"(?<![0-9])1[3-9][0-9]{2}(?![0-9])", r"(?<![a-z])[0-9]+(?![x])", r"[0-9]{2,3}(?![0-9])",
                r"(?<![0-9])[1-9][0-9]{3}[0-9Xx](?![0-9A-Za-z])", r"(?<!\d)\d{3}(?!\d)"):
        c, rx = compile_pattern(src), regex.compile(src)
        for _ in range(4000):
            t = "".join(rnd.choice("1395xXa -") for _ in range(rnd.randint(0, 18)))
            assert c.subn("#", t)[0] == rx.sub("#", t), (src, t)


# ------------------------------------------------------------------ item 16: non-finite YAML, bounded expressions
@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan", ".NaN", "+.INF"])
def test_a_non_finite_yaml_fact_is_refused_with_its_position(project_copy, value):
    md = project_copy / "sources" / "claims-handbook" / "motor-claims-handbook-2026.md"
    text = md.read_text(encoding="utf-8")
    assert "\nfacts: {}\n" in text
    md.write_text(text.replace("\nfacts: {}\n", f"\nfacts: {{limit: {value}}}\n", 1), encoding="utf-8")
    line = text.split("\nfacts: {}\n")[0].count("\n") + 2
    r = run_cli(["load"])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert f"motor-claims-handbook-2026.md:{line}:" in r.stderr and "non-finite number" in r.stderr


@pytest.mark.parametrize("src,env", [
    ("'a' * n * n == ''", {"n": 400}),                  # the shape of the 16 GB string, just past the bound
    ("len(s * n) > 0", {"s": "x" * 1000, "n": 101}),
    ("[1, 2] * n", {"n": 50_001}),
    ("s + s", {"s": "y" * 60_000}),
    ("n * n * n > 0", {"n": 2**40}),                     # past 64 bits
    ("-n", {"n": -(2**63)}),
    ("x > 99999999999999999999", {"x": 1}),              # a literal past 64 bits
    ("round(x, 0) > 1", {"x": 1e300}),
])
def test_every_intermediate_value_of_an_expression_is_bounded(src, env):
    from ctxcli.answer import expr

    with pytest.raises(expr.ExprError):
        expr.evaluate(src, env)


def test_a_huge_string_is_refused_before_it_is_built():
    from ctxcli.answer import expr

    with pytest.raises(expr.ExprError, match="longer than 100000"):
        expr.evaluate("'a' * n * n == ''", {"n": 4 * 10**9})     # 16 EB: never allocated


def test_bounded_expressions_still_compute():
    from ctxcli.answer import expr

    assert expr.evaluate("'ab' * 3", {}) == "ababab"
    assert expr.evaluate("n * n", {"n": 2**31}) == 2**62
    assert expr.evaluate("round(x, 1)", {"x": 2.25}) == 2.3


def test_vectors_made_at_the_end_of_a_load_are_made_from_masked_text(project_copy):
    """Both places a load embeds (the workers while rows stream, load/derive.py, and
    load/vectors.py for what they did not make) embed the masked text."""
    import duckdb

    from ctxcli.embed import load_model
    from ctxcli.load.vectors import embed_text, write_vectors
    from ctxcli.util.masking import mask, patterns

    assert run_cli(["load"]).exit_code == 0
    con = duckdb.connect(str(project_copy / ".ctx" / "ctx.duckdb"))
    try:
        (pol,) = con.execute("SELECT redaction FROM sources WHERE source_id = 'claims-documents'").fetchone()
        title, content = con.execute("SELECT title, content FROM objects WHERE object_id = 'DOC-C102-001'").fetchone()
        pats = patterns(json.loads(pol))
        assert mask(content, pats) != content
        want = load_model().embed_many([embed_text(mask(title, pats), mask(content, pats))])[0]

        def stored():
            return con.execute("SELECT v.vec FROM vectors v JOIN objects o ON o.doc_id = v.doc_id "
                               "WHERE o.object_id = 'DOC-C102-001'").fetchone()[0]

        assert stored() == pytest.approx(want, abs=1e-6)          # streamed by the workers
        con.execute("DELETE FROM vectors")
        con.execute("DELETE FROM meta WHERE key LIKE 'embedding_%'")
        write_vectors(con, load_model())                           # made at the end of the load
        assert stored() == pytest.approx(want, abs=1e-6)
    finally:
        con.close()


# ------------------------------------------------------------------ item 10: exit 70 paths become exit 2
def test_a_signing_key_that_is_not_utf8_is_a_usage_error(store, tmp_path, monkeypatch):
    monkeypatch.setenv("CTX_SIGNING_KEY", "k" * 40 + "\udcff\udcfe")     # bytes 0xff 0xfe (PEP 383)
    r = run_cli(["investigate", "C-102", "--sign", "--out", tmp_path / "run"])
    assert r.exit_code == 2
    assert r.stderr == "ctx: error: CTX_SIGNING_KEY is not UTF-8 text: use printable characters, e.g. the output " \
                       "of `openssl rand -hex 32`\n"
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("line,message", [
    ("max_tokens = inf", "model.max_tokens: must be an integer from 1 to 1000000, got float"),
    ("max_tokens = 1e30", "model.max_tokens: must be an integer from 1 to 1000000, got float"),
    ("max_tokens = 99999999999999999", "model.max_tokens: must be an integer from 1 to 1000000, got 99999999999999999"),
    ("max_retries = inf", "model.max_retries: must be an integer from 0 to 10, got float"),
    ("backoff = nan", "model.backoff: must be a number from 0 to 30, got nan"),
    ("temperature = inf", "model.temperature: must be a number from 0 to 2, got inf"),
    ("timeout = true", "model.timeout: must be a number from 0 to 3600, got bool"),
    ('timeout = "60"', "model.timeout: must be a number from 0 to 3600, got str"),
    ("api_key_env = [1]", "model.api_key_env: must be a string"),
])
def test_bad_ctx_toml_values_are_one_line_usage_errors(project_copy, tmp_path, line, message):
    (project_copy / "ctx.toml").write_text(f'[model]\nendpoint = "http://127.0.0.1:9"\nmodel = "m"\n{line}\n')
    r = run_cli(["ask", "C-102", "--out", tmp_path / "run"])
    assert r.exit_code == 2, r.stderr
    assert r.stderr == f"ctx: error: ctx.toml: {message}\n"


@pytest.mark.parametrize("line,field", [('runs_dir: "r\\0x"', "runs_dir"), ('audit_log: "a\\tb"', "audit_log"),
                                         ('db: ""', "db")])
def test_bad_serve_config_paths_are_refused_before_serving(tmp_path, line, field):
    from ctxcli.errors import InputError
    from ctxcli.serve.config import read_config_file

    p = tmp_path / "serve.yaml"
    p.write_text(line + "\n")
    with pytest.raises(InputError) as e:
        read_config_file(p)
    assert e.value.field == field and "control characters" in str(e.value)


def test_unmasked_terms_of_another_tenant_never_reach_the_query(project_copy):
    """The unmasked-only terms are looked up and scanned inside the query tenant only."""
    import duckdb

    from ctxcli.store.duckdb_store import DuckDBStore

    assert run_cli(["load"]).exit_code == 0
    con = duckdb.connect(str(project_copy / ".ctx" / "ctx.duckdb"))
    try:
        (demo,) = con.execute("SELECT tenant_no FROM tenants WHERE tenant_id = 'tenant-demo'").fetchone()
        (other, doc) = con.execute("SELECT t.tenant_no, o.doc_id FROM tenants t JOIN objects o "
                                   "ON o.tenant_id = t.tenant_id WHERE t.tenant_id = 'tenant-other' "
                                   "ORDER BY o.doc_id LIMIT 1").fetchone()
        (grp,) = con.execute("SELECT grp FROM mask_groups WHERE list_contains(unless_scopes, 'pii:read')").fetchone()
        con.execute("INSERT INTO raw_term_stats VALUES (?, ?, 'zzsecret', 999999, 1)", [other, grp])
        con.execute("INSERT INTO raw_postings VALUES (?, ?, 999999, ?, 1, 10, 18446744073709551615)",
                    [other, grp, doc])
        st = DuckDBStore(con)
        types = [t for (t,) in con.execute("SELECT evidence_type FROM support_bits ORDER BY bit").fetchall()]
        qs = [(t, ["zzsecret"]) for t in types]
        kw = {"readable": None, "as_of_us": 0, "limit": 10, "unmasked": [grp]}   # tenant predicate only
        assert st.bm25(qs, tenant="tenant-demo", **kw).hits == []
        assert demo != other and st.bm25(qs, tenant="tenant-other", **kw).hits
    finally:
        con.close()


def test_a_lone_surrogate_does_not_stop_a_mask():
    """YAML lets a string hold a lone surrogate ("\\udcff"), which RE2 cannot read."""
    from ctxcli.util.masking import mask, patterns

    pats = patterns({"patterns": [{"name": "ph", "regex": r"(?<![0-9])1[3-9][0-9]{9}(?![0-9])",
                                   "replacement": "[PHONE]"}]})
    assert mask("\udcff 13912345678", pats) == "? [PHONE]"
    assert mask("\udcff x", pats) == "\udcff x"          # nothing masked: shown as it was
