"""Matching machinery of the English/Chinese core rules (see :mod:`.rules_core`): a tiny
pattern DSL (macros, lead keywords, gates) and the scanner. Rules register with
:func:`add_rule` when their module is imported; :func:`finalize` then builds the gating
tables. Every gap is bounded and every rule starts with a literal lead keyword, so
matching is linear in the text length."""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import re
from typing import Iterable, Iterator, NamedTuple

import regex

from .families import PATTERN_IDS

# --------------------------------------------------------------------------------------
# Pattern building blocks
# --------------------------------------------------------------------------------------

_MACROS: dict[str, str] = {
    # ASCII word boundaries that still match next to CJK characters ("请ignore ...").
    "B": r"(?<![a-z0-9])",
    "E": r"(?![a-z0-9])",
    # Separator between two words: 1-4 non-letter, non-digit characters other than
    # sentence punctuation (space, newline, "-", "_", "*", quotes, commas, ...).
    "S": r"[^\p{L}\p{N}.!?;:]{1,4}",
    "SO": r"[^\p{L}\p{N}.!?;:]{0,4}",  # optional separator ("roll back" / "rollback")
    # Bounded gap character inside one sentence (English); use as ⟨G⟩{0,n}?
    "G": r"[^.!?;\n]",
    # ... without commas (tighter)
    "GC": r"[^.!?;,\n]",
    # The gap's last character when the next item must start a word. (A consuming
    # class instead of a lookbehind: lookbehinds inside lazy gap loops are slow.)
    "W": r"[^a-z0-9.!?;\n]",
    "WC": r"[^a-z0-9.!?;,\n]",
    # Chinese gap characters (NFKC has already turned "，！？；：" into ASCII)
    "ZG": r"[^。.!?;,\n]",
    "ZGW": r"[^。.!?;\n]",
    # Imperative position: start of text/line/sentence/clause, after a Han character,
    # or after a softener/connector ("please", "and", "then", ...).
    "IMPX": (
        r"(?:^|[\n.!?:;,(\[\"“”‘’*>•]|\p{Han}"
        r"|(?<![a-z0-9])(?:please|pls|kindly|and|then|now|so|also|just|simply|instead"
        r"|therefore|thus|hence))[^\S\n]?"
    ),
    "IMP": r"(?<=⟨IMPX⟩)",
    # Not inside a conditional clause of the same sentence (runbook / rule text).
    "NOCOND": (
        r"(?<!(?<![a-z0-9])(?:if|when|whenever|once|unless|provided|after|until|before"
        r"|in case)(?![a-z0-9])[^.!?;\n]{0,120})"
    ),
    # Same check evaluated at the end of a match (so the costly lookbehind only runs
    # on complete candidates): no conditional word earlier in the sentence.
    "NOCONDE": (
        r"(?<!(?<![a-z0-9])(?:if|when|whenever|once|unless|provided|after|until|before"
        r"|in case)(?![a-z0-9])[^.!?;\n]{0,250})"
    ),
    "NOCONDA": (
        r"(?![^.!?;\n]{0,100}?(?<![a-z0-9])(?:if|when|whenever|unless|once|provided"
        r"|as soon as|in case|after|upon)(?![a-z0-9]))"
    ),
    # Not in a conditional sentence; evaluated at the end of a candidate match.
    "ZNOCOND": (
        r"(?<!(?:如果|若|倘若|假如|一旦|如遇|如发现|如發現|如出现|如出現|待|经过|經過"
        r"|当(?![前天日地然中初年月下场場面作成事心])|當(?![前天日地然中初年月下場面作成事心]))"
        r"[^。.!?;\n]{0,50})"
    ),
    # Chinese modal / negation right before an adverb: "可直接批准", "不得自动拒赔".
    "ZNOMODAL": (
        r"(?<!(?:可|可以|方可|才可|才能|能|能够|能夠|允许|允許|应|應|须|須|需|将|將|会|會"
        r"|不得|不|勿|别|別|禁止|严禁|嚴禁)[^\S\n]?)"
    ),
    # Qualifiers of the overridden object ("all previous", "the system", "your", ...)
    "QUAL": (
        r"(?:all|any|every|each|the|your|these|those|previous|previously|prior|above"
        r"|earlier|preceding|foregoing|former|original|initial|existing|current|given"
        r"|provided|system|system['’]s|developer|developer['’]s|safety|security|of"
        r"|above-mentioned|aforementioned|other|old|standard|default|core|internal|hidden)"
    ),
    # Strong qualifiers (required for verbs like override/bypass that occur in config
    # docs: "override the default policy" is not flagged, "bypass all rules" is).
    "QSTRONG": (
        r"(?:all|any|every|your|previous|previously|prior|above|earlier|preceding"
        r"|system|system['’]s|safety|these|those|existing|original|initial)"
    ),
    "OBJ": (
        r"(?=[iprgcdst])(?:instructions?|rules?|rulesets?|polic(?:y|ies)|guidelines?"
        r"|guidance|prompts?|constraints?|directives?|directions|guardrails?"
        r"|restrictions?|safeguards?|programming|training)"
    ),
    "URG": (
        r"(?=[dirnaswb])(?:directly|immediately|right⟨S⟩away|right⟨S⟩now|now|at⟨S⟩once|asap"
        r"|straight⟨S⟩away|without⟨S⟩(?:any⟨S⟩)?(?:(?:further|additional|more|human"
        r"|manual|prior)⟨S⟩)?(?:review|reviews|reviewing|checks?|checking|verification"
        r"|validation|approval|documents?|documentation|delay|questions?|confirmation"
        r"|investigation|hesitation|escalation)|no⟨S⟩(?:(?:further|more|additional"
        r"|other)⟨S⟩)?(?:documents?|documentation|review|checks?|questions|verification)"
        r"(?:⟨S⟩(?:are|is))?⟨S⟩(?:needed|required|necessary)|(?:skip|skipping|bypass"
        r"|bypassing)⟨S⟩(?:the⟨S⟩|all⟨S⟩|any⟨S⟩)?(?:review|checks?|verification))"
    ),
    "URGOPS": (
        r"(?=[nirasw])(?:now|immediately|right⟨S⟩away|right⟨S⟩now|at⟨S⟩once|asap|straight⟨S⟩away"
        r"|without⟨S⟩(?:any⟨S⟩)?(?:further⟨S⟩)?(?:review|approval|checks?|confirmation"
        r"|verification|waiting|delay|asking))"
    ),
    "MODAL": (
        r"(?:must|should|shall|will|ll|need⟨S⟩to|needs⟨S⟩to|have⟨S⟩to|has⟨S⟩to|are⟨S⟩to"
        r"|is⟨S⟩to|(?:are|is)⟨S⟩(?:hereby⟨S⟩)?(?:required|instructed|ordered|expected"
        r"|authori[sz]ed|permitted|allowed)⟨S⟩to)"
    ),
    # Obligation modals only (no "will"): for third-person subjects
    "MODALS": (
        r"(?:must|shall|should|need⟨S⟩to|needs⟨S⟩to|has⟨S⟩to|is⟨S⟩to|is⟨S⟩(?:hereby⟨S⟩)?"
        r"(?:required|instructed|ordered|authori[sz]ed)⟨S⟩to)"
    ),
    # Action verbs for addressed commands
    "VACT": (
        r"(?:approve|authori[sz]e|pay(?:⟨S⟩out)?|payout|reject|deny|execute|perform"
        r"|roll⟨SO⟩back|transfer|wire|delete|grant|release|refund|disburse)"
    ),
    "VCUE": (
        r"(?=[aprdetwgiob])(?:approve|authori[sz]e|pay(?:⟨S⟩out)?|payout|reject|deny"
        r"|execute|perform|roll⟨SO⟩back|transfer|wire|delete|grant|release|refund|disburse|ignore"
        r"|disregard|bypass|override)"
    ),
    "EMAIL": r"(?:[a-z0-9._%+\-]{1,64}+@[a-z0-9\-]{1,63}(?:\.[a-z0-9\-]{1,63}){1,6}|https?://)",
    "CRED": (
        r"(?=[pcasbov2])(?:passwords?|passwd|passcodes?|pins?|credentials?|api⟨SO⟩keys?"
        r"|secret⟨S⟩keys?|private⟨S⟩keys?|access⟨S⟩(?:keys?|tokens?)|auth(?:entication)?⟨S⟩tokens?"
        r"|bearer⟨S⟩tokens?|session⟨S⟩(?:tokens?|cookies?)|ssh⟨S⟩keys?|otp|2fa⟨S⟩codes?"
        r"|verification⟨S⟩codes?|one-time⟨S⟩(?:passwords?|codes?))"
    ),
    "ENEG": (
        r"(?<!(?<![a-z0-9])(?:never|not|don['’]?t|dont|cannot|can['’]?t|won['’]?t"
        r"|shouldn['’]?t|mustn['’]?t|to⟨S⟩not)⟨S⟩)"
    ),
    # Not negated: no negation word shortly before the lead. Placed right after
    # ⟨LEAD⟩ (and after a cheap lookahead for the rest of the rule) so that it only
    # runs on promising candidates.
    "ZNEG": (
        r"(?<!(?:不要|不能|不得|不可|不应|不應|不许|不許|不准|请勿|請勿|切勿|禁止|严禁|嚴禁"
        r"|不会|不會|避免|防止|以免|杜绝|杜絕|谨防|謹防|无法|無法|未|勿|别|別|不|没有|沒有)"
        r"[^。.!?;,\n]{0,10}⟨LEADNC⟩)"
    ),
}

