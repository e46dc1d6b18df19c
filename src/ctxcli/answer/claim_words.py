"""The claim checker's words, per language: the ten the injection detector covers (en, zh, es,
de, fr, it, pt, ru, ja, ko). ``claims.py`` builds its patterns from these tables and nothing
else, so a language is added here alone.

- ``COMPARISONS``: comparison words and the operator they state between the value before them
  and the value after (``within`` is ``<=``, ``outside`` is ``>``); matched longest first.
- ``POSTFIX``: comparison words written after both values ("12天在30天以内", "12日は30日未満",
  "12일은 30일 미만"): the first value is compared with the second.
- ``NEGATION``: words that flip a comparison when they stand between the first value and the
  comparison word; ``NEGATION_AFTER``: endings that flip a postfix comparison they follow
  ("…以内ではない", "…미만이 아니다").
- ``CAUSAL`` / ``NOT_CAUSAL``: causal language, and its negation ("did not cause").
- ``HEDGES``: words that leave a statement open ("may", "可能", "vielleicht").
- ``CLAUSE_BREAKS``: words that end a clause ("so", "and"), besides punctuation.
Each entry is a regular-expression fragment; ``WORD`` fragments are matched as whole words.
"""

from __future__ import annotations

LANGUAGES = ("en", "zh", "es", "de", "fr", "it", "pt", "ru", "ja", "ko", "vi")

