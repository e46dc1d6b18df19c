"""Stop words of question-aware planning, kept as data: one file per language in
``engine/stopword_lists/`` (``en.txt``, ``zh.txt``, ``ja.txt``; ``#`` starts a comment, words are
separated by white space).

English words are dropped after tokenising (:func:`words`). Chinese and Japanese are not
written with spaces, and the full-text index (``load/fts_text.py``) turns a Han run into
overlapping bigrams and keeps a run of other letters (kana) whole, so a function word inside
a run would become or pollute a term. :func:`strip_function_words` therefore removes them
from the question's text *before* tokenising: each Han run (and, in a Japanese question, each
hiragana run) is cut at the language's stop words, longest match first, so no bigram straddles
a particle; a piece of one character left over is dropped (a lone Han character or
okurigana rarely names anything and is indexed only where a document has it alone).

A question that holds kana is Japanese; otherwise Han text is Chinese.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from importlib import resources

import regex

_HAN = regex.compile(r"\p{Han}+")
_HIRAGANA = regex.compile(r"\p{Hiragana}+")
_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")


@lru_cache(maxsize=None)
def words(lang: str) -> frozenset[str]:
    """The stop words of ``lang`` (en, zh, ja)."""
    return frozenset(data_words("stopword_lists", lang))


def data_words(folder: str, name: str) -> tuple[str, ...]:
    """The entries of the word list ``engine/<folder>/<name>.txt``, in file order: separated by
    white space, ``#`` starting a comment (the stop words here, compression's cue lexicons in
    ``cue_lists/``)."""
    text = resources.files(__package__).joinpath(folder).joinpath(f"{name}.txt").read_text(encoding="utf-8")
    out: list[str] = []
    for line in text.splitlines():
        out.extend(line.split("#", 1)[0].split())
    return tuple(out)


def language(text: str) -> str | None:
    """``ja`` when the text holds kana, ``zh`` when it holds Han characters, else None."""
    if _KANA.search(text):
        return "ja"
    if _HAN.search(text):
        return "zh"
    return None


def _pieces(run: str, stop: frozenset[str], longest: int) -> list[str]:
    """``run`` without its stop words (longest match at each position), as the pieces between them."""
    out: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(run):
        n = next((k for k in range(min(longest, len(run) - i), 0, -1) if run[i:i + k] in stop), 0)
        if n:
            if cur:
                out.append("".join(cur))
                cur = []
            i += n
        else:
            cur.append(run[i])
            i += 1
    if cur:
        out.append("".join(cur))
    return out


def strip_function_words(text: str) -> str:
    """``text`` with the Chinese or Japanese function words blanked out (see the module)."""
    lang = language(text)
    if lang is None:
        return text
    text = unicodedata.normalize("NFKC", text)
    stop = words(lang)
    longest = max(len(w) for w in stop)

    def cut(m: regex.Match) -> str:
        return " " + " ".join(p for p in _pieces(m.group(0), stop, longest) if len(p) > 1) + " "

    text = _HAN.sub(cut, text)
    if lang == "ja":
        text = _HIRAGANA.sub(cut, text)
    return text