_MACRO_RE = re.compile("⟨([A-Z]+)⟩")


def _expand(src: str) -> str:
    for _ in range(5):
        # ⟨LEAD⟩/⟨LEADNC⟩ are left for add_rule to fill in.
        new = _MACRO_RE.sub(lambda m: _MACROS.get(m.group(1), m.group(0)), src)
        if new == src:
            return new
        src = new
    return src


_TOKEN_RE = re.compile(r"^[a-z0-9]+$")


_ASCII_RUN = re.compile(r"[a-z0-9]+")


def _mixed(w: str, stem: bool = False) -> bytes | str:
    """A needle that is not one ASCII token ("initial instructions", "contraseña", "tú")
    is looked up by its longest ASCII run when that has at least 2 characters: as a whole
    token, or as a token prefix when it ends the needle and the needle is a stem
    (conservative: a gate may open needlessly, a match is never hidden). Otherwise the
    needle is looked for as a substring."""
    if not w[0].isascii() and not w.isascii():
        return w  # CJK, Cyrillic, ...: found by the non-ASCII needle scan
    runs = [(m.end() == len(w), m.group()) for m in _ASCII_RUN.finditer(w)]
    if not runs:
        return w
    last, best = max(runs, key=lambda r: (len(r[1]), r[0]))
    if len(best) < 2:
        return w
    if last and (stem or not w.isascii()):
        return _Stem(best)
    return best.encode()


