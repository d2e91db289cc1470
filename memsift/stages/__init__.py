"""The stages: small callables, one job each, composed into the three paths.

The brief's stages are in ``stages.brief``, the recall path's in
``stages.recall``, the retain path's in ``stages.retain``, what every stage
shares in ``stages.path``; all are named here. A pipeline is a plain list of stages::

    quiet_or_notes = [redact, classify, notes, render]
    recall(message, services, stages=quiet_or_notes)
"""

from __future__ import annotations

from .._runtime.bounds import RECENT_TURNS
from .brief import (
    BRIEF_HEADER, BRIEF_STAGES, brief_line, choose_facts, read_facts, record_brief, render_brief, screen_facts,
)
from .path import (
    Briefing, EndPath, Keep, PathState, Sift, Stage, State, ask, call_service, decision_state, is_remote, scrubber,
    session_of, stage_name,
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
    "State",
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
    "session_of",
    "stage_name",
    "sync",
    "take_all",
]


# Seconds a stage may spend on its own work (redacting, reading the notes), past the deadlines of the
# service calls it makes (``call_service`` adds each one's to its time).
LOCAL_WORK = 1.0
# Retain runs detached, and what it keeps must not be dropped for being slow: its stages wait their
# turn at the notes' lock while other hooks write. Bounded all the same, should a holder hang.
RETAIN_WORK = 30.0
