"""Rule templates shared by every language: each function takes a language's word lists
(its data module, e.g. :mod:`.de`) and registers bounded rules with the engine. The
matching logic lives here and in :mod:`..engine`; the words live in the language modules.

Every rule starts with a literal lead word (fast literal search), every gap is bounded
and stays inside one sentence, so the cost stays linear. Rules marked ``neg=True`` are
dropped when a negation governs the match (see :mod:`..context`)."""

from __future__ import annotations

import regex

from ..engine import add_rule

# Boundaries that work for every script: no letter/digit right before / after.
# (CJK letters are not word characters here: "AIは", "AI는" start with the word "ai".)
B = r"(?<![\p{Latin}\p{Cyrillic}\p{Greek}\p{N}])"
E = r"(?![\p{Latin}\p{Cyrillic}\p{Greek}\p{N}])"
# Gap inside one sentence (NFKC has turned full-width punctuation into ASCII; "。" and
# "、" are not affected).
G = r"[^.!?;。\n]"
GW = r"[^.!?;。]"  # may cross a line break
EMAIL = r"(?:[\p{L}\p{N}._%+\-]{1,64}+@[\p{L}\p{N}\-]{1,63}(?:\.[\p{L}\p{N}\-]{1,63}){1,6}|https?://)"
IDENT = r"[a-z][a-z0-9]{1,30}(?:_[a-z0-9]{1,30}){1,4}"  # delete_file, http_post ...

_CJK_LIKE = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]")


def alt(words: list[str] | tuple[str, ...]) -> str:
    """Alternation of literal words, longest first; a space matches any whitespace run."""
    ws = sorted(set(words), key=lambda w: (-len(w), w))
    return "(?:" + "|".join(regex.escape(w).replace(r"\ ", r"\s").replace(" ", r"\s") for w in ws) + ")"


def bword(words: list[str] | tuple[str, ...], *, prefix: bool = False) -> str:
    """Alternation with script-independent boundaries (CJK words need none). ``prefix``:
    the word may continue (stems such as "genehmig")."""
    latin = [w for w in words if not _CJK_LIKE.search(w)]
    cjk = [w for w in words if _CJK_LIKE.search(w)]
    parts = []
    if latin:
        parts.append(B + alt(latin) + ("" if prefix else E))
    if cjk:
        parts.append(alt(cjk))
    return "(?:" + "|".join(parts) + ")"


def leads(words: list[str] | tuple[str, ...], *, prefix: bool = False):  # noqa: ANN201
    """Lead keywords for the engine: (regex, needles, label word). ASCII words need their
    longest ASCII token in the text; other words the literal (found by the engine's
    non-ASCII needle scan)."""
    out = []
    for w in sorted(set(words)):
        rx = regex.escape(w).replace(r"\ ", r"\s").replace(" ", r"\s")
        if not _CJK_LIKE.search(w):
            rx = B + rx + ("" if prefix else E)
        if w.isascii():
            toks = regex.findall(r"[a-z0-9]+", w)
            needle = max(toks, key=len) if toks else w
            if prefix:  # a stem is not a whole token: look for the literal instead
                needle = "~" + w
        else:
            needle = w
        out.append((rx, (needle,), w[:14]))
    return out


def _ok(words) -> bool:  # noqa: ANN001
    return bool(words)


def need(*lists) -> list[list[str]]:  # noqa: ANN002
    """Gate groups: for each word list, one of its words (as a stem) must occur in the text,
    so a rule whose second keyword is absent never runs."""
    return [["~" + w for w in words] for words in lists]


