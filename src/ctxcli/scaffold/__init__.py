"""``ctx init``: a new project in a folder, empty (a small commented domain to edit) or one of
the bundled examples. Nothing that exists is ever overwritten: the whole write is refused,
naming the first file in the way, before anything is written — except a ``.gitignore`` already
there, which is kept as it is (``InitResult.kept``)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import OutputError, UsageError

EMPTY = Path(__file__).resolve().parent / "empty"


@dataclass
class InitResult:
    root: Path
    example: str | None
    files: list[str] = field(default_factory=list)     # relative to root, sorted
    next_steps: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)      # files of ours that were there already, left as they are


GITIGNORE = ".gitignore"
# What ctx writes into a project that is not for version control (the defaults of ctx.toml).
GITIGNORE_TEXT = """\
# Written by `ctx init`; ctx never rewrites this file. What ctx writes that is not for
# version control:
# the store (ctx.toml `store`), its lock files and secret.key, the key of its opaque
# references and sealed digests: never commit it
/.ctx/
# run folders (ctx.toml `runs`), durable memory records (runs/memory), ctx serve's runs
/runs/
"""


def _plan(example: str | None) -> tuple[dict[str, Path], list[str]]:
    """{relative path: file to copy} and the commands to run next."""
    files = {p.relative_to(EMPTY).as_posix(): p for p in sorted(EMPTY.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts}
    if example is None:
        return files, ["ctx check", "ctx load", "ctx investigate EXP-7"]
    from ..bundled import bundle_root, example_cases, example_files

    root = bundle_root()
    chosen = {"ctx.toml": files["ctx.toml"]}
    chosen.update({rel: root / rel for rel in example_files(example)})
    first = (example_cases(example) or [""])[0]
    steps = ["ctx load", f"ctx investigate {first}", "ctx runs"]
    from ..embed.model import installed
    from ..load.extras import missing_for_files
    from ..load.vectors import asks

    missing = []
    if not installed() and any(rel.startswith("manifests/playbooks/") and asks(p) for rel, p in chosen.items()):
        missing.append("vectors")                    # a playbook of the example asks for vectors
    missing += missing_for_files(p for rel, p in chosen.items() if rel.startswith("manifests/sources/"))
    if missing:                                      # git or table sources whose readers are extras
        from ..util.distribution import install_hint

        steps.insert(0, install_hint(*missing))
    return chosen, steps


def init_project(dest: Path, example: str | None = None) -> InitResult:
    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise UsageError(f"{dest} is not a folder")
    plan, steps = _plan(example)
    for rel in plan:
        target = dest / rel
        if os.path.lexists(target):
            raise OutputError(f"{target} exists: ctx init writes only into a folder without these files "
                              "(nothing was written)")
    kept = [GITIGNORE] if os.path.lexists(dest / GITIGNORE) else []
    contents = {rel: srcfile.read_bytes for rel, srcfile in plan.items()}
    if not kept:
        contents[GITIGNORE] = GITIGNORE_TEXT.encode
    written: list[str] = []
    try:
        for rel, read in contents.items():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f".{target.name}.ctx-init.tmp")
            tmp.write_bytes(read())
            os.replace(tmp, target)
            written.append(rel)
    except OSError as e:
        raise OutputError(f"cannot write {dest}: {e.strerror or e}") from None
    return InitResult(root=dest, example=example, files=sorted(written), next_steps=steps, kept=kept)
