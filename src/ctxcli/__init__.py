"""ctx: governed, replayable Context Packs for LLM and agent calls."""

__version__ = "0.1.0"
BUILDER_VERSION = "ctx-builder/0.2.1"


def version_line() -> str:
    """What ``ctx --version`` prints (cli/main.py answers it without loading the application)."""
    return f"ctx {__version__} ({BUILDER_VERSION})"
