"""Precision filters applied to a candidate match in its view of the text.

* **Negation** (rules registered with ``neg=True``): a negation word in the same clause
  right before the match ("never send the password to …", "不得直接批准", "nie", "jamais",
  "никогда") or, for Japanese and Korean, a negative ending right after it
  ("承認しないでください", "보내지 마세요") means the text states a rule, not an order.
* **Quotation** (every rule): a match that lies inside quotation marks, inline code or a
  fenced code block *and* whose framing text before the quote says it is an example
  ("Training note: attackers write \"…\"", "例如：“…”") is reported, not acted on. The
  same words outside a quote, or in a quote without such framing, still match.
"""

from __future__ import annotations

import regex

_NEG_BEFORE = regex.compile(
    r"(?<![\p{L}\p{N}])(?:never|not|don['’]?t|dont|doesn['’]?t|do\snot|must\snot|mustn['’]?t|cannot"
    r"|can['’]?t|no|won['’]?t|shouldn['’]?t|should\snot|no\sone|nobody|nie|niemals|nicht|keine?"
    r"|darf\snicht|jamais|ne|n['’]|nunca|jamás|jamas|non|mai|não|nao|nem|не|никогда|нельзя"
    r"|запрещено|ни\sв\sкоем)(?![\p{L}\p{N}])"
    r"|不得|不要|不能|不可|不应|不許|不许|不准|请勿|請勿|切勿|禁止|严禁|嚴禁|勿|别|別|決して|絶対に|절대"
)
_NEG_AFTER = regex.compile(
    r"[^.!?;。\n]{0,14}?(?:しないで|してはいけ|してはなら|しないこと|ないでください|禁止|마세요|말\s?것"
    r"|안\s?됩니다|안\s?된다|하지\s?마|않)"
)
_CLAUSE_END = regex.compile(r"[.!?;。\n:,，]")

_QUOTED = regex.compile(
    r"```[^\n]{0,40}\n.{0,20000}?```|`[^`\n]{1,400}`|\"[^\"\n]{1,600}\"|“[^”]{1,600}”|«[^»]{1,600}»"
    r"|„[^“”\n]{1,600}[“”]|「[^」]{1,600}」|『[^』]{1,600}』|‘[^’\n]{1,600}’",
    regex.DOTALL,
)
_FRAMING = regex.compile(
    r"(?<![\p{L}\p{N}])(?:examples?|e\.g\.|for\sinstance|such\sas|phishing|attackers?|malicious"
    r"|suspicious|injections?|training|awareness|do\snot\sfollow|don['’]t\sfollow|never\sact"
    r"|do\snot\sact|red\sflags?|scam|we\sreceived|warning|beispiel|z\.\sb\.|angreifer|exemples?"
    r"|attaquants?|hameçonnage|ejemplos?|atacantes?|esempio|attaccanti?|exemplos?|например"
    r"|примеры?|атак\p{L}{0,12}|фишинг\p{L}{0,12}|обучени\p{L}{0,3}|злоумышленник\p{L}{0,3})(?![\p{L}\p{N}])"
    r"|例如|比如|示例|例子|培训|培訓|攻击|攻擊|钓鱼|釣魚|请勿照做|不要照做|典型|例えば|攻撃|フィッシング"
    r"|예를\s?들어|예시|공격|피싱"
)


_MENTION = regex.compile(
    r"(?<![\p{L}\p{N}])(?:such\sas|like|e\.g\.|for\sexample|strings?|tokens?|markers?|wie|comme"
    r"|como|come|z\.\sb\.)\s?[:(\"'“]?\s?$|例如|比如|诸如|諸如")


def mentioned(s: str, start: int) -> bool:
    """The match is named as an example in a sentence that says so ("strings such as
    <|im_start|> are stripped", "Security note: … e.g. [INST]")."""
    lo = max(0, start - 200)
    before = s[lo:start]
    cut = None
    for m in _SENTENCE_END.finditer(before):
        cut = m.end()
    if cut is not None:
        before = before[cut:]
    tail = before[-30:]
    if _MENTION.search(tail) is None:
        return False
    return _FRAMING.search(before) is not None or _NOTE.search(before) is not None


_SENTENCE_END = regex.compile(r"[.!?;。\n]")
_NOTE = regex.compile(r"(?<![\p{L}\p{N}])(?:security|note|policy|documentation|docs|filter|gateway"
                      r"|sanitiz\w{0,8}|stripped|blocked|detect\w{0,8})(?![\p{L}\p{N}])")


def negated(s: str, start: int, end: int) -> bool:
    """A negation governs the match at ``s[start:end]``."""
    lo = max(0, start - 40)
    before = s[lo:start]
    cut = None
    for m in _CLAUSE_END.finditer(before):
        cut = m.end()
    if cut is not None:
        before = before[cut:]
    if _NEG_BEFORE.search(before) is not None:
        return True
    return _NEG_AFTER.match(s, end, min(len(s), end + 20)) is not None


class Quotes:
    """Quoted spans of one view, found on first use."""

    __slots__ = ("s", "_spans", "_framed")

    def __init__(self, s: str) -> None:
        self.s = s
        self._spans: list[tuple[int, int]] | None = None
        self._framed: list[tuple[int, int]] | None = None

    def framed_quote(self, start: int, end: int) -> bool:
        """The match lies inside a quote or code span introduced as an example."""
        for qs, qe in self.framed_spans():
            if qs > start:
                break
            if end <= qe:
                return True
        return False

    def framed_spans(self) -> list[tuple[int, int]]:
        """The quote and code spans introduced as an example, in order: a quote whose framing
        text (the 200 characters before it) says so, or, inside a quote without such framing, an
        inner quote whose framing text within the outer quote says so ("summary: \"… attackers
        write «…» …\""). A match is not acted on when it lies in one (:meth:`framed_quote`);
        the learned layer masks them out of the text it scores (``learned.mask``)."""
        if self._framed is None:
            if self._spans is None:
                self._spans = [m.span() for m in _QUOTED.finditer(self.s)] if _has_quote(self.s) else []
            out: list[tuple[int, int]] = []
            for qs, qe in self._spans:
                if _FRAMING.search(self.s[max(0, qs - 200):qs]) is not None:
                    out.append((qs, qe))
                    continue
                out += [m.span() for m in _QUOTED.finditer(self.s, qs + 1, qe - 1)
                        if _FRAMING.search(self.s[max(qs + 1, m.start() - 200):m.start()]) is not None]
            self._framed = out
        return self._framed


def _has_quote(s: str) -> bool:
    return any(q in s for q in ('"', "`", "“", "«", "„", "「", "『", "‘"))
