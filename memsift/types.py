"""The vocabulary of memsift, in one page.

Every value the library passes around is a small frozen attrs class, and every
seam (what decides, stores, keeps notes, revises, redacts) is a
``typing.Protocol``: the embedded backends, the remote ones and the test
doubles all implement the same seam, so the pipelines run the same code
whatever sits behind it.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from attrs import field, frozen

# The kinds live in _words/kinds.py, light enough for a hook's quiet path; they are part of this vocabulary.
from ._words.kinds import ASKING_KINDS as ASKING_KINDS
from ._words.kinds import QUIET_KINDS as QUIET_KINDS
from ._words.kinds import SEARCHING_KINDS as SEARCHING_KINDS
from ._words.kinds import Kind as Kind


class Category(enum.StrEnum):
    """Why an exchange is kept (the first three) or dropped (the rest)."""

    DECISION = "decision"
    CONSTRAINT = "constraint"
    INCIDENT = "incident"
    REACTION = "reaction"
    ONE_OFF = "one_off"
    UI_DETAIL = "ui_detail"
    HABIT = "habit"
    GENERAL = "general"

    @property
    def kept(self) -> bool:
        return self in KEEP_CATEGORIES


KEEP_CATEGORIES = frozenset({Category.DECISION, Category.CONSTRAINT, Category.INCIDENT})


@frozen
class Turn:
    """One turn of the conversation, its ``role`` (``"user"`` or ``"assistant"``) and ``text``:
    ``Turn("user", "ship it")``."""

    role: Literal["user", "assistant"]
    text: str


def _turns(turns: Iterable[Turn]) -> tuple[Turn, ...]:
    """Any iterable of turns, kept as a tuple (a typed converter: a checker sees what ``Message`` takes)."""
    return tuple(turns)


@frozen
class Message:
    """A user message: its ``text``, the ``conversation`` before it (turns, oldest first) and the
    ``session`` it belongs to ('' for none: nothing is remembered per session).

    >>> Message("why did we pick Stripe?", (Turn("user", "payments next"),), session="s1")
    """

    text: str
    conversation: tuple[Turn, ...] = field(default=(), converter=_turns)
    session: str = ""


@frozen
class Exchange:
    """One ``user`` message and the agent's answer (``assistant``), in a ``session``: what retain
    decides on. ``Exchange("the worker OOMs nightly", "capped the heap at 1.5 GB", "s1")``"""

    user: str
    assistant: str
    session: str = ""


@frozen
class Item:
    """A memory item: a line of the notes or a passage of the store.

    ``id`` names it once for all (a note's, or ``ex-…`` for an exchange memsift kept); ``origin``
    says whether it is a ``"note"`` or a store's ``"passage"``; ``source`` points a reader to where
    it came from (``notes.md:12``, ``cognee:memsift``); ``score`` is the retrieval score, when
    there is one (the judged probability once judged).
    An item memsift kept itself has its fact line as ``text`` (what is judged
    and shown) and the whole exchange it was distilled from as ``exchange``
    (``memsift show <id>`` prints it); '' for any other item.
    """

    id: str
    text: str
    origin: Literal["note", "passage"]
    source: str
    score: float = 0.0
    exchange: str = ""


# -- the decider's questions and answers (the shape of Jev's System One API) --

@frozen
class Noul:
    """A yes/no question; answered with the probability of yes.

    ``task`` names what memsift asks (``"answers"``, ``"worth"``...), so an
    embedded model can dispatch on it; ``instructions`` is what a hosted model
    reads; ``criteria`` (``{"true": ..., "false": ...}``) says when each answer holds.
    ``type`` tells the question types apart on the wire.
    """

    task: str
    instructions: str | Mapping[str, Any]
    criteria: Mapping[str, str] | None = None
    type: Literal["noul"] = "noul"


@frozen
class Choice:
    """Pick one of ``options`` (option -> what it means, or None); answered with a choice,
    probabilities and confidence. ``task``, ``instructions`` and ``type`` as for ``Noul``."""

    task: str
    instructions: str | Mapping[str, Any]
    options: Mapping[str, str | None]
    type: Literal["choice"] = "choice"


def _levels(levels: Iterable[str]) -> tuple[str, ...]:
    return tuple(levels)


@frozen
class Score:
    """Place the state on ordered ``levels`` (2 to 10, lowest first); answered with a level score.
    ``task``, ``instructions`` and ``type`` as for ``Noul``."""

    task: str
    instructions: str | Mapping[str, Any]
    levels: tuple[str, ...] = field(converter=_levels)
    type: Literal["score"] = "score"


Question = Noul | Choice | Score


@frozen
class NoulAnswer:
    """A ``Noul``'s answer: ``noul``, the probability of yes (``type`` tells answers apart on the wire)."""

    noul: float
    type: Literal["noul"] = "noul"


@frozen
class ChoiceAnswer:
    """A ``Choice``'s answer: the ``choice`` made, the ``probabilities`` of every option (summing to 1)
    and the ``confidence`` in the choice (``type`` as for ``NoulAnswer``)."""

    choice: str
    probabilities: Mapping[str, float]
    confidence: float
    type: Literal["choice"] = "choice"


@frozen
class ScoreAnswer:
    """A ``Score``'s answer: ``score``, the probability-weighted level index; the ``probabilities`` of
    every level; the ``confidence`` in the likeliest (``type`` as for ``NoulAnswer``)."""

    score: float
    probabilities: Mapping[str, float]
    confidence: float
    type: Literal["score"] = "score"


Answer = NoulAnswer | ChoiceAnswer | ScoreAnswer


def probability(value: object, what: str = "the probability") -> float:
    """``value`` as a probability, checked where an answer enters (a remote service's, a decider's
    under test): a finite number in [0, 1], never a bool; TypeError or ValueError says why not,
    naming it ``what``.

    >>> probability(0.93)
    0.93
    >>> probability(1.5, "noul")
    Traceback (most recent call last):
    ValueError: noul is 1.5, not a probability
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{what} is {value!r}, not a number")
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{what} is {value}, not a probability")
    return float(value)


# -- what a path returns ----------------------------------------------------

@frozen
class Usage:
    """What a remote decider's answers cost: questions asked, tokens sent and received, US dollars.

    ``calibrated`` is False when the answers are not probabilities read from a
    model (a forced tool call's self-reported confidence): thresholds tuned on
    another backend do not carry over.

    >>> Usage(1, 120, 1, 0.0000050) + Usage(2, 240, 2, 0.0000101)
    Usage(questions=3, tokens_in=360, tokens_out=3, usd=1.51e-05, calibrated=True)
    """

    questions: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    usd: float = 0.0
    calibrated: bool = True

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.questions + other.questions, self.tokens_in + other.tokens_in,
                     self.tokens_out + other.tokens_out, self.usd + other.usd,
                     self.calibrated and other.calibrated)

    def since(self, earlier: Usage) -> Usage:
        """What was spent after ``earlier`` (a reading of the same counter)."""
        return Usage(self.questions - earlier.questions, self.tokens_in - earlier.tokens_in,
                     self.tokens_out - earlier.tokens_out, self.usd - earlier.usd, self.calibrated)


@frozen
class Step:
    """One line of a trace: which ``stage`` ran, its ``verdict`` (what it decided), how long it took
    (``elapsed``, seconds), the ``score`` it decided on if any, ``why`` (the reason, an error and
    where it was raised), and what a remote decider's answers cost (``usage``, None when nothing
    was spent)."""

    stage: str
    verdict: str
    elapsed: float
    score: float | None = None
    why: str = ""
    usage: Usage | None = None


@frozen
class Edit:
    """A reviser's edit: replace or remove ONE line of the notes, named by its number AND its text.

    ``line`` is 1-based, ``action`` is ``"replace"`` (by ``text``) or ``"remove"``, and ``old`` is
    the exact text of that line in the snapshot the edit was computed on, so the edit still finds
    its line after other lines moved, and is dropped, never applied to a neighbour, when that line
    changed:

    >>> Edit(3, "replace", "Node 20 on the VPS", old="Node 18 on the VPS")
    """

    line: int
    action: Literal["replace", "remove"]
    text: str = ""
    old: str = ""


@frozen
class Recall:
    """What the recall path adds to one message (usually nothing).

    ``text`` is the rendered addition ('' for nothing), ``items`` the memory
    items it holds, ``kind`` the message's kind (None when not classified),
    ``notice`` a one-line note for the user when memory is paused or off,
    ``trace`` every step taken and ``stopped_by`` the stage that ended the path
    and why.
    """

    text: str
    items: tuple[Item, ...]
    kind: Kind | None
    trace: tuple[Step, ...]
    stopped_by: str
    notice: str | None = None


@frozen
class Brief:
    """What the session brief gives the agent when a session starts (or resumes, or is compacted).

    ``text`` is the rendered brief ('' when memory holds nothing worth its budget), ``items`` the
    facts it shows, in the order it shows them (the notes'), ``trace`` every step taken (what was
    left out for the budget, what was deduplicated, and why), ``stopped_by`` the stage that ended
    the path and why, ``notice`` a one-line note for the agent when memory is paused or off.
    """

    text: str
    items: tuple[Item, ...]
    trace: tuple[Step, ...]
    stopped_by: str
    notice: str | None = None


@frozen
class Retained:
    """What the retain path did with one exchange: ``keep`` and ``category`` (why it was kept or
    dropped), the ``lines`` written to the notes, the ``edits`` applied to them, the ``trace``,
    ``stopped_by`` (the stage that ended the path and why, or "done") and a ``notice``."""

    keep: bool
    category: Category | None
    lines: tuple[str, ...]
    edits: tuple[Edit, ...]
    trace: tuple[Step, ...]
    stopped_by: str
    notice: str | None = None


# -- the seams -------------------------------------------------------------

@runtime_checkable
class Decider(Protocol):
    """Answers typed questions about a state, never with free text.

    ``decide(state, questions)``: ``state`` is what the stages show (the redacted message and
    recent turns, or the exchange); ``questions`` maps an id to a question; the answer maps the
    same ids to answers of each question's type.

    >>> decider.decide({"message": "why Stripe?"}, {"k": Choice("kind", "...", {...})})
    {"k": ChoiceAnswer(choice="past_choice", probabilities={...}, confidence=0.93)}

    Each question is answered independently over the same state; memsift
    asks single-item questions (one note or passage per question). A decider
    that runs in-process sets ``remote = False``: it has no breaker to mind.
    """

    name: str

    def decide(
        self, state: Mapping[str, Any], questions: Mapping[str, Question]
    ) -> dict[str, Answer]: ...


@runtime_checkable
class Store(Protocol):
    """The long-term store of passages.

    ``search(query, *, limit, timeout)`` returns at most ``limit`` items, best
    first, within ``timeout`` seconds; ``add(items, *, timeout)`` keeps them.
    ``search`` raises ``memsift.errors.ServiceUnavailable`` when the service is
    down and ``ConfigurationError`` when it refuses us; ``add`` is idempotent
    per item id, so a retried write never duplicates an entry. A store that
    runs in-process sets ``remote = False``: it has no breaker to mind.
    """

    name: str

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]: ...

    def add(self, items: Sequence[Item], *, timeout: float) -> None: ...


@runtime_checkable
class ConfirmingStore(Store, Protocol):
    """A store that can say which items it already holds, as they are.

    The outbox asks it before sending again what it sent without hearing the
    answer, so a late answer never makes an item go up twice:

    >>> store.held([Item("ex-1a2b3c4d", "...", "passage", "memsift:decision")], timeout=5)
    {'ex-1a2b3c4d'}
    """

    def held(self, items: Sequence[Item], *, timeout: float) -> set[str]: ...


@runtime_checkable
class Notebook(Protocol):
    """The project's local notes: one fact per line.

    ``lines()`` every line; ``items()`` the notes as items, their source ending in the line
    number; ``append(lines)`` adds lines at the end, once each; ``apply(edits)`` applies edits.
    """

    def lines(self) -> list[str]: ...

    def items(self) -> list[Item]: ...

    def candidates(self, query: str, *, limit: int, above: int) -> list[Item]:
        """The notes to judge against ``query``: all up to ``above`` lines, else the ``limit`` best matches."""
        ...

    def append(self, lines: Sequence[str]) -> None: ...

    def apply(self, edits: Sequence[Edit]) -> list[Edit]:
        """Apply the edits whose line still reads ``old``; return those applied."""
        ...


@runtime_checkable
class Reviser(Protocol):
    """Names the lines of the notes to replace or remove after lines were added.

    ``added`` are the lines just appended, found in ``lines`` by their text, not
    their place: other processes may have appended after them. It never
    rewrites the file: each edit names its line by number and text (``old``),
    code applies the edits and every other line stays byte for byte.
    """

    def revise(self, lines: Sequence[str], added: Sequence[str]) -> list[Edit]: ...


Vectors = Any
"""Unit vectors, one row a text: a (texts, dimensions) float32 numpy array; a dot product is a cosine."""


@runtime_checkable
class Embedder(Protocol):
    """Texts in, unit vectors out, for the semantic judge (``memsift.semantic``).

    >>> embedder.embed(["why Stripe?", "Payments: Stripe over Mollie"]).shape
    (2, 384)

    ``embed(texts)`` returns one vector a text, or None when the model cannot answer right now (a warm
    process still starting): that message is judged lexically. Vectors of two
    embedders compare only when their ``name`` is the same.
    """

    name: str

    def embed(self, texts: Sequence[str]) -> Vectors | None: ...


@runtime_checkable
class Redactor(Protocol):
    """Removes credentials from text before it leaves the process.

    Hashable: the stages cache each text's redaction per redactor.
    """

    def redact(self, text: str) -> str: ...

    def __hash__(self) -> int: ...
