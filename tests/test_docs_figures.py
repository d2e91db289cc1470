"""The figures the docs show, made again and compared: an example's output, a limit's number.

A figure that a command prints (``memsift doctor``'s report) is made by that
command in a fresh home, as the page says, and compared line for line with
the page, times, timings and the home's path aside. A number the page states
(a timeout, a size) is compared with the code that sets it. Timings are not
checked here: the page names the benchmark that measured them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memsift._runtime.bounds import RECENT_TURNS
from memsift._hooks.decisions import MAX_BYTES
from memsift._cli.install import TIMEOUTS
from memsift_adapters import transcript
from memsift_adapters.hook import OUTPUT_CHARS, OUTPUT_ITEMS

REPO = Path(__file__).resolve().parent.parent
AGENTS_MD = REPO / "docs" / "agents.md"
MEMSIFT = Path(sys.executable).parent / "memsift"
DOC_HOME = "/home/you"  # the user's home as the page writes it
KEPT = {"user": "Should we use Stripe or Mollie for payments?",
        "assistant": "Stripe: Mollie webhooks dropped events under load in the Black Friday test, so we chose "
                     "Stripe over Mollie."}


def block_after(text: str, marker: str) -> str:
    """The fenced block that follows the first line holding *marker*."""
    start = text.index("```", text.index(marker))
    start = text.index("\n", start) + 1
    return text[start:text.index("```", start)]


def normalized(report: str, home: str) -> list[str]:
    """The report with what differs from run to run made alike: the home's path, a project
    folder's hash, clock times, timings, and the padding that path lengths change."""
    report = report.replace(home, DOC_HOME)
    report = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", "TIME", report)
    report = re.sub(r"-[0-9a-f]{8}\b", "-HASH", report)
    report = re.sub(r"\b\d+\.\d+ ms\b", "N ms", report)
    return [" ".join(line.split()) for line in report.strip("\n").splitlines()]


def test_the_doctor_example_is_what_doctor_prints_for_the_setup_it_describes(tmp_path):
    """docs/agents.md: Claude Code's hooks installed, one exchange kept, a thank-you and a question
    the note answers, then `memsift doctor --last 2` in the project."""
    home = tmp_path / "you"
    shop = home / "shop"
    (shop / ".git").mkdir(parents=True)
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("MEMSIFT_", "CODEX_", "CLAUDE_", "XDG_DATA_HOME"))}
    env.update(HOME=str(home), XDG_RUNTIME_DIR=str(tmp_path / "runtime"))

    def memsift(*args: str, stdin: str = "") -> str:
        done = subprocess.run([str(MEMSIFT), *args], input=stdin, cwd=shop, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    memsift("install", "claude-code")
    memsift("retain", "--project", ".", stdin=json.dumps(KEPT))
    for n, prompt in enumerate(["thanks, that works!", "why did we pick Stripe over Mollie for payments?"]):
        payload = {"session_id": "s1", "prompt_id": f"p{n}", "cwd": str(shop), "prompt": prompt}
        memsift("hook", "claude-code", "UserPromptSubmit", stdin=json.dumps(payload))
    report = memsift("doctor", "--last", "2")

    shown = block_after(AGENTS_MD.read_text(encoding="utf-8"), "doctor --last 2` in the project")
    assert normalized(report, str(home)) == normalized(shown, DOC_HOME), (
        f"docs/agents.md's doctor example is out of date; doctor now prints:\n{report.replace(str(home), DOC_HOME)}")


def test_the_limits_agents_md_states_are_the_codes():
    page = " ".join(AGENTS_MD.read_text(encoding="utf-8").split())

    for event, seconds in TIMEOUTS.items():
        assert re.search(rf"`{event}` \((?:timeout )?{seconds} s", page), (event, seconds)
    items = f"at most {OUTPUT_ITEMS} items of recall (a brief, as many as its budget holds)"
    assert f"{items} and {OUTPUT_CHARS:,} characters" in page
    assert f"Past {MAX_BYTES // 1024} KB it becomes" in page
    assert f"the last {['zero', 'one', 'two', 'three', 'four', 'five'][RECENT_TURNS]} turns" in page
    assert f"({transcript._FIRST_WINDOW // 1024} KiB, then" in page
    assert f"up to {transcript._LAST_WINDOW >> 20} MiB" in page


def test_the_readme_gives_the_weights_their_size():
    from memsift.decider._weights import SHIPPED

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert f"({round(SHIPPED.stat().st_size / 1000)} KB of weights" in readme


@pytest.mark.parametrize("page", ["agents.md"])
def test_a_page_for_users_stays_short(page):
    """docs/agents.md is for a user: what happens, how to set it up, how to fix it; its history
    is in CHANGELOG.md."""
    words = len((AGENTS_MD.parent / page).read_text(encoding="utf-8").split())
    assert words <= 3_000, words


def test_the_note_line_pipelines_md_shows_is_what_retain_writes_for_its_exchange(tmp_path):
    from memsift import Config, Exchange, open_services, retain
    from memsift._notes.lines import fact_of, tail_of

    page = (REPO / "docs" / "pipelines.md").read_text(encoding="utf-8")
    told = re.search(r'Told "(.+?)", answered "(.+?)", retain writes:', " ".join(page.split()))
    assert told, "pipelines.md's example exchange"
    shown = block_after(page, "retain writes:").strip()

    with open_services(Config(home=tmp_path / "home"), project_root=tmp_path) as services:
        line = retain(Exchange(told[1], told[2]), services).lines[0]

    assert fact_of(line) == fact_of(shown)
    assert tail_of(line)[::2] == tail_of(shown)[::2]  # the category and the pointer; the day is today's
