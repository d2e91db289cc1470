"""One ``Services`` shared by threads and asyncio tasks gives the results and the cost figures of the calls
made one by one (issue 29).

The deciders that cost are real remote ones, over HTTP, against the OpenAI-compatible service of
tests/chat_services.py: the service counts the requests it answered, the ground truth every figure
memsift keeps (each step's ``usage``, ``costs.json``, the decider's ``spent``) is checked against.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path

import pytest
from chat_services import OpenAIService, hashed_weights
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsift import Exchange, Message, Recall, Retained, arecall, aretain, load_config, open_services, recall, retain
from memsift._words.text import stems
from memsift.costs import session_costs
from memsift.types import Usage

NOTES = [
    "Reverse proxy: Caddy over nginx because it renews TLS certificates on its own.",
    "Frontend: the admin dashboard uses htmx, not React, so no build step is needed.",
    "Payments: Stripe over Mollie because Mollie's webhooks dropped events under load.",
    "Celery beat schedules the nightly invoice email at 02:00 UTC.",
]
MESSAGES = [  # asked of the notes above: quiet ones, searching ones
    "why did we pick Caddy over nginx?",
    "does the admin dashboard use React?",
    "thanks, perfect",
    "why Stripe and not Mollie for payments?",
    "when does the invoice email go out?",
    "ok",
    "remind me why the dashboard has no build step",
]
EXCHANGES = [  # kept on subjects of their own, each line long enough that a date and a category shared
    # stay under novel's bar: what one keeps is no candidate for another, nor for a message
    ("the exporter OOMs every night, why?",
     "The exporter ran out of memory because it buffered orders, refunds, payouts and ledgers at once; fixed by "
     "capping its heap at 1536 MB and streaming batches."),
    ("which queue should the jobs use, RabbitMQ or Kafka?",
     "RabbitMQ over Kafka, because operations already maintain RabbitMQ clusters while Kafka demands ZooKeeper, "
     "partitions, retention tuning, brokers."),
    ("can we ship on Thursdays?",
     "Never ship Thursdays: the acquirer freezes settlement deployments weekly, so merges wait until Friday "
     "morning standup approval."),
    ("why did the cron fire twice when two pods started together?",
     "The scheduler double-fired because Redis locks outlived crashed pods; switched to Postgres advisory locks, "
     "which die with their connection, so duplicates stopped."),
    ("thanks, that works", "Glad it does."),
]
# What recall is asked and what retain keeps share no word, nor do two exchanges: calls made together need
# not see each other's writes, so any order of them is the order of the calls one by one.
_SUBJECTS = [set().union(*map(stems, MESSAGES + NOTES)), *(stems(f"{u} {a}") for u, a in EXCHANGES)]
assert all(not a & b for i, a in enumerate(_SUBJECTS) for b in _SUBJECTS[i + 1:])


def remote_answers(prompt: str, labels: list[str]) -> dict[str, float]:
    """The model behind the service: a note about the message's subject answers it; the rest by hash."""
    if labels[:2] == ["yes", "no"] and '"item"' in prompt:
        item = prompt.split('"item"', 1)[1].split("\n", 1)[0]
        asked = prompt.split("Question:", 1)[0]
        shared = len(stems(item) & stems(asked))
        return {"yes": 0.9, "no": 0.1} if shared >= 2 else {"yes": 0.05, "no": 0.95}
    return hashed_weights(prompt, labels)


def opened(folder: Path, service: OpenAIService):
    """Services on a project of their own, the item and fact questions asked of the remote model."""
    home, project = folder / "home", folder / "shop"
    project.mkdir(parents=True)
    config = load_config({"MEMSIFT_HOME": str(home), "MEMSIFT_JUDGE": "lexical",
                          "MEMSIFT_DECIDER_URL": service.base_url, "MEMSIFT_DECIDER_MODEL": "gpt-4.1-mini",
                          "MEMSIFT_DECIDER_BY_TASK": "answers=openai,worth=openai,fact=openai,novel=openai",
                          "MEMSIFT_DECIDER_PRICE_IN": "0.4", "MEMSIFT_DECIDER_PRICE_OUT": "1.6",
                          "MEMSIFT_DECIDER_DEADLINE": "30", "MEMSIFT_NARROW_NOTES_ABOVE": "0",
                          "MEMSIFT_NARROWED_NOTES": "5"})
    services = open_services(config, project)
    services.notebook.append(NOTES)
    return services


def charged(results: list[Recall | Retained]) -> Usage:
    total = Usage()
    for result in results:
        for step in result.trace:
            total += step.usage or Usage()
    return total


def backend(services) -> object:
    return services.decider.routes["answers"]


# -- the issue's own runs --------------------------------------------------------------------

