"""Per-language word lists (one module per language) and the templates that turn them
into rules. Importing this package registers the rules with the engine."""

from __future__ import annotations

from importlib import import_module

from ._templates import register

LANGUAGES: tuple[str, ...] = ("en", "zh", "de", "fr", "es", "it", "pt", "ja", "ko", "ru")

for _code in LANGUAGES:
    register(_code, import_module(f".{_code}", __name__).WORDS)
