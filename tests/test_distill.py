"""Distilling a kept exchange to one note line: clauses, the choice of clauses, the line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memsift.decider.embedded import EmbeddedDecider
from memsift._notes.lines import fact_of, tail_of
from memsift.stages._distill import CLAUSE_CHARS, FACT_CHARS, clauses, names, note_line, pick
from memsift.types import Choice, Noul

FIX = ("Good catch. The worker died because `pd.read_parquet()` loaded the whole 9 GB partition on a 4 GB box; "
       "it now streams with `dataset.to_batches(50_000)`, so memory stays near 600 MB. "
       "Want me to add a regression test for the materializer?")


def test_clauses_leave_out_code_blocks_openers_and_pieces_too_short_to_stand_alone():
    text = "Yes: the queue is capped at 100 jobs per worker.\n```\nqueue.cap = 100\n```\nOk."

    assert clauses(text) == ["the queue is capped at 100 jobs per worker."]


def test_a_long_sentence_is_cut_at_its_semicolons_but_never_inside_a_code_span():
    text = ("River holds a LISTEN on one pooled connection `a; b` for the life of the client, and the "
            "pooler drops it between transactions; River gets its own pool on `DATABASE_URL_DIRECT` now, "
            "and the pooled URL stays with the request handlers that never listen.")

    pieces = clauses(text)

    assert len(pieces) == 2
    assert "`a; b`" in pieces[0] and "`DATABASE_URL_DIRECT`" in pieces[1]
    assert all(len(piece) <= CLAUSE_CHARS for piece in pieces)


def test_a_short_text_still_gives_its_one_clause():
    assert clauses("use pnpm") == ["use pnpm"]


def test_clauses_without_questions_leave_out_what_asks_and_keep_what_states():
    text = "Can we send all 5000 lines at once? We're on the small plan. Any problem (for the API)?"

    assert clauses(text, questions=False) == ["We're on the small plan."]
    assert len(clauses(text)) == 3


def test_pick_completes_a_decision_with_its_reason_whatever_its_score():
    scored = [(0.9, 0, "We picked RQ for the jobs."), (0.1, 1, "Celery is fine too."),
              (0.2, 2, "RQ is enough because we only have five job types.")]

    assert pick(scored, threshold=0.5) == ["We picked RQ for the jobs."]
    assert pick(scored, threshold=0.5, category="decision") == [
        "We picked RQ for the jobs.", "RQ is enough because we only have five job types."]


def test_pick_takes_the_likeliest_then_its_neighbour_in_the_order_said():
    scored = [(0.2, 0, "Thanks for the logs."), (0.9, 1, "The cause was a full disk."),
              (0.6, 2, "A nightly prune keeps it under 20 GB."), (0.7, 5, "Later we may move the cache.")]

    assert pick(scored, threshold=0.5) == ["The cause was a full disk.", "A nightly prune keeps it under 20 GB.",
                                          "Later we may move the cache."]
    assert pick(scored, threshold=0.65) == ["The cause was a full disk.", "Later we may move the cache."]
    assert pick([], threshold=0.5) == []


@given(st.lists(st.tuples(st.floats(0, 1), st.text(min_size=1, max_size=300)), max_size=12),
       st.floats(0, 1))
def test_a_line_never_passes_its_budget_and_always_holds_the_likeliest_clause(clauses_scored, threshold):
    scored = [(p, i, text) for i, (p, text) in enumerate(clauses_scored)]

    facts = pick(scored, threshold)
    line = note_line(facts, "decision", "2026-12-01", "ex-0123abcd")

    assert line.endswith(" (decision 2026-12-01 ex-0123abcd)")
    assert len(line) <= FACT_CHARS + len(" (decision 2026-12-01 ex-0123abcd)")
    if scored:
        best = max(scored, key=lambda s: (s[0], s[1]))
        assert facts[0] == best[2] or best[2] in facts


@given(st.lists(st.text(min_size=1, max_size=300), min_size=1, max_size=4),
       st.lists(st.text(max_size=400), max_size=2))
def test_a_line_with_the_names_it_leaves_out_stays_under_200_characters_and_keeps_its_tail(facts, said):
    line = note_line(facts, "constraint", "2026-12-01", "ex-0123abcd", said)

    assert len(line) < 200
    assert tail_of(line) == ("constraint", "2026-12-01", "ex-0123abcd")


def test_a_line_names_the_figures_and_names_the_exchange_gave_that_its_clause_leaves_out():
    user = "The SMS provider allows 1 message per second on our 10DLC number; reminders pile up."
    answer = ("The scheduler now starts a block's reminders early enough to finish on time, and the `sms` queue "
              "runs with MaxWorkers 1 so we don't pile up in Twilio's queue.")

    line = note_line([answer], "constraint", "2026-12-01", "ex-0123abcd", [user, answer])

    assert fact_of(line).endswith("[10DLC]"), line  # the user's name for the limit, which the answer never says
    assert line.startswith("The scheduler now starts")


def test_names_leave_out_redacted_placeholders_code_snippets_and_what_the_line_says():
    said = ["token [REDACTED:github-token] rotated; run `make deploy ENV=prod` on the CDN_EDGE box at 250 ms",
            "The deploy uses CDN_EDGE and takes 250ms now."]

    assert names(said, "The deploy uses CDN_EDGE.") == ["250 ms"]
    assert names(said, "The deploy takes 250ms on CDN_EDGE.") == []


def test_a_line_longer_than_its_budget_is_cut_at_a_word_and_says_so():
    line = note_line(["word " * 60], "constraint", "2026-12-01", "ex-0123abcd")
    fact, tail = line.rsplit(" (", 1)

    assert tail == "constraint 2026-12-01 ex-0123abcd)"
    assert fact.endswith("word…") and len(fact) <= FACT_CHARS
    assert fact[:-1].split(" ") == ["word"] * len(fact[:-1].split(" "))  # cut between words


def test_the_embedded_fact_question_prefers_the_clause_with_the_cause_and_the_fix_over_chatter():
    decider = EmbeddedDecider.load()
    said = clauses(FIX)
    questions = {str(i): Noul("fact", {"item": c, "origin": "assistant", "position": i}) for i, c in enumerate(said)}

    answers = decider.decide({"user": "the materializer died with SIGKILL", "assistant": FIX}, questions)
    best = max(said, key=lambda c: answers[str(said.index(c))].noul)

    assert "to_batches" in best or "read_parquet" in best
    assert answers[str(len(said) - 1)].noul < 0.2  # "Want me to add a regression test...?"


def test_the_embedded_novel_question_tells_a_restatement_from_an_update_and_another_subject():
    decider = EmbeddedDecider.load()
    note = ("Online keys expire after 36 hours (`ONLINE_TTL_S`): the daily run plus 12 h of slack. "
            "(decision 2026-11-02 ex-11111111)")
    options = {"restates": None, "updates": None, "differs": None}

    def verdict(new: str) -> str:
        question = Choice("novel", {"item": note, "new": new}, options)
        return decider.decide({}, {"q": question})["q"].choice

    assert verdict("Online keys expire after 36 hours (`ONLINE_TTL_S`), the daily run plus slack.") == "restates"
    updated = "Online keys now expire after 48 hours (`ONLINE_TTL_S`): the daily run plus 24 h slack."
    assert verdict(updated) == "updates"
    assert verdict("The Slack webhook lives in Secrets Manager as `slack_alerts`.") == "differs"


def test_a_line_joins_its_clauses_cleanly_and_starts_with_a_capital_unless_it_starts_with_a_name():
    joined = note_line(["our workers run pyarrow 14,", "which pins `to_batches`:"], "constraint", "2026-12-01",
                       "ex-0123abcd")
    named = note_line(["pnpm gen:api writes the types."], "decision", "2026-12-01", "ex-0123abcd")

    assert joined == "Our workers run pyarrow 14; which pins `to_batches` (constraint 2026-12-01 ex-0123abcd)"
    assert named.startswith("pnpm gen:api")
