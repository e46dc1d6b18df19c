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
  a single numeral character ("一致", "星期一") is left alone;
- dates written in words become ISO dates: ``the first of March 2026``, ``March 1st, 2026``,
  ``1 March 2026``, ``1 de marzo de 2026``, ``2026年3月1日`` and ``二〇二六年三月一日`` are all
  ``2026-03-01``; a month and a year (``March 2026``, ``2026年3月``) is ``2026-03``. "May" is a
  month only with a capital M.

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


_MONTHS = {"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
           "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3, "apr": 4,
           "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
           "enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8,
           "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12,
           # French, German, Portuguese ("mai": French and German May)
           "janvier": 1, "février": 2, "mars": 3, "avril": 4, "mai": 5, "juin": 6, "juillet": 7, "août": 8,
           "septembre": 9, "octobre": 10, "novembre": 11, "décembre": 12,
           "januar": 1, "februar": 2, "märz": 3, "juni": 6, "juli": 7, "oktober": 10, "dezember": 12,
           "janeiro": 1, "fevereiro": 2, "março": 3, "maio": 5, "junho": 6, "julho": 7, "setembro": 9,
           "outubro": 10, "novembro": 11, "dezembro": 12}
_ORD_UNITS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
              "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
              "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19,
              "twentieth": 20, "thirtieth": 30}
_ORDINALS = dict(_ORD_UNITS)
for _w, _n in (("twenty", 20), ("thirty", 30)):
    for _u, _k in list(_ORD_UNITS.items())[:9]:
        if _n + _k <= 31:
            _ORDINALS[f"{_w}-{_u}"] = _ORDINALS[f"{_w} {_u}"] = _n + _k
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = (r"(?P<day>(?:[12][0-9]|3[01]|0?[1-9])(?:st|nd|rd|th|er|re|ère|\.)?|"
        + "|".join(sorted((re.escape(k) for k in _ORDINALS), key=len, reverse=True)) + ")")
_YEAR = r"(?P<year>[12][0-9]{3})(?![0-9])"
_EN_DATES = [re.compile(rf"(?<![\w-])(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}", re.I),
             re.compile(rf"(?<![\w-]){_MONTH}\s+(?:the\s+)?{_DAY},?\s+{_YEAR}", re.I),
             re.compile(rf"(?<![\w-]){_DAY}\s+de\s+{_MONTH}\s+del?\s+{_YEAR}", re.I),
             re.compile(rf"(?<![\w-]){_MONTH}(?:,|\s+de(?:l)?)?\s+{_YEAR}", re.I)]
_CN_DIGIT = "〇零一二三四五六七八九"
_CN_VALUE = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0}
_CN_SMALL = rf"(?:[0-9]{{1,2}}|[{_CN_DIGIT}十]{{1,3}})"
_CN_DATE = re.compile(rf"(?P<year>[0-9]{{4}}|[{_CN_DIGIT}]{{4}})\s*年\s*(?P<month>{_CN_SMALL})\s*月"
                      rf"(?:\s*(?P<day>{_CN_SMALL})\s*[日号])?")


def _cn_small(s: str) -> int | None:
    """1–31 written in digits or Chinese numerals (``十二``, ``三十一``, ``二〇`` is not one)."""
    if s.isdigit():
        return int(s)
    d = _CN_VALUE
    if "十" not in s:
        return d[s] if len(s) == 1 else None
    tens, _, units = s.partition("十")
    if len(tens) > 1 or len(units) > 1 or "十" in units:
        return None
    return (d[tens] if tens else 1) * 10 + (d[units] if units else 0)


def _ymd(year: int, month: int, day: int | None) -> str | None:
    import calendar

    if not 1 <= month <= 12 or (day is not None and not 1 <= day <= calendar.monthrange(year, month)[1]):
        return None
    return f"{year:04d}-{month:02d}" + (f"-{day:02d}" if day is not None else "")


def _en_date(m: re.Match) -> str:
    month_word = m.group("month")
    if month_word.lower() == "may" and month_word[0] != "M":      # the modal verb, not the month
        return m.group()
    day = None
    if "day" in m.re.groupindex:
        d = m.group("day").lower()
        day = _ORDINALS.get(d) or _ORDINALS.get(re.sub(r"\s+", " ", d)) or int(re.sub(r"[^0-9]+$", "", d))
    out = _ymd(int(m.group("year")), _MONTHS[month_word.lower()], day)
    return m.group() if out is None else out


