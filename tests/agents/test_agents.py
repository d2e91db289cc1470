"""memsift inside the real Claude Code and Codex CLIs, offline, end to end.

For each agent: a temporary HOME (and CODEX_HOME) and MEMSIFT_HOME, a fake
model server on 127.0.0.1, memsift's hooks written by ``memsift install``,
one note kept beforehand for a git repository, and a session brief that holds
one fact. Then, started in a subfolder of it (the project is the repository),
two sessions of the agent's non-interactive mode, each resumed once, as a user
would type them:

1. a thank-you (quiet: nothing added, nothing kept; the brief, holding the note,
   reaches the model's request as the session starts);
2. a question the note answers, in the same session resumed (the brief again;
   nothing added to the message: the brief gave it);
3. a choice with its reason (nothing to add; Stop keeps it);
4. a second session asks about that choice (the brief holds it now: the newest);
5. the same session resumed asks about the note again (the brief no longer holds
   it: the message's recall adds it);
6. an "ok" (quiet again).

The checks read what the agent sent the model, the notes file, Codex's hook
report on stderr and ``memsift doctor``.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from attrs import frozen
from clis import Agents
from fake_models import FakeModel, Request

from memsift._hooks.decisions import DecisionLog
from memsift.stages import BRIEF_HEADER, HEADER
from memsift_adapters.hook import RELAY

pytestmark = pytest.mark.agents  # `pytest -m "not agents"` skips the real CLIs

SEED = {"user": "the worker OOMs every night, can you fix it?",
        "assistant": "Capped the worker heap at 1536 MB in deploy/worker.yaml: "
                     "the nightly export loads every order into memory at once."}
CHOICE_PROMPT = "Should we use Stripe or Mollie for payments?"
CHOICE = "Stripe: Mollie webhooks dropped events under load in the Black Friday test, so we chose Stripe over Mollie."
BRIEF_CHARS = "360"  # the header and one fact: a session brief that must choose
# (prompt, the model's reply, a new session?, what the session's brief holds, what memory adds to the message:
#  a note's words, or None)
SCRIPT = [
    ("thanks, that looks good", "Glad it works.", True, "1536 MB", None),
    ("why does the worker run out of memory at night again?",
     "The nightly export loads every order into memory at once; the heap is capped at 1536 MB.", False, "1536 MB",
     None),
    (CHOICE_PROMPT, CHOICE, False, "1536 MB", None),
    ("why did we pick Stripe over Mollie again?",
     "Mollie webhooks dropped events under load in the Black Friday test.", True, "Black Friday", None),
    ("the worker ran out of memory again at night, what heap cap did we set for it?",
     "1536 MB, in deploy/worker.yaml.", False, "Black Friday", "1536 MB"),
    ("ok", "Fine.", False, "Black Friday", None),
]
QUIET = ("thanks, that looks good", "ok")  # exchanges Stop must not keep
# The other answers restate what memory gave (the note, the choice): not kept again either.


@frozen
class Turn:
    prompt: str
    briefed: str  # what the session's brief should hold
    expected: str | None  # what memory should add to this very message
    request: Request  # what the agent sent the model for this prompt
    brief: str  # the session brief in that request, '' when none
    added: str  # memsift's context for this prompt in that request, '' when none
    hooks: tuple[tuple[str, str], ...]  # (event, outcome) of every hook the agent ran, as it reports them
    output: str  # what the agent printed, for the failure messages


@frozen
class Run:
    agent: str
    turns: tuple[Turn, ...]
    connects: tuple[str, ...]
    notes: Path
    work: Path
    env: dict[str, str]
    seconds: float


@pytest.fixture(scope="module", params=["claude-code", "codex"])
def run(request: pytest.FixtureRequest, agents: Agents, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    agent = request.param
    root = tmp_path_factory.mktemp(agent)
    repo = root / "shop"
    work = repo / "src" / "worker"  # the agents start in a subfolder: memory is the repository's
    work.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=60)
    with FakeModel("anthropic" if agent == "claude-code" else "openai") as model:
        env = _environment(agent, root, model)
        _memsift(env, "retain", "--project", str(repo), stdin=json.dumps(SEED))
        notes = _notes_file(env, repo)
        assert notes.read_text().count("\n") == 1, "the seed exchange was not kept"
        install_memsift(agent, env)
        started = time.monotonic()
        turns, session = [], ""
        for prompt, reply, new_session, briefed, expected in SCRIPT:
            model.reply = reply
            before = len(model.turns())
            session, hooks, output = _ask(agent, agents, env, work, prompt, "" if new_session else session)
            asked = model.turns()[before:]
            assert len(asked) == 1, f"{agent} sent {len(asked)} model requests for {prompt!r}:\n{output}"
            turns.append(Turn(prompt, briefed, expected, asked[0], brief_in(asked[0]),
                              added_context(asked[0], prompt), hooks, output))
            # Stop retains in a detached process: wait for its line in the decision log.
            _wait_for(lambda: _decisions(env, "Stop") == len(turns), f"{agent}'s Stop hook after {prompt!r}")
        yield Run(agent, tuple(turns), tuple(model.connects()), notes, work, env, time.monotonic() - started)


# -- the checks -----------------------------------------------------------------------

def test_the_brief_reaches_the_model_as_each_session_starts_and_resumes(run: Run) -> None:
    """Every request carries the brief its session started (or resumed) with: the note in the first
    session; in the second, the choice kept since, which leaves no room for the note."""
    for turn in run.turns:
        assert turn.briefed in turn.brief, (
            f"{run.agent}: {turn.prompt!r} should have come with a brief holding {turn.briefed!r};"
            f" the request had {turn.brief!r}\n{turn.output}")
    assert "1536 MB" not in run.turns[3].brief  # one fact fits: the newest


def test_context_reaches_the_model_exactly_when_a_note_answers(run: Run) -> None:
    """Added to a message: only what answers it and the session's brief did not already give."""
    for turn in run.turns:
        if turn.expected is None:
            assert turn.added == "", f"{run.agent}: memsift added context to {turn.prompt!r}: {turn.added!r}"
        else:
            assert turn.expected in turn.added, (
                f"{run.agent}: {turn.prompt!r} should have brought the note with {turn.expected!r};"
                f" the request had {turn.added!r}\n{turn.output}")


