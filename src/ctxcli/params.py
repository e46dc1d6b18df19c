"""Case parameters: a playbook declares typed ``params``; a case (and a variant) gives their
values; the playbook uses them as ``{param.NAME}``."""

from __future__ import annotations

import re
from typing import Any


def undeclared(name: str, playbook_id: str, declared) -> str:
    """The message for a parameter the playbook does not declare: it names what it declares."""
    return (f"parameter {name} is not declared by playbook {playbook_id} "
            + (f"(declares: {', '.join(sorted(declared))})" if declared else "(it declares no parameters)"))


class _NoValue:
    """The value of a ``--param`` flag that is not ``NAME=VALUE`` (:func:`parse_param`)."""

    def __repr__(self) -> str:
        return "<not NAME=VALUE>"


NO_VALUE = _NoValue()


def refuse_malformed(given: dict[str, Any] | None, pb) -> None:
    """UsageError (exit 2) for the first ``--param`` that was not ``NAME=VALUE``, naming the flag
    and the parameters the run's playbook declares."""
    from .errors import UsageError

    for text, value in (given or {}).items():
        if value is NO_VALUE:
            declared = sorted(dict(getattr(pb, "params", {}) or {}))
            raise UsageError(f"--param {text!r}: expected NAME=VALUE with a lower-case NAME (playbook "
                             f"{pb.playbook_id} " + (f"declares: {', '.join(declared)})" if declared
                                                     else "declares no parameters)"))


def param_problems(case, pb) -> list[tuple[str, str]]:
    """(yaml path, message) for every case or variant parameter that does not resolve."""
    declared = dict(getattr(pb, "params", {}) or {})
    out: list[tuple[str, str]] = []
    sets: list[tuple[str, dict[str, Any]]] = [("params", dict(getattr(case, "params", {}) or {}))]
    sets += [(f"variants.{k}.params", dict(getattr(v, "params", {}) or {})) for k, v in case.variants.items()]
    for where, given in sets:
        for name, value in given.items():
            if name not in declared:
                out.append((f"{where}.{name}", undeclared(name, pb.playbook_id, declared)))
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


PARAM_IN_EXPR = re.compile(r"\bparam\.([a-z][a-z0-9_]*)\b")
PARAM_IN_TEXT = re.compile(r"\{param\.([a-z][a-z0-9_]*)\}")


def case_params(case, variant, pb, override: dict[str, Any] | None = None,
                extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The parameter values of a run: the playbook's defaults, then the case's, then the
    variant's (or ``override``, e.g. the values a pack recorded, for replay), then ``extra``. Raises UsageError
    when one is undeclared, mistyped or a required one is missing."""
    from .errors import UsageError

    refuse_malformed(extra, pb)
    declared = dict(pb.params)
    if override is not None:
        values = dict(override)
    else:
        values = {k: s.default for k, s in declared.items() if s.default is not None}
        values.update(case.params)
        if variant is not None:
            values.update(variant.params)
    values.update(extra or {})     # --param NAME=VALUE on the command line
    for k, v in sorted(values.items()):
        if k not in declared:
            raise UsageError(undeclared(k, pb.playbook_id, declared))
        err = declared[k].type_error(v)
        if err:
            raise UsageError(f"parameter {k}: {err}")
    for k, s in sorted(declared.items()):
        if s.required and k not in values:
            raise UsageError(f"parameter {k} is required by playbook {pb.playbook_id} but not given")
    return dict(sorted(values.items()))


def _literal(v: Any) -> str:
    return repr(v)   # str, int, float, bool: a Python literal the safe evaluator reads back


def _text(s: str, params: dict[str, Any], *, braces: bool = False) -> str:
    def sub(m: re.Match) -> str:
        if m.group(1) not in params:
            return m.group(0)
        from .answer.answer import fmt

        v = fmt(params[m.group(1)])
        return v.replace("{", "{{").replace("}", "}}") if braces else v

    return PARAM_IN_TEXT.sub(sub, s)


def _expr(s: str, params: dict[str, Any]) -> str:
    return PARAM_IN_EXPR.sub(lambda m: _literal(params[m.group(1)]) if m.group(1) in params else m.group(0), s)


def resolve(pb, params: dict[str, Any]):
    """The playbook with ``{param.NAME}`` filled in: ``where`` values (a value that is exactly
    ``{param.NAME}`` keeps the parameter's type), full-text terms, window entities, path-template seeds,
    expressions (``param.NAME``) and claim texts. Unchanged when nothing refers to a param."""
    from .models.playbook import Playbook

    d = pb.model_dump(mode="json", by_alias=True)
    before = repr(d)
    if "param." not in before:
        return pb
    for f in d["facts"]:
        for k, v in list(f["where"].items()):
            if isinstance(v, str):
                m = PARAM_IN_TEXT.fullmatch(v)
                f["where"][k] = params[m.group(1)] if m and m.group(1) in params else _text(v, params)
        if f.get("expr"):
            f["expr"] = _expr(f["expr"], params)
    for c in d["claims"]:
        if c.get("when"):
            c["when"] = _expr(c["when"], params)
        for key in ("text", "else_text"):
            if c.get(key):
                c[key] = _text(c[key], params, braces=True)
    for r in d["decision"]["rules"]:
        r["when"] = _expr(r["when"], params)
        r["explanation"] = _text(r["explanation"], params)
    for et in d["evidence_types"]:
        for spec in (et["retrieve"], et.get("followup")):
            if spec and spec.get("fulltext"):
                spec["fulltext"]["terms"] = [_text(t, params) for t in spec["fulltext"]["terms"]]
            if spec and spec.get("window") and spec["window"].get("entity"):
                spec["window"]["entity"] = _text(spec["window"]["entity"], params)
    for a in d.get("aggregates", []):
        if a["over"].get("entity"):
            a["over"]["entity"] = _text(a["over"]["entity"], params)
    for t in d["path_templates"]:
        t["seeds"] = [_text(x, params) for x in t["seeds"]]
    return Playbook.model_validate(d)


def template_seeds(pb) -> list[str]:
    """Entity keys the (resolved) playbook's path templates add to the seeds."""
    return sorted({s for t in pb.path_templates for s in t.seeds if "{" not in s})


def parse_param(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` from the command line; the value is read as a YAML scalar (``5`` is an
    integer, ``true`` a boolean, ``2026-08`` a string). A text that is not ``NAME=VALUE`` gives
    (the text, :data:`NO_VALUE`): the run refuses it once it knows the playbook, naming its
    declared parameters (:func:`refuse_malformed`)."""
    from .util.yamlio import loads_yaml

    name, sep, raw = text.partition("=")
    if not sep or not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name):
        return text, NO_VALUE
    try:
        value = loads_yaml(raw, file="--param") if raw.strip() else ""
    except Exception:
        value = raw
    if not isinstance(value, (str, int, float, bool)):
        value = raw
    return name, value
