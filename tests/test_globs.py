"""Path patterns of git sources and evidence rules (util/globs.py): gitignore's syntax,
anchored at the root, each edge on both sides."""

from __future__ import annotations

import pytest

from ctxcli.util.globs import match_any, selected


@pytest.mark.parametrize("pattern, path, expected", [
    # a pattern is a whole path from the root: "*.md" is a top-level file, not one at any depth
    ("*.md", "a.md", True),
    ("*.md", "docs/a.md", False),
    ("**/*.md", "a.md", True),
    ("**/*.md", "docs/x/a.md", True),
    ("**/*.md", "a.mdx", False),
    # "*" and "?" stay within one name
    ("docs/*.md", "docs/a.md", True),
    ("docs/*.md", "docs/x/a.md", False),
    ("docs/?.md", "docs/a.md", True),
    ("docs/?.md", "docs/ab.md", False),
    ("docs/?.md", "docs//.md", False),
    # "**/" in the middle: any folders, none too
    ("docs/**/a.md", "docs/a.md", True),
    ("docs/**/a.md", "docs/x/y/a.md", True),
    ("docs/**/a.md", "other/docs/a.md", False),
    # a folder's pattern matches every path under it, with or without "/**"
    ("docs/drafts", "docs/drafts/b.md", True),
    ("docs/drafts/**", "docs/drafts/x/b.md", True),
    ("docs/drafts", "docs/drafts.md", False),
    ("docs/drafts", "docs/draftsman/b.md", False),
    # a character class
    ("[ab].md", "a.md", True),
    ("[ab].md", "c.md", False),
    ("[!a].md", "a.md", False),
    # a name without a pattern character is that name, not a part of one
    ("rollback.md", "rollback.md", True),
    ("rollback.md", "ops/rollback.md", False),
    ("rollback.md", "xrollback.md", False),
])
def test_a_pattern_matches_exactly_the_paths_gitignore_would_from_the_root(pattern, path, expected):
    assert match_any(path, [pattern]) is expected


def test_include_then_exclude_and_no_pattern_matches_nothing():
    assert selected("docs/a.md", ["docs/**/*.md"], ["docs/drafts"]) is True
    assert selected("docs/drafts/b.md", ["docs/**/*.md"], ["docs/drafts"]) is False
    assert selected("top.md", ["docs/**/*.md"], []) is False
    assert match_any("a.md", []) is False
