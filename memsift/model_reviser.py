"""A language model revises the notes: it names lines to replace or remove, code applies them.

The model (the OpenAI-compatible or Anthropic backend) reads the notes as
numbered lines, with the lines just added, and answers with structured
output, never a rewritten file::

    {"edits": [{"line": 3, "action": "replace", "text": "Node 22 on the VPS since March"},
               {"line": 7, "action": "remove", "text": ""}]}

``edits_from`` checks that answer against the lines it was computed on: an
answer that is not that shape, names a line that does not exist, names one
line twice, or replaces a line with nothing or with several lines is
rejected whole (``MalformedEdits``) and the notes stay untouched. Each edit
carries the text of the line it names (``Edit.old``), so applying it under
the notes lock finds that line again if others moved it and drops the edit
if the line itself changed since; every other line stays byte for byte.

It runs after retain, at most once per ``revise_interval`` per project
(``revise_when_due``), in the process the Stop hook detached for retain: the
agent never waits for it.

    >>> reviser = ModelReviser.from_config(load_config())     # MEMSIFT_REVISER=openai|anthropic
    >>> reviser.revise(["# Deploys", "Node 20 on the VPS", "Node 22 on the VPS since March"],
    ...                added=["Node 22 on the VPS since March"])
    [Edit(line=2, action='remove', text='', old='Node 20 on the VPS')]
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from .errors import MemsiftError
from .notes import note_id, one_line
from .types import Edit, Redactor, Usage

if TYPE_CHECKING:
    from .config import Config
    from .notes import NotesFile

SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["edits"],
    "properties": {"edits": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["line", "action", "text"],
        "properties": {"line": {"type": "integer", "minimum": 1},
                       "action": {"type": "string", "enum": ["replace", "remove"]},
                       "text": {"type": "string"}}}}},
}
SYSTEM = (
    "You keep a project's memory notes short and true: one fact per line. You are given the notes as "
    "numbered lines and the lines just added. Name only the lines an added line makes stale, wrong or "
    "redundant: replace a line with one corrected line, or remove it. Leave everything else alone; "
    "when nothing needs changing, answer with no edits. Never edit a heading (a line starting with #)."
)
REVISION_DEADLINE = 30.0  # seconds, at least: the model reads every line and writes its edits
STAMP = "revised.json"  # per project: when the model reviser last ran, and the lines it had seen


class MalformedEdits(MemsiftError, ValueError):
    """The model's answer is not a valid set of edits for these lines: none of it is applied."""


class Structured(Protocol):
    """A backend that answers with a JSON object following a schema (both chat deciders do):
    ``structured(system, prompt, schema, *, name, deadline)`` returns the object and what it cost."""

    name: str

    def structured(self, system: str, prompt: str, schema: Mapping[str, Any], *, name: str,
                   deadline: float) -> tuple[Any, Usage]: ...


def edits_from(output: Any, lines: Sequence[str]) -> list[Edit]:
    """The edits a model's answer (``output``) names, checked against the ``lines`` it saw;
    ``MalformedEdits`` otherwise.

    >>> edits_from({"edits": [{"line": 2, "action": "remove", "text": ""}]}, ["a", "b"])
    [Edit(line=2, action='remove', text='', old='b')]
    """
    if not isinstance(output, dict) or set(output) != {"edits"} or not isinstance(output["edits"], list):
        raise MalformedEdits(f"expected {{\"edits\": [...]}}, got {_shown(output)}")
    edits: list[Edit] = []
    named: set[int] = set()
    for raw in output["edits"]:
        if not isinstance(raw, dict) or not {"line", "action"} <= set(raw) <= {"line", "action", "text"}:
            raise MalformedEdits(f"an edit is {{line, action, text}}, not {_shown(raw)}")
        line, action, text = raw["line"], raw["action"], raw.get("text", "")
        if isinstance(line, bool) or not isinstance(line, int) or not 1 <= line <= len(lines):
            raise MalformedEdits(f"line {_shown(line)} is not one of the {len(lines)} lines")
        if line in named:
            raise MalformedEdits(f"line {line} is named twice")
        named.add(line)
        if action not in ("replace", "remove") or not isinstance(text, str):
            raise MalformedEdits(f"an edit replaces or removes a line, not {_shown(raw)}")
        if lines[line - 1].lstrip().startswith("#"):
            raise MalformedEdits(f"line {line} is a heading")
        if action == "replace" and (not text.strip() or "\n" in text or "\r" in text):
            raise MalformedEdits(f"line {line} must be replaced by one line of text, not {_shown(text)}")
        edits.append(Edit(line, action, one_line(text) if action == "replace" else "", old=lines[line - 1]))
    return edits