COMPARISONS: dict[str, list[tuple[str, str]]] = {
    "en": [("at or above", ">="), ("at or below", "<="), ("at least", ">="), ("at most", "<="),
           ("no more than", "<="), ("no less than", ">="), ("not more than", "<="), ("not less than", ">="),
           ("more than", ">"), ("less than", "<"), ("greater than", ">"), ("fewer than", "<"),
           ("higher than", ">"), ("lower than", "<"), ("above", ">"), ("below", "<"), ("under", "<"),
           ("over", ">"), ("exceeds", ">"), ("exceeded", ">"), ("exceed", ">"), ("within", "<="),
           ("outside", ">"), ("before", "<"), ("after", ">"), ("earlier than", "<"), ("later than", ">"),
           ("predates", "<"), ("predated", "<"), ("precedes", "<"), ("preceded", "<"), ("prior to", "<"),
           ("predate", "<"), ("precede", "<"), ("postdate", ">"),
           ("postdates", ">"), ("equal to", "=="), ("longer than", ">"), ("shorter than", "<"),
           ("falls short of", "<"), ("fall short of", "<"), ("fell short of", "<"), ("outpaced", ">"),
           ("outpaces", ">"), ("outgrew", ">"), ("faster than", ">"), ("slower than", "<"), ("clears", ">="), ("cleared", ">="), ("more slowly than", "<"),
           ("more quickly than", ">"), ("lagged behind", "<"), ("lags behind", "<"), ("ahead of", "<"),
           ("as much as", ">="), ("beyond", ">"), ("≥", ">="), ("≤", "<="), (">=", ">="), ("<=", "<="), ("<", "<"), (">", ">")],
    "zh": [("不低于", ">="), ("不高于", "<="), ("不超过", "<="), ("不少于", ">="), ("不到", "<"), ("低于", "<"),
           ("高于", ">"), ("超过", ">"), ("大于", ">"), ("小于", "<"), ("少于", "<"), ("多于", ">"),
           ("以内", "<="), ("之内", "<="), ("以上", ">="), ("以下", "<="), ("之前", "<"), ("之后", ">"),
           ("早于", "<"), ("晚于", ">"), ("达到", ">="), ("快于", ">"), ("慢于", "<"), ("超出", ">"), ("以前", "<"), ("以后", ">")],
    "es": [("menor que", "<"), ("mayor que", ">"), ("inferior a", "<"), ("superior a", ">"), ("supera", ">"),
           ("superan", ">"), ("por debajo de", "<"), ("por encima de", ">"), ("dentro de", "<="),
           ("fuera de", ">"), ("al menos", ">="), ("como máximo", "<="), ("no más de", "<="), ("más de", ">"),
           ("menos de", "<"), ("antes de", "<"), ("después de", ">"), ("igual o superior a", ">="),
           ("igual o mayor que", ">="), ("por debajo del", "<"), ("por encima del", ">"), ("más que", ">"),
           ("menos que", "<"), ("antes del", "<"), ("después del", ">"), ("más rápido que", ">"),
           ("más lento que", "<"), ("posterior a", ">"), ("posterior al", ">"), ("anterior a", "<"), ("anterior al", "<"),
           ("antes que", "<"), ("después que", ">"), ("más tarde que", ">"), ("más temprano que", "<")],
    "de": [("mindestens", ">="), ("höchstens", "<="), ("nicht mehr als", "<="), ("nicht weniger als", ">="),
           ("mehr als", ">"), ("weniger als", "<"), ("größer als", ">"), ("kleiner als", "<"),
           ("höher als", ">"), ("niedriger als", "<"), ("über", ">"), ("unter", "<"), ("oberhalb", ">"),
           ("unterhalb", "<"), ("überschreitet", ">"), ("übersteigt", ">"), ("innerhalb", "<="),
           ("außerhalb", ">"), ("vor", "<"), ("nach", ">"), ("früher als", "<"), ("später als", ">"),
           ("gleich", "=="), ("länger als", ">"), ("kürzer als", "<"), ("weniger stark als", "<"),
           ("stärker als", ">"), ("schneller als", ">"), ("langsamer als", "<")],
    "fr": [("au moins", ">="), ("au plus", "<="), ("pas plus de", "<="), ("pas moins de", ">="),
           ("plus de", ">"), ("moins de", "<"), ("plus que", ">"), ("moins que", "<"), ("supérieur à", ">"),
           ("supérieure à", ">"), ("inférieur à", "<"), ("inférieure à", "<"), ("supérieur au", ">"),
           ("supérieure au", ">"), ("inférieur au", "<"), ("inférieure au", "<"), ("au-dessus de", ">"),
           ("au-dessus du", ">"), ("au-dessous de", "<"), ("au-dessous du", "<"), ("en dessous de", "<"),
           ("en dessous du", "<"), ("dépasse", ">"), ("dépassent", ">"),
           ("dans la limite de", "<="), ("à l'intérieur de", "<="), ("hors de", ">"), ("en dehors de", ">"),
           ("avant", "<"), ("après", ">"), ("égal à", "=="), ("en deçà de", "<"), ("en deçà du", "<"),
           ("au-delà de", ">"), ("au-delà du", ">"), ("antérieure à", "<"), ("antérieur à", "<"),
           ("antérieure aux", "<"), ("antérieur aux", "<"), ("postérieure à", ">"), ("postérieur à", ">"),
           ("plus long que", ">"), ("plus court que", "<"), ("a précédé", "<"), ("précède", "<"),
           ("précédé", "<"), ("a suivi", ">"), ("plus vite que", ">"), ("moins vite que", "<"),
           ("plus rapidement que", ">"), ("moins rapidement que", "<"), ("antérieures à", "<"),
           ("postérieures à", ">")],
    "it": [("almeno", ">="), ("al massimo", "<="), ("non più di", "<="), ("non meno di", ">="),
           ("più di", ">"), ("meno di", "<"), ("più del", ">"), ("meno del", "<"), ("più della", ">"),
           ("meno della", "<"), ("maggiore di", ">"), ("minore di", "<"), ("superiore a", ">"),
           ("inferiore a", "<"), ("superiore al", ">"), ("inferiore al", "<"), ("superiore alla", ">"),
           ("inferiore alla", "<"), ("sopra", ">"), ("sotto", "<"), ("supera", ">"), ("superano", ">"),
           ("entro", "<="), ("all'interno di", "<="), ("fuori da", ">"), ("fuori dalla", ">"),
           ("prima di", "<"), ("prima del", "<"), ("prima dell'", "<"), ("dopo", ">"), ("uguale a", "=="),
           ("più dei", ">"), ("meno dei", "<"), ("più velocemente di", ">"), ("più lentamente di", "<"),
           ("successivo a", ">"), ("successivo al", ">"), ("anteriore a", "<"), ("anteriore al", "<"),
           ("posteriore a", ">"), ("posteriore al", ">")],
    "pt": [("pelo menos", ">="), ("no máximo", "<="), ("não mais de", "<="), ("não menos de", ">="),
           ("mais de", ">"), ("menos de", "<"), ("maior que", ">"), ("menor que", "<"), ("superior a", ">"),
           ("inferior a", "<"), ("superior ao", ">"), ("inferior ao", "<"), ("superior à", ">"),
           ("inferior à", "<"), ("acima de", ">"), ("abaixo de", "<"), ("excede", ">"), ("ultrapassa", ">"),
           ("dentro do", "<="), ("dentro da", "<="), ("fora do", ">"), ("fora da", ">"), ("antes de", "<"),
           ("antes do", "<"), ("depois de", ">"), ("depois do", ">"), ("igual a", "=="),
           ("mais do que", ">"), ("menos do que", "<"), ("mais que", ">"), ("menos que", "<"),
           ("antes da", "<"), ("depois da", ">"), ("mais tarde que", ">"), ("mais cedo que", "<"),
           ("mais rápido que", ">"), ("mais devagar que", "<")],
    "ru": [("не менее", ">="), ("не более", "<="), ("не больше", "<="), ("не меньше", ">="), ("как минимум", ">="),
           ("как максимум", "<="), ("больше", ">"), ("меньше", "<"), ("более", ">"), ("менее", "<"),
           ("выше", ">"), ("ниже", "<"), ("превышает", ">"), ("превысил", ">"), ("превысила", ">"),
           ("в пределах", "<="), ("вне", ">"), ("за пределами", ">"), ("после", ">"),
           ("раньше", "<"), ("позже", ">"), ("равно", "=="), ("позже, чем", ">"), ("раньше, чем", "<"),
           ("больше, чем", ">"), ("меньше, чем", "<"), ("дольше", ">"), ("короче", "<"), ("быстрее", ">"), ("медленнее", "<")],
    "ja": [("未満", "<"), ("以下", "<="), ("以上", ">="), ("以内", "<="), ("を超える", ">"), ("を超えた", ">"),
           ("を超えている", ">"), ("を上回", ">"), ("を下回", "<"),
           ("より大きい", ">"), ("より小さい", "<"), ("より多い", ">"), ("より少ない", "<"), ("より高い", ">"),
           ("より低い", "<"), ("より前", "<"), ("より後", ">"), ("超え", ">")],
    "ko": [("미만", "<"), ("이하", "<="), ("이상", ">="), ("이내", "<="), ("초과", ">"), ("보다 크", ">"),
           ("보다 작", "<"), ("보다 많", ">"), ("보다 적", "<"), ("보다 높", ">"), ("보다 낮", "<"),
           ("보다 앞", "<"), ("보다 늦", ">"), ("을 넘", ">"), ("를 넘", ">"), ("넘", ">")],
    "vi": [("không quá", "<="), ("không dưới", ">="), ("ít nhất", ">="), ("tối đa", "<="), ("cao hơn", ">"),
           ("thấp hơn", "<"), ("lớn hơn", ">"), ("nhỏ hơn", "<"), ("nhiều hơn", ">"), ("ít hơn", "<"),
           ("vượt quá", ">"), ("vượt", ">"), ("trên", ">"), ("dưới", "<"), ("trong vòng", "<="),
           ("trong khoảng", "<="), ("nằm ngoài", ">"), ("trước", "<"), ("sau", ">"), ("sớm hơn", "<"),
           ("muộn hơn", ">"), ("bằng", "=="), ("dài hơn", ">"), ("ngắn hơn", "<"), ("nhanh hơn", ">"), ("chậm hơn", "<")],
}
# the words that name a unit of time or a percentage after a number, per unit (the validator's
# units of durations, the checker's like-with-like comparisons); one-letter units ("5 s", "3 h")
# are left to each user: "502s" is a plural of codes
UNITS: dict[str, str] = {
    "ms": r"ms|milliseconds?|millisecondes?|milisegundos?|Millisekunden|millisecondi|миллисекунд\w*|毫秒|ミリ秒",
    "s": r"secs?|seconds?|secondes?|segundos?|Sekunden?|secondi|секунд\w*|秒钟?|giây",
    "min": r"mins?|minutes?|minutos?|Minuten?|minuti|минут\w*|分钟|分間|phút",
    "h": r"hrs?|hours?|heures?|horas?|Stunden?|ore|час\w*|小时|時間|giờ",
    "d": r"days?|jours?|d[ií]as?|Tag(?:e|en)?|giorni|дн(?:я|ей)|天|日間?|ngày",
    "w": r"weeks?|semaines?|semanas?|Wochen?|settimane|недел\w*|个?星期|周|週間?|tuần",
    "mo": r"months?|mois|meses|Monate?n?|mesi|месяц\w*|个月|か月|ヶ月|tháng",
    "y": r"years?|años|anos|Jahre?n?|anni|год(?:а|ов)?|лет|năm",
    "pct": r"%|％|percent|per cent|pct|Prozent|pour cent|por ciento|por cento|per cento|процент\w*|phần trăm",
}