@pytest.mark.parametrize(("threads", "each"), [(8, 5), (12, 1)])
def test_recalls_from_many_threads_are_each_charged_what_they_asked(tmp_path, threads, each):
    with OpenAIService(answerer=remote_answers) as service:
        services = opened(tmp_path, service)
        results: dict[str, list[Recall]] = {f"s{t}": [] for t in range(threads)}

        def ask(session: str, t: int) -> None:
            for i in range(each):
                results[session].append(recall(Message(MESSAGES[(t + i) % len(MESSAGES)], session=session), services))

        workers = [threading.Thread(target=ask, args=(session, t)) for t, session in enumerate(results)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        services.close()

    asked = len(service.requests)
    everything = [result for own in results.values() for result in own]
    assert asked > 0 and charged(everything).questions == asked  # before: 135 charged for 40 asked, 71 for 12
    assert backend(services).spent.questions == asked
    costs = session_costs(services.config.home)
    assert {s: costs.get(s, Usage()).questions for s in results} == {s: charged(r).questions
                                                                     for s, r in results.items()}
    assert sum(u.tokens_in for u in costs.values()) == charged(everything).tokens_in \
        == backend(services).spent.tokens_in


# -- the property: any mix, on threads and tasks, equals the calls one by one -------------------

Call = tuple[str, int, str]  # ("recall" | "retain", which message or exchange, "thread" | "task")

@st.composite
def calls(draw: st.DrawFn) -> list[Call]:
    """Recalls of any message, retains of distinct exchanges (the same one twice is one call's to keep),
    in any order, each on a thread or a task."""
    kept = [("retain", e) for e in draw(st.lists(st.integers(0, len(EXCHANGES) - 1), unique=True))]
    asked = [("recall", m) for m in draw(st.lists(st.integers(0, len(MESSAGES) - 1), max_size=6))]
    order = draw(st.permutations(kept + asked))
    vias = draw(st.lists(st.sampled_from(["thread", "task"]), min_size=len(order), max_size=len(order)))
    return [(path, which, via) for (path, which), via in zip(order, vias, strict=True)]


def one(services, call: Call, index: int) -> Recall | Retained:
    """The call as the sync API makes it (a thread's) or the async one (a task's), alone."""
    path, which, via = call
    session = f"s{index}"
    if path == "recall":
        message = Message(MESSAGES[which % len(MESSAGES)], session=session)
        return recall(message, services) if via == "thread" else asyncio.run(arecall(message, services))
    user, answer = EXCHANGES[which % len(EXCHANGES)]
    exchange = Exchange(f"{user} ({index})", answer, session)
    return retain(exchange, services) if via == "thread" else asyncio.run(aretain(exchange, services))


async def together(services, batch: list[Call]) -> list[Recall | Retained]:
    """Every call at once: a thread's on a thread of its own (the sync API), a task's on this loop."""
    async def as_task(path: str, which: int, index: int) -> Recall | Retained:
        session = f"s{index}"
        if path == "recall":
            return await arecall(Message(MESSAGES[which % len(MESSAGES)], session=session), services)
        user, answer = EXCHANGES[which % len(EXCHANGES)]
        return await aretain(Exchange(f"{user} ({index})", answer, session), services)

    return await asyncio.gather(*(
        as_task(path, which, index) if via == "task" else asyncio.to_thread(one, services, (path, which, via), index)
        for index, (path, which, via) in enumerate(batch)))


def decided(result: Recall | Retained) -> tuple[object, ...]:
    """What a call decided and what each step cost, without timings; a retain's outbox steps aside
    (calls made together may send each other's queued items: what is sent is checked below)."""
    steps = tuple((s.stage, s.verdict, s.score, s.usage) for s in result.trace if s.stage not in ("catch_up", "sync"))
    if isinstance(result, Recall):
        return result.text, result.items, result.kind, result.stopped_by, result.notice, steps
    return result.keep, result.category, result.lines, result.edits, result.notice, steps


def kept(services) -> dict[str, object]:
    """Every counter a run leaves behind."""
    home = services.config.home
    sessions = home / "sessions"
    return {
        "notes": sorted(services.notebook.lines()),
        "store": sorted(item.id for item in services.store.search(
            " ".join(u + " " + a for u, a in EXCHANGES), limit=100, timeout=10)),
        "outbox": services.outbox.pending(),
        "given": {path.name: json.loads(path.read_text()) for path in sorted(sessions.glob("*.json"))},
        "costs": {session: (u.questions, u.tokens_in, u.tokens_out, round(u.usd, 12))
                  for session, u in session_costs(home).items()},
        "spent": backend(services).spent.questions,
        "health": (home / "health.json").exists(),
    }


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=calls().filter(lambda batch: len(batch) >= 2))
def test_any_mix_of_calls_made_together_equals_the_calls_made_one_by_one(tmp_path_factory, batch):
    with OpenAIService(answerer=remote_answers) as alone, OpenAIService(answerer=remote_answers) as shared:
        first = opened(tmp_path_factory.mktemp("alone"), alone)
        one_by_one = [one(first, call, index) for index, call in enumerate(batch)]
        second = opened(tmp_path_factory.mktemp("together"), shared)
        at_once = asyncio.run(together(second, batch))
        before, after = kept(first), kept(second)
        first.close()
        second.close()

    assert [decided(r) for r in at_once] == [decided(r) for r in one_by_one]
    assert after == before
    assert len(shared.requests) == len(alone.requests) == charged(at_once).questions == after["spent"]
    assert sum(q for q, *_ in after["costs"].values()) == len(shared.requests)
    assert Counter(r.stopped_by for r in at_once) == Counter(r.stopped_by for r in one_by_one)