def test_stop_kept_the_choice_and_no_quiet_exchange(run: Run) -> None:
    # One retain per prompt, in order: the fixture waited for each before the next prompt.
    retains = [line for line in DecisionLog(Path(run.env["MEMSIFT_HOME"])).last(1000) if line["event"] == "Stop"]
    kept = {turn.prompt: line["added"] > 0 for turn, line in zip(run.turns, retains, strict=True)}
    notes = run.notes.read_text()
    assert kept[CHOICE_PROMPT] and "we chose Stripe over Mollie" in notes, f"{run.agent}: {kept}\n{notes}"
    assert [prompt for prompt in kept if kept[prompt]] == [CHOICE_PROMPT], f"{run.agent}: {kept}\n{notes}"
    assert notes.count("\n") == 2, notes  # the seed's line and the choice's: what restated them added none
    assert "Glad it works" not in notes and "Fine." not in notes, notes


def test_the_agent_reports_every_hook_completed(run: Run) -> None:
    """Codex says so on stderr, Claude Code in its hook events; Codex fails output it would not take.

    Neither reports SessionEnd, which runs as the agent exits.
    """
    for turn in run.turns:
        events = {event for event, _ in turn.hooks}
        assert {"SessionStart", "UserPromptSubmit", "Stop"} <= events, (
            f"hooks did not run for {turn.prompt!r}:\n{turn.output}")
        assert all(outcome == "completed" for _, outcome in turn.hooks), (
            f"{run.agent}, {turn.prompt!r}: {turn.hooks}\n{turn.output}")


def test_doctor_sees_the_hooks_and_every_decision(run: Run) -> None:
    report = json.loads(_memsift(run.env, "doctor", "--json", "--last", "50", "--project", str(run.work)))
    assert report["healthy"], report["checks"]
    [hooks] = [c for c in report["checks"] if c["section"] == "hooks" and c["name"] == run.agent]
    assert hooks["status"] == "ok", hooks
    assert "UserPromptSubmit" in hooks["detail"] and "Stop" in hooks["detail"]
    if run.agent == "codex":
        assert hooks["detail"].endswith("trusted")  # and Codex ran them: the same hashes
    assert {d["project"] for d in report["decisions"]} == {str(run.work.parents[1])}  # the repository
    decided = [(d["agent"], d["event"], d["path"]) for d in report["decisions"]]
    assert decided == [(run.agent, "UserPromptSubmit", "recall"), (run.agent, "Stop", "retain")] * len(SCRIPT)
    added = [d["added"] for d in report["decisions"] if d["path"] == "recall"]
    assert [bool(n) for n in added] == [turn.expected is not None for turn in run.turns]


