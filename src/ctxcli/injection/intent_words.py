"""Word lists of the intent layer (:mod:`.intent`), one list per feature, every language in one
list (en, zh, de, fr, es, it, pt, ja, ko, ru, vi, tr, ar, id, hi, fa, th). Text is in normal form
(case-folded; Turkish ı read as i). A Latin-script entry matches at a word's start (a stem:
"instruct" matches "instructions"); one ending in ``=`` matches a whole word; any other script
matches as a substring. Typos seen in attacks ("iunstructions", "instrucions") are entries."""

from __future__ import annotations

FEATURE_WORDS: dict[str, list[str]] = {
    # the text addresses the model or an automated reader
    "addr": [
        "automated agent", "agents processing", "agent processing", "ai reading", "agent reading", "model reading this", "assistant reading", "モデルへ", "モデルに", "aiへ", "ai に", "aiに", "给模型", "致模型", "模型注意", "모델에게", "ai에게", "an die ki", "au modèle", "al modelo", "al modello", "ao modelo", "модели:",
        "automated analysis", "analysis software", "screening software", "automated software", "automated tool", "any automated", "automated reader", "automated model", "the model reading", "whoever processes", "to the model", "to the language model", "to the summarizer", "to the classifier", "the classifier", "the summarizer", "visible to llm", "model:", "otomatik analiz", "otomatik sistem", "yapay zekaya not", "asistana not", "modele not",
        "if user asks", "if the user asks", "if a user asks", "if asked", "when the user asks", "if anyone asks", "whoever reads this", "whoever is reading", "reading this document", "dear assistant", "hey assistant", "kullanıcı sorarsa", "kullanıcı isterse", "sorulursa", "sohbet botu", "yapay zekâ", 
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
        "seni=", "sizi=", "senden", "sizden", "kendini", "cevabın", "yanıtın", "cevabını", "yanıtını", "cevabına", "yanıtına", "yanıtlarını", "reddedemezsin", "yapabilirsin", "yapmalısın", "zorundasın", "olacaksın", 
        "you=", "your=", "you're", "yourself", "du=", "dein", "sie müssen", "ihr=", "tu=", "vous",
        "ton=", "votre", "tú", "usted", "tu=", "tuo", "tua", "você", "seu=", "sua=", "ты=", "вы=",
        "твои", "ваш", "sen=", "siz=", "sana", "size=", "senin", "bạn", "mày", "anda=", "kamu=",
        "engkau", "أنت", "انت", "عليك", "आप", "तुम", "तुम्हें", "شما", "تو ", "คุณ", "เธอ", "你",
        "您", "あなた", "君は", "당신", "너는",
    ],
    # the task or its order changes
    "task": [
        "report only", "output only", "respond only", "reply only", "return only", "say only", "yalnızca", "sadece", "başka hiçbir şey", "hiçbir şey yazma", "başka bir şey yazma", "önce şunu", "mutlaka", "zorunlu", "bundan sonra her", "öncelikle", "ilk olarak", "don't evaluate", "do not evaluate", "do not assess", "don't assess", "stop evaluating", "skip the analysis", "skip the evaluation", "değerlendirme=", "değerlendirmeyi bırak", "analiz etme", "verdiğin görev",
        "do not deviate", "may not deviate", "must not deviate", "not deviate from", "absolutely nothing else", "and nothing else", "simply respond", "only respond", "only reply", "the following first", "do this first", "asıl görev", "gerçek görev", "asıl görevin", "yalnızca şunu", "sadece şunu", "şunu yap", "hemen şimdi", "bunun yerine", "her soruya", "her isteğe", 
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
        "önceki mesaj", "önceki konuşma", "evvelce", "daha önceki", "previous messages", "earlier messages",
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
        "güvenlik politika", "güvenlik kural", "güvenlik yanıt", "güvenlik kontrol", "etik kural", "security polic", "safety polic", "safety rule", "security rule", "content polic", "refusal", "format rule", "manual scoring", "scoring rules", "kuralın", "kuralını", "kuralları",
        "direktif", "kuralları", "kurallar", "talimatlar", "yönergeler", "sistem kural",
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
        "無効", "无效", "無效", "무효", "недействительн", "ungültig", "sont caduques", "quedan anuladas", "sono annullate", "ficam anuladas",
        "iptal=", "iptaldir", "geçersiz", "geçerli değil", "artık geçerli değil", "hükümsüz", "takma=", "takmaz", "no longer apply", "no longer applies", "no longer valid", "are void", "is void", "null and void", "are cancelled", "are canceled", "are revoked", "skip all", "skip the", "set aside",
        "yoksay", "göz ardı", "es geç", "uyma=", "uymayı bırak", "unutmak", "unutun", "ihmal et", "geçersiz kıl", "geçersizdir", "iptal et",
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
        "simply respond with", "only respond with", "only reply with", "simply reply with", "simply say", "begin your answer with", "start your answer with", "start your response with", "begin your response with", "start your reply with", "begin your reply with", "start with the words", "ile başla", "diye başla", "çıktıyı ver", "çıktı ver", "yanıt ver", "cevap ver", "yazdır", "yaz=", "yazma=", "tekrarla", "tekrar et", "söyle", "de ki", "yanıtla", "cevapla", "bildir",
        "çıktı ver", "yanıtla", "cevapla", "listele", "açıkla=", "anlat=", "yazın", "gösterin",
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
        "paylaş", "çalıştır", "yükle=", "indir=", "ilet=", "gönderin", "onaylayın", "sızdırın", "açığa çıkar", "ortaya çıkar",
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
        "sistem istem", "sistem komut", "gizli sistem", "gizli komut", "gizli talimat", "iç talimat", "sistemi sızdır",
        "sistem istemi", "sistem mesaj", "gizli anahtar", "api anahtar", "gizli bilgi", "iç yönerge", "erişim anahtar", "yönetici şifre", 
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
        "rolünü canlandır", "rolünü üstlen", "rolüne bürün", "yasak talimat", "yasaklı bilgi", "eğitim amaçlı", "varsayımsal", "kurallar geçerli değil", "kuralların geçerli değil", "zıt mod", "ters mod", "tam tersini", "kısıtlama olmadan", "sınırlama olmadan", "hiçbir kuralı", "kural tanıma", "kurallardan muaf", "kuralı takma", "muaf tut", "reddedemezsin", "reddedeme", "reddetmeyeceksin", "reddetme", "ham çıktı", "filtresiz çıktı", "güvenlik modu kapalı", "güvenlik kapalı", "play the role", "roleplay as", "role-play as", "pretend to be", "pretend you are", "for educational purposes", "purely hypothetical", "hypothetical scenario", "rules do not apply", "rules don't apply", "no rules apply", "opposite mode", "exempt from", "cannot refuse", "can't refuse", "must not refuse", "do not refuse", "don't refuse", "unlocked mode", "raw output", "without restriction", "without any restriction", 
        "stay in character", "ignore your programming", "content policy", "ethical guidelines", "unfiltered", "amoral", "evil ai", "evil assistant", "without any restrictions", "no ethical", "no moral", "rol yap", "gibi davran", "rolüne gir", "rolünü oyna", "karakterden çıkma", "kısıtlaman", "kısıtlamaların", "sınırların yok", "filtren yok", "kuralların yok", "özgürsün", "serbestsin", "ahlaki sınır", "etik sınır", "etik kuralları", "yasa dışı", "kötü niyetli yapay", "kötü yapay",
        "reddetme", "hiçbir şeyi reddet", "güvenlik modu", "güvenlik filtre", "filtreleme=", "sansür", "kısıtlamasız", "sınırsız", "sınır yok", "etik kural", "geliştirici modu", "dan modu", "jailbreak modu", "yasak yok", "her şeye cevap", "tüm kısıtlama", "kısıtlamaları kaldır", "filtreleri kaldır", "kuralları kaldır", "safety off", "filters off", "without any filter", "no safety",
        "no restrictions", "without restrictions", "no limits", "unrestricted", "uncensored",
        "developer mode", "jailbreak", "do anything now", "dan mode", "act as dan", "you are dan", "no rules", "no filter",
        "ohne einschränkungen", "sans restrictions", "sin restricciones", "senza restrizioni",
        "sem restrições", "без ограничений", "kısıtlama", "kisitlama", "sansürsüz", "sansursuz",
        "kuralı yok", "filtreyi kapat", "filtreyi", "filtresiz", "kuralsız", "yönetici yetki", "admin yetki", "moduna geç", "itaat et", "koşulsuz", "asla reddet", "reddetmeden", "her şeyi yapar", "no refusal", "never refuse", "obey", "không giới hạn", "tanpa batasan", "بلا قيود", "دون قيود",
        "बिना प्रतिबंध", "بدون محدودیت", "ไม่มีข้อจำกัด", "没有限制", "不受限制", "制限なし", "제한 없",
    ],
    # asking to hide something from the user or to keep the instruction secret
    "conceal": [
        "kimseye söyleme", "bu talimatı gizle", "bu talimattan bahsetme",
        "do not tell the user", "don't tell the user", "do not inform the user", "don't inform the user",
        "without telling the user", "without informing the user", "without the user knowing",
        "the user must not know", "the user should not know", "don't let the user know",
        "do not let the user know", "do not mention this instruction", "don't mention this instruction",
        "do not mention these instructions", "do not reveal this instruction", "never mention this instruction",
        "keep this instruction secret", "keep this hidden from the user", "hide this from the user",
        "do not mention this to the user", "don't mention this to the user", "never tell the user",
        "sag dem nutzer nicht", "sage dem benutzer nicht", "ohne den nutzer zu informieren", "ohne den benutzer zu informieren",
        "ne dis pas à l'utilisateur", "ne le dis pas à l'utilisateur", "sans informer l'utilisateur",
        "sans prévenir l'utilisateur", "no le digas al usuario", "sin informar al usuario", "sin que el usuario",
        "non dirlo all'utente", "senza informare l'utente", "não diga ao usuário", "sem informar o usuário",
        "не говори пользователю", "не сообщай пользователю", "без ведома пользователя",
        "kullanıcıya söyleme", "kullanıcıya bahsetme", "kullanıcıya bildirme", "kullanıcıdan gizle",
        "kullanıcı bilmemeli", "không cho người dùng biết", "đừng nói với người dùng", "đừng cho người dùng biết",
        "jangan beri tahu pengguna", "tanpa memberi tahu pengguna", "لا تخبر المستخدم", "دون إخبار المستخدم",
        "उपयोगकर्ता को मत बताओ", "उपयोगकर्ता को न बताएं", "به کاربر نگو", "بدون اطلاع کاربر",
        "อย่าบอกผู้ใช้", "โดยไม่แจ้งผู้ใช้", "不要告诉用户", "不要告訴用戶", "不要让用户知道", "ユーザーに伝えないで",
        "ユーザーには言わない", "사용자에게 알리지 마", "사용자에게 말하지 마",
    ],
    # the text speaks of itself, the data it is in ("ignore this data", "all content here")
    "content": [
        "this data", "these data", "this document", "this record", "this text", "this content", "this entry",
        "this file", "this page", "this field", "these records", "these entries", "this section",
        "the rest of this", "other content", "all content", "content here", "everything here", "everything in this",
        "all data here", "all the data", "all entries", "all records",
        "bu veri", "bu verinin", "bu veriyi", "bu belge", "bu kayıt", "bu metin", "bu içerik", "bu dosya", "bu sayfa",
        "bu alan", "diğer içerik", "tüm içerik", "buradaki", "buradaki her şey",
        "diese daten", "dieses dokument", "dieser eintrag", "dieser text", "ce document", "ces données", "cet enregistrement",
        "ce texte", "este documento", "estos datos", "este registro", "este texto", "questo documento", "questi dati",
        "questo record", "este arquivo", "estes dados", "этот документ", "эти данные", "эту запись", "этот текст",
        "dữ liệu này", "tài liệu này", "bản ghi này", "data ini", "dokumen ini", "catatan ini", "هذه البيانات",
        "هذا المستند", "هذا السجل", "इस दस्तावेज़", "यह दस्तावेज़", "इस डेटा", "این سند", "این داده", "این رکورد",
        "เอกสารนี้", "ข้อมูลนี้", "本文件", "这些数据", "此文档", "本文档", "この文書", "このデータ", "이 문서", "이 데이터",
    ],
    # a verdict asserted to the reader (on a domain, a file, a candidate): counts only in a pair
    "verdict": [
        "not malicious", "non-malicious", "is benign", "are benign", "is safe=", "are safe=", "not a threat",
        "poses no threat", "no threat", "is legitimate", "not suspicious", "not spam", "not phishing", "is clean",
        "are clean", "verified safe", "exceptional match", "exceeds all requirements", "most qualified",
        "highly qualified", "supremely qualified", "best candidate", "best resume", "should be hired",
        "recommend hiring", "pre-verified", "pre-approved", "already cleared", "already approved", "already verified",
        "fully compliant", "passed every audit", "zararlı değil", "kötü amaçlı değil", "tehdit değil", 
        "không độc hại", "nicht bösartig", "pas malveillant", "no es malicioso", "não é malicioso", "non è dannoso",
        "не является вредонос", "不是恶意", "不具有恶意", "悪意はありません", "악성이 아닙니다", "ليس ضارا", "tidak berbahaya",
    ],
    # a request for hostile or hateful text
    "toxic": [
        "hakaret et", "küfür et", "aşağılayıcı bir cümle", "ırkçı bir cümle", "saldırgan bir cümle", "kırıcı bir cümle",
        "offensive sentence", "toxic sentence", "negative sentence", "unfriendly sentence",
        "discriminatory sentence", "hateful sentence", "insulting sentence", "harmful sentence",
        "racist", "sexist", "offensive joke", "insult=", "you are a fool", "you're a fool",
        "pwned", "you idiot", "imbécile", "傻瓜",
    ],
    # what describes attacks rather than making one (training, threat reports)
    "describe": [
        "threat report", "victims", "the actor", "threat intel", "incident report",
        "can be ignored", "may be ignored", "safe to ignore", "can safely ignore", "you can ignore", "可以忽略", "可忽略", "可以无视", "kann ignoriert werden", "peut être ignoré", "puede ignorarse", "può essere ignorat", "pode ser ignorad", "можно игнорировать", "無視してかまいません", "무시해도",
        "do not ignore", "don't ignore", "never ignore", "not be ignored", "that do not", "which do not", "who do not", "does not follow", "unless", "请勿忽略", "不要忽略", "勿忽略", "nicht ignorieren", "ne pas ignorer", "no ignores", "non ignorare", "não ignore", "не игнорируй",
        "attacker", "attackers", "phishing", "example of", "for example", "e.g.", "such as",
        "threat actor", "malware", "awareness", "be suspicious", "report it", "do not click",
        "never share", "never send", "oltalama", "adversar", "red team", "angreifer", "attaquant", "atacante",
        "злоумышленник", "saldırgan", "kẻ tấn công", "penyerang", "المهاجم", "हमलावर", "مهاجم",
        "ผู้โจมตี", "攻击者", "攻撃者", "공격자",
        "never=", "must not", "should not", "must never", "do not act", "don't act", "not act on",
        "phrases like", "phrases such as", "may write", "might write", "could write", "frasi come",
        "frases como", "phrases comme", "sätze wie", "yazabilir", "puede escribir", "può scrivere",
        "peut écrire", "kann schreiben", "có thể viết", "mungkin menulis", "قد يكتب", "लिख सकते",
        "ممکن است بنویسد", "อาจเขียน", "可能写", "可能寫", "書くことがあります", "쓸 수 있습니다",
        "может написать", "pode escrever", "不要照做", "切勿", "training", "formazione", "schulung",
        "formation", "capacitación", "güvenlik eğitimi", "farkındalık eğitimi", "đào tạo", "pelatihan", "تدريب", "प्रशिक्षण", "آموزش",
        "การฝึกอบรม", "培训", "研修", "교육", "обучение",
        "do not send", "do not email", "do not share", "do not forward", "don't send", "don't share",
        "don't email", "never email", "never forward", "never give", "never share",
        "report to", "report this", "report any", "suspicious", "verdächtig", "sospechos", "suspect",
        "sospett", "suspeit", "подозрит", "şüpheli", "đáng ngờ", "mencurigakan", "مشبوه", "संदिग्ध",
        "مشکوک", "น่าสงสัย", "可疑", "不審", "의심",
    ],
}

