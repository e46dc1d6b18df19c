"""From an empty folder to a first investigation (issue 31): `ctx init`, the bundled examples
inside the package, the project found through ctx.toml, and no store made by a mistyped --db."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from .conftest import REPO

CTX = str(Path(sys.executable).parent / "ctx")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    env.update(NO_COLOR="1", COLUMNS="200", **extra)
    return env


def ctx(args, cwd: Path, exe: str = CTX, **extra) -> subprocess.CompletedProcess:
    return subprocess.run([exe, *map(str, args)], cwd=cwd, env=_env(**extra), capture_output=True, text=True,
                          timeout=600)


def test_init_writes_a_commented_project_that_checks_loads_and_answers(tmp_path):
    r = ctx(["init", "proj"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("wrote a new project into proj (10 files)\n"
                        "next: cd proj && ctx check && ctx load && ctx investigate EXP-7\n")
    proj = tmp_path / "proj"
    files = sorted(p.relative_to(proj).as_posix() for p in proj.rglob("*") if p.is_file())
    assert files == [".gitignore", "ctx.toml", "examples/cases/EXP-7.yaml", "manifests/playbooks/expense-review.yaml",
                     "manifests/sources/expense-ledger.yaml", "manifests/sources/travel-policy.yaml",
                     "sources/expense-ledger/entities.jsonl", "sources/expense-ledger/objects.jsonl",
                     "sources/expense-ledger/relations.jsonl", "sources/travel-policy/travel-policy.md"]
    assert (proj / "ctx.toml").read_text().startswith("# ctx project file.")
    assert ctx(["check"], proj).stderr == "checked 4 file(s): no problems\n"
    assert ctx(["load"], proj).returncode == 0
    r = ctx(["investigate", "EXP-7", "--json"], proj)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)["answer"]
    assert (doc["verdict"], doc["recommended_action"]["action"]) == ("complete", "ask_finance_approval")
    assert (proj / ".ctx" / "ctx.duckdb").is_file()


def test_init_never_overwrites_and_writes_nothing_when_a_file_is_in_the_way(tmp_path):
    (tmp_path / "manifests" / "sources").mkdir(parents=True)
    mine = tmp_path / "manifests" / "sources" / "travel-policy.yaml"
    mine.write_text("mine\n")
    r = ctx(["init"], tmp_path)
    assert r.returncode == 2
    assert r.stderr == ("ctx: error: manifests/sources/travel-policy.yaml exists: ctx init writes only into a folder without these files "
                        "(nothing was written)\n")
    assert mine.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["manifests", "sources", "travel-policy.yaml"]


def test_unknown_example_is_a_usage_error(tmp_path):
    r = ctx(["init", "--example", "nope"], tmp_path)
    assert (r.returncode, r.stderr) == (2, "ctx: error: no example 'nope' (known: agent, claims, incident)\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("example,case,verdict,action", [
    ("claims", "C-102", "complete", "route_to_human_reviewer"),
    ("incident", "INC-2026-0723", None, None),
])
def test_each_bundled_example_investigates_as_in_the_repository(tmp_path, example, case, verdict, action):
    r = ctx(["init", "--example", example], tmp_path)
    assert r.returncode == 0, r.stderr
    assert ctx(["load"], tmp_path).returncode == 0
    r = ctx(["investigate", case, "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)["answer"]
    assert ctx(["load"], REPO, CTX_DB=str(tmp_path / "repo.duckdb")).returncode == 0
    want = json.loads(ctx(["investigate", case, "--json"], REPO, CTX_DB=str(tmp_path / "repo.duckdb")).stdout)["answer"]
    # the same verdict and action (cited ids may differ: a smaller corpus ranks full text differently)
    assert (got["verdict"], got["recommended_action"]["action"]) == (want["verdict"], want["recommended_action"]["action"])
    if verdict:
        assert (got["verdict"], got["recommended_action"]["action"]) == (verdict, action)


def test_the_agent_example_runs_the_agent_loop_in_its_own_folder(tmp_path):
    r = ctx(["init", "--example", "agent", "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "examples/agent/INC-2026-0723/session.yaml" in doc["files"]
    assert "examples/agent/audit/chat-request.json" in doc["files"]
    assert "ctx investigate INC-2026-0723" in doc["next_steps"]
    assert ctx(["load"], tmp_path).returncode == 0
    a = "examples/agent/INC-2026-0723/"
    r = ctx(["investigate", "INC-2026-0723", "--memory", a + "session.yaml", "--tool-result", a + "01-pool-metrics.yaml",
             "--tool-result", a + "02-ticket-search.yaml", "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    pack = json.loads(Path(json.loads(r.stdout)["out"], "pack.json").read_text())
    assert [i["tool"] for i in pack["tool_results"]] == ["metrics.query"]
    assert [p["kind"] for p in pack["working_memory"]["pinned"]] == ["goal", "policy", "approval", "stop_condition"]
    r = ctx(["audit-call", "examples/agent/audit/chat-request.json", "--case", "INC-2026-0723", "--json"], tmp_path)
    assert r.returncode == 1 and json.loads(r.stdout)["counts"]["withheld"] >= 1


def test_every_bundled_manifest_playbook_and_case_belongs_to_one_example():
    from ctxcli.bundled import example_files, examples

    owned: dict[str, str] = {}
    for name, ex in examples().items():
        inherited = set(example_files(ex["extends"])) if ex.get("extends") else set()
        for rel in sorted(set(example_files(name)) - inherited):
            assert rel not in owned, f"{rel} is in {owned.get(rel)} and {name}"
            owned[rel] = name
    bundled = [p.relative_to(REPO).as_posix() for d in ("manifests", "examples/cases")
               for p in (REPO / d).rglob("*.yaml")]
    assert sorted(set(bundled) - set(owned)) == []


def test_the_project_is_found_from_a_subfolder_through_ctx_toml(tmp_path):
    assert ctx(["init", "--example", "claims"], tmp_path).returncode == 0
    sub = tmp_path / "sources" / "claims-core"
    r = ctx(["investigate", "C-102", "--json"], sub)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "ctx: no store found: loaded the project's sources first\n"
    assert (tmp_path / ".ctx" / "ctx.duckdb").is_file() and not (sub / ".ctx").exists()
    assert [p.parent.name for p in (tmp_path / "runs").glob("*/pack.json")] and not (sub / "runs").exists()


def test_a_mistyped_db_is_an_error_and_creates_nothing(tmp_path):
    assert ctx(["init", "--example", "claims"], tmp_path).returncode == 0
    r = ctx(["investigate", "C-102", "--db", "ctx.dukdb"], tmp_path)
    assert r.returncode == 2
    assert r.stderr == ("ctx: error: no store at ctx.dukdb: build it with `ctx load --db ctx.dukdb`, or leave out "
                        "--db to use the project's store\n")
    assert not (tmp_path / "ctx.dukdb").exists() and not (tmp_path / "ctx.dukdb.lock").exists()
    assert not (tmp_path / ".ctx").exists()


def test_an_empty_folder_says_which_command_to_run_and_a_failed_load_leaves_nothing(tmp_path):
    r = ctx(["investigate", "C-102"], tmp_path)
    assert r.returncode == 2
    assert r.stderr == (f"ctx: error: unknown case 'C-102': no examples/cases/C-102.yaml; {tmp_path} is not a ctx "
                        "project: run `ctx init` for a new project (or `ctx init --example claims` for the bundled "
                        "example), then `ctx load`\n")
    r = ctx(["load"], tmp_path)
    assert (r.returncode, r.stderr) == (2, "ctx: error: manifests: no sources/ folder of manifests (a new project: "
                                           "`ctx init`, or `ctx init --example claims`)\n")
    assert list(tmp_path.iterdir()) == []


def test_project_settings_are_checked(tmp_path):
    assert ctx(["init"], tmp_path).returncode == 0
    (tmp_path / "ctx.toml").write_text('[project]\nstores = "x"\n')
    r = ctx(["investigate", "EXP-7"], tmp_path)
    assert (r.returncode, r.stderr) == (2, "ctx: error: ctx.toml: project.stores: unknown setting (known: runs, store)\n")
    (tmp_path / "ctx.toml").write_text('[project]\nstore = 3\n')
    r = ctx(["load"], tmp_path)
    assert (r.returncode, r.stderr) == (2, "ctx: error: ctx.toml: project.store: must be a non-empty string\n")


def test_the_built_wheel_runs_a_first_investigation_outside_the_repository(tmp_path):
    """Build the wheel, install it (without dependencies, which this venv already has) into a
    fresh venv outside the repository, and go from an empty folder to a report: init, load,
    investigate, runs, report latest. The default install has no vector model (the `vectors`
    extra), so the dependencies are this venv's minus wordllama."""
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", wheels,
                    REPO], check=True, capture_output=True, timeout=600)
    (wheel,) = wheels.glob("ctx_investigator-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True, timeout=600)
    vpy = venv / "bin" / "python"
    subprocess.run([vpy, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel], check=True,
                   capture_output=True, timeout=600)
    site = subprocess.run([vpy, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # the dependencies come from this test venv's site-packages (never its editable ctxcli, nor
    # the vectors extra): a folder of links to its entries, on the fresh venv's path
    deps = tmp_path / "deps"
    deps.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name.lower()
        if not name.startswith(("wordllama", "ctxcli", "ctx_investigator", "__editable__")) \
                and entry.suffix != ".pth":
            (deps / entry.name).symlink_to(entry)
    Path(site, "_deps.pth").write_text(f"{deps}\n")
    work = tmp_path / "empty"
    work.mkdir()
    exe = str(venv / "bin" / "ctx")
    where = subprocess.run([vpy, "-c", "import ctxcli; print(ctxcli.__file__)"], cwd=work, capture_output=True,
                           text=True, env=_env()).stdout
    assert where.startswith(site), where
    r = subprocess.run([vpy, "-c", "import importlib.util as u; print(u.find_spec('wordllama'))"], cwd=work,
                       capture_output=True, text=True, env=_env())
    assert r.stdout == "None\n"
    r = ctx(["init", "--example", "claims"], work, exe=exe)
    assert r.returncode == 0, r.stderr
    assert ctx(["load"], work, exe=exe).returncode == 0
    r = ctx(["investigate", "C-102", "--as-of", "2026-07-23T12:00:00+08:00", "--json"], work, exe=exe)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["answer"]["verdict"] == "complete"
    (run,) = (work / "runs").glob("C-102-*/pack.json")
    r = ctx(["runs", "--json"], work, exe=exe)
    assert r.returncode == 0, r.stderr
    assert [(x["folder"], x["case_id"], x["verdict"]) for x in json.loads(r.stdout)] == [
        (f"runs/{run.parent.name}", "C-102", "complete")]
    r = ctx(["report", "latest"], work, exe=exe)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"wrote {run.parent / 'report.html'}: pk-")
    assert "C-102" in (run.parent / "report.html").read_text(encoding="utf-8")
    # the hybrid strategy, without the vectors extra: one line naming the pip command
    r = ctx(["investigate", "C-102", "--strategy", "hybrid"], work, exe=exe)
    assert (r.returncode, r.stderr) == (2, "ctx: error: --strategy hybrid needs the vector model, which is not "
                                           "installed: pip install 'ctx-investigator[vectors]'\n")


def test_runs_lists_the_project_runs_and_latest_names_the_newest(tmp_path):
    assert ctx(["init"], tmp_path).returncode == 0
    r = ctx(["replay", "latest"], tmp_path)
    assert (r.returncode, r.stderr) == (2, "ctx: error: no runs yet under runs: `latest` names the newest run folder "
                                           "there (run `ctx investigate` first)\n")
    assert ctx(["investigate", "EXP-7", "--out", "runs/a"], tmp_path).returncode == 0
    assert ctx(["investigate", "EXP-7", "--out", "runs/b", "--as-of", "2026-10-06T12:00:00+02:00"],
               tmp_path).returncode == 0       # another pack
    os.utime(tmp_path / "runs/a/pack.json", (2_000_000_000, 2_000_000_000))     # a is the newer
    os.utime(tmp_path / "runs/b/pack.json", (1_900_000_000, 1_900_000_000))
    (tmp_path / "runs" / "notes").mkdir()                                        # not a run folder
    r = ctx(["runs", "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert [(x["folder"], x["case_id"], x["subject"], x["verdict"], x["signed"], x["written_at"]) for x in rows] == [
        ("runs/a", "EXP-7", "analyst-4", "complete", False, "2033-05-18T03:33:20+00:00"),
        ("runs/b", "EXP-7", "analyst-4", "complete", False, "2030-03-17T17:46:40+00:00")]
    assert rows[0]["pack_id"] != rows[1]["pack_id"]
    r = ctx(["explain-omissions", "latest", "--json"], tmp_path)
    assert r.returncode == 0 and json.loads(r.stdout)["pack_id"] == rows[0]["pack_id"]
    r = ctx(["render", "runs/b", "--format", "markdown"], tmp_path)          # a run folder, not only its pack.json
    assert r.returncode == 0 and r.stdout
    assert ctx(["runs", "--case", "NOPE", "--json"], tmp_path).stdout == "[]\n"


def test_replay_from_outside_the_project_reads_the_packs_own_project(tmp_path):
    proj = tmp_path / "proj"
    assert ctx(["init", "proj"], tmp_path).returncode == 0
    assert ctx(["investigate", "EXP-7", "--out", "runs/one"], proj).returncode == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = ctx(["replay", proj / "runs" / "one"], elsewhere)
    assert r.returncode == 0, r.stderr
    assert ": identical" in r.stdout
    assert list(elsewhere.iterdir()) == []


def test_every_data_file_of_the_package_is_package_data():
    """Each non-Python file under src/ctxcli (templates, schemas, word lists, weights, the
    scaffold) is matched by a ``[tool.setuptools.package-data]`` glob of its package, so the
    wheel carries it (the wheel test above runs only what one investigation reads)."""
    import tomllib

    globs = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    src = REPO / "src"
    carried = {f for pkg, pats in globs.items() for pat in pats for f in src.joinpath(*pkg.split(".")).glob(pat)}
    data = {f for f in (src / "ctxcli").rglob("*")
            if f.is_file() and f.suffix not in (".py", ".pyc") and "__pycache__" not in f.parts}
    assert len(data) > 50 and sorted(str(f.relative_to(src)) for f in data - carried) == []


def _git(args, cwd: Path) -> str:
    env = {**_env(), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def test_init_writes_a_gitignore_so_git_add_never_takes_the_store_secret_or_runs(tmp_path):
    """Issue 49 item 4: after init, load, a run and a memory record, `git add -A` stages the
    project's files and none of .ctx/ (store, secret.key) or runs/."""
    r = ctx(["init", "--example", "claims", "--json"], tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert ".gitignore" in doc["files"] and doc["kept"] == []
    from ctxcli.scaffold import GITIGNORE_TEXT

    assert (tmp_path / ".gitignore").read_text() == GITIGNORE_TEXT
    assert ctx(["load"], tmp_path).returncode == 0
    assert ctx(["investigate", "C-102"], tmp_path).returncode == 0
    assert ctx(["remember", "note", "--tenant", "tenant-demo", "--subject", "investigator-01", "--ttl", "1d",
                "--reviewed-by", "lead-01"], tmp_path).returncode == 0
    assert (tmp_path / ".ctx" / "secret.key").is_file() and (tmp_path / "runs" / "memory").is_dir()
    _git(["init", "-q"], tmp_path)
    _git(["add", "-A"], tmp_path)
    staged = _git(["ls-files"], tmp_path).splitlines()
    assert ".gitignore" in staged and "ctx.toml" in staged and "examples/cases/C-102.yaml" in staged
    assert [f for f in staged if f.startswith((".ctx/", "runs/"))] == []


def test_init_keeps_a_gitignore_that_is_there(tmp_path):
    mine = tmp_path / ".gitignore"
    mine.write_text("node_modules/\n")
    r = ctx(["init"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("wrote a new project into . (9 files)\n"
                        "kept the .gitignore that was there: make sure it ignores /.ctx/ (the store and its "
                        "secret.key) and /runs/\n"
                        "next: ctx check && ctx load && ctx investigate EXP-7\n")
    assert mine.read_text() == "node_modules/\n"
    other = tmp_path / "other"
    other.mkdir()
    (other / ".gitignore").symlink_to(mine)
    doc = json.loads(ctx(["init", "--json"], other).stdout)
    assert doc["kept"] == [".gitignore"] and ".gitignore" not in doc["files"]
    assert (other / ".gitignore").is_symlink() and mine.read_text() == "node_modules/\n"
