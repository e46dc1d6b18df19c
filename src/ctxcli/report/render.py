"""The page: Jinja2 templates (package data) with autoescaping on for every template.

Every string from a source is untrusted: autoescaping makes markup text, and ``finalize``
makes control and bidirectional-override characters visible escapes before escaping, so a
title cannot reorder or hide what is printed around it. The page has no script, and its
Content-Security-Policy forbids scripts and every network fetch.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from . import view
from .loader import Run

GENERATOR = "ctx report 1"
CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'")


def _visible(value: Any) -> Any:
    from markupsafe import Markup

    if not isinstance(value, str) or isinstance(value, Markup):   # Markup: the templates' own output
        return value
    out = []
    for ch in value:
        o = ord(ch)
        if ch in "\n\t":
            out.append(ch)
        elif o < 32 or o == 127 or 0x80 <= o < 0xA0:
            out.append(f"\\x{o:02x}")
        elif o in (0x2028, 0x2029, 0x200E, 0x200F, 0xFEFF) or 0x202A <= o <= 0x202E or 0x2066 <= o <= 0x2069:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


# After a run of separators, before the next character: where an id may break on a narrow screen.
_BREAK_AFTER = re.compile(r"(?<=[-_./:@#,=])(?=[^-_./:@#,=])")


def breakable(value: Any) -> Any:
    """An id (object id, locator, reference, query id, fact value) as escaped text with a ``<wbr>``
    after each run of separators (``- _ . / : @ # , =``): a narrow screen may wrap it there, and
    only there (the CSS never breaks inside a word of an id); copying the text copies the id."""
    from markupsafe import Markup, escape

    if isinstance(value, Markup):
        return value
    text = _visible(value if isinstance(value, str) else view.show(value))
    return Markup("<wbr>").join(escape(part) for part in _BREAK_AFTER.split(text))


@lru_cache(maxsize=1)
def _env():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("ctxcli.report", "templates"), autoescape=True,
                      undefined=StrictUndefined, finalize=_visible, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True)
    env.filters["show"] = view.show
    env.filters["short"] = view.short
    env.filters["wbr"] = breakable
    return env


def render(run: Run, other: Run | None = None, *, key: bytes | None = None,
           audit: dict[str, Any] | None = None) -> str:
    """The report page for ``run`` (compared with ``other`` when given, ``key`` the store secret
    that matches withheld objects across them, as for ``ctx diff``; ``audit``: the audit section
    from :func:`.audit.read_audit`), as a string."""
    env = _env()
    return env.get_template("report.html.j2").render(v=view.build(run, other, key, audit), csp=CSP,
                                                     generator=GENERATOR)
