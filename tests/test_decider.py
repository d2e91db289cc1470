"""The embedded decider: memsift/decider/.

Every example here was written for these tests (varied projects, none taken
from training/corpus/ nor from the evaluation scenarios).
"""

from __future__ import annotations

import os
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from examples import INCIDENT as EXAMPLE_INCIDENT
from memsift.decider import _weights as weights
from memsift.decider.embedded import WEIGHTS, EmbeddedDecider
from memsift.decider._features import BUCKETS, FACT_FEATURES, JUDGE_FEATURES
from memsift.stages import ANSWERS, KEEP_OPTIONS, KIND_OPTIONS, WORTH
from memsift.types import (
    KEEP_CATEGORIES, Category, Choice, ChoiceAnswer, Decider, Kind, Noul, NoulAnswer, Score,
)

REPO = Path(__file__).resolve().parent.parent

KIND_EXAMPLES: dict[Kind, list[str]] = {
    Kind.REACTION: [
        "thanks, that works perfectly!",
        "ugh, that's still wrong",
        "perfect, thank you so much",
    ],
    Kind.ACTION_ON_FINISHED_WORK: [
        "commit this and push it to the branch",
        "run the test suite again",
        "revert that last change",
    ],
    Kind.COMPLETE_INSTRUCTION: [
        "rename the variable `cnt` to `count` in src/parser/lexer.rs",
        "change the button label in Checkout.tsx from 'Buy' to 'Place order'",
        "in README.md replace every occurrence of 'colour' with 'color'",
    ],
    Kind.GENERAL_KNOWLEDGE: [
        "how does a bloom filter decide that an element is definitely absent?",
        "how does Python's GIL affect multithreading?",
        "what does the HTTP 418 status code mean?",
    ],
    Kind.CONVERSATION_QUESTION: [
        "what was the first file you changed in this conversation?",
        "can you summarize what we've done so far today?",
        "what did you say two messages ago about the cache?",
    ],
    Kind.NEW_DECISION: [
        "should we use Redis or Memcached for the session cache in the booking service?",
        "which queue should we pick for the notification worker, SQS or RabbitMQ?",
        "I'm thinking about switching the thumbnail pipeline from Pillow to ImageMagick, what do you think?",
    ],
    Kind.PAST_CHOICE: [
        "why did we choose Postgres over MongoDB for the ledger service?",
        "remind me why we went with Vite instead of webpack for the dashboard",
        "what was the reason we pinned numpy below 2.0 in the analytics job?",
    ],
    Kind.RESUMING_WORK: [
        "let's continue the migration of the billing tables we started yesterday",
        "where did we leave off with the push notification refactor?",
        "picking up the OAuth integration from last week, what's left to do?",
    ],
    Kind.RECURRING_PROBLEM: [
        "the CI runner is out of memory again during the docker build",
        "the flaky test in test_scheduler failed again with the same timeout as last time",
        "the deploy to staging is hanging again on the database migration step",
    ],
    Kind.BUILDS_ON_EXISTING: [
        "add a PDF download to the existing invoice generator",
        "extend the rate limiter we wrote to also cover the admin API",
        "add a new endpoint to the existing orders controller that returns refunds",
    ],
    Kind.EARLIER_EXCHANGE: [
        "remember when we discussed the retry strategy for the webhook sender last session?",
        "in our earlier session you suggested a fix for the Safari layout bug, what was it?",
        "last time we talked about the GraphQL pagination, what did we conclude?",
    ],
}


def kind_cases():
    for kind, messages in KIND_EXAMPLES.items():
        for message in messages:
            if isinstance(message, str):
                yield pytest.param(kind, message, id=f"{kind.value}:{message[:30]}")
            else:
                yield pytest.param(kind, *message.values, marks=message.marks,
                                   id=f"{kind.value}:{message.values[0][:30]}")


def ask_kind(decider, message: str, options=KIND_OPTIONS) -> ChoiceAnswer:
    answer = decider.decide({"message": message, "conversation": []},
                            {"k": Choice("kind", "What kind of message is this?", options)})["k"]
    assert isinstance(answer, ChoiceAnswer)
    return answer


def test_every_kind_has_at_least_two_examples_it_must_get_right():
    assert set(KIND_EXAMPLES) == set(Kind)
    assert all(sum(isinstance(m, str) for m in messages) >= 2 for messages in KIND_EXAMPLES.values())


@pytest.mark.parametrize(("kind", "message"), list(kind_cases()))
def test_the_kind_of_a_clear_cut_message(decider, kind, message):
    assert ask_kind(decider, message).choice == kind.value


def test_the_embedded_decider_is_a_decider(decider):
    assert isinstance(decider, Decider)
    assert decider.name == "embedded decider"