def test_nothing_left_the_machine(run: Run) -> None:
    assert run.connects == (), f"{run.agent} tried to reach {run.connects}"


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_memory_that_cannot_work_is_told_and_the_agent_takes_the_notice(
        agent: str, agents: Agents, tmp_path: Path) -> None:
    """A Cognee store that does not answer: the searching prompt's hook says memory paused, in the
    output both agents accept (Codex rejects any key it does not know), and doctor fails."""
    work = tmp_path / "shop"
    work.mkdir()
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    prompt = "which payment provider do we use and why?"
    with FakeModel("anthropic" if agent == "claude-code" else "openai") as model:
        env = {**_environment(agent, tmp_path, model), "MEMSIFT_STORE": "cognee",
               "MEMSIFT_COGNEE_URL": f"http://127.0.0.1:{port}", "MEMSIFT_COGNEE_API_KEY": "test-key-not-a-secret"}
        install_memsift(agent, env)
        _, hooks, output = _ask(agent, agents, env, work, prompt, "")
        [request] = model.turns()
    assert f"memory paused: Cognee at http://127.0.0.1:{port} unreachable" in since_prompt(request, prompt), output
    assert {"UserPromptSubmit", "Stop"} <= {event for event, _ in hooks}, output
    assert all(outcome == "completed" for _, outcome in hooks), (hooks, output)
    doctor = subprocess.run([sys.executable, "-m", "memsift", "doctor", "--project", str(work)], env=env,
                            capture_output=True, text=True, timeout=60)
    assert doctor.returncode == 1 and "MEMORY CANNOT WORK" in doctor.stdout, doctor.stdout + doctor.stderr


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_setup_notice_reaches_a_non_interactive_run_with_its_first_prompt_once(
        agent: str, agents: Agents, tmp_path: Path) -> None:
    """claude -p and codex exec show the user no hook message, SessionStart's least: a misspelled
    setting is told with the session's first prompt (a quiet one), to the model with a request to
    pass it on (and, in claude -p's stream-json, as the prompt hook's message), and not again when
    the session goes on. Memory works meanwhile: the typo costs only its own setting."""
    work = tmp_path / "shop"
    work.mkdir()
    with FakeModel("anthropic" if agent == "claude-code" else "openai") as model:
        env = _environment(agent, tmp_path, model)
        Path(env["MEMSIFT_HOME"]).mkdir()
        config = Path(env["MEMSIFT_HOME"]) / "config.toml"
        config.write_text('jugde = "lexical"\n')
        install_memsift(agent, env)
        session, hooks, output = _ask(agent, agents, env, work, "thanks, that looks good", "")
        _, later_hooks, _ = _ask(agent, agents, env, work, "ok", session)
        first, later = model.turns()
    notice = f"{config}: jugde is not a memsift setting (did you mean judge?), ignored"
    said = since_prompt(first, "thanks, that looks good")
    assert json.dumps(RELAY + notice)[1:-1] in said, said
    assert first.text.count(json.dumps(notice)[1:-1]) == 1, first.text  # not from SessionStart as well
    assert notice not in json.dumps(since_prompt(later, "ok"))
    if agent == "claude-code":
        [message] = [event["content"] for event in map(json.loads, filter(None, output.splitlines()))
                     if event.get("subtype") == "informational" and "memsift" in event.get("content", "")]
        assert message == f"UserPromptSubmit says: memsift: {notice}", message
    assert all(outcome == "completed" for _, outcome in hooks + later_hooks), (hooks, later_hooks, output)


# -- driving an agent -----------------------------------------------------------------

def _environment(agent: str, root: Path, model: FakeModel) -> dict[str, str]:
    """A fresh home for the agent and for memsift; every connection ends at the fake model."""
    home = root / "home"
    home.mkdir()
    env = {"PATH": os.environ["PATH"], "LANG": "C.UTF-8", "SHELL": "/bin/sh", "HOME": str(home),
           "MEMSIFT_HOME": str(root / "memsift-home"), "MEMSIFT_BRIEF_CHARS": BRIEF_CHARS, "TMPDIR": str(root),
           "HTTPS_PROXY": model.url, "HTTP_PROXY": model.url, "NO_PROXY": "127.0.0.1,localhost"}
    if agent == "claude-code":
        env.update(ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="test-key-not-a-secret",
                   CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1",
                   DISABLE_AUTOUPDATER="1", DISABLE_ERROR_REPORTING="1")
    else:
        codex_home = home / ".codex"
        codex_home.mkdir()
        # Plugins, apps and analytics off: each would reach a host of its own at start.
        (codex_home / "config.toml").write_text(f"""\
model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake model on 127.0.0.1"
base_url = "{model.url}/v1"
env_key = "FAKE_MODEL_KEY"
wire_api = "responses"

[features]
plugins = false
apps = false

[analytics]
enabled = false
""")
        env.update(CODEX_HOME=str(codex_home), FAKE_MODEL_KEY="test-key-not-a-secret")
    return env