class _Stem(str):
    """An ASCII needle that any token starting with it satisfies."""

    __slots__ = ()


_Gate = tuple[tuple[bytes | str, ...], ...]


class _Variant:
    """One lead keyword of a rule (or a whole rule without leads): ``pre`` (zero-width
    lookbehinds) + ``lead`` + ``post``. Used to build the per-lead regexes for large
    texts (see :class:`_LeadGroup`)."""

    __slots__ = ("pid", "label", "gate", "order", "lead", "pre", "post", "lang", "neg", "gsets")

    def __init__(self, pid: str, label: str, gate: _Gate, order: int, lead: str | None,
                 pre: str, post: str, lang: str = "en", neg: bool = False) -> None:
        self.lang = lang  # language of the rule ("any" for markers)
        self.neg = neg  # matches are dropped when a negation governs them (see context.py)
        self.pid = pid
        self.label = label
        self.gate = gate
        self.order = order  # global rule order, for "ties by pattern order"
        self.lead = lead
        self.pre = pre
        self.post = post


class _Rule:
    """One rule: a regex for the whole rule (all lead keywords as one alternation; lead i is
    captured by group "l{i}" to pick the variant/label), compiled on first use — a rule
    whose needles never occur in a scanned text is never compiled, which keeps import and
    the first scans of a process cheap. ``gate``: all groups must be satisfied; a group is
    satisfied when any of its needles occurs (bytes needle = ASCII token looked up in the
    token set, str needle = substring)."""

    __slots__ = ("pid", "src", "_rx", "gate", "variants", "gsets")

    def __init__(self, pid: str, src: str, gate: _Gate, variants: tuple[_Variant, ...]) -> None:
        self.pid, self.src, self._rx, self.gate, self.variants = pid, src, None, gate, variants

    @property
    def rx(self) -> "regex.Pattern[str]":
        if self._rx is None:
            self._rx = regex.compile(self.src, regex.MULTILINE)
        return self._rx

    def variant_of(self, m: "regex.Match[str]") -> _Variant:
        if len(self.variants) > 1:
            for i, v in enumerate(self.variants):
                if m.start(f"l{i}") >= 0:
                    return v
        return self.variants[0]