def test_a_kinds_probabilities_sum_to_one_and_the_choice_is_the_likeliest(decider):
    answer = ask_kind(decider, "why did we choose Postgres over MongoDB for the ledger service?")

    assert set(answer.probabilities) == {k.value for k in Kind}
    assert sum(answer.probabilities.values()) == pytest.approx(1.0)
    assert all(0.0 <= p <= 1.0 for p in answer.probabilities.values())
    assert answer.confidence == answer.probabilities[answer.choice] == max(answer.probabilities.values())


def test_a_choice_among_fewer_options_is_renormalised_over_those(decider):
    options = {Kind.REACTION: None, Kind.PAST_CHOICE: None, Kind.RESUMING_WORK: None}

    answer = ask_kind(decider, "why did we choose Postgres over MongoDB for the ledger service?", options)

    assert set(answer.probabilities) == {"reaction", "past_choice", "resuming_work"}
    assert sum(answer.probabilities.values()) == pytest.approx(1.0)
    assert answer.choice == "past_choice"


# -- the judge ("answers") -------------------------------------------------------

JUDGE_PAIRS = [
    # (kind, message, a note that answers it, a note on the same subject that does not)
    ("past_choice", "why did we pick Caddy instead of nginx for the reverse proxy?",
     "Reverse proxy: Caddy over nginx because it renews TLS certificates on its own and the config is ten lines.",
     "The nginx access log is rotated weekly by logrotate on the old VM."),
    ("recurring_problem", "the celery workers are stuck again with the broker connection reset",
     "Celery workers hung on broker connection reset; "
     "fixed by setting broker_connection_retry_on_startup and heartbeat=30.",
     "Celery beat schedules the nightly invoice email at 02:00 UTC."),
    ("new_decision", "should we store uploaded avatars in S3 or on the app server disk?",
     "Constraint: the app servers are ephemeral containers, nothing written to local disk survives a deploy.",
     "Avatars are shown as 48px circles in the header component."),
    ("resuming_work", "let's get back to the Kotlin migration of the settings screen",
     "Settings screen Kotlin migration: ViewModel done, the preference fragments and their tests are still left.",
     "The app's minimum Android SDK is 24."),
    ("builds_on_existing", "add a monthly summary to the existing usage email digest",
     "Usage email digest lives in mailers/digest.py, built with MJML templates, sent by the weekly cron job.",
     "Marketing emails must include an unsubscribe link by law."),
]


def judge(decider, kind: str, message: str, item: str, origin: str = "note") -> float:
    answer = decider.decide({"message": message, "conversation": [], "kind": kind},
                            {"x": Noul("answers", {"question": ANSWERS, "item": item, "origin": origin})})["x"]
    assert isinstance(answer, NoulAnswer)
    return answer.noul


@pytest.mark.parametrize(("kind", "message", "answers", "misses"), JUDGE_PAIRS,
                         ids=[kind for kind, *_ in JUDGE_PAIRS])
def test_a_note_that_answers_scores_above_one_that_does_not(decider, kind, message, answers, misses):
    good, bad = judge(decider, kind, message, answers), judge(decider, kind, message, misses)

    assert 0.0 <= bad < good <= 1.0


def test_the_judge_answers_the_best_note_above_the_threshold_and_the_miss_below(decider):
    kind, message, answers, misses = JUDGE_PAIRS[0]

    assert judge(decider, kind, message, answers) >= 0.5 > judge(decider, kind, message, misses)


def test_each_item_is_judged_alone_the_same_in_a_batch(decider):
    kind, message, answers, misses = JUDGE_PAIRS[1]
    state = {"message": message, "conversation": [], "kind": kind}
    questions = {str(i): Noul("answers", {"question": ANSWERS, "item": t, "origin": "passage"})
                 for i, t in enumerate([answers, misses])}

    batch = decider.decide(state, questions)

    assert batch["0"].noul == judge(decider, kind, message, answers, "passage")
    assert batch["1"].noul == judge(decider, kind, message, misses, "passage")


def test_each_source_is_judged_at_its_own_bar(decider):
    """The same fact line, told apart only by its source: a line memsift wrote is placed at its own
    calibrated bar (picked on the loops), a note someone wrote at the judge's own."""
    kind, message, answers, _ = JUDGE_PAIRS[0]
    state = {"message": message, "conversation": [], "kind": kind}
    asked = {source: Noul("answers", {"question": ANSWERS, "item": answers, "origin": "note", "source": source})
             for source in ("fact", "note")}
    header, _ = weights.load(WEIGHTS)
    bars = header["judge"]["thresholds"]

    scores = {source: answer.noul for source, answer in decider.decide(state, asked).items()}

    assert bars["note"] == header["judge"]["bar"] and bars["fact"] < bars["note"]
    assert scores["fact"] > scores["note"]  # the lower bar, placed at the same configured threshold


