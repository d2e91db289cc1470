"""The decision log: memsift/decisions.py, with real paths and real files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memsift._hooks.decisions import QUIET, DecisionLog
from memsift.pipeline import recall, retain
from memsift.services import Services
from memsift.types import Exchange, Message

CHOICE = Exchange("Should we use Stripe or Mollie for payments?",
                  "Stripe: Mollie webhooks dropped events under load in the Black Friday test, "
                  "so we chose Stripe over Mollie.", "s1")
QUESTION = "why did we pick Stripe over Mollie again?"


def test_a_recall_is_one_line_with_its_verdicts_and_without_the_message(services: Services, tmp_path: Path) -> None:
    retain(CHOICE, services)
    result = recall(Message(QUESTION, session="s2"), services)
    assert result.text, "the note should answer the question"
    log = DecisionLog(tmp_path / "home")

    log.record("codex", "UserPromptSubmit", "/src/shop", result, session="s2")

    [line] = log.last(5)
    assert line["agent"] == "codex" and line["event"] == "UserPromptSubmit" and line["session"] == "s2"
    assert line["path"] == "recall" and line["project"] == "/src/shop"
    assert line["stopped_by"] == result.stopped_by and line["kind"] == str(result.kind)
    assert line["added"] == len(result.text)
    assert [step["stage"] for step in line["trace"]] == [step.stage for step in result.trace]
    assert all(step["ms"] >= 0 for step in line["trace"])
    written = log.path.read_text()
    assert written.count("\n") == 1
    assert QUESTION not in written and "Black Friday" not in written  # verdicts, never the words


def test_a_retain_says_what_it_kept_in_characters(services: Services, tmp_path: Path) -> None:
    result = retain(CHOICE, services)
    log = DecisionLog(tmp_path)

    log.record("claude-code", "Stop", "/src/shop", result)

    [line] = log.last(1)
    assert line["path"] == "retain" and line["kind"] == "decision"
    assert line["added"] == sum(len(kept) for kept in result.lines) > 0
    assert "session" not in line  # empty fields are left out


def test_a_quiet_recall_adds_zero_characters(services: Services, tmp_path: Path) -> None:
    log = DecisionLog(tmp_path)
    log.record("codex", "UserPromptSubmit", "/p", recall(Message("thanks, looks good"), services))
    [line] = log.last(1)
    assert line["added"] == 0 and line["stopped_by"].startswith("classify")


def test_the_log_rotates_keeping_one_old_file(services: Services, tmp_path: Path) -> None:
    result = recall(Message("ok"), services)
    log = DecisionLog(tmp_path, max_bytes=4000)
    count = 80  # lines of a few hundred bytes: several rotations

    for number in range(count):
        log.record("codex", "UserPromptSubmit", "/p", result, session=f"n{number}")

    assert log.old_path.exists()
    assert log.path.stat().st_size <= 4000 and log.old_path.stat().st_size <= 4000 + 1000
    sessions = [line["session"] for line in log.last(10_000)]
    first = int(sessions[0][1:])
    assert sessions == [f"n{n}" for n in range(first, count)]  # a tail, in order, across both files
    assert first > 0  # older lines went with the rotation


def test_torn_and_foreign_lines_are_skipped(services: Services, tmp_path: Path) -> None:
    log = DecisionLog(tmp_path)
    log.record("codex", "Stop", "/p", retain(CHOICE, services), session="a")
    with open(log.path, "a") as out:
        out.write('{"agent": "codex", "eve\n[1, 2]\nnot json\n')
    log.record("codex", "Stop", "/p", retain(CHOICE, services), session="b")
    assert [line["session"] for line in log.last(5)] == ["a", "b"]


def test_a_log_that_cannot_be_written_costs_a_line_on_stderr_not_the_hook(
        services: Services, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.write_text("a file where the home folder should be")
    DecisionLog(home).record("codex", "Stop", "/p", retain(CHOICE, services))
    assert "memsift: decision log" in capsys.readouterr().err


WRITER = """
import sys
from pathlib import Path
from memsift._hooks.decisions import QUIET, DecisionLog
from memsift.types import Recall, Step
result = Recall("", (), None, tuple(Step(f"stage{i}", "ok", 0.001) for i in range(8)), "classify: quiet")
log = DecisionLog(Path(sys.argv[1]), max_bytes=int(sys.argv[2]))
for number in range(int(sys.argv[3])):
    log.record("codex", "UserPromptSubmit", "/p", result, session=f"{sys.argv[4]}-{number}")
"""


@pytest.mark.parametrize("max_bytes", [10_000_000, 20_000], ids=["no rotation", "rotating"])
def test_hooks_writing_at_once_never_tear_a_line(tmp_path: Path, max_bytes: int) -> None:
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(max_bytes), "150", f"w{n}"])
               for n in range(4)]
    assert [writer.wait(timeout=120) for writer in writers] == [0] * 4
    log = DecisionLog(tmp_path)
    lines = [line for path in (log.old_path, log.path) if path.exists()
             for line in path.read_text().splitlines()]
    assert all(json.loads(line)["agent"] == "codex" for line in lines)  # every line whole
    if max_bytes > 1_000_000:
        assert len(lines) == 600
    else:
        # Rotated after the write that filled it: the current log is absent until the next write.
        assert log.old_path.exists()
        assert all(path.stat().st_size <= max_bytes + 2000 for path in (log.old_path, log.path) if path.exists())


def test_a_message_the_hook_found_quiet_is_one_line_too(tmp_path: Path) -> None:
    log = DecisionLog(tmp_path)
    log.record("claude-code", "UserPromptSubmit", "/src/shop", None, session="s1")
    [line] = log.last(1)
    assert line["stopped_by"] == QUIET and line["added"] == 0 and line["path"] == "recall"
    assert "trace" not in line and "kind" not in line


def test_the_log_costs_the_quiet_path_no_attrs() -> None:
    done = subprocess.run([sys.executable, "-c", "import sys, memsift._hooks.decisions; print('attrs' in sys.modules)"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
