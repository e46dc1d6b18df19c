"""Turn a Pydantic ValidationError into one user-facing line naming the field."""

from __future__ import annotations

from pydantic import ValidationError


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