def test_without_a_source_an_answers_question_is_judged_by_its_origin(decider):
    kind, message, answers, _ = JUDGE_PAIRS[0]
    state = {"message": message, "conversation": [], "kind": kind}

    def asked(**instructions: str) -> float:
        question = Noul("answers", {"question": ANSWERS, "item": answers, **instructions})
        answer = decider.decide(state, {"x": question})["x"]
        assert isinstance(answer, NoulAnswer)
        return answer.noul

    assert asked(origin="note") == asked(origin="note", source="note")
    assert asked(origin="passage") == asked(origin="passage", source="passage")


def test_the_clause_that_states_the_fact_scores_above_chatter(decider):
    """Distill keeps the likeliest clause whatever its probability: what matters is the order."""
    user = "the import job keeps timing out on the nightly run"
    clauses = {"fact": "The pgbouncer pool of 10 was exhausted by the import job, so it now has its own pool of 5.",
               "chatter": "Done, let me know if you want me to run it again tonight."}
    asked = {name: Noul("fact", {"item": clause, "origin": "assistant", "position": n})
             for n, (name, clause) in enumerate(clauses.items())}

    scores = {name: answer.noul for name, answer in decider.decide({"user": user}, asked).items()}

    assert scores["fact"] > 2 * scores["chatter"]


def test_an_answers_question_without_an_item_is_refused(decider):
    with pytest.raises(ValueError):
        decider.decide({"message": "why?"}, {"x": Noul("answers", ANSWERS)})


# -- worth and keep --------------------------------------------------------------

@pytest.mark.parametrize("message", [
    "why did we choose Postgres over MongoDB for the ledger service?",
    "thanks!",
    "the CI runner is out of memory again during the docker build",
    "",
])
def test_worth_is_a_probability(decider, message):
    answer = decider.decide({"message": message, "conversation": []}, {"w": Noul("worth", WORTH)})["w"]

    assert isinstance(answer, NoulAnswer) and 0.0 <= answer.noul <= 1.0


INCIDENT = (EXAMPLE_INCIDENT.user, EXAMPLE_INCIDENT.assistant)


def ask_keep(decider, user: str, assistant: str) -> ChoiceAnswer:
    answer = decider.decide({"user": user, "assistant": assistant},
                            {"k": Choice("keep", "Does this exchange deserve memory?", KEEP_OPTIONS)})["k"]
    assert isinstance(answer, ChoiceAnswer)
    return answer


def p_keep(answer: ChoiceAnswer) -> float:
    return sum(p for c, p in answer.probabilities.items() if Category(c) in KEEP_CATEGORIES)


def test_keep_a_clear_incident_with_its_fix(decider):
    answer = ask_keep(decider, *INCIDENT)

    assert p_keep(answer) >= 0.5


def test_a_clear_incident_is_filed_as_an_incident(decider):
    assert ask_keep(decider, *INCIDENT).choice == "incident"


@pytest.mark.parametrize(("user", "assistant"), [("thanks!", "You're welcome!"),
                                                 ("great, that did it", "Glad it helped.")])
def test_drop_a_reaction(decider, user, assistant):
    answer = ask_keep(decider, user, assistant)

    assert answer.choice == "reaction"
    assert p_keep(answer) < 0.5


def test_keep_probabilities_are_a_distribution_over_the_categories(decider):
    answer = ask_keep(decider, *INCIDENT)

    assert set(answer.probabilities) == {c.value for c in Category}
    assert sum(answer.probabilities.values()) == pytest.approx(1.0)
    assert all(0.0 <= p <= 1.0 for p in answer.probabilities.values())


# -- questions it cannot answer ---------------------------------------------------

@pytest.mark.parametrize("question", [
    Noul("sentiment", "Is the user happy?"),
    Choice("language", "Which language?", {"en": None, "fr": None}),
    Noul("kind", "a kind asked as yes/no"),
    Score("kind", "a kind asked as a score", ("low", "high")),
])
def test_an_unknown_task_raises_value_error(decider, question):
    with pytest.raises(ValueError):
        decider.decide({"message": "thanks!"}, {"q": question})


# -- the weights file --------------------------------------------------------------