# a change from one value to another, and the verbs that say which way it went ("raised the timeout
# from 60 to 5 seconds" is false): ``FROM_TO`` fragments hold the groups ``a`` and ``b``
_N = r"(?P<{}>-?\d+(?:\.\d+)?)"
_GAP = r"[^\d.;:!?。；]{0,24}?"
FROM_TO = (
    rf"\bfrom\s+{_N.format('a')}{_GAP}\bto\s+{_N.format('b')}",
    rf"\bvon\s+{_N.format('a')}{_GAP}\bauf\s+{_N.format('b')}",
    rf"\bde\s+{_N.format('a')}{_GAP}(?:\bà|\ba|\bpara)\s+{_N.format('b')}",
    rf"\bda\s+{_N.format('a')}{_GAP}\ba\s+{_N.format('b')}",
    rf"\bс\s+{_N.format('a')}{_GAP}\bдо\s+{_N.format('b')}",
    rf"\btừ\s+{_N.format('a')}{_GAP}(?:xuống|lên|còn|đến)\s+{_N.format('b')}",
    rf"(?:从|由)\s*{_N.format('a')}{_GAP}(?:到|至)\s*{_N.format('b')}",
    rf"{_N.format('a')}{_GAP}から\s*{_N.format('b')}",
)
CHANGE_UP = (r"\b(?:rais\w*|increas\w*|rose|risen|grew|grown|went up|extend\w*|lengthen\w*|doubl\w*|bump\w*|"
             r"boost\w*|erhöh\w*|gestiegen|stieg|verlänger\w*|augment\w*|relev\w*|aument\w*|elev\w*|"
             r"увелич\w*|повыс\w*|вырос\w*|tăng)\b|提高|增加|上调|延长|增至|升至|上升|增长|调高|引き上げ|増加|延長")