def _cn_date(m: re.Match) -> str:
    y = m.group("year")
    year = int(y) if y.isdigit() else int("".join(str(_CN_VALUE[c]) for c in y))
    month = _cn_small(m.group("month"))
    day = _cn_small(m.group("day")) if m.group("day") else None
    if month is None or (m.group("day") and day is None):
        return m.group()
    out = _ymd(year, month, day)
    if out is None:
        return m.group()
    # 2026年7月23日10:02: the time written straight after the day is a separate value
    return out + " " if m.string[m.end():m.end() + 1].isdigit() else out


# 23/07/2026 (day first) or 07/23/2026 (month first): only when the day tells which (over 12)
_SLASH_DATE = re.compile(r"(?<![\w/.-])(?P<a>[0-9]{1,2})(?P<sep>[/.])(?P<b>[0-9]{1,2})(?P=sep)(?P<year>[12][0-9]{3})"
                         r"(?![\w/-])")
# 09.54 Uhr: the German way of writing a time of day
_DE_TIME = re.compile(r"(?<![\w:.,])(?P<h>[01]?[0-9]|2[0-3])\.(?P<m>[0-5][0-9])(?=\s*Uhr\b)")
# 98 thousand, 128 mil, 1,5 millones: a number and the scale word after it
_SCALE_WORDS = {"thousand": 1000, "mil": 1000, "mille": 1000, "tausend": 1000, "nghìn": 1000, "ngàn": 1000,
                "million": 10 ** 6, "millions": 10 ** 6, "millones": 10 ** 6, "millón": 10 ** 6,
                "millionen": 10 ** 6, "milioni": 10 ** 6, "milione": 10 ** 6, "milhões": 10 ** 6,
                "milhão": 10 ** 6, "triệu": 10 ** 6}
_SCALED = re.compile(r"(?<![\w.,])(?P<n>[0-9]+(?:[.,][0-9]{1,2})?)\s?(?P<w>" + "|".join(
    sorted(_SCALE_WORDS, key=len, reverse=True)) + r"|тысяч\w*|миллион\w*)(?!\w)", re.I)
# 9 h 54, 10h02: the French way of writing a time of day
_FR_TIME = re.compile(r"(?<![\w:,.])(?P<h>[01]?[0-9]|2[0-3])\s?h\s?(?P<m>[0-5][0-9])(?![\w:])")
# 9:54 pm, 9:54 p.m.: a 12-hour time as the 24-hour one
_AMPM = re.compile(r"(?<![\w:])(?P<h>[0-9]{1,2}):(?P<m>[0-9]{2})\s*(?P<ap>[ap])\.?\s?m\b\.?", re.I)


def _slash_date(m: re.Match) -> str:
    a, b = int(m["a"]), int(m["b"])
    day, month = (a, b) if a > 12 >= b or m["sep"] == "." else (b, a) if b > 12 >= a else (None, None)
    iso = _ymd(int(m["year"]), month, day) if day is not None else None
    return iso or m.group()


def _ampm(m: re.Match) -> str:
    h = int(m["h"])
    if not 1 <= h <= 12:
        return m.group()
    h = h % 12 + (12 if m["ap"].lower() == "p" else 0)
    return f"{h:02d}:{m['m']}"


def dates(text: str) -> str:
    """Dates written in words (English, Spanish, French, German, Portuguese, Chinese) as ISO dates
    (see the module docstring); also 23/07/2026 and 07/23/2026 where the day tells the order, 9:54 pm
    as 21:54 and 9 h 54 as 09:54."""
    if "年" in text:
        text = _CN_DATE.sub(_cn_date, text)
    if re.search(r"[0-9]{4}", text):
        for rx in _EN_DATES:
            text = rx.sub(_en_date, text)
        text = _SLASH_DATE.sub(_slash_date, text)
    if "h" in text:
        text = _FR_TIME.sub(lambda m: f"{int(m['h']):02d}:{m['m']}", text)
    if "Uhr" in text:
        text = _DE_TIME.sub(lambda m: f"{int(m['h']):02d}:{m['m']}", text)
    if ":" in text:
        text = _AMPM.sub(_ampm, text)
    return text


def _scaled(m: re.Match) -> str:
    w = m["w"].lower()
    scale = _SCALE_WORDS.get(w) or (1000 if w.startswith("тысяч") else 10 ** 6)
    n = float(m["n"].replace(",", "."))
    v = n * scale
    return str(int(v)) if v == int(v) else str(v)


def _ungroup(m: re.Match) -> str:
    return re.sub(r"[,'\u2019 \u00a0\u2009\u202f]", "", m.group())


def normalise(text: str) -> str:
    """``text`` with every number it states written in ASCII digits (see the module docstring)."""
    text = dates(_digits(text))
    if _SCALED.search(text):
        text = _SCALED.sub(_scaled, text)
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