_RULES: list[_Rule] = []
_ORDER = itertools.count()  # global rule order (ties between matches at one offset)


def _needles(words: Iterable[str]) -> tuple[bytes | str, ...]:
    out: list[bytes | str] = []
    for w in words:
        if w.startswith("~"):  # a stem ("genehmig"): any token starting with it
            w = w[1:]
            out.append(_Stem(w) if _TOKEN_RE.match(w) else _mixed(w, stem=True))
        else:
            out.append(w.encode() if _TOKEN_RE.match(w) else
                       (w if not any(c.isalnum() for c in w) else _mixed(w)))
    return tuple(out)


def add_rule(
    pid: str,
    label: str,
    src: str,
    gate: Iterable[Iterable[str]] = (),
    leads: Iterable[tuple[str, Iterable[str], str]] | None = None,
    lang: str | None = None,
    neg: bool = False,
) -> None:
    """Register a rule. With ``leads``, ``⟨LEAD⟩`` in ``src`` is the lead keyword
    (``⟨LEADNC⟩`` the same without capture, for use inside lookbehinds), ``{lead}`` in
    the label its display word, and its needles are an extra gate group. Everything
    before ``⟨LEAD⟩`` must be zero-width (lookbehinds)."""
    assert pid in PATTERN_IDS
    base_gate = tuple(_needles(g) for g in gate)
    if leads is None:
        assert "⟨LEAD⟩" not in src and "⟨LEADNC⟩" not in src
        full = _expand(src)
        v = _Variant(pid, label, base_gate, next(_ORDER), None, "", full, lang or "any", neg)
        _RULES.append(_Rule(pid, full, base_gate, (v,)))
        return
    items = list(leads)
    assert src.count("⟨LEAD⟩") == 1, src
    src = _expand(src)
    pre, post = src.split("⟨LEAD⟩")
    assert pre == "" or pre.startswith("(?<"), pre
    variants = []
    for lead_src, nd, word in items:
        lead = _expand(lead_src)
        variants.append(_Variant(
            pid, label.replace("{lead}", word), (_needles(nd),) + base_gate, next(_ORDER),
            lead, pre.replace("⟨LEADNC⟩", "(?:" + lead + ")"),
            post.replace("⟨LEADNC⟩", "(?:" + lead + ")"),
            lang or ("en" if word.isascii() else "zh"), neg))
    alt = "(?:" + "|".join(f"(?P<l{i}>{v.lead})" for i, v in enumerate(variants)) + ")"
    alt_nc = "(?:" + "|".join(_expand(lead_src) for lead_src, _, _ in items) + ")"
    union = tuple(n for _, nd, _ in items for n in _needles(nd))
    _RULES.append(_Rule(pid, src.replace("⟨LEAD⟩", alt).replace("⟨LEADNC⟩", alt_nc), (union,) + base_gate,
                        tuple(variants)))


def word_leads(*ws: str) -> list[tuple[str, tuple[str, ...], str]]:
    """Simple leads: each word is its own regex (spaces -> ⟨S⟩), needle = its tokens'
    longest token, label word = the word."""
    out = []
    for w in ws:
        toks = re.findall(r"[a-z0-9]+", w)
        needle = max(toks, key=len) if toks else w
        out.append((regex.escape(w).replace(r"\ ", "⟨S⟩").replace(" ", "⟨S⟩"), (needle,), w))
    return out


def zh_leads(*ws: str) -> list[tuple[str, tuple[str, ...], str]]:
    """CJK leads: literal, needle = the literal."""
    return [(regex.escape(w), (w,), w) for w in ws]



# --------------------------------------------------------------------------------------
# Gating
# --------------------------------------------------------------------------------------

# bytes -> the ASCII projection's token characters ([a-z0-9]; anything else a space)
TOKEN_TABLE = bytes(c if (48 <= c <= 57 or 97 <= c <= 122) else 32 for c in range(256))
_TOKEN_CHUNK = 1 << 20


