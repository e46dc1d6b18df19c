"""Numbers in one comparable notation, whatever script or wording a model writes them in.

The validator compares values after :func:`normalise`, applied alike to a claim and to the
evidence it cites:

- digits of every script (full-width ``１２８``, Arabic-Indic ``١٢٨``, Devanagari ``१२८`` …, and
  any mix of them with ASCII) become ASCII digits (``unicodedata.decimal``, then NFKC);
- superscript and subscript digits are kept apart from the number before them
  (``128000²`` is ``128000^2``, never ``128000``);
- the minus sign (U+2212 and its look-alikes) is ``-``; a ``+`` before a number is dropped;
- digit groups separated by a comma, a space (also no-break and thin spaces) or an apostrophe
  are joined (``23 000`` = ``23,000`` = ``23000``) when every group after the first has three digits;
- English number words become digits (``one hundred thirty-eight thousand`` = ``138000``;
  a lone word below four — "one of them" — is left as a word), with ``text2num``;
- Chinese numerals become digits (``十二万八千`` = ``12万8千`` = ``12.8万`` = ``128000``), with ``cn2an``;
  a single numeral character ("一致", "星期一") is left alone.

Roman numerals are read by the validator itself (only in claims, see ``validate.py``), because
capital words such as "CD" or "MIX" are numerals only in context.
"""

from __future__ import annotations

import re
import unicodedata

_SUPER = str.maketrans({"⁰": "^0", "¹": "^1", "²": "^2", "³": "^3", "⁴": "^4", "⁵": "^5", "⁶": "^6", "⁷": "^7",
                        "⁸": "^8", "⁹": "^9", "⁺": "^+", "⁻": "^-",
                        "₀": "_0", "₁": "_1", "₂": "_2", "₃": "_3", "₄": "_4", "₅": "_5", "₆": "_6", "₇": "_7",
                        "₈": "_8", "₉": "_9"})
_MINUS = str.maketrans({"\u2212": "-", "\u2012": "-", "\u2013": "-", "\ufe63": "-", "\uff0d": "-", "\u2010": "-",
                        "\u2011": "-"})
_GROUPED = re.compile(r"(?<![\d.,'\u2019])\d{1,3}(?P<sep>[,'\u2019 \u00a0\u2009\u202f])\d{3}(?:(?P=sep)\d{3})*"
                      r"(?!\d)(?!,\d)")
_PLUS = re.compile(r"(?<![\w.+\-^])\+(?=\d)")

_UNITS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
          "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
          "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
          "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = ("hundred", "thousand", "million", "billion", "trillion")
_NUMWORD = r"(?:" + "|".join(sorted([*_UNITS, *_SCALES], key=len, reverse=True)) + r")"
_WORDS = re.compile(rf"(?<![\w-])(?:minus\s+|negative\s+)?{_NUMWORD}(?:(?:\s+and\s+|[\s-]+){_NUMWORD})*(?![\w-])",
                    re.I)
_CJK_NUM = "零〇一二两三四五六七八九十百千万亿壹贰叁肆伍陆柒捌玖拾佰仟萬億"
MAX_CJK_RUN = 24     # longer runs of numeral characters are no number a model writes (and cost cn2an time)
_CJK_RUN = re.compile(rf"[0-9.]*[{_CJK_NUM}][{_CJK_NUM}0-9.]*")


def _digits(text: str) -> str:
    """Every decimal digit of any script as its ASCII digit; superscripts kept apart; NFKC."""
    text = text.translate(_SUPER)
    if not text.isascii():
        text = "".join(str(unicodedata.decimal(ch)) if not ch.isascii() and unicodedata.decimal(ch, None) is not None
                       else ch for ch in text)
        text = unicodedata.normalize("NFKC", text)
    return text.translate(_MINUS)


def _words(m: re.Match) -> str:
    run = m.group()
    words = re.split(r"[\s-]+", run.strip())
    neg = words[0].lower() in ("minus", "negative")
    body = " ".join(w for w in words[1:] if w) if neg else run
    from text_to_num import text2num

    try:
        n = text2num(body.replace("-", " ").lower(), "en")
    except ValueError:
        return run
    if len(words) == 1 and n < 4:
        return run
    return f"-{n}" if neg else str(n)


def _cjk(m: re.Match) -> str:
    run = m.group()
    if not 2 <= len(run) <= MAX_CJK_RUN or run.strip(".") != run:
        return run
    import warnings

    import cn2an

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            n = cn2an.cn2an(run, "smart")
        except (ValueError, KeyError, IndexError, TypeError):
            return run
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    return str(n)


def _ungroup(m: re.Match) -> str:
    return re.sub(r"[,'\u2019 \u00a0\u2009\u202f]", "", m.group())


def normalise(text: str) -> str:
    """``text`` with every number it states written in ASCII digits (see the module docstring)."""
    text = _digits(text)
    if any("\u4e00" <= ch <= "\u9fff" or ch in "〇" for ch in text):
        text = _CJK_RUN.sub(_cjk, text)
    if re.search(_NUMWORD, text, re.I):
        text = _WORDS.sub(_words, text)
    text = _PLUS.sub("", text)
    return _GROUPED.sub(_ungroup, text)


def roman(token: str) -> int | None:
    """The value of an upper-case Roman numeral of at least two letters (``XII`` = 12), else None."""
    if len(token) < 2 or not token.isupper() or set(token) - set("IVXLCDM"):
        return None
    import roman as _roman

    try:
        return _roman.fromRoman(token)
    except _roman.InvalidRomanNumeralError:
        return None
