"""What a user message is: eleven kinds, five of which call for no memory.

Apart from ``types.py`` (which re-exports them) because a hook's quiet path
reads them without paying for attrs.

>>> Kind("reaction").searches
False
>>> sorted(k.value for k in ASKING_KINDS)
['earlier_exchange', 'past_choice', 'resuming_work']
"""

from __future__ import annotations

import enum

# The default of Config.search_threshold: a message searches when the summed probability of
# the six searching kinds reaches it.
SEARCH_THRESHOLD = 0.4


class Kind(enum.StrEnum):
    """What a user message is. Five kinds call for no search, six do."""

    REACTION = "reaction"
    ACTION_ON_FINISHED_WORK = "action_on_finished_work"
    COMPLETE_INSTRUCTION = "complete_instruction"
    GENERAL_KNOWLEDGE = "general_knowledge"
    CONVERSATION_QUESTION = "conversation_question"
    NEW_DECISION = "new_decision"
    PAST_CHOICE = "past_choice"
    RESUMING_WORK = "resuming_work"
    RECURRING_PROBLEM = "recurring_problem"
    BUILDS_ON_EXISTING = "builds_on_existing"
    EARLIER_EXCHANGE = "earlier_exchange"

    @property
    def searches(self) -> bool:
        """True for the six kinds that check memory."""
        return self in SEARCHING_KINDS

    @property
    def asks_memory(self) -> bool:
        """True for the three kinds that ask about memory itself: an earlier choice, an earlier
        session, work left off. Their answer can only be in memory."""
        return self in ASKING_KINDS


QUIET_KINDS = frozenset({
    Kind.REACTION, Kind.ACTION_ON_FINISHED_WORK, Kind.COMPLETE_INSTRUCTION,
    Kind.GENERAL_KNOWLEDGE, Kind.CONVERSATION_QUESTION,
})
SEARCHING_KINDS = frozenset(Kind) - QUIET_KINDS
ASKING_KINDS = frozenset({Kind.PAST_CHOICE, Kind.EARLIER_EXCHANGE, Kind.RESUMING_WORK})
