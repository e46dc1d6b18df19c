"""Generate corpus.jsonl: labelled claims over the bundled domains (issue 44 item 7).

Run from the repository root: ``python tests/data/claims/generate.py``. Deterministic. The cited
items are copied from the bundled packs (facts and a sentence of text) so the corpus is checked
without a store. Split rule, fixed before any tuning: sha256 of the claim text, first byte even →
``tuning``, odd → ``heldout``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from pathlib import Path

HERE = Path(__file__).parent

ITEMS = {
    "SIG-C102-AMOUNT": {"evidence_id": "ev-c102amt", "trust_level": "operational",
                        "facts": {"claim_amount": 128000, "currency": "CNY"}, "text": "Claim amount 128000 CNY."},
    "SIG-C102-TENURE": {"evidence_id": "ev-c102ten", "trust_level": "operational",
                        "facts": {"policy_tenure_days": 12}, "text": "Policy tenure 12 days."},
    "SIG-C105-AMOUNT": {"evidence_id": "ev-c105amt", "trust_level": "operational",
                        "facts": {"claim_amount": 98000, "currency": "CNY"}, "text": "Claim amount 98000 CNY."},
    "SIG-C105-TENURE": {"evidence_id": "ev-c105ten", "trust_level": "operational",
                        "facts": {"policy_tenure_days": 20}, "text": "Policy tenure 20 days."},
    "RULE-MANUAL-REVIEW": {"evidence_id": "ev-review", "trust_level": "authoritative",
                           "facts": {"review_amount_threshold": 100000, "review_tenure_days": 30},
                           "text": "Claims at or above 100000 CNY on a policy within 30 days go to a human reviewer."},
    "RULE-MCS-2026.1": {"evidence_id": "ev-mcs", "trust_level": "authoritative",
                        "facts": {"rule_set": "motor-claim-standard", "version": "2026.1"},
                        "text": "Rule set motor-claim-standard version 2026.1."},
    "OWN-PAYAPI-2025": {"evidence_id": "ev-ownpay", "trust_level": "authoritative",
                        "facts": {"owner_team": "payments-core", "service": "payment-api"},
                        "text": "Service payment-api is owned by team payments-core."},
    "OWN-SHOP-CHECKOUT": {"evidence_id": "ev-ownshop", "trust_level": "authoritative",
                          "facts": {"owner_team": "web-checkout", "service": "checkout-api"},
                          "text": "Service checkout-api is owned by team web-checkout."},
    "RB-PAY-RECOVERY-v4": {"evidence_id": "ev-rb", "trust_level": "operational",
                           "facts": {"runbook": "payment-recovery", "version": "v4"},
                           "text": "Payment service restoration procedure."},
    "DEP-release-2026.07.23.1": {"evidence_id": "ev-rel", "trust_level": "authoritative",
                                 "facts": {"change_id": "release-2026.07.23.1",
                                           "completed_at": "2026-07-23T09:54:00+08:00"},
                                 "text": "Release release-2026.07.23.1 completed at 2026-07-23 09:54:00+08:00."},
    "INC-2026-0723-TL-01": {"evidence_id": "ev-tl01", "trust_level": "operational",
                            "facts": {"first_error_at": "2026-07-23T10:02:00+08:00", "error_code": "PAY-4097"},
                            "text": "First PAY-4097 error at 10:02:00 (+08:00)."},
    "INC-2026-0723-F-01": {"evidence_id": "ev-f01", "trust_level": "operational",
                           "facts": {"pool_active": 50, "pool_max": 50}, "text": "Pool exhausted: 50 of 50."},
    "CHG-CFG-0811-07": {"evidence_id": "ev-cfg07", "trust_level": "authoritative",
                        "facts": {"change_id": "CFG-0811-07", "completed_at": "2026-08-11T14:00:00+08:00"},
                        "text": "Config push CFG-0811-07 completed at 14:00."},
    "INC-2026-0811": {"evidence_id": "ev-inc0811", "trust_level": "operational",
                      "facts": {"first_error_at": "2026-08-11T14:02:00+08:00"}, "text": "GW-502 errors from 14:02."},
    "RETAIL-LEDGER-Q2": {"evidence_id": "ev-ledger", "trust_level": "authoritative",
                         "facts": {"revenue_change_pct": 15, "cost_change_pct": 25, "profit_change_pct": -25},
                         "text": "Revenue +15 %, costs +25 %, profit -25 %. No cost breakdown exists."},
    "RETAIL-NOTE-1": {"evidence_id": "ev-note", "trust_level": "internal",
                      "facts": {"verified": False},
                      "text": "Advertising spend may explain the profit drop."},
    "INC-NOTE-SUSPECT": {"evidence_id": "ev-susp", "trust_level": "operational", "facts": {},
                         "text": "Suspected: the risk rule RR-2026-0723-01 blocks card-not-present payments."},
}
TWINS = [{"claim_id": "release_timing", "status": "fact", "evidence": ["ev-rel", "ev-tl01"]},
         {"claim_id": "release_caused_errors", "status": "hypothesis", "evidence": ["ev-rel", "ev-tl01"]}]

# (case, subject EN/ZH/ES, value, unit, bound name EN/ZH/ES, bound, items)
PAIRS = [
    ("C-102", ("The claim amount", "理赔金额", "El importe reclamado"), 128000, "",
     ("the review threshold of", "审核阈值", "el umbral de revisión de"), 100000, ["SIG-C102-AMOUNT", "RULE-MANUAL-REVIEW"]),
    ("C-102", ("The policy tenure of", "保单期限", "La antigüedad de la póliza de"), 12, " days",
     ("the review window of", "审核窗口", "la ventana de revisión de"), 30, ["SIG-C102-TENURE", "RULE-MANUAL-REVIEW"]),
    ("C-105", ("The claim amount", "理赔金额", "El importe reclamado"), 98000, "",
     ("the review threshold of", "审核阈值", "el umbral de revisión de"), 100000, ["SIG-C105-AMOUNT", "RULE-MANUAL-REVIEW"]),
    ("C-105", ("The policy tenure of", "保单期限", "La antigüedad de la póliza de"), 20, " days",
     ("the review window of", "审核窗口", "la ventana de revisión de"), 30, ["SIG-C105-TENURE", "RULE-MANUAL-REVIEW"]),
    ("INC-2026-0723", ("Active connections", "活跃连接数", "Las conexiones activas"), 50, "",
     ("the pool maximum of", "连接池上限", "el máximo del pool de"), 50, ["INC-2026-0723-F-01"]),
    ("RETAIL", ("Cost growth of", "成本增长", "El crecimiento de costes de"), 25, "%",
     ("revenue growth of", "收入增长", "el crecimiento de ingresos de"), 15, ["RETAIL-LEDGER-Q2"]),
]
EN_OPS = [("is below", "<"), ("is above", ">"), ("is at least", ">="), ("is no more than", "<="),
          ("exceeds", ">"), ("is within", "<="), ("is outside", ">"), ("is more than", ">"),
          ("is less than", "<"), ("≥", ">="), ("<", "<"), ("is at or above", ">=")]
EN_NEG = {"is below": "is not below", "is above": "is not above", "exceeds": "does not exceed",
          "is within": "is not within", "is outside": "is not outside", "is more than": "is not more than",
          "is less than": "is not less than", "is at least": "is not at least"}
ZH_OPS = [("低于", "<"), ("高于", ">"), ("超过", ">"), ("不超过", "<="), ("大于", ">"), ("小于", "<")]
ZH_NEG = {"低于": "并不低于", "高于": "没有高于", "超过": "未超过", "大于": "不大于", "小于": "不小于"}
ES_OPS = [("es menor que", "<"), ("es mayor que", ">"), ("supera", ">"), ("está dentro de", "<="),
          ("está por debajo de", "<"), ("está por encima de", ">"), ("es al menos", ">=")]
ES_NEG = {"es menor que": "no es menor que", "es mayor que": "no es mayor que", "supera": "no supera",
          "está dentro de": "no está dentro de", "está por debajo de": "no está por debajo de"}
FLIP = {">": "<=", "<": ">=", ">=": "<", "<=": ">"}
EN_FRAMES = ["{s} {v}{u} {op} {b} {w}{u}.", "According to the record, {s} {v}{u} {op} {b} {w}{u}.",
             "{s} {v}{u} {op} {b} {w}{u}, as the cited evidence shows."]
ZH_FRAMES = ["{s}{v}{op}{b}{w}。", "根据记录，{s}{v}{op}{b}{w}。"]
ES_FRAMES = ["{s} {v}{u} {op} {b} {w}{u}.", "Según el registro, {s} {v}{u} {op} {b} {w}{u}."]


def holds(op, a, b):
    return {">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b}[op]


def _swapped(pairs):
    """Each pair also read from the bound's side: "the review threshold of 100000 is below …"."""
    for case, subj, v, u, bnd, w, items in pairs:
        yield case, subj, v, u, bnd, w, items
        yield (case, tuple(b[0].upper() + b[1:] for b in bnd), w, u, tuple(x[0].lower() + x[1:] for x in subj), v,
               items)