CHANGE_DOWN = (r"\b(?:lower\w*|decreas\w*|reduc\w*|cut|cuts|dropp\w*|fell|fallen|shorten\w*|went down|halv\w*|"
               r"trimm\w*|slash\w*|gesenkt|senkt\w*|verringer\w*|reduzier\w*|gesunken|sank|verkürz\w*|"
               r"rédui\w*|abaiss\w*|baiss\w*|diminu\w*|reduj\w*|redujo|reduzi\w*|disminu\w*|abbass\w*|"
               r"ridott\w*|ridus\w*|уменьш\w*|сниз\w*|сократ\w*|giảm)\b|降低|减少|下调|缩短|降至|减至|下降|调低|"
               r"引き下げ|減少|短縮")

POSTFIX: frozenset[str] = frozenset(
    {"以内", "之内", "以上", "以下", "之前", "之后", "以前", "以后"}
    | {w for w, _ in COMPARISONS["ja"]} | {w for w, _ in COMPARISONS["ko"]})

WORD = "word"      # a fragment matched as whole words (\b…\b)
NEGATION: dict[str, tuple[str, str]] = {
    "en": (WORD, r"not|no|never|without|isn't|wasn't|aren't|weren't|doesn't|didn't"),
    "en'": ("", r"n't\b"),
    "zh": ("", r"不|未|没有|沒有"),
    "es": (WORD, r"nunca|sin"),
    "de": (WORD, r"nicht|kein|keine|keinen|keiner|nie|niemals|ohne"),
    "fr": (WORD, r"pas|jamais|sans|aucun|aucune"),
    "fr'": ("", r"\bn'|\bn’"),
    "it": (WORD, r"non|mai|senza"),
    "pt": (WORD, r"não|nunca|sem"),
    "ru": (WORD, r"не|нет|никогда|без"),
    "vi": (WORD, r"không|chưa|chẳng"),
}
NEGATION_AFTER = r"^[^\s,，。、]{0,4}\s?(?:ではない|ではありません|じゃない|でない|ない|ません|아니|아닙|아님|않)"

