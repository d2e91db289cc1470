"""The hook adapters, run as the agents run them: ``memsift hook AGENT EVENT`` in a subprocess,
the payload on stdin."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from memsift.config import load_config
from memsift.notes import NotesFile
from memsift_adapters.claude_code import read_turn as claude_turn
from memsift_adapters.codex import read_turn as codex_turn
from memsift._hooks.decisions import DecisionLog
from memsift_adapters.hook import LOG, OUTPUT_CHARS, OUTPUT_ITEMS, RELAY, output_line
from memsift_adapters.transcript import recent_turns

MEMSIFT = Path(sys.executable).parent / "memsift"  # the console script, as `memsift install` runs it
AGENTS = ["claude", "codex"]
AGENT_NAMES = {"claude": "claude-code", "codex": "codex"}
EVENTS = {"prompt": "UserPromptSubmit", "stop": "Stop", "start": "SessionStart", "end": "SessionEnd"}
# The environment of a hook of interactive Claude Code, which shows its user a hook's systemMessage;
# `claude -p` sets sdk-cli, Codex neither (docs/agents.md, Notices).
INTERACTIVE = {"CLAUDE_CODE_ENTRYPOINT": "cli"}

STRIPE_NOTE = ("Payments: Stripe over Mollie because Mollie's webhooks dropped events under load; "
               "Stripe has an official v2 provider.")
STRIPE_QUESTION = "why did we pick Stripe over Mollie for payments?"
INCIDENT = "The deploy failed again with ENOSPC no space left on device on the build runner"
FIX = ("Fixed: the Docker build cache filled /var; root cause was the cache growing without limit. "
       "Added docker builder prune -af to the nightly cron and capped the cache at 20 GB.")


# -- running the hook ------------------------------------------------------------

@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "memsift-home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


def run_hook(agent: str, event: str, stdin: dict | bytes, home: Path, cwd: Path, *,
             python_flags: tuple[str, ...] = (), **env: str) -> subprocess.CompletedProcess[bytes]:
    """The hook as `memsift install` writes it: the venv's python, the console script by path."""
    data = json.dumps(stdin).encode() if isinstance(stdin, dict) else stdin
    # Never the real home: the agents' own files (CLAUDE.md, AGENTS.md) are looked up there.
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith("MEMSIFT_") and k not in ("CODEX_HOME", "CLAUDE_CONFIG_DIR")}
    clean["HOME"] = str(home.parent / "user")
    command = [sys.executable, *python_flags, str(MEMSIFT), "hook", AGENT_NAMES.get(agent, agent),
               EVENTS.get(event, event)]
    return subprocess.run(command, input=data,
                          capture_output=True, cwd=cwd, timeout=60,
                          env={**clean, "MEMSIFT_HOME": str(home), **env})


def notes_file(home: Path, project: Path) -> Path:
    return load_config({"MEMSIFT_HOME": str(home)}).project_dir(project) / "notes.md"


def seed_notes(home: Path, project: Path, *lines: str) -> None:
    NotesFile(notes_file(home, project)).append(list(lines))


def wait_for(read, deadline_s: float = 60.0):
    """The Stop hook retains in a detached process: wait until it has written."""
    end = time.monotonic() + deadline_s
    while not (found := read()) and time.monotonic() < end:
        time.sleep(0.05)
    return found


def hooks_log(home: Path) -> str:
    """Where the detached retain reports what went wrong."""
    log = home / LOG
    return log.read_text() if log.exists() else ""


def told(result: subprocess.CompletedProcess[bytes], event: str = "UserPromptSubmit", *, relayed: bool) -> str:
    """The notice a hook gave, in one line: the user's systemMessage, and the first line of the
    model's context (with the request to pass it on, ``relayed``, when the user does not see it)."""
    output = json.loads(result.stdout)
    assert set(output) == {"systemMessage", "hookSpecificOutput"}  # top level: Codex rejects it nested
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert output["hookSpecificOutput"]["hookEventName"] == event
    notice = output["systemMessage"].removeprefix("memsift: ")
    assert output["systemMessage"] == f"memsift: {notice}" and "\n" not in notice
    first = output["hookSpecificOutput"]["additionalContext"].split("\n")[0]
    assert first == (RELAY + notice if relayed else notice), first
    return notice


def one_line_on_stderr(result: subprocess.CompletedProcess[bytes]) -> str:
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("memsift: ")
    return lines[0]


# -- payloads, shaped as the agents send them (docs/agents.md) -----------------------

def prompt_payload(agent: str, project: Path, prompt: str, transcript: Path | None = None,
                   session: str = "0b7c6f1e-4d2a-4f7e-9a51-2f3c8e6d1a90") -> dict:
    common = {"session_id": session, "cwd": str(project), "hook_event_name": "UserPromptSubmit",
              "permission_mode": "default", "prompt": prompt}
    # Every prompt has an id of its own, as the agents send them: a repeated id is a hook run twice.
    if agent == "claude":
        return {**common, "prompt_id": str(uuid.uuid4()),
                "transcript_path": str(transcript or project / "no-transcript.jsonl")}
    return {**common, "turn_id": str(uuid.uuid4()), "model": "gpt-5.5",
            "transcript_path": str(transcript) if transcript else None}