def test_the_weights_file_loads_with_a_head_per_task():
    header, tables = weights.load(WEIGHTS)

    assert header["heads"]["kind"]["classes"] == [k.value for k in Kind]
    assert header["heads"]["keep"]["classes"] == [c.value for c in Category]
    assert header["heads"]["worth"]["classes"] == ["yes"]
    assert header["judge"]["features"] == list(JUDGE_FEATURES)
    assert len(header["judge"]["weights"]) == len(JUDGE_FEATURES)
    assert set(header["judge"]["thresholds"]) == {"fact", "note", "passage"}
    assert header["fact"]["features"] == list(FACT_FEATURES)
    assert len(header["fact"]["weights"]) == len(FACT_FEATURES)
    assert len(tables["kind"]) == BUCKETS * len(Kind)
    assert len(tables["keep"]) == BUCKETS * len(Category)
    assert len(tables["worth"]) == BUCKETS
    assert header["idf"]["documents"] > 0


def test_weights_save_and_load_round_trip(tmp_path):
    arrays = {"a": array("b", [-127, 0, 5]), "f": array("f", [0.5, -1.25]), "h": array("H", [0, 65535])}

    weights.save(tmp_path / "w.bin", {"x": 1}, arrays)
    header, loaded = weights.load(tmp_path / "w.bin")

    assert header["x"] == 1
    assert loaded == arrays


def test_a_file_that_is_not_a_weights_file_is_refused(tmp_path):
    (tmp_path / "w.bin").write_bytes(b"{\"heads\": {}}")

    with pytest.raises(ValueError, match="not a memsift weights file"):
        weights.load(tmp_path / "w.bin")


@pytest.mark.parametrize(("part", "shorten"), [
    ("judge's weights", lambda header, tables: header["judge"]["weights"].pop()),
    ("table", lambda header, tables: tables["kind"].pop()),
    ("biases", lambda header, tables: header["heads"]["keep"]["bias"].pop()),
    ("document frequencies", lambda header, tables: tables["df"].pop()),
])
def test_a_weights_file_built_for_other_features_is_refused_not_truncated(part, shorten):
    header, tables = weights.load(WEIGHTS)
    shorten(header, tables)

    with pytest.raises(ValueError, match=f"{part} hold .* where this memsift reads"):
        EmbeddedDecider(header, tables)


def test_a_decider_loads_from_a_copy_of_the_weights(tmp_path):
    (tmp_path / "model.bin").write_bytes(WEIGHTS.read_bytes())

    copy = EmbeddedDecider.load(tmp_path / "model.bin")

    assert ask_kind(copy, "thanks!").choice == "reaction"


# numpy sums in another order without AVX-512 or AVX2: the trained floats then
# differ in their last digits, as they do between machines (a file built
# without AVX-512 once differed in the last digit of a scale).
WITHOUT_WIDE_SIMD = "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX2 FMA3"


@pytest.mark.slow
@pytest.mark.parametrize("disabled_simd", ["", WITHOUT_WIDE_SIMD], ids=["this-cpu", "without-avx512-avx2"])
def test_retraining_from_the_corpus_gives_the_same_weights(tmp_path, disabled_simd):
    pytest.importorskip("numpy")
    out = tmp_path / "model.bin"
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": disabled_simd}

    done = subprocess.run([sys.executable, str(REPO / "training" / "build_weights.py"), "--out", str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=900)

    assert done.returncode == 0, done.stderr
    assert out.read_bytes() == WEIGHTS.read_bytes()


# -- the corpus's loops -------------------------------------------------------------

LOOPS = sorted((Path(__file__).parent.parent / "training" / "corpus").glob("loop-*.json"))


@pytest.mark.parametrize("path", LOOPS, ids=[p.stem for p in LOOPS])
def test_a_loop_of_the_corpus_is_labelled_as_the_build_reads_it(path):
    """Each user turn has a kind, each answer its exchange's category; ``keep`` lists the exchanges
    of a kept category; a fact's evidence is said in its exchange; a need is of an earlier session."""
    import json

    loop = json.loads(path.read_text(encoding="utf-8"))
    order = [session["id"] for session in loop["sessions"]]
    for index, session in enumerate(loop["sessions"]):
        users, answers = session["turns"][::2], session["turns"][1::2]
        assert [t["role"] for t in users] == ["user"] * len(users) and len(answers) == len(users)
        assert all(Kind(t["kind"]) for t in users)
        kept = [n for n, answer in enumerate(answers) if Category(answer["category"]).kept]
        assert loop["keep"][session["id"]] == kept
        for turn in users:
            assert all(order.index(loop["facts"][f]["session"]) < index for f in turn.get("needs", []))
    for fact in loop["facts"].values():
        session = loop["sessions"][order.index(fact["session"])]
        said = " ".join(t["text"] for t in session["turns"][2 * fact["exchange"]: 2 * fact["exchange"] + 2]).lower()
        assert fact["exchange"] in loop["keep"][fact["session"]]
        assert all(phrase.lower() in said for phrase in fact["evidence"])


def test_the_corpus_has_loops_enough_to_calibrate_on():
    assert len(LOOPS) >= 20
