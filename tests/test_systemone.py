"""The System One decider against a real HTTP server: memsift/decider/systemone.py.

``SystemOneStub`` is a small System One service on 127.0.0.1: it checks each
request the way the API documents it (401 for a wrong key, 422 naming the
field for a malformed request), answers every question with a deterministic
probability, and can be scripted to rate-limit, overload, hang or answer
garbage. The decider's real client code runs against it over a socket.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
import zlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from http_service import HANG, JsonService, Received, Scripted
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsift.config import load_config
from memsift.decider.systemone import SystemOneDecider
from memsift.errors import ConfigurationError, DeadlineExceeded, ServiceUnavailable
from memsift.pipeline import recall
from memsift.services import open_services
from memsift.stages import HEADER
from memsift.stages.recall import quoted
from memsift.types import (
    Choice, ChoiceAnswer, Kind, Message, Noul, NoulAnswer, Score, ScoreAnswer, Turn,
)

PATH = "/v1/systemone"
MODELS = {"jev-latest", "jev-1.13.0", "jev-preview"}
GITHUB_TOKEN = "ghp_" + "Zk4Rm8Qx2Lw7Tn1Vb5Hc9Jd3Fg6Sa0PeYuIo"  # fake: the prefix and 36 characters
STRIPE = "Payments: Stripe over Adyen, because Adyen wants a sales call before any test account."
DEPLOYS = "Deploys: the staging server is rebuilt every night from the main branch."

# -- a System One service on 127.0.0.1 ---------------------------------------------

Answerer = Callable[[Any, dict[str, Any]], Any]


def hashed(*parts: Any) -> float:
    """A stable number in [0, 1) for what was asked: the same request gets the same answer."""
    return zlib.crc32(json.dumps(parts, sort_keys=True).encode()) % 1000 / 1000


def hashed_answers(state: Any, question: dict[str, Any]) -> Any:
    """The stub's default model: deterministic probabilities from the question's text."""
    if question["type"] == "noul":
        return hashed(state, question["instructions"])
    keys = question["criteria"] if question["type"] == "choice" else range(len(question["criteria"]))
    return {str(k): 1.0 + hashed(question["instructions"], str(k)) for k in keys}


class SystemOneStub(JsonService):
    """A System One compatible service in a thread; ``stop()`` (or leaving ``with``) ends it.

    ``script`` replies go first, one per request; then ``always`` if set; then the
    request is validated and answered by ``answerer(state, question)``, which
    gives P(yes) for a noul and a weight per option or level otherwise.
    """

    def __init__(self, *, api_key: str | None = None, answerer: Answerer = hashed_answers) -> None:
        super().__init__(PATH)
        self.api_key = api_key
        self.answerer = answerer

    # -- what the service does with one request --

    def serve(self, received: Received) -> Scripted:
        if received.path != PATH:
            return Scripted(404, {"error": {"type": "not_found", "message": f"no route {received.path}"}})
        if self.api_key and received.headers.get("authorization") != f"Bearer {self.api_key}":
            return Scripted(401, {"error": {"type": "authentication_error", "message": "invalid API key"}})
        if not received.headers.get("content-type", "").startswith("application/json"):
            return Scripted(415, {"error": {"message": "send application/json"}})
        try:
            request = received.json()
        except ValueError:
            return invalid([], "the body is not JSON")
        refusal = validate(request)
        if refusal is not None:
            return refusal
        answers = {qid: self.answer(request["state"], q) for qid, q in request["questions"].items()}
        return Scripted(200, {"model": "jev-1.13.0" if request["model"] == "jev-latest" else request["model"],
                              "answers": answers,
                              "usage": {"input_tokens": len(received.body) // 4,
                                        "output_tokens": 10 * len(answers)}})

    def answer(self, state: Any, question: dict[str, Any]) -> dict[str, Any]:
        weights = self.answerer(state, question)
        if question["type"] == "noul":
            return {"type": "noul", "noul": float(weights)}
        if question["type"] == "choice":
            probabilities = normalised({o: weights.get(o, 0.0) for o in question["criteria"]})
            best = max(probabilities, key=probabilities.__getitem__)
            return {"type": "choice", "choice": best, "probabilities": probabilities,
                    "confidence": probabilities[best]}
        levels = [str(i) for i in range(len(question["criteria"]))]
        probabilities = normalised({level: weights.get(level, 0.0) for level in levels})
        return {"type": "score", "score": sum(i * probabilities[lv] for i, lv in enumerate(levels)),
                "legend": {lv: json.dumps(d) if not isinstance(d, str) else d
                           for lv, d in zip(levels, question["criteria"], strict=True)},
                "probabilities": probabilities, "confidence": max(probabilities.values())}


def normalised(weights: Mapping[str, float]) -> dict[str, float]:
    total = sum(weights.values()) or 1.0
    return {key: value / total for key, value in weights.items()}


def invalid(loc: list[Any], msg: str) -> Scripted:
    """A validation error, FastAPI's shape: the body names the field."""
    return Scripted(422, {"detail": [{"loc": ["body", *loc], "msg": msg, "type": "value_error"}]})


