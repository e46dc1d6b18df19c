"""Static text embeddings for the vector channel (docs/eval.md, docs/performance.md).

The model is pinned: ``wordllama==0.4.0.post1``, configuration ``l2_supercat`` at 256
dimensions, whose tokenizer JSON and fp16 weights ship inside the wheel. ctx reads those two
files itself (the ``wordllama`` package is never imported, so none of its download paths can
run): a text's vector is the L2-normalised sum of its tokens' rows. The model's identity
(name, version, sha256 of the weights file) is recorded in the store and in every pack.
"""

from .model import DIM, MODEL_NAME, Model, cjk_share, load_model, model_identity

__all__ = ["DIM", "MODEL_NAME", "Model", "cjk_share", "load_model", "model_identity"]
