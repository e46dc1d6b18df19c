"""The project's distribution on PyPI, named once: every install hint ctx prints is built here.

The import package is ``ctxcli`` and the command is ``ctx``; the distribution is
``ctx-investigator`` (``ctxcli`` on PyPI is an unrelated project)."""

from __future__ import annotations

DISTRIBUTION = "ctx-investigator"
EXTRAS = ("all", "git", "otel", "postgres", "serve", "tables", "test", "vectors")


def install_hint(*extras: str | None) -> str:
    """The pip command that installs the distribution, with some of its declared extras."""
    chosen = [e for e in extras if e is not None]
    if not chosen:
        return f"pip install {DISTRIBUTION}"
    for extra in chosen:
        if extra not in EXTRAS:
            raise ValueError(f"unknown extra {extra!r}")
    return f"pip install '{DISTRIBUTION}[{','.join(chosen)}]'"


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (found, not imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require_extra(extra: str, module: str, what: str) -> None:
    """Refuse, with the one pip line, when ``module`` (a package of the ``extra``) cannot be
    found: ``what`` names what needs it. Checked where the extra is first needed, before any work."""
    if not installed(module):
        from ..errors import UsageError

        raise UsageError(f"{what} needs the {extra} extra, which is not installed: {install_hint(extra)}")
