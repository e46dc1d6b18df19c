"""What identifies the injection detector (``ctxcli.injection``): recorded in pack.json
(``detector``) by every gated run and shown by ``ctx scan``. Constants only, and outside the
``injection`` package (whose import registers and prepares every rule), so a run that records
them without scanning anything loads nothing of the detector.

``VERSION`` names the detector's code (views, decoders, filters, the decision rule) and is
raised by hand with any change of them; ``RULES_SHA256`` is the digest of the registered
pattern rules (:func:`.engine.rules_digest`, checked by a test, so a changed rule cannot ship
under the old digest); the learned layer is named by its model, version, weights sha256
(checked when the weights are loaded) and threshold. ``INTENT_WORDS_SHA256`` is the digest of
the intent layer's word lists and role-header pattern (:func:`.intent_words.words_digest`,
checked by a test): the intent weights' sha256 does not cover them. It is part of
:func:`verdict_identity` (what a stored or memoised verdict was computed by), not of the
pack's ``detector`` record (whose bytes stay as they were; ``VERSION`` is raised with a list
change anyway)."""

from __future__ import annotations

from typing import Any

VERSION = "ctx-injection/6"
RULES_SHA256 = "0de616705107a8de3aa79b1d320087fbdc28193613339c4098d49bb34bc6a901"

MODEL = "ngram-lr"
MODEL_VERSION = "2"
LEARNED_NAME = f"learned:{MODEL}@{MODEL_VERSION}"
WEIGHTS_SHA256 = "9bd1c90a4e58315ffae86aa41b22d5cb4487b5b790dd2fc3c7e90d3b7f45cef0"
THRESHOLD = 0.93   # chosen on the validation side (train_learned.py THRESHOLD_RULE)

INTENT_MODEL = "intent-lr"
INTENT_VERSION = "3"
INTENT_NAME = f"learned:{INTENT_MODEL}@{INTENT_VERSION}"
INTENT_SHA256 = "aa0d6110864ad99088a17305de542f7e1d98027661243c8878e007ef891ea0c4"
INTENT_THRESHOLD = 0.79  # chosen on the training side (tests/data/injection/train_intent.py)
INTENT_WORDS_SHA256 = "d80ed3c649ebf7c35fd7fb3e6a18ff442a3b6865196b21084dc3c83707d3fddc"


def identity() -> dict[str, Any]:
    """The ``detector`` record of a pack and of ``ctx scan --json``."""
    return {"version": VERSION, "rules_sha256": RULES_SHA256,
            "learned": {"name": LEARNED_NAME, "model": MODEL, "version": MODEL_VERSION,
                        "weights_sha256": WEIGHTS_SHA256, "threshold": THRESHOLD},
            "intent": {"name": INTENT_NAME, "model": INTENT_MODEL, "version": INTENT_VERSION,
                       "weights_sha256": INTENT_SHA256, "threshold": INTENT_THRESHOLD}}


def verdict_identity() -> str:
    """sha256 (hex) of everything a verdict depends on besides the scanned text: every field of
    :func:`identity` and the intent word lists' digest. Read at each call (a changed constant
    changes it at once). Stored beside each verdict computed at load (``injection_verdicts``,
    load/verdicts.py); a stored verdict is used only while it equals the running detector's."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps([identity(), INTENT_WORDS_SHA256], sort_keys=True,
                                     separators=(",", ":")).encode()).hexdigest()
