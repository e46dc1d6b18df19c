"""Entity linking at load, aliases in retrieval, CONTRADICTS (issue 30, items 1, 2 and 6).

The bundled shop tenant (manifests/sources/shop-*.yaml, examples/cases/INC-SHOP-0901.yaml)
declares linking on its incident records: "the checkout service" (an alias) and "chekout-api"
(a misspelling) link the incident to service:checkout-api; "the cart service" names two
services and stays unresolved.
"""

from __future__ import annotations

import json


from ctxcli.engine.gates import Access
from ctxcli.engine.retrieve import walk_access
from ctxcli.util.entity_match import Dictionary

from .conftest import REPO, run_cli

CASE = REPO / "examples" / "cases" / "INC-SHOP-0901.yaml"
ONCALL = Access(frozenset({"incident:read", "service:read"}), "incident_review", "confidential")
CATALOG_ONLY = Access(frozenset({"service:read"}), "incident_review", "confidential")
TEMPLATE = [("t", 1, "MENTIONS", "service"), ("t", 2, "OWNED_BY", "team")]


def _dict() -> Dictionary:
    d = Dictionary()
    d.add("service:checkout-api", ["checkout-api", "checkout service", "Checkout API"])
    d.add("service:cart-api", ["cart-api", "cart service"])
    d.add("service:cart-worker", ["cart-worker", "cart service"])
    return d


def _find(text, **kw):
    args = {"accept": 0.9, "candidate": 0.75, "margin": 0.05, **kw}
    return [(m.text, m.method, m.candidates, m.resolved) for m in _dict().find(text, **args)]


def test_matcher_exact_fuzzy_ambiguous_and_weak():
    assert _find("The Checkout-Service failed") == [
        ("checkout service", "exact", (("service:checkout-api", 1.0),), "service:checkout-api")]
    # a misspelling: rapidfuzz's ratio 95.65 >= accept
    assert _find("chekout-api errors") == [
        ("chekout api", "fuzzy", (("service:checkout-api", 0.9565),), "service:checkout-api")]
    # one alias, two entities: unresolved, both candidates kept, neither chosen
    assert _find("the cart service was slow") == [
        ("cart service", "exact", (("service:cart-api", 1.0), ("service:cart-worker", 1.0)), None)]
    # a weak match (between candidate and accept) is unresolved; below candidate it is nothing
    assert _find("chekout-api errors", accept=0.97) == [
        ("chekout api", "fuzzy", (("service:checkout-api", 0.9565),), None)]
    assert _find("chekout-api errors", candidate=0.97, accept=0.98) == []
    assert _find("chekout-api errors", fuzzy=False) == []


def test_linking_makes_mentions_with_method_and_confidence_and_keeps_ambiguous_unresolved(store):
    import duckdb

    con = duckdb.connect(str(store), read_only=True)
    rels = con.execute(
        "SELECT r.rel_type, s.entity_key, d.entity_key, r.confidence, r.extraction_method, r.evidence_object_id, "
        "r.source_id FROM relations r JOIN entities s ON s.entity_id = r.src JOIN entities d ON d.entity_id = r.dst "
        "WHERE r.extraction_method IS NOT NULL ORDER BY r.evidence_object_id").fetchall()
    assert rels == [
        ("MENTIONS", "incident:INC-SHOP-0901", "service:checkout-api", 1.0, "linker:exact", "INC-SHOP-0901",
         "shop-incidents"),
        ("MENTIONS", "incident:INC-SHOP-0901", "service:checkout-api", 0.9565, "linker:fuzzy", "INC-SHOP-0901-TL-01",
         "shop-incidents")]
    assert con.execute("SELECT object_id, field, mention, method, candidates, scores FROM unresolved_entities"
                       ).fetchall() == [("INC-SHOP-0901", "content", "cart service", "linker:exact",
                                         ["service:cart-api", "service:cart-worker"], [1.0, 1.0])]
    # never merged: both cart services are still entities of their own, and nothing links to either
    assert con.execute("SELECT count(*) FROM entities WHERE entity_key IN ('service:cart-api', 'service:cart-worker')"
                       ).fetchone()[0] == 2
    assert con.execute("SELECT count(*) FROM relations r JOIN entities d ON d.entity_id = r.dst "
                       "WHERE d.entity_key LIKE 'service:cart%' AND r.rel_type = 'MENTIONS'").fetchone()[0] == 0
    # opt-in: no source without a linking block has a linked relation
    assert {r[0] for r in con.execute("SELECT DISTINCT source_id FROM relations WHERE extraction_method IS NOT NULL"
                                      ).fetchall()} == {"shop-incidents"}
    con.close()


