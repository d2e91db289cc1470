"""What the hooks decided: one JSON line per recall or retain, in a log that rotates itself.

A hook adapter calls ``record`` after a path ran (with ``None`` for a
message it found quiet itself, before any pipeline); ``memsift doctor`` reads
the last lines back with ``last``:

    >>> log = DecisionLog(home)
    >>> log.record("claude-code", "UserPromptSubmit", "/src/shop", None, session="s1")
    >>> log.record("claude-code", "UserPromptSubmit", "/src/shop", result, session="s1")
    >>> [line["stopped_by"] for line in log.last(2)]
    ['quiet: needs no memory (decided in the hook)', 'render: added 1 items']

The log is ``<home>/decisions.jsonl``. Past ``MAX_BYTES`` it is renamed
``decisions.jsonl.1`` (replacing the older one), so the two files hold at most
about twice that. A line holds the path's verdicts, counts and timings, never
the message or what was kept: those stay in the notes and the transcript.

Writing costs one ``open``, one ``write`` and one ``fstat`` on the hook's hot
path, and this module imports nothing the quiet path does not (no attrs); it
never raises: a log that cannot be written costs a line on stderr, never the
hook's answer.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    from typing import Any

    from ..types import Recall, Retained

FILE_NAME = "decisions.jsonl"
MAX_BYTES = 256 * 1024  # ~400 decisions of a few stages each before a rotation
QUIET = "quiet: needs no memory (decided in the hook)"  # memsift._hooks.quiet ended it before the pipeline


class DecisionLog:
    """The decision log under memsift's home *home*."""

    def __init__(self, home: Path, *, max_bytes: int = MAX_BYTES) -> None:
        self.path = Path(home) / FILE_NAME
        self.old_path = self.path.with_name(FILE_NAME + ".1")
        self.max_bytes = max_bytes

    def record(self, agent: str, event: str, project: str, result: Recall | Retained | None,
               *, session: str = "") -> None:
        """Append one line for *result*, the outcome of a path a hook ran for *agent*'s *event*;
        None for a message the hook found quiet without running one."""
        try:
            self._append(json.dumps(decision(agent, event, project, result, session=session),
                                    separators=(",", ":")) + "\n")
        except Exception as exc:  # a log must never cost the hook its answer
            sys.stderr.write(f"memsift: decision log {self.path}: {type(exc).__name__}: {exc}\n")

    def last(self, count: int) -> list[dict[str, Any]]:
        """The last *count* decisions, oldest first; torn or foreign lines are skipped."""
        if count <= 0:
            return []
        lines: list[str] = []
        for path in (self.old_path, self.path):
            try:
                lines.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
            except FileNotFoundError:
                continue
        found: list[dict[str, Any]] = []
        for line in reversed(lines):
            if len(found) == count:
                break
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                found.append(entry)
        return found[::-1]

    def _append(self, line: str) -> None:
        data = line.encode("utf-8")
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except FileNotFoundError:  # a fresh home: the first decision makes it
            from .._fs.files import private_folder

            private_folder(self.path.parent)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)  # one write with O_APPEND: concurrent hooks do not interleave lines
            written = os.fstat(fd)
        finally:
            os.close(fd)
        if written.st_size > self.max_bytes:
            self._rotate(written.st_ino)

    def _rotate(self, inode: int) -> None:
        """Move the full log aside, once: hooks that filled it together rotate it one time."""
        from .._fs.files import locked

        with locked(self.path):
            try:
                current = os.stat(self.path)
            except FileNotFoundError:
                return
            # Another hook rotated it between our write and this lock: the new file is not full.
            if current.st_ino == inode and current.st_size > self.max_bytes:
                os.replace(self.path, self.old_path)


def decision(agent: str, event: str, project: str, result: Recall | Retained | None,
             *, session: str = "") -> dict[str, Any]:
    """The log line for one path's *result*, as a dict (empty fields left out).

    >>> decision("codex", "UserPromptSubmit", "/src/shop", recall_result)
    {'time': '2026-12-01T14:02:11', 'agent': 'codex', 'event': 'UserPromptSubmit',
     'project': '/src/shop', 'path': 'recall', 'stopped_by': 'render: added 1 items',
     'kind': 'past_choice', 'added': 182, 'trace': [{'stage': 'redact', 'verdict': 'clean', 'ms': 0.08}, ...]}
    """
    line: dict[str, Any] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S"), "agent": agent, "event": event,
        "project": project, "session": session, "path": "recall", "stopped_by": QUIET, "added": 0}
    # Told apart by their fields: importing the types would cost the quiet path attrs.
    if hasattr(result, "keep"):
        from typing import cast

        retained = cast("Retained", result)
        line.update(path="retain", kind=retained.category,
                    added=sum(len(kept) for kept in retained.lines) if retained.keep else 0)
    elif result is not None:
        line.update(kind=result.kind, added=len(result.text))
    if result is not None:
        line.update(stopped_by=result.stopped_by, notice=result.notice,
                    trace=[_step(step.stage, step.verdict, step.elapsed, step.score, step.why)
                           for step in result.trace])
    return {key: value for key, value in line.items() if value not in ("", None)}


def _step(stage: str, verdict: str, elapsed: float, score: float | None, why: str) -> dict[str, Any]:
    step: dict[str, Any] = {"stage": stage, "verdict": verdict, "ms": round(elapsed * 1000, 2)}
    if score is not None:
        step["p"] = round(score, 2)
    if why:
        step["why"] = why
    return step
