"""Case parameters: a playbook declares typed ``params``; a case (and a variant) gives their
values; the playbook uses them as ``{param.NAME}``."""

from __future__ import annotations

from typing import Any


def param_problems(case, pb) -> list[tuple[str, str]]:
    """(yaml path, message) for every case or variant parameter that does not resolve."""
    declared = dict(getattr(pb, "params", {}) or {})
    out: list[tuple[str, str]] = []
    sets: list[tuple[str, dict[str, Any]]] = [("params", dict(getattr(case, "params", {}) or {}))]
    sets += [(f"variants.{k}.params", dict(getattr(v, "params", {}) or {})) for k, v in case.variants.items()]
    for where, given in sets:
        for name, value in given.items():
            if name not in declared:
                out.append((f"{where}.{name}", f"parameter {name} is not declared by playbook {pb.playbook_id}"
                            + (f" (declares: {', '.join(sorted(declared))})" if declared else "")))
            else:
                msg = declared[name].type_error(value)
                if msg:
                    out.append((f"{where}.{name}", f"parameter {name}: {msg}"))
    base = sets[0][1]
    for name, spec in sorted(declared.items()):
        if spec.required and spec.default is None and name not in base:
            out.append(("params" if base else "case_id", f"parameter {name} is required by playbook "
                                                       f"{pb.playbook_id} but not given"))
    return out