def stop_payload(agent: str, project: Path, transcript: Path | None, answer: str | None,
                 stop_hook_active: bool = False) -> dict:
    payload = {"session_id": "0b7c6f1e-4d2a-4f7e-9a51-2f3c8e6d1a90", "cwd": str(project),
               "hook_event_name": "Stop", "permission_mode": "default",
               "stop_hook_active": stop_hook_active, "last_assistant_message": answer,
               "transcript_path": str(transcript) if transcript else None}
    if agent == "claude":
        return {**payload, "background_tasks": [], "session_crons": []}
    return {**payload, "turn_id": str(uuid.uuid4()), "model": "gpt-5.5"}


# -- transcripts, in each agent's format (docs/agents.md, Transcripts) ---------------

def claude_transcript(path: Path, turns: list[tuple[str, str]]) -> Path:
    """A Claude Code session file: text turns, with the tool traffic around them."""
    lines = [{"type": "summary", "summary": "Payments work", "leafUuid": "u0"}]
    for number, (role, text) in enumerate(turns):
        base = {"uuid": f"u{number}", "parentUuid": None, "sessionId": "s", "isSidechain": False,
                "timestamp": "2026-11-30T06:00:00.000Z", "cwd": str(path.parent)}
        if role == "user":
            lines.append({**base, "type": "user", "message": {"role": "user", "content": text}})
            continue
        lines += [
            {**base, "type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Look first."},
                {"type": "tool_use", "id": f"t{number}", "name": "Bash", "input": {"command": "ls"}}]}},
            {**base, "type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"t{number}", "content": "README.md"}]}},
            {**base, "type": "user", "isSidechain": True, "message": {"role": "user", "content": "subagent task"}},
            {**base, "type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "text", "text": text}]}},
        ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def codex_transcript(path: Path, turns: list[tuple[str, str]], *, events: str = "items") -> Path:
    """A Codex rollout: session meta, model history, and the messages as events.

    ``events="items"``: ``item_completed`` events, as Codex 0.171 writes them;
    ``"messages"``: the ``user_message`` and ``agent_message`` events of earlier releases.
    """
    stamp = "2026-11-30T06:00:00.000Z"
    lines: list[dict] = [
        {"timestamp": stamp, "type": "session_meta", "payload": {"id": "s", "cwd": str(path.parent)}},
        {"timestamp": stamp, "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}]}},
    ]
    for role, text in turns:
        item_role, item_type = ("user", "input_text") if role == "user" else ("assistant", "output_text")
        if events == "items":
            item = ({"type": "UserMessage", "content": [{"type": "text", "text": text, "text_elements": []}]}
                    if role == "user" else {"type": "AgentMessage", "content": [{"type": "Text", "text": text}]})
            event = {"type": "item_completed", "turn_id": "t1", "item": {"id": "i1", **item}}
        else:
            event = {"type": "user_message" if role == "user" else "agent_message", "message": text}
        lines += [
            {"timestamp": stamp, "type": "event_msg", "payload": event},
            {"timestamp": stamp, "type": "response_item", "payload": {
                "type": "message", "role": item_role, "content": [{"type": item_type, "text": text}]}},
            {"timestamp": stamp, "type": "event_msg", "payload": {"type": "token_count", "info": None}},
        ]
    lines.append({"timestamp": stamp, "type": "event_msg", "payload": {"type": "task_complete"}})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


TRANSCRIPTS = {"claude": claude_transcript, "codex": codex_transcript}


# -- UserPromptSubmit ---------------------------------------------------------------

@pytest.mark.parametrize("agent", AGENTS)
def test_a_quiet_message_prints_nothing_and_exits_0(agent, home, project):
    seed_notes(home, project, STRIPE_NOTE)
    result = run_hook(agent, "prompt", prompt_payload(agent, project, "thanks, that works!"), home, project)

    assert result.returncode == 0
    assert result.stdout == b""  # both contracts: empty stdout adds nothing and is no failure
    assert result.stderr == b""


@pytest.mark.parametrize("agent", AGENTS)
def test_a_message_answered_by_the_notes_gets_them_as_additional_context(agent, home, project):
    seed_notes(home, project, STRIPE_NOTE)
    result = run_hook(agent, "prompt", prompt_payload(agent, project, STRIPE_QUESTION), home, project)

    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    # Exactly the documented keys: Codex rejects the whole output on an unknown one.
    assert set(output) == {"hookSpecificOutput"}
    assert set(output["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert output["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert STRIPE_NOTE in output["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("agent", AGENTS)
def test_the_transcript_gives_the_recent_turns(agent, home, project, tmp_path):
    """The note is dropped when the last answer in the agent's transcript already says it."""
    seed_notes(home, project, STRIPE_NOTE)
    transcript = TRANSCRIPTS[agent](tmp_path / "session.jsonl", [
        ("user", "remind me about the payment provider"),
        ("assistant", f"From the notes: {STRIPE_NOTE}"),
    ])
    result = run_hook(agent, "prompt", prompt_payload(agent, project, STRIPE_QUESTION, transcript),
                      home, project)

    assert result.returncode == 0, result.stderr
    assert result.stdout == b""


def dead_cognee() -> dict[str, str]:
    """Cognee configured at a port nothing listens on: the server is down."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    return {"MEMSIFT_STORE": "cognee", "MEMSIFT_COGNEE_URL": url}


@pytest.mark.parametrize(("agent", "mode"), [("claude", INTERACTIVE), ("claude", {}), ("codex", {})])
def test_a_paused_memory_is_told_in_one_line_once_per_session(agent, mode, home, project):
    """Where the user sees hook messages (interactive Claude Code), the line is theirs and the
    model's; elsewhere (claude -p, Codex) the model is asked to pass it on."""
    cognee = dead_cognee()
    payload = prompt_payload(agent, project, STRIPE_QUESTION)

    first = run_hook(agent, "prompt", payload, home, project, **cognee, **mode)
    again = run_hook(agent, "prompt", payload, home, project, **cognee, **mode)

    assert first.returncode == again.returncode == 0
    assert told(first, relayed=not mode).startswith("memory paused: ")
    assert again.stdout == b""


def test_httpx_is_imported_only_when_the_cognee_store_is_searched(home, project):
    def imported(message: str, **env: str) -> set[str]:
        result = run_hook("claude", "prompt", prompt_payload("claude", project, message), home, project,
                          python_flags=("-X", "importtime"), **env)
        return {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines()
                if line.startswith("import time:")}

    quiet, searching = imported("thanks, that works!"), imported(STRIPE_QUESTION)
    assert "memsift._hooks.quiet" in quiet and "memsift.stores.sqlite" in searching
    assert "httpx" not in quiet | searching
    quiet_with_cognee = imported("thanks, that works!", **dead_cognee())
    assert "memsift.pipeline" in quiet_with_cognee and "httpx" not in quiet_with_cognee
    assert "httpx" in imported(STRIPE_QUESTION, **dead_cognee())  # the check sees it when it is there


def test_a_quiet_message_never_imports_attrs_nor_the_pipeline(home, project):
    """The quiet path (memsift._hooks.quiet) decides alone: what the pipeline costs is paid only to search."""
    result = run_hook("codex", "prompt", prompt_payload("codex", project, "thanks, that works!"), home, project,
                      python_flags=("-X", "importtime"))
    imported = {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines()
                if line.startswith("import time:")}

    assert result.stdout == b""
    assert "memsift._hooks.quiet" in imported and "memsift.decider._heads" in imported
    assert not {name for name in imported if name.split(".")[0] in ("attr", "attrs")}
    assert not {"memsift.pipeline", "memsift.types", "memsift.config", "argparse"} & imported


# -- bad input ----------------------------------------------------------------------

BAD_STDIN = {
    "not JSON": b"this is not json\n",
    "binary junk": bytes(range(256)) * 4,
    "a JSON list": b"[1, 2, 3]",
    "no prompt": json.dumps({"session_id": "s", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit"}).encode(),
    "no cwd": json.dumps({"session_id": "s", "prompt": "why Stripe?"}).encode(),
    "prompt not text": json.dumps({"session_id": "s", "cwd": "/tmp", "prompt": ["why"]}).encode(),
}


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("case", list(BAD_STDIN))
def test_bad_input_on_the_prompt_hook_exits_0_with_one_line_on_stderr(agent, case, home, project):
    result = run_hook(agent, "prompt", BAD_STDIN[case], home, project)

    assert result.returncode == 0
    assert result.stdout == b""
    assert f"{AGENT_NAMES[agent]} UserPromptSubmit hook" in one_line_on_stderr(result)


@pytest.mark.parametrize("event", list(EVENTS))
@pytest.mark.parametrize("stdin", [b"", b"\n  \n"])
def test_a_hook_given_nothing_exits_0_and_says_nothing(event, stdin, home, project):
    """An empty payload asks nothing: nothing for the agent, nothing on stderr, nothing made."""
    result = run_hook("claude", event, stdin, home, project)

    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert not home.exists()


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("case", ["not JSON", "binary junk", "no cwd"])
def test_bad_input_on_the_stop_hook_exits_0_with_one_line_on_stderr(agent, case, home, project):
    result = run_hook(agent, "stop", BAD_STDIN[case], home, project)

    assert result.returncode == 0
    assert result.stdout == b""
    one_line_on_stderr(result)


@pytest.mark.parametrize(("agent", "event", "wrong"), [("claude", "UserPromptSubmit", "an unknown agent 'claude'"),
                                                     ("codex", "UserPrompt", "an unknown event 'UserPrompt'")])
def test_an_unknown_agent_or_event_is_told_to_the_user_once_a_session(agent, event, wrong, home, project):
    """Written by hand as `memsift hook claude UserPromptSubmit`: a systemMessage both agents show."""
    command = [sys.executable, str(MEMSIFT), "hook", agent, event]
    env = {**os.environ, "MEMSIFT_HOME": str(home), "HOME": str(home.parent / "user")}
    payload = json.dumps(prompt_payload("codex", project, "why did we pick Stripe?")).encode()

    first, again = (subprocess.run(command, input=payload, capture_output=True, env=env, timeout=60)
                    for _ in range(2))

    assert first.returncode == again.returncode == 0
    told = json.loads(first.stdout)
    assert set(told) == {"systemMessage"}  # valid for every event of both agents
    assert told["systemMessage"].startswith(f"memsift: the hook command `memsift hook {agent} {event}` names {wrong}")
    assert "memory is off" in told["systemMessage"] and "claude-code|codex" in told["systemMessage"]
    assert again.stdout == b"" and wrong in one_line_on_stderr(again)  # said once per session, logged every time


# -- Stop -----------------------------------------------------------------------------

def test_claude_stop_keeps_an_incident_and_its_fix_as_one_line_of_notes(home, project, tmp_path):
    transcript = claude_transcript(tmp_path / "session.jsonl", [("user", INCIDENT)])  # answer not yet written
    result = run_hook("claude", "stop", stop_payload("claude", project, transcript, FIX), home, project)

    assert result.returncode == 0
    assert result.stdout == b"" and result.stderr == b""
    lines = wait_for(NotesFile(notes_file(home, project)).lines)
    assert len(lines) == 1, hooks_log(home)
    assert "docker builder prune" in lines[0] and len(lines[0]) <= 400


def test_codex_stop_reads_the_answer_from_the_rollout_when_the_payload_has_none(home, project, tmp_path):
    transcript = codex_transcript(tmp_path / "rollout.jsonl", [("user", INCIDENT), ("assistant", FIX)])
    result = run_hook("codex", "stop", stop_payload("codex", project, transcript, None), home, project)

    assert result.returncode == 0
    assert result.stdout == b"" and result.stderr == b""
    lines = wait_for(NotesFile(notes_file(home, project)).lines)
    assert len(lines) == 1, hooks_log(home)
    assert "docker builder prune" in lines[0] and len(lines[0]) <= 400


@pytest.mark.parametrize("agent", AGENTS)
def test_a_broken_config_is_told_to_the_agent_once_and_one_line_in_the_log_of_the_detached_retain(
        agent, home, project, tmp_path):
    home.mkdir()
    (home / "config.toml").write_text("store = 'bogus'\n")
    transcript = TRANSCRIPTS[agent](tmp_path / "t.jsonl", [("user", INCIDENT)])

    prompt = run_hook(agent, "prompt", prompt_payload(agent, project, STRIPE_QUESTION), home, project)
    again = run_hook(agent, "prompt", prompt_payload(agent, project, STRIPE_QUESTION), home, project)
    stop = run_hook(agent, "stop", stop_payload(agent, project, transcript, FIX), home, project)

    assert prompt.returncode == again.returncode == stop.returncode == 0
    notice = told(prompt, relayed=True)
    assert notice.startswith("memory off: memsift's settings: ") and "bogus" in notice
    assert again.stdout == stop.stdout == stop.stderr == b""  # once per session
    assert "bogus" in one_line_on_stderr(prompt)
    [line] = wait_for(lambda: hooks_log(home).splitlines())
    assert line.startswith(f"memsift: {AGENT_NAMES[agent]} Stop hook: ") and "bogus" in line


@pytest.mark.parametrize("agent", AGENTS)
def test_stop_without_a_transcript_keeps_nothing_and_says_why(agent, home, project):
    result = run_hook(agent, "stop", stop_payload(agent, project, None, FIX), home, project)

    assert result.returncode == 0
    assert result.stdout == b""
    assert "no user prompt" in one_line_on_stderr(result)


@pytest.mark.parametrize("agent", AGENTS)
def test_stop_forced_by_a_stop_hook_is_skipped_quietly(agent, home, project, tmp_path):
    transcript = TRANSCRIPTS[agent](tmp_path / "t.jsonl", [("user", INCIDENT)])
    result = run_hook(agent, "stop", stop_payload(agent, project, transcript, FIX, stop_hook_active=True),
                      home, project)

    assert result.returncode == 0
    assert result.stdout == b"" and result.stderr == b""


# -- reading transcripts --------------------------------------------------------------

CONVERSATION = [
    ("user", "the webhook tests are flaky"),
    ("assistant", "They race the queue; I added a wait on the job id."),
    ("user", "and the retry policy?"),
    ("assistant", "Three retries with jitter, as in the worker."),
]


@pytest.mark.parametrize("agent", AGENTS)
def test_recent_turns_are_the_texts_said_oldest_first(agent, tmp_path):
    path = TRANSCRIPTS[agent](tmp_path / "t.jsonl", CONVERSATION)
    read = {"claude": claude_turn, "codex": codex_turn}[agent]

    assert recent_turns(str(path), read, 4) == CONVERSATION
    assert recent_turns(str(path), read, 2) == CONVERSATION[-2:]


def test_codex_rollouts_of_earlier_releases_are_read_too(tmp_path):
    path = codex_transcript(tmp_path / "t.jsonl", CONVERSATION, events="messages")

    assert recent_turns(str(path), codex_turn, 4) == CONVERSATION


def test_an_answer_split_around_tool_calls_is_one_turn(tmp_path):
    path = tmp_path / "t.jsonl"
    def text(t: str) -> dict[str, object]:
        return {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": t}]}}

    lines = [{"type": "user", "message": {"role": "user", "content": "why is CI red?"}},
             text("Checking the logs."),
             {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}},
             text("A flaky test: fixed.")]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))

    assert recent_turns(str(path), claude_turn, 4) == [
        ("user", "why is CI red?"), ("assistant", "Checking the logs.\nA flaky test: fixed.")]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_long_transcript_is_read_from_its_tail(agent, tmp_path):
    """Far more tool traffic than the first window after the last turns, torn and foreign lines too."""
    path = TRANSCRIPTS[agent](tmp_path / "t.jsonl", CONVERSATION)
    filler = json.dumps({"type": "progress", "data": "x" * 1000}) + "\n"
    with path.open("ab") as out:
        out.write(b"\xff\xfe not json\n" + filler.encode() * 300 + b'{"type": "user", "mess')

    read = {"claude": claude_turn, "codex": codex_turn}[agent]
    assert recent_turns(str(path), read, 2) == CONVERSATION[-2:]


def test_a_missing_or_absent_transcript_has_no_turns(tmp_path):
    assert recent_turns(None, claude_turn, 4) == []
    assert recent_turns(str(tmp_path / "gone.jsonl"), codex_turn, 4) == []
    assert recent_turns(str(tmp_path), claude_turn, 4) == []  # a folder, not a file


# -- SessionStart and SessionEnd --------------------------------------------------------

def session_payload(agent: str, project: Path, event: str, session: str = "s-start") -> dict:
    """As both agents send them: SessionStart with a source, SessionEnd with a reason."""
    payload = {"session_id": session, "transcript_path": None, "cwd": str(project), "hook_event_name": event}
    payload |= {"source": "startup"} if event == "SessionStart" else {"reason": "other"}
    if agent == "codex" and event == "SessionStart":
        payload |= {"model": "gpt-5.5", "permission_mode": "default"}
    return payload


@pytest.mark.parametrize("agent", AGENTS)
def test_session_start_says_nothing_when_memory_works(agent, home, project):
    result = run_hook(agent, "start", session_payload(agent, project, "SessionStart"), home, project)

    assert result.returncode == 0
    assert result.stdout == b"" and result.stderr == b""


def test_session_start_says_in_one_line_that_the_settings_do_not_load(home, project):
    result = run_hook("claude", "start", session_payload("claude", project, "SessionStart"), home, project,
                      MEMSIFT_STORE="bogus", **INTERACTIVE)

    assert result.returncode == 0
    notice = told(result, "SessionStart", relayed=False)
    assert notice.startswith("memory off: memsift's settings: ") and "bogus" in notice


def imported_by(result: subprocess.CompletedProcess[bytes]) -> set[str]:
    """The modules a hook run with ``-X importtime`` imported."""
    return {line.split("|")[-1].strip() for line in result.stderr.decode().splitlines()
            if line.startswith("import time:")}


def test_session_start_loads_the_settings_only_when_they_changed(home, project):
    """The first SessionStart checks the settings (attrs, the services); the next ones, the settings
    as they were, read the verdict back: neither attrs nor the pipeline. A changed config.toml, or a
    changed variable, is checked afresh, and said at once."""
    def start(session: str, **env: str) -> subprocess.CompletedProcess[bytes]:
        return run_hook("claude", "start", session_payload("claude", project, "SessionStart", session), home,
                        project, python_flags=("-X", "importtime"), **INTERACTIVE, **env)

    first, again = start("s1"), start("s2")
    (home / "config.toml").write_text("max_items = 'two'\n")
    edited = start("s3")
    (home / "config.toml").write_text("max_items = 2\n")
    fixed, variable = start("s4"), start("s5", MEMSIFT_JUDGE="fast")

    assert "attrs" in imported_by(first) and first.stdout == again.stdout == b""
    assert not {name for name in imported_by(again) if name.split(".")[0] in ("attr", "attrs")}
    assert not {"memsift.pipeline", "memsift.config", "memsift.services"} & imported_by(again)
    assert "max_items='two'" in json.loads(edited.stdout)["systemMessage"]
    assert fixed.stdout == b""  # a session that never heard "off" hears no "back on"
    assert "judge must be auto, semantic or lexical, not 'fast'" in json.loads(variable.stdout)["systemMessage"]


@pytest.mark.parametrize(("agent", "mode"), [("claude", {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}), ("claude", {}),
                                             ("codex", {})])
def test_what_session_start_cannot_show_is_told_with_the_next_prompt_once(agent, mode, home, project):
    """claude -p and codex exec show no hook message: SessionStart holds its line, the next prompt
    (a quiet one too) gives it to the model to pass on, and nothing repeats it."""
    def prompt(text: str) -> subprocess.CompletedProcess[bytes]:
        return run_hook(agent, "prompt", prompt_payload(agent, project, text, session="s-start"), home, project,
                        MEMSIFT_JUDGE="fast", **mode)

    start = run_hook(agent, "start", session_payload(agent, project, "SessionStart"), home, project,
                     MEMSIFT_JUDGE="fast", **mode)
    first, second = prompt("thanks, that works!"), prompt(STRIPE_QUESTION)

    assert start.returncode == first.returncode == second.returncode == 0
    assert start.stdout == b""
    notice = told(first, relayed=True)
    assert notice.startswith("memory off: memsift's settings: MEMSIFT_JUDGE: judge must be auto, semantic or "
                             "lexical, not 'fast'; reminders are off"), notice
    assert second.stdout == b""


@pytest.mark.parametrize(("agent", "mode"), [("claude", INTERACTIVE), ("codex", {})])
def test_a_session_starting_while_memory_is_paused_is_told_once(agent, mode, home, project):
    cognee = dead_cognee()
    earlier = run_hook(agent, "prompt", prompt_payload(agent, project, STRIPE_QUESTION, session="earlier"),
                       home, project, **cognee)
    assert json.loads(earlier.stdout)  # an earlier session found the store down: the breaker is open

    start = run_hook(agent, "start", session_payload(agent, project, "SessionStart", "new"), home, project,
                     **cognee, **mode)
    prompt, again = (run_hook(agent, "prompt", prompt_payload(agent, project, STRIPE_QUESTION, session="new"),
                              home, project, **cognee, **mode) for _ in range(2))

    assert start.returncode == prompt.returncode == again.returncode == 0
    if mode:  # the session heard it at its start
        assert told(start, "SessionStart", relayed=False).startswith("memory paused: ")
        assert prompt.stdout == b""
    else:  # Codex shows no SessionStart line: the first prompt says it
        assert start.stdout == b"" and told(prompt, relayed=True).startswith("memory paused: ")
    assert again.stdout == b""


@pytest.mark.parametrize("agent", AGENTS)
def test_session_end_drains_the_outbox_detached_and_keeps_what_the_store_refuses(agent, home, project):
    """The store is down: the detached drain opens the breaker, and the item stays queued."""
    from memsift._keeping.outbox import Outbox
    from memsift.config import Config
    from memsift.types import Item

    cognee = dead_cognee()
    outbox = Outbox(Config(home=home).project_dir(project) / "cognee-outbox.sqlite")  # the project's own
    outbox.put([Item("a1", "We chose Stripe over Adyen: official v2 provider.", "passage", "memsift:decision")])

    result = run_hook(agent, "end", session_payload(agent, project, "SessionEnd"), home, project, **cognee)

    assert result.returncode == 0
    assert result.stdout == b"" and result.stderr == b""
    health = wait_for(lambda: (home / "health.json").exists() and json.loads((home / "health.json").read_text()))
    [(service, state)] = health.items()
    assert service.startswith("Cognee at ") and state["open"] is True
    assert outbox.pending() == 1


def test_flush_sends_what_the_outbox_holds_to_the_store(services, tmp_path):
    from attrs import evolve

    from memsift.stages.retain import flush
    from memsift._keeping.outbox import Outbox
    from memsift.types import Item

    outbox = Outbox(tmp_path / "outbox.sqlite")
    outbox.put([Item(f"a{n}", f"Capped the worker heap at {n} GB after the nightly OOM.", "passage", "retain")
                for n in range(3)])

    said = flush(evolve(services, outbox=outbox), "s1")

    assert said == "flush: 3 sent, 0 pending"
    assert [item.id for item in services.store.search("worker heap nightly", limit=5, timeout=1)] != []
    assert outbox.pending() == 0
    assert flush(services) == "flush: no outbox"


# -- the project is the repository ------------------------------------------------------

@pytest.mark.parametrize("git", ["folder", "file"])
def test_a_session_in_a_subfolder_shares_the_repositorys_notes(git, home, project):
    if git == "folder":
        (project / ".git").mkdir()
    else:  # a worktree or a submodule has a .git file
        (project / ".git").write_text("gitdir: /elsewhere/.git/worktrees/shop\n")
    worker = project / "src" / "worker"
    worker.mkdir(parents=True)
    seed_notes(home, project, STRIPE_NOTE)

    result = run_hook("codex", "prompt", prompt_payload("codex", worker, STRIPE_QUESTION), home, worker)

    assert result.returncode == 0, result.stderr
    assert STRIPE_NOTE in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def test_without_git_the_folder_is_the_project(home, project):
    seed_notes(home, project, STRIPE_NOTE)
    sub = project / "docs"
    sub.mkdir()

    result = run_hook("claude", "prompt", prompt_payload("claude", sub, STRIPE_QUESTION), home, sub)

    assert result.returncode == 0 and result.stdout == b""


# -- never repeating what the agent loads -------------------------------------------------

INSTRUCTION_FILES = {"claude": "CLAUDE.md", "codex": "AGENTS.md"}


@pytest.mark.parametrize("agent", AGENTS)
def test_a_note_the_agents_instruction_file_states_is_not_added(agent, home, project):
    (project / ".git").mkdir()
    (project / "api").mkdir()
    seed_notes(home, project, STRIPE_NOTE)
    payload = prompt_payload(agent, project / "api", STRIPE_QUESTION, session="before")
    assert json.loads(run_hook(agent, "prompt", payload, home, project).stdout)  # added while no file says it
    (project / INSTRUCTION_FILES[agent]).write_text(
        "# Conventions\n\n- Run the tests with `make test`.\n"
        "- Payments go through Stripe, not Mollie: Mollie's webhooks dropped events under load,\n"
        "  and Stripe has an official v2 provider.\n")

    result = run_hook(agent, "prompt", prompt_payload(agent, project / "api", STRIPE_QUESTION), home, project)

    assert result.returncode == 0, result.stderr
    assert result.stdout == b""


@pytest.mark.parametrize("agent", AGENTS)
def test_the_users_own_instruction_file_counts_too(agent, home, project, tmp_path):
    seed_notes(home, project, STRIPE_NOTE)
    user_home = tmp_path / "user"
    folder = user_home / (".claude" if agent == "claude" else ".codex")
    folder.mkdir(parents=True)
    payload = prompt_payload(agent, project, STRIPE_QUESTION, session="before")
    assert json.loads(run_hook(agent, "prompt", payload, home, project, HOME=str(user_home)).stdout)
    (folder / INSTRUCTION_FILES[agent]).write_text(f"Remember: {STRIPE_NOTE}\n")

    result = run_hook(agent, "prompt", prompt_payload(agent, project, STRIPE_QUESTION), home, project,
                      HOME=str(user_home))

    assert result.returncode == 0, result.stderr
    assert result.stdout == b""


# The agents' own memories, where each keeps them (hooks.md, peers.md): Claude Code's auto memory beside
# the session's transcript (MEMORY.md and its topic files), Codex's under $CODEX_HOME/memories.
AGENT_MEMORIES = {"claude": ["memory/MEMORY.md", "memory/payments.md"],
                  "codex": ["memories/memory_summary.md", "memories/MEMORY.md"]}


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("which", [0, 1])
def test_a_note_the_agents_own_memory_holds_is_not_added(agent, which, home, project, tmp_path):
    seed_notes(home, project, STRIPE_NOTE)
    user_home = tmp_path / "user"
    if agent == "claude":  # ~/.claude/projects/<encoded cwd>/<session>.jsonl, memory/ beside it
        (user_home / ".claude" / "projects" / "-shop").mkdir(parents=True)
        transcript = claude_transcript(user_home / ".claude" / "projects" / "-shop" / "s.jsonl", [])
        base = transcript.parent
    else:
        transcript, base = None, user_home / ".codex"
    payload = prompt_payload(agent, project, STRIPE_QUESTION, transcript, session="before")
    assert json.loads(run_hook(agent, "prompt", payload, home, project, HOME=str(user_home)).stdout)
    memory = base / AGENT_MEMORIES[agent][which]
    memory.parent.mkdir(parents=True, exist_ok=True)
    memory.write_text(f"# Payments\n\n- {STRIPE_NOTE}\n")

    result = run_hook(agent, "prompt", prompt_payload(agent, project, STRIPE_QUESTION, transcript), home, project,
                      HOME=str(user_home))

    assert result.returncode == 0, result.stderr
    assert result.stdout == b""


def test_an_unrelated_instruction_file_takes_nothing_away(home, project):
    seed_notes(home, project, STRIPE_NOTE)
    (project / "CLAUDE.md").write_text("- Run the tests with `make test`.\n- Prefer small commits.\n")

    result = run_hook("claude", "prompt", prompt_payload("claude", project, STRIPE_QUESTION), home, project)

    assert STRIPE_NOTE in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize("agent", AGENTS)
def test_a_quiet_message_never_opens_the_instruction_files(agent, home, project):
    """A FIFO blocks whoever opens it for reading: a hook that read it would hang past the timeout."""
    seed_notes(home, project, STRIPE_NOTE)
    os.mkfifo(project / INSTRUCTION_FILES[agent])

    result = run_hook(agent, "prompt", prompt_payload(agent, project, "thanks, that works!"), home, project)

    assert result.returncode == 0
    assert result.stdout == b"" and result.stderr == b""


# -- two routes for one agent, the size of what is returned, variables no setting reads ---------

@pytest.mark.parametrize("agent", AGENTS)
def test_the_same_call_run_by_two_routes_adds_one_reminder_and_keeps_one_line(agent, home, project):
    """The plugin and `memsift install` both run every hook, concurrently: the second does nothing."""
    seed_notes(home, project, STRIPE_NOTE)
    payload = json.dumps(prompt_payload(agent, project, STRIPE_QUESTION)).encode()
    command = [sys.executable, str(MEMSIFT), "hook", AGENT_NAMES[agent], "UserPromptSubmit"]
    env = {**os.environ, "MEMSIFT_HOME": str(home), "HOME": str(home.parent / "user")}
    both = [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, cwd=project) for _ in range(2)]
    outputs = [process.communicate(payload, timeout=60) for process in both]

    assert [process.returncode for process in both] == [0, 0]
    told = [stdout for stdout, _ in outputs if stdout]
    assert len(told) == 1 and "Stripe" in json.loads(told[0])["hookSpecificOutput"]["additionalContext"]
    recalls = [line for line in DecisionLog(home).last(10) if line["event"] == "UserPromptSubmit"]
    assert len(recalls) == 1
    # The next prompt of the session (a new prompt id) is a call of its own.
    again = run_hook(agent, "prompt", prompt_payload(agent, project, STRIPE_QUESTION), home, project)
    assert again.returncode == 0 and len(DecisionLog(home).last(10)) == 2


def test_what_a_hook_returns_stays_under_both_agents_preview_limits_whatever_the_settings(home, project):
    """Claude Code previews output over 10,000 characters, Codex over 2,500 tokens: capped at OUTPUT_CHARS."""
    long_notes = [f"- Payments {n}: Stripe over Mollie because " + "Mollie webhooks dropped événements " * 60
                  for n in range(12)]
    seed_notes(home, project, *long_notes)
    result = run_hook("claude", "prompt", prompt_payload("claude", project, STRIPE_QUESTION), home, project,
                      MEMSIFT_MAX_ITEMS="12", MEMSIFT_ANSWERS_THRESHOLD="0", MEMSIFT_ASKED_THRESHOLD="0")

    assert result.returncode == 0, result.stderr
    line = result.stdout.decode().strip()
    context = json.loads(line)["hookSpecificOutput"]["additionalContext"]
    assert len(line) <= OUTPUT_CHARS and len(context.encode()) <= OUTPUT_CHARS
    assert 1 <= context.count("\n- ") <= OUTPUT_ITEMS


def test_output_line_keeps_whole_items_best_first_and_shortens_only_a_first_one_too_long():
    items = "\n".join(f"- item {n} " + "é" * 400 for n in range(9))  # 2,400 characters each in JSON
    kept = json.loads(output_line("UserPromptSubmit", "Header:\n" + items, None))
    lines = kept["hookSpecificOutput"]["additionalContext"].split("\n")
    assert lines[0] == "Header:" and [line.split()[2] for line in lines[1:]] == ["0", "1", "2"]  # whole, in order
    one = json.loads(output_line("SessionStart", "Header:\n- " + "x" * 50_000, "memory paused: " + "y" * 9000))
    assert one["systemMessage"].endswith("…") and len(json.dumps(one)) <= OUTPUT_CHARS
    assert one["hookSpecificOutput"]["additionalContext"].endswith("…")


def test_an_unknown_setting_is_told_once_a_session_and_memory_works(home, project):
    """A misspelled variable and a misspelled key of config.toml: named with the right names when
    the session starts, not again when it resumes; memory works: the note reaches the model, in the
    session's brief (and the prompt is not given it again)."""
    home.mkdir()
    (home / "config.toml").write_text('jugde = "lexical"\n')
    seed_notes(home, project, STRIPE_NOTE)
    env = {"MEMSIFT_ANSWER_THRESHOLD": "0.9", **INTERACTIVE}

    start = run_hook("claude", "start", session_payload("claude", project, "SessionStart"), home, project, **env)
    resumed = run_hook("claude", "start", {**session_payload("claude", project, "SessionStart"), "source": "resume"},
                       home, project, **env)
    prompt = run_hook("claude", "prompt", prompt_payload("claude", project, STRIPE_QUESTION, session="s-start"),
                      home, project, **env)

    assert start.returncode == resumed.returncode == prompt.returncode == 0 and start.stderr == b""
    assert told(start, "SessionStart", relayed=False) == (
        "MEMSIFT_ANSWER_THRESHOLD is not a memsift setting (did you mean MEMSIFT_ANSWERS_THRESHOLD?), ignored; "
        f"{home / 'config.toml'}: jugde is not a memsift setting (did you mean judge?), ignored")
    assert STRIPE_NOTE in json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert set(json.loads(resumed.stdout)) == {"hookSpecificOutput"}  # the brief again, and no notice
    assert STRIPE_NOTE in json.loads(resumed.stdout)["hookSpecificOutput"]["additionalContext"]
    assert prompt.stdout == b""  # the brief gave it: not added again
