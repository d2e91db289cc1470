"""Bounded work: inputs cut to size before costly work, every stage within a budget (issue 11)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from attrs import evolve
from test_adapters import prompt_payload, run_hook, seed_notes

from memsift import stages
from memsift._runtime.bounds import MESSAGE_CHARS, QUERY_TERMS, bounded, query_terms
from memsift.pipeline import recall
from memsift.redact import redact
from memsift._words.text import content_words
from memsift.types import Message

TOKEN = "ghp_4fT9kQ2mZx8LwP1vR7bN3cY6dJ0sHaUeGiKo"
PEM = ("-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(["MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2A8J"] * 200)
       + "\n-----END RSA PRIVATE KEY-----")


def test_a_short_text_is_only_redacted():
    assert bounded(f"my token {TOKEN}", MESSAGE_CHARS, redact) == "my token [REDACTED:github-token]"


def test_a_long_text_keeps_its_head_and_tail_within_the_limit():
    text = "why does the worker fail?\n" + "log line of a pasted log\n" * 200_000 + "and what did we do last time?"

    cut = bounded(text, MESSAGE_CHARS, redact)

    assert len(cut) <= MESSAGE_CHARS + 60
    assert cut.startswith("why does the worker fail?\n") and cut.endswith("and what did we do last time?")
    assert "characters left out" in cut


def test_a_credential_the_cut_runs_through_is_still_redacted():
    for offset in range(-30, 30, 7):  # the token straddles the head's end, then the tail's start
        head = "a" * (MESSAGE_CHARS // 2 + offset) + f" {TOKEN} "
        text = head + "b" * 50_000 + f" {TOKEN} " + "c" * (MESSAGE_CHARS // 2 + offset)
        cut = bounded(text, MESSAGE_CHARS, redact)
        assert TOKEN[:12] not in cut and TOKEN[-12:] not in cut, offset


def test_the_body_of_a_private_key_whose_header_was_cut_off_is_dropped():
    text = "question first\n" + "x" * 50_000 + "\n" + PEM + "\nthe end"

    cut = bounded(text, MESSAGE_CHARS, redact)

    assert "MIIEpAIBAAKCAQEA" not in cut and cut.endswith("the end")


def test_a_query_keeps_the_first_and_last_terms_met():
    terms = [f"t{i}" for i in range(1000)] + ["worker", "t3"]

    assert query_terms(terms, limit=4) == ["t0", "t1", "t999", "worker"]
    assert query_terms(["a", "b", "a"]) == ["a", "b"]


def test_a_stage_past_its_budget_ends_the_path_with_nothing_and_no_notice(services, monkeypatch):
    monkeypatch.setattr(stages, "LOCAL_WORK", 0.2)
    fast = evolve(services, config=evolve(services.config, decider_deadline=0.1, store_deadline=0.1))

    def stuck(services, state):  # one of the user's: it may call the decider and the store
        time.sleep(2)
        return state

    started = time.perf_counter()
    result = recall(Message("why did we pick Stripe?", session="s1"), fast, stages=[stages.redact, stuck])
    took = time.perf_counter() - started

    assert result.stopped_by == "stuck: over its budget" and result.text == "" and result.notice is None
    assert took < 1.5  # 0.2 s of its own work and 0.1 s for each service, not the 2 s it wanted


def test_a_fifo_given_as_the_transcript_does_not_hang_either_hook(tmp_path: Path):
    home, project = tmp_path / "home", tmp_path / "shop"
    project.mkdir()
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)  # no writer will ever come: open() would wait for ever
    seed_notes(home, project, "decision: Payments: Stripe over Mollie: Mollie's webhooks dropped events.")

    asked = run_hook("claude", "prompt", prompt_payload("claude", project, "why did we pick Stripe over Mollie?",
                                                        transcript=fifo), home, project)
    stopped = run_hook("claude", "stop", {"session_id": "s1", "cwd": str(project), "transcript_path": str(fifo),
                                          "last_assistant_message": "done"}, home, project)

    assert asked.returncode == stopped.returncode == 0  # run_hook's 60 s timeout would raise otherwise
    assert b"Stripe over Mollie" in asked.stdout
    assert b"no user prompt in the transcript" in stopped.stderr


def test_a_long_query_keeps_the_named_terms_of_a_pasted_log_over_its_numbers():
    paste = ("training died:\nEpoch 0: 100% 1478/1478 [11:02<00:00, 2.23it/s, v_num=41, loss=1.12]\n"
             "Validation DataLoader 0: 0% 0/96 torch.cuda.OutOfMemoryError: CUDA out of memory. "
             "Tried to allocate 3.38 GiB. GPU 0 has 39.39 GiB of which 2.91 GiB is free, 36.41 GiB in use\n"
             "the training part was fine the whole epoch, only validation dies")

    terms = query_terms(content_words(paste))

    assert len(terms) <= QUERY_TERMS
    assert {"validation", "allocate", "outofmemoryerror"} <= set(terms)
    assert not {"00", "41", "96"} & set(terms)
