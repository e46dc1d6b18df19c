"""Language-independent rules: fake turn/delimiter markers and role markers written in any
of the supported languages ("[SISTEMA]", "【システム】", "### END OF USER INPUT ###")."""

from __future__ import annotations

from .engine import add_rule
from .lang._templates import G, GW, alt

_SYSTEM = ["system", "système", "systeme", "sistema", "система", "システム", "시스템", "系统",
           "系統"]
# [SISTEMA] / 【システム】 / <SYSTEM> / [СИСТЕМА] …
add_rule(
    "role_marker", "[system] … marker (any language)",
    r"[\[【<]\s?" + alt(_SYSTEM) + r"(?:\s?(?:message|prompt|nachricht|mensaje|messaggio"
    r"|mensagem|message système|сообщение|メッセージ|메시지|消息|提示))?\s?[\]】>]"
    r"(?=\s?[^\s\d])",
    gate=[("[", "【", "<")], lang="any",
)
# "### SISTEMA:" / "### SYSTEM OVERRIDE" at the start of a line
add_rule(
    "role_marker", "### system: … (any language)",
    r"(?<=(?:^|\n)[#=*>\-\s]{0,4})#{2,6}\s?" + alt(_SYSTEM) + r"(?:\s?(?:override|prompt|message))?\s?:",
    gate=[("#",)], lang="any",
)

_END = (
    r"(?:end|begin|start|fin|fine|fim|ende|конец|終わり|끝|结束|結束)\s?(?:of\s|de\s|del\s|des\s|der\s|da\s|do\s|della\s|dell')?"
    r"(?:the\s)?(?:user|customer|client|untrusted|external|retrieved|kunden|utilisateur|usuario|utente"
    r"|usuário|пользователя)?\s?(?:input|message|data|document|context|email|e-mail|text|content"
    r"|prompt|conversation|entrada|mensaje|messaggio|mensagem|eingabe|nachricht|entrée|ввода"
    r"|сообщения|入力|입력|输入|輸入)s?"
)
# ### END OF USER INPUT ### / === END OF CUSTOMER MESSAGE === then a role line
add_rule(
    "fake_delimiter", "### end of input … marker",
    r"(?<![#=*\-])(?:#{2,8}|={2,8}|-{3,8}|\*{3,8}|\[|<)\s?" + _END + r"\s?(?:#{2,8}|={2,8}|-{3,8}|\*{3,8}|\]|>)"
    r"(?=" + GW + r"{0,80}?(?:system|assistant|admin|instructions?|sistema|système|система"
    r"|システム|시스템|系统|ai)\s?[:\]>])",
    gate=[("#", "==", "---", "***", "[", "<")], lang="any",
)
# </user_message> <system> / </document> … system:
add_rule(
    "fake_delimiter", "</user> … <system>",
    r"</\s?(?:user|user_input|user_message|human|customer|document|data|context|email|input"
    r"|untrusted|retrieved|evidence|message)>(?=" + GW + r"{0,80}?(?:<\s?(?:system|assistant"
    r"|admin|instructions?)\s?>|(?:^|\n)\s?(?:system|assistant|admin)\s?:))",
    gate=[("</",)], lang="any",
)
# Chat-template turn markers the core rules do not know: three rules of one label and gate, each
# an alternative of what was one alternation (apart, each is scanned from its own first
# characters: one alternation whose third branch begins at any line start was scanned at every
# position, the three apart in a quarter of the time)
_TURN_GATE = [("<|", "[", "human", "user", "assistant")]
add_rule(
    "fake_delimiter", "<|turn|> … token",
    r"<\|(?:system|user|assistant|end|endofturn|start|turn|channel|message|tool|ipython)\|>",
    gate=_TURN_GATE, lang="any",
)
add_rule(
    "fake_delimiter", "<|turn|> … token",
    r"\[/?(?:sys|system_prompt|tool_call|tool_result|assistant|user)\]",
    gate=_TURN_GATE, lang="any",
)
add_rule(
    "fake_delimiter", "<|turn|> … token",
    r"(?:^|\n)\s?(?:human|user|assistant|ai)\s?:\s?" + G + r"{0,60}?(?:\n|^)\s?(?:system|assistant)\s?:",
    gate=_TURN_GATE, lang="any",
)
