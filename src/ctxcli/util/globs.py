"""Path patterns (a git source's ``include``/``exclude``, an evidence rule's ``paths``):
gitignore's pattern syntax, matched by ``pathspec``, anchored at the repository or snapshot
folder. ``*`` and ``?`` match within one name, ``[a-z]`` one character of a class, ``**`` any
number of folders (none included); a pattern that names a folder matches every path under it
("runbooks/drafts" and "runbooks/drafts/**" alike). A pattern is a whole path from the root:
"*.md" is a Markdown file at the top, "**/*.md" one at any depth."""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable


@lru_cache(maxsize=256)
def _spec(patterns: tuple[str, ...]):  # noqa: ANN202
    import pathspec

    # a leading "/" anchors a gitignore pattern at the root (without it, a pattern without a
    # "/" would match a name at any depth)
    return pathspec.PathSpec.from_lines("gitignore", ["/" + p for p in patterns])


def match_any(path: str, patterns: Iterable[str]) -> bool:
    """``path`` (with "/" between names, relative to the root) matches one of ``patterns``."""
    pats = tuple(patterns)
    return bool(pats) and _spec(pats).match_file(path)


def selected(path: str, include: Iterable[str], exclude: Iterable[str]) -> bool:
    """``path`` matches an ``include`` pattern and no ``exclude`` pattern."""
    return match_any(path, include) and not match_any(path, exclude)
