"""The claim checker: a claim checked for what it says, not only for the values it holds.

Deterministic, no model. Used by the answer validator (``validate.py``) for every model claim,
and callable alone (``check_claim``; ``check_summary`` for a summary that replaces messages).
Violations (codes as in docs/model.md):

  wrong_comparison  an order or bound the claim states between two values it writes ("128000 is
                    below 100000", "12 days is not within the 30-day window") is false; a negation
                    before the comparison word flips it
  status_upgraded   a ``fact`` that cites an item marked unverified (``verified: false``) or a
                    hypothesis; causal language ("caused", "because", "导致", "causó" …) stated
                    stronger than the deterministic answer's causal claim on the cited evidence
                    (at most ``hypothesis`` when there is none)
  misbound_entity   a name bound to a field ("owned by team X", "runbook X", "governed by X") is not
                    that field's value in the cited items that hold the field
  hedge_dropped     a ``fact`` (or a summary) restates a hedged sentence of its source ("may",
                    "possibly", "suspected", "可能", "posiblemente") without any hedge, or, a fact
                    without a hedge, cites only items whose text hedges
warning:
  undecided         a comparison that cannot be decided: a calendar day against a time with an offset
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Iterator

from . import claim_words as words
from . import numbers

RANK = {"unknown": 0, "hypothesis": 1, "inference": 2, "fact": 3}

# comparison words -> operator, longest first (claim_words.py holds every language's words)
_CMP_WORDS: list[tuple[str, str]] = sorted(dict.fromkeys(
    (w, op) for lang in words.LANGUAGES for w, op in words.COMPARISONS[lang]), key=lambda p: -len(p[0]))
_FLIP = {">": "<=", "<": ">=", ">=": "<", "<=": ">", "==": "!="}
_NEG = re.compile(words.alternation(words.NEGATION), re.I)
_NEG_AFTER = re.compile(words.NEGATION_AFTER)
# a clause ends at ; : a comma or a sentence end, or "so"/"and"; its values are the operands
_CLAUSE_SPLIT = re.compile(r"([;。；：、]|:(?!\d)|[,，]\s*|\.\s|\.$|" + words.alternation(words.CLAUSE_BREAKS) + ")",
                           re.I)
_POSTFIX = words.POSTFIX
_NOT_SPACED = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")    # kana, CJK, hangul: no word breaks
_TOKENS = re.compile(r"[^\s,;()（），。、\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]+")
_UNIT = re.compile(r"(%|-day|-days|-días|-dias|-tage(?:-\w+)?|-tages-\w+|-(?:second|minute|hour|week|month)s?|"
                   r"天|日|cny|usd|eur|元)$", re.I)
_ID_CHARS = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*[A-Za-z0-9]|[A-Za-z0-9]")


def _viol(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"code": code, "message": message, **extra}


# ---------------------------------------------------------------------------------- comparisons
_CLOCK = re.compile(r"(?P<h>\d{1,2}):(?P<m>\d{2})(?::(?P<s>\d{2}))?(?P<off>[+-]\d{2}:?\d{2}|[zZ])?")
# "10:02:00 (+08:00)", "10:02 UTC+8": the zone said once beside a time of day (its digits are no time)
_ZONE_NOTE = re.compile(r"\(\s*(?:UTC|GMT)?\s*[+\-\u2212]\d{1,2}(?::?\d{2})?\s*\)|\b(?:UTC|GMT)\s*[+\-\u2212]\d{1,2}(?::?\d{2})?\b|"
                        r"(?<=\d:\d\d)(?::\d\d)?\s+[+\-\u2212]\d{2}:?\d{2}\b")


def strip_zone_notes(text: str) -> str:
    """``text`` without the zone said beside a time ("10:02:00 (+08:00)", "10:02 +08:00", "UTC+8"):
    its digits are no value of their own."""
    return _ZONE_NOTE.sub(" ", text)


def _operand(tok: str) -> tuple[str, Any] | None:
    t = _UNIT.sub("", tok.rstrip(".").strip("`'\""))
    if re.match(r"^\d{4}-\d{2}-\d{2}", t):
        try:
            dt = datetime.fromisoformat(t.replace("Z", "+00:00"))
        except ValueError:
            return None
        return ("time", dt) if dt.tzinfo is not None else ("date", dt.date() if len(t) == 10 else dt)
    if re.fullmatch(r"-?\d+(?:\.\d+)?", t):
        return ("num", float(t))
    m = _CLOCK.fullmatch(t)
    if m:       # a time of day: compared only with one of the same offset (none, or the same)
        h, mi, sec, off = int(m["h"]), int(m["m"]), int(m["s"] or 0), (m["off"] or "").upper()
        return ("clock" + off, h * 3600 + mi * 60 + sec) if h < 24 and mi < 60 and sec < 60 else None
    return None


_MONEY = frozenset(["cny", "usd", "eur", "vnd", "rmb", "yuan", "元", "美元", "欧元", "dollar", "dollars", "euro", "euros"])
_UNIT_WORD = [(k, re.compile(rx, re.I)) for k, rx in words.UNITS.items()]


def _unit_of(word: str) -> str | None:
    """The unit a word names (money, or claim_words.UNITS' ``d``, ``min``, ``pct`` …), or None."""
    w = word.lower()
    if w in _MONEY:
        return "money"
    if w in ("s", "h"):
        return w
    return next((k for k, rx in _UNIT_WORD if rx.fullmatch(w)), None)


_SUFFIX = re.compile(r"(%|-days?|-días|-dias|天|日|cny|usd|eur|元)$", re.I)


def _unit(segment: str, end: int, tok: str) -> str | None:
    """The kind of quantity an operand states (money, days, percent, minutes …): its suffix
    (``30-day``, ``15%``), else the word right after it (``100000 CNY``, ``30 days``); None when
    neither says."""
    m = _SUFFIX.search(tok)
    if m:
        return _unit_of(m.group(1).lstrip("-"))
    nxt = re.match(r"\s*(%|[^\W\d_]+)", segment[end:])
    return _unit_of(nxt.group(1)) if nxt else None


def _operands(segment: str) -> list[tuple[int, int, str, tuple[str, Any]]]:
    out = []
    for m in _TOKENS.finditer(segment):
        op = _operand(m.group())
        if op is not None:
            out.append((m.start(), m.end(), m.group(), op))
    return out


def _holds(op: str, a: Any, b: Any) -> bool:
    return {">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b, "==": a == b, "!=": a != b}[op]


def _cmp_pattern(word: str) -> "re.Pattern[str]":
    whole = word[0].isalpha() and not _NOT_SPACED.match(word)     # "unter", not "Unternehmen"
    return re.compile((r"\b" + re.escape(word) + r"\b") if whole else re.escape(word))


# (word, operator, its pattern), compiled once: a claim is checked against every word
_CMP_RX: list[tuple[str, str, "re.Pattern[str]"]] = [(w, op, _cmp_pattern(w)) for w, op in _CMP_WORDS]


def _find_cmp(clause: str) -> list[tuple[int, int, str]]:
    low = clause.lower()
    taken: list[tuple[int, int, str]] = []
    for word, op, rx in _CMP_RX:
        if word not in low:         # (each pattern matches its word's text)
            continue
        for m in rx.finditer(low):
            if not any(s < m.end() and m.start() < e for s, e, _ in taken):
                taken.append((m.start(), m.end(), op))
    return sorted(taken)


# a word that sets one value against another ("15 % versus 25 %", "5 seconds after the change against
# sixty before"): the side of a comparison word ends there
_CONTRAST = re.compile(r"\b(?:versus|vs\.?|against|compared (?:with|to)|frente a|contre|gegenüber|против|so với)(?!\w)|"
                       r"相比|对比", re.I)


def _leading_bound(clause: str, s: int, e: int, left: list, right: list) -> tuple[list, str] | None:
    """(the bound, its clause) when ``clause`` is a bound alone that opens the sentence for the
    value after it: it begins with the comparison word and holds one value after it ("Later than
    the 10:02 error"), or, with a word written after its value, begins with 在 and holds one value
    before it ("在14:02的错误出现之后"); else None."""
    if not left and len(right) == 1 and not re.search(r"\w", clause[:s]):
        return right, clause[e:]
    if clause[s:e] in _POSTFIX and len(left) == 1 and not right and clause.lstrip().startswith("在"):
        return left, clause[:s]
    return None


def _one_kind(a, aseg: str, b, bseg: str) -> bool:
    """Whether operands ``a`` (of ``aseg``) and ``b`` (of ``bseg``) are values of one kind: two times,
    two dates, or two numbers in one unit ("Under rule set 2026.1, the claim of 128000 CNY": a
    version is no bound of an amount)."""
    if a[3][0] != b[3][0]:
        return False
    return a[3][0] != "num" or (_unit(aseg, a[1], a[2]) or "") == (_unit(bseg, b[1], b[2]) or "-")


def _carried(parts: list[str], n: int) -> tuple[list, str]:
    """The last value before clause ``n`` across commas, over clauses with no value ("Costs (+25 %),
    as the ledger shows, grew more slowly than …"), and the clause it is in; ([], "") when none."""
    k = n
    while k >= 2 and parts[k - 1].strip() in (",", "，"):
        k -= 2
        ops = _operands(parts[k])
        if ops:
            return ops[-1:], parts[k]
    return [], ""


def _contrast_end(clause: str, e: int, hi: int) -> int:
    m = _CONTRAST.search(clause, e, hi)
    return m.start() if m else hi


def _left_starts(clause: str, cmps: list[tuple[int, int, str]]) -> list[int]:
    """Where the left side of each comparison word begins: after the comparison word before it,
    unless no value stands between them ("the timeout after the change is longer than …": that
    "after" compares no values, so the left value of "longer than" may lie before it)."""
    los = []
    for k, (s, _, _) in enumerate(cmps):
        if not k:
            los.append(0)
        else:
            pe = cmps[k - 1][1]
            # "au moins égal à": two words of one comparison, not one that compares nothing
            los.append(pe if _operands(clause[pe:s]) or not clause[pe:s].strip() else los[k - 1])
    return los


def _contrasted(segment: str) -> tuple[list, list]:
    """The two values of ``segment`` set against each other by a contrast word ("15 % versus 25 %"),
    as (left, right) operands; ([], []) when the segment holds no such pair."""
    m = _CONTRAST.search(segment)
    if not m:
        return [], []
    a, b = _operands(segment[:m.start()]), _operands(segment[m.end():])
    if not a or not b:
        return [], []
    return [a[-1]], [b[0]]


_FIELD_RX = [(w, re.compile(rx, re.I)) for w, rx in words.FIELD_WORDS.items()]
_ISO_CLOCK = re.compile(r"T(\d{2}:\d{2})")


def _stems(text: str) -> set[str]:
    """The words of ``text`` (other languages' field words read as English), by their first four letters."""
    for w, rx in _FIELD_RX:
        text = rx.sub(f" {w} ", text)
    return {w.lower()[:4] for w in re.findall(r"[^\W\d_]{3,}", text)} - {"the", "and", "was", "were", "than"}


def _key(tok: str) -> tuple[str, Any] | None:
    op = _operand(tok)
    if op is None:
        return None
    return ("num", abs(op[1])) if op[0] == "num" else ("clock", op[1]) if op[0].startswith("clock") else None


def _side(items: list[dict[str, Any]]):
    """A ``side`` for :func:`comparisons` from the cited evidence: each value is of the words the
    evidence writes before it (in its clause) and of the name of the fact that holds it
    (``revenue_change_pct``: revenue); a pair is in order when its first value is of more of the
    left side's words and its second of the right's, than the other way round."""
    said: dict[tuple[str, Any], set[str]] = {}
    for it in items:
        for k, v in (it.get("facts") or {}).items():
            for tok in [str(v), *_ISO_CLOCK.findall(str(v))]:
                key = _key(tok)
                if key is not None:
                    said.setdefault(key, set()).update(_stems(str(k).replace("_", " ")))
        for clause in _CLAUSE_SPLIT.split(numbers.normalise(_ZONE_NOTE.sub(" ", str(it.get("text") or ""))))[::2]:
            for start, _, tok, _ in _operands(clause):
                key = _key(tok)
                if key is not None:
                    said.setdefault(key, set()).update(_stems(clause[:start]))

    def side(left: str, right: str, a: str, b: str) -> bool | None:
        wa, wb = said.get(_key(a) or ("", 0), set()), said.get(_key(b) or ("", 0), set())
        sl, sr = _stems(left), _stems(right)
        straight, crossed = len(wa & sl) + len(wb & sr), len(wb & sl) + len(wa & sr)
        return True if straight > crossed else False if crossed > straight else None
    return side


_NEITHER = re.compile(r"\b(?:neither|weder|ni|nem|né)\b", re.I)


def comparisons(text: str, side=None) -> list[tuple[str, str, str, bool | None]]:
    """(left value, operator, right value, holds — None when undecidable) for every comparison
    stated in ``text`` between two values of one clause; a negation between the left value and the
    comparison word flips the operator. Two things compared with no value beside them, and a pair of
    values set against each other ("Revenue outpaced costs: 15 % versus 25 %"), are compared in the
    order ``side(left words, right words, first value, second value)`` finds (True: as written,
    False: the other way round); undecided when it cannot tell, or without ``side``."""
    out = []
    parts = _CLAUSE_SPLIT.split(numbers.normalise(_ZONE_NOTE.sub(" ", text)))
    for n in range(0, len(parts), 2):
        clause = parts[n]
        # "completed at 09:54, before the error at 10:02": after a comma the left value may be the
        # last one of the clause before
        carried, from_part = _carried(parts, n)
        # "Revenue outpaced costs: 15 % versus 25 %": the clause after a colon
        after_colon = parts[n + 2] if n + 2 < len(parts) and parts[n + 1].strip() in (":", "：") else ""
        cmps = _find_cmp(clause)
        los = _left_starts(clause, cmps)
        for k, (s, e, op) in enumerate(cmps):
            lo = los[k]
            hi = _contrast_end(clause, e, cmps[k + 1][0] if k + 1 < len(cmps) else len(clause))
            left, lseg, neg_in = _operands(clause[lo:s]), clause[lo:s], None
            right, rseg = _operands(clause[e:hi]), clause[e:hi]
            if not left and lo == 0 and carried:
                left, lseg, neg_in = carried, from_part, clause[:s]
            elif not left and lo == 0:
                # "Revenue outpaced costs: 15 % versus 25 %", "grew more than costs (15 % vs 25 %)": the
                # things compared have no values beside them; a pair set against each other are theirs
                seg = clause[e:] if len(_operands(clause[e:])) >= 2 else after_colon
                pair = _contrasted(seg)
                if pair[0]:
                    subj_r = clause[e:e + seg.find(pair[0][-1][2])] if seg is not after_colon else clause[e:]
                    way = side(clause[:s], subj_r, pair[0][-1][2], pair[1][0][2]) if side else None
                    if way is None:
                        out.append((pair[0][-1][2], op, pair[1][0][2], None))
                        continue
                    left, right = pair if way else (pair[1], pair[0])
                    lseg = rseg = seg
                    neg_in = clause[:s]
            if clause[s:e] in _POSTFIX and len(left) >= 2:      # "12天在30天以内": the bound comes first
                right, left, rseg = [left[-1]], [left[-2]], lseg
            bound = _leading_bound(clause, s, e, left, right) if not carried and n + 2 < len(parts) \
                and parts[n + 1].strip() in (",", "，") else None
            after = _operands(parts[n + 2])[:1] if bound else []
            if after and _one_kind(after[0], parts[n + 2], bound[0][0], bound[1]):
                # "Later than the 10:02 error, at 09:54, the release completed", "在14:02的错误出现之后，
                # CFG-0811-07才于14:00完成": a clause that opens with a bound bounds the value after it
                (right, rseg), left, lseg, neg_in = bound, after, parts[n + 2], ""
            if left and not right and hi == len(clause) and re.search(r"\w", clause[e:]) and n + 2 < len(parts) \
                    and parts[n + 1].strip() in (",", "，"):
                # "CFG-0811-05 terminou às 13:55, mais tarde que CFG-0811-07, às 14:00": the right value
                # of a comparison that names a thing but no value may follow after a comma ("60 s
                # before, 5 s after" names nothing after "before": no comparison)
                right, rseg = _operands(parts[n + 2])[:1], parts[n + 2]
            if neg_in is None and left:
                neg_in = lseg[left[-1][1]:]
            if left and right:
                got = _decide(clause, s, e, hi, op, left[-1], right, lseg, rseg, neg_in)
                if got is not None:
                    out.append(got)
    return out


def _decide(clause: str, s: int, e: int, hi: int, op: str, left, right, lseg: str, rseg: str,
            neg_in: str) -> tuple[str, str, str, bool | None] | None:
    """One comparison of ``left`` (an operand of ``lseg``) with the first fitting operand of
    ``right`` (of ``rseg``) by ``op`` (the word at ``clause[s:e]``), after negation; None when the
    two are not one quantity or one is an offset."""
    if left[3][0] != right[0][3][0]:     # "at 14:00, after the first 502 at 14:02": like with like
        right = [r for r in right if r[3][0] == left[3][0]][:1] or right
    (_, le, lt, a), (_, re_, rt, b) = left, right[0]
    ul, ur = _unit(lseg, le, lt), _unit(rseg, re_, rt)
    if ul and ur and ul != ur:
        return None        # "claims of 100000 CNY or more on policies within 30 days": not one quantity
    before = _NEG.search(neg_in) or \
        _NEITHER.search(clause[:s])       # "neither A at 13:55 nor B at 14:00 completed after 14:02"
    after = clause[s:e] in _POSTFIX and _NEG_AFTER.match(clause[e:hi])    # "…以内ではない", "…미만이 아니다"
    if before or after:
        op = _FLIP[op]
    if "num" in (a[0], b[0]) and a[0] != b[0]:
        return None        # "10 minutes before 14:02": an offset, not two operands
    if a[0] != b[0] or (a[0].startswith("clock") and abs(a[1] - b[1]) > 12 * 3600):
        # a day against a time of day with its offset, times of day of other offsets, or
        # more than 12 hours apart (23:50 before 00:10 is across midnight): not decided
        return (lt, op, rt, None)
    return (lt, op, rt, _holds(op, a[1], b[1]))


_FROM_TO = [re.compile(rx, re.I) for rx in words.FROM_TO]
_UP = re.compile(words.CHANGE_UP, re.I)
_DOWN = re.compile(words.CHANGE_DOWN, re.I)


def changes(text: str) -> list[tuple[str, str, str, bool]]:
    """(from, "up"/"down", to, holds) for every change a clause states with one direction: "raised
    the timeout from 60 to 5 seconds" (up, 5 > 60: false), "von 60 auf 5 Sekunden gesenkt"."""
    out = []
    for clause in _CLAUSE_SPLIT.split(numbers.normalise(_ZONE_NOTE.sub(" ", text)))[::2]:
        up, down = bool(_UP.search(clause)), bool(_DOWN.search(clause))
        if up == down:
            continue        # no direction said, or both ("cut costs, raised prices from …")
        for rx in _FROM_TO:
            for m in rx.finditer(clause):
                a, b = float(m.group("a")), float(m.group("b"))
                out.append((m.group("a"), "up" if up else "down", m.group("b"), b > a if up else b < a))
    return out


def check_comparisons(text: str, items: list[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """False comparisons and changes of ``text``; ``items`` (the cited evidence) say which of a
    pair of values set against each other is which thing's."""
    out = []
    for a, way, b, ok in changes(text):
        if not ok:
            out.append(_viol("wrong_comparison", f"a change from {a} to {b} is not {way}", value=f"{a} {way} {b}"))
    for lt, op, rt, ok in comparisons(text, _side(items) if items else None):
        if ok is None:
            out.append(_viol("undecided", f"cannot compare {lt!r} with {rt!r}", severity="warning",
                             value=f"{lt} {op} {rt}"))
        elif not ok:
            out.append(_viol("wrong_comparison", f"{lt} {op} {rt} is false", value=f"{lt} {op} {rt}"))
    return out


# ---------------------------------------------------------------------------------- status
_CAUSAL = re.compile(words.alternation(words.CAUSAL), re.I)
_HEDGE = re.compile(words.alternation(words.HEDGES), re.I)
_NEG_CAUSAL = re.compile("|".join(words.NOT_CAUSAL.values()), re.I)


def is_causal(text: str) -> bool:
    return bool(_CAUSAL.search(text)) and not _NEG_CAUSAL.search(text)


def is_hedged(text: str) -> bool:
    """Whether ``text`` carries a hedge ("may", "suspected", "可能" …)."""
    return bool(_HEDGE.search(text))


def is_unverified(item: dict[str, Any]) -> bool:
    """An evidence item marked unverified (``verified: false``) or a hypothesis (``status``)."""
    facts = item.get("facts") or {}
    return facts.get("verified") is False or str(facts.get("status", "")).lower() == "hypothesis"



def _twin_text(t: dict[str, Any]) -> str:
    return str(t.get("text") or str(t.get("claim_id") or "").replace("_", " "))


def check_status(text: str, status: str, items: list[dict[str, Any]],
                 twins: list[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """``twins``: the deterministic answer's claims (``status``, ``text``, ``evidence``)."""
    out = []
    if status == "fact":
        bad = [str(i.get("object_id") or i.get("evidence_id")) for i in items if is_unverified(i)]
        if bad:
            out.append(_viol("status_upgraded", f"a fact cites unverified evidence ({', '.join(bad)})",
                             value=bad[0]))
    cited = {i.get("evidence_id") for i in items}
    same = [t for t in twins if t.get("evidence") and set(t["evidence"]) == cited]
    # the deterministic answer's weaker status binds a claim that states a cause, or one resting on
    # hedged evidence ("suspected", "may"); a restatement of observed times and values is not that claim
    binds = is_causal(text) or any(_HEDGE.search(str(i.get("text") or "")) for i in items)
    if status == "fact" and same and binds and all(RANK.get(t.get("status"), 0) <= RANK["hypothesis"] for t in same):
        out.append(_viol("status_upgraded", f"a fact on the evidence the deterministic answer holds as "
                         f"{same[0].get('status')} ({same[0].get('claim_id') or 'its claim'})", value=status))
    elif is_causal(text) and not _HEDGE.search(text):
        cited = {i.get("evidence_id") for i in items}
        allowed = max([RANK.get(t.get("status"), 0) for t in twins
                       if t.get("evidence") and set(t["evidence"]) <= cited and is_causal(_twin_text(t))
                       and RANK.get(t.get("status"), 0) >= RANK["inference"]] or [RANK["hypothesis"]])
        if RANK.get(status, 0) > allowed:
            most = next(k for k, v in RANK.items() if v == allowed)
            out.append(_viol("status_upgraded", f"a causal claim stated as {status}; the evidence it cites "
                             f"supports at most {most}", value=status))
    return out


# ---------------------------------------------------------------------------------- entities
# phrase -> the fields it binds; the bound name is the first id-like word after the phrase
_BINDERS: list[tuple[re.Pattern, tuple[str, ...]]] = [
    (re.compile(r"\b(?:owned by|belongs to|belonged to|owner(?:ship)?(?: team)?(?: of (?:the )?(?:(?!is |was )[\w\-]+ ){0,3}[\w\-]+)?"
                r"(?: is| was|:)?|owning team(?: is| was)?|(?:falls?|fell) to)\s+(?:the\s+)?(?:team\s+)?",
                re.I), ("owner_team", "owner", "team")),
    (re.compile(r"\b(?:Eigentümer|Besitzer)(?: von [\w\-]+)?(?: ist| war)?\s+(?:das\s+)?(?:Team\s+)?|"
                r"\bpropriétaire(?: de [\w\-]+)?(?: est)?\s+(?:l['’]\s?)?(?:équipe\s+)?|"
                r"\bвладел\w*(?: [\w\-]+)?\s*(?:—|-|:|является)?\s*(?:команда\s+)?", re.I),
     ("owner_team", "owner", "team")),
    (re.compile(r"(?:由|归)\s*(?:团队)?\s*(?=[A-Za-z])|(?:担当|所有|オーナー)チーム(?:は|が)\s*", re.I),
     ("owner_team", "owner", "team")),
    (re.compile(r"\b(?:propiedad del|pertenece al|a cargo del)\s+(?:equipo\s+)?", re.I), ("owner_team", "owner", "team")),
    # fr, de, pt, it, vi: "appartient à l'équipe X", "gehört dem Team X", "pertence à equipe X", "thuộc về nhóm X"
    (re.compile(r"\b(?:appartient à|relève de|gehört(?: dem| zum| zu)?|pertence (?:à|ao|a)|appartiene (?:al|a)|"
                r"thuộc(?: về)?)\s+(?:l['’]\s?)?(?:équipe|Team|equipe|time|team|squadra|nhóm|đội)\s+", re.I),
     ("owner_team", "owner", "team")),
    (re.compile(r"\bgoverned by\s+(?:the\s+)?(?:rule set\s+)?|\bregido por (?:el )?(?:conjunto de reglas )?", re.I),
     ("rule_set",)),
    (re.compile(r"(?<![A-Za-z])(?:runbook|manual de operaciones|运行手册)(?:\s+to (?:use|follow))?(?:\s+(?:is|was|applies))?"
                r"\s*:?\s*", re.I), ("runbook",)),
    (re.compile(r"\bon-call rotation\s+(?:(?:for|of) (?:the )?[\w\-]+\s+)?(?:is\s+|was\s+|:\s*)?|"
                r"\b(?:Rufbereitschaft|Bereitschaftsrotation|Bereitschaftsdienst)(?: (?:für|von) [\w\-]+)?(?: ist| war)?\s+|"
                r"\brotation d['’]astreinte(?: (?:de|du|pour) [\w\-]+)?(?: est| était)?\s+|"
                r"\brotación de guardia(?: (?:de|del|para) [\w\-]+)?(?: es| era)?\s+|"
                r"\brota(?:zione|ção) di? ?(?:reperibilità|plantão)(?: (?:di|de|do|para) [\w\-]+)?(?: è| é)?\s+|"
                r"\b(?:дежурная )?ротаци\w*(?: (?:для|по) [\w\-]+)?\s*(?:—|-|:|это)?\s*|值班轮换(?:为|是)\s*", re.I),
     ("oncall_rotation",)),
]


def _norm_name(s: str) -> str:
    return str(s).lower().strip("`'\".,")


# a name bound by the words after it ("payments-coreチームが所有", "payments-core团队负责")
_POSTFIX_BINDERS: list[tuple[re.Pattern, tuple[str, ...]]] = [
    (re.compile(r"(?<![A-Za-z0-9_\-])(?P<name>[A-Za-z][A-Za-z0-9_\-]*)\s*(?:チーム|团队)\s*(?:が所有|が担当|が管理|负责|所有)"),
     ("owner_team", "owner", "team")),
]


def _bound_names(text: str) -> Iterator[tuple[str, tuple[str, ...]]]:
    for rx, fields in _BINDERS:
        for m in rx.finditer(text):
            nm = _ID_CHARS.match(text, m.end())
            if nm:
                yield nm.group(), fields
    for rx, fields in _POSTFIX_BINDERS:
        for m in rx.finditer(text):
            yield m.group("name"), fields


def check_entities(text: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for name, fields in _bound_names(text):
        held = {_norm_name(v) for i in items for f in fields
                for v in ([(i.get("facts") or {}).get(f)] if (i.get("facts") or {}).get(f) is not None else [])}
        if not held or _norm_name(name) in held or not re.search(r"[-_]|\d", name):
            continue
        if _operand(name) is not None:      # "the owner of svc-a on 2026-08-01": a date is no name
            continue
        out.append(_viol("misbound_entity", f"{name!r} is not the {fields[0]} of the evidence the claim "
                         f"cites ({', '.join(sorted(held))})", value=name, field=fields[0]))
    out += _lookalike_names(text, items, {v["value"].lower() for v in out})
    return out + _out_of_time(text, items, {v["value"].lower() for v in out})


_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})")
_FROM = re.compile(r"\b(?:from|since|starting|as of|effective)\s+(\d{4}-\d{2}-\d{2})", re.I)
_UNTIL = re.compile(r"\b(?:until|till|through|to)\s+(\d{4}-\d{2}-\d{2})", re.I)
# "when the first error hit": the claim speaks of the time of an event it cites
_WHEN = re.compile(r"\b(?:when|while|during|at the time|by the time|cuando|durante|lors d|quand|pendant|als|"
                   r"während|zum Zeitpunkt|quando|когда|во время|khi|lúc)\b|时|時|の際", re.I)


def _validity(item: dict[str, Any]) -> tuple[str | None, str | None]:
    """(first day, last day) an item says it holds for: its ``valid_from``/``valid_to`` facts, or
    "From 2026-08-01" / "until 2026-07-31" in its text; None where it says nothing."""
    facts = item.get("facts") or {}
    text = str(item.get("text") or "")
    lo = str(facts["valid_from"])[:10] if facts.get("valid_from") else None
    hi = str(facts["valid_to"])[:10] if facts.get("valid_to") else None
    if lo is None and (m := _FROM.search(text)):
        lo = m.group(1)
    if hi is None and (m := _UNTIL.search(text)):
        hi = m.group(1)
    return lo, hi


def _holds_on(item: dict[str, Any], day: str) -> bool:
    lo, hi = _validity(item)
    return (lo is None or lo <= day) and (hi is None or day <= hi)


def _out_of_time(text: str, items: list[dict[str, Any]], done: set[str]) -> list[dict[str, Any]]:
    """A name a cited item holds in an entity field (an owner, a rotation), said of a time that
    item does not hold for, while another cited item gives that field another value then:
    "when the first error hit (2026-07-23), svc-a was owned by team-new", whose
    ownership starts on 2026-08-01. The claim's time is the dates it writes, else — when it says
    "when"/"during" — the times of the events it cites; a name said of any of them is fine."""
    days = sorted(set(_DATE.findall(numbers.normalise(text))))
    if not days and _WHEN.search(text):
        days = sorted({str(v)[:10] for i in items for k, v in (i.get("facts") or {}).items()
                       if k.endswith("_at") and _DATE.match(str(v))})
    if not days:
        return []
    low = text.lower()
    out = []
    for it in items:
        for f, v in (it.get("facts") or {}).items():
            if f not in _ENTITY_FIELDS or not isinstance(v, str) or v.lower() in done or v.lower() not in low:
                continue
            if not re.search(rf"(?<![A-Za-z0-9_\-]){re.escape(v.lower())}(?![A-Za-z0-9_\-])", low) or \
                    any(_holds_on(it, d) for d in days):
                continue
            others = sorted({str(j["facts"][f]) for j in items if j is not it and (j.get("facts") or {}).get(f)
                             and str(j["facts"][f]).lower() != v.lower() and any(_holds_on(j, d) for d in days)})
            if others:
                lo, hi = _validity(it)
                span = f"from {lo}" if lo and not hi else f"until {hi}" if hi and not lo else f"{lo} to {hi}"
                out.append(_viol("misbound_entity", f"{v!r} is the {f} {span}, not on {', '.join(days)} "
                                 f"(then: {', '.join(others)})", value=v, field=f))
                done.add(v.lower())
    return out


_NAME = re.compile(r"(?<![\w.\-])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+(?![\w\-])")
_ENTITY_FIELDS = tuple(dict.fromkeys(f for _, fields in _BINDERS for f in fields))


def _lookalike_names(text: str, items: list[dict[str, Any]], done: set[str]) -> list[dict[str, Any]]:
    """A hyphenated name in the claim that no cited item holds, sharing a part with the name a cited
    item holds in an entity field (``team-blue`` for the owner ``team-red``, ``rules-express``
    for the rule set ``rules-standard``), however the claim binds
    it: the wrong entity."""
    held = [(f, str(v)) for i in items for f, v in (i.get("facts") or {}).items()
            if f in _ENTITY_FIELDS and isinstance(v, str) and "-" in v]
    if not held:
        return []
    cited = " ".join([str(i.get("text") or "") for i in items]
                     + [str(v) for i in items for v in (i.get("facts") or {}).values()]).lower()
    out = []
    for m in _NAME.finditer(text):
        name = m.group().lower()
        if name in done or name in cited:
            continue
        parts = {p for p in name.split("-") if len(p) >= 3}
        for f, v in held:
            if parts & {p for p in v.lower().split("-") if len(p) >= 3}:
                out.append(_viol("misbound_entity", f"{m.group()!r} is not the {f} of the evidence the claim cites "
                                 f"({v})", value=m.group(), field=f))
                done.add(name)
                break
    return out


# ---------------------------------------------------------------------------------- hedges
_SENT = re.compile(r"(?<=[.!?。！？])\s*|\n+")
# content words: a Latin, Cyrillic or Hangul word of 4+ characters, a number, a run of 2+ CJK or kana
_CONTENT = re.compile(r"[A-Za-z\u00c0-\u024f\u0400-\u04ff\uac00-\ud7af][A-Za-z0-9_\-\u00c0-\u024f\u0400-\u04ff"
                      r"\uac00-\ud7af]{3,}|[0-9][0-9.:\-]*|[\u4e00-\u9fff]{2,}|[\u30a0-\u30ff]{2,}")
_STOP = {"that", "this", "with", "from", "have", "been", "were", "which", "their", "there", "than", "they",
         "will", "would", "should", "could", "might", "possibly", "suspected", "likely", "probably", "perhaps",
         "para", "como", "pero", "esta", "este", "posiblemente"}


def _content(text: str) -> set[str]:
    return {w.lower() for w in _CONTENT.findall(numbers.normalise(text)) if w.lower() not in _STOP}


content_words = _content      # the content words two texts are compared by (hedges, memory conflicts)


def hedged_source(text: str, sources: list[str], share: float = 0.6) -> str | None:
    """The hedged source sentence ``text`` restates without a hedge (most of its content words are
    in one hedged sentence of ``sources``), or None."""
    if _HEDGE.search(text):
        return None
    words = _content(text)
    if len(words) < 2:
        return None
    for src in sources:
        for sent in _SENT.split(src or ""):
            if sent and _HEDGE.search(sent):
                sw = _content(sent)
                if len(words & sw) >= max(2, share * len(words)):
                    return sent.strip()
    return None


def item_sources(item: dict[str, Any]) -> list[str]:
    """The texts of an evidence item a hedge is read in: its text and its string facts."""
    return _item_sources(item)


def _item_sources(item: dict[str, Any]) -> list[str]:
    facts = item.get("facts") or {}
    out = [str(item.get("text") or "")]
    out += [str(v) for v in facts.values() if isinstance(v, str)]
    return out


def check_hedges(text: str, status: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if status != "fact":
        return []
    sent = hedged_source(text, [s for i in items for s in _item_sources(i)])
    if sent is not None:
        return [_viol("hedge_dropped", f"states as fact what its source hedges: {sent[:120]!r}", value=sent[:120])]
    if items and not _HEDGE.search(text) and not any(map(is_unverified, items)):   # unverified: check_status's
        # in other words, but an item it cites only suspects ("might explain", "likely held"): a
        # fact may not rest on it, whatever else the claim cites
        ids = [str(i.get("object_id") or i.get("evidence_id")) for i in items if wholly_hedged(i)]
        if ids:
            return [_viol("hedge_dropped", f"states as fact what only hedged evidence suggests ({', '.join(ids)})",
                          value=ids[0])]
    return []


def wholly_hedged(item: dict[str, Any]) -> bool:
    """Whether every sentence of an item's text hedges (a note that only suspects); an item that
    also states something plainly ("Pool at 50 of 50. The retry loop may be why.") is not."""
    sents = [x for x in _SENT.split(str(item.get("text") or "")) if x.strip()]
    return bool(sents) and all(_HEDGE.search(x) for x in sents)


# ---------------------------------------------------------------------------------- playbook rules
_RULE_WORDS = re.compile(r"\breview(?:er|ers|ed)?\b|审核|复核|人工|revisión|revisor|revisão|revisione|revue|révision|"
                         r"Prüfung|Prüfer|審査|レビュー|검토|xem xét|проверк", re.I)
_RULE_NO = re.compile(r"\b(?:no|without)\s+(?:\w+\s+)?review|\breview\w*[^.;:,]{0,40}\b(?:not|never)\s+"
                      r"(?:needed|required|apply|applies|necessary)|does not apply|doesn't apply|is not needed|"
                      r"need not|needn't|does not need|doesn't need|not required|"
                      r"\b(?:not|never)\s+(?:be\s+)?(?:sent|routed|go|goes|going|forwarded|escalated)\b|"
                      r"does not go|doesn't go|を必要としません|必要としない|必要ない|"
                      r"不需要|无需|不适用|不用|不必|不要|は不要|必要ありません|必要はありません|"
                      r"no (?:se )?requiere|no es necesaria|no aplica|no se aplica|no necesita|no debe|"
                      r"não precisa|não é necessária|não requer|nicht nötig|nicht erforderlich|keine\s+\w*Prüfung|"
                      r"pas besoin|n['’]est pas nécessaire|aucune revue|non serve|non è necessari|non richiede|"
                      r"не требуется|не нужна|không cần", re.I)
_RULE_YES = re.compile(r"\b(?:required|needed|necessary|applies|apply|routed|goes to|go to|must|sent to|needs)\b|"
                       r"需要|适用|必须|须|应|requiere|necesaria|aplica|se env[ií]a|debe|precisa|deve|doit|muss|"
                       r"erforderlich|nötig|必要|要する|回され|送られ|cần|требуется|нужна|необходим", re.I)


def rule_outcomes(rules: dict[str, str], twins: list[dict[str, Any]]) -> dict[str, bool]:
    """claim id -> whether the playbook's ``when`` holds on the deterministic claim's facts."""
    from . import expr

    out = {}
    for t in twins:
        when = rules.get(str(t.get("claim_id")))
        if when and isinstance(t.get("facts"), dict):
            try:
                out[t["claim_id"]] = bool(expr.evaluate(when, t["facts"]))
            except (expr.Unknown, expr.ExprError, TypeError, ValueError):
                continue
    return out


def check_rules(text: str, cited: set[str], outcomes: dict[str, bool],
                twins: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A claim saying whether a playbook rule (the manual review rule) applies, on two or more of
    its evidence items, must agree with the rule evaluated on the deterministic facts."""
    out = []
    for t in twins:
        cid = t.get("claim_id")
        if cid not in outcomes or len(cited & set(t.get("evidence") or [])) < 2:
            continue
        for clause in re.split(r"[.;:。；：]\s*", text):
            if not _RULE_WORDS.search(clause):
                continue
            says = False if _RULE_NO.search(clause) else (True if _RULE_YES.search(clause) else None)
            if says is not None and says != outcomes[cid]:
                out.append(_viol("wrong_comparison", f"says the rule {cid} {'applies' if says else 'does not apply'}"
                                 f"; on the cited facts it {'applies' if outcomes[cid] else 'does not'}",
                                 value=cid))
                return out
    return out


# ---------------------------------------------------------------------------------- entry points
def check_claim(text: str, status: str, cited_items: list[dict[str, Any]], playbook: Any = None,
                twins: list[dict[str, Any]] = (), rules: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """Every violation (and ``undecided`` warning, ``severity: warning``) of one claim: ``text`` with
    ``status`` citing ``cited_items`` (pack evidence items: ``facts``, ``text``, ``evidence_id``);
    ``twins`` are the deterministic answer's claims; ``rules`` (claim id -> ``when``) or a
    ``playbook`` (its claims' ``when``) let a claim about a rule be checked against its outcome."""
    if rules is None and playbook is not None:
        rules = {c.id: c.when for c in getattr(playbook, "claims", []) if getattr(c, "when", None)}
    out = check_comparisons(text, cited_items)
    if rules and not any(v["code"] == "wrong_comparison" for v in out):
        out += check_rules(text, {i.get("evidence_id") for i in cited_items}, rule_outcomes(rules, list(twins)),
                           list(twins))
    out += check_status(text, status, cited_items, twins)
    out += check_entities(text, cited_items)
    out += check_hedges(text, status, cited_items)
    return out


def check_summary(summary_text: str, replaced_texts: list[str]) -> list[dict[str, Any]]:
    """Violations of a summary that replaces messages ``replaced_texts``: its comparisons, a causal
    statement none of the replaced messages makes unhedged, and a hedge it drops."""
    out = check_comparisons(summary_text)
    if is_causal(summary_text) and not _HEDGE.search(summary_text):
        if not any(is_causal(t) and not _HEDGE.search(t) for t in replaced_texts):
            out.append(_viol("status_upgraded", "the summary states a cause the messages it replaces do not "
                             "state (or only hedge)", value="summary"))
    if not any(v.get("severity") != "warning" for v in out):     # a warning hides no dropped hedge
        # sentence by sentence: the rest of a longer summary does not dilute the one that drops it
        for part in _SENT.split(summary_text):
            sent = hedged_source(part, replaced_texts, share=0.5) if part.strip() else None
            if sent:
                out.append(_viol("hedge_dropped", f"the summary drops the hedge of {sent[:120]!r}",
                                 value=sent[:120]))
                break
    return out
