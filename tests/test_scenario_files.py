"""The loop scenarios shipped in benchmarks/scenarios/: well formed, and their ground truth consistent.

A wrong label does not fail the bench, it skews it: a need pointing at a fact
said later, evidence a note on another subject also holds, a fact's exchange
not kept. These checks read the files as docs/scenarios.md describes them,
the long projects of benchmarks/scenarios/long/ and their older memory
(``notes``) included.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memsift.bench import LoopScenario, load_scenario

SCENARIOS = Path(__file__).resolve().parent.parent / "benchmarks" / "scenarios"
LONG = sorted((SCENARIOS / "long").glob("*.json"))
LOOPS = [*sorted(p for p in SCENARIOS.glob("*.json") if "memsift-loop/1" in p.read_text(encoding="utf-8")), *LONG]
# An older-memory line as memsift writes it: the fact, then its category, date and exchange pointer.
NOTE_LINE = re.compile(r"^(?P<fact>\S.*\S) \((?P<category>decision|constraint|incident) "
                       r"(?P<date>\d{4}-\d\d-\d\d) (?P<pointer>ex-[0-9a-f]{8})\)$")
NOTE_FACT_CHARS = 180  # "at most about 170 characters": a line a person reads at a glance


def read(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def exchange_text(data: dict[str, Any], session_id: str, number: int) -> str:
    (session,) = [s for s in data["sessions"] if s["id"] == session_id]
    return " ".join(t["text"] for t in session["turns"][2 * number: 2 * number + 2])


def source_text(data: dict[str, Any], fact: dict[str, Any]) -> str:
    """Where a fact was said: its exchange, or its line of the older memory."""
    if "notes_line" in fact:
        return str(data["notes"][fact["notes_line"] - 1])
    return exchange_text(data, fact["session"], fact["exchange"])


def ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def test_the_long_projects_are_shipped():
    assert len(LONG) >= 3
    assert all(len(read(p)["sessions"]) >= 10 for p in LONG)


@pytest.mark.parametrize("path", LOOPS, ids=ids(LOOPS))
def test_the_bench_loads_it_as_a_loop(path):
    data = read(path)
    scenario = load_scenario(path)

    assert isinstance(scenario, LoopScenario)
    assert [s.id for s in scenario.sessions] == [s["id"] for s in data["sessions"]]
    assert set(scenario.evidence) == set(data["facts"])


@pytest.mark.parametrize("path", LOOPS, ids=ids(LOOPS))
def test_turns_alternate_user_first_and_later_sessions_label_every_message(path):
    data = read(path)

    assert data["format"] == "memsift-loop/1" and data["id"] and data["project"]
    session_ids = [s["id"] for s in data["sessions"]]
    assert len(set(session_ids)) == len(session_ids)
    for index, session in enumerate(data["sessions"]):
        turns = session["turns"]
        assert turns and len(turns) % 2 == 0, session["id"]
        assert [t["role"] for t in turns] == ["user", "assistant"] * (len(turns) // 2), session["id"]
        assert all(t["text"].strip() for t in turns), session["id"]
        assert all(set(t) == {"role", "text"} for t in turns[1::2]), session["id"]
        for turn in turns[::2]:
            assert set(turn) <= {"role", "text", "needs", "need_kind", "decoy", "secrets"}, turn["text"]
            assert index == 0 or "needs" in turn, turn["text"]
            needs = turn.get("needs", [])
            assert (turn.get("need_kind") in ("direct", "inference")) == bool(needs), turn["text"]
            assert not (turn.get("decoy") and needs), turn["text"]


@pytest.mark.parametrize("path", LOOPS, ids=ids(LOOPS))
def test_a_need_names_a_fact_said_before_its_session_and_not_yet_in_it(path):
    data = read(path)
    order = [s["id"] for s in data["sessions"]]
    for index, session in enumerate(data["sessions"]):
        said = ""
        for user, answer in zip(session["turns"][::2], session["turns"][1::2], strict=True):
            for need in user.get("needs", []):
                fact = data["facts"][need]
                assert "notes_line" in fact or order.index(fact["session"]) < index, (need, user["text"])
                evidence = [e.lower() for e in fact["evidence"]]
                # A fact the session has said already is no longer needed.
                assert not any(e in said for e in evidence), (need, user["text"])
                if user["need_kind"] == "inference":  # reaching it takes a step: it is not in the words
                    assert not any(e in user["text"].lower() for e in evidence), (need, user["text"])
            said += f" {user['text']} {answer['text']}".lower()


@pytest.mark.parametrize("path", LOOPS, ids=ids(LOOPS))
def test_a_fact_is_said_where_it_points_and_its_exchange_is_kept(path):
    data = read(path)
    sessions = {s["id"]: len(s["turns"]) // 2 for s in data["sessions"]}
    assert set(data["keep"]) <= set(sessions)
    for sid, kept in data["keep"].items():
        assert kept == sorted(set(kept)) and all(0 <= n < sessions[sid] for n in kept), sid
    for fid, fact in data["facts"].items():
        if "notes_line" in fact:
            assert "session" not in fact and 1 <= fact["notes_line"] <= len(data.get("notes", [])), fid
        else:
            assert 0 <= fact["exchange"] < sessions[fact["session"]], fid
            assert fact["exchange"] in data["keep"].get(fact["session"], []), fid
        assert fact["what"] and 1 <= len(fact["evidence"]) <= 3, fid
        said = source_text(data, fact).lower()
        assert all(e.strip() and e.lower() in said for e in fact["evidence"]), fid


@pytest.mark.parametrize("path", LOOPS, ids=ids(LOOPS))
def test_evidence_is_in_no_other_line_of_the_older_memory(path):
    data = read(path)
    lines = [line.lower() for line in data.get("notes", [])]
    for fid, fact in data["facts"].items():
        own = fact.get("notes_line", 0) - 1
        for phrase in fact["evidence"]:
            others = [n + 1 for n, line in enumerate(lines) if n != own and phrase.lower() in line]
            assert not others, (fid, phrase, others)


@pytest.mark.parametrize("path", LOOPS, ids=ids(LOOPS))
def test_the_older_memory_is_notes_as_memsift_writes_them(path):
    notes = read(path).get("notes", [])
    matches = [NOTE_LINE.match(line) for line in notes]

    assert all(matches), [line for line, m in zip(notes, matches, strict=True) if not m]
    facts = [m["fact"] for m in matches if m]
    assert all(len(f) <= NOTE_FACT_CHARS for f in facts), [f for f in facts if len(f) > NOTE_FACT_CHARS]
    assert len(set(facts)) == len(facts)
    assert len({m["pointer"] for m in matches if m}) == len(matches)
    dates = [m["date"] for m in matches if m]
    assert dates == sorted(dates)  # oldest first, as the notes file grew


@pytest.mark.parametrize("path", LOOPS, ids=ids(LOOPS))
def test_secrets_are_said_by_the_user_word_for_word(path):
    for session in read(path)["sessions"]:
        for turn in session["turns"][::2]:
            assert all(s and s in turn["text"] for s in turn.get("secrets", [])), turn["text"]
