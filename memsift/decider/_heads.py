"""A linear head over hashed text features, the embedded decider's building block.

Apart from ``embedded.py`` because a hook's quiet path classifies a message
with the kind head alone (``memsift._hooks.quiet``), without the library's types.

>>> head = TextHead(header["heads"]["kind"], tables["kind"])
>>> head.probabilities(text_features("thanks!"))["reaction"]
0.97
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sized

from ._features import BUCKETS

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from typing import Any


class TextHead:
    """A linear head over hashed text features: softmax over classes, or one logistic."""

    def __init__(self, spec: Mapping[str, Any], table: array[Any]) -> None:
        self.classes: list[str] = spec["classes"]
        self.bias: list[float] = spec["bias"]
        self.scale: float = spec["scale"]
        self.table = table
        check_length(f"the {'/'.join(self.classes)} head's biases", self.bias, len(self.classes))
        check_length(f"the {'/'.join(self.classes)} head's table", table, BUCKETS * len(self.classes))

    def logits(self, feats: Mapping[int, float]) -> list[float]:
        k, table, scale = len(self.classes), self.table, self.scale
        out = list(self.bias)
        for index, value in feats.items():
            base = index * k
            for c in range(k):
                out[c] += value * scale * table[base + c]
        return out

    def probabilities(self, feats: Mapping[int, float]) -> dict[str, float]:
        logits = self.logits(feats)
        if len(logits) == 1:
            return {self.classes[0]: sigmoid(logits[0])}
        return softmax(dict(zip(self.classes, logits, strict=True)))


def check_length(what: str, values: Sized, expected: int) -> None:
    """A weights file built for other features is refused, not read truncated."""
    if len(values) != expected:
        raise ValueError(f"{what} hold {len(values)} values where this memsift reads {expected}: "
                         "the weights file was built for another version")


def softmax(logits: Mapping[str, float]) -> dict[str, float]:
    """Probabilities of each option from its logit (shifted by the largest: no overflow)."""
    top = max(logits.values())
    exps = {option: math.exp(x - top) for option, x in logits.items()}
    total = sum(exps.values())
    return {option: e / total for option, e in exps.items()}


_EDGE = 1e-6  # a probability of exactly 0 or 1 has no logit


def logit(p: float) -> float:
    p = min(max(p, _EDGE), 1 - _EDGE)
    return math.log(p / (1 - p))


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))