def install_memsift(agent: str, env: dict[str, str]) -> str:
    """memsift's hooks in the agent's user settings, written as a user would: ``memsift install``."""
    return _memsift(env, "install", agent, *(["--trust"] if agent == "codex" else []))


def _ask(agent: str, agents: Agents, env: dict[str, str], work: Path, prompt: str,
         session: str, *flags: str) -> tuple[str, tuple[tuple[str, str], ...], str]:
    """One prompt in the agent's non-interactive mode: the session, its hooks' outcomes, its output.

    A session id resumes that session; *flags* go to the agent's command.
    """
    if agent == "claude-code":
        command = [str(agents.claude), "-p", prompt, "--output-format", "stream-json", "--verbose",
                   "--include-hook-events", *flags, *(["--resume", session] if session else [])]
    else:  # not --json: that mode leaves out the "hook: ..." lines
        command = [str(agents.codex), "exec", "--skip-git-repo-check", *flags,
                   *(["resume", session] if session else []), prompt]
    # stdin closed: codex exec appends piped input to the prompt
    done = subprocess.run(command, env=env, cwd=work, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{agent} failed on {prompt!r}:\n{done.stdout}\n{done.stderr}"
    if agent == "claude-code":
        events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
        return events[-1]["session_id"], _claude_hooks(events), done.stdout + done.stderr
    found = re.search(r"^session id: (\S+)$", done.stderr, flags=re.MULTILINE)
    assert found, f"codex printed no session id:\n{done.stderr}"
    return found.group(1), _codex_hooks(done.stderr), done.stderr


def _claude_hooks(events: list[dict[str, Any]]) -> tuple[tuple[str, str], ...]:
    """From ``--include-hook-events``: a hook completed when it exited 0 and wrote no error."""
    ended = {e["hook_id"]: e for e in events if e.get("subtype") == "hook_response"}
    outcomes = []
    for started in (e for e in events if e.get("subtype") == "hook_started"):
        end = ended.get(started["hook_id"], {})
        clean = end.get("outcome") == "success" and end.get("exit_code") == 0 and not end.get("stderr")
        outcomes.append((started["hook_event"], "completed" if clean else
                         f"{end.get('outcome')} exit {end.get('exit_code')} {end.get('stderr', '')!r}"))
    return tuple(outcomes)


def _codex_hooks(stderr: str) -> tuple[tuple[str, str], ...]:
    """From codex exec's ``hook: <Event>`` and ``hook: <Event> Completed|Failed`` lines."""
    lines = re.findall(r"^hook: (\w+)(?: (\w+))?$", stderr, flags=re.MULTILINE)
    ended = {event: outcome.lower() for event, outcome in lines if outcome}
    return tuple((event, ended.get(event, "no outcome")) for event, outcome in lines if not outcome)


def brief_in(request: Request) -> str:
    """The session brief in a model request (wherever the agent put it): '' when there is none."""
    said = json.dumps(request.body)
    start = said.find(json.dumps(BRIEF_HEADER)[1:-1])
    return "" if start < 0 else said[start:start + 800]


def added_context(request: Request, prompt: str) -> str:
    """memsift's context in a model request, for *prompt*: '' when there is none."""
    said = since_prompt(request, prompt)
    start = said.find(json.dumps(HEADER)[1:-1])
    return "" if start < 0 else said[start:start + 600]


def since_prompt(request: Request, prompt: str) -> str:
    """The request's messages from *prompt*'s own on, as JSON text.

    A resumed session's request also carries the earlier turns and what the
    hooks added to them: only what came with this prompt counts.
    """
    body: dict[str, Any] = request.body
    entries = body.get("messages") or body.get("input") or []
    mine = max((i for i, entry in enumerate(entries) if prompt in json.dumps(entry)), default=None)
    assert mine is not None, f"the prompt {prompt!r} is not in the request"
    return json.dumps(entries[mine:])


def _memsift(env: dict[str, str], *args: str, stdin: str = "") -> str:
    done = subprocess.run([sys.executable, "-m", "memsift", *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _decisions(env: dict[str, str], event: str) -> int:
    return sum(line["event"] == event for line in DecisionLog(Path(env["MEMSIFT_HOME"])).last(1000))


def _notes_file(env: dict[str, str], work: Path) -> Path:
    from memsift.config import load_config

    return load_config(env).project_dir(work) / "notes.md"


def _wait_for(condition: Any, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout:g} s for {what}")
        time.sleep(0.1)