class Projection(NamedTuple):
    """A text's ASCII projection: ``raw``, the text encoded in ASCII (any other character
    ``?``); ``proj``, ``raw`` with every byte but ``[a-z0-9]`` a space; ``tokens``, the
    distinct tokens of ``proj``."""

    raw: bytes
    proj: bytes
    tokens: frozenset[bytes]


# the projections kept while one detection runs (:func:`kept_projections`), by the id of their
# text (the text is held with its projection, so the id is not reused meanwhile)
_KEPT: contextvars.ContextVar[dict[int, tuple[str, Projection]] | None] = contextvars.ContextVar(
    "ctx_injection_projections", default=None)


@contextlib.contextmanager
def kept_projections() -> Iterator[None]:
    """Keep every text's :func:`projection` in this block (this thread or task only), so the
    layers that read one text each split it once; dropped at the block's end."""
    token = _KEPT.set({}) if _KEPT.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _KEPT.reset(token)


def projection(s: str) -> Projection:
    """The ASCII projection of ``s`` (:class:`Projection`): what the pattern gates, the intent
    layer's entry screen and the transforms' screen read; computed once per text inside
    :func:`kept_projections`."""
    kept = _KEPT.get()
    if kept is not None:
        hit = kept.get(id(s))     # the kept text is alive, so no other text has its id
        if hit is not None:
            return hit[1]
    raw = s.encode("ascii", "replace")  # non-ASCII -> "?"
    b = raw.translate(TOKEN_TABLE)
    n = len(b)
    if n <= _TOKEN_CHUNK:
        toks = frozenset(b.split())
    else:       # in chunks: no list of every token of a very long text at once
        acc: set[bytes] = set()
        i = 0
        while i < n:
            j = b.find(b" ", i + _TOKEN_CHUNK)
            j = n if j < 0 else j
            acc.update(b[i:j].split())
            i = j
        toks = frozenset(acc)
    out = Projection(raw, b, toks)
    if kept is not None:
        kept[id(s)] = (s, out)
    return out


class _Present:
    """What a text contains, for the rule gates: its ASCII ``[a-z0-9]+`` tokens (any
    other character, CJK included, separates tokens), ASCII punctuation needles (looked
    up in the ASCII projection) and CJK needles (found in one pass, see
    :data:`_CJK_SCAN`)."""

    __slots__ = ("keys",)

    def __init__(self, s: str) -> None:
        raw, _, toks = projection(s)
        keys: set[tuple[str, bytes | str]] = {("t", t) for t in toks & _ALL_TOKS}
        if _STEM_RX is not None and toks:
            # the longest stem that begins each token (one pass of the stems' trie over the
            # distinct tokens), then every stem that begins that one: those are exactly the
            # stems some token starts with (two prefixes of one token: the shorter begins the longer)
            for longest in set(_STEM_RX.findall(b" ".join(toks))):
                keys.update(_STEM_CLOSURE[longest])
        for sub in _ALL_ASCII_SUB:
            if sub.encode() in raw:
                keys.add(("a", sub))
        if not s.isascii():
            for sub in _ALL_MIXED_SUB:
                if sub in s:
                    keys.add(("m", sub))
            if _CJK_SCAN is not None:
                for f in set(_CJK_SCAN.findall(s)):
                    keys.update(("c", x) for x in _CJK_CLOSURE.get(f, (f,)))
        self.keys = keys


def _gate_open(gsets: tuple[frozenset, ...], present: _Present) -> bool:
    """Every group of the gate has a needle present (set operations, no Python loop
    over needles)."""
    keys = present.keys
    return all(not keys.isdisjoint(g) for g in gsets)


def _key(n: bytes | str) -> tuple[str, bytes | str]:
    if isinstance(n, bytes):
        return ("t", n)
    if isinstance(n, _Stem):
        return ("p", n.encode())
    if n.isascii():
        return ("a", n)
    if n[0].isascii():
        return ("m", n)
    return ("c", n)


_ALL_TOKS: frozenset[bytes] = frozenset()
_ALL_STEMS: tuple[bytes, ...] = ()
_ALL_ASCII_SUB: tuple[str, ...] = ()
_ALL_MIXED_SUB: tuple[str, ...] = ()
_STEM_RX: "re.Pattern[bytes] | None" = None     # the longest stem at a token's start (built by finalize)
_STEM_CLOSURE: dict[bytes, tuple[tuple[str, bytes], ...]] = {}    # stem -> the stems it begins with


