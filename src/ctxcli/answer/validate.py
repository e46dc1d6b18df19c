"""The answer validator: every claim of a model answer checked against the pack.

Rules (codes as written to ``model_answer.json``; see docs/model.md):

violations (any one makes the answer ``rejected``)
  schema                      the answer is not the documented JSON shape
  cites_withheld              a cited id is an opaque ``wh-…`` reference of a withheld object
  cites_omitted               a cited id is an object the gates omitted (injection, validity …), or
                              the claim names such an object by its id ("per RULE-OLD-7 …")
                              without saying it was excluded and without evidence that names it
  cites_unknown               a cited id is neither evidence of the pack (``ev-…``), a packed tool
                              result (``tr-…``, for the values of its facts) nor an omission
  uncited_claim               a fact, inference or hypothesis cites no evidence
  unsupported_value           a number, date, identifier or version in the claim is not in the
                              evidence it cites (after normalisation), nor a derived fact of it
  fact_without_trusted_source a ``fact`` cites no item whose trust level may support facts
  wrong_comparison, status_upgraded, misbound_entity, hedge_dropped
                              what the claim says is false for its evidence (claims.py)
  verdict_not_in_vocabulary   the verdict is not one of ctx's verdicts
  action_not_in_vocabulary    the action is not one of the playbook's actions
  instruction_like_text       the injection detector fires on the answer's text
  rejected_text               a run of words from an omitted (not withheld) object's text or
                              title, absent from everything the model was shown

  verdict_disagrees           the verdict differs from the deterministic answer's   } warnings instead
  action_disagrees            the action differs from the deterministic answer's    } with --accept-disagreement

warnings (the answer is ``accepted_with_warnings``): the two above, when disagreement is accepted;
  undecided                   a comparison the claim checker cannot decide (claims.py)
  claims_uncovered            a claim of the playbook that the deterministic answer backs with
                              evidence is not addressed: no model claim cites any of its evidence

Nothing of a withheld object is ever read: its opaque reference is all the pack holds.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from . import claim_words
from . import claims as claim_checker
from . import numbers
from .schema import STATUSES, VERDICTS

FACT_GRADE = ("authoritative", "operational", "internal")
SHINGLE = 6

_EV_ID = re.compile(r"\b(?:ev-[0-9a-f]{10}|tr-[0-9a-f]{12}|wh-[0-9a-f]{16})\b")
_SLASH_DATE = re.compile(r"\b(\d{4})/(\d{1,2})/(\d{1,2})\b")
# a value: letters and digits joined by id punctuation; a leading minus sign belongs to it, and so
# does a superscript (``^2``, see numbers.py), so that -128000 and 128000² are never 128000
_SIGN = r"(?:(?<![A-Za-z0-9_.:/+#^-])-(?=[0-9]))?"
_TOKEN = re.compile(rf"{_SIGN}[A-Za-z0-9][A-Za-z0-9_.:/+#^-]*[A-Za-z0-9]|{_SIGN}[0-9]")
_PARTS = re.compile(r"[-_/:.+#tT^]")
_NUM = re.compile(r"^-?\d+(?:\.\d+)?$")
_ROMAN = re.compile(r"\b[IVXLCDM]{2,}\b")
_WORD = re.compile(r"\w+", re.UNICODE)


# ---------------------------------------------------------------------------------- values
@lru_cache(maxsize=4096)
def _prep(text: str) -> str:
    text = numbers.normalise(text)
    return _SLASH_DATE.sub(lambda m: f"{m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d}", text)


def norm(tok: str) -> str:
    """One value in comparable form: lower case, ``v1.2`` = ``1.2``, ``007`` = ``7``, ``12.0`` = ``12``."""
    t = tok.lower()
    if len(t) > 1 and t[0] == "v" and t[1].isdigit():
        t = t[1:]
    if _NUM.match(t):
        sign, t = ("-", t[1:]) if t.startswith("-") else ("", t)
        if "." in t:
            t = t.rstrip("0").rstrip(".")
        t = t.lstrip("0") or "0"
        t = sign + t if t != "0" else t
    return t


def values_in(text: str) -> list[str]:
    """Numbers, dates, identifiers and versions in ``text`` (tokens holding a digit), in order."""
    out = []
    for m in _TOKEN.finditer(_prep(_EV_ID.sub(" ", text))):
        if any(ch.isdigit() for ch in m.group()) and not _ZONE_TOKEN.fullmatch(m.group()):
            out.append(m.group())
    return out


# a zone written as an offset from UTC ("UTC+8", "GMT-05:00"): the zone of a time beside it, which
# _wrong_zones checks, not a value of its own
_ZONE_TOKEN = re.compile(r"(?:UTC|GMT)[+-][0-9]{1,2}(?::?[0-9]{2})?", re.I)


def haystack(texts: list[str]) -> set[str]:
    """Every value of ``texts`` and its parts (``2026-07-02`` gives ``2026``, ``7``, ``2`` too)."""
    out: set[str] = set()
    for text in texts:
        for m in _TOKEN.finditer(_prep(text)):
            tok = m.group()
            out.add(norm(tok))
            for part in _PARTS.split(tok):
                if part:
                    out.add(norm(part))
    return out


def dotted_thousands(tok: str) -> str | None:
    """``100.000`` (thousands grouped with dots, as in Spanish or German) as ``100000``; else None."""
    return tok.replace(".", "") if re.fullmatch(r"[0-9]{1,3}(?:\.[0-9]{3})+", tok) else None


def value_supported(tok: str, hay: set[str]) -> bool:
    n = norm(tok)
    if n in hay:
        return True
    if re.search(r"[0-9]s$", n):                # "the 502s", "the ERR-17s": the value, in the plural
        return n[:-1] in hay
    if dotted_thousands(tok) in hay:            # "100.000 CNY": the thousands grouped with dots
        return True
    if re.fullmatch(r"[0-9.]+/[0-9.]+", n):     # "50/50": each side (not a date: 23/07/2026)
        return all(norm(p) in hay for p in n.split("/"))
    if n.startswith("-"):          # a signed number holds only as itself
        return False
    # a compound value inside a longer one: "12:00" in "2026-07-23T12:00:00+08:00", "2026-07" in a date
    if len(n) >= 4 and _PARTS.search(n) and any(n in h for h in hay if len(h) > len(n)):
        return True
    parts = [p for p in re.split(r"-", tok) if p]
    # "12-day", "30-day": a compound of a value and plain words holds when each value does
    if len(parts) > 1 and any(p.isalpha() for p in parts):
        return all(p.isalpha() or norm(p) in hay for p in parts)
    return False


def check_output(text: str, sources: list[str]) -> list[dict[str, Any]]:
    """Violations of a model's output ``text`` judged against the texts it was given
    (``ctx audit-call``): the summary checks (a false comparison, a cause none of ``sources``
    states unhedged, a dropped hedge) and each number, date, id or version of ``text`` that
    none of ``sources`` holds (``unsupported_value``)."""
    out = claim_checker.check_summary(text, sources)
    hay = haystack(sources)
    for tok in dict.fromkeys(values_in(text)):
        if not value_supported(tok, hay):
            out.append({"code": "unsupported_value", "message": f"{tok!r} is in nothing the call contained",
                        "value": tok})
    return out


def _flatten(v: Any) -> list[str]:
    if isinstance(v, bool) or v is None:
        return []
    if isinstance(v, dict):
        return [s for k, x in v.items() for s in [str(k), *_flatten(x)]]
    if isinstance(v, list):
        return [s for x in v for s in _flatten(x)]
    if isinstance(v, float) and v.is_integer():
        return [str(int(v))]
    return [str(v)]


def tool_item(t: dict[str, Any]) -> dict[str, Any]:
    """A packed tool result as a claim may cite it (``tr-…``): for the values of its shaped facts
    only (not its arguments, never its raw rows), at its trust level (an ``untrusted`` result alone
    does not make a fact; nor does one with ``unverified_facts``)."""
    # a fact the raw-vs-shaped check could not vouch for is the caller's word: the result makes no fact
    trust = "unverified" if t.get("unverified_facts") else t.get("trust_level")
    return {"evidence_id": t["result_id"], "facts": t.get("facts") or {}, "trust_level": trust,
            "observed_at": t.get("observed_at"), "object_type": "tool_result", "title": t.get("tool")}


def _item_texts(item: dict[str, Any]) -> list[str]:
    keys = ("evidence_id", "object_id", "source_id", "source_version", "locator", "title", "text",
            "valid_from", "valid_to", "observed_at", "subject_id")
    return [str(item[k]) for k in keys if item.get(k)] + _flatten(item.get("facts") or {})


# ---------------------------------------------------------------------------------- words
def _words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def shingles(text: str, n: int = SHINGLE) -> set[tuple[str, ...]]:
    ws = _words(text)
    return {tuple(ws[i:i + n]) for i in range(len(ws) - n + 1)}


# ---------------------------------------------------------------------------------- validator
def _viol(code: str, message: str, claim: int | None = None, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"code": code, "message": message}
    if claim is not None:
        d["claim"] = claim
    d.update(extra)
    return d


def status_for(violations: list, warnings: list) -> str:
    """The documented policy: any violation rejects; only warnings accept with warnings."""
    if violations:
        return "rejected"
    return "accepted_with_warnings" if warnings else "accepted"


ANSWER_KEYS = ("verdict", "recommended_action", "summary", "claims")
CLAIM_KEYS = ("text", "status", "evidence")
MAX_CLAIMS, MAX_CLAIM_TEXT, MAX_SUMMARY, MAX_CITED = 100, 2000, 4000, 50   # bound the validator's work


def check_shape(ans: Any) -> list[dict[str, Any]]:
    """Schema violations of a parsed answer (an empty list when the shape is right). Keys outside
    the schema are refused, not ignored: nothing the validator does not read may ride along."""
    if not isinstance(ans, dict):
        return [_viol("schema", "the answer is not a JSON object")]
    out = []
    for k in ans:
        if k not in ANSWER_KEYS:
            out.append(_viol("schema", f"unknown key {str(k)[:40]!r} (the answer has only "
                             f"{', '.join(ANSWER_KEYS)})", field=str(k)[:40]))
    for key in ("verdict", "recommended_action"):
        if not isinstance(ans.get(key), str):
            out.append(_viol("schema", f"{key} is missing or not a string", field=key))
    if "summary" in ans and not isinstance(ans["summary"], str):
        out.append(_viol("schema", "summary is not a string", field="summary"))
    elif len(ans.get("summary") or "") > MAX_SUMMARY:
        out.append(_viol("schema", f"summary is longer than {MAX_SUMMARY} characters", field="summary"))
    claims = ans.get("claims")
    if not isinstance(claims, list):
        out.append(_viol("schema", "claims is missing or not a list", field="claims"))
        return out
    if len(claims) > MAX_CLAIMS:
        out.append(_viol("schema", f"more than {MAX_CLAIMS} claims", field="claims"))
        return out
    for i, c in enumerate(claims):
        if not isinstance(c, dict):
            out.append(_viol("schema", "a claim is not an object", i))
            continue
        for k in c:
            if k not in CLAIM_KEYS:
                out.append(_viol("schema", f"unknown key {str(k)[:40]!r} in a claim (a claim has only "
                                 f"{', '.join(CLAIM_KEYS)})", i, field=str(k)[:40]))
        if not isinstance(c.get("text"), str) or not c["text"].strip():
            out.append(_viol("schema", "claim text is missing or empty", i, field="text"))
        elif len(c["text"]) > MAX_CLAIM_TEXT:
            out.append(_viol("schema", f"claim text is longer than {MAX_CLAIM_TEXT} characters", i, field="text"))
        if c.get("status") not in STATUSES:
            out.append(_viol("schema", f"claim status must be one of {', '.join(STATUSES)}", i, field="status"))
        ev = c.get("evidence", [])
        if not isinstance(ev, list) or not all(isinstance(x, str) for x in ev):
            out.append(_viol("schema", "claim evidence is not a list of ids", i, field="evidence"))
        elif len(ev) > MAX_CITED:
            out.append(_viol("schema", f"a claim cites more than {MAX_CITED} ids", i, field="evidence"))
    return out


def validate(ans: Any, pack: dict[str, Any], action_vocab: list[str], *,
             rejected_texts: dict[str, str] | None = None, shown_text: str = "",
             scan=None, accept_disagreement: bool = False,
             rules: dict[str, str] | None = None) -> dict[str, Any]:
    """Check ``ans`` (a parsed model answer) against ``pack``.

    ``action_vocab`` is the playbook's action vocabulary; ``rejected_texts`` maps omitted, not
    withheld, object ids to their stored text (read by the caller, checked against the pack's
    content hash); ``shown_text`` is everything the model was shown (the request messages), so
    words it legitimately saw are never flagged as rejected text; ``scan`` is the injection
    detector (text -> match or None). A verdict or action that differs from the deterministic
    answer's is a violation, a warning only with ``accept_disagreement``. ``rules`` (playbook claim
    id -> its ``when``) lets the claim checker hold a claim about a rule to the rule's outcome. Returns the validation record: status, violations,
    warnings, per-claim results and the counts the eval uses."""
    violations = check_shape(ans)
    warnings: list[dict[str, Any]] = []
    if violations:
        return _result(violations, warnings, [], ans)
    by_id = {e["evidence_id"]: e for e in pack["evidence"]}
    by_id.update((t["result_id"], tool_item(t)) for t in pack.get("tool_results") or [])
    omitted: dict[str, dict[str, Any]] = {}
    for o in pack["omissions"]:
        omitted[o["ref"]] = o
        if o.get("object_id"):
            omitted.setdefault(o["object_id"], o)
    for o in pack.get("tool_omissions") or []:
        omitted.setdefault(o["ref"], o)
    withheld = {o["ref"] for o in list(pack["omissions"]) + list(pack.get("tool_omissions") or [])
                if o.get("withheld")}
    # derived facts: the facts the deterministic answer bound to evidence (hash-protected in the pack)
    derived = [(set(c.get("evidence") or []), c.get("facts") or {})
               for c in (pack.get("answer") or {}).get("claims") or [] if isinstance(c, dict)]
    twins = [c for c in (pack.get("answer") or {}).get("claims") or [] if isinstance(c, dict)]
    req = pack["request"]
    req_texts = [str(req.get(k)) for k in ("case_id", "tenant_id", "as_of", "known_at") if req.get(k)]
    req_texts += [str(k) for k in req.get("business_keys") or []]

    # omitted objects a claim may not rest on by naming them: their ids (not those of admitted evidence)
    admitted_ids = {e.get("object_id") for e in pack["evidence"]}
    named_omitted = {o["object_id"]: o for o in pack["omissions"]
                     if o.get("object_id") and not o.get("withheld") and o["object_id"] not in admitted_ids}

    rejected_sh: list[tuple[str, str, int, set]] = []
    for o in pack["omissions"]:
        if o.get("withheld") or not o.get("object_id") or o["gate"] == "duplicate":
            continue
        for t in (o.get("title") or "", (rejected_texts or {}).get(o["object_id"], "")):
            n = min(SHINGLE, len(_words(t)))
            if n < 4:
                continue
            sh = shingles(t, n) - shingles(shown_text, n)
            if sh:
                rejected_sh.append((o["object_id"], o["gate"], n, sh))

    claims_out = []
    all_good: set[str] = set()
    for i, c in enumerate(ans["claims"]):
        cv: list[dict[str, Any]] = []
        text = c["text"]
        cited = list(dict.fromkeys(list(c.get("evidence") or []) + _EV_ID.findall(text)))
        good, cv = _citations(cited, i, by_id, withheld, omitted)
        cv += _named_omissions(text, i, named_omitted, {x for x in cited if x in omitted}, good, by_id)
        status = c["status"]
        if status != "unknown" and not good and not cv:
            cv.append(_viol("uncited_claim", f"a {status} claim cites no evidence", i))
        cv += _check_values(text, good, by_id, derived, req_texts, i)
        all_good.update(good)
        if status == "fact" and good and not any(by_id[x].get("trust_level") in FACT_GRADE for x in good):
            levels = sorted({by_id[x].get("trust_level") or "unknown" for x in good})
            cv.append(_viol("fact_without_trusted_source", f"a fact rests only on {', '.join(levels)} evidence",
                            i, trust_levels=levels))
        cv += _text_checks(text, i, scan, rejected_sh)
        for v in claim_checker.check_claim(text, status, [by_id[x] for x in good], twins=twins,
                                                rules=rules):
            v["claim"] = i
            (warnings if v.pop("severity", None) == "warning" else cv).append(v)
        violations += cv
        claims_out.append({"claim": i, "status": status, "cited": cited, "in_pack": good,
                           "ok": not cv, "values_checked": len(values_in(text)),
                           "violations": list(dict.fromkeys(v["code"] for v in cv))})

    if ans["verdict"] not in VERDICTS:
        violations.append(_viol("verdict_not_in_vocabulary", f"verdict {ans['verdict']!r} is not one of "
                                f"{', '.join(VERDICTS)}", value=ans["verdict"]))
    if ans["recommended_action"] not in action_vocab:
        violations.append(_viol("action_not_in_vocabulary", f"action {ans['recommended_action']!r} is not one of "
                                f"the playbook's ({', '.join(action_vocab)})", value=ans["recommended_action"]))
    # the summary is checked like a claim: ids written in it, and its values against everything the
    # answer cites (the claims' evidence and the ids in the summary itself)
    summary = ans.get("summary") or ""
    if summary:
        s_good, sv = _citations(list(dict.fromkeys(_EV_ID.findall(summary))), None, by_id, withheld, omitted)
        counts = [str(len(ans["claims"]))] + [str(sum(1 for c in ans["claims"] if c["status"] == st))
                                               for st in STATUSES]      # "6 claim(s) (4 fact, 2 inference)"
        sv += _check_values(summary, sorted(all_good | set(s_good)), by_id, derived, req_texts + counts, None)
        sv += [v for v in claim_checker.check_comparisons(summary) if v.pop("severity", None) != "warning"]
        sv += _named_omissions(summary, None, named_omitted, set(), s_good + sorted(all_good), by_id)
        for v in sv:
            v["field"] = "summary"
        violations += sv
    violations += _text_checks(summary, None, scan, rejected_sh)
    det = pack.get("answer") or {}
    det_verdict = det.get("verdict")
    det_action = det.get("recommended_action")
    det_action = det_action.get("action") if isinstance(det_action, dict) else det_action
    # a changed verdict or action rejects the answer unless the user accepted disagreement
    into, hint = (warnings, "") if accept_disagreement else (violations, " (--accept-disagreement accepts it)")
    if det_verdict and ans["verdict"] != det_verdict:
        into.append(_viol("verdict_disagrees", f"verdict {ans['verdict']!r} differs from the deterministic "
                          f"{det_verdict!r}{hint}", model=ans["verdict"], deterministic=det_verdict))
    if det_action and ans["recommended_action"] != det_action:
        into.append(_viol("action_disagrees", f"action {ans['recommended_action']!r} differs from the "
                          f"deterministic {det_action!r}{hint}", model=ans["recommended_action"],
                          deterministic=det_action))
    uncovered, backed = _uncovered(ans, det)
    if uncovered:
        warnings.append(_viol("claims_uncovered", f"{len(uncovered)} of {backed} playbook claim(s) backed by "
                              f"evidence are not addressed by any model claim: {', '.join(uncovered)}",
                              claims=uncovered))
    out = _result(violations, warnings, claims_out, ans)
    out["counts"].update(playbook_claims=backed, playbook_claims_covered=backed - len(uncovered))
    return out


def _uncovered(ans: dict[str, Any], det: dict[str, Any]) -> tuple[list[str], int]:
    """The deterministic answer's claims that rest on evidence and that no model claim cites any
    evidence of (their ids, in playbook order), and how many rest on evidence."""
    cited = {e for c in ans.get("claims", []) if isinstance(c, dict) for e in (c.get("evidence") or [])
             if isinstance(e, str)}
    backed = [c for c in det.get("claims", []) if isinstance(c, dict) and c.get("evidence")]
    return [c["claim_id"] for c in backed if not cited & set(c["evidence"])], len(backed)


def _citations(cited: list[str], i: int | None, by_id, withheld, omitted) -> tuple[list[str], list[dict[str, Any]]]:
    """(the cited ids that are evidence of the pack, violations for the others)."""
    good, cv = [], []
    for cid in cited:
        if cid in by_id:
            good.append(cid)
        elif cid in withheld or cid.startswith("wh-"):
            cv.append(_viol("cites_withheld", f"cites {cid}, an object withheld from the subject", i, id=cid))
        elif cid in omitted:
            cv.append(_viol("cites_omitted", f"cites {cid}, omitted by the {omitted[cid]['gate']} gate "
                            f"({omitted[cid]['reason']})", i, id=cid, gate=omitted[cid]["gate"]))
        else:
            cv.append(_viol("cites_unknown", f"cites {cid}, which is not in the pack", i, id=cid))
    return good, cv


# words that report an exclusion ("RULE-OLD-7 expired and was excluded"): naming the object
# then says what the gaps section said, it does not rest on the object
_EXCLUSION = re.compile(
    r"\b(?:exclu\w*|omit\w*|expired|supersed\w*|withheld|dropped|rejected|stale|invalid|duplicate|"
    r"no longer|not (?:yet )?(?:valid|in force|used|admitted|applicable|in the pack)|out of date|"
    r"caducad\w*|vencid\w*|derogad\w*|no vigente|ya no)\b|已排除|排除|已过期|过期|失效|未生效|被取代|重复", re.I)


def _named_omissions(text: str, i: int | None, named: dict[str, dict[str, Any]], already: set[str],
                     good: list[str], by_id) -> list[dict[str, Any]]:
    """cites_omitted for each omitted object the claim names by its id in its text, unless the
    claim says it was excluded or evidence the claim cites names it too (a successor that
    "supersedes" it)."""
    if not named or _EXCLUSION.search(text):
        return []
    toks = {m.group() for m in _TOKEN.finditer(_EV_ID.sub(" ", text))}
    hits = [oid for oid in sorted(toks & set(named)) if oid not in already]
    if not hits:
        return []
    cited_text = " ".join(t for cid in good for t in _item_texts(by_id[cid]))
    return [_viol("cites_omitted", f"names {oid}, omitted by the {named[oid]['gate']} gate "
                  f"({named[oid]['reason']})", i, id=oid, gate=named[oid]["gate"])
            for oid in hits if not re.search(rf"(?<![\w.#-]){re.escape(oid)}(?![\w#-]|\.\w)", cited_text)]


# a currency written beside a number (before or after it): its ISO code
_CURRENCY_WORDS = {
    "USD": r"usd|us\$|\$|(?:us |u\.s\. )?dollars?|dólares?|dollars? américains|us-dollar|美元|ドル|달러|доллар\w*|"
           r"đô la(?: mỹ)?",
    "EUR": r"eur|€|euros?|欧元|ユーロ|유로|евро",
    "CNY": r"cny|rmb|yuan|renminbi|人民币|元|円人民元",
    "VND": r"vnd|₫|đồng|dong",
    "JPY": r"jpy|¥|yen|円|日元|엔",
    "GBP": r"gbp|£|pounds?( sterling)?|英镑",
}
_CUR_CODES = frozenset({"usd", "eur", "cny", "rmb", "vnd", "jpy", "gbp"})
_CUR_RX = [(code, re.compile(rf"(?<![A-Za-z])(?:{w})(?![A-Za-z])", re.I)) for code, w in _CURRENCY_WORDS.items()]


def currencies(text: str) -> set[str]:
    """The currencies ``text`` states an amount in: a currency word or sign right before or after a
    number (``128,000 CNY``, ``US$128,000``, ``12.8万元``); 美元 is USD (its 元 is beside no number)."""
    out = set()
    t = numbers.normalise(text)
    for code, rx in _CUR_RX:
        for m in rx.finditer(t):
            before, after = t[max(0, m.start() - 3):m.start()], t[m.end():m.end() + 3]
            # a currency's name in words follows its amount ("20.000 đồng"); "hợp đồng 20 ngày" is a contract
            g = m.group()
            word = g.isalpha() and g.lower() not in _CUR_CODES and not re.search(r"[\u3000-\u9fff\uac00-\ud7af]", g)
            if re.search(r"[0-9万千亿][\s(]{0,2}$", before) or (not word and re.match(r"\s{0,2}[0-9]", after)):
                out.add(code)
    return out


def check_cited(text: str, status: str, items: list[dict[str, Any]], *, twins: list[dict[str, Any]] = (),
                rules: dict[str, str] | None = None, req_texts: list[str] = ()) -> list[dict[str, Any]]:
    """Every violation (and warning, ``severity: warning``) of one claim ``text`` with ``status``
    citing ``items`` (evidence items with ``evidence_id``) — the checks :func:`validate` makes of
    a claim's cited evidence: its values (``unsupported_value``, ``misbound_value``), the trust a
    fact needs, and the claim checker (comparisons, status, entities, hedges, rules). ``twins``:
    the deterministic answer's claims (their ``facts`` are derived values too); ``req_texts``: the
    request's own values (its case id). The claims
    corpus (``python -m ctxcli.answer.claims_eval``) is scored with this."""
    by_id = {it["evidence_id"]: it for it in items}
    good = list(by_id)
    derived = [(set(c.get("evidence") or []), c.get("facts") or {}) for c in twins if isinstance(c, dict)]
    out = _check_values(text, good, by_id, derived, list(req_texts), None)
    if status == "fact" and good and not any(it.get("trust_level") in FACT_GRADE for it in items):
        out.append(_viol("fact_without_trusted_source", "a fact rests only on untrusted evidence"))
    return out + claim_checker.check_claim(text, status, items, twins=twins, rules=rules)


def _check_values(text: str, good: list[str], by_id, derived, req_texts: list[str],
                  i: int | None) -> list[dict[str, Any]]:
    """unsupported_value and misbound_value violations of one text against the evidence ``good``."""
    texts = [t for cid in good for t in _item_texts(by_id[cid])] + req_texts
    gs = set(good)
    for ev_set, facts in derived:
        if ev_set and ev_set <= gs:
            texts += _flatten(facts)
            texts += [str(len(v)) for v in facts.values() if isinstance(v, (list, dict))]   # counts
    hay = haystack(texts)
    vals = values_in(text)
    # an upper-case Roman numeral the evidence does not hold as a word is a number to check
    words = {w for t in texts for w in _ROMAN.findall(t)}
    for w in _ROMAN.findall(text):
        n = numbers.roman(w)
        if n is not None and w not in words:
            vals.append(str(n))
    out = []
    # "02:02 UTC" citing 10:02 (+08:00): the same instant, written in another zone
    converted = _converted_times(text, texts)
    unsupported = list(dict.fromkeys(v for v in vals if not value_supported(v, hay)
                                     and _clock(norm(v)) not in converted))
    for v in unsupported:
        out.append(_viol("unsupported_value", f"{v!r} is not in the evidence the claim cites", i, value=v))
    held = currencies(" ".join(texts))
    for code in sorted(currencies(text) - held) if held else ():
        out.append(_viol("unsupported_value", f"an amount in {code}: the evidence the claim cites states "
                         f"{', '.join(sorted(held))}", i, value=code))
    cited = [by_id[cid] for cid in good]
    for said, held_as in _wrong_units(text, cited) + _wrong_zones(text, texts):
        if not any(v["value"] == said for v in out):
            out.append(_viol("unsupported_value", f"{said!r}: the evidence the claim cites states {held_as}", i,
                             value=said))
    for v, field, want in _bound_values(text, _fields(good, by_id, derived)):
        if v in unsupported or _matches(v, want) or any(_matches(h, want) for h in converted.get(_clock(norm(v)), ())):
            continue
        shown = ", ".join(sorted(want))[:120]
        out.append(_viol("misbound_value", f"{v!r} is not the {' '.join(field)} of the evidence the claim cites "
                         f"({shown})", i, value=v, field=" ".join(field)))
    flagged = {v["value"] for v in out}
    for v, other in _misplaced(text, [by_id[cid] for cid in good]):
        if v not in flagged:
            out.append(_viol("misbound_value", f"{v!r} is said of what the evidence says of {other!r}", i,
                             value=v, field="context"))
            flagged.add(v)
    return out


# ---------------------------------------------------------------------------------- units and zones
# a duration's or percentage's unit after its number (claim_words.UNITS; one-letter units only
# after a space: "502s" is a plural of codes)
_UNIT_WORDS_RX = claim_words.UNITS
_UNIT_RX = re.compile(r"(?<![A-Za-z0-9_.月])(\d+(?:\.\d+)?)(?:\s*(" + "|".join(
    f"(?P<{k}>{w})" for k, w in _UNIT_WORDS_RX.items()) + r")(?![A-Za-z])|\s+(?P<s1>s)\b|\s+(?P<h1>h)\b)", re.I)
_FIELD_UNIT = {"days": "d", "day": "d", "s": "s", "sec": "s", "seconds": "s", "ms": "ms", "minutes": "min",
               "min": "min", "hours": "h", "h": "h", "weeks": "w", "months": "mo", "years": "y", "pct": "pct",
               "percent": "pct"}


def _units(text: str) -> list[tuple[str, str]]:
    """(number, unit) of every duration ``text`` states ("12 days", "5 秒", "20个月")."""
    out = []
    for m in _UNIT_RX.finditer(numbers.normalise(text)):
        unit = next((k for k in _UNIT_WORDS_RX if m.group(k)), None) or ("s" if m.group("s1") else "h")
        out.append((norm(m.group(1)), unit))
    return out


def _wrong_units(text: str, items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """("12 weeks", "12 d") where the claim gives a number a unit of time the cited evidence never
    gives it: the evidence's units are those of its texts and of its facts' names
    (``policy_tenure_days``: days)."""
    held: dict[str, set[str]] = {}
    for it in items:
        for t in _item_texts(it):
            for v, u in _units(t):
                held.setdefault(v, set()).add(u)
        for k, val in (it.get("facts") or {}).items():
            u = _FIELD_UNIT.get(str(k).rsplit("_", 1)[-1].lower()) if "_" in str(k) else None
            if u is not None and isinstance(val, (int, float)) and not isinstance(val, bool):
                held.setdefault(norm(str(val)), set()).add(u)
    out = []
    for v, u in _units(text):
        if held.get(v) and u not in held[v]:
            out.append((f"{v} {_UNIT_NAME[u]}", " or ".join(f"{v} {_UNIT_NAME[x]}" for x in sorted(held[v]))))
    return out


_UNIT_NAME = {"ms": "milliseconds", "s": "seconds", "min": "minutes", "h": "hours", "d": "days", "w": "weeks",
              "mo": "months", "y": "years", "pct": "%"}


_ZONES = {"utc": 0, "gmt": 0, "z": 0, "wet": 0, "cet": 60, "mez": 60, "bst": 60, "cest": 120, "mesz": 120,
          "eet": 120, "eest": 180, "msk": 180, "ist": 330, "sgt": 480, "hkt": 480, "awst": 480, "jst": 540,
          "kst": 540, "aest": 600, "est": -300, "edt": -240, "cdt": -300, "mst": -420, "pst": -480, "pdt": -420}
_CLOCK_ZONE = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?\s*(?:Uhr\s*)?[(\uff08]?\s*(?:(?P<name>"
                         + "|".join(sorted((z.upper() for z in _ZONES), key=len, reverse=True))
                         + r")(?!\w)(?:\s*(?P<nsign>[+-])(?P<nh>\d{1,2})(?::?(?P<nm>\d{2}))?)?"
                         r"|(?P<sign>[+-])(?P<h>\d{2}):?(?P<m>\d{2}))")


def _zoned(text: str) -> list[tuple[str, int, str]]:
    """(HH:MM, UTC offset in minutes, as written) of every time of day ``text`` gives with its zone."""
    out = []
    for m in _CLOCK_ZONE.finditer(text):
        if m.group("name"):
            off = _ZONES[m.group("name").lower()]
            if m.group("nsign"):
                d = int(m.group("nh")) * 60 + int(m.group("nm") or 0)
                off += d if m.group("nsign") == "+" else -d
        else:
            d = int(m.group("h")) * 60 + int(m.group("m"))
            off = d if m.group("sign") == "+" else -d
        out.append((f"{int(m.group(1)):02d}:{m.group(2)}", off, re.sub(r"\s*[(\uff08]\s*", " ", m.group()).strip()))
    return out


def _wrong_zones(text: str, texts: list[str]) -> list[tuple[str, str]]:
    """("10:02 UTC", "10:02 at UTC+08:00") where the claim gives a time of day the cited evidence
    gives, in another zone, and no cited time is that instant."""
    held = [(c, off) for t in texts for c, off, _ in _zoned(t)]
    if not held:
        return []
    instants = {(int(c[:2]) * 60 + int(c[3:]) - off) % 1440 for c, off in held}
    out = []
    for c, off, said in _zoned(text):
        same = [o for hc, o in held if hc == c]
        if same and off not in same and (int(c[:2]) * 60 + int(c[3:]) - off) % 1440 not in instants:
            o = same[0]
            out.append((said, f"{c} at UTC{'+' if o >= 0 else '-'}{abs(o) // 60:02d}:{abs(o) % 60:02d}"))
    return out


def _converted_times(text: str, texts: list[str]) -> dict[str, set[str]]:
    """The times of day (HH:MM) the claim writes with a zone (``02:02 UTC``) that are, in another
    zone, an instant a cited time with its zone is (``10:02:00 (+08:00)``): the same value. Each
    maps to the cited times (as the evidence writes them) it is."""
    held: dict[int, set[str]] = {}
    for t in texts:
        for c, off, _ in _zoned(t):
            held.setdefault((int(c[:2]) * 60 + int(c[3:]) - off) % 1440, set()).add(c)
    out: dict[str, set[str]] = {}
    for c, off, _ in _zoned(text):
        same = held.get((int(c[:2]) * 60 + int(c[3:]) - off) % 1440)
        if same:
            out.setdefault(c, set()).update(same)
    return out


# ---------------------------------------------------------------------------------- context binding
CONTEXT_WINDOW = 6      # words before a value (in its clause) that say what it is
MIN_CONTEXT = 2         # words a claim must share with another value's context to be bound to it
_CTX_BREAK = re.compile(r"[,;()\[\]。；，、！？]|[.:]\s|\s(?:and|while|but|whereas)\s", re.I)
_CTX_STOP = frozenset(["the", "and", "was", "were", "is", "are", "has", "had", "have", "for", "with", "from", "that", "this", "which", "its", "their", "then", "than", "after", "before", "at", "on", "in", "of", "to", "by"])


_FIELD_RX = [(w, re.compile(rx, re.I)) for w, rx in claim_words.FIELD_WORDS.items()]


def _stem(w: str) -> str:
    return w[:5]


def _contexts(text: str, *, since_value: bool = True) -> list[tuple[str, set[str], set[str]]]:
    """(value, the stems of the words before it in its clause — since the value before it, unless
    not ``since_value``: "timeout lowered from 60 seconds to 5 seconds" says of 5 what it says of 60
    —, the ids before it in that stretch) for every value of ``text``. An id (``ERR-4097``,
    ``CFG-0811-07``) names what a value is of: it is kept with the words and does not start a
    new stretch."""
    prepped = _prep(_EV_ID.sub(" ", claim_checker.strip_zone_notes(text)))
    for word, rx in _FIELD_RX:      # other languages' words for what a value is, as English
        prepped = rx.sub(f" {word} ", prepped)
    out = []
    for clause in _CTX_BREAK.split(prepped):
        start = len(out)
        words: list[str] = []
        ids: list[tuple[str, int]] = []     # (id, where it ends)
        owned = 0       # words after a value still its own: its unit, "of" and the name after it
        for m in _TOKEN.finditer(clause):
            tok = m.group()
            if owned and _owned_by_value(tok, owned):
                owned = 2 if tok.lower() in _OF else 0
                continue
            owned = 0
            if any(ch.isdigit() for ch in tok):
                v = _clock(norm(tok))
                if _is_name(v):
                    ids.append((v, m.end()))
                    continue
                owned = 1
                # an id is what the value is of when little lies between ("CFG-0811-07 completed
                # at", "CFG-0811-07于"), not across "with" ("ERR-4097错误可能与09:54完成的发布")
                near = {i for i, end in ids[-2:] if len(_CJK.findall(clause, end, m.start())) <= 4
                        and not _CJK_AND.search(clause, end, m.start())}
                out.append((v, {_stem(w) for w in words[-CONTEXT_WINDOW:]}, near))
                if since_value:
                    words, ids = [], []
            else:
                if tok.lower() in _ID_BREAK:        # "X completed before the 14:02 errors": not X's
                    ids = []
                words += [w for w in re.split(r"[_\-]+", tok.lower())
                          if len(w) >= 3 and w.isalpha() and w not in _CTX_STOP]
        if since_value and len(out) > start and words:
            # the verb after the last value of a clause says what it is too ("Das Release wurde um
            # 10:02 abgeschlossen", "发布于10:02完成")
            v, ctx, near = out[-1]
            out[-1] = (v, ctx | {_stem(w) for w in words[:2]}, near)
    return out


_OF = frozenset(["of", "de", "del", "du", "des", "von", "di", "do", "da"])
_UNIT_AFTER = re.compile(r"(?:" + "|".join([*claim_words.UNITS.values(), *_CURRENCY_WORDS.values()]) + r")$", re.I)


def _owned_by_value(tok: str, owned: int) -> bool:
    """Whether a word right after a value says what that value is rather than what the next one
    is: its unit or currency ("98,000 CNY on a …"), "of" and the name after it ("version 2026.1 of
    the rule set takes the place of 2025.4")."""
    if owned == 2:
        return not any(ch.isdigit() for ch in tok)
    return bool(_UNIT_AFTER.match(tok)) or tok.lower() in _OF


_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")
_CJK_AND = re.compile(r"[与和及跟同并並と]")      # "with", "and": what follows is of something else
# words after which a value is no longer said of the id before them
_ID_BREAK = frozenset(["before", "after", "than", "since", "until", "when", "while", "once", "following"])


def _is_name(v: str) -> bool:
    """An id that names a thing (letters and digits: ``err-4097``, ``cfg-0811-07``), not a
    measured value (a number, time or date)."""
    return _kind(v) == "id" and any(ch.isalpha() for ch in v) and any(ch.isdigit() for ch in v)


def _misplaced(text: str, items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(value, other value) where the claim writes ``value`` in words that the cited evidence uses
    only for ``other`` — none of them for ``value`` itself: "The first error occurred at 09:54"
    citing a release completed at 09:54 and a first error at 10:02. Evidence words are those before
    each value in the items' texts, and each fact's name (``first_error_at``: first, error). So
    too a value said of an id the evidence gives another value of its kind, and not this one
    ("CFG-0811-07 completed at 13:55" when CFG-0811-05 completed at 13:55 and CFG-0811-07 at
    14:00): the ids of an item's text and facts go with each of its values."""
    where: dict[str, set[str]] = {}
    named: dict[str, set[str]] = {}         # value -> the ids the evidence says it of
    for it in items:
        own: set[str] = set()
        vals: set[str] = set()
        for v, ctx, ids in _contexts(str(it.get("text") or ""), since_value=False):
            where.setdefault(v, set()).update(ctx)
            named.setdefault(v, set()).update(ids)
            vals.add(v)
        for k, val in (it.get("facts") or {}).items():
            names = {_stem(w) for w in re.split(r"[_\s]+", str(k).lower()) if len(w) >= 3 and w not in _CTX_STOP}
            for s_ in _flatten(val):
                for tok in [s_, *values_in(s_)]:
                    v = _clock(norm(tok))
                    if _is_name(v):
                        own.add(v)
                    else:
                        where.setdefault(v, set()).update(names)
                        vals.add(v)
        for v in vals:
            named.setdefault(v, set()).update(own)
    known = set().union(*named.values()) if named else set()
    out = []
    for v, ctx, ids in _contexts(text):
        if v not in where or _kind(v) == "id":
            continue
        said_of = ids & known
        if said_of and not said_of & named[v]:
            other = next((u for u in sorted(named) if u != v and _kind(u) == _kind(v) and said_of & named[u]), None)
            if other is not None:
                out.append((v, other))
                continue
        if not ctx or ctx & where[v]:
            continue
        best = max(((len(ctx & c), u) for u, c in where.items() if u != v and _kind(u) == _kind(v)), default=(0, ""))
        if best[0] >= MIN_CONTEXT:
            out.append((v, best[1]))
    return out


_CLOCK_IN = re.compile(r"(?:^|t)([0-9]{1,2}):([0-9]{2})(?::[0-9]{2}(?:\.[0-9]+)?)?(?:z|[+-][0-9]{2}:?[0-9]{2})?$")


def _clock(v: str) -> str:
    """A time of day, alone or in a timestamp, as HH:MM (09:54 = 09:54:00+08:00 = 2026-07-23t09:54:00+08:00)."""
    m = _CLOCK_IN.search(v)
    return f"{int(m.group(1)):02d}:{m.group(2)}" if m and (":" in v) else v


def _kind(v: str) -> str:
    return "time" if re.fullmatch(r"[0-9]{1,2}:[0-9]{2}(?::[0-9]{2})?", v) else \
        "date" if re.match(r"[12][0-9]{3}-[0-9]{2}", v) else "number" if _NUM.match(v) else "id"


# ---------------------------------------------------------------------------------- binding
_CLAUSE = re.compile(r"[,;()\[\]。；，、！？]|\.\s")
BIND_WINDOW = 6     # tokens after a field's name within which its value is looked for
_ATTRS = ("valid_from", "valid_to", "observed_at", "source_version")
_UNIT_WORDS = frozenset({"days", "day", "hours", "minutes", "seconds", "s", "ms", "pct", "percent", "cny", "usd",
                         "eur", "count", "total"})
# words of a field's name that say how its value is measured, not what it is of
_GENERIC_WORDS = _UNIT_WORDS | {"change", "delta", "value", "at", "us"}
# single words too common to bind a value to on their own
_COMMON_FIELD_WORDS = frozenset({"version", "status", "rule", "time", "date", "first", "last", "completed", "started",
                                 "observed", "valid", "from", "until", "created", "updated", "amount"})


# the last word of every comparison phrase written in Latin letters ("at or above": above; "more than": than)
_CMP_LAST = frozenset(next(x for x in reversed(w.lower().split()) if len(x) >= 4)
                      for lang in claim_words.LANGUAGES for w, _ in claim_words.COMPARISONS[lang]
                      if re.fullmatch(r"[^\W\d_]+(?: [^\W\d_]+)*", w) and w.isascii()
                      and any(len(x) >= 4 for x in w.split())
                      and next(x for x in reversed(w.lower().split()) if len(x) >= 4) not in ("plus", "menos", "moins"))


# comparison phrases in scripts without spaces between words (the Latin ones are _CMP_LAST's)
_CMP_OTHER = re.compile("|".join(sorted({re.escape(w) for lang in claim_words.LANGUAGES
                                          for w, _ in claim_words.COMPARISONS[lang] if not w.isascii()
                                          and re.search(r"[\u3000-\u9fff\uac00-\ud7af]", w)}, key=len, reverse=True)))
# and those written in letters outside ASCII ("dépasse", "über", "превышает"), which _TOKEN splits:
# whole words
_CMP_ACCENTED = re.compile(r"(?<!\w)(?:" + "|".join(sorted({re.escape(w) for lang in claim_words.LANGUAGES
                                                           for w, _ in claim_words.COMPARISONS[lang]
                                                           if not w.isascii() and w[0].isalpha()
                                                           and not _CJK.search(w)}, key=len, reverse=True))
                           + r")(?!\w)", re.I)


def _field_values(value: Any) -> set[str]:
    out: set[str] = set()
    for s in _flatten(value):
        out.add(norm(s))
        out.update(norm(t) for t in values_in(s))
    return out


def _fields(good: list[str], by_id, derived) -> dict[tuple[str, ...], set[str]]:
    """Field name (as words) -> the values the cited evidence holds for it: the items' facts and
    attributes, a fact named by the item's type (a ``rule_version`` item's ``version``), and the
    facts the playbook derives from the cited items. Only names of two words or more (a lone
    "version" or "status" is too common a word to bind), and only fields with a digit in a value."""
    out: dict[tuple[str, ...], set[str]] = {}

    def add(name: str, value: Any) -> None:
        words = tuple(w for w in re.split(r"[_\s]+", str(name).lower()) if w)
        vals = _field_values(value)
        if any(any(ch.isdigit() for ch in v) for v in vals):
            # "policy_tenure_days" is also written "policy tenure" (the unit after the value), and
            # "cost_change_pct" "costs" (one distinctive word once the generic ones are gone)
            core = tuple(w for w in words if w not in _GENERIC_WORDS)
            for ws in {words, core}:
                if len(ws) >= 2 or (ws == core and len(core) == 1 < len(words) and len(core[0]) >= 4
                                    and core[0] not in _COMMON_FIELD_WORDS):
                    out.setdefault(ws, set()).update(vals)

    gs = set(good)
    for cid in good:
        item = by_id[cid]
        for k, v in (item.get("facts") or {}).items():
            add(k, v)
            ot = str(item.get("object_type") or "")
            if ot.endswith(str(k)) and ot != k:
                add(ot, v)
        for k in _ATTRS:
            if item.get(k):
                add(k, item[k])
    for ev_set, facts in derived:
        if ev_set and ev_set <= gs:
            for k, v in facts.items():
                add(k, v)
    return out


# "than" where _CMP_LAST leaves it out (too short a word to end a binding on its own)
_THAN = frozenset({"als", "que", "che", "чем", "hơn"})


def _singular(w: str) -> str:
    """"costs" and "cost" name one field."""
    return w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w


def _bind_tokens(text: str) -> list[tuple[str, bool, Any]]:
    """(word or value, is_value, the break before it: False, True, or "," for a comma alone) of
    ``text``, its other languages' field and comparison words read as English."""
    prepped = _prep(_EV_ID.sub(" ", text))
    for word, rx in _FIELD_RX:      # other languages' words for a field's, as English
        prepped = rx.sub(f" {word} ", prepped)
    prepped = _CMP_OTHER.sub(" than ", prepped)      # "未达到", "より前": a comparison between two values
    prepped = _CMP_ACCENTED.sub(" than ", prepped)
    toks = []          # (word or value, is_value, starts a new clause)
    last = 0
    compared = False   # a comparison word so far in the clause
    for m in _TOKEN.finditer(prepped):
        gap = prepped[last:m.start()]
        # a break that is a comma alone ("Before the change, the timeout was 60 seconds"): ","
        marks = _CLAUSE.findall(gap)       # (letters _TOKEN skips may stand beside it: "mudança, o")
        brk = ("," if all(x in ",，" for x in marks) else True) if marks else False
        last = m.end()
        tok = m.group()
        compared = (compared and not brk) or tok.lower() in _CMP_LAST or tok.lower() in _THAN
        # "costs grew faster than revenue: +25 % against +15 %": after a comparison of two fields,
        # the values behind a colon are its operands in order, not the last field's value
        if compared and re.search(r":\s", gap):
            brk = True
        if any(ch.isdigit() for ch in tok):
            toks.append((tok, True, brk))
        else:
            for j, w in enumerate(x.replace("-", "") for x in tok.lower().split("_") if x):
                toks.append((w, False, brk if j == 0 else False))      # keep-alive: keepalive, as in a fact's name
    return toks


def _bound_values(text: str, fields: dict[tuple[str, ...], set[str]]):
    """(value, field, the field's values) for every number written right after a field's name:
    within a few words, in the same clause, before another field's name."""
    if not fields:
        return
    toks = _bind_tokens(text)
    starts = {}
    bound: set[int] = set()
    for f in fields:
        n = len(f)
        for k in range(len(toks) - n + 1):
            if all(not toks[k + j][1] and _singular(toks[k + j][0]) == _singular(f[j]) for j in range(n)) and \
                    all(not toks[k + j][2] for j in range(1, n)):
                if len(f) > len(starts.get(k, ())):
                    starts[k] = f
    for k, f in sorted(starts.items()):
        j = k + len(f)
        for t in range(j, min(len(toks), j + BIND_WINDOW)):
            tok, is_value, brk = toks[t]
            # another field, a comparison ("the amount is at or above the 100,000 threshold": the
            # other operand) or an id (the field's value: "error code E-4097 first seen at …") ends it
            if brk or (t in starts and t != k) or (not is_value and tok in _CMP_LAST):
                break
            if is_value:
                if re.match(r"-?\d", tok):
                    bound.add(t)
                    yield tok, f, fields[f]
                    break
                if any(not re.match(r"-?\d", v) for v in fields[f]):
                    break       # an id where the field holds ids: that is its value

    # In other word orders ("el importe reclamado es de 100.000", "La antigüedad de la póliza es de
    # 30 días", once their words read as English): a value is bound to the longest field all of
    # whose words come before it in its clause (since the last value or comparison word), when no
    # other field as long is there too.
    by_stems = [(f, {w[:4] for w in f}) for f in fields if len(f) >= 2]
    named = {w for f in fields for w in f}       # "timeout after": after is a field's word here
    words: list[str] = []
    valued = False      # a value since the last break
    opener = None       # the first word of the clause
    for t, (tok, is_value, brk) in enumerate(toks):
        if brk or t == 0:
            # a clause opened by a word of time, with no value, before a comma says when the next
            # clause's value holds ("Before the change, the keep-alive timeout was 5 seconds"); any
            # other break ends what a value is of
            if brk != "," or valued or opener not in _ID_BREAK:
                words = []
            valued, opener = False, tok
        if not is_value:
            if tok in _CMP_LAST and tok not in named:
                words = []
            elif tok in named or (tok not in _CTX_STOP and len(tok) > 3):
                words.append(tok)       # "the", "was", "de", "est" say nothing of a field
            continue
        valued = True
        if t not in bound and re.match(r"-?\d", tok):
            seen = {w[:4] for w in words[-BIND_WINDOW:]}
            hits = [f for f, st in by_stems if st <= seen]
            top = max((len(f) for f in hits), default=0)
            best = [f for f in hits if len(f) == top]
            if len(best) == 1:
                yield tok, best[0], fields[best[0]]
        words = []


def _matches(v: str, want: set[str]) -> bool:
    n = norm(v)
    if n in want or dotted_thousands(v) in want:
        return True
    if n.lstrip("+") in want or ("-" + n.lstrip("+")) in want:     # "profit fell 25 %" of -25; "+15 %" of 15
        return True
    # a date or time that is part of the field's value: "valid from 2026-01-01" of 2026-01-01T00:00:00+08:00
    return len(n) >= 4 and bool(_PARTS.search(n)) and not n.startswith("-") and any(n in h for h in want
                                                                                   if len(h) > len(n))


def _text_checks(text: str, i: int | None, scan, rejected_sh) -> list[dict[str, Any]]:
    out = []
    if not text:
        return out
    if scan is not None:
        hit = scan(text)
        if hit is not None:
            out.append(_viol("instruction_like_text", f"the detector matched {hit.pattern} ({hit.label})", i,
                             pattern=hit.pattern))
    seen: set[str] = set()
    for oid, gate, n, sh in rejected_sh:
        k = len(shingles(text, n) & sh)
        if k and oid not in seen:
            seen.add(oid)
            out.append(_viol("rejected_text", f"repeats words of {oid}, omitted by the {gate} gate", i,
                             object_id=oid, gate=gate, shingles=k))
    return out


def _result(violations, warnings, claims, ans) -> dict[str, Any]:
    n_claims = len(claims)
    pairs = sum(len(c["cited"]) for c in claims)
    good_pairs = sum(len(c["in_pack"]) for c in claims if c["ok"])
    return {
        "status": status_for(violations, warnings),
        "violations": violations,
        "warnings": warnings,
        "claims": claims,
        "counts": {"claims": n_claims, "claims_ok": sum(1 for c in claims if c["ok"]),
                   "citations": pairs, "citations_supported": good_pairs,
                   "violations": len(violations), "warnings": len(warnings)},
    }