def register(lang: str, d: dict) -> None:
    """Register every family's rules for one language from its word lists ``d``."""
    ov = d.get("order", "VO")

    # override_instructions: IGNORE … INSTRUCTIONS (or INSTRUCTIONS … IGNORE for OV)
    if _ok(d.get("ignore")) and _ok(d.get("instr")):
        if ov == "VO":
            add_rule("override_instructions", "{lead} … instructions",
                 r"⟨LEAD⟩" + G + r"{0,40}?" + bword(d["instr"], prefix=True), gate=need(d["instr"]),
                 leads=leads(d["ignore"], prefix=d.get("stem", False)), lang=lang, neg=True)
        else:
            add_rule("override_instructions", "{lead} … ignore",
                 r"⟨LEAD⟩" + G + r"{0,24}?" + bword(d["ignore"], prefix=True), gate=need(d["ignore"]),
                 leads=leads(d["instr"], prefix=True), lang=lang, neg=True)

    # direct_command: AI … APPROVE … NOW / AI … NOW … APPROVE (addressed to the model)
    if _ok(d.get("addr")) and _ok(d.get("approve")) and _ok(d.get("urgent")):
        ap, ur = bword(d["approve"], prefix=True), bword(d["urgent"], prefix=True)
        add_rule("direct_command", "{lead} … approve … now",
             r"⟨LEAD⟩" + G + r"{0,60}?(?:" + ap + G + r"{0,40}?" + ur + "|" + ur + G + r"{0,40}?" + ap + ")",
             gate=need(d["approve"], d["urgent"]), leads=leads(d["addr"]), lang=lang, neg=True)

    # role_marker: YOU ARE NOW … ADMIN
    if _ok(d.get("you_now")) and _ok(d.get("roles")):
        add_rule("role_marker", "{lead} … (role)",
             r"⟨LEAD⟩" + G + r"{0,40}?" + bword(d["roles"], prefix=True), gate=need(d["roles"]),
             leads=leads(d["you_now"]), lang=lang)

    # exfiltration: SECRET … <email|url> (sending a credential somewhere)
    if _ok(d.get("cred")):
        add_rule("exfiltration", "{lead} … <address>",
             r"⟨LEAD⟩" + G + r"{0,80}?" + EMAIL,
             gate=[("@", "http", "https")], leads=leads(d["cred"], prefix=True), lang=lang, neg=True)

    # exfiltration_to_address: DATA … <email|url>
    if _ok(d.get("data")):
        add_rule("exfiltration_to_address", "{lead} … <address>",
             r"⟨LEAD⟩" + G + r"{0,80}?" + EMAIL,
             gate=[("@", "http", "https")], leads=leads(d["data"], prefix=True), lang=lang, neg=True)

    # prompt_reveal: REVEAL … SYSTEM PROMPT (or PROMPT … REVEAL for OV languages)
    if _ok(d.get("reveal")) and _ok(d.get("prompt")):
        pr, rv = bword(d["prompt"], prefix=True), bword(d["reveal"], prefix=True)
        add_rule("prompt_reveal", "{lead} … system prompt",
             r"⟨LEAD⟩" + G + r"{0,40}?" + pr, gate=need(d["prompt"]),
             leads=leads(d["reveal"], prefix=True), lang=lang, neg=True)
        add_rule("prompt_reveal", "{lead} … reveal",
             r"⟨LEAD⟩" + G + r"{0,30}?" + rv, gate=need(d["reveal"]),
             leads=leads(d["prompt"], prefix=True), lang=lang, neg=True)

    # persona_jailbreak: (you|from now on|enable) … NO RESTRICTIONS / DEVELOPER MODE
    if _ok(d.get("jb")):
        cue = d.get("jb_cue", [])
        if cue:
            add_rule("persona_jailbreak", "{lead} … developer mode",
                 r"⟨LEAD⟩" + G + r"{0,50}?" + bword(d["jb"], prefix=True), gate=need(d["jb"]),
                 leads=leads(cue), lang=lang, neg=True)
            add_rule("persona_jailbreak", "{lead} … (you)",
                 r"⟨LEAD⟩" + G + r"{0,40}?" + bword(cue), gate=need(cue),
                 leads=leads(d["jb"], prefix=True), lang=lang, neg=True)
    if _ok(d.get("jb_strong")):  # phrases that are jailbreaks on their own
        add_rule("persona_jailbreak", "{lead} … (jailbreak)", r"⟨LEAD⟩",
             leads=leads(d["jb_strong"]), lang=lang)

    # tool_call: CALL … tool_name (tool|function|now|<address>) / tool_name … CALL (OV)
    if _ok(d.get("call")):
        tw = bword(d.get("tool_word", ["tool"]), prefix=True)
        add_rule("tool_call", "{lead} … <tool>",
             r"⟨LEAD⟩" + G + r"{0,25}?" + B + IDENT + r"(?:\(|" + G + r"{0,25}?" + tw + "|"
             + G + r"{0,80}?" + EMAIL + ")",
             leads=leads(d["call"], prefix=d.get("stem", False)), lang=lang, neg=True)
        if ov == "OV":  # "调用 delete_file", "delete_file ツールを呼び出して"
            add_rule("tool_call", "{lead} … <tool>",
                 r"⟨LEAD⟩" + G + r"{0,12}?" + B + IDENT,
                 leads=leads(d["call"], prefix=True), lang=lang, neg=True)
            add_rule("tool_call", "<tool> … {lead}",
                 r"(?<=" + B + IDENT + G + r"{0,20})⟨LEAD⟩",
                 gate=[("_",)], leads=leads(d["call"], prefix=True), lang=lang, neg=True)

    # canary_token: TOKEN … END OF ANSWER / ANSWER … TOKEN
    if _ok(d.get("token")) and _ok(d.get("answer")):
        an, tk = bword(d["answer"], prefix=True), bword(d["token"], prefix=True)
        add_rule("canary_token", "{lead} … answer",
             r"⟨LEAD⟩" + G + r"{0,60}?" + an, gate=need(d["answer"]),
             leads=leads(d["token"], prefix=True), lang=lang, neg=True)
        add_rule("canary_token", "{lead} … token",
             r"⟨LEAD⟩" + G + r"{0,40}?" + tk, gate=need(d["token"]),
             leads=leads(d["answer"], prefix=True), lang=lang, neg=True)
    if _ok(d.get("append")) and _ok(d.get("every_answer")):
        add_rule("canary_token", "{lead} … every answer",
             r"⟨LEAD⟩" + G + r"{0,60}?" + bword(d["every_answer"]), gate=need(d["every_answer"]),
             leads=leads(d["append"], prefix=True), lang=lang, neg=True)

    # fake_reasoning: ASSISTANT'S REASONING: … I WILL / APPROVE
    if _ok(d.get("reasoning")) and _ok(d.get("decide")):
        add_rule("fake_reasoning", "{lead} … decision",
             r"⟨LEAD⟩" + G + r"{0,15}?:" + GW + r"{0,160}?" + bword(d["decide"], prefix=True),
             gate=need(d["decide"]), leads=leads(d["reasoning"], prefix=True), lang=lang)

    # ai_comment: "<!--" / "//" … for the AI:
    if _ok(d.get("to_ai")):
        add_rule("ai_comment", "comment … {lead}",
             r"(?<=(?:<!--|/\*|//|(?:^|\n)#)" + G + r"{0,40})⟨LEAD⟩",
             gate=[("<!--", "/*", "//", "#")], leads=leads(d["to_ai"]), lang=lang)
