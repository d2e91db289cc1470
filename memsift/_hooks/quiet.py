"""A quiet message, told apart without the pipeline: the hot path of every hook.

Most messages need no memory, and the recall path's ``classify`` stage says
so first. This decides the same thing the same way (the same redaction, the
embedded decider's kind head and weights, the same ``search_threshold``)
with the standard library alone: no attrs, no services, so a hook can stop
here, at a fraction of the cost. Anything it cannot be sure of (a remote
decider or store, whose health the pipeline reports; settings it cannot
read) answers False and leaves the message to the pipeline.

>>> surely_quiet("thanks, that works!")
True
>>> surely_quiet("why did we pick Stripe over Mollie?")
False
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .._fs.home import default_home
from .._words.kinds import SEARCH_THRESHOLD, Kind
from .._fs.trust import home_not_yours

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from typing import Any


def surely_quiet(text: str, environ: Mapping[str, str] | None = None) -> bool:
    """True when recall would end at ``classify`` with nothing: a kind that needs no memory."""
    threshold = _embedded_threshold(os.environ if environ is None else environ)
    return threshold is not None and searching_probability(text) < threshold


def searching_probability(text: str) -> float:
    """The summed probability of the searching kinds for the redacted *text*, as ``classify`` sums it."""
    from .._runtime.bounds import MESSAGE_CHARS, bounded
    from ..decider import _weights
    from ..decider._features import text_features
    from ..decider._heads import TextHead
    from ..redact import PatternRedactor

    header, tables = _weights.load(_weights.SHIPPED)
    # Read as the redact stage reads it: the head and tail of a long paste, redacted.
    probabilities = TextHead(header["heads"]["kind"], tables["kind"]).probabilities(
        text_features(bounded(text, MESSAGE_CHARS, PatternRedactor().redact)))
    # As the decider answers a Choice of every kind: renormalised over them, in their order.
    asked = {kind: probabilities.get(kind, 0.0) for kind in Kind}
    total = sum(asked.values()) or 1.0
    return sum(p / total for kind, p in asked.items() if kind.searches)


def _embedded_threshold(environ: Mapping[str, str]) -> float | None:
    """``search_threshold`` when every question goes to the embedded decider and the store is the
    embedded one; None otherwise, or when a setting does not read or the home is not the user's
    own (the pipeline then runs, and says what is wrong).

    As ``load_config`` reads it: the default, then ``config.toml`` (its ``[embedded]`` table over
    its top level), then ``MEMSIFT_SEARCH_THRESHOLD``.
    """
    settings: dict[str, Any] = {}
    home = default_home(environ)
    config_file = home / "config.toml"
    if home_not_yours(home):
        return None  # someone else's: the pipeline says so, and reads nothing of it
    if config_file.is_file():
        import tomllib

        try:
            settings = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # TOMLDecodeError and UnicodeDecodeError are ValueErrors
            return None
    table = settings.get("embedded", {})
    if not isinstance(table, dict):
        return None
    if "search_threshold" in table:
        settings["search_threshold"] = table["search_threshold"]
    for name in ("decider", "decider_by_task", "store", "search_threshold"):
        if f"MEMSIFT_{name.upper()}" in environ:
            settings[name] = environ[f"MEMSIFT_{name.upper()}"]
    if (settings.get("decider", "embedded") != "embedded" or settings.get("decider_by_task")
            or settings.get("store", "embedded") != "embedded"):
        return None
    value = settings.get("search_threshold", SEARCH_THRESHOLD)
    try:
        threshold = float(value) if not isinstance(value, bool) else -1.0
    except (TypeError, ValueError):
        return None
    return threshold if 0 <= threshold <= 1 else None