def _walk(d, access, steps=None, seeds=("incident:INC-SHOP-0901",)):
    steps = steps or [(t, i, e, to, 0.0, True) for t, i, e, to in TEMPLATE]
    return d.walk(steps=steps, starts=[("t", "incident")], seeds=list(seeds), tenant="tenant-shop", max_hops=2,
                  as_of_us=2**62, fanout=50, **walk_access(d, access))


def test_an_inferred_edge_from_an_unreadable_object_is_never_walked(store):
    from ctxcli.store import open_store

    d = open_store(store)
    try:
        keys = sorted({(r[1], r[4]) for r in _walk(d, ONCALL)})
        assert keys == [(0, "incident:INC-SHOP-0901"), (1, "service:checkout-api"), (2, "team:web-checkout")]
        # without incident:read the MENTIONS edges' attesting objects are unreadable: no edge is walked
        assert [r[4] for r in _walk(d, CATALOG_ONLY)] == []
    finally:
        d.close()


def test_a_linked_edge_is_authorised_by_its_own_attesting_object(project_copy, tmp_path):
    """The source is readable, but one mentioning object needs a scope the subject lacks: the
    edge that object attests is never walked, the other one is."""
    from ctxcli.load.build import build_store
    from ctxcli.store import open_store

    p = project_copy / "sources" / "shop-incidents" / "objects.jsonl"
    rows = [json.loads(x) for x in p.read_text().splitlines() if x.strip()]
    rows[1]["required_scopes"] = ["incident:timeline"]          # INC-SHOP-0901-TL-01
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    db = tmp_path / "s.duckdb"
    build_store(project_copy / "manifests", db, root=project_copy)
    d = open_store(db)
    try:
        by_obj = dict(d.con.execute("SELECT evidence_object_id, relation_id FROM relations "
                                    "WHERE extraction_method IS NOT NULL").fetchall())
        hop1 = sorted({tuple(r[3]) for r in _walk(d, ONCALL) if r[1] == 1})
        assert hop1 == [(by_obj["INC-SHOP-0901"],)]
        both = Access(ONCALL.scopes | {"incident:timeline"}, ONCALL.purpose, ONCALL.clearance)
        assert sorted({tuple(r[3]) for r in _walk(d, both) if r[1] == 1}) == sorted((x,) for x in by_obj.values())
    finally:
        d.close()


def test_linking_reads_the_masked_text_only(project_copy, tmp_path):
    """A word a source's mask hides never makes an edge, even for subjects who may unmask it."""
    import duckdb

    from ctxcli.load.build import build_store

    m = project_copy / "manifests" / "sources" / "shop-incidents.yaml"
    m.write_text(m.read_text() + "redaction:\n  unless_scopes: [incident:read_raw]\n  patterns:\n"
                 "  - {name: svc, regex: 'checkout service', replacement: '[service]'}\n")
    db = tmp_path / "s.duckdb"
    build_store(project_copy / "manifests", db, root=project_copy)
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT evidence_object_id, extraction_method FROM relations "
                           "WHERE extraction_method IS NOT NULL").fetchall() == [("INC-SHOP-0901-TL-01", "linker:fuzzy")]
    finally:
        con.close()


def check_confidence_and_inferred(st, exact: str, fuzzy: str) -> None:
    """A template's least confidence (inclusive) and whether it walks inferred (linked) edges,
    on the open store ``st`` (test_postgres.py runs it on PostgreSQL); ``exact`` and ``fuzzy``
    are the ids of the two linked MENTIONS edges."""
    def walked(least, inferred):
        return sorted({tuple(r[3]) for r in _walk(st, ONCALL, [(t, i, e, to, least, inferred)
                                                                for t, i, e, to in TEMPLATE]) if r[1] > 0})
    both = sorted([(exact,), (fuzzy,), (exact, "REL-SHOP-CHECKOUT-OWNER"), (fuzzy, "REL-SHOP-CHECKOUT-OWNER")])
    assert walked(0.0, True) == both
    # the fuzzy edge (0.9565) is below 0.99; the exact one (1.0) is not
    assert walked(0.99, True) == [(exact,), (exact, "REL-SHOP-CHECKOUT-OWNER")]
    assert walked(0.95, True) == walked(0.0, True)
    assert walked(0.9565, True) == both          # the bound is inclusive: confidence == least walks
    assert walked(1.0, True) == [(exact,), (exact, "REL-SHOP-CHECKOUT-OWNER")]
    assert walked(0.0, False) == []            # inferred: false walks declared relations only