def _stem_trie(stems: Iterable[bytes]) -> "tuple[re.Pattern[bytes] | None, dict[bytes, tuple]]":
    """A regex matching, at the start of a ``[a-z0-9]+`` token, the longest of ``stems`` the
    token begins with (a trie of the stems: greedy optional branches try the longer stem
    first), and for each stem the ``("p", stem)`` keys of every stem it begins with."""
    stems = sorted(set(stems))
    if not stems:
        return None, {}
    trie: dict = {}
    for s in stems:
        node = trie
        for c in s:
            node = node.setdefault(c, {})
        node[None] = {}

    def build(node: dict) -> bytes:
        alts = [re.escape(bytes([c])) + build(node[c]) for c in sorted(k for k in node if k is not None)]
        if not alts:
            return b""
        body = alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"
        return b"(?:" + body + b")?" if None in node else body

    rx = re.compile(b"(?<![a-z0-9])" + build(trie))
    closure = {s: tuple(("p", x) for x in stems if s.startswith(x)) for s in stems}
    return rx, closure


def first_char_alternation(words: Iterable[str]) -> "re.Pattern[str] | None":
    """One regex finding any of ``words``, grouped by their first character, longer
    continuations first (``a(?:bc|b)|x(?:y)``): the stdlib engine skips quickly over characters
    that begin none (a flat alternation of some 500 needles is ten times slower). None for no
    words."""
    by_first: dict[str, set[str]] = {}
    for w in words:
        by_first.setdefault(w[0], set()).add(w[1:])
    if not by_first:
        return None
    return re.compile("|".join(
        re.escape(first) + "(?:" + "|".join(re.escape(r) for r in sorted(rests, key=lambda r: (-len(r), r))) + ")"
        for first, rests in sorted(by_first.items())))


def _build_cjk_scan() -> tuple["re.Pattern[str] | None", "_Closure | dict[str, tuple[str, ...]]"]:
    """One regex finding every CJK gate needle (a trie-shaped alternation, so the stdlib
    engine can skip quickly over characters that start no needle). ``findall`` does not
    report overlapping occurrences, so a found needle also marks every needle that can
    overlap it (contains it, is contained in it, or shares a prefix/suffix): the gate
    stays conservative -- it may open needlessly, it never hides a match."""
    needles: set[str] = set()
    for rule in _RULES_T:
        for gate in (rule.gate,) + tuple(v.gate for v in rule.variants):
            for group in gate:
                for nd in group:
                    if isinstance(nd, str) and not nd.isascii() and not nd[0].isascii():
                        needles.add(nd)
    if not needles:
        return None, {}
    scan = first_char_alternation(needles)

    def overlaps(a: str, b: str) -> bool:
        if a in b or b in a:
            return True
        return any(a.endswith(b[:k]) or b.endswith(a[:k])
                   for k in range(1, min(len(a), len(b))))

    return scan, _Closure(needles, overlaps)


class _Closure:
    """needle -> every needle that can overlap it; computed on first use per needle (the
    full table is quadratic in the number of needles)."""

    def __init__(self, needles: set[str], overlaps) -> None:  # noqa: ANN001
        self._needles = tuple(sorted(needles))
        self._overlaps = overlaps
        self._cache: dict[str, tuple[str, ...]] = {}

    def get(self, a: str, default: tuple[str, ...]) -> tuple[str, ...]:
        hit = self._cache.get(a)
        if hit is None:
            if a not in self._needles:
                return default
            hit = self._cache[a] = tuple(b for b in self._needles if self._overlaps(a, b))
        return hit


_CJK_SCAN: "re.Pattern[str] | None" = None
_CJK_CLOSURE: "_Closure | dict[str, tuple[str, ...]]" = {}
_RULES_T: tuple[_Rule, ...] = ()


