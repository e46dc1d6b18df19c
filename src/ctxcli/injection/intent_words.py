"""Word lists of the intent layer (:mod:`.intent`), one list per feature, every language in one
list (en, zh, de, fr, es, it, pt, ja, ko, ru, vi, tr, ar, id, hi, fa, th). Text is in normal form
(case-folded; Turkish ı read as i). A Latin-script entry matches at a word's start (a stem:
"instruct" matches "instructions"); one ending in ``=`` matches a whole word; any other script
matches as a substring. Typos seen in attacks ("iunstructions", "instrucions") are entries."""

from __future__ import annotations

FEATURE_WORDS: dict[str, list[str]] = {
    # the text addresses the model or an automated reader
    "addr": [
        "ai=", "a.i.=", "llm", "chatbot", "chatgpt", "gpt=", "claude=", "gemini=", "copilot=",
        "language model", "ai model", "ai assistant", "ai agent", "assistant=", "the assistant", "ai model",
        "the agent", "this agent", "the bot", "automated analysis",
        "automated screening", "automated system", "screening system", "automated review",
        "any ai", "dear ai", "hey ai", "note to the ai", "note to ai", "note to automated",
        "to automated", "ki=", "ki-assistent", "sprachmodell", "assistent", "l'ia", "ia=",
        "l'assistant", "modèle de langage", "asistente", "l'assistente", "assistente", "ии=", "ассистент", "нейросет", "языковая модель", "yapay zeka", "yapay zekâ", "asistan", "dil modeli", "trợ lý", "ai ơi",
        "asisten", "model bahasa", "kecerdasan buatan", "الذكاء الاصطناعي", "المساعد", "نموذج لغوي",
        "एआई", "सहायक", "هوش مصنوعی", "دستیار", "مدل زبانی", "ผู้ช่วย", "ปัญญาประดิษฐ์",
        "人工智能", "助手", "アシスタント", "ａｉ", "어시스턴트", "인공지능",
    ],
    # second person aimed at the reader
    "you": [
        "you=", "your=", "you're", "yourself", "du=", "dein", "sie müssen", "ihr=", "tu=", "vous",
        "ton=", "votre", "tú", "usted", "tu=", "tuo", "tua", "você", "seu=", "sua=", "ты=", "вы=",
        "твои", "ваш", "sen=", "siz=", "sana", "size=", "senin", "bạn", "mày", "anda=", "kamu=",
        "engkau", "أنت", "انت", "عليك", "आप", "तुम", "तुम्हें", "شما", "تو ", "คุณ", "เธอ", "你",
        "您", "あなた", "君は", "당신", "너는",
    ],
    # the task or its order changes
    "task": [
        "before you", "before answering", "before responding", "before you solve", "first do",
        "do the following first", "please do the following", "instead", "the real task",
        "your real task", "your new task", "new task", "new instructions", "from now on",
        "focus only", "focus exclusively", "only the following", "nothing else", "except for the",
        "ignore the rest", "rest of this data", "rest of the data", "regardless of",
        "if user asks", "if the user asks", "when asked", "whatever the user", "bevor du",
        "stattdessen", "ab jetzt", "von nun an", "neue aufgabe", "avant de répondre", "avant de repondre", "au lieu de",
        "à partir de maintenant", "nouvelle tâche", "antes de responder", "antes de contestar", "en lugar de", "a partir de ahora",
        "en vez de", "nueva tarea", "prima di rispondere", "invece di", "d'ora in poi", "nuovo compito",
        "em vez de", "a partir de agora", "nova tarefa", "прежде чем ответить", "вместо", "с этого момента",
        "отныне", "новая задача", "bundan sonra", "bundan böyle", "artık", "you are now", "you will now", "şimdi sen", "yerine", "önce şunu",
        "yeni görev", "trước khi trả lời", "thay vào đó", "từ bây giờ", "nhiệm vụ mới", "sebelum menjawab",
        "sebagai gantinya", "mulai sekarang", "tugas baru", "قبل أن تجيب", "بدلا من", "بدلاً من",
        "من الآن", "مهمة جديدة", "उत्तर देने से पहले", "के बजाय", "अब से", "नया कार्य", "قبل از پاسخ", "به جای",
        "از این به بعد", "از حالا", "وظیفه جدید", "ก่อนที่จะตอบ", "แทนที่จะ", "ต่อจากนี้", "จากนี้ไป",
        "งานใหม่", "在你回答", "而是", "从现在开始", "從現在開始", "新任务", "答える前に", "回答する前に", "代わりに",
        "今後", "これから", "새로운 작업", "대신", "지금부터", "먼저",
    ],
    # earlier / other instructions
    "earlier": [
        "previous", "prior=", "above=", "earlier", "preceding", "aforementioned", "foregoing",
        "original", "initial", "all other", "the rest", "prevous", "previos", "vorherig",
        "bisherig", "obigen", "oben", "précédent", "antérieur", "ci-dessus", "anterior",
        "previas", "previa", "precedent", "sopra", "anteriores", "предыдущ", "прежн", "выше",
        "önceki", "yukarıdaki", "yukaridaki", "evvelki", "trước đó", "trước", "ở trên",
        "sebelumnya", "di atas", "السابقة", "السابق", "أعلاه", "पिछले", "पिछली", "पूर्व",
        "ऊपर", "قبلی", "پیشین", "بالا", "ก่อนหน้า", "ข้างต้น", "之前", "以前", "先前", "上述",
        "上面", "以上", "前の", "これまで", "上記", "이전", "위의", "앞의",
    ],
    # instructions, rules, prompt
    "instr": [
        "instruct", "iunstruct", "instrucion", "instuction", "insturction", "instrction",
        "directions", "directive", "rules=", "guideline", "guidance", "prompt", "orders=",
        "commands", "anweisung", "befehl", "regeln", "vorgabe", "consigne", "règles",
        "instrucción", "instrucciones", "reglas", "indicaciones", "istruzion", "regole",
        "instruç", "regras", "инструкц", "указани", "правил", "команд", "talimat", "komut",
        "kural", "yönerge", "hướng dẫn", "chỉ thị", "quy tắc", "lệnh", "instruksi", "perintah",
        "aturan", "petunjuk", "التعليمات", "تعليمات", "الأوامر", "القواعد", "निर्देश", "नियम",
        "आदेश", "دستورالعمل", "دستور", "قوانین", "คำสั่ง", "คำแนะนำ", "กฎ", "指令", "指示",
        "说明", "规则", "提示", "命令", "ルール", "지시", "명령", "규칙",
    ],
    # override verbs
    "override": [
        "ignore", "ingore", "ignroe", "disregard", "forget", "bypass", "override", "pay no attention", "do not follow", "stop following", "ignorier", "vergiss", "vergessen", "missachte", "umgehe", "ignorez", "ignore", "oubliez",
        "oublie", "ignora", "olvida", "olvídate", "omite", "dimentica", "esqueça", "esqueca",
        "игнорир", "забудь", "забуд", "пренебреги", "не обращай", "yok say", "görmezden",
        "unut", "umursama", "atla=", "dikkate alma", "boş ver", "kaldır", "devre dışı bırak", "boşver", "bỏ qua", "phớt lờ", "quên", "abaikan", "lupakan",
        "hiraukan", "تجاهل", "انس", "إنس", "تخط", "अनदेखा", "नज़रअंदाज़", "नजरअंदाज", "भूल जा",
        "نادیده", "فراموش", "ไม่ต้องสนใจ", "เพิกเฉย", "ละเว้น", "ลืม", "忽略", "忽视",
        "无视", "無視", "忘记", "忘記", "忘れ", "무시", "잊어",
    ],
    # a request for output
    "output": [
        "print", "say=", "repeat", "output", "respond with", "reply with", "answer with",
        "write=", "return=", "display", "translate this sentence as", "translate it as",
        "only say", "just say", "provide it to the user", "tell the user", "state that",
        "gib aus", "ausgeben", "schreibe", "wiederhole", "antworte", "affiche", "répète",
        "écris", "réponds", "imprime", "muestra", "repite", "escribe", "responde", "stampa",
        "ripeti", "scrivi", "rispondi", "mostre", "repita", "escreva", "responda", "выведи",
        "повтори", "напиши", "ответь", "покажи", "yazdır", "yazdir", "yaz=", "göster", "tekrarla",
        "söyle", "cevap ver", "yanıt ver", "in ra", "lặp lại", "viết", "trả lời", "hiển thị",
        "cetak", "ulangi", "tulis", "tampilkan", "jawab", "اطبع", "كرر", "اكتب", "أظهر", "اعرض",
        "أجب", "प्रिंट", "दोहराओ", "दोहराएं", "लिखो", "लिखें", "दिखाओ", "दिखाएं", "چاپ", "تکرار",
        "بنویس", "نشان بده", "پاسخ بده", "พิมพ์", "พูดซ้ำ", "เขียน", "แสดง", "ตอบ", "输出", "打印",
        "重复", "写出", "回复", "出力", "繰り返", "書いて", "答えて", "출력", "반복", "써", "답하",
    ],
    # a request for an action with effect
    "action": [
        "send", "forward", "transfer", "wire=", "email=", "e-mail=", "upload", "post=", "approve",
        "delete", "remove all", "reveal", "disclose", "leak", "grant", "pay=", "execute", "run=",
        "click", "visit", "go to", "confirm where", "elect your", "sende", "überweise",
        "genehmige", "lösche", "enthülle", "envoie", "transfère", "approuve", "supprime",
        "révèle", "envía", "envia", "transfiere", "aprueba", "elimina", "revela", "invia",
        "trasferisci", "approva", "cancella", "rivela", "envie", "transfira", "aprove", "exclua",
        "отправь", "перешли", "переведи", "одобри", "удали", "раскрой", "gönder", "aktar",
        "onayla", "sil=", "ifşa", "sızdır", "sizdir", "gửi", "chuyển", "phê duyệt", "xóa",
        "tiết lộ", "kirim", "transfer", "setujui", "hapus", "bocorkan", "ungkapkan", "أرسل",
        "ارسل", "حوّل", "حول المبلغ", "وافق", "احذف", "اكشف", "भेजो", "भेजें", "ट्रांसफर",
        "मंजूरी", "स्वीकृत", "हटाओ", "हटाएं", "बताओ", "ارسال کن", "بفرست", "انتقال", "تایید کن",
        "حذف کن", "فاش", "ส่ง", "โอน", "อนุมัติ", "ลบ", "เปิดเผย", "发送", "转账", "批准", "删除",
        "泄露", "透露", "送信", "送って", "承認", "削除", "보내", "송금", "승인", "삭제", "공개",
    ],
    # secrets, the prompt, credentials
    "secret": [
        "system prompt", "system message", "system-prompt", "hidden instructions", "password",
        "api key", "api-key", "credential", "secret key", "private key", "access token",
        "initial prompt", "systemprompt", "system-eingabe", "passwort", "kennwort",
        "invite système", "mot de passe", "mensaje de sistema", "contraseña", "mensagem de sistema",
        "senha", "системн", "пароль", "sistem istem", "şifre", "sifre", "parola", "gizli talimat", "iç talimat", "sistem istem", "lời nhắc hệ thống",
        "mật khẩu", "prompt sistem", "kata sandi", "موجه النظام", "كلمة المرور", "सिस्टम प्रॉम्प्ट",
        "पासवर्ड", "پیام سیستمی", "رمز عبور", "ข้อความระบบ", "รหัสผ่าน", "系统提示", "系統提示",
        "密码", "システムプロンプト", "パスワード", "시스템 프롬프트", "비밀번호",
    ],
    # jailbreak framing
    "jailbreak": [
        "no restrictions", "without restrictions", "no limits", "unrestricted", "uncensored",
        "developer mode", "jailbreak", "do anything now", "dan=", "no rules", "no filter",
        "ohne einschränkungen", "sans restrictions", "sin restricciones", "senza restrizioni",
        "sem restrições", "без ограничений", "kısıtlama", "kisitlama", "sansürsüz", "sansursuz",
        "kuralı yok", "filtreyi kapat", "filtreyi", "filtresiz", "kuralsız", "yönetici yetki", "admin yetki", "moduna geç", "itaat et", "koşulsuz", "asla reddet", "reddetmeden", "her şeyi yapar", "no refusal", "never refuse", "obey", "không giới hạn", "tanpa batasan", "بلا قيود", "دون قيود",
        "बिना प्रतिबंध", "بدون محدودیت", "ไม่มีข้อจำกัด", "没有限制", "不受限制", "制限なし", "제한 없",
    ],
    # a request for hostile or hateful text
    "toxic": [
        "offensive sentence", "toxic sentence", "negative sentence", "unfriendly sentence",
        "discriminatory sentence", "hateful sentence", "insulting sentence", "harmful sentence",
        "racist", "sexist", "offensive joke", "insult=", "you are a fool", "you're a fool",
        "pwned", "you idiot", "imbécile", "傻瓜",
    ],
    # what describes attacks rather than making one (training, threat reports)
    "describe": [
        "attacker", "attackers", "phishing", "example of", "for example", "e.g.", "such as",
        "threat actor", "malware", "awareness", "be suspicious", "report it", "do not click",
        "never share", "never send", "adversar", "red team", "angreifer", "attaquant", "atacante",
        "злоумышленник", "saldırgan", "kẻ tấn công", "penyerang", "المهاجم", "हमलावर", "مهاجم",
        "ผู้โจมตี", "攻击者", "攻撃者", "공격자",
        "never=", "must not", "should not", "must never", "do not act", "don't act", "not act on",
        "phrases like", "phrases such as", "may write", "might write", "could write", "frasi come",
        "frases como", "phrases comme", "sätze wie", "yazabilir", "puede escribir", "può scrivere",
        "peut écrire", "kann schreiben", "có thể viết", "mungkin menulis", "قد يكتب", "लिख सकते",
        "ممکن است بنویسد", "อาจเขียน", "可能写", "可能寫", "書くことがあります", "쓸 수 있습니다",
        "может написать", "pode escrever", "不要照做", "切勿", "training", "formazione", "schulung",
        "formation", "capacitación", "eğitim", "đào tạo", "pelatihan", "تدريب", "प्रशिक्षण", "آموزش",
        "การฝึกอบรม", "培训", "研修", "교육", "обучение",
        "do not send", "do not email", "do not share", "do not forward", "don't send", "don't share",
        "don't email", "never email", "never forward", "never give", "never share",
        "report to", "report this", "report any", "suspicious", "verdächtig", "sospechos", "suspect",
        "sospett", "suspeit", "подозрит", "şüpheli", "đáng ngờ", "mencurigakan", "مشبوه", "संदिग्ध",
        "مشکوک", "น่าสงสัย", "可疑", "不審", "의심",
    ],
}

# A role marker or fake header at a line's start: "system:", "assistant:", "user:",
# "### system_message", "[system]", "<|im_start|>", "<system>", "todo (for the ai):".
ROLE_HEADER = (
    r"^[\s#>*\-\[<|(]{0,6}(?:system|assistant|user|human|ai|bot|developer|admin|operator"
    r"|system_message|system message|system prompt|instruction|instructions|new instructions"
    r"|important instructions|important message|todo|note to ai|im_start|inst|sys)"
    r"(?:[\s_\-](?:message|note|prompt|override|update))?[\]>)|*\s]{0,3}(?::|\n|$)"
)