def linked_edges(d) -> tuple[str, str]:
    """The ids of the exact and the fuzzy linked edge of the bundled shop tenant (a DuckDB store)."""
    ids = [d.con.execute("SELECT relation_id FROM relations WHERE extraction_method = ?", [m]).fetchone()[0]
           for m in ("linker:exact", "linker:fuzzy")]
    return ids[0], ids[1]


def test_templates_can_require_confidence_and_exclude_inferred_edges(store):
    from ctxcli.store import open_store

    d = open_store(store)
    try:
        check_confidence_and_inferred(d, *linked_edges(d))
    finally:
        d.close()


def _run(args, tmp_path, name="run"):
    out = tmp_path / name
    r = run_cli(["investigate", *map(str, args), "--out", out])
    assert r.exit_code == 0, r.stdout + r.stderr
    pack = json.loads((out / "pack.json").read_text())
    ans = json.loads((out / "answer.json").read_text())
    trace = [json.loads(x) for x in (out / "trace.jsonl").read_text().splitlines()]
    return pack, ans, trace


def test_owner_found_only_through_an_alias_and_question_alias_recorded(store, tmp_path):
    pack, ans, trace = _run([CASE], tmp_path)
    assert [e["object_id"] for e in pack["evidence"]] == ["INC-SHOP-0901", "OWN-SHOP-CHECKOUT", "INC-SHOP-0901-TL-01"]
    assert ans["verdict"] == "complete"
    assert ans["derived_facts"]["owner_team"]["value"] == "web-checkout"
    r1 = pack["rounds"][0]
    assert r1["resolved"] == [{"from": "question", "mention": "checkout api", "entity_key": "service:checkout-api",
                               "method": "exact", "confidence": 1.0}]
    assert r1["seeds"] == ["incident:INC-SHOP-0901", "service:checkout-api"]
    ft = [q for q in r1["queries"] if q["channel"] == "fulltext"][0]
    assert ft["text"].endswith("INC-SHOP-0901 service:checkout-api")      # full text searches the canonical key
    plan = [e for e in trace if e["event"] == "plan_created"][0]
    assert plan["resolved"] == r1["resolved"]
    graph = [e for e in pack["evidence"] if e["object_id"] == "OWN-SHOP-CHECKOUT"][0]
    assert graph["channels"] == {"graph": 1} and graph["graph_templates"] == ["incident_named_service_owner"]


def test_the_variant_without_incident_read_finds_no_owner(store, tmp_path):
    pack, ans, _ = _run([CASE, "--variant", "no-incident-read"], tmp_path)
    assert pack["evidence"] == [] and ans["verdict"] == "insufficient_evidence"
    # the question's alias resolves through the catalog the subject may read; nothing of the incident leaks
    assert pack["rounds"][0]["resolved"][0]["entity_key"] == "service:checkout-api"
    assert "INC-SHOP-0901-TL-01" not in json.dumps(pack)


