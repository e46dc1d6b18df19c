"""Audit an agent call ctx did not build (``ctx audit-call``).

A recorded model request — an OpenAI-style chat request (messages, tool calls, tool results)
or an OTLP/JSON trace with GenAI spans — is cut into spans (one per message content part,
tool-call arguments, tool result, and any other field of a message: ``refusal``, a content
object; every string anywhere in it is read, and JSON written inside a string is read too).
Two adjacent messages are also read joined, so a text split across them is found (reported
only for what neither message matches alone). Each span is matched to stored objects of any
tenant:

1. by content hash (the span's text, or any one string in it, is an object's content),
2. else by locator or object id (the span names one) and by close text match (at least half
   of an object's word 4-grams are in the span), both — after both texts are brought to one
   skeleton (NFKC, invisible characters dropped, case folded, confusable letters mapped:
   ``injection.views.skeleton``), so homoglyphs and full-width letters do not hide a copy.

A transcript whose shape is wrong (a message that is not an object, ``tool_calls`` that is
not a list of objects) is refused (exit 2) naming the place.

Every matched object is judged by the per-candidate gates for the auditing subject at as_of,
and every span is scanned for injected instructions. A span's status, most severe first:
``withheld`` (it matched an object this subject may not see: another tenant's, a missing
scope, clearance or purpose, or one its source masks for this subject — gate ``redaction``) → ``injection`` → ``invalid_at_as_of`` → ``stale`` → ``tampered``
→ ``admitted`` (governed: every match passes) → ``unknown_origin`` (no match).

A withheld match is reported only by a reference keyed with the store secret (``wh-…``) and
its gate: never its id, source, tenant, text or a digest of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import regex

from ..engine.gates import WITHHOLDING_GATES
from ..util.canon import content_hash, opaque_ref

AUDIT_SCHEMA = "ctx.audit-call/1"
SEVERITY = ["withheld", "injection", "invalid_at_as_of", "stale", "tampered", "unsupported", "admitted",
            "unknown_origin"]
_GATE_STATUS = {"validity": "invalid_at_as_of", "knowledge_time": "invalid_at_as_of", "freshness": "stale",
                "integrity": "tampered", "injection": "injection"}
MATCHED_BY = ["content_hash", "locator", "text", "values", "entity"]
_WORD = regex.compile(r"[\p{L}\p{N}]+")
SHINGLE = 4
MIN_SHINGLES = 3
MIN_CONTAINMENT = 0.5
MIN_VALUE_DIGITS = 4        # a value with fewer digits (12, 3.5, 10%) says nothing of where it came from
MAX_VALUE_OBJECTS = 2       # ... nor one that more objects hold (an error code every incident names, a common date)
LONG_VALUE_DIGITS = 7       # a value this long (an account, a card number, 333777000) is enough alone


@dataclass
class Span:
    where: str
    role: str
    text: str
    alts: tuple[str, ...] = ()               # each string the text joins: matched by content hash alone
    message: str | None = None               # the message it belongs to ("messages[3]")
    joins: tuple[str, str] | None = None     # a joined span: the two messages it joins


@dataclass
class AuditSubject:
    tenant_id: str
    subject_id: str
    scopes: list[str]
    clearance: str
    purpose: str
    as_of: datetime
    known_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        return {"tenant_id": self.tenant_id, "subject": self.subject_id, "scopes": sorted(self.scopes),
                "clearance": self.clearance, "purpose": self.purpose, "as_of": self.as_of.isoformat(),
                "known_at": self.known_at.isoformat() if self.known_at else None}


# ------------------------------------------------------------------------------ reading spans
# keys that name or link parts of a transcript, not what was said
_STRUCTURAL = frozenset({"role", "type", "id", "tool_call_id", "index", "name"})
MAX_DEPTH = 32


def _strings(v: Any, depth: int = 0) -> list[str]:
    """Every non-blank string in ``v`` (any JSON), structural keys aside; a string that holds a
    JSON object or list gives its strings too."""
    if depth > MAX_DEPTH:
        return []
    if isinstance(v, str):
        out = [v] if v.strip() else []
        if v.lstrip()[:1] in ("{", "["):
            import orjson

            try:
                inner = orjson.loads(v)
            except orjson.JSONDecodeError:
                inner = None
            if isinstance(inner, (dict, list)):
                out += _strings(inner, depth + 1)
        return out
    if isinstance(v, dict):
        return [s for k, x in v.items() if k not in _STRUCTURAL for s in _strings(x, depth + 1)]
    if isinstance(v, list):
        return [s for x in v for s in _strings(x, depth + 1)]
    return []


def _span(where: str, role: str, value: Any, message: str) -> Span | None:
    """One span of ``value``: a string as it is; an object or list as its strings joined (each
    also matched alone)."""
    if isinstance(value, str):
        strings = _strings(value)
        return Span(where, role, value, tuple(strings[1:]), message) if strings else None
    strings = _strings(value)
    return Span(where, role, "\n".join(strings), tuple(strings), message) if strings else None


def _messages(msgs: list[Any], prefix: str) -> list[Span]:
    spans: list[Span] = []
    texts: list[tuple[str, str, list[str]]] = []      # (message, role, its strings): for the joined spans
    for i, m in enumerate(msgs):
        key = f"{prefix}[{i}]"
        if not isinstance(m, dict):
            raise ValueError(f"{key}: not a message object")
        role = str(m.get("role") or "unknown")
        mine: list[Span] = []
        content = m.get("content", m.get("parts"))
        if isinstance(content, list):
            for j, p in enumerate(content):
                if isinstance(p, dict) and p.get("type") == "tool_call" and "arguments" in p:
                    mine.append(_span(f"{key}.content[{j}].arguments", role, p["arguments"], key))
                    p = {k: v for k, v in p.items() if k != "arguments"}
                mine.append(_span(f"{key}.content[{j}]", role, p, key))
        else:
            mine.append(_span(f"{key}.content", role, content, key))
        calls = m.get("tool_calls")
        if calls is not None and not (isinstance(calls, list) and all(isinstance(c, dict) for c in calls)):
            raise ValueError(f"{key}.tool_calls: not a list of tool-call objects")
        for k, tc in enumerate(calls or []):
            fn = tc.get("function")
            if fn is not None and not isinstance(fn, dict):
                raise ValueError(f"{key}.tool_calls[{k}].function: not an object")
            mine.append(_span(f"{key}.tool_calls[{k}].arguments", "assistant", (fn or {}).get("arguments"), key))
            rest = {x: v for x, v in tc.items() if x != "function"}
            rest.update({x: v for x, v in (fn or {}).items() if x != "arguments"})
            mine.append(_span(f"{key}.tool_calls[{k}]", "assistant", rest, key))
        for field_ in sorted(set(m) - {"content", "parts", "tool_calls"} - _STRUCTURAL):
            mine.append(_span(f"{key}.{field_}", role, m[field_], key))   # refusal, and anything else said
        mine = [s for s in mine if s is not None]
        spans += mine
        texts.append((key, role, [t for s in mine for t in (s.text,)]))
    for (a, role_a, ta), (b, _, tb) in zip(texts, texts[1:]):
        if ta and tb:
            spans.append(Span(f"{a} + {b} (joined)", role_a, "\n".join(ta + tb), joins=(a, b)))
    return spans


def _attr_value(v: dict[str, Any]) -> Any:
    for k in ("stringValue", "intValue", "boolValue", "doubleValue"):
        if k in v:
            return v[k]
    return None


def read_spans(data: Any) -> tuple[str, list[Span]]:
    """(format, spans) of a recorded request; ValueError naming what is wrong."""
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        return "openai-chat", _messages(data["messages"], "messages")
    if isinstance(data, dict) and isinstance(data.get("resourceSpans"), list):
        import orjson

        spans: list[Span] = []
        for rs in data["resourceSpans"]:
            for ss in (rs or {}).get("scopeSpans") or []:
                for sp in (ss or {}).get("spans") or []:
                    name = f"span {sp.get('name', '?')} {sp.get('spanId', '')}".rstrip()
                    attrs = {a.get("key"): _attr_value(a.get("value") or {}) for a in sp.get("attributes") or []}
                    for key in ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt"):
                        raw = attrs.get(key)
                        if isinstance(raw, str):
                            try:
                                msgs = orjson.loads(raw)
                            except orjson.JSONDecodeError:
                                raise ValueError(f"{name}: attribute {key} is not JSON") from None
                            if isinstance(msgs, list):
                                spans += _messages(msgs, f"{name} {key}")
                    for k, ev in enumerate(sp.get("events") or []):
                        en = str(ev.get("name") or "")
                        if en.startswith("gen_ai.") and en.endswith(".message"):
                            ea = {a.get("key"): _attr_value(a.get("value") or {}) for a in ev.get("attributes") or []}
                            if isinstance(ea.get("content"), str) and ea["content"].strip():
                                role = en[len("gen_ai."):-len(".message")]
                                spans.append(Span(f"{name} events[{k}] {en}", role, ea["content"]))
        return "otlp-json", spans
    raise ValueError("neither an OpenAI-style chat request (messages) nor an OTLP/JSON trace (resourceSpans)")


# ------------------------------------------------------------------------------ matching
def _shingles(text: str) -> set[tuple[str, ...]]:
    """Word 4-grams of ``text`` in its skeleton form (the same for a homoglyph copy)."""
    from ..injection.views import skeleton

    w = _WORD.findall(skeleton(text))
    return {tuple(w[i:i + SHINGLE]) for i in range(max(0, len(w) - SHINGLE + 1))}


_WHEN = regex.compile(r"^(?:(?:19|20)[0-9]{2}(?:-[0-9]{1,2}(?:-[0-9]{1,2})?)?(?:t.*)?|"
                      r"[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?(?:\.[0-9]+)?(?:z|[+-][0-9]{2}:?[0-9]{2})?)$")


def _values(text: str) -> set[str]:
    """The values of ``text`` that can say where it came from: numbers, ids, dates and versions
    (as the claim checker normalises them) with at least MIN_VALUE_DIGITS digits; not a year, date or
    time of day (they say when, not what: unrelated texts share them)."""
    from ..answer.validate import norm, values_in

    out = set()
    for tok in values_in(text):
        v = norm(tok)
        if sum(ch.isdigit() for ch in v) >= MIN_VALUE_DIGITS and not _WHEN.match(v):
            out.add(v)
    return out


def _weight(value: str) -> int:
    return 2 if sum(ch.isdigit() for ch in value) >= LONG_VALUE_DIGITS else 1


@dataclass
class AuditIndex:
    rows: list[tuple]                                   # (doc_id, tenant, object_id, locator, hash, content)
    by_hash: dict[str, list[int]] = field(default_factory=dict)
    shingles: dict[int, set] = field(default_factory=dict)
    values: dict[int, set] = field(default_factory=dict)    # row -> its rare values (held by few objects)

    @classmethod
    def of(cls, rows: list[tuple]) -> "AuditIndex":
        ix = cls(rows)
        held: dict[str, int] = {}
        for n, r in enumerate(rows):
            ix.by_hash.setdefault(r[4], []).append(n)
            ix.shingles[n] = _shingles(r[5] or "")
            ix.values[n] = _values(r[5] or "")
            for v in ix.values[n]:
                held[v] = held.get(v, 0) + 1
        for n, vs in ix.values.items():
            ix.values[n] = {v for v in vs if held[v] <= MAX_VALUE_OBJECTS}
        return ix


def _names(text: str, name: str | None) -> bool:
    if not name or len(name) < 6:
        return False
    i = text.find(name)
    while i >= 0:
        before = text[i - 1] if i else " "
        after = text[i + len(name)] if i + len(name) < len(text) else " "
        if not (before.isalnum() or before in "-_#/") and not (after.isalnum() or after in "-_#/"):
            return True
        i = text.find(name, i + 1)
    return False


def match(ix: AuditIndex, text: str, alts: tuple[str, ...] = ()) -> list[tuple[int, str, float | None]]:
    """(row, by, similarity) of the objects a span matches: its content hash (or that of any one
    string it joins), or else every object it names and every object most of whose text it
    holds (both read in the skeleton form too)."""
    for t in (text, *alts):
        hits = ix.by_hash.get(content_hash(t), []) or ix.by_hash.get(content_hash(t.strip()), [])
        if hits:
            return [(n, "content_hash", None) for n in hits]
    from ..injection.views import skeleton

    folded = skeleton(text)
    folded = None if folded == text.lower() else folded

    def names(name: str | None) -> bool:
        return _names(text, name) or (folded is not None and bool(name) and _names(folded, name.casefold()))

    out: list[tuple[int, str, float | None]] = [(n, "locator", None) for n, r in enumerate(ix.rows)
                                                if names(r[3]) or names(r[2])]
    named = {n for n, _, _ in out}
    sh = _shingles(text)
    for n, obj in ix.shingles.items():
        if n not in named and len(obj) >= MIN_SHINGLES:
            c = len(obj & sh) / len(obj)
            if c >= MIN_CONTAINMENT:
                out.append((n, "text", round(c, 2)))
                named.add(n)
    # restated figures: the rare values of an object (two, or one long one), in any wording
    vals = _values(text)
    if vals:
        for n, obj in ix.values.items():
            if n not in named and sum(_weight(v) for v in obj & vals) >= 2:
                out.append((n, "values", None))
    return out


# ------------------------------------------------------------------------------ the audit
class Judge:
    """The per-candidate gates for one subject at as_of, object by object (memoised)."""

    def __init__(self, con, who: AuditSubject, *, key: bytes) -> None:
        from ..engine.builder import gate_context
        from ..engine.hydrate import Hydrator

        self.con, self.who, self.key = con, who, key
        self.hyd = Hydrator(con, who.tenant_id)
        self.gctx = gate_context(self.hyd, tenant=who.tenant_id, scopes=who.scopes, purpose=who.purpose,
                                 as_of=who.as_of, known_at=who.known_at, clearance=who.clearance)
        self._seen: dict[tuple[str, str], dict[str, Any]] = {}

    def object(self, object_id: str) -> dict[str, Any] | None:
        """The verdict on the subject's tenant's object ``object_id``; None when there is none."""
        row = self.con.object_summary(self.who.tenant_id, object_id)
        return None if row is None else self.doc(row[0], self.who.tenant_id, object_id)

    def withholding_gate(self, object_id: str) -> str | None:
        """The gate that withholds the object ``object_id`` (any tenant) from the subject, else
        None (it may see it, or there is none); a mask counts as ``scope``, what would lift it."""
        for row in self.con.object_facts([object_id]):
            v = {"status": "withheld", "gate": "tenant"} if row[1] != self.who.tenant_id else \
                self.object(object_id) or {}
            if v.get("status") == "withheld":
                return "scope" if v["gate"] == "redaction" else v["gate"]
        return None

    def entities(self):
        """The store's entity names judged for this subject (``agents.entities``)."""
        from .entities import EntityNames

        if not hasattr(self, "_entities"):
            memo: dict[str, str | None] = {}

            def gate(x: str) -> str | None:
                if x not in memo:
                    memo[x] = self.withholding_gate(x)
                return memo[x]

            self._entities = EntityNames(self.con.entity_links(), self.who.tenant_id, gate)
        return self._entities

    def _obj(self, object_id: str):
        row = self.con.object_summary(self.who.tenant_id, object_id)
        if row is None:
            return None
        objs = self.hyd.metadata([row[0]])
        self.hyd.fill_content(objs, [row[0]])
        return objs[row[0]]

    def masks(self, o) -> bool:
        """Whether ``o``'s source masks it for this subject."""
        from ..engine import redact

        return redact.applies(o, self.gctx.scopes)

    def view(self, object_id: str):
        """The subject's tenant's object ``object_id`` as this subject may see it: masked where
        its source masks it (call only for an object :meth:`object` does not withhold by
        tenant, scope, clearance or purpose)."""
        from ..engine import redact

        o = self._obj(object_id)
        if o is not None and self.masks(o):
            o = redact.masked_copy(o, redact.patterns(o.redaction))
        return o

    def _masked(self, o) -> bool:
        """Whether the source's masks change anything of ``o`` for this subject."""
        from ..engine.disclose import Disclosure
        from ..tokens import count

        return bool(Disclosure(key=self.key, scopes=self.gctx.scopes).view(o, count)[1])

    def doc(self, doc_id: int, tenant: str, object_id: str) -> dict[str, Any]:
        """{"status", ...}: withheld ones carry only the gate and a keyed reference."""
        from ..engine import redact
        from ..engine.gates import run_gates

        k = (tenant, object_id)
        if k in self._seen:
            return self._seen[k]
        if tenant != self.who.tenant_id:
            v = {"status": "withheld", "gate": "tenant", "ref": opaque_ref(tenant, object_id, key=self.key)}
        else:
            objs = self.hyd.metadata([doc_id])
            self.hyd.fill_content(objs, [doc_id])
            o = objs[doc_id]
            rej, _ = run_gates(o, self.gctx)
            if rej is not None and rej.gate in WITHHOLDING_GATES:
                v = {"status": "withheld", "gate": rej.gate, "ref": opaque_ref(tenant, object_id, key=self.key)}
            elif rej is not None:
                v = {"status": _GATE_STATUS.get(rej.gate, rej.gate), "gate": rej.gate, "reason": rej.reason,
                     "object_id": object_id, "source_id": o.source_id, "detail": rej.detail}
            elif redact.applies(o, self.gctx.scopes) and self._masked(o):
                # its source masks it for this subject: the unmasked text is withheld like the others
                v = {"status": "withheld", "gate": "redaction", "ref": opaque_ref(tenant, object_id, key=self.key)}
            else:
                v = {"status": "admitted", "object_id": object_id, "source_id": o.source_id}
        self._seen[k] = v
        return v