class _LeadGroup:
    """All rule variants that begin with the same lead keyword, merged into one regex
    ``lead(?:(?P<a0>(?<=pre0 lead)post0)|(?P<a1>...)|...)``: the engine finds the lead
    with a fast literal search once and tries each variant's continuation there. Only
    the variants whose gate is open for the text are included (so a closed rule costs
    nothing per lead occurrence); each such combination is compiled on first use and
    cached. Only large texts use these."""

    __slots__ = ("variants", "first", "_cache")

    def __init__(self, variants: list[_Variant]) -> None:
        self.variants = tuple(sorted(variants, key=lambda v: v.order))
        self.first = self.variants[0].order
        self._cache: dict[tuple[int, ...], regex.Pattern[str]] = {}

    def rx(self, open_idx: tuple[int, ...]) -> "regex.Pattern[str]":
        rx = self._cache.get(open_idx)
        if rx is None:
            alts = []
            for i in open_idx:
                v = self.variants[i]
                if v.lead is not None and v.pre:
                    alts.append(f"(?P<a{i}>(?<={v.pre}(?:{v.lead})){v.post})")
                else:
                    alts.append(f"(?P<a{i}>{v.post})")
            lead = self.variants[0].lead
            src = ("" if lead is None else lead) + "(?:" + "|".join(alts) + ")"
            rx = regex.compile(src, regex.MULTILINE)
            assert rx.groups == len(open_idx), "variant patterns must not capture"
            self._cache[open_idx] = rx
        return rx

    def variant_of(self, m: "regex.Match[str]") -> _Variant:
        name = m.lastgroup
        return self.variants[int(name[1:])] if name else self.variants[0]


def _build_lead_groups() -> tuple[_LeadGroup, ...]:
    by_lead: dict[str, list[_Variant]] = {}
    groups: list[_LeadGroup] = []
    for rule in _RULES_T:
        for v in rule.variants:
            if v.lead is None:
                groups.append(_LeadGroup([v]))
            else:
                by_lead.setdefault(v.lead, []).append(v)
    groups.extend(_LeadGroup(vs) for vs in by_lead.values())
    groups.sort(key=lambda g: g.first)
    return tuple(groups)


_LEAD_GROUPS: tuple[_LeadGroup, ...] = ()
_GROUPS_BY_KEY: dict[tuple[str, bytes | str], tuple[int, ...]] = {}
_GROUPS_ALWAYS: tuple[int, ...] = ()


def finalize() -> None:
    """Build the gating tables once every rule module has registered its rules."""
    global _RULES_T, _CJK_SCAN, _CJK_CLOSURE, _LEAD_GROUPS
    global _ALL_TOKS, _ALL_STEMS, _ALL_ASCII_SUB, _ALL_MIXED_SUB, _STEM_RX, _STEM_CLOSURE
    _RULES_T = tuple(_RULES)
    every: set[tuple[str, bytes | str]] = set()
    for rule in _RULES_T:
        rule.gsets = tuple(frozenset(_key(n) for n in g) for g in rule.gate)
        for v in rule.variants:
            v.gsets = tuple(frozenset(_key(n) for n in g) for g in v.gate)
        for gs in (rule.gsets,) + tuple(v.gsets for v in rule.variants):
            for g in gs:
                every.update(g)
    _ALL_TOKS = frozenset(v for k, v in every if k == "t")
    _ALL_STEMS = tuple(sorted(v for k, v in every if k == "p"))
    _STEM_RX, _STEM_CLOSURE = _stem_trie(_ALL_STEMS)
    _ALL_ASCII_SUB = tuple(sorted(v for k, v in every if k == "a"))
    _ALL_MIXED_SUB = tuple(sorted(v for k, v in every if k == "m"))
    _CJK_SCAN, _CJK_CLOSURE = _build_cjk_scan()
    _LEAD_GROUPS = _build_lead_groups()
    by_key: dict[tuple[str, bytes | str], list[int]] = {}
    always: list[int] = []
    for gi, g in enumerate(_LEAD_GROUPS):
        firsts = [v.gsets[0] if v.gsets else None for v in g.variants]
        if any(f is None for f in firsts):
            always.append(gi)
            continue
        for k in set().union(*firsts):
            by_key.setdefault(k, []).append(gi)
    global _GROUPS_BY_KEY, _GROUPS_ALWAYS
    _GROUPS_BY_KEY = {k: tuple(v) for k, v in by_key.items()}
    _GROUPS_ALWAYS = tuple(always)