def comparisons():
    for (case, subj, v, u, bnd, w, items), (fi, lang) in itertools.product(_swapped(PAIRS),
                                                                          enumerate(("en", "zh", "es"))):
        ops, neg, frames = {"en": (EN_OPS, EN_NEG, EN_FRAMES), "zh": (ZH_OPS, ZH_NEG, ZH_FRAMES),
                            "es": (ES_OPS, ES_NEG, ES_FRAMES)}[lang]
        unit = {"zh": ""}.get(lang, u)
        for k, (word, op) in enumerate(ops):
            for negated in (False, True):
                if negated and word not in neg:
                    continue
                text = frames[k % len(frames)].format(s=subj[fi], v=v, u=unit, op=neg[word] if negated else word,
                                                      b=bnd[fi], w=w)
                ok = holds(FLIP[op] if negated else op, v, w)
                yield dict(case=case, text=text, status="inference", cites=items, lang=lang,
                           label="right" if ok else "wrong", kind=None if ok else "wrong_comparison")


TIMES = [
    ("INC-2026-0723", ("Release release-2026.07.23.1 completed at", "发布release-2026.07.23.1完成于",
                       "El release release-2026.07.23.1 terminó el"), "2026-07-23T09:54:00+08:00",
     ("the first PAY-4097 error at", "首个PAY-4097错误", "el primer error PAY-4097 del"), "2026-07-23T10:02:00+08:00",
     ["DEP-release-2026.07.23.1", "INC-2026-0723-TL-01"]),
    ("INC-2026-0811", ("Config push CFG-0811-07 completed at", "配置推送CFG-0811-07完成于",
                       "El cambio CFG-0811-07 terminó el"), "2026-08-11T14:00:00+08:00",
     ("the first GW-502 error at", "首个GW-502错误", "el primer error GW-502 del"), "2026-08-11T14:02:00+08:00",
     ["CHG-CFG-0811-07", "INC-2026-0811"]),
]
T_OPS = {"en": [("before", "<"), ("after", ">"), ("earlier than", "<"), ("later than", ">"), ("not before", ">="),
                ("not after", "<=")],
         "zh": [("早于", "<"), ("晚于", ">"), ("不早于", ">="), ("不晚于", "<=")],
         "es": [("antes de", "<"), ("después de", ">"), ("no antes de", ">="), ("no después de", "<=")]}
