"""Embedders: the model in this process, loaded on first use (the library, ``memsift bench``).

Hooks never load the model themselves: they reach a warm process instead.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from ..types import Vectors
from .model import PACKAGED, EmbeddingModel


@functools.lru_cache(maxsize=2)
def _loaded(folder: str | None) -> EmbeddingModel:
    """One model a process: loading costs about a second, its vectors never change."""
    return EmbeddingModel.load(folder)


class InProcessEmbedder:
    """The model run in this process, loaded on the first ``embed``.

    >>> InProcessEmbedder().embed(["the worker OOMs nightly"]).shape
    (1, 384)
    """

    remote = False

    def __init__(self, folder: str | None = None) -> None:
        self._folder = folder
        self.name = PACKAGED if folder is None else _loaded(folder).name

    def embed(self, texts: Sequence[str]) -> Vectors:
        return _loaded(self._folder).embed(texts)
