"""CI demonstration: `ctx eval --answerer model` on the bundled cases against the scripted
OpenAI-compatible server (tests/model_server.py), which restates each case's deterministic
answer (base case) as a model would. Variants get their base case's answer, like a model
ignoring what changed: the validator rejects those that the variant's pack does not support.
Prints the answer-layer metrics; exits with eval's exit code.

    python tests/model_eval_demo.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    from ctxcli import api, evaluate

    by_case = {}
    for f in evaluate.case_files([]):
        res = api.investigate(api.InvestigateOptions(case=str(f)))
        a = res.answer
        ans = {"verdict": a["verdict"], "recommended_action": a["recommended_action"]["action"],
               "summary": a["summary"],
               "claims": [{"text": c["text"], "status": c["status"], "evidence": c["evidence"]} for c in a["claims"]]}
        by_case[res.pack["request"]["case_id"]] = [{"status": 200, "content": json.dumps(ans)}]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps({"by_case": by_case}), encoding="utf-8")
        srv = subprocess.Popen([sys.executable, str(HERE / "model_server.py"), str(script), str(Path(tmp) / "log")],
                               stdout=subprocess.PIPE, text=True)
        try:
            port = int(srv.stdout.readline().split()[1])
            return subprocess.call(["ctx", "eval", "--answerer", "model", "--endpoint", f"http://127.0.0.1:{port}",
                                    "--model", "scripted"])
        finally:
            srv.terminate()
            srv.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