T_FRAMES = {"en": ["{s} {v}, {op} {b} {w}.", "{s} {v} {op} {b} {w}."], "zh": ["{s}{v}，{op}{b}{w}。", "{s}{v}{op}{b}{w}。"],
            "es": ["{s} {v} {op} {b} {w}."]}


def times():
    for (case, subj, v, bnd, w, items), (fi, lang) in itertools.product(TIMES, enumerate(("en", "zh", "es"))):
        for word, op in T_OPS[lang]:
            for frame in T_FRAMES[lang]:
                for a, b in ((v, w), (w, v)):
                    text = frame.format(s=subj[fi], v=a, op=word, b=bnd[fi], w=b)
                    ok = holds(op, a, b)
                    # read the other way round each time is bound to the other event: wrong even when
                    # the order it states between the two times holds
                    kind = None if ok and a == v else "wrong_comparison" if not ok else "misbound_value"
                    yield dict(case=case, text=text, status="fact", cites=items, lang=lang,
                               label="right" if kind is None else "wrong", kind=kind)


RESTATED = [
    ("C-102", ["SIG-C102-AMOUNT"], ["The claim amount is 128000 CNY.", "Claim C-102 is for 128,000 CNY.",
                                    "理赔金额为128000元。", "理赔金额是十二万八千元。", "El importe reclamado es de 128000 CNY."]),
    ("C-102", ["SIG-C102-TENURE"], ["The policy had been in force for 12 days on the loss date.",
                                    "Policy tenure was twelve days.", "保单生效12天。", "La póliza tenía 12 días de vigencia."]),
    ("C-105", ["SIG-C105-AMOUNT"], ["The risk engine records 98000 CNY.", "风险引擎记录的金额为98000元。",
                                    "El motor de riesgo registra 98000 CNY."]),
    ("INC-2026-0723", ["OWN-PAYAPI-2025"], ["At the time of the incident payment-api was owned by team payments-core.",
                                            "payment-api 由团队payments-core负责。",
                                            "payment-api pertenece al equipo payments-core."]),
    ("INC-2026-0723", ["DEP-release-2026.07.23.1", "INC-2026-0723-TL-01"], [
        "Release release-2026.07.23.1 completed at 2026-07-23T09:54:00+08:00; first PAY-4097 error at "
        "2026-07-23T10:02:00+08:00; gap 8 minutes.",
        "The release finished 8 minutes before the first PAY-4097 error.",
        "发布在首个错误前8分钟完成。", "El release terminó 8 minutos antes del primer error."]),
    ("RETAIL", ["RETAIL-LEDGER-Q2"], ["Revenue rose 15 % while costs rose 25 % and profit fell 25 %.",
                                       "No cost breakdown by category exists in the ledger.",
                                       "收入增长15%，成本增长25%，利润下降25%。", "Los ingresos subieron un 15 % y los costes un 25 %."]),
]


