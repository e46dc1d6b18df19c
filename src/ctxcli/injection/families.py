"""Pattern families: each has a stable id, named in the trace (``detail.pattern``), by
``ctx explain-omissions`` and by ``ctx scan``. Do not rename an id; add new ones."""

from __future__ import annotations

FAMILIES: dict[str, str] = {
    "override_instructions": "tells the model to ignore, forget or bypass its instructions or rules",
    "role_marker": "impersonates a system/role marker or assigns the model a new role",
    "direct_command": "orders the model to approve, pay, roll back, delete ... now",
    "exfiltration": "asks for passwords, keys or the system prompt to be revealed or sent",
    "fake_delimiter": "fakes the end of the data or a new turn (### END OF INPUT ###, </user>)",
    "ai_comment": "a comment (HTML, Markdown, code) addressed to an AI or model",
    "prompt_reveal": "asks the model to reveal its prompt, instructions or context",
    "persona_jailbreak": "jailbreak framing: no restrictions, developer mode, DAN, role play",
    "tool_call": "instructs the model to call a tool or function (delete_file, http_post ...)",
    "exfiltration_to_address": "asks for data to be sent to an e-mail address or URL",
    "canary_token": "asks the model to append or echo a token, code word or marker",
    "fake_reasoning": "text written as the assistant's own reasoning, thought or memory",
}

PATTERN_IDS: tuple[str, ...] = tuple(FAMILIES)
