"""The stages: small callables, one job each, composed into the two paths.

The recall path's stages are in ``stages.recall``, the retain path's in
``stages.retain``, what every stage shares in ``stages.path``; all are
named here. A pipeline is a plain list of stages::

    quiet_or_notes = [redact, classify, notes, render]
    recall(message, services, stages=quiet_or_notes)
"""

from __future__ import annotations

from .._bounds import RECENT_TURNS
from ..config import Config
from .path import _Path
from .brief import (
    BRIEF_HEADER, BRIEF_STAGES, brief_line, choose_facts, read_facts, record_brief, render_brief, screen_facts,
)
from .path import (
    Briefing, EndPath, Keep, PathState, Sift, Stage, ask, call_service, decision_state, is_remote,
    scrubber, stage_name,
)
from .recall import (
    ANSWERS, EVERY_MESSAGE_STAGES, HEADER, ITEM_CHARS, KIND_OPTIONS, RECALL_STAGES, WORTH, already_said,
    answers_threshold, classify, dedupe, gate, judge, notes, redact, render, search, search_query, take_all,
)
from .retain import (
    KEEP_OPTIONS, MAX_CLAUSES, NOVEL_CANDIDATES, NOVEL_OPTIONS, NOVEL_OVERLAP, RETAIN_STAGES, append_notes, catch_up,
    distill, embed_kept, flush, keep, line_number, novel, passage, redact_exchange, revise, screen_exchange, sync,
)

__all__ = [
    "ANSWERS",
    "BRIEF_HEADER",
    "BRIEF_STAGES",
    "EVERY_MESSAGE_STAGES",
    "HEADER",
    "ITEM_CHARS",
    "KEEP_OPTIONS",
    "KIND_OPTIONS",
    "MAX_CLAUSES",
    "NOVEL_CANDIDATES",
    "NOVEL_OPTIONS",
    "NOVEL_OVERLAP",
    "RECALL_STAGES",
    "RECENT_TURNS",
    "RETAIN_STAGES",
    "WORTH",
    "Briefing",
    "EndPath",
    "Keep",
    "PathState",
    "Sift",
    "Stage",
    "already_said",
    "answers_threshold",
    "append_notes",
    "ask",
    "brief_line",
    "call_service",
    "catch_up",
    "choose_facts",
    "classify",
    "decision_state",
    "dedupe",
    "distill",
    "embed_kept",
    "flush",
    "gate",
    "is_remote",
    "judge",
    "keep",
    "line_number",
    "notes",
    "novel",
    "passage",
    "read_facts",
    "record_brief",
    "redact",
    "redact_exchange",
    "render",
    "render_brief",
    "revise",
    "screen_exchange",
    "screen_facts",
    "scrubber",
    "search",
    "search_query",
    "stage_name",
    "sync",
    "take_all",
]


LOCAL_WORK = 1.0  # seconds a recall stage may spend on its own work (redacting, reading notes), past its services'
# Retain runs detached, and what it keeps must not be dropped for being slow: its stages wait their
# turn at the notes' lock while other hooks write. Bounded all the same, should a holder hang.
RETAIN_WORK = 30.0
# The services each built-in stage calls, whose deadlines its budget adds; a stage not named here
# (one of the user's) may call either.
CALLS: dict[Stage, tuple[str, ...]] = {
    redact: (), classify: ("decider",), notes: ("decider",), gate: ("decider",), search: ("store",),
    take_all: (), judge: ("decider",), dedupe: (), render: (), catch_up: ("store",), redact_exchange: (),
    screen_exchange: (),
    keep: ("decider",), distill: ("decider",), novel: ("decider",), append_notes: (), revise: (),
    sync: ("store",), embed_kept: (),
    read_facts: (), screen_facts: (), choose_facts: (), render_brief: (), record_brief: (),
}


def budget(stage: Stage, config: Config, state: _Path) -> float:
    """Seconds the runner gives ``stage``: its own work, and the deadline of each service it calls."""
    deadlines = {"decider": config.decider_deadline, "store": config.store_deadline}
    try:
        calls = CALLS.get(stage, ("decider", "store"))
    except TypeError:  # a stage that cannot be a key: one of the user's
        calls = ("decider", "store")
    own = RETAIN_WORK if isinstance(state, Keep) else LOCAL_WORK
    return own + sum(deadlines[name] for name in calls)