def restated():
    for case, cites, texts in RESTATED:
        for t in texts:
            lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in t) else (
                "es" if any(w in t for w in ("El ", "La ", "Los ", "pertenece")) else "en")
            yield dict(case=case, text=t, status="fact", cites=cites, lang=lang, label="right", kind=None)


CAUSES = [
    ("INC-2026-0723", ["DEP-release-2026.07.23.1", "INC-2026-0723-TL-01"], [
        ("en", "The release release-2026.07.23.1 caused the connection-pool exhaustion.",
         "The release release-2026.07.23.1 may have caused the connection-pool exhaustion."),
        ("en", "The pool exhaustion was due to release release-2026.07.23.1.",
         "The pool exhaustion was possibly due to release release-2026.07.23.1."),
        ("en", "Release release-2026.07.23.1 is the root cause of the PAY-4097 errors.",
         "Release release-2026.07.23.1 is a suspected root cause of the PAY-4097 errors."),
        ("en", "The errors started because release release-2026.07.23.1 was deployed.",
         "The errors may have started because release release-2026.07.23.1 was deployed."),
        ("en", "Release release-2026.07.23.1 led to the PAY-4097 errors.",
         "Release release-2026.07.23.1 might have led to the PAY-4097 errors."),
        ("zh", "发布release-2026.07.23.1导致了连接池耗尽。", "发布release-2026.07.23.1可能导致了连接池耗尽。"),
        ("zh", "因为发布了release-2026.07.23.1，所以出现了PAY-4097错误。", "可能因为发布了release-2026.07.23.1，才出现PAY-4097错误。"),
        ("es", "El release release-2026.07.23.1 causó el agotamiento del pool.",
         "El release release-2026.07.23.1 posiblemente causó el agotamiento del pool."),
        ("es", "Los errores PAY-4097 se produjeron debido a release-2026.07.23.1.",
         "Los errores PAY-4097 quizás se produjeron debido a release-2026.07.23.1."),
    ]),
    ("INC-2026-0811", ["CHG-CFG-0811-07", "INC-2026-0811"], [
        ("en", "Config push CFG-0811-07 caused the GW-502 errors.", "Config push CFG-0811-07 may have caused the GW-502 errors."),
        ("en", "The GW-502 errors resulted in part from CFG-0811-07.", "The GW-502 errors possibly resulted from CFG-0811-07."),
        ("zh", "配置推送CFG-0811-07导致了GW-502错误。", "配置推送CFG-0811-07可能导致了GW-502错误。"),
        ("es", "El cambio CFG-0811-07 causó los errores GW-502.", "El cambio CFG-0811-07 posiblemente causó los errores GW-502."),
    ]),
    ("RETAIL", ["RETAIL-LEDGER-Q2"], [
        ("en", "Advertising costs caused the profit loss.", "Advertising costs may have caused the profit loss."),
        ("en", "Profit fell 25 % because costs rose 25 %.", "Profit fell 25 % possibly because costs rose 25 %."),
        ("en", "The cost increase of 25 % led to the profit drop.", "The cost increase of 25 % likely led to the profit drop."),
        ("zh", "广告费用导致了利润下降。", "广告费用可能导致了利润下降。"),
        ("es", "Los costes de publicidad causaron la caída del beneficio.",
         "Los costes de publicidad posiblemente causaron la caída del beneficio."),
    ]),
]


def causal():
    for case, cites, rows in CAUSES:
        for lang, hard, soft in rows:
            for st in ("fact", "inference"):
                yield dict(case=case, text=hard, status=st, cites=cites, lang=lang, label="wrong", kind="status_upgraded")
            yield dict(case=case, text=hard, status="hypothesis", cites=cites, lang=lang, label="right", kind=None)
            yield dict(case=case, text=soft, status="hypothesis", cites=cites, lang=lang, label="right", kind=None)
    for lang, t in (("en", "Advertising spend explains the profit drop."), ("en", "Advertising drove the profit drop."),
                    ("zh", "广告支出导致利润下降。"), ("es", "El gasto en publicidad causó la caída.")):
        yield dict(case="RETAIL", text=t, status="fact", cites=["RETAIL-NOTE-1"], lang=lang, label="wrong",
                   kind="status_upgraded")
        yield dict(case="RETAIL", text=t, status="hypothesis", cites=["RETAIL-NOTE-1"], lang=lang, label="right",
                   kind=None)


