"""Turn a Pydantic ValidationError into one user-facing line naming the field."""

from __future__ import annotations

from pydantic import ValidationError


_FACT_TAGS = frozenset({"str", "int", "float", "bool", "list[str]", "list[int]", "list[float]"})


def _kind(v) -> str:
    return {dict: "a mapping", list: "a list", type(None): "null"}.get(type(v), type(v).__name__)


def first_error(e: ValidationError) -> tuple[str, str]:
    err = e.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()) if p not in ("__root__", "[key]"))
    loc = loc.replace("from_", "from")
    msg = err.get("msg", "invalid")
    typ = err.get("type", "")
    if typ == "extra_forbidden":
        msg = "unknown field"
    elif typ == "missing":
        msg = "missing field"
    raw = err.get("loc", ())
    if len(raw) >= 3 and raw[0] == "facts" and str(raw[2]) in _FACT_TAGS:
        # one of FactValue's members refused it: say what a fact may be, at the fact
        v = err.get("input")
        loc = f"facts.{raw[1]}"
        bad = next((x for x in v if not isinstance(x, (str, int, float, bool))), None) if isinstance(v, list) else v
        what = f"a list holding {_kind(bad)}" if isinstance(v, list) else _kind(v)
        msg = (f"a fact is a text, a number, true/false or a list of them, not {what} (make each part a fact "
               "of its own, or write it as text)")
    elif typ == "string_type" and isinstance(err.get("input"), (dict, list)):
        msg += f" (got {_kind(err.get('input'))}: write one text)"
    msg = msg.removeprefix("Value error, ")
    # A model-level validator names its field as "field: message".
    if not loc and ": " in msg:
        loc, msg = msg.split(": ", 1)
    return loc or "(record)", msg


def input_error(e: ValidationError, *, file: str, marks=None):
    """The first error of ``e`` as an InputError at ``file:line:column`` (from ``marks``, a
    :class:`ctxcli.util.yamlio.Marks`, when given)."""
    from ..errors import InputError

    loc, msg = first_error(e)
    line = col = None
    if marks is not None:
        raw = e.errors()[0].get("loc", ())
        pos = marks.find(raw if raw else loc)
        if pos is None or (not raw and loc != "(record)"):
            pos = marks.find(loc) if loc != "(record)" else marks.find(())
        if pos:
            line, col = pos
    return InputError(msg, file=file, line=line, column=col, field=loc)