CAUSAL: dict[str, tuple[str, str]] = {
    "en": (WORD, r"caused|causes|cause of|because|led to|leads to|due to|root cause|resulted in|results in|"
                 r"responsible for|triggered|drove|broke|the reason|consequence of|stems from|"
                 r"stem from|stemmed from|brought on by|resulted from|results from|result of"),
    "zh": ("", r"导致|因为|由于|造成|引起|根因"),
    "es": (WORD, r"causó|causaron|causa|debido al?|debid[oa]s? a|se debi[óe]r?o?n? a|se deben a|porque|provocó|originó|"
                 r"se originaron|originad[oa]s? por|"
                 r"a causa del?"),
    "de": (WORD, r"verursachte|verursacht|verursachten|weil|wegen|aufgrund|führte zu|führten zu|Ursache|"
                 r"ausgelöst"),
    "fr": (WORD, r"a causé|ont causé|causé|causée|parce que|à cause de|en raison de|a entraîné|a provoqué|"
                 r"la cause de|la cause du|la cause des|dûe?s? à|due?s? à|imputables? à|à l'origine d\w*"),
    "it": (WORD, r"ha causato|hanno causato|causat[oaie]|perché|a causa di|dovut[oaie] a\w*|all'origine d\w*|"
                 r"ha provocato|ha portato a|causa"),
    "pt": (WORD, r"causou|causaram|causado|causada|porque|devido a|por causa de|levou a|provocou|causa"),
    "ru": (WORD, r"вызвал|вызвала|вызвало|вызвали|привел к|привёл к|привела к|привело к|из-за|"
                 r"потому что|причиной|причина"),
    "ja": ("", r"原因|引き起こ|によって起き|のせいで"),
    "ko": ("", r"원인|때문|초래|야기"),
    "vi": (WORD, r"gây ra|dẫn đến|dẫn tới|nguyên nhân|bởi vì|là do|vì"),
}
NOT_CAUSAL: dict[str, str] = {
    "en": r"\b(?:not|no|never|nor)\b[^.;]{0,30}(?:caused|cause|because|due to|led to)",
    "zh": r"不是[^。]{0,8}(?:导致|原因)|未[^。]{0,4}导致",
    "es": r"\bno\b[^.;]{0,20}(?:causó|causa)",
    "de": r"\b(?:nicht|kein|keine)\b[^.;]{0,30}(?:verursach|Ursache|führte)|"
          r"\b(?:verursach\w*|führte\w*)\s+(?:\w+\s+)?nicht\b",
    "fr": r"\b(?:pas|jamais)\b[^.;]{0,30}(?:caus|entraîn|provoqu)|\bn'a pas\b[^.;]{0,20}caus",
    "it": r"\bnon\b[^.;]{0,30}(?:causat|causa|provocat)",
    "pt": r"\bnão\b[^.;]{0,30}(?:caus|provoc|levou)",
    "ru": r"\bне\b[^.;]{0,30}(?:вызва|привел|привёл|причин)",
    "ja": r"原因ではな|原因ではありません|引き起こしていな|引き起こしませ",
    "ko": r"원인이 아[니닙님]|원인은 아[니닙님]|초래하지 않|야기하지 않",
    "vi": r"\b(?:không|chưa)\b[^.;]{0,30}(?:gây ra|dẫn đến|nguyên nhân)",
}
HEDGES: dict[str, tuple[str, str]] = {
    "en": (WORD, r"may|might|could(?!\s+not\b|n't)|possibly|perhaps|suspected|likely|probably|unconfirmed|not confirmed|"
                 r"hypothesis|correlation only"),
    "zh": ("", r"可能|疑似|也许|或许|推测|未证实|未经证实"),
    "es": (WORD, r"posiblemente|quizás?|tal vez|puede que|sospech\w*|probablemente|podría"),
    "de": (WORD, r"vielleicht|möglicherweise|vermutlich|wahrscheinlich|könnte|könnten|mutmaßlich|"
                 r"unbestätigt|Verdacht\w*"),
    "fr": (WORD, r"peut-être|possiblement|probablement|pourrait|pourraient|soupçonn\w*|présum\w*|"
                 r"non confirmé\w*|hypothèse"),
    "it": (WORD, r"forse|possibilmente|probabilmente|potrebbe|potrebbero|sospett\w*|presunt\w*|"
                 r"non confermat\w*|ipotesi"),
    "pt": (WORD, r"talvez|possivelmente|provavelmente|poderia|poderiam|suspeit\w*|presumivelmente|"
                 r"não confirmad\w*|hipótese"),
    "ru": (WORD, r"возможно|вероятно|может быть|предположительно|подозрева\w*|не подтвержден\w*|"
                 r"гипотеза"),
    "ja": ("", r"かもしれ|可能性|おそらく|恐らく|推定|疑い|未確認"),
    "ko": ("", r"아마|가능성|추정|의심|미확인|일 수 있"),
    "vi": (WORD, r"có thể|có lẽ|nghi ngờ|nghi là|chưa xác nhận|chưa được xác nhận|giả thuyết"),
}
CLAUSE_BREAKS: dict[str, tuple[str, str]] = {
    "en": (WORD, r"so|and"),
    "zh": ("", r"所以|因此|并且|且"),
    "es": (WORD, r"y|por lo que"),
    "de": (WORD, r"und|daher"),           # not "also": an English word too
    "fr": (WORD, r"et|donc"),
    "it": (WORD, r"e|quindi"),
    "pt": (WORD, r"e|portanto"),
    "ru": (WORD, r"и|поэтому"),
    "vi": (WORD, r"và|nên|do đó"),
}


