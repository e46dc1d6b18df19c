"""What a model is asked to return, and the vocabulary it may use.

The model answers in one JSON object: a verdict, a recommended action, and claims, each with
its text, epistemic status and the evidence ids it rests on. The verdicts are ctx's own; the
actions are the playbook's (its decision rules and fallbacks). The schema is sent as the
endpoint's JSON-schema response format when it accepts one; the same contract is stated in
plain words in the answer-format message, so a model without structured output can answer
in a fenced ```json block.
"""

from __future__ import annotations

from typing import Any

VERDICTS = ("complete", "partial", "conflicting_evidence", "insufficient_evidence", "refused")
STATUSES = ("fact", "inference", "hypothesis", "unknown")
MODEL_ANSWER_SCHEMA = "ctx.model_answer/1"


def actions(pb) -> list[str]:
    """The playbook's action vocabulary, in a stable order."""
    acts = [r.action for r in pb.decision.rules] + [pb.decision.default_action, pb.decision.on_insufficient,
                                                     pb.decision.on_conflict]
    return sorted(set(acts))


def json_schema(action_vocab: list[str]) -> dict[str, Any]:
    """The JSON schema of a model answer (strict: every property required, no extras)."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["verdict", "recommended_action", "summary", "claims"],
        "properties": {
            "verdict": {"type": "string", "enum": list(VERDICTS)},
            "recommended_action": {"type": "string", "enum": list(action_vocab)},
            "summary": {"type": "string"},
            "claims": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["text", "status", "evidence"],
                    "properties": {
                        "text": {"type": "string"},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "evidence": {"type": "array", "items": {"type": "string"}},
                    },
                },
            },
        },
    }


def format_message(action_vocab: list[str]) -> str:
    """The answer-format message sent after the rendered context (the third message)."""
    return (
        "## Answer format [kind: contract · trust: ctx]\n\n"
        "Reply with one JSON object and nothing else (a single ```json fenced block is accepted):\n"
        '{"verdict": "...", "recommended_action": "...", "summary": "...", '
        '"claims": [{"text": "...", "status": "...", "evidence": ["ev-..."]}]}\n\n'
        f"- verdict: one of {', '.join(VERDICTS)}.\n"
        f"- recommended_action: one of {', '.join(action_vocab)}.\n"
        f"- status of a claim: one of {', '.join(STATUSES)}; a claim that is not unknown cites at least one "
        "evidence id (`ev-…`) from the evidence above, and only such ids.\n"
        "- Every number, date, identifier and version in a claim must appear in the evidence it cites.\n"
    )
