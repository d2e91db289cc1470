"""The OpenAI-compatible and Anthropic deciders against real HTTP services on 127.0.0.1.

The services (tests/chat_services.py) check every request against the
documented contracts and answer in the documented shapes, errors included;
the deciders' real client code runs against them over a socket.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_services import AnthropicService, OpenAIService, hashed_weights, labels_in, tokens
from http_service import HANG, Scripted

from memsift.bench import format_table
from memsift.config import load_config, unknown_settings
from memsift.costs import session_costs
from memsift.decider.anthropic_messages import AnthropicDecider
from memsift.decider.backends import RoutedDecider, decider_for
from memsift.decider.embedded import EmbeddedDecider
from memsift.decider.openai_compatible import LogprobsRefused, OpenAICompatibleDecider, logprob_support
from memsift.errors import ConfigurationError, DeadlineExceeded, ServiceUnavailable
from memsift.pipeline import recall, retain
from memsift.services import open_services
from memsift.types import (
    Choice, ChoiceAnswer, Exchange, Kind, Message, Noul, NoulAnswer, Score, ScoreAnswer, Turn,
)

GITHUB_TOKEN = "ghp_" + "Zk4Rm8Qx2Lw7Tn1Vb5Hc9Jd3Fg6Sa0PeYuIo"  # fake: the prefix and 36 characters
STRIPE = "Payments: Stripe over Adyen, because Adyen wants a sales call before any test account."
DEPLOYS = "Deploys: the staging server is rebuilt every night from the main branch."
WORTH = Noul("worth", "Is the subject a technical choice?")
DEPARTMENT = Choice("department", "Which team should handle this?",
                    {"billing": "Payments, invoicing, refunds", "technical": None, "sales": "Pricing"})
FRUSTRATION = Score("frustration", "How frustrated is the customer?", ("Calm", "Frustrated", "Very angry"))
STATE = {"message": "Help! My payouts have been failing for 3 days.", "conversation": []}


def fixed(weights: dict[str, float]):
    """A model that gives these weights to whichever of them are offered."""
    return lambda prompt, labels: {label: weights.get(label, 0.0) for label in labels}


@pytest.fixture
def openai() -> Iterator[OpenAIService]:
    with OpenAIService(api_key="sk-right") as service:
        yield service


@pytest.fixture
def anthropic() -> Iterator[AnthropicService]:
    with AnthropicService() as service:
        yield service


def openai_decider(service: OpenAIService, home: Path | None = None, **options: Any) -> OpenAICompatibleDecider:
    options.setdefault("api_key", "sk-right")
    return OpenAICompatibleDecider(service.base_url, model=options.pop("model", "gpt-4.1-mini"), home=home,
                                   **options)


def anthropic_decider(service: AnthropicService, **options: Any) -> AnthropicDecider:
    return AnthropicDecider(service.base_url, model="claude-haiku-4-5", api_key="sk-ant-test", **options)


# -- OpenAI-compatible: answers from log-probabilities ------------------------------------

def test_logprobs_renormalised_over_the_labels_become_the_answers(openai):
    # yes 0.6 / no 0.2, and 0.5 of weight on tokens that are no label ("The", "I"): yes is 0.75.
    openai.answerer = fixed({"yes": 0.6, "no": 0.2, "A": 0.5, "B": 0.3, "C": 0.2, "0": 0.1, "1": 0.6, "2": 0.3})

    answers = openai_decider(openai).decide(STATE, {"w": WORTH, "team": DEPARTMENT, "mood": FRUSTRATION})

    assert answers["w"] == NoulAnswer(pytest.approx(0.75))
    team = answers["team"]
    assert isinstance(team, ChoiceAnswer) and team.choice == "billing"
    assert team.probabilities == pytest.approx({"billing": 0.5, "technical": 0.3, "sales": 0.2})
    assert team.confidence == pytest.approx(0.5)
    mood = answers["mood"]
    assert isinstance(mood, ScoreAnswer)
    assert mood.score == pytest.approx(1.2) and mood.probabilities == pytest.approx({"0": 0.1, "1": 0.6, "2": 0.3})
    assert len(openai.requests) == 3  # one request per question


def test_tokens_spelled_with_a_space_or_capitals_count_for_their_label(openai):
    openai.answerer = fixed({"yes": 0.9, "no": 0.1})
    openai.answer_format = "spaced"  # " Yes", " No"

    answers = openai_decider(openai).decide(STATE, {"w": WORTH})

    assert answers["w"].noul == pytest.approx(0.9)


def test_each_request_follows_the_chat_completions_contract(openai):
    item = Noul("answers", {"question": "Does this item answer the message?", "item": STRIPE, "origin": "note"})

    openai_decider(openai).decide(STATE, {"0": item, "team": DEPARTMENT})

    assert {r.path for r in openai.requests} == {"/v1/chat/completions"}
    assert {r.headers["authorization"] for r in openai.requests} == {"Bearer sk-right"}
    by_label = {tuple(labels_in(b["messages"][-1]["content"])): b for b in openai.bodies()}
    noul, choice = by_label[("yes", "no")], by_label[("A", "B", "C")]
    for body in (noul, choice):
        assert body["model"] == "gpt-4.1-mini" and body["max_tokens"] == 1 and body["temperature"] == 0
        assert body["logprobs"] is True and body["top_logprobs"] == 20
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert STATE["message"] in body["messages"][-1]["content"]  # the state is what it reads
    assert STRIPE in noul["messages"][-1]["content"] and "origin" in noul["messages"][-1]["content"]
    assert "A: billing (Payments, invoicing, refunds)" in choice["messages"][-1]["content"]
    assert "B: technical\n" in choice["messages"][-1]["content"]


def test_the_questions_of_one_call_are_asked_concurrently(openai):
    # The service holds each request until a second one is in flight: asked one at a time, the first
    # would wait out its 5 s; asked together, both are answered at once.
    in_flight = threading.Barrier(2, timeout=5)
    answer = openai.serve

    def together(received):
        in_flight.wait()
        return answer(received)

    openai.serve = together

    answers = openai_decider(openai, deadline=8.0).decide(STATE, {"a": WORTH, "b": WORTH})

    assert set(answers) == {"a", "b"} and not in_flight.broken


def test_no_label_among_the_top_tokens_is_unavailable(openai):
    openai.answer_format = "missing"

    with pytest.raises(ServiceUnavailable, match="none of the labels yes, no"):
        openai_decider(openai).decide(STATE, {"w": WORTH})


@pytest.mark.parametrize("reply", [
    Scripted(200, b"{not json"),
    Scripted(200, {"object": "chat.completion"}),
    Scripted(200, {"choices": [{"index": 0, "logprobs": {"content": [
        {"token": "yes", "logprob": 0.5, "top_logprobs": [{"token": "yes", "logprob": 0.5}]}]}}]}),
])
def test_a_malformed_answer_is_unavailable(openai, reply):
    openai.always = reply

    with pytest.raises(ServiceUnavailable):
        openai_decider(openai).decide(STATE, {"w": WORTH})


def test_a_wrong_key_is_a_configuration_error_and_the_key_is_never_shown(openai):
    with pytest.raises(ConfigurationError, match="MEMSIFT_DECIDER_API_KEY") as raised:
        openai_decider(openai, api_key="sk-wrong").decide(STATE, {"w": WORTH})

    assert "sk-wrong" not in str(raised.value)
    assert len(openai.requests) == 1  # never retried


def test_an_unknown_model_is_a_configuration_error_naming_the_setting(openai):
    with pytest.raises(ConfigurationError, match="MEMSIFT_DECIDER_MODEL"):
        openai_decider(openai, model="gpt-99").decide(STATE, {"w": WORTH})


def test_rate_limited_with_retry_after_is_retried_then_answered(openai):
    openai.script = [Scripted(429, {"error": {"message": "Rate limit reached"}}, {"retry-after": "0.2"})]

    answers = openai_decider(openai).decide(STATE, {"w": WORTH})

    assert isinstance(answers["w"], NoulAnswer)
    first, second = openai.requests
    assert second.at - first.at >= 0.2  # it waited as asked


def test_rate_limited_past_the_deadline_gives_up_at_once(openai):
    openai.always = Scripted(429, {"error": {"message": "Rate limit reached"}}, {"retry-after": "30"})

    with pytest.raises(ServiceUnavailable, match="rate limited, asked to wait 30 s"):
        openai_decider(openai, deadline=1.0).decide(STATE, {"w": WORTH})

    assert len(openai.requests) == 1


def test_server_errors_are_retried_then_answered(openai):
    openai.script = [Scripted(503, b"upstream starting"), Scripted(500, {"error": {"message": "oops"}})]

    answers = openai_decider(openai).decide(STATE, {"w": WORTH})

    assert isinstance(answers["w"], NoulAnswer) and len(openai.requests) == 3


def test_a_slow_answer_exceeds_the_deadline(openai):
    openai.always = HANG

    with pytest.raises(DeadlineExceeded):
        openai_decider(openai, deadline=0.5).decide(STATE, {"w": WORTH, "team": DEPARTMENT})


# -- OpenAI-compatible: a model that refuses log-probabilities ------------------------------

def test_a_model_that_refuses_logprobs_is_a_clear_configuration_error_probed_once(openai, tmp_path):
    with pytest.raises(LogprobsRefused, match=r"'o4-mini' gives no log-probabilities.*non-reasoning"):
        openai_decider(openai, tmp_path, model="o4-mini").decide(STATE, {"w": WORTH})
    asked = len(openai.requests)

    with pytest.raises(LogprobsRefused):  # a later hook process: known, not asked again
        openai_decider(openai, tmp_path, model="o4-mini").decide(STATE, {"w": WORTH})

    assert len(openai.requests) == asked
    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER": "openai",
                          "MEMSIFT_DECIDER_URL": openai.base_url, "MEMSIFT_DECIDER_MODEL": "o4-mini"})
    supported, why = logprob_support(config)
    assert supported is False and "reasoning models" in why


def test_a_server_that_drops_logprobs_silently_is_found_out(openai, tmp_path):
    openai.drops_logprobs = True

    with pytest.raises(LogprobsRefused, match="without log-probabilities"):
        openai_decider(openai, tmp_path).decide(STATE, {"w": WORTH})


def test_doctor_learns_logprob_support_from_use_or_a_probe(openai, tmp_path):
    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER": "openai",
                          "MEMSIFT_DECIDER_API_KEY": "sk-right",
                          "MEMSIFT_DECIDER_URL": openai.base_url, "MEMSIFT_DECIDER_MODEL": "gpt-4.1-mini"})

    assert logprob_support(config) == (None, "not probed yet")
    assert logprob_support(config, probe=True) == (True, "")
    assert len(openai.requests) == 1


# -- Anthropic: a forced tool call, uncalibrated ---------------------------------------------

def test_anthropic_answers_are_the_forced_pick_with_its_confidence(anthropic):
    anthropic.answerer = fixed({"yes": 0.9, "no": 0.1, "A": 0.2, "B": 0.7, "C": 0.1, "0": 0.1, "1": 0.1, "2": 0.8})
    anthropic.confidence = 0.8

    decider = anthropic_decider(anthropic)
    answers = decider.decide(STATE, {"w": WORTH, "team": DEPARTMENT, "mood": FRUSTRATION})

    assert answers["w"] == NoulAnswer(pytest.approx(0.8))
    assert answers["team"] == ChoiceAnswer("technical", pytest.approx(
        {"billing": 0.1, "technical": 0.8, "sales": 0.1}), pytest.approx(0.8))
    assert answers["mood"].score == pytest.approx(0.1 * 0 + 0.1 * 1 + 0.8 * 2)
    assert decider.spent.questions == 3 and decider.spent.calibrated is False


def test_each_anthropic_request_forces_a_tool_whose_input_is_an_enum_of_the_labels(anthropic):
    anthropic_decider(anthropic).decide(STATE, {"team": DEPARTMENT})

    (request,) = anthropic.requests
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-test" and request.headers["anthropic-version"] == "2023-06-01"
    body = request.json()
    (tool,) = body["tools"]
    assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}
    assert tool["input_schema"]["properties"]["label"]["enum"] == ["A", "B", "C"]
    assert body["model"] == "claude-haiku-4-5" and STATE["message"] in body["messages"][0]["content"]


@pytest.mark.parametrize(("change", "why"), [
    ({"pick": "D"}, "picked 'D'"),
    ({"confidence": 1.5}, "confidence of 1.5"),
    ({"skip_tool": True}, "without calling the tool"),
])
def test_an_anthropic_answer_off_the_contract_is_unavailable(anthropic, change, why):
    for name, value in change.items():
        setattr(anthropic, name, value)

    with pytest.raises(ServiceUnavailable, match=why):
        anthropic_decider(anthropic).decide(STATE, {"team": DEPARTMENT})


@pytest.mark.parametrize(("reply", "error", "why"), [
    (Scripted(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
     ConfigurationError, "MEMSIFT_DECIDER_API_KEY"),
    (Scripted(529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
     ServiceUnavailable, "overloaded"),
    (Scripted(200, b"<html>"), ServiceUnavailable, "not JSON"),
    (HANG, DeadlineExceeded, "did not answer"),
])
def test_anthropic_errors_map_to_memsift_errors(anthropic, reply, error, why):
    anthropic.always = reply

    with pytest.raises(error, match=why):
        anthropic_decider(anthropic, deadline=0.8).decide(STATE, {"w": WORTH})


# -- configuration ---------------------------------------------------------------------------

def test_each_backend_is_configured_by_the_same_settings(openai, anthropic, tmp_path):
    common = {"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER_API_KEY": "sk-ant-test"}
    built = decider_for(load_config({**common, "MEMSIFT_DECIDER": "anthropic",
                                     "MEMSIFT_DECIDER_URL": anthropic.base_url,
                                     "MEMSIFT_DECIDER_MODEL": "claude-haiku-4-5"}))
    assert isinstance(built, AnthropicDecider) and built.url == anthropic.base_url + "/messages"
    hosted = decider_for(load_config({**common, "MEMSIFT_DECIDER": "openai", "MEMSIFT_DECIDER_MODEL": "gpt-4.1"}))
    assert isinstance(hosted, OpenAICompatibleDecider) and hosted.url == "https://api.openai.com/v1/chat/completions"
    with pytest.raises(ConfigurationError, match="needs MEMSIFT_DECIDER_MODEL"):
        decider_for(load_config({**common, "MEMSIFT_DECIDER": "openai"}))
    with pytest.raises(ConfigurationError, match="mixes remote backends"):
        decider_for(load_config({**common, "MEMSIFT_DECIDER": "openai", "MEMSIFT_DECIDER_MODEL": "m",
                                 "MEMSIFT_DECIDER_BY_TASK": "keep=anthropic"}))


def test_thresholds_per_backend_come_from_its_table(tmp_path):
    (tmp_path / "config.toml").write_text('answers_threshold = 0.7\nworth_threshold = 0.3\n'
                                          '[anthropic]\nanswers_threshold = 0.85\nworth_threshold = 0.6\n')
    env = {"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER_MODEL": "claude-haiku-4-5"}

    plain = load_config(env)
    routed = load_config({**env, "MEMSIFT_DECIDER_BY_TASK": "answers=anthropic"})
    everything = load_config({**env, "MEMSIFT_DECIDER": "anthropic", "MEMSIFT_WORTH_THRESHOLD": "0.5"})

    assert (plain.answers_threshold, plain.worth_threshold) == (0.7, 0.3)
    assert (routed.answers_threshold, routed.worth_threshold) == (0.85, 0.3)  # only the task it answers
    assert (everything.answers_threshold, everything.worth_threshold) == (0.85, 0.5)  # the environment wins


# -- in memsift: recall and retain end to end ---------------------------------------------------

def memory_model(prompt: str, labels: list[str]) -> dict[str, float]:
    """Reads a question about a past choice, and the note about Stripe as its answer."""
    if labels[:2] == ["yes", "no"]:
        if '"item"' in prompt:
            return {"yes": 0.95, "no": 0.05} if "Stripe" in prompt else {"yes": 0.03, "no": 0.97}
        return {"yes": 0.9, "no": 0.1}
    return hashed_weights(prompt, labels)


def test_recall_routes_item_judgements_to_the_model_and_pays_for_them(tmp_path):
    with OpenAIService(answerer=memory_model) as service:
        config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER_URL": service.base_url,
                              "MEMSIFT_DECIDER_MODEL": "qwen2.5-1.5b-instruct",
                              "MEMSIFT_DECIDER_BY_TASK": "answers=openai,worth=openai",
                              "MEMSIFT_DECIDER_PRICE_IN": "0.042"})
        services = open_services(config, tmp_path)
        assert isinstance(services.decider, RoutedDecider) and services.health is not None
        services.notebook.append([DEPLOYS, STRIPE])
        message = Message(f"why did we pick Stripe over Adyen? the deploy token is {GITHUB_TOKEN}",
                          (Turn("user", f"I set GH_TOKEN={GITHUB_TOKEN} for the CI"), Turn("assistant", "Done.")),
                          session="s1")

        result = recall(message, services)

    assert result.kind == Kind.PAST_CHOICE  # the embedded model still classifies
    assert "Stripe over Adyen" in result.text
    classify, notes = result.trace[1], result.trace[2]
    assert classify.stage == "classify" and classify.usage is None  # embedded: nothing spent
    # One question: the one note of the two that shares the message's words is ranked, then judged.
    assert notes.stage == "notes" and notes.usage is not None and notes.usage.questions == 1
    sent = sum(tokens(m["content"]) for body in service.bodies() for m in body["messages"])  # as it counted
    paid = [step.usage for step in result.trace if step.usage is not None]
    assert sum(u.tokens_in for u in paid) == sent and sum(u.questions for u in paid) == len(service.requests)
    assert sum(u.usd for u in paid) == pytest.approx(sent * 0.042 / 1e6)
    assert all(GITHUB_TOKEN not in r.body.decode() for r in service.requests)  # redacted before it left
    assert session_costs(tmp_path)["s1"].tokens_in == sent


def test_a_backend_that_is_down_pauses_memory_with_the_one_line_notice(tmp_path):
    with AnthropicService(answerer=memory_model) as service:
        url = service.base_url
    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER": "anthropic",
                          "MEMSIFT_DECIDER_URL": url, "MEMSIFT_DECIDER_MODEL": "claude-haiku-4-5",
                          "MEMSIFT_DECIDER_API_KEY": "sk-ant-test", "MEMSIFT_DECIDER_DEADLINE": "0.5"})
    services = open_services(config, tmp_path)

    result = recall(Message("why did we pick Stripe over Adyen?", session="s1"), services)

    host = url.split("//")[1].split("/")[0]
    assert result.text == ""
    assert result.notice is not None and result.notice.startswith(f"memory paused: decider at {host} unreachable")
    assert recall(Message("and Mollie?", session="s1"), services).notice is None  # told once


def test_retain_on_anthropic_marks_its_keep_step_uncalibrated(tmp_path):
    def keeps(prompt: str, labels: list[str]) -> dict[str, float]:
        return {label: 1.0 if label == "A" else 0.0 for label in labels}  # A: decision

    with AnthropicService(answerer=keeps) as service:
        config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER": "anthropic",
                              "MEMSIFT_DECIDER_URL": service.base_url, "MEMSIFT_DECIDER_MODEL": "claude-haiku-4-5",
                              "MEMSIFT_DECIDER_API_KEY": "sk-ant-test"})
        result = retain(Exchange("we pick Stripe over Adyen?", "yes: Adyen wants a sales call first", "s2"),
                        open_services(config, tmp_path))

    step = next(s for s in result.trace if s.stage == "keep")
    assert result.keep and step.usage is not None and step.usage.calibrated is False
    assert session_costs(tmp_path)["s2"].calibrated is False


def test_the_embedded_default_spends_nothing_and_writes_no_costs(tmp_path, memsift_home):
    services = open_services(load_config(), tmp_path)
    assert isinstance(services.decider, EmbeddedDecider)

    result = recall(Message("why did we pick Stripe over Adyen?", session="s1"), services)

    assert all(step.usage is None for step in result.trace)
    assert not (memsift_home / "costs.json").exists()


# -- the bench: questions, tokens and cost beside the embedded decider ------------------------

def test_bench_on_a_remote_decider_adds_a_column_and_its_cost(tmp_path, monkeypatch, capsys):
    from memsift._cli import main

    scenarios = sorted(str(p) for p in (Path(__file__).resolve().parents[1] / "benchmarks" / "scenarios").glob(
        "example_*.json"))
    with OpenAIService() as service:
        for name, value in {"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER": "openai",
                            "MEMSIFT_DECIDER_URL": service.base_url, "MEMSIFT_DECIDER_MODEL": "gpt-4.1-mini",
                            "MEMSIFT_DECIDER_PRICE_IN": "0.042", "MEMSIFT_DECIDER_DEADLINE": "10"}.items():
            monkeypatch.setenv(name, value)
        assert main(["bench", *scenarios[:1], "--pipeline", "memsift", "--json"]) == 0
        embedded, remote = (json.loads(line) for line in capsys.readouterr().out.splitlines())

    assert (embedded["pipeline"], remote["pipeline"]) == ("memsift", "memsift/openai")
    mine, theirs = embedded["cost"]["total"], remote["cost"]["total"]
    assert mine["questions"] > 0 and mine["tokens_in"] == 0 and mine["usd"] == 0  # embedded: free
    sent = sum(tokens(m["content"]) for body in service.bodies() for m in body["messages"])
    assert theirs["questions"] == len(service.requests) and theirs["tokens_in"] == sent
    assert theirs["usd"] == pytest.approx(sent * 0.042 / 1e6)
    table = format_table([embedded, remote])
    assert "questions / message" in table and "USD / 1,000 messages" in table


def test_a_backend_name_in_config_toml_must_be_a_table_of_thresholds(tmp_path):
    (tmp_path / "config.toml").write_text('anthropic = "yes"\n')
    with pytest.raises(ConfigurationError, match=r"table of thresholds \(\[anthropic\]\)"):
        load_config({"MEMSIFT_HOME": str(tmp_path)})
    (tmp_path / "config.toml").write_text('[openai]\ndecider_url = "http://x"\n')  # not a threshold: ignored
    assert load_config({"MEMSIFT_HOME": str(tmp_path)}).decider_url == "https://api.typesafe.ai/v1/systemone"
    assert unknown_settings({"MEMSIFT_HOME": str(tmp_path)}) == [
        f"{tmp_path / 'config.toml'}: [openai] decider_url is not a threshold, ignored"]


def test_a_model_known_to_give_logprobs_is_not_written_down_again(openai, tmp_path):
    openai_decider(openai, tmp_path).decide(STATE, {"w": WORTH})
    probe = tmp_path / "decider-probe.json"
    written = probe.stat().st_mtime_ns

    openai_decider(openai, tmp_path).decide(STATE, {"w": WORTH})  # the next hook process

    assert probe.stat().st_mtime_ns == written