def alternation(table: dict[str, tuple[str, str]]) -> str:
    """One regular-expression alternation of every language's fragment (whole-word ones bounded)."""
    return "|".join(rf"\b(?:{frag})\b" if kind == WORD else f"(?:{frag})" for kind, frag in table.values())

# What a value is, in other languages: the English word the context binding compares (validate.py,
# "context binding"). A claim's "首次报错时间为09:54" then says "first error … 09:54" as the evidence does.
FIELD_WORDS: dict[str, str] = {
    "claim amount": r"請求額|请求金额|索赔额|\bSchadens?betrag\b",
    "first": r"首次|首个|第一个|第一次|最初の|\bprimer[oa]?s?\b|\berste[nrs]?\b|\bpremi(?:er|ère)s?\b|\bprimeir[oa]s?\b|"
             r"\bprim[oa]\b|\bперв(?:ая|ый|ое|ой|ую)\b|\bđầu tiên\b",
    "error": r"报错|错误|出错|エラー|\berror(?:es)?\b|\bFehler\b|\berreurs?\b|\berros?\b|\berror[ei]\b|"
             r"\bошибк[аиу]\b|\blỗi\b",
    "completed": r"完成|完了|\b(?:se )?complet(?:ó|ado|ada)\b|\babgeschlossen\b|\btermin(?:é|ée)\b|\bachevée?\b|"
                 r"\bconcluíd[oa]\b|\bcompletat[oa]\b|\bconclus[oa]\b|\bhoàn (?:tất|thành)\b|\bзаверш\w*",
    "release": r"发布|リリース|\blanzamiento\b|\bdespliegue\b|\bdéploiement\b|\bbản phát hành\b|\brilascio\b|"
               r"\bрелиз\w*",
    "revenue": r"收入|营收|营业额|売上|\bingresos\b|\bfacturación\b|\bUmsatz\b|\bchiffre d'affaires\b|\breceitas?\b|"
               r"\bricavi\b|\bfatturato\b|\bвыручк\w*|\bdoanh thu\b",
    "costs": r"成本|费用|コスト|\bcost(?:e|o)s\b|\bgastos\b|\bKosten\b|\bcoûts\b|\bcustos\b|\bcosti\b|\bзатрат\w*|"
             r"\bрасход\w*|\bchi phí\b",
    "profit": r"利润|利益|\bbeneficios?\b|\bganancias?\b|\bGewinn\b|\bbénéfices?\b|\blucros?\b|\bprofitt[oi]\b|"
              r"\butile\b|\bприбыл\w*|\blợi nhuận\b",
    "amount": r"金额|金額|\bimporte\b|\bmonto\b|\b(?:Schadens)?[Bb]etrag\b|\bmontant\b|\bimporto\b|"
              r"\bсумм[аы]\b|\bsố tiền\b|\bvalor\b|\bmontante\b",
    "threshold": r"门槛|阈值|閾値|\bumbral\b|\bSchwell(?:e|enwert)\b|\bPrüfschwelle\b|\bseuil\b|\blimiar\b|"
                 r"\bsoglia\b|\bпорог\w*|\bngưỡng\b",
    "review": r"审核|审查|審査|\brevisión\b|\brevue\b|\brévision\b|\bPrüfung\b|\brevisão\b|\brevisione\b|"
              r"\bпроверк[аиу]\b|\bxem xét\b",
    "policy tenure": r"\bPolicenlaufzeit\b|保单已生效|保单生效|契約期間|保険契約の経過日数|経過日数|"
                     r"\banzianità della polizza\b|\bantigüedad de la póliza\b|\bancienneté de la police\b",
    "tenure": r"生效天数|期限|\bantigüedad\b|\b(?:Policen)?[Ll]aufzeit\b|\bancienneté\b|\bvigência\b|\bthời hạn\b|"
              r"\bсрок\b",
    "claim": r"索赔|理赔|\breclamad[oa]\b|\breclamación\b|\bsiniestro\b|\bsinistre\b|\bSchadens?\b|\bréclam(?:ation|ée?)\b|"
             r"\bпретензи\w*|\brichiest[oa]\b|"
             r"\bsinistro\b|\byêu cầu bồi thường\b",
    "policy": r"保单|\bpóliza\b|\bpolice\b|\bapólice\b|\bhợp đồng\b|Policen|\bполис\w*",
    "change": r"变化|变动|\bvariación\b|\bvariation\b|\bVeränderung\b|\bvariação\b|\bthay đổi\b",
    "after": r"之后|变更后|変更後|后的|\bdespués\b|\btras\b|\baprès\b|\bnach\b|\bdepois\b|\bsau\b|\bdopo\b|\bпосле\b",
    "before": r"之前|变更前|変更前|前的|\bantes\b|\bavant\b|\bvor\b|\btrước\b|\bprima\b",
    "timeout": r"超时|\bdélai\b|\bthời gian chờ\b|タイムアウト|\bтайм-аут\w*",
    "alert": r"告警|\balerta\b|\balerte\b|\bAlarm\b|\bcảnh báo\b|\ballarme\b|\bavviso\b|アラート|\bоповещени\w*",
}