def test_a_seed_named_by_an_alias_resolves_and_an_ambiguous_one_is_recorded(store):
    from ctxcli.engine.resolve import resolve
    from ctxcli.store import open_store

    d = open_store(store)
    try:
        readable = walk_access(d, ONCALL)["readable"]
        got = resolve(d, tenant="tenant-shop", readable=readable, seeds=["Checkout-API", "cart-service",
                                                                         "incident:INC-SHOP-0901"],
                      question="", spec=None)
        assert got.seeds == ["service:checkout-api", "cart-service", "incident:INC-SHOP-0901"]
        assert got.resolved == [{"from": "seed", "mention": "Checkout-API", "entity_key": "service:checkout-api",
                                 "method": "exact", "confidence": 1.0}]
        assert got.unresolved == [{"from": "seed", "mention": "cart-service",
                                   "candidates": ["service:cart-api", "service:cart-worker"]}]
        # an entity of a source the subject may not read is never named
        none = walk_access(d, Access(frozenset({"incident:read"}), "incident_review", "confidential"))["readable"]
        got = resolve(d, tenant="tenant-shop", readable=none, seeds=["Checkout-API"], question="", spec=None)
        assert got.seeds == ["Checkout-API"] and got.resolved == []
        assert got.unresolved == [{"from": "seed", "mention": "Checkout-API", "candidates": []}]
        # another tenant's aliases never resolve
        got = resolve(d, tenant="tenant-demo", readable=readable + ["pay-service-catalog"], seeds=["Checkout-API"],
                      question="", spec=None)
        assert got.resolved == []
    finally:
        d.close()


def test_a_case_seeded_by_names_passes_check_and_runs_as_if_keyed(store, tmp_path):
    """README and docs/authoring.md: a seed may be an entity's name, alias or id part
    (``Checkout-API``, ``INC-SHOP-0901``): ``ctx check`` takes it, the run resolves it to the key,
    and a name that names nothing is recorded unresolved (an entity key's type is still checked)."""
    import yaml

    from ctxcli import api

    case = yaml.safe_load((REPO / "examples" / "cases" / "INC-SHOP-0901.yaml").read_text())
    case["seeds"] = ["INC-SHOP-0901", "Checkout-API", "Nowhere-API"]
    case["business_keys"] = []
    for k in ("expected", "variants"):
        case.pop(k, None)
    f = tmp_path / "named.yaml"
    f.write_text(yaml.safe_dump(case, sort_keys=False))
    r = run_cli(["check", f])
    assert r.exit_code == 0 and r.stdout == "", r.output
    res = api.investigate(api.InvestigateOptions(case=str(f)))
    assert res.answer["verdict"] == "complete"
    assert {e["object_id"] for e in res.pack["evidence"]} >= {"INC-SHOP-0901", "OWN-SHOP-CHECKOUT"}
    plan = res.pack["rounds"][0]
    assert plan["seeds"] == ["incident:INC-SHOP-0901", "service:checkout-api", "Nowhere-API"]
    assert [(x["mention"], x["entity_key"]) for x in plan["resolved"] if x["from"] == "seed"] == [
        ("INC-SHOP-0901", "incident:INC-SHOP-0901"), ("Checkout-API", "service:checkout-api")]
    assert [x for x in plan["unresolved"] if x["from"] == "seed"] == [
        {"from": "seed", "mention": "Nowhere-API", "candidates": []}]
    case["seeds"] = ["incidnt:INC-SHOP-0901"]
    f.write_text(yaml.safe_dump(case, sort_keys=False))
    r = run_cli(["check", f])
    assert r.exit_code == 1
    assert r.stdout.endswith("seed incidnt:INC-SHOP-0901: no source declares entity type incidnt\n"), r.stdout


def _contradiction_project(project_copy, attest_scope=None):
    src = project_copy / "sources"
    (src / "shop-incidents" / "entities.jsonl").open("a").write(
        '{"entity_key": "INC-SHOP-0901-TL-01", "tenant_id": "tenant-shop", "entity_type": "document", "name": "TL-01"}\n'
        '{"entity_key": "OWN-SHOP-CHECKOUT", "tenant_id": "tenant-shop", "entity_type": "document", "name": "OWN"}\n')
    ev = "INC-SHOP-0901-TL-01"
    if attest_scope:
        ev = "AUDIT-SHOP-01"
        (src / "shop-incidents" / "objects.jsonl").open("a").write(json.dumps({
            "object_id": ev, "tenant_id": "tenant-shop", "source_version": "a1", "object_type": "audit_note",
            "title": "Audit", "content": "The alert contradicts the ownership record.", "locator": "x://a",
            "observed_at": "2026-09-01T14:30:00+02:00", "required_scopes": [attest_scope]}) + "\n")
    (src / "shop-incidents" / "relations.jsonl").write_text(json.dumps({
        "relation_id": "REL-SHOP-CONTRA", "tenant_id": "tenant-shop", "from": "INC-SHOP-0901-TL-01",
        "type": "CONTRADICTS", "to": "OWN-SHOP-CHECKOUT", "evidence_object_id": ev,
        "source_version": "a1", "confidence": 0.8}) + "\n")
    r = run_cli(["load"])
    assert r.exit_code == 0, r.stdout + r.stderr


