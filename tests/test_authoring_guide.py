"""docs/authoring.md builds its example domain from the guide's own snippets: every block
marked ``<!-- file: PATH -->`` is written into an empty project, every ``<!-- run -->`` console
block is run there as a subprocess (``$ `` lines are commands, the lines below them must
appear in their output, ``…`` standing for any text), and every ``<!-- output: PATH -->``
block must appear in that file. Then the outcomes the guide describes are checked exactly, so
a wrong edit of the guide (or a change of ctx that makes it untrue) fails here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

GUIDE = REPO / "docs" / "authoring.md"
BLOCK = re.compile(r"<!-- (file: (?P<path>\S+)|run|output: (?P<out>\S+)) -->\n```[a-z]*\n(?P<body>.*?)\n```", re.S)


def blocks() -> list[tuple[str, str | None, str]]:
    return [("file" if m["path"] else "output" if m["out"] else "run", m["path"] or m["out"], m["body"])
            for m in BLOCK.finditer(GUIDE.read_text(encoding="utf-8"))]


def _env(proj: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}
    bindir = str(Path(sys.executable).parent)      # the venv's `ctx`
    env.update(CTX_ROOT=str(proj), NO_COLOR="1", COLUMNS="200", PATH=bindir + os.pathsep + env.get("PATH", ""))
    return env


def _matches(want: str, got: str) -> bool:
    return re.fullmatch(".*".join(map(re.escape, want.split("…"))), got) is not None


def _in_order(want: list[str], got: list[str]) -> list[str]:
    """The wanted lines not found, in order, among ``got``."""
    missing, i = [], 0
    for w in want:
        j = next((k for k in range(i, len(got)) if _matches(w, got[k])), None)
        if j is None:
            missing.append(w)
        else:
            i = j + 1
    return missing


def _commands(body: str) -> list[tuple[str, list[str]]]:
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif line.strip():
            out[-1][1].append(line.rstrip())
    return out


def test_the_guide_names_its_files():
    files = [p for kind, p, _ in blocks() if kind == "file"]
    assert files == ["manifests/sources/expense-ledger.yaml", "manifests/sources/travel-policy.yaml",
                     "sources/expense-ledger/objects.jsonl", "sources/expense-ledger/entities.jsonl",
                     "sources/expense-ledger/relations.jsonl", "sources/travel-policy/travel-policy.md",
                     "manifests/playbooks/expense-review.yaml", "examples/cases/EXP-7.yaml"]
    assert [k for k, _, _ in blocks() if k != "file"] == ["run", "output", "run", "run"]
    assert "(docs/authoring.md)" in (REPO / "README.md").read_text(encoding="utf-8")


def test_the_guide_builds_and_answers_its_domain(tmp_path):
    proj = tmp_path / "expenses"
    proj.mkdir()
    env = _env(proj)
    ran: list[tuple[str, int]] = []
    for kind, path, body in blocks():
        if kind == "file":
            target = proj / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(body + "\n", encoding="utf-8")
        elif kind == "output":
            got = (proj / path).read_text(encoding="utf-8").splitlines()
            want = [ln for ln in body.splitlines() if ln.strip()]
            assert _in_order(want, got) == [], f"{path} lacks lines the guide shows"
        else:
            for cmd, want in _commands(body):
                r = subprocess.run(["bash", "-c", cmd], cwd=proj, env=env, capture_output=True, text=True,
                                   timeout=300)
                ran.append((cmd, r.returncode))
                got = [ln.rstrip() for ln in (r.stdout + r.stderr).splitlines()]
                assert r.returncode == 0, (cmd, r.stdout, r.stderr)
                assert "Traceback" not in r.stderr
                assert _in_order(want, got) == [], (cmd, want, got)
    assert [c for c, _ in ran] == [
        "ctx check", "ctx load", "ctx investigate EXP-7 --out runs/exp-7", "ctx eval",
        "mv sources/expense-ledger/relations.jsonl relations.jsonl.off", "ctx load",
        "ctx investigate EXP-7 --out runs/no-link", "mv relations.jsonl.off sources/expense-ledger/relations.jsonl"]

    # section 6: the verdict, the action, and exactly which objects the claim cites
    pack = json.loads((proj / "runs/exp-7/pack.json").read_text())
    answer = json.loads((proj / "runs/exp-7/answer.json").read_text())
    by_ev = {e["evidence_id"]: e["object_id"] for e in pack["evidence"]}
    assert (answer["verdict"], answer["recommended_action"]["action"]) == ("complete", "ask_finance_approval")
    assert [(c["claim_id"], c["status"], sorted(by_ev[x] for x in c["evidence"]), c["facts"])
            for c in answer["claims"]] == [
        ("hotel_rate", "fact", ["EXP-7", "TRAVEL-POLICY-2026#hotel-nights"],
         {"amount": 1840, "nightly_cap": 400, "nightly_rate": 460.0, "nights": 4})]
    assert sorted(by_ev.values()) == ["EXP-7", "TRAVEL-POLICY-2026#hotel-nights"]
    assert pack["request"]["params"] == {"month": "2026-09"}
    assert pack["state"] == {"gaps": "full", "rounds": 1, "stop_reason": "evidence_sufficient"}
    # the supports rule: the receipt scan (supports: []) is never retrieved, so it is nowhere
    for name in ("pack.json", "trace.jsonl", "answer.json", "answer.md"):
        assert "EXP-7-RECEIPT" not in (proj / "runs/exp-7" / name).read_text()
    assert pack["omissions"] == []

    # section 7: without the relation, round 2 runs the follow-up route and the gate rejects it
    pack = json.loads((proj / "runs/no-link/pack.json").read_text())
    answer = json.loads((proj / "runs/no-link/answer.json").read_text())
    assert pack["state"] == {"gaps": "full", "rounds": 2, "stop_reason": "no_progress"}
    assert [(q["channel"], q["text"], q["question_terms"]) for q in pack["rounds"][1]["queries"]] == [
        ("fulltext", "hotel night cap EXP-7 cost travel policy", ["cost", "travel", "policy"])]
    assert [(o["object_id"], o["gate"], o["reason"], o["round"]) for o in pack["omissions"]] == [
        ("TRAVEL-POLICY-2026#hotel-nights", "relevance", "not_linked_to_case", 2)]
    assert [(m["type"], m["reason"], m["rejected_by"]) for m in pack["missing"]] == [
        ("travel_policy", "rejected_by_gates", ["relevance"])]
    assert (answer["verdict"], answer["recommended_action"]["action"]) == ("insufficient_evidence",
                                                                           "request_missing_evidence")
    (claim,) = answer["claims"]
    assert (claim["status"], claim["text"]) == ("unknown", "Unknown: the pack lacks evidence for travel_policy (The "
                                                "section of the travel policy that caps the cost of a hotel night).")


@pytest.mark.parametrize("edit, code, message", [
    # a misspelt fact in the playbook: ctx check names the file, line and column
    (("manifests/playbooks/expense-review.yaml", "round(amount / nights, 2)", "round(amount / night, 2)"), 1,
     "manifests/playbooks/expense-review.yaml:"),
    # the case forgets the required param
    (("examples/cases/EXP-7.yaml", 'params:\n  month: "2026-09"\n', ""), 1, "examples/cases/EXP-7.yaml:"),
])
def test_ctx_check_catches_a_wrong_edit_of_the_guides_files(tmp_path, edit, code, message):
    proj = tmp_path / "expenses"
    for kind, path, body in blocks():
        if kind == "file":
            (proj / path).parent.mkdir(parents=True, exist_ok=True)
            (proj / path).write_text(body + "\n", encoding="utf-8")
    path, old, new = edit
    text = (proj / path).read_text()
    assert old in text
    (proj / path).write_text(text.replace(old, new))
    r = subprocess.run(["bash", "-c", "ctx check"], cwd=proj, env=_env(proj), capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == code and r.stdout.startswith(message), (r.stdout, r.stderr)
    assert r.stderr == "checked 4 file(s): 1 problem(s)\n"
