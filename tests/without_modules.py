"""Run ``ctx`` in a subprocess as if some packages were not installed: a meta-path finder
raises ``ModuleNotFoundError`` for every module under the given names (what Python says when an
extra is missing), before ``ctx`` imports anything."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
BLOCKED = {blocked!r}

class Missing:
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, Missing())
for name in list(sys.modules):
    if any(name == b or name.startswith(b + ".") for b in BLOCKED):
        del sys.modules[name]
from ctxcli.cli.main import run
sys.argv = ["ctx", *{args!r}]
run()
"""


def run_without(blocked: tuple[str, ...], args: list, **kw) -> subprocess.CompletedProcess:
    """``ctx ARGS`` with the modules ``blocked`` (and their submodules) impossible to import."""
    script = SCRIPT.format(blocked=tuple(blocked), args=[str(a) for a in args])
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, **kw)