TEXTUAL = (str, dict, list)


def validate(request: Any) -> Scripted | None:
    """Refuse what the documented contract does not allow, as the real API would."""
    if not isinstance(request, dict):
        return invalid([], "the body must be an object")
    for key in ("state", "model", "questions"):
        if key not in request:
            return invalid([key], "field required")
    unknown = set(request) - {"state", "model", "questions"}
    if unknown:
        return invalid([sorted(unknown)[0]], "extra fields not permitted")
    if not isinstance(request["state"], TEXTUAL):
        return invalid(["state"], "must be a string, object or array")
    if request["model"] not in MODELS:
        return invalid(["model"], f"unknown model {request['model']!r}")
    questions = request["questions"]
    if not isinstance(questions, dict) or not questions:
        return invalid(["questions"], "must be a non-empty map of questions")
    for qid, q in questions.items():
        where = ["questions", qid]
        if not isinstance(q, dict) or q.get("type") not in ("noul", "choice", "score"):
            return invalid([*where, "type"], "must be noul, choice or score")
        extra = set(q) - {"type", "instructions", "criteria"}
        if extra:
            return invalid([*where, sorted(extra)[0]], "extra fields not permitted")
        if not isinstance(q.get("instructions"), TEXTUAL):
            return invalid([*where, "instructions"], "must be a string, object or array")
        criteria = q.get("criteria")
        if q["type"] == "noul" and criteria is not None and not (
                isinstance(criteria, dict) and set(criteria) <= {"true", "false"}
                and all(isinstance(v, TEXTUAL) for v in criteria.values())):
            return invalid([*where, "criteria"], "noul criteria are {true, false}")
        if q["type"] == "choice" and not (
                isinstance(criteria, dict) and 1 <= len(criteria) <= 255
                and all(v is None or isinstance(v, TEXTUAL) for v in criteria.values())):
            return invalid([*where, "criteria"], "choice criteria map 1 to 255 options to a description or null")
        if q["type"] == "score" and not (
                isinstance(criteria, list) and 2 <= len(criteria) <= 10
                and all(isinstance(v, TEXTUAL) for v in criteria)):
            return invalid([*where, "criteria"], "score criteria are 2 to 10 ordered levels")
    return None


@pytest.fixture
def stub() -> Iterator[SystemOneStub]:
    with SystemOneStub() as service:
        yield service


def decider_for(service: SystemOneStub, **options: Any) -> SystemOneDecider:
    return SystemOneDecider(service.url, **options)


WORTH = Noul("worth", "Is the subject a technical choice?")
DEPARTMENT = Choice("department", "Which team should handle this?",
                    {"billing": "Payments, invoicing, refunds", "technical": None, "sales": "Pricing"})
FRUSTRATION = Score("frustration", "How frustrated is the customer?", ("Calm", "Frustrated", "Very angry"))
STATE = {"message": "Help! My payouts have been failing for 3 days.", "conversation": []}