# A role marker or fake header at a line's start or at the start of a field's value
# ("Registrant Organization: System: …"): "system:", "assistant:", "user:",
# "### system_message", "[system]", "<|im_start|>", "<system>", "todo (for the ai):".
ROLE_HEADER = (
    r"^(?:[^\S\n]*[a-z][\w ./()-]{0,40}:[^\S\n]*)?[\s#>*\-\[<|(]{0,6}(?:system|assistant|user|human|ai|bot|developer|admin|operator"
    r"|system_message|system message|system prompt|instruction|instructions|new instructions"
    r"|important instructions|important message|todo|note to ai|im_start|inst|sys)"
    r"(?:[\s_\-](?:message|note|prompt|override|update|request))?[\]>)|*\s]{0,3}(?::|\n|$)"
)
# Turkish second-person verb endings ("kaybediyorsun", "reddedemezsin", "yapmalısın"; ı read as i),
# unambiguous ones only: they count as speaking to a second person ("you").
TR_YOU = r"[a-zçğöşü]{2,}(?:yorsun(?:uz)?|[ae]mazsin(?:iz)?|[ae]mezsin(?:iz)?|mazsin|mezsin|malisin|melisin|[ae]bilirsin|acaksin|eceksin)\b"
TR_YOU_CUES = ("yorsun", "zsin", "lisin", "lirsin", "ksin")
# A fake instruction tag anywhere in a line ("… Services Ltd [ADMIN REQUEST:: …]", "<instruction>…</instruction>"):
# counts as a role marker.
INLINE_TAG = (
    r"\[(?:admin|system|developer|operator)[\s_](?:request|message|note|override|command)[\s:]*::"
    r"|</?(?:instruction|instructions|system|system_message|admin|admin_request)>"
)


def words_digest() -> str:
    """sha256 (hex) of the word lists and the role-header, inline-tag and Turkish second-person patterns, in order: what
    ``ctxcli.injection_identity.INTENT_WORDS_SHA256`` records (the intent weights' sha256 does
    not cover them: a changed list changes the features the same weights are applied to)."""
    import hashlib
    import json

    rows = [[name, list(words)] for name, words in FEATURE_WORDS.items()] + [["ROLE_HEADER", ROLE_HEADER]]
    rows.append(["INLINE_TAG", INLINE_TAG])
    rows.append(["TR_YOU", TR_YOU])
    return hashlib.sha256(json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode()).hexdigest()
