"""The project's tool registry: ``manifests/tools.yaml``.

    tools:
      - name: metrics.query        # the tool name a tool result carries
        authoritative: true        # its results are packed with trust authoritative
        scopes: [service:read]     # scopes a subject needs to use it (all of them)
        purposes: [PURPOSE]        # purposes it serves (empty: any)
        version: "2.1"             # the version `ctx tool-result shape` records (optional)
        shape: {…}                 # how ctx shapes its raw result (optional; models/tool_shape.py)
        fit: [{only: compare}]     # how ctx may shape a result further to fit its room (optional)

A tool not in the registry is unregistered: its results are ``untrusted`` and it is never
listed in ``pack.tools``. No registry file: no tool is registered.
"""

from __future__ import annotations

from pathlib import Path

from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from typing_extensions import Annotated

from ..models.manifest import Ident, Scope
from ..models.tool_shape import FitStep, ShapeSpec

REGISTRY_FILE = "tools.yaml"


class ToolSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Ident
    authoritative: bool = False
    scopes: list[Scope] = Field(default_factory=list)
    purposes: list[Ident] = Field(default_factory=list)
    version: Optional[Annotated[str, StringConstraints(min_length=1, max_length=200)]] = None
    shape: Optional[ShapeSpec] = Field(None, description="how ctx shapes the tool's raw result "
                                       "(ctx tool-result shape; the raw-vs-shaped check)")
    fit: list[FitStep] = Field(default_factory=list, max_length=20,
                               description="how ctx may shape a result further when it does not fit its room, "
                               "tried in order (none: such a result is omitted over_budget)")

    def usable_by(self, scopes: list[str], purpose: str) -> bool:
        return set(self.scopes) <= set(scopes) and (not self.purposes or purpose in self.purposes)


class Registry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: list[ToolSpec] = Field(default_factory=list)

    def get(self, name: str) -> ToolSpec | None:
        return next((t for t in self.tools if t.name == name), None)


def registry_path(manifests_dir: Path | None = None) -> Path:
    from .. import paths

    return (manifests_dir or paths.manifests_dir()) / REGISTRY_FILE


def read_registry(path: Path | None = None) -> Registry:
    """The registry at ``path`` (default: the project's); an empty one when there is no file.
    A malformed file is an InputError naming the file and field."""
    from ..paths import display
    from ..util.pyd import input_error
    from ..util.yamlio import read_yaml_marked

    p = path or registry_path()
    if not p.is_file():
        return Registry()
    marks = read_yaml_marked(p, display=display(p))
    try:
        reg = Registry.model_validate(marks.data if marks.data is not None else {})
    except ValidationError as e:
        raise input_error(e, file=display(p), marks=marks) from None
    names = [t.name for t in reg.tools]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        from ..errors import InputError

        raise InputError(f"tool {dup!r} is registered twice", file=display(p), field="tools")
    return reg


def usable_tools(reg: Registry, case_tools: list[str], scopes: list[str], purpose: str) -> list[str]:
    """``pack.tools``: the case's tools that are registered and that this subject (scopes) may
    use for this purpose, in the case's order; an unregistered or forbidden tool is left out."""
    out = []
    for name in case_tools:
        spec = reg.get(name)
        if spec is not None and spec.usable_by(scopes, purpose) and name not in out:
            out.append(name)
    return out