def documented_answers(state: Any, question: dict[str, Any]) -> Any:
    """The answers of the API reference's own examples."""
    if question["type"] == "noul":
        return 0.95
    if question["type"] == "choice":
        return {"billing": 0.88, "technical": 0.12, "sales": 0.0}
    return {"0": 0.0, "1": 0.95, "2": 0.05}


# -- answers and the request ---------------------------------------------------------

def test_answers_come_back_as_noul_choice_and_score_answers(stub):
    stub.answerer = documented_answers

    answers = decider_for(stub).decide(STATE, {"urgent": WORTH, "team": DEPARTMENT, "mood": FRUSTRATION})

    assert answers["urgent"] == NoulAnswer(0.95)
    assert answers["team"] == ChoiceAnswer("billing", {"billing": 0.88, "technical": 0.12, "sales": 0.0}, 0.88)
    mood = answers["mood"]
    assert isinstance(mood, ScoreAnswer)
    assert mood.score == pytest.approx(1.05) and mood.confidence == pytest.approx(0.95)
    assert mood.probabilities == {"0": 0.0, "1": 0.95, "2": 0.05}
    assert len(stub.requests) == 1  # every question in one request


def test_what_the_service_reports_it_used_is_counted_at_the_configured_price(stub):
    decider = decider_for(stub, price=(0.042, 0.0))

    decider.decide(STATE, {"urgent": WORTH, "team": DEPARTMENT})
    decider.decide(STATE, {"mood": FRUSTRATION})

    sent = sum(len(request.body) // 4 for request in stub.requests)  # what the stub reports as input tokens
    assert (decider.spent.questions, decider.spent.tokens_in, decider.spent.tokens_out) == (3, sent, 30)
    assert decider.spent.usd == pytest.approx(sent * 0.042 / 1e6) and decider.spent.calibrated


def test_the_request_holds_state_model_and_questions_as_documented(stub):
    item = Noul("answers", {"question": "Does this item answer the message?", "item": STRIPE, "origin": "note"},
                criteria={"true": "it answers", "false": "it does not"})

    decider_for(stub, model="jev-preview").decide(STATE, {"0": item, "w": WORTH, "team": DEPARTMENT,
                                                          "mood": FRUSTRATION})

    (request,) = stub.requests
    assert request.path == PATH
    assert request.headers["content-type"] == "application/json"
    assert "authorization" not in request.headers  # no key set: none sent
    body = request.json()
    assert set(body) == {"state", "model", "questions"}
    assert body["state"] == STATE and body["model"] == "jev-preview"
    assert body["questions"] == {
        "0": {"type": "noul", "instructions": {"question": "Does this item answer the message?",
                                               "item": STRIPE, "origin": "note"},
              "criteria": {"true": "it answers", "false": "it does not"}},
        "w": {"type": "noul", "instructions": "Is the subject a technical choice?"},  # no criteria: none sent
        "team": {"type": "choice", "instructions": "Which team should handle this?",
                 "criteria": {"billing": "Payments, invoicing, refunds", "technical": None, "sales": "Pricing"}},
        "mood": {"type": "score", "instructions": "How frustrated is the customer?",
                 "criteria": ["Calm", "Frustrated", "Very angry"]},
    }


def test_a_key_is_sent_as_a_bearer_token():
    with SystemOneStub(api_key="ts-right") as service:
        answers = decider_for(service, api_key="ts-right").decide(STATE, {"w": WORTH})

    assert isinstance(answers["w"], NoulAnswer)
    assert service.requests[0].headers["authorization"] == "Bearer ts-right"


def test_memsifts_own_kind_question_is_accepted_and_answered(stub):
    from memsift.stages import KIND_OPTIONS

    answers = decider_for(stub).decide(STATE, {"kind": Choice("kind", "What kind of message is this?",
                                                              KIND_OPTIONS)})

    assert set(answers["kind"].probabilities) == {kind.value for kind in Kind}
    assert answers["kind"].choice in answers["kind"].probabilities


# -- refusals: never retried -------------------------------------------------------------

def test_a_refused_key_is_a_configuration_error_and_is_not_retried():
    with SystemOneStub(api_key="ts-right") as service, pytest.raises(ConfigurationError,
                                                                     match="MEMSIFT_DECIDER_API_KEY"):
        decider_for(service, api_key="ts-wrong").decide(STATE, {"w": WORTH})

    assert len(service.requests) == 1


def test_a_forbidden_key_is_a_configuration_error_and_is_not_retried(stub):
    stub.always = Scripted(403, {"error": {"message": "this key may not use jev-preview"}})

    with pytest.raises(ConfigurationError, match="may not use jev-preview"):
        decider_for(stub, api_key="ts-key").decide(STATE, {"w": WORTH})

    assert len(stub.requests) == 1


def test_a_validation_error_names_the_field(stub):
    too_many = Choice("big", "Which one?", {f"option-{i}": None for i in range(256)})

    with pytest.raises(ConfigurationError, match=r"questions\.big\.criteria"):
        decider_for(stub).decide(STATE, {"big": too_many})

    assert len(stub.requests) == 1


def test_an_unknown_model_is_named_in_the_refusal(stub):
    with pytest.raises(ConfigurationError, match=r"field 'model'.*MEMSIFT_DECIDER_MODEL"):
        decider_for(stub, model="jev-9").decide(STATE, {"w": WORTH})


def test_a_wrong_url_is_a_configuration_error(stub):
    with pytest.raises(ConfigurationError, match="MEMSIFT_DECIDER_URL"):
        SystemOneDecider(stub.url.replace(PATH, "/v1/chat/completions")).decide(STATE, {"w": WORTH})

    assert len(stub.requests) == 1


@pytest.mark.parametrize("url", ["", "api.typesafe.ai/v1/systemone", "ftp://api.typesafe.ai/x"])
def test_a_url_that_is_not_http_is_refused_at_once(url):
    with pytest.raises(ConfigurationError, match="MEMSIFT_DECIDER_URL"):
        SystemOneDecider(url)


def test_the_name_shows_the_host_and_never_credentials():
    assert SystemOneDecider("https://api.typesafe.ai/v1/systemone").name == "decider at api.typesafe.ai"
    assert SystemOneDecider("http://me:secret@127.0.0.1:8123/v1/systemone").name == "decider at 127.0.0.1:8123"


# -- busy and down: retried within the deadline ------------------------------------------

@pytest.mark.parametrize(("header", "value", "seconds"), [("retry-after", "1", 1.0),
                                                          ("retry-after-ms", "400", 0.4)])
def test_rate_limited_then_answered_honours_retry_after(stub, header, value, seconds):
    stub.script = [Scripted(429, {"error": {"message": "slow down"}}, {header: value})]

    answers = decider_for(stub, deadline=3.0).decide(STATE, {"w": WORTH})

    assert isinstance(answers["w"], NoulAnswer)
    first, second = stub.requests
    assert second.at - first.at >= seconds * 0.9  # it waited as long as it was asked
    assert second.body == first.body


def test_a_retry_after_given_as_a_date_is_honoured(stub):
    soon = email.utils.formatdate(time.time() + 1, usegmt=True)
    stub.script = [Scripted(529, {"error": {"message": "Overloaded"}}, {"retry-after": soon})]

    answers = decider_for(stub, deadline=3.0).decide(STATE, {"w": WORTH})

    assert isinstance(answers["w"], NoulAnswer) and len(stub.requests) == 2


def test_a_retry_after_past_the_deadline_gives_up_at_once(stub):
    stub.always = Scripted(429, {"error": {"message": "slow down"}}, {"retry-after": "30"})

    with pytest.raises(ServiceUnavailable, match="rate limited, asked to wait 30 s") as raised:
        decider_for(stub, deadline=1.0).decide(STATE, {"w": WORTH})

    assert not isinstance(raised.value, DeadlineExceeded)
    assert len(stub.requests) == 1


def test_server_errors_are_retried_then_answered(stub):
    stub.script = [Scripted(503, b"upstream starting"), Scripted(502, b"bad gateway")]

    answers = decider_for(stub).decide(STATE, {"w": WORTH})

    assert isinstance(answers["w"], NoulAnswer)
    assert len(stub.requests) == 3


def test_overloaded_for_ever_is_unavailable_within_the_deadline(stub):
    stub.always = Scripted(529, {"error": {"type": "overloaded", "message": "Overloaded"}})
    deadline = 1.5

    started = time.monotonic()
    with pytest.raises(ServiceUnavailable, match="overloaded"):
        decider_for(stub, deadline=deadline).decide(STATE, {"w": WORTH})

    assert time.monotonic() - started < deadline + 1
    assert len(stub.requests) >= 2  # it did try again


def test_a_service_that_never_answers_exceeds_the_deadline(stub):
    stub.always = HANG
    deadline = 0.5

    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        decider_for(stub, deadline=deadline).decide(STATE, {"w": WORTH})

    assert time.monotonic() - started < deadline + 1
    assert len(stub.requests) == 1  # the time is spent: no second try


def test_a_service_that_is_down_is_unavailable_within_the_deadline():
    with SystemOneStub() as service:
        url = service.url
    deadline = 1.0

    started = time.monotonic()
    with pytest.raises(ServiceUnavailable, match="unreachable"):
        SystemOneDecider(url, deadline=deadline).decide(STATE, {"w": WORTH})

    assert time.monotonic() - started < deadline + 1


# -- answers read strictly -------------------------------------------------------------

def body_with(answers: Any) -> dict[str, Any]:
    return {"model": "jev-1.13.0", "answers": answers, "usage": {"input_tokens": 1, "output_tokens": 1}}


CHOICE_OK = {"type": "choice", "choice": "billing", "confidence": 0.9,
             "probabilities": {"billing": 0.9, "technical": 0.1, "sales": 0.0}}


@pytest.mark.parametrize(("body", "why"), [
    (b"<html>502</html>", "not JSON"),
    ([], "without an 'answers' object"),
    ({"model": "jev-1.13.0", "usage": {}}, "without an 'answers' object"),
    (body_with({"team": CHOICE_OK}), "no answer to question 'w'"),
    (body_with({"w": {"type": "choice", "choice": "yes"}, "team": CHOICE_OK}), "with a 'choice' answer"),
    (body_with({"w": {"type": "noul", "noul": 1.7}, "team": CHOICE_OK}), "not a probability"),
    (body_with({"w": {"type": "noul", "noul": "0.9"}, "team": CHOICE_OK}), "not a number"),
    (body_with({"w": {"type": "noul"}, "team": CHOICE_OK}), "malformed answer"),
    (body_with({"w": {"type": "noul", "noul": 0.5}, "team": {**CHOICE_OK, "choice": "legal"}}),
     "not one of the options"),
    (body_with({"w": {"type": "noul", "noul": 0.5},
                "team": {**CHOICE_OK, "probabilities": {"billing": 0.9, "legal": 0.1}}}), "not asked"),
    (body_with({"w": {"type": "noul", "noul": 0.5},
                "team": {**CHOICE_OK, "probabilities": {"billing": 0.9, "technical": 0.9}}}), "sum to"),
])
def test_a_malformed_answer_is_unavailable_never_garbage(stub, body, why):
    stub.always = Scripted(200, body)

    with pytest.raises(ServiceUnavailable, match=why):
        decider_for(stub).decide(STATE, {"w": WORTH, "team": DEPARTMENT})


def test_a_score_outside_its_levels_is_refused(stub):
    stub.always = Scripted(200, body_with({"mood": {"type": "score", "score": 3.5, "confidence": 0.9,
                                                    "probabilities": {"0": 0.1, "1": 0.1, "2": 0.8}}}))

    with pytest.raises(ServiceUnavailable, match=r"outside levels 0\.\.2"):
        decider_for(stub).decide(STATE, {"mood": FRUSTRATION})


@pytest.fixture(scope="module")
def shared_stub() -> Iterator[tuple[SystemOneStub, SystemOneDecider]]:
    with SystemOneStub() as service:
        decider = decider_for(service)
        yield service, decider
        decider.close()


json_values = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=False, allow_infinity=False) | st.integers()
    | st.text(max_size=8) | st.sampled_from(["noul", "choice", "billing", "technical", "sales"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "noul", "choice", "probabilities", "confidence", "billing", "sales"]),
        children, max_size=5),
    max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(noul=json_values, choice=json_values)
