"""ctx: governed, replayable Context Packs for LLM and agent calls."""

__version__ = "0.1.0"
BUILDER_VERSION = "ctx-builder/0.2.1"