def audit(con, spans: list[Span], who: AuditSubject, *, key: bytes) -> list[dict[str, Any]]:
    """One entry per span: where, role, status, what it matched, an injection finding."""
    from ..engine.injection_adapter import scan

    ix = AuditIndex.of(con.audit_index())
    judge_ = Judge(con, who, key=key)

    def judge(n: int) -> dict[str, Any]:
        return judge_.doc(*ix.rows[n][:3])

    from ..answer.validate import check_output

    out = []
    seen: dict[str, set[int]] = {}      # message -> the objects its own spans matched
    given: list[str] = []               # the texts the call gave before (neither withheld nor injected)
    hidden: list[str] = []              # the texts of withheld spans: never quoted in a finding
    for sp in spans:
        found = match(ix, sp.text, sp.alts)
        if sp.joins is not None:        # a joined span reports only what neither message matched alone
            alone = seen.get(sp.joins[0], set()) | seen.get(sp.joins[1], set())
            found = [f for f in found if f[0] not in alone]
            if not found:
                continue
        elif sp.message is not None:
            seen.setdefault(sp.message, set()).update(n for n, _, _ in found)
        matches = []
        for n, by, sim in found:
            m = {"by": by, **judge(n)}
            if sim is not None and m["status"] != "withheld":
                m["similarity"] = sim
            matches.append(m)
        if ".arguments" in sp.where:     # a tool call asking about an entity the subject may not see
            ent = judge_.entities().withheld_entity(sp.text)
            if ent is not None:
                matches.append({"by": "entity", "status": "withheld", "gate": ent[0],
                                "ref": opaque_ref(ent[1], "entity:" + ent[2], key=key)})
        matches.sort(key=lambda m: (SEVERITY.index(m["status"]), MATCHED_BY.index(m["by"]),
                                    m.get("ref") or m.get("object_id") or ""))
        entry: dict[str, Any] = {"span": sp.where, "role": sp.role, "chars": len(sp.text)}
        withheld = any(m["status"] == "withheld" for m in matches)
        hit = None if withheld else scan([("content", sp.text)])
        statuses = [m["status"] for m in matches] + (["injection"] if hit else [])
        entry["status"] = min(statuses, key=SEVERITY.index) if statuses else "unknown_origin"
        if withheld:       # nothing of a withheld object, nor what the span shares with it
            matches = [{"by": m["by"], "status": "withheld", "gate": m["gate"], "ref": m["ref"]}
                       if m["status"] == "withheld" else m for m in matches]
        entry["matches"] = matches
        if hit is not None:
            entry["injection"] = {"pattern": hit[1], "matched": hit[2]}
        if sp.joins is None:
            if entry["status"] in ("admitted", "unknown_origin") and is_output(sp):
                judged = [_said(v, hidden) for v in check_output(sp.text, given) if v.get("severity") != "warning"]
                if judged:
                    entry["status"], entry["output_check"] = "unsupported", judged
            if entry["status"] not in ("withheld", "injection"):
                given.append(sp.text)
            elif entry["status"] == "withheld":
                hidden.append(sp.text)
        out.append(entry)
    return out


def _said(v: dict[str, Any], hidden: list[str]) -> dict[str, Any]:
    """A finding on the assistant's text, without its value when a withheld span holds that value
    (the finding would quote what the subject may not see)."""
    value = v.get("value")
    if value is not None and any(str(value).lower() in t.lower() for t in hidden):
        return {"code": v["code"], "message": "a value the call gave only in a withheld span"}
    return {k: v[k] for k in ("code", "message", "value") if k in v}


def is_output(sp: Span) -> bool:
    """Whether ``sp`` is what the model said (an assistant message's text): judged by the claim
    checker against what the call gave it before (tool-call arguments are not)."""
    return sp.role == "assistant" and sp.joins is None and ".arguments" not in sp.where \
        and ".tool_calls" not in sp.where


def counts(spans: list[dict[str, Any]]) -> dict[str, int]:
    c: dict[str, int] = {}
    for s in spans:
        c[s["status"]] = c.get(s["status"], 0) + 1
    return {k: c[k] for k in SEVERITY if k in c}
