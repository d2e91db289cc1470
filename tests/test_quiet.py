"""The hook's quiet path decides exactly as the recall path's classify stage does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attrs import evolve
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsift.pipeline import recall
from memsift._hooks.quiet import searching_probability, surely_quiet
from memsift.stages import classify, redact
from memsift.types import Message

CORPUS = Path(__file__).resolve().parents[1] / "training" / "corpus"
MESSAGES = sorted({json.loads(line)["text"] for path in sorted(CORPUS.glob("messages-*.jsonl"))
                   for line in path.read_text().splitlines() if line.strip()})
EMBEDDED = {"MEMSIFT_HOME": "/nonexistent/memsift-home"}  # no settings file: the defaults


def classify_says_quiet(services, text: str) -> bool:
    result = recall(Message(text), services, stages=(redact, classify))
    assert not result.stopped_by.startswith("classify: failed"), result.stopped_by
    return result.stopped_by.startswith("classify: ") and result.stopped_by.endswith("needs no memory")


def test_the_corpus_messages_are_told_quiet_exactly_when_classify_says_so(services):
    disagreements = [text for text in MESSAGES if surely_quiet(text, EMBEDDED) != classify_says_quiet(services, text)]

    assert len(MESSAGES) > 1000
    assert disagreements == []
    quiet = sum(surely_quiet(text, EMBEDDED) for text in MESSAGES)
    assert 0 < quiet < len(MESSAGES)  # both answers occur: the check can fail either way


# classify reads the decider and the redactor only, neither of which keeps state between inputs.
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300) | st.sampled_from(MESSAGES).map(lambda t: t + " sk_live_4eC39HqLyjWDarjtT1zdp7dc"))
def test_any_text_is_told_quiet_exactly_when_classify_says_so(services, text):
    assert surely_quiet(text, EMBEDDED) == classify_says_quiet(services, text)


@pytest.mark.parametrize("threshold", ["0.05", "0.4", "0.9"])
def test_the_configured_threshold_is_the_one_used(services, threshold):
    tuned = evolve(services, config=evolve(services.config, search_threshold=float(threshold)))
    env = {**EMBEDDED, "MEMSIFT_SEARCH_THRESHOLD": threshold}

    told = [surely_quiet(text, env) for text in MESSAGES[:300]]

    assert told == [classify_says_quiet(tuned, text) for text in MESSAGES[:300]]


def test_the_threshold_in_the_settings_file_counts(tmp_path):
    (tmp_path / "config.toml").write_text("search_threshold = 1.0\n")
    text = "why did we pick Stripe over Mollie?"
    assert searching_probability(text) < 1.0

    assert not surely_quiet(text, EMBEDDED)
    assert surely_quiet(text, {"MEMSIFT_HOME": str(tmp_path)})
    assert not surely_quiet(text, {"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_SEARCH_THRESHOLD": "0.4"})


def test_the_embedded_backends_table_sets_the_threshold_as_load_config_reads_it(tmp_path):
    from memsift.config import load_config

    (tmp_path / "config.toml").write_text("search_threshold = 0.2\n\n[embedded]\nsearch_threshold = 1.0\n")
    env = {"MEMSIFT_HOME": str(tmp_path)}
    text = "why did we pick Stripe over Mollie?"

    assert load_config(env).search_threshold == 1.0
    assert surely_quiet(text, env)
    assert load_config({**env, "MEMSIFT_SEARCH_THRESHOLD": "0.4"}).search_threshold == 0.4
    assert not surely_quiet(text, {**env, "MEMSIFT_SEARCH_THRESHOLD": "0.4"})


@pytest.mark.parametrize("env", [
    {"MEMSIFT_STORE": "cognee"},  # the pipeline reports a remote service's health, even on quiet messages
    {"MEMSIFT_DECIDER": "systemone"},
    {"MEMSIFT_DECIDER": "openai"},
    {"MEMSIFT_DECIDER_BY_TASK": "answers=openai"},
    {"MEMSIFT_SEARCH_THRESHOLD": "not a number"},  # the pipeline runs, and says what is wrong
    {"MEMSIFT_SEARCH_THRESHOLD": "1.5"},
])
def test_anything_but_readable_embedded_settings_leaves_the_message_to_the_pipeline(env):
    assert surely_quiet("thanks, that works!", EMBEDDED)
    assert not surely_quiet("thanks, that works!", {**EMBEDDED, **env})


@pytest.mark.parametrize("text", ["store = 'cognee'\n", "decider = 'systemone'\n", "search_threshold = true\n",
                                  "decider_by_task = 'kind=anthropic'\n", "embedded = 0.3\n",
                                  "this is = not toml ]\n"])
def test_a_settings_file_naming_a_remote_service_or_unreadable_leaves_it_to_the_pipeline(tmp_path, text):
    (tmp_path / "config.toml").write_text(text)

    assert not surely_quiet("thanks, that works!", {"MEMSIFT_HOME": str(tmp_path)})