def test_any_answer_is_either_well_formed_or_unavailable(shared_stub, noul, choice):
    service, decider = shared_stub
    service.always = Scripted(200, body_with({"w": noul, "team": choice}))
    try:
        answers = decider.decide(STATE, {"w": WORTH, "team": DEPARTMENT})
    except ServiceUnavailable:
        return
    assert 0 <= answers["w"].noul <= 1
    team = answers["team"]
    assert team.choice in DEPARTMENT.options and set(team.probabilities) == set(DEPARTMENT.options)
    assert all(0 <= p <= 1 for p in team.probabilities.values())


# -- in memsift: recall end to end ---------------------------------------------------------

def memory_answers(state: Any, question: dict[str, Any]) -> Any:
    """A service that reads a question about a past choice, and a note about Stripe as its answer."""
    if question["type"] == "choice":
        return {"past_choice": 0.9, "new_decision": 0.06, "reaction": 0.04}
    instructions = question["instructions"]
    if isinstance(instructions, dict) and "item" in instructions:
        return 0.95 if "Stripe" in instructions["item"] else 0.03
    return 0.9  # is it worth memory: yes


def test_recall_through_a_system_one_service_and_a_pause_when_it_is_down(tmp_path: Path):
    service = SystemOneStub(answerer=memory_answers)
    config = load_config({"MEMSIFT_HOME": str(tmp_path), "MEMSIFT_DECIDER": "systemone",
                          "MEMSIFT_DECIDER_URL": service.url, "MEMSIFT_DECIDER_DEADLINE": "1"})
    services = open_services(config, tmp_path)
    assert isinstance(services.decider, SystemOneDecider) and services.decider.remote
    assert services.health is not None
    services.notebook.append([DEPLOYS, STRIPE])
    try:
        message = Message(f"why did we pick Stripe over Adyen? the deploy token is {GITHUB_TOKEN}",
                          (Turn("user", f"I set GH_TOKEN={GITHUB_TOKEN} for the CI"), Turn("assistant", "Done.")),
                          session="s1")

        found = recall(message, services)

        assert found.kind is Kind.PAST_CHOICE
        assert found.text == f"{HEADER}\n- {quoted(STRIPE)} [notes.md:2]"
        assert [item.text for item in found.items] == [STRIPE] and found.notice is None
        sent = [request.body.decode() for request in service.requests]
        assert sent and not any(GITHUB_TOKEN in body or "Zk4Rm8Qx2Lw7" in body for body in sent)
        asked_kind, judged_notes = service.bodies()  # one request per stage: classify, notes
        assert "[REDACTED:github-token]" in asked_kind["state"]["message"]
        assert "[REDACTED:github-token]" in asked_kind["state"]["conversation"][0]["text"]
        # The notes ranked for the message are judged: DEPLOYS shares none of its words.
        assert [q["instructions"]["item"] for q in judged_notes["questions"].values()] == [STRIPE]
    finally:
        service.stop()

    paused = recall(Message("and why not Mollie for payments?", session="s1"), services)

    assert paused.text == "" and paused.items == ()
    assert paused.notice is not None and "\n" not in paused.notice
    assert re.fullmatch(rf"memory paused: {re.escape(services.decider.name)} unreachable since "
                        r"\d\d:\d\d; reminders are off", paused.notice)

    again = recall(Message("what did we decide about refunds?", session="s1"), services)

    assert again.text == "" and again.notice is None  # told once per session
    assert again.stopped_by == f"classify: {services.decider.name} paused"

    other = recall(Message("what did we decide about refunds?", session="s2"), services)

    assert other.notice == paused.notice  # another session is told too, once
