"""Evidence compression: extractive, checked against the original, or nothing.

When a required evidence item does not fit the evidence slot, the packer asks
:func:`try_compress` for a shorter version. The text is split into clauses (sentence ends
``. ! ?`` and ``。！？``, clause ends ``;`` and ``；``, and line breaks); clauses are kept
verbatim or dropped whole, never rewritten. A run of dropped clauses is replaced by the
elision mark ``[…]`` so the reader sees that the quote is an excerpt.

Which clauses must stay (otherwise the compression is refused and the item is reported
over budget):

* every clause holding a number that is a fact value of the item, or a number next to a
  unit (CNY, %, days, ms, 元, 天 …);
* every clause holding a date, a clock time or a validity or revision qualifier (valid
  from/until, effective, in force, replaces, withdrawn, corrected, cancelled, draft, 生效,
  有效期, 更正 …);
* every clause holding a negation or a hedge that mentions a fact value or an identifier
  bound to the facts;
* the first clause naming each string fact value and each identifier bound to the facts
  (identifiers in the fact values and the object's business keys);
* coherence: a kept clause that starts with a reference back (This, Such, It, However, 该,
  此, 但 …) keeps the clause before it; a clause with a negation, hedge or qualifier that
  refers back to a kept clause is kept; when any clause of a sentence is kept, every clause
  of that sentence with a negation, hedge or qualifier is kept; a label line (ending in
  ``:`` or a ``#`` heading) is kept with the lines it introduces.

The other clauses are ranked by the claim-relevant terms they carry (the playbook's
judgment and full-text terms of the item's evidence types, and the names of the facts the
claims use) and added, best first, while the whole evidence block still fits. Clauses with
no relevant term are dropped.

Before accepting, fidelity checks compare the result with the original text: number/unit
pairs, negation and hedge cues, identifiers, dates and qualifiers are extracted from both
texts and compared (nothing required lost, nothing new), and the must-keep rules above are
re-checked clause by clause. Any failure refuses the compression. Over-matching a cue (for
example 非 in 非常) only makes the compression keep more text.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any, Callable, Iterable

import regex

from ..util.canon import content_hash
from .render import evidence_block
from .stopwords import data_words

METHOD = "extractive-sentences/1"
ELISION = "[…]"

# ---------------------------------------------------------------------------------- cues
# The lexicons are data (engine/cue_lists/*.txt, beside the stop words): each file's entries, in
# order, are the alternatives of one pattern below.
_CJK = r"\p{Han}"


def _alternatives(name: str) -> str:
    return "|".join(data_words("cue_lists", name))


# Negations. English as words; Chinese as characters/words (over-matching only keeps more).
_NEG_EN = _alternatives("negation.en")
_NEG_ZH = _alternatives("negation.zh")
NEGATION = regex.compile(rf"(?i)(?<![A-Za-z])(?:{_NEG_EN})(?![A-Za-z])|(?:{_NEG_ZH})")

_HEDGE_EN = _alternatives("hedge.en")
_HEDGE_ZH = _alternatives("hedge.zh")
HEDGE = regex.compile(rf"(?i)(?<![A-Za-z])(?:{_HEDGE_EN})(?![A-Za-z])|(?:{_HEDGE_ZH})")

_VALID_EN = _alternatives("validity.en")
_VALID_ZH = _alternatives("validity.zh")
VALIDITY = regex.compile(rf"(?i)(?<![A-Za-z])(?:{_VALID_EN})(?![A-Za-z])|(?:{_VALID_ZH})")

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
DATE = regex.compile(
    r"(?<![0-9])\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![0-9])"
    r"|(?<![0-9])\d{4}/\d{1,2}/\d{1,2}(?![0-9])|(?<![0-9])\d{1,2}/\d{1,2}/\d{4}(?![0-9])"
    r"|(?<![0-9])\d{4}\s*年(?:\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?)?"
    r"(?:\s*\d{1,2}\s*[时点](?:\s*\d{1,2}\s*分)?)?"
    r"|(?<![0-9])\d{1,2}\s*月\s*\d{1,2}\s*[日号](?:\s*\d{1,2}\s*[时点](?:\s*\d{1,2}\s*分)?)?"
    rf"|(?i:(?<![A-Za-z]){_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}(?![0-9]))"
    rf"|(?i:(?<![0-9])\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}\.?,?\s+\d{{4}}(?![0-9]))"
    rf"|(?i:(?<![A-Za-z]){_MONTH}\.?\s+\d{{4}}(?![0-9]))"
    r"|(?<![0-9:])\d{1,2}:\d{2}(?::\d{2})?(?![0-9:])"
    r"|(?<![0-9])\d{1,2}\s*[时点]\s*\d{1,2}\s*分")

_UNIT_AFTER = _alternatives("unit_after.en")
_UNIT_AFTER_ZH = _alternatives("unit_after.zh")
_UNIT_BEFORE = _alternatives("unit_before")
_NUM = r"\d+(?:[,，]\d{3})*(?:\.\d+)?"
NUMBER = regex.compile(
    rf"(?:(?P<pre>{_UNIT_BEFORE})\s?|(?<![A-Za-z0-9_.])(?<![A-Za-z_][-/]))"
    rf"(?P<num>{_NUM})(?![0-9])(?!\.[0-9])"
    rf"(?:\s?(?P<post>(?i:{_UNIT_AFTER})(?![A-Za-z])|{_UNIT_AFTER_ZH}))?")

IDENT = regex.compile(
    r"(?<![A-Za-z0-9_.\-])(?:"
    r"(?=[A-Za-z0-9./]*[-_])[A-Za-z][A-Za-z0-9]*(?:[-_./][A-Za-z0-9]+)+"                 # AB-12, DOC_TYPE
    r"|[A-Z]{2,}[0-9]*"                                                                  # CNY, SIU
    r"|[A-Za-z]+[0-9]+[A-Za-z0-9]*"                                                      # v2, ab12
    r"|\d+(?:\.\d+)+"                                                                    # 2026.1, 1.2.3
    r")(?![A-Za-z0-9_\-])(?!\.[A-Za-z0-9])")

_ANAPHORA_EN = _alternatives("anaphora.en")
_ANAPHORA_ZH = _alternatives("anaphora.zh")
ANAPHORA = regex.compile(rf"^[\s\"'“‘(（\[-]*(?:(?i:(?:{_ANAPHORA_EN})(?![A-Za-z]))|(?:{_ANAPHORA_ZH}))")

_ABBREV = set(data_words("cue_lists", "abbreviations.en"))
_STOP = set(data_words("cue_lists", "relevance_stop.en"))

_CLOSERS = "”’」』）)]\"'"
_BOUNDARY = regex.compile(
    rf"(?P<zh>[。！？][{regex.escape(_CLOSERS)}]*)"
    rf"|(?P<zhc>；[{regex.escape(_CLOSERS)}]*)"
    rf"|(?P<en>[.!?]+[{regex.escape(_CLOSERS)}]*)(?=[ \t]|$)"
    rf"|(?P<enc>;)(?=[ \t]|$)"
    r"|(?P<nl>[ \t]*\n[\s]*)")
_NEXT_CHAR = regex.compile(r"[ \t]*(\S)")
_BLANKS = regex.compile(r"[ \t]*")


# ---------------------------------------------------------------------------------- units
@dataclass
class Unit:
    """A clause of the text: ``text[start:end]`` (no surrounding whitespace)."""

    index: int
    start: int
    end: int
    text: str
    sentence: int          # clauses split only by ; / ； share a sentence
    line_start: bool       # first clause on its line
    label: bool            # a label (ends with ':' / '：' before a line break, or a '#' heading) for what follows
    paragraph: int         # blank lines separate paragraphs


def split_units(text: str) -> list[Unit]:
    """Clauses in order. Sentence ends: . ! ? (followed by space, not after an abbreviation or a
    single capital, not before a lowercase word), 。！？; clause ends: ; ；; and line breaks."""
    cuts: list[tuple[int, int, str]] = []     # (end of clause, start of the next, kind)
    for m in _BOUNDARY.finditer(text):
        kind = m.lastgroup
        if kind == "en":
            before = regex.search(r"([A-Za-z][A-Za-z.]*)$", text[max(0, m.start() - 24): m.start()])
            word = before.group(1).lower().rstrip(".") if before else ""
            if word in _ABBREV or (before and len(before.group(1)) == 1 and before.group(1).isupper()):
                continue
            nxt = _NEXT_CHAR.match(text, m.end())
            if nxt and nxt.group(1).islower():
                continue
        if kind == "nl":
            cuts.append((m.start(), m.end(), "nl" if text.count("\n", m.start(), m.end()) == 1 else "para"))
        else:
            ws = _BLANKS.match(text, m.end())
            cuts.append((m.end(), ws.end() if ws else m.end(), kind))
    units: list[Unit] = []
    pos, sentence, paragraph, line_start = 0, 0, 0, True
    bounds = cuts + [(len(text), len(text), "end")]
    for end, nxt, kind in bounds:
        raw = text[pos:end]
        lead = len(raw) - len(raw.lstrip())
        s, e = pos + lead, pos + len(raw.rstrip())
        if e > s:
            body = text[s:e]
            units.append(Unit(index=len(units), start=s, end=e, text=body, sentence=sentence,
                              line_start=line_start, paragraph=paragraph,
                              label=(kind in ("nl", "para") and body.endswith((":", "："))) or
                              (line_start and body.startswith("#"))))
            line_start = False
        if kind in ("zh", "en", "nl", "para", "end"):
            sentence += 1
        if kind in ("nl", "para"):
            line_start = True
        if kind == "para":
            paragraph += 1
        pos = nxt
    return units


# ---------------------------------------------------------------------------------- analysis
def _dec(s: str) -> Decimal | None:
    try:
        return Decimal(s.replace(",", "").replace("，", ""))
    except InvalidOperation:
        return None


def _scalars(v: Any) -> Iterable[Any]:
    if isinstance(v, list):
        for x in v:
            yield from _scalars(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _scalars(x)
    else:
        yield v


def _mask(text: str, rx) -> str:
    return rx.sub(lambda m: "#" * len(m.group()), text)


@lru_cache(maxsize=8192)
def numbers(text: str) -> tuple[tuple[Decimal, str | None, str], ...]:
    """(value, unit or None, matched text) for every number outside dates and identifiers."""
    masked = _mask(text, DATE)
    masked = IDENT.sub(lambda m: m.group() if regex.fullmatch(r"\d+(?:\.\d+)?", m.group())
                       or not regex.search(r"\d", m.group()) else "#" * len(m.group()), masked)
    out = []
    for m in NUMBER.finditer(masked):
        v = _dec(m.group("num"))
        if v is None:
            continue
        unit = m.group("post") or (m.group("pre") or "").strip() or None
        out.append((v, " ".join(unit.split()).lower() if unit else None, text[m.start():m.end()]))
    return tuple(out)


@dataclass
class Context:
    fact_numbers: set[Decimal]
    fact_strings: list[str]          # string fact values that occur in the text
    bound_ids: list[str]             # identifiers bound to the facts that occur in the text
    terms: set[str]                  # claim-relevant words (lowercase)
    cjk_terms: set[str]


def _id_variants(s: str) -> list[str]:
    return [s] if "_" not in s else [s, s.replace("_", " ")]


def _contains(hay: str, needle: str) -> bool:
    for v in _id_variants(needle):
        if regex.search(rf"(?<![A-Za-z0-9_]){regex.escape(v)}(?![A-Za-z0-9_])", hay, flags=regex.IGNORECASE
                        if not regex.search(r"[A-Z]", v) else 0):
            return True
    return False


def build_context(item: dict[str, Any], o, pb) -> Context:
    text = item["text"]
    nums: set[Decimal] = set()
    strs: list[str] = []
    ids: list[str] = []
    for v in _scalars(item.get("facts") or {}):
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, (int, float)):
            d = _dec(repr(v) if isinstance(v, float) else str(v))
            if d is not None:
                nums.add(d)
            continue
        s = str(v).strip()
        if len(s) < 2:
            continue
        if _contains(text, s) and s not in strs:
            strs.append(s)
        for m in IDENT.finditer(s):
            if m.group() not in ids and _contains(text, m.group()):
                ids.append(m.group())
        if IDENT.fullmatch(s) and s not in ids and _contains(text, s):
            ids.append(s)
    for k in list(getattr(o, "keys", None) or []):
        if isinstance(k, str) and k not in ids and _contains(text, k):
            ids.append(k)
    terms, cjk = _terms(item, pb)
    return Context(fact_numbers=nums, fact_strings=strs, bound_ids=ids, terms=terms, cjk_terms=cjk)


def _words(s: str) -> set[str]:
    return {w for w in regex.findall(r"[a-z0-9]+", s.lower().replace("_", " "))
            if len(w) >= 3 and w not in _STOP and not w.isdigit()}


def _terms(item: dict[str, Any], pb) -> tuple[set[str], set[str]]:
    supports = set(item.get("supports") or [])
    phrases: list[str] = list((item.get("facts") or {}).keys())
    if pb is not None:
        for et in pb.evidence_types:
            if et.type not in supports:
                continue
            phrases.append(et.judgment)
            for spec in (et.retrieve, et.followup):
                if spec is not None and spec.fulltext is not None:
                    phrases.extend(spec.fulltext.terms)
        by_name = {f.name: f for f in pb.facts}
        used: set[str] = set()
        for c in pb.claims:
            used.update(c.uses)
            used.update(c.competing)
        # a derived fact used by a claim: its name and the source fact names it reads
        pending = list(used)
        seen: set[str] = set()
        while pending:
            n = pending.pop()
            if n in seen or n not in by_name:
                continue
            seen.add(n)
            f = by_name[n]
            if f.from_ is None or f.from_ in supports:
                phrases.append(n)
                phrases.extend(x for x in (f.fact, f.key, f.value) if x)
                phrases.extend(f.where.keys())
            pending.extend(x for x in (f.input, f.mapping, f.left, f.right) if x)
    words: set[str] = set()
    cjk: set[str] = set()
    for p in phrases:
        words |= _words(p)
        cjk.update(regex.findall(rf"{_CJK}{{2,}}", p))
    return words, cjk


def _stem_match(w: str, terms: set[str]) -> bool:
    if w in terms:
        return True
    for t in terms:
        short, long_ = (w, t) if len(w) <= len(t) else (t, w)
        if len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 3:
            return True
    return False


def relevance(u: Unit, ctx: Context) -> int:
    ws = _words(u.text)
    score = sum(1 for w in ws if _stem_match(w, ctx.terms))
    score += sum(1 for t in ctx.cjk_terms if t in u.text)
    score += 2 * sum(1 for s in ctx.fact_strings + ctx.bound_ids if _contains(u.text, s))
    if numbers(u.text):
        score += 1
    return score


def _mentions_fact(text: str, ctx: Context) -> bool:
    if any(_contains(text, s) for s in ctx.fact_strings + ctx.bound_ids):
        return True
    return any(v in ctx.fact_numbers for v, _, _ in numbers(text))


def _number_required(text: str, ctx: Context) -> bool:
    return any(unit is not None or v in ctx.fact_numbers for v, unit, _ in numbers(text))


def _qualifier(text: str) -> bool:
    return bool(NEGATION.search(text) or HEDGE.search(text) or VALIDITY.search(text) or DATE.search(text))


# ---------------------------------------------------------------------------------- selection
def mandatory(units: list[Unit], ctx: Context) -> set[int]:
    keep: set[int] = set()
    for u in units:
        t = u.text
        if _number_required(t, ctx) or DATE.search(t) or VALIDITY.search(t) or (NEGATION.search(t) or HEDGE.search(t)) and _mentions_fact(t, ctx):
            keep.add(u.index)
    for s in ctx.fact_strings + ctx.bound_ids:
        if not any(_contains(units[i].text, s) for i in keep):
            for u in units:
                if _contains(u.text, s):
                    keep.add(u.index)
                    break
    return keep


class Closure:
    """The coherence closure of a kept set (see the module docstring), precomputed per text."""

    def __init__(self, units: list[Unit]) -> None:
        self.units = units
        self.qual = [_qualifier(u.text) for u in units]
        self.anaphoric = [bool(ANAPHORA.search(u.text)) for u in units]
        self.sentence_quals: dict[int, list[int]] = {}
        for u in units:
            if self.qual[u.index]:
                self.sentence_quals.setdefault(u.sentence, []).append(u.index)
        self.labels_of: dict[int, list[int]] = {}     # clause -> label lines introducing it
        for u in units:
            if u.label:
                for j in self._label_scope(u.index):
                    self.labels_of.setdefault(j, []).append(u.index)

    def _label_scope(self, i: int) -> list[int]:
        """The clauses a label line introduces: following lines up to a blank line or the next label."""
        out = []
        for u in self.units[i + 1:]:
            if u.paragraph != self.units[i].paragraph or (u.label and u.line_start):
                break
            out.append(u.index)
        return out

    def __call__(self, keep: set[int]) -> set[int]:
        out = set(keep)
        self.extend(out, keep)
        return out

    def extend(self, keep: set[int], start: Iterable[int]) -> list[int]:
        """Add ``start`` and everything it pulls in to ``keep`` (closed before); returns what was added."""
        added: list[int] = []
        todo = list(start)
        for i in todo:
            if i not in keep:
                keep.add(i)
                added.append(i)
        n = len(self.units)
        while todo:
            i = todo.pop()
            u = self.units[i]
            pulls: list[int] = []
            if i > 0 and self.anaphoric[i]:
                pulls.append(i - 1)
            if i + 1 < n and self.anaphoric[i + 1] and self.qual[i + 1]:
                pulls.append(i + 1)
            pulls.extend(self.sentence_quals.get(u.sentence, []))
            pulls.extend(self.labels_of.get(i, []))
            for j in pulls:
                if j not in keep:
                    keep.add(j)
                    added.append(j)
                    todo.append(j)
        return added


def assemble(text: str, units: list[Unit], keep: set[int]) -> str:
    """The kept clauses verbatim, with the original whitespace between neighbours and the
    elision mark where clauses were dropped."""
    parts: list[str] = []
    prev: Unit | None = None
    gap = False
    for u in units:
        if u.index not in keep:
            gap = True
            continue
        if prev is None:
            if gap:
                parts.append(ELISION + (text[units[u.index - 1].end:u.start] or " "))
        else:
            if gap:
                sep_after = text[prev.end:units[prev.index + 1].start]
                sep_before = text[units[u.index - 1].end:u.start]
                parts.append((sep_after or " ") + ELISION + (sep_before or " "))
            else:
                parts.append(text[prev.end:u.start])
        parts.append(u.text)
        prev = u
        gap = False
    if prev is not None and prev.index < len(units) - 1:
        parts.append((text[prev.end:units[prev.index + 1].start] or " ") + ELISION)
    return "".join(parts).strip()


# ---------------------------------------------------------------------------------- checks
def fidelity(text: str, units: list[Unit], keep: set[int], compressed: str, ctx: Context) -> dict[str, bool]:
    """Compare ``compressed`` with the original ``text``: each check is True when the compression
    cannot have changed that kind of meaning."""
    kept = [units[i] for i in sorted(keep)]
    kept_ok = all(u.text in compressed for u in kept)

    def cues(rx, s: str) -> list[str]:
        return sorted(m.group().lower() for m in rx.finditer(s))

    def kept_cues(rx) -> list[str]:
        return sorted(c for u in kept for c in cues(rx, u.text))

    # numbers: every fact number and every number with a unit, with its unit, in the same clause
    orig_req = [(v, unit) for v, unit, _ in numbers(text) if unit is not None or v in ctx.fact_numbers]
    comp_nums = [(v, unit) for v, unit, _ in numbers(compressed)]
    n_ok = kept_ok and _multiset_le(orig_req, comp_nums) and _multiset_le(comp_nums, [(v, u) for v, u, _ in
                                                                                       numbers(text)])
    n_ok = n_ok and all(u.index in keep for u in units if _number_required(u.text, ctx))
    # negations: none lost or added in kept clauses; none dropped where it bears on a fact
    g_ok = kept_ok and cues(NEGATION, compressed) == kept_cues(NEGATION)
    g_ok = g_ok and all(u.index in keep for u in units if NEGATION.search(u.text) and _mentions_fact(u.text, ctx))
    # identifiers: every identifier bound to the facts is still there; no identifier appears from nowhere
    orig_ids = {m.group() for m in IDENT.finditer(text)}
    i_ok = all(_contains(compressed, s) for s in ctx.bound_ids + ctx.fact_strings)
    i_ok = i_ok and {m.group() for m in IDENT.finditer(compressed)} <= orig_ids
    # dates and validity qualifiers: every occurrence kept
    d_ok = _multiset_le(cues(DATE, text), cues(DATE, compressed)) and \
        _multiset_le(cues(VALIDITY, text), cues(VALIDITY, compressed))
    # hedges: kept with their clause, and with every kept clause of their sentence
    h_ok = kept_ok and cues(HEDGE, compressed) == kept_cues(HEDGE)
    # a negation or hedge bound to a kept clause (same sentence, or referring back to it) stays with it
    kept_sentences = {u.sentence for u in kept}

    def bound(u: Unit) -> bool:
        return u.sentence in kept_sentences or (u.index > 0 and u.index - 1 in keep and bool(ANAPHORA.search(u.text)))

    h_ok = h_ok and all(u.index in keep for u in units
                        if HEDGE.search(u.text) and (bound(u) or _mentions_fact(u.text, ctx)))
    g_ok = g_ok and all(u.index in keep for u in units if NEGATION.search(u.text) and bound(u))
    return {"numbers": bool(n_ok), "negations": bool(g_ok), "identifiers": bool(i_ok), "dates": bool(d_ok),
            "hedges": bool(h_ok)}


def _multiset_le(a: list, b: list) -> bool:
    pool: dict[Any, int] = {}
    for x in b:
        pool[x] = pool.get(x, 0) + 1
    for x in a:
        if pool.get(x, 0) <= 0:
            return False
        pool[x] -= 1
    return True


# ---------------------------------------------------------------------------------- entry point
def try_compress(item: dict[str, Any], o, remaining: int, pb, count: Callable[[str], int]) -> dict[str, Any] | None:
    """A shorter copy of ``item`` whose evidence block fits ``remaining`` tokens, or None."""
    text = item["text"]
    units = split_units(text)
    if len(units) < 2 or remaining <= 0:
        return None
    ctx = build_context(item, o, pb)

    def block_tokens(keep: set[int]) -> tuple[int, str]:
        t = assemble(text, units, keep)
        return count(evidence_block({**item, "text": t})), t

    close = Closure(units)
    keep = close(mandatory(units, ctx))
    if len(keep) == len(units):
        return None
    tokens, _ = block_tokens(keep)
    if tokens > remaining:
        return None
    # Best first. A clause's cost is estimated from its own count plus a margin for the joins and
    # elision marks; a real count is made only when the estimate is too close to call, and the
    # result is counted exactly at the end (undoing the last additions if the estimate was short).
    score = {u.index: relevance(u, ctx) for u in units if u.index not in keep}
    cost = {i: count(" " + units[i].text) + 1 for i in score}
    est = tokens
    groups: list[list[int]] = []
    for i in sorted((i for i in score if score[i] > 0), key=lambda i: (-score[i], i)):
        if i in keep:
            continue
        trial = set(keep)
        add = close.extend(trial, [i])
        if len(trial) == len(units):
            continue
        guess = est + sum(cost[j] for j in add) + 3
        if guess > remaining:
            if guess - remaining > 3 * len(add) + 6:
                continue
            exact, _ = block_tokens(trial)
            if exact > remaining:
                continue
            guess = exact
        keep = trial
        est = guess
        groups.append(add)
    tokens, _ = block_tokens(keep)
    while tokens > remaining and groups:
        keep -= set(groups.pop())
        tokens, _ = block_tokens(keep)
    tokens, new_text = block_tokens(keep)
    if tokens > remaining or tokens >= item["tokens"]:
        return None
    checks = fidelity(text, units, keep, new_text, ctx)
    if not all(checks.values()):
        return None
    new = dict(item)
    new["text"] = new_text
    new["text_hash"] = content_hash(new_text)
    new["tokens"] = tokens
    new["transformations"] = list(item.get("transformations") or []) + [{
        "kind": "compression", "method": METHOD, "before_hash": item["text_hash"], "after_hash": new["text_hash"],
        "before_tokens": item["tokens"], "after_tokens": tokens, "kept_sentences": len(keep),
        "dropped_sentences": len(units) - len(keep), "checks": checks,
    }]
    return new
