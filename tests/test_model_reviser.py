"""The model reviser: a model names edits, code checks them whole and applies them by content.

Properties over arbitrary notes and arbitrary model output: what the model
says is either rejected whole (the notes file byte for byte as it was) or
applied so that every line not named stays byte for byte. The reviser is
also run against the OpenAI-compatible and Anthropic services on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from chat_services import AnthropicService, OpenAIService
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memsift.config import load_config
from memsift.decider.anthropic_messages import AnthropicDecider
from memsift.decider.openai_compatible import OpenAICompatibleDecider
from memsift.errors import ServiceUnavailable
from memsift.model_reviser import SCHEMA, MalformedEdits, ModelReviser, edits_from, revise_when_due
from memsift.notes import NotesFile
from memsift.redact import PatternRedactor
from memsift.types import Edit, Usage

GITHUB_TOKEN = "ghp_" + "Zk4Rm8Qx2Lw7Tn1Vb5Hc9Jd3Fg6Sa0PeYuIo"  # fake: the prefix and 36 characters

# -- strategies ----------------------------------------------------------------------------

line_text = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), max_size=30)
note_lines = st.lists(st.one_of(line_text, line_text.map(lambda t: "# " + t), st.just("")), max_size=12)


def edit_objects(size: int) -> st.SearchStrategy[dict[str, Any]]:
    """Edits as a model might write them: mostly well formed, with every way to be wrong mixed in."""
    line = st.one_of(st.integers(min_value=1, max_value=max(size, 1)), st.integers(-2, size + 3),
                     st.booleans(), st.text(max_size=3), st.floats(allow_nan=False))
    action = st.one_of(st.sampled_from(["replace", "remove"]), st.text(max_size=8), st.none())
    text = st.one_of(line_text, st.text(max_size=20), st.integers())
    return st.one_of(
        st.fixed_dictionaries({"line": line, "action": action, "text": text}),
        st.fixed_dictionaries({"line": line, "action": action}),
        st.dictionaries(st.sampled_from(["line", "action", "text", "why", "new"]), text | line, max_size=4),
    )


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                       max_size=3),
                           max_leaves=8)


@st.composite
def notes_and_output(draw: st.DrawFn) -> tuple[list[str], Any]:
    lines = draw(note_lines)
    editable = [n for n, line in enumerate(lines, start=1) if not line.lstrip().startswith("#")]
    valid = st.lists(st.sampled_from(editable), unique=True, min_size=1, max_size=4).flatmap(
        lambda numbers: st.tuples(*[st.fixed_dictionaries({
            "line": st.just(n), "action": st.sampled_from(["replace", "remove"]),
            "text": line_text.filter(lambda t: t.strip() != "")}) for n in numbers])
    ) if editable else st.just(())
    output = draw(st.one_of(
        valid.map(lambda edits: {"edits": list(edits)}),  # what a good model says
        valid.map(lambda edits: {"edits": list(edits)}),  # (twice: half the cases are good answers)
        valid.flatmap(lambda edits: st.fixed_dictionaries({"edits": st.lists(  # one slip among good edits
            edit_objects(len(lines)), min_size=1, max_size=2).map(lambda bad: [*edits, *bad])})),
        st.fixed_dictionaries({"edits": st.lists(edit_objects(len(lines)), max_size=5)}),
        st.fixed_dictionaries({"edits": st.lists(edit_objects(len(lines)), max_size=3), "note": json_values}),
        json_values,
    ))
    return lines, output


class Says:
    """A ``Structured`` backend double that answers what it is told, as the chat deciders return it."""

    name = "decider at 127.0.0.1"

    def __init__(self, output: Any) -> None:
        self.output = output
        self.prompts: list[str] = []

    def structured(self, system: str, prompt: str, schema: Mapping[str, Any], *, name: str,
                   deadline: float) -> tuple[Any, Usage]:
        self.prompts.append(prompt)
        return self.output, Usage(tokens_in=len(prompt) // 4)


def write_notes(path: Path, lines: list[str]) -> bytes:
    raw = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(raw)
    return raw


# -- properties ----------------------------------------------------------------------------

@settings(max_examples=400, deadline=None)
@given(notes_and_output())
def test_a_model_answer_is_rejected_whole_or_names_each_existing_line_once(case):
    lines, output = case
    try:
        edits = edits_from(output, lines)
    except MalformedEdits:
        return
    named = [edit.line for edit in edits]
    assert len(set(named)) == len(named)
    for edit in edits:
        assert 1 <= edit.line <= len(lines) and edit.old == lines[edit.line - 1]
        assert not edit.old.lstrip().startswith("#")
        assert edit.action in ("replace", "remove")
        if edit.action == "replace":
            assert edit.text and "\n" not in edit.text and edit.text == edit.text.strip()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notes_and_output())
def test_revising_a_notes_file_changes_only_the_lines_named(tmp_path, case):
    lines, output = case
    notes = NotesFile(tmp_path / "notes.md")
    before = write_notes(notes.path, lines)
    try:
        edits = ModelReviser(Says(output)).revise(notes.lines(), added=lines[-1:])
    except MalformedEdits:
        assert notes.path.read_bytes() == before  # rejected whole: untouched
        return
    applied = notes.apply(edits)

    by_line = {edit.line: edit for edit in applied}
    expected = [line if n not in by_line else by_line[n].text
                for n, line in enumerate(lines, start=1)
                if n not in by_line or by_line[n].action == "replace"]
    assert notes.path.read_bytes() == "".join(line + "\n" for line in expected).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notes_and_output(), st.lists(line_text, max_size=3), st.data())
def test_an_edit_never_lands_on_a_line_that_changed_since_the_model_read_it(tmp_path, case, appended, data):
    lines, output = case
    try:
        edits = edits_from(output, lines)
    except MalformedEdits:
        return
    assume(edits)
    # Another retain ran meanwhile: some lines changed, one may be gone, others were appended.
    changed = data.draw(st.sets(st.integers(1, len(lines)), max_size=len(lines)))
    now = [line + " (edited)" if n in changed else line for n, line in enumerate(lines, start=1)]
    gone = data.draw(st.none() | st.integers(0, len(now) - 1))
    if gone is not None:
        del now[gone]
    now += appended
    notes = NotesFile(tmp_path / "notes.md")
    write_notes(notes.path, now)

    applied = notes.apply(edits)

    for edit in applied:
        assert now[edit.line - 1] == edit.old  # it landed on a line that still reads what the model read
    assert {edit.old for edit in applied} <= {edit.old for edit in edits if now.count(edit.old) >= 1}
    by_line = {edit.line: edit for edit in applied}
    expected = [line if n not in by_line else by_line[n].text
                for n, line in enumerate(now, start=1)
                if n not in by_line or by_line[n].action == "replace"]
    assert notes.path.read_bytes() == "".join(line + "\n" for line in expected).encode()


# -- the reviser against the chat services -------------------------------------------------

NOTES = ["# Deploys", "Node 20 on the VPS", f"CI token is {GITHUB_TOKEN}", "Node 22 on the VPS since March"]


def answers_with(edits: list[dict[str, Any]]):
    def structurer(prompt: str, schema: Mapping[str, Any]) -> Any:
        assert schema == SCHEMA
        return {"edits": edits}
    return structurer


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_the_reviser_asks_for_structured_edits_and_sends_no_secret(backend):
    service_type = OpenAIService if backend == "openai" else AnthropicService
    with service_type(structurer=answers_with([{"line": 2, "action": "remove", "text": ""}])) as service:
        if backend == "openai":
            model: Any = OpenAICompatibleDecider(service.base_url, model="gpt-4.1-mini")
        else:
            model = AnthropicDecider(service.base_url, model="claude-haiku-4-5", api_key="sk-ant-test")
        reviser = ModelReviser(model, redactor=PatternRedactor())

        edits = reviser.revise(NOTES, added=NOTES[-1:])

    assert edits == [Edit(2, "remove", "", old="Node 20 on the VPS")]
    (request,) = service.bodies()
    sent = json.dumps(request)
    assert GITHUB_TOKEN not in sent and "[REDACTED" in sent  # redaction applies to what the reviser sends
    assert "2: Node 20 on the VPS" in sent and "Just added" in sent
    if backend == "openai":
        assert request["response_format"]["type"] == "json_schema"
        assert request["response_format"]["json_schema"]["strict"] is True
    else:
        assert request["tool_choice"] == {"type": "tool", "name": "edit_notes"}
    assert reviser.spent.tokens_in > 0


def test_text_that_is_not_json_from_the_model_is_unavailable_and_the_notes_stay(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    before = write_notes(notes.path, NOTES)
    with OpenAIService(structurer=lambda prompt, schema: "Sure! I would remove line 2.") as service:
        reviser = ModelReviser(OpenAICompatibleDecider(service.base_url, model="gpt-4.1-mini"))
        with pytest.raises(ServiceUnavailable, match="no JSON object"):
            reviser.revise(notes.lines(), NOTES[-1:])
    assert notes.path.read_bytes() == before


# -- in the background, at most once per interval ------------------------------------------

def test_it_runs_after_retain_at_most_once_per_interval_on_what_is_new(tmp_path):
    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_REVISER": "openai",
                          "MEMSIFT_REVISE_INTERVAL": "600"})
    notes = NotesFile(tmp_path / "notes.md")
    write_notes(notes.path, NOTES[:2])
    model = Says({"edits": []})
    now = [1000.0]

    def run() -> list[Edit] | None:
        return revise_when_due(config, notes, reviser=lambda: ModelReviser(model), clock=lambda: now[0])

    assert run() == []  # first run: every line is new to it
    notes.append(["Node 22 on the VPS since March"])
    now[0] += 60
    assert run() is None and len(model.prompts) == 1  # not due yet
    now[0] += 600
    model.output = {"edits": [{"line": 2, "action": "remove", "text": ""}]}
    assert run() == [Edit(2, "remove", "", old="Node 20 on the VPS")]
    assert "Just added:\n- Node 22 on the VPS since March\n" in model.prompts[-1]
    assert notes.lines() == ["# Deploys", "Node 22 on the VPS since March"]
    now[0] += 600
    assert run() == [] and len(model.prompts) == 2  # nothing new: the model is not asked


def test_a_malformed_answer_in_the_background_leaves_the_notes_and_still_counts(tmp_path):
    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_REVISER": "anthropic"})
    notes = NotesFile(tmp_path / "notes.md")
    before = write_notes(notes.path, NOTES)
    model = Says({"edits": [{"line": 2, "action": "remove"}, {"line": 2, "action": "replace", "text": "x"}]})

    with pytest.raises(MalformedEdits, match="line 2 is named twice"):
        revise_when_due(config, notes, reviser=lambda: ModelReviser(model), clock=lambda: 5000.0)

    assert notes.path.read_bytes() == before
    assert revise_when_due(config, notes, reviser=lambda: ModelReviser(model), clock=lambda: 5001.0) is None


def test_the_default_duplicate_reviser_has_no_background_run(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    write_notes(notes.path, NOTES)

    assert revise_when_due(load_config({"MEMSIFT_HOME": str(tmp_path)}), notes) is None
    assert not (tmp_path / "revised.json").exists()


# -- in the Stop hook: after retain, in the process it detached ---------------------------

def test_the_stop_hook_returns_before_the_model_reviser_answers_then_the_edit_lands(tmp_path):
    from test_adapters import (
        FIX, INCIDENT, claude_transcript, hooks_log, notes_file, run_hook, stop_payload, wait_for,
    )

    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    stale = "Deploys: the build runner has a 10 GB disk and no cache limit"
    NotesFile(notes_file(home, project)).append(["# Deploys", stale])
    answered = threading.Event()

    def removes_the_stale_line(prompt: str, schema: Mapping[str, Any]) -> Any:
        answered.wait(30)  # the model takes its time: the hook must not wait for it
        return {"edits": [{"line": 2, "action": "remove", "text": ""}]}

    with OpenAIService(structurer=removes_the_stale_line) as service:
        transcript = claude_transcript(tmp_path / "session.jsonl", [("user", INCIDENT)])
        result = run_hook("claude", "stop", stop_payload("claude", project, transcript, FIX), home, project,
                          MEMSIFT_REVISER="openai", MEMSIFT_DECIDER_URL=service.base_url,
                          MEMSIFT_DECIDER_MODEL="gpt-4.1-mini")
        assert result.returncode == 0 and result.stderr == b""
        assert wait_for(lambda: service.requests), hooks_log(home)  # asked, and the hook has returned
        answered.set()
        notes = NotesFile(notes_file(home, project))
        lines = wait_for(lambda: stale not in notes.lines() and notes.lines())

    assert lines and lines[0] == "# Deploys" and len(lines) == 2 and "docker builder prune" in lines[1], hooks_log(home)
    (request,) = service.bodies()
    assert "2: " + stale in request["messages"][-1]["content"]