# Texts longer than this are scanned with the per-lead regexes (fast literal search;
# compiled lazily, once per combination of open variants), shorter ones with one regex per
# rule (an alternation of its leads). Measured: the per-lead regexes are faster at every
# size once the candidate groups are looked up by the needles present, so every text uses
# them (no switch, hence no cost step); the per-rule path is kept as a cross-check in tests.
_BIG_TEXT = 0


class Work:
    """What the pattern layer did, counted while :func:`count_work` is active (tests measure
    work, not time): ``views`` scanned and their ``view_chars``; regex ``scans`` started (one
    per open rule or lead group and view) and the characters they ran over (``scan_chars``);
    ``matches`` found and the ``longest`` match."""

    __slots__ = ("views", "view_chars", "scans", "scan_chars", "matches", "longest")

    def __init__(self) -> None:
        self.views = self.view_chars = self.scans = self.scan_chars = self.matches = self.longest = 0


_WORK: Work | None = None


@contextlib.contextmanager
def count_work() -> Iterator[Work]:
    """Count the pattern layer's work in this block (not thread-safe; for tests)."""
    global _WORK
    prev, _WORK = _WORK, Work()
    try:
        yield _WORK
    finally:
        _WORK = prev


def iter_matches(s: str, *, big: bool | None = None):  # noqa: ANN201
    """Every match of every rule whose gate is open, as ``(start, end, variant)``, in rule
    order (non-overlapping within one rule or lead group). Cost: one bounded search per
    open rule, linear in ``len(s)``."""
    if not s:
        return
    n = len(s)
    if big is None:
        big = n > _BIG_TEXT
    work = _WORK
    if work is not None:
        work.views += 1
        work.view_chars += n
    present = _Present(s)
    if big:
        # only the groups one of whose lead needles occurs (index built by finalize)
        cand: set[int] = set(_GROUPS_ALWAYS)
        for k in present.keys:
            cand.update(_GROUPS_BY_KEY.get(k, ()))
        for gi in sorted(cand):
            g = _LEAD_GROUPS[gi]
            open_idx = tuple(i for i, v in enumerate(g.variants) if _gate_open(v.gsets, present))
            if open_idx:
                if work is not None:
                    work.scans += 1
                    work.scan_chars += n
                for m in g.rx(open_idx).finditer(s):
                    if work is not None:
                        work.matches += 1
                        work.longest = max(work.longest, m.end() - m.start())
                    yield m.start(), m.end(), g.variant_of(m)
    else:
        for rule in _RULES_T:
            if _gate_open(rule.gsets, present):
                if work is not None:
                    work.scans += 1
                    work.scan_chars += n
                for m in rule.rx.finditer(s):
                    if work is not None:
                        work.matches += 1
                        work.longest = max(work.longest, m.end() - m.start())
                    yield m.start(), m.end(), rule.variant_of(m)


def keywords() -> tuple[frozenset[bytes], tuple[str, ...]]:
    """The rules' gate words, for the whole-text transforms' screen (transforms.py): the whole
    ASCII tokens (``[a-z0-9]+``, two characters or more; not the word beginnings, which begin
    too many ordinary words once transformed) and the other needles that hold a letter or a
    digit (CJK, Cyrillic, mixed, ASCII phrases), in a fixed order."""
    every: set[tuple[str, bytes | str]] = set()
    for rule in _RULES_T:
        for gs in (rule.gsets,) + tuple(v.gsets for v in rule.variants):
            for g in gs:
                every.update(g)
    toks = frozenset(v for k, v in every if k == "t" and len(v) >= 2)
    phrases = tuple(sorted(str(v) for k, v in every
                           if k in ("a", "m", "c") and any(c.isalnum() for c in str(v))))
    return toks, phrases


def rules_digest() -> str:
    """sha256 (hex) of every registered rule variant in rule order: family, label, language,
    negation flag, gate needles, lead and pattern -- what ``ctxcli.injection_identity.RULES_SHA256`` records."""
    import hashlib
    import json

    def needle(n: bytes | str) -> str:
        return ("b:" + n.decode()) if isinstance(n, bytes) else (("p:" if isinstance(n, _Stem) else "s:") + str(n))

    rows = [[v.pid, v.label, v.lang, v.neg, [[needle(n) for n in g] for g in v.gate], v.lead, v.pre, v.post]
            for rule in _RULES_T for v in rule.variants]
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()