def _shown(value: Any) -> str:
    return json.dumps(value, default=repr)[:120]


class ModelReviser:
    """The ``Reviser`` seam on a chat model: numbered lines in, named edits out.

    ``backend``: the model (a chat decider, ``Structured``); ``redactor``: what the notes pass
    through before they leave the process (None: sent as they are); ``deadline``: seconds one
    revision may take.
    """

    def __init__(self, backend: Structured, *, redactor: Redactor | None = None, deadline: float = 30.0) -> None:
        self.backend = backend
        self.redactor = redactor
        self.deadline = deadline
        self.spent = Usage()

    @classmethod
    def from_config(cls, config: Config) -> ModelReviser:
        """The reviser ``MEMSIFT_REVISER`` names, on the decider's URL, model and key."""
        from attrs import evolve

        from .decider.backends import decider_for
        from .redact import PatternRedactor

        # A revision reads the whole notes: it gets far longer than one decision.
        deadline = max(REVISION_DEADLINE, config.decider_deadline)
        backend = decider_for(evolve(config, decider=config.reviser, decider_by_task=None, decider_deadline=deadline))
        return cls(cast(Structured, backend), redactor=PatternRedactor(), deadline=deadline)

    def revise(self, lines: Sequence[str], added: Sequence[str]) -> list[Edit]:
        """The edits the model names for ``lines`` after ``added`` joined them (raises ``MalformedEdits``)."""
        if not lines:
            return []
        scrub = self.redactor.redact if self.redactor is not None else (lambda text: text)
        numbered = "\n".join(f"{number}: {scrub(line)}" for number, line in enumerate(lines, start=1))
        prompt = (f"Notes ({len(lines)} lines):\n{numbered}\n\nJust added:\n"
                  + "\n".join(f"- {scrub(line)}" for line in added)
                  + '\n\nAnswer with {"edits": [{"line": N, "action": "replace" or "remove", "text": ...}]}.')
        output, usage = self.backend.structured(SYSTEM, prompt, SCHEMA, name="edit_notes",
                                                deadline=time.monotonic() + self.deadline)
        self.spent += usage
        return edits_from(output, lines)


def revise_when_due(config: Config, notebook: NotesFile, *, reviser: Callable[[], ModelReviser] | None = None,
                    clock: Callable[[], float] = time.time) -> list[Edit] | None:
    """Run the model reviser ``config`` names over the lines of ``notebook`` added since its last run,
    if ``revise_interval`` has passed by ``clock``; ``reviser`` makes it (tests give their own).

    None when it is not due (or not configured); otherwise the edits applied.
    A failing backend or a malformed answer leaves the notes untouched and
    raises, for the caller to log; the interval still counts from this try.
    """
    if config.reviser == "duplicates":
        return None
    from ._fs.files import locked, write_atomically

    stamp = notebook.path.parent / STAMP
    with locked(stamp):  # two retains ending together: one of them revises
        last = _read_stamp(stamp)
        now = clock()
        if now - float(last.get("at", 0.0)) < config.revise_interval:
            return None
        write_atomically(stamp, json.dumps({**last, "at": now}))
    lines = notebook.lines()
    seen = set(last.get("seen", ()))
    added = [line for line in lines if line.strip() and not line.lstrip().startswith("#")
             and note_id(line) not in seen]
    applied: list[Edit] = []
    if added:
        edits = (reviser or (lambda: ModelReviser.from_config(config)))().revise(lines, added)
        if edits:
            applied = notebook.apply(edits)  # those that still found their line
    with locked(stamp):
        write_atomically(stamp, json.dumps({"at": now, "seen": sorted({note_id(line) for line in notebook.lines()})}))
    return applied


def _read_stamp(path: Path) -> dict[str, Any]:
    """The stamp, or {} when it is missing or holds junk: the next revision writes a good one."""
    from ._fs.files import read_regular

    try:
        data = json.loads(read_regular(path))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    at, seen = data.get("at", 0.0), data.get("seen", [])
    typed = isinstance(at, int | float) and isinstance(seen, list) and all(isinstance(s, str) for s in seen)
    return data if typed else {}