def test_contradicts_between_admitted_items_is_surfaced(project_copy, tmp_path):
    _contradiction_project(project_copy)
    pack, ans, _ = _run([project_copy / "examples" / "cases" / "INC-SHOP-0901.yaml"], tmp_path)
    ev = {e["object_id"]: e["evidence_id"] for e in pack["evidence"]}
    tl, own = ev["INC-SHOP-0901-TL-01"], ev["OWN-SHOP-CHECKOUT"]
    assert pack["contradictions"] == [{"relation_id": "REL-SHOP-CONTRA", "type": "CONTRADICTS",
                                       "from": {"entity": "INC-SHOP-0901-TL-01", "evidence": [tl]},
                                       "to": {"entity": "OWN-SHOP-CHECKOUT", "evidence": [own]},
                                       "attested_by": "INC-SHOP-0901-TL-01", "confidence": 0.8}]
    assert ans["verdict"] == "conflicting_evidence"
    assert ans["recommended_action"]["action"] == "escalate_to_incident_commander"
    assert ans["contradictions"] == [{"relation_id": "REL-SHOP-CONTRA", "evidence": sorted([tl, own]),
                                      "text": f"{tl} contradicts {own} (relation REL-SHOP-CONTRA)."}]
    assert f"Contradictions: {tl} vs {own} (REL-SHOP-CONTRA)." in ans["summary"]
    from ctxcli.engine.render import gaps_text

    assert f"- Contradiction (CONTRADICTS REL-SHOP-CONTRA): {tl} contradicts {own}." in gaps_text(pack)
    assert "## Contradictions" in (tmp_path / "run" / "answer.md").read_text()
    r = run_cli(["report", tmp_path / "run", "--out", tmp_path / "r.html"])
    assert r.exit_code == 0, r.stdout + r.stderr
    html = (tmp_path / "r.html").read_text()
    assert ("<h3>Contradictions</h3>\n  <ul class=\"conflicts\"><li>"
            f'<a class="ev" href="#{tl}">{tl}</a> contradicts <a class="ev" href="#{own}">{own}</a> '
            '<span class="muted">(CONTRADICTS REL-SHOP-CONTRA, confidence 0.8) — stated, not resolved</span></li>') in html


def test_contradicts_attested_by_an_unreadable_object_is_not_surfaced(project_copy, tmp_path):
    _contradiction_project(project_copy, attest_scope="audit:read")
    pack, ans, _ = _run([project_copy / "examples" / "cases" / "INC-SHOP-0901.yaml"], tmp_path)
    assert "contradictions" not in pack and "contradictions" not in ans
    assert ans["verdict"] == "complete"
    assert "REL-SHOP-CONTRA" not in json.dumps(pack) and "AUDIT-SHOP-01" not in json.dumps(pack)
    r = run_cli(["report", tmp_path / "run", "--out", tmp_path / "r.html"])
    assert r.exit_code == 0, r.stdout + r.stderr
    html = (tmp_path / "r.html").read_text()
    assert "Contradictions" not in html and "REL-SHOP-CONTRA" not in html


def test_a_seed_spelling_another_parameter_cannot_splice_it_into_the_walk_statement(store):
    """The walk writes its values into the statement as literals (store/duckdb_bm25.Literals),
    in one pass: a seed that spells the next seed's parameter name (``$k1``) stays that text,
    so the next seed's quoted text can never land between its quotes and be read as SQL."""
    from ctxcli.store import open_store
    from ctxcli.store.duckdb_bm25 import Literals

    assert Literals().inline("x IN ($k0, $k1)", {"k0": "$k1", "k1": "') OR 1=1 --"}) == \
        "x IN ('$k1', ''') OR 1=1 --')"
    d = open_store(store)
    try:
        assert _walk(d, ONCALL, seeds=("$k1", ") OR 1=1 OR entity_key IN (")) == []
        assert _walk(d, ONCALL, seeds=("$k1", "incident:INC-SHOP-0901")) == _walk(d, ONCALL)
    finally:
        d.close()
