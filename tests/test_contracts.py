"""Published contracts (#21): version, completion, the linked trace, schemas."""

from __future__ import annotations

import functools

from ctxcli import BUILDER_VERSION, __version__

from .conftest import run_cli


def test_version_prints_both_versions():
    r = run_cli(["--version"])
    assert r.exit_code == 0
    assert r.stdout == f"ctx {__version__} ({BUILDER_VERSION})\n"


def test_show_completion_prints_the_script_for_the_calling_shell():
    """Typer detects the shell from the parent process: run ctx under bash."""
    import subprocess
    import sys
    from pathlib import Path

    ctx = Path(sys.executable).parent / "ctx"
    # "; exit $?" keeps bash as the parent (a lone command would be exec'd in bash's place)
    r = subprocess.run(["bash", "-c", f"'{ctx}' --show-completion; exit $?"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "_ctx_completion()" in r.stdout and "_CTX_COMPLETE=complete_bash" in r.stdout


# ------------------------------------------------------------------------------ linked trace
def _events(path):
    import json

    return [json.loads(x) for x in path.read_text().splitlines()]


def test_every_trace_event_names_its_run_and_pack(store, tmp_path):
    import json

    from ctxcli.engine.trace import request_hash

    assert run_cli(["investigate", "C-102", "--out", tmp_path / "run"]).exit_code == 0
    pack = json.loads((tmp_path / "run" / "pack.json").read_text())
    events = _events(tmp_path / "run" / "trace.jsonl")
    rh = request_hash(pack["request"])
    assert events[0]["event"] == "run_started"
    assert events[0]["request_hash"] == rh and events[0]["builder_version"] == BUILDER_VERSION
    assert events[-1] == {"seq": len(events), "event": "pack_sealed", "pack_id": pack["pack_id"],
                          "content_hash": pack["content_hash"], "run": "run-" + rh.split(":")[1][:16]}
    assert {(e["run"], e["pack_id"]) for e in events} == {(events[-1]["run"], pack["pack_id"])}


def _rehash(folder):
    import json

    from ctxcli.run_manifest import RUN_FILE, run_manifest

    pack = json.loads((folder / "pack.json").read_text())
    files = {p.name: p.read_bytes() for p in folder.iterdir() if p.name not in (RUN_FILE, "timings.json")}
    (folder / RUN_FILE).write_bytes(run_manifest(files, pack))


def test_replay_and_explain_refuse_a_trace_of_another_pack(store, tmp_path):
    import json
    import shutil

    for name, extra in (("a", []), ("b", ["--variant", "restricted"])):
        assert run_cli(["investigate", "C-102", "--out", tmp_path / name, *extra]).exit_code == 0
    r = run_cli(["replay", tmp_path / "a" / "pack.json", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["trace_identical"] is True
    other = json.loads((tmp_path / "b" / "pack.json").read_text())["pack_id"]
    mine = json.loads((tmp_path / "a" / "pack.json").read_text())["pack_id"]
    shutil.copy(tmp_path / "b" / "trace.jsonl", tmp_path / "a" / "trace.jsonl")
    _rehash(tmp_path / "a")     # a forger who also recomputes run.json's (unsigned) checksums
    for args in (["replay"], ["explain-omissions"]):
        r = run_cli([*args, tmp_path / "a" / "pack.json"])
        assert r.exit_code == 2
        assert r.stdout == ""
        assert r.stderr == (f"ctx: error: {tmp_path / 'a' / 'trace.jsonl'}:1: trace of another pack: event 1 belongs "
                            f"to pack {other}, not {mine}\n")
    # a forged trace: this pack's id stamped on another run's events
    forged = [{**e, "pack_id": mine} for e in _events(tmp_path / "b" / "trace.jsonl")]
    (tmp_path / "a" / "trace.jsonl").write_text("".join(json.dumps(e) + "\n" for e in forged))
    _rehash(tmp_path / "a")
    r = run_cli(["replay", tmp_path / "a" / "pack.json"])
    assert r.exit_code == 2 and "trace of another run: event 1 has run" in r.stderr
    assert len(r.stderr.splitlines()) == 1


# ------------------------------------------------------------------------------ schemas
@functools.lru_cache(maxsize=None)
def _validator(name):
    """The shipped schema's validator (checked against its metaschema once per schema: a trace
    holds thousands of events of a few dozen kinds)."""
    import json

    from jsonschema import Draft202012Validator

    from ctxcli.schemas import path

    schema = json.loads(path(name).read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _check(name, doc, where):
    errors = sorted(_validator(name).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, f"{where}: {errors[0].json_path}: {errors[0].message}"


def test_committed_schemas_match_the_models():
    """Fails when a model changed and `python -m ctxcli.schemas` was not run."""
    from ctxcli.schemas import generate, names, path, schema_bytes

    docs = generate()
    assert names() == sorted(docs)
    for name, doc in docs.items():
        assert path(name).read_bytes() == schema_bytes(doc), f"{name}: run `python -m ctxcli.schemas`"


def test_schema_command_prints_a_shipped_schema():
    import json

    r = run_cli(["schema", "trace.run_started"])
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert doc["properties"]["event"]["const"] == "run_started"
    r = run_cli(["schema", "nope"])
    assert r.exit_code == 2 and r.stderr.startswith("ctx: error: no schema 'nope' (known: answer, case, mcp.add_tool_result, mcp.audit_call,")


def test_every_input_file_validates_against_its_schema():
    from ctxcli.util.yamlio import read_yaml

    from .conftest import REPO

    groups = {"case": sorted((REPO / "examples" / "cases").glob("*.yaml")),
              "playbook": sorted((REPO / "manifests" / "playbooks").glob("*.yaml")),
              "source-manifest": sorted((REPO / "manifests" / "sources").glob("*.yaml"))}
    for name, files in groups.items():
        assert files, name
        for f in files:
            _check(name, read_yaml(f, display=str(f)), f)


def test_a_manifest_with_tenants_or_extends_validates_against_the_published_schema():
    """`ctx schema source-manifest` describes a manifest file as it may be written: one source, or
    shared keys with `tenants:` / `extends:` — a tenant entry holds only what a tenant may set."""
    import re

    import yaml

    from .conftest import REPO

    doc_text = (REPO / "docs" / "authoring.md").read_text()
    shared = yaml.safe_load(next(b for b in re.findall(r"```yaml\n(.*?)```", doc_text, re.S) if "tenants:" in b))
    _check("source-manifest", shared, "docs/authoring.md")
    v = _validator("source-manifest")
    single = yaml.safe_load((REPO / "manifests" / "sources" / sorted(
        p.name for p in (REPO / "manifests" / "sources").glob("*.yaml"))[0]).read_text())
    assert not list(v.iter_errors(single))
    assert not list(v.iter_errors({"extends": "bases/tickets.yaml", "source_id": "t", "tenant_id": "acme"}))
    bad = [
        {**shared, "tenants": [{"tenant_id": "acme", "ownr_team": "x"}]},                   # not a tenant key
        {**shared, "tenants": [{"tenant_id": "acme", "source_id": "a", "source_id_suffix": "-a"}]},
        {**shared, "tenants": [{"snapshot": "exports/acme"}]},                               # no tenant_id
        {**shared, "tenants": []},
        {**shared, "tenant_id": "acme"},                                                     # named in the entries
        {**shared, "tenants": [{"tenant_id": "acme", "git": {"path": "x", "include": ["*"]}}]},  # shared key
        {k: v_ for k, v_ in shared.items() if k != "tenants"},                               # neither key
    ]
    for d in bad:
        assert list(v.iter_errors(d)), d
    ok = {**shared, "tenants": [{"tenant_id": "acme", "source_id_suffix": "-eu", "git": {"path": "repos/a"}}]}
    assert not list(v.iter_errors(ok))


def _runs():
    import yaml

    from .conftest import REPO

    for f in sorted((REPO / "examples" / "cases").glob("*.yaml")):
        case = yaml.safe_load(f.read_text())
        yield case["case_id"], None
        for v in sorted(case.get("variants") or {}):
            yield case["case_id"], v


def test_every_file_of_every_bundled_run_validates_against_its_schema(store):
    import json

    from ctxcli import api

    seen_events = set()
    runs = list(_runs())
    assert len(runs) >= 8
    for case_id, variant in runs:
        res = api.investigate(api.InvestigateOptions(case=case_id, variant=variant))
        files = api.output_files(res)
        where = f"{case_id}/{variant}"
        _check("pack", json.loads(files["pack.json"]), where + "/pack.json")
        _check("answer", json.loads(files["answer.json"]), where + "/answer.json")
        _check("timings", json.loads(files["timings.json"]), where + "/timings.json")
        for line in files["trace.jsonl"].splitlines():
            ev = json.loads(line)
            seen_events.add(ev["event"])
            _check(f"trace.{ev['event']}", ev, f"{where}/trace.jsonl seq {ev['seq']}")
    build_events = {"run_started", "source_discovered", "plan_created", "retrieval_executed", "candidate_retrieved",
                    "candidate_rejected", "evidence_selected", "evidence_transformed", "sufficiency_assessed",
                    "pack_built", "claim_generated", "answer_validated", "pack_sealed",
                    "deadline_reached", "aggregate_computed"}          # INC-2026-0811 (issue 30)
    assert seen_events == build_events


def test_a_schema_rejects_a_withheld_omission_that_names_its_object(store):
    import json

    from ctxcli import api

    res = api.investigate(api.InvestigateOptions(case="C-102"))
    pack = json.loads(api.output_files(res)["pack.json"])
    om = {"ref": "wh-0123456789abcdef", "withheld": True, "gate": "scope", "reason": "missing_scope",
          "detail": {"needs": ["fraud:read"]}, "round": 1, "channels": {"structured": 7}, "rrf": 0.016}
    pack["omissions"].append(om)       # (withheld records are never candidates now: one made here)
    assert not list(_validator("pack").iter_errors(pack))
    om["object_id"] = "FRAUD-1"
    assert any("object_id" in e.message for e in _validator("pack").iter_errors(pack))


# ------------------------------------------------------------------------------ contract fields
def test_a_subject_with_no_scope_is_refused_with_the_reason(store, tmp_path):
    import json

    r = run_cli(["investigate", "C-102", "--subject", "nobody", "--out", tmp_path / "o"])
    assert r.exit_code == 0
    ans = json.loads((tmp_path / "o" / "answer.json").read_text())
    pack = json.loads((tmp_path / "o" / "pack.json").read_text())
    assert ans["verdict"] == pack["answer"]["verdict"] == "refused"
    assert ans["refusal"] == {"reason": "subject_has_no_scope", "subject": "nobody"}
    assert ans["claims"] == [] and ans["recommended_action"]["action"] == "none"
    assert pack["evidence"] == []
    _check("answer", ans, "refused answer.json")


def test_pack_contract_fields_and_claim_confidence(store, tmp_path):
    import json

    assert run_cli(["investigate", "C-102", "--out", tmp_path / "o"]).exit_code == 0
    pack = json.loads((tmp_path / "o" / "pack.json").read_text())
    ans = json.loads((tmp_path / "o" / "answer.json").read_text())
    assert (pack["goal_ref"], pack["state_version"], pack["tools"]) == (None, None, [])
    items = {i["evidence_id"]: i for i in pack["evidence"]}
    levels = {}
    for c in ans["claims"]:
        trust = sorted({items[e]["trust_level"] for e in c["evidence"]})
        assert c["confidence"]["trust_levels"] == trust
        assert c["confidence"]["sources"] == len({items[e]["source_id"] for e in c["evidence"]})
        levels[c["claim_id"]] = (c["status"], c["confidence"]["level"])
    assert levels["current_case_status"] == ("fact", "high")
    assert levels["manual_review_required"] == ("inference", "medium")


# ------------------------------------------------------------------------------ freshness
def test_stale_sources_by_refresh_sla_in_pack_answer_and_sources(store, tmp_path):
    import json

    assert run_cli(["investigate", "C-102", "--out", tmp_path / "o"]).exit_code == 0
    pack = json.loads((tmp_path / "o" / "pack.json").read_text())
    ans = json.loads((tmp_path / "o" / "answer.json").read_text())
    stale = {s["source_id"]: s for s in pack["stale_sources"]}
    assert ans["stale_sources"] == pack["stale_sources"]
    # claims-documents: newest document 2026-07-18T02:00+08:00, as_of 2026-07-23T12:00+08:00, SLA 24h
    assert stale["claims-documents"] == {"source_id": "claims-documents", "refresh_sla": "24h",
                                         "refresh_sla_s": 86400, "snapshot_observed_at": "2026-07-18T02:00:00+08:00",
                                         "age_s": 468000, "age": "5d 10h"}
    assert "claims-core" not in stale                  # 17h 55m old, SLA 24h
    assert "partner-claims" not in stale               # another tenant's source: never listed
    r = run_cli(["sources", "--as-of", "2026-07-23T12:00:00+08:00", "--json"])
    assert r.exit_code == 0
    rows = {s["source_id"]: s["freshness"] for s in json.loads(r.stdout)["sources"]}
    assert rows["claims-core"]["age"] == "17h 55m" and rows["claims-core"]["stale"] is False
    assert rows["claims-documents"]["age_s"] == 468000 and rows["claims-documents"]["stale"] is True
    r = run_cli(["sources", "--as-of", "2026-07-23T12:00:00+08:00"])
    assert "5d 10h / 24h stale" in r.stdout and "17h 55m / 24h " in r.stdout


# ------------------------------------------------------------------------------ eval cost
def test_eval_reports_latency_and_tokens_per_case(store):
    import json

    r = run_cli(["eval", "examples/cases/C-102.yaml", "--json"])
    doc = json.loads(r.stdout)
    assert doc["runs"]
    for run in doc["runs"]:
        assert run["cost"]["latency_ms"] > 0
        assert run["cost"]["pack_tokens"] == run["metrics"]["builder"]["pack_tokens"] > 0
    lat = sorted(run["cost"]["latency_ms"] for run in doc["runs"])
    summary = doc["summary"]["dynamic"]
    assert summary["latency_ms_p50"] in lat and summary["latency_ms_p95"] == lat[-1]
    assert summary["pack_tokens_total"] == sum(run["cost"]["pack_tokens"] for run in doc["runs"])
    r = run_cli(["eval", "examples/cases/C-102.yaml"])
    assert "build latency p50 " in r.stdout and " pack tokens" in r.stdout


# ------------------------------------------------------------------------------ OpenTelemetry
def test_otel_out_writes_otlp_json_spans_per_stage_and_retrieval(store, tmp_path):
    import json

    from ctxcli.otel import load_otlp_json

    r = run_cli(["investigate", "C-102", "--out", tmp_path / "o", "--otel-out", tmp_path / "spans.json"])
    assert r.exit_code == 0, r.stderr
    pack = json.loads((tmp_path / "o" / "pack.json").read_text())
    queries = [e for e in _events(tmp_path / "o" / "trace.jsonl") if e["event"] == "retrieval_executed"]
    raw = (tmp_path / "spans.json").read_bytes()
    req = load_otlp_json(raw)                  # the SDK's protobuf type, parsed from the JSON mapping
    spans = [s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]
    by_name = {}
    for s in spans:
        by_name.setdefault(s.name, []).append(s)
    root = by_name["ctx.investigate"][0]
    assert {s.trace_id for s in spans} == {root.trace_id} and root.parent_span_id == b""
    stages = ["ctx.retrieve", "ctx.hydrate", "ctx.gates", "ctx.pack", "ctx.assemble", "ctx.answer"]
    for name in stages:
        assert by_name[name][0].parent_span_id == root.span_id
    retrieve = by_name["ctx.retrieve"][0]
    qspans = [s for s in spans if s.name.startswith("ctx.retrieval ")]
    assert len(qspans) == len(queries) and all(s.parent_span_id == retrieve.span_id for s in qspans)
    attrs = {a.key: a.value for a in qspans[0].attributes}
    assert attrs["gen_ai.operation.name"].string_value == "retrieval"
    assert attrs["ctx.query_id"].string_value == queries[0]["query_id"]
    assert attrs["ctx.hits"].int_value == queries[0]["hits"]
    rattrs = {a.key: a.value for a in root.attributes}
    assert rattrs["ctx.pack_id"].string_value == pack["pack_id"]
    assert rattrs["gen_ai.usage.input_tokens"].int_value == pack["slots"]["total_tokens"]
    doc = json.loads(raw)                      # OTLP/JSON: ids are hex, not base64
    assert doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"] == root.trace_id.hex()
