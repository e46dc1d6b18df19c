"""The project's distribution on PyPI, named once: every install hint ctx prints is built here.

The import package is ``ctxcli`` and the command is ``ctx``; the distribution is
``ctx-investigator`` (``ctxcli`` on PyPI is an unrelated project)."""

from __future__ import annotations

DISTRIBUTION = "ctx-investigator"
EXTRAS = ("otel", "postgres", "tables", "test", "vectors")


def install_hint(extra: str | None = None) -> str:
    """The pip command that installs the distribution, with one of its declared extras."""
    if extra is None:
        return f"pip install {DISTRIBUTION}"
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}")
    return f"pip install '{DISTRIBUTION}[{extra}]'"