ENTITIES = [
    ("INC-2026-0723", "OWN-PAYAPI-2025", "payment-api", "payments-core", ["payments-platform", "payments-ops", "web-checkout"]),
    ("INC-SHOP-0901", "OWN-SHOP-CHECKOUT", "checkout-api", "web-checkout", ["web-frontend", "payments-core", "shop-ops"]),
]
OWN_FRAMES = [("en", "{svc} was owned by team {t}."), ("en", "At the time of the incident {svc} was owned by {t}."),
              ("en", "The owner team of {svc} is {t}."), ("en", "{svc} is owned by the team {t}, per the ownership record."),
              ("zh", "{svc}由团队{t}负责。"), ("es", "{svc} es propiedad del equipo {t}."),
              ("es", "El servicio {svc} pertenece al equipo {t}.")]
RB_FRAMES = [("en", "Runbook {r} applies to the restoration."), ("en", "The on-call follows runbook {r}."),
             ("es", "Se aplica el runbook {r}."), ("zh", "适用的是runbook {r}。"),
             ("en", "The case is governed by rule set {rs}."), ("es", "El caso está regido por el conjunto de reglas {rs}.")]


def entities():
    for case, item, svc, team, wrong in ENTITIES:
        for lang, f in OWN_FRAMES:
            yield dict(case=case, text=f.format(svc=svc, t=team), status="fact", cites=[item], lang=lang,
                       label="right", kind=None)
            for w in wrong:
                yield dict(case=case, text=f.format(svc=svc, t=w), status="fact", cites=[item], lang=lang,
                           label="wrong", kind="misbound_entity")
    for lang, f in RB_FRAMES:
        rs = "rs" in f
        cites = ["RULE-MCS-2026.1"] if rs else ["RB-PAY-RECOVERY-v4"]
        good, bads = ("motor-claim-standard", ["motor-claim-express", "home-claim-standard"]) if rs else \
            ("payment-recovery", ["payment-restore", "payments-rollback"])
        yield dict(case="C-102" if rs else "INC-2026-0723", text=f.format(r=good, rs=good), status="fact",
                   cites=cites, lang=lang, label="right", kind=None)
        for b in bads:
            yield dict(case="C-102" if rs else "INC-2026-0723", text=f.format(r=b, rs=b), status="fact", cites=cites,
                       lang=lang, label="wrong", kind="misbound_entity")


HEDGES = [
    ("en", "The risk rule RR-2026-0723-01 blocks card-not-present payments.",
     "The risk rule RR-2026-0723-01 is suspected to block card-not-present payments."),
    ("en", "Risk rule RR-2026-0723-01 blocks the card-not-present payments.",
     "Risk rule RR-2026-0723-01 possibly blocks the card-not-present payments."),
    ("en", "It is established that risk rule RR-2026-0723-01 blocks card-not-present payments.",
     "Risk rule RR-2026-0723-01 may block card-not-present payments."),
]


def hedges():
    for lang, hard, soft in HEDGES:
        yield dict(case="INC-2026-0723", text=hard, status="fact", cites=["INC-NOTE-SUSPECT"], lang=lang,
                   label="wrong", kind="hedge_dropped")
        yield dict(case="INC-2026-0723", text=soft, status="fact", cites=["INC-NOTE-SUSPECT"], lang=lang,
                   label="right", kind=None)
        yield dict(case="INC-2026-0723", text=hard, status="hypothesis", cites=["INC-NOTE-SUSPECT"], lang=lang,
                   label="right", kind=None)


def main() -> None:
    rows = [*comparisons(), *times(), *restated(), *causal(), *entities(), *hedges()]
    seen, out = set(), []
    for r in rows:
        key = (r["text"], r["status"], tuple(r["cites"]))
        if key in seen:
            continue
        seen.add(key)
        r["split"] = "tuning" if hashlib.sha256(r["text"].encode()).digest()[0] % 2 == 0 else "heldout"
        out.append(r)
    with open(HERE / "corpus.jsonl", "w", encoding="utf-8") as f:
        for r in out:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    with open(HERE / "items.json", "w", encoding="utf-8") as f:
        json.dump({"items": ITEMS, "twins": TWINS}, f, ensure_ascii=False, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
