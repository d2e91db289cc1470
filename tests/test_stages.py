"""Each stage of the two paths, alone: memsift/stages.py.

The real embedded parts (decider, notes file, SQLite store, redactor,
reviser, session log) run behind every stage; a scripted Decider stands in
only where a test needs a controlled answer.
"""

from __future__ import annotations

import re
import time

import pytest
from attrs import evolve

from examples import INCIDENT
from memsift._notes.lines import fact_of
from memsift.notes import exchange_id, note_id
from memsift.stages import (
    HEADER, RECENT_TURNS, Keep, Sift, append_notes, classify, dedupe, distill, gate, judge, keep, notes,
    novel, redact, redact_exchange, render, revise, search, search_query, sync, take_all,
)
from memsift.types import (
    QUIET_KINDS, SEARCHING_KINDS, Category, Decider, Edit, Exchange, Item, Kind, Message, Noul, Reviser,
    Turn,
)

GITHUB_TOKEN = "ghp_Q7vX2mL9kR4tW8zN1pC6yB3fH5jD0sAeUgIo"

CADDY = "Reverse proxy: Caddy over nginx because it renews TLS certificates on its own and the config is ten lines."
DISK = "Constraint: the app servers are ephemeral containers, nothing written to local disk survives a deploy."
HTMX = "Frontend: the admin dashboard uses htmx, not React, so no build step is needed."

CELERY_FIX = Item("a1", "Celery workers hung after a broker connection reset; the fix was "
                        "broker_connection_retry_on_startup=True and a heartbeat of 30 seconds.",
                  "passage", "archive")
CELERY_BEAT = Item("a2", "Celery beat schedules the nightly invoice email at 02:00 UTC.", "passage", "archive")
MEILI = Item("a3", "We picked Meilisearch over Elasticsearch for recipe search because it runs in 200 MB "
                   "of RAM on the small VPS.", "passage", "archive")


def sift(text: str, *turns: Turn, session: str = "", **fields) -> Sift:
    return Sift(message=Message(text, turns, session), **fields)


def passage(id_: str, text: str, score: float = 0.9, source: str = "archive") -> Item:
    return Item(id_, text, "passage", source, score)


def with_decider(services, decider):
    return evolve(services, decider=decider)


def test_the_doubles_follow_the_protocols(scripted):
    assert isinstance(scripted(), Decider)
    assert isinstance(NamingReviser([]), Reviser)


# -- redact ----------------------------------------------------------------------

def test_redact_removes_a_secret_from_the_message_and_the_conversation(services):
    state = sift(f"deploy failed with {GITHUB_TOKEN}", Turn("user", f"my token is {GITHUB_TOKEN}"),
                 Turn("assistant", "noted"), session="s1")

    out = redact(services, state)

    assert GITHUB_TOKEN not in out.message.text
    assert all(GITHUB_TOKEN not in turn.text for turn in out.message.conversation)
    assert out.message.text == "deploy failed with [REDACTED:github-token]"
    assert [t.role for t in out.message.conversation] == ["user", "assistant"]
    assert out.message.session == "s1"
    assert [(s.stage, s.verdict) for s in out.trace] == [("redact", "redacted")]
    assert not out.stopped_by


def test_redact_leaves_a_clean_message_as_it_is(services):
    state = sift("why did we pick Caddy?", Turn("assistant", "see the notes"))

    out = redact(services, state)

    assert out.message == state.message
    assert [(s.stage, s.verdict) for s in out.trace] == [("redact", "clean")]


# -- classify --------------------------------------------------------------------

def test_classify_a_reaction_ends_the_path_with_the_real_decider(services):
    out = classify(services, sift("thanks, that works perfectly!"))

    assert out.kind is Kind.REACTION
    assert out.stopped_by == "classify: reaction needs no memory"
    assert out.trace[-1].stage == "classify" and out.trace[-1].verdict == "reaction"
    assert 0.0 <= out.trace[-1].score <= 1.0


def test_classify_a_searching_message_goes_on_with_the_real_decider(services):
    out = classify(services, sift("why did we choose Postgres over MongoDB for the ledger service?"))

    assert out.kind is Kind.PAST_CHOICE
    assert not out.stopped_by


@pytest.mark.parametrize("kind", sorted(QUIET_KINDS))
def test_classify_every_quiet_kind_ends_the_path(services, scripted, kind):
    out = classify(with_decider(services, scripted(kind=kind)), sift("anything"))

    assert out.kind is kind
    assert out.stopped_by == f"classify: {kind.value} needs no memory"


@pytest.mark.parametrize("kind", sorted(SEARCHING_KINDS))
def test_classify_every_searching_kind_goes_on(services, scripted, kind):
    out = classify(with_decider(services, scripted(kind=kind)), sift("anything"))

    assert out.kind is kind
    assert out.stopped_by == ""


def test_classify_asks_one_kind_question_over_the_recent_turns_only(services, scripted):
    decider = scripted()
    turns = [Turn("user" if i % 2 == 0 else "assistant", f"turn number {i}") for i in range(7)]

    classify(with_decider(services, decider), sift("and now?", *turns))

    (state, questions), = decider.calls
    assert [q.task for q in questions.values()] == ["kind"]
    assert set(questions["kind"].options) == {k.value for k in Kind}
    assert state["message"] == "and now?"
    assert [t["text"] for t in state["conversation"]] == [t.text for t in turns[-RECENT_TURNS:]]


# -- notes -----------------------------------------------------------------------

def write_notes(services, text: str) -> None:
    services.notebook.path.write_text(text, encoding="utf-8")


def test_notes_a_note_that_answers_is_chosen_with_its_line_as_pointer(services):
    write_notes(services, f"# Infrastructure\n\n{HTMX}\n{CADDY}\n{DISK}\n")
    state = sift("why did we pick Caddy instead of nginx for the reverse proxy?", kind=Kind.PAST_CHOICE)

    out = notes(services, state)

    assert [item.text for item in out.chosen] == [CADDY]
    chosen = out.chosen[0]
    assert chosen.source == "notes.md:4" and chosen.origin == "note" and chosen.id == note_id(CADDY)
    assert chosen.score >= services.config.answers_threshold
    assert out.answered  # sure enough: the store is not searched
    # Ranked first: the only one of the three notes that shares a word with the message is judged.
    assert out.trace[-1].stage == "notes" and "the 1 ranked first of 3 notes judged" in out.trace[-1].why
    assert not out.stopped_by


def test_notes_a_note_that_answers_but_not_surely_leaves_the_store_to_be_searched(services, scripted):
    write_notes(services, f"{CADDY}\n{DISK}\n")
    unsure = (services.config.answers_threshold + services.config.settled_threshold) / 2
    decider = scripted(answers=lambda item, origin: unsure if item == CADDY else 0.0)

    out = notes(with_decider(services, decider), sift("why Caddy?", kind=Kind.PAST_CHOICE))

    assert [item.text for item in out.chosen] == [CADDY]
    assert not out.answered and not out.stopped_by


def test_notes_none_answers_goes_on_with_nothing_chosen(services):
    write_notes(services, f"{HTMX}\n{DISK}\n")

    out = notes(services, sift("the celery workers are stuck again after the broker reset",
                               kind=Kind.RECURRING_PROBLEM))

    assert out.chosen == () and not out.answered and not out.stopped_by
    assert out.trace[-1].verdict == "none answers"


def test_notes_with_no_notes_file_asks_nothing(services, scripted):
    decider = scripted()

    out = notes(with_decider(services, decider), sift("why Caddy?", kind=Kind.PAST_CHOICE))

    assert decider.calls == []
    assert out.chosen == () and "the 0 ranked first of 0 notes judged" in out.trace[-1].why


def test_notes_past_the_threshold_only_the_best_full_text_matches_are_ranked(services, scripted):
    filler = [f"decision: the worker{n} queue{n} uses batch size {n} for the nightly export" for n in range(30)]
    write_notes(services, "\n".join([*filler[:12], CADDY, *filler[12:], HTMX]) + "\n")
    decider = scripted(answers=lambda item, origin: 0.95 if item == CADDY else 0.0)
    narrowed = evolve(services, config=evolve(services.config, narrow_notes_above=20, narrowed_notes=3))

    message = sift("why did we pick Caddy over nginx for the nightly export?", kind=Kind.PAST_CHOICE)

    out = notes(with_decider(narrowed, decider), message)

    judged = [q.instructions["item"] for q in decider.asked("answers")]
    assert len(judged) == 3 and judged[0] == CADDY and HTMX not in judged  # HTMX shares no word
    assert [(item.text, item.source) for item in out.chosen] == [(CADDY, "notes.md:13")]
    assert out.answered and "the 3 ranked first of 3 notes judged" in out.trace[-1].why


def test_notes_are_ranked_as_a_search_engine_ranks_them_and_only_the_first_are_judged(services, scripted):
    others = [f"The {w} cache is warmed at deploy time by the {w} job." for w in ("image", "price", "stock")]
    write_notes(services, "\n".join([CADDY, *others, DISK, HTMX]) + "\n")
    decider = scripted(answers=lambda item, origin: 0.0)
    services = evolve(services, config=evolve(services.config, judged_notes=2))

    notes(with_decider(services, decider), sift("is the price cache warmed at deploy?", kind=Kind.PAST_CHOICE))

    asked = decider.asked("answers")
    judged = [q.instructions["item"] for q in asked]
    assert judged[0] == others[1] and len(judged) == 2 and CADDY not in judged  # first: it names the price cache
    assert all(q.instructions["origin"] == "note" and isinstance(q, Noul) for q in asked)


def test_a_fact_is_found_by_the_words_of_the_exchange_it_was_kept_from(services, scripted):
    line = "Uploads go straight from the browser to the API's POST /imports. (incident 2026-12-01 ex-0a1b2c3d)"
    write_notes(services, "\n".join([CADDY, line, DISK, HTMX]) + "\n")
    services.notebook.add_keys({"ex-0a1b2c3d": "photo csv import fails 413 vercel caps function bodies 4.5 mb"})
    decider = scripted(answers=lambda item, origin: 0.0)
    services = evolve(services, config=evolve(services.config, judged_notes=1))

    message = sift("organizers want a photo per shift, pics are 12mb", kind=Kind.NEW_DECISION)

    notes(with_decider(services, decider), message)

    assert [q.instructions["item"] for q in decider.asked("answers")] == [fact_of(line)]


def test_notes_headings_and_blanks_are_not_notes(services, scripted):
    write_notes(services, f"# Decisions Caddy\n{CADDY}\n\n   \n## Limits Caddy\n{DISK}\n{HTMX}\n")
    decider = scripted(answers=lambda item, origin: 0.0)

    notes(with_decider(services, decider), sift("why Caddy?", kind=Kind.PAST_CHOICE))

    assert [q.instructions["item"] for q in decider.asked("answers")] == [CADDY]


def test_notes_keeps_at_most_max_items_best_first(services, scripted):
    lines = [f"fact number {n} about the billing worker" for n in range(6)]
    write_notes(services, "\n".join(lines) + "\n")
    scores = {line: 0.55 + 0.07 * n for n, line in enumerate(lines)}
    decider = scripted(answers=lambda item, origin: scores[item])
    services = evolve(services, config=evolve(services.config, judged_notes=6))

    out = notes(with_decider(services, decider), sift("billing worker?", kind=Kind.PAST_CHOICE))

    assert [item.text for item in out.chosen] == lines[::-1][: services.config.max_items]
    assert [item.score for item in out.chosen] == sorted((i.score for i in out.chosen), reverse=True)


# -- gate ------------------------------------------------------------------------

def test_gate_not_worth_memory_ends_the_path(services, scripted):
    out = gate(with_decider(services, scripted(worth=0.05)), sift("rename x to y", kind=Kind.BUILDS_ON_EXISTING))

    assert out.stopped_by == "gate: subject not worth memory"
    assert out.trace[-1].verdict == "not worth memory" and out.trace[-1].score == 0.05


def test_gate_worth_memory_goes_on(services, scripted):
    threshold = services.config.worth_threshold
    out = gate(with_decider(services, scripted(worth=threshold)), sift("why Caddy?", kind=Kind.PAST_CHOICE))

    assert not out.stopped_by
    assert out.trace[-1].verdict == "worth memory"


def test_gate_not_worth_memory_goes_on_with_the_notes_already_found(services, scripted):
    found = (Item("n1", CADDY, "note", "notes.md:1", 0.6),)
    state = sift("why Caddy?", kind=Kind.PAST_CHOICE, chosen=found)

    out = gate(with_decider(services, scripted(worth=0.0)), state)

    assert not out.stopped_by and out.answered  # the store is not searched
    assert out.chosen == found


def test_gate_is_skipped_when_a_note_answered(services, scripted):
    decider = scripted(worth=0.0)
    state = sift("why Caddy?", kind=Kind.PAST_CHOICE, answered=True)

    assert gate(with_decider(services, decider), state) is state
    assert decider.calls == []


# -- search ----------------------------------------------------------------------

def test_search_an_empty_store_ends_the_path(services):
    out = search(services, sift("the celery workers are stuck again", kind=Kind.RECURRING_PROBLEM))

    assert out.candidates == ()
    assert out.stopped_by == "search: the store has nothing close"


def test_search_an_empty_store_goes_on_with_the_notes_already_found(services):
    found = (Item("n1", CADDY, "note", "notes.md:1", 0.6),)

    out = search(services, sift("why did we pick Caddy over nginx?", kind=Kind.PAST_CHOICE, chosen=found))

    assert not out.stopped_by and out.chosen == found


def test_search_finds_the_closest_passages_in_the_store(services):
    services.store.add([CELERY_FIX, CELERY_BEAT, MEILI], timeout=1)

    out = search(services, sift("celery workers hung after the broker connection reset",
                                kind=Kind.RECURRING_PROBLEM))

    assert [item.id for item in out.candidates][:1] == ["a1"]
    assert {item.id for item in out.candidates} == {"a1", "a2"}
    assert out.trace[-1].verdict == "2 passages" and not out.stopped_by


def test_search_asks_for_at_most_search_limit_passages(services):
    services.store.add([passage(f"p{n}", f"invoice export note {n}") for n in range(9)], timeout=1)

    out = search(services, sift("invoice export broken again", kind=Kind.RECURRING_PROBLEM))

    assert len(out.candidates) == services.config.search_limit


def test_search_without_a_store_ends_the_path(services):
    out = search(evolve(services, store=None), sift("why Caddy?", kind=Kind.PAST_CHOICE))

    assert out.stopped_by == "search: no store configured"


def test_search_is_skipped_when_a_note_answered(services):
    services.store.add([CELERY_FIX], timeout=1)
    state = sift("celery workers hung", kind=Kind.RECURRING_PROBLEM, answered=True)

    assert search(services, state) is state


def test_search_query_a_terse_message_borrows_the_last_turn():
    last = Turn("assistant", "Parcel number or the order id first?")

    assert search_query(Message("ok, parcel number first", (last,))) == \
        "ok, parcel number first\nParcel number or the order id first?"
    long = "the parcel label printer rejects the shipping template again"
    assert search_query(Message(long, (last,))) == long
    assert search_query(Message("ok", ())) == "ok"


# -- judge -----------------------------------------------------------------------

def test_judge_keeps_only_the_passages_that_answer_best_first(services):
    state = sift("the celery workers are stuck again after the broker connection reset",
                 kind=Kind.RECURRING_PROBLEM, candidates=(CELERY_BEAT, MEILI, CELERY_FIX))

    out = judge(services, state)

    assert [item.id for item in out.chosen] == ["a1"]
    assert out.chosen[0].score >= services.config.answers_threshold
    assert not out.stopped_by


def test_judge_rejecting_every_passage_ends_the_path(services, scripted):
    state = sift("celery?", kind=Kind.RECURRING_PROBLEM, candidates=(CELERY_FIX, CELERY_BEAT))

    out = judge(with_decider(services, scripted(answers=lambda item, origin: 0.1)), state)

    assert out.chosen == ()
    assert out.stopped_by == "judge: no passage answers the message"


def test_judge_asks_one_question_per_passage(services, scripted):
    decider = scripted(answers=lambda item, origin: 0.9 if item == MEILI.text else 0.2)
    state = sift("why Meilisearch?", kind=Kind.PAST_CHOICE, candidates=(CELERY_FIX, MEILI, CELERY_BEAT))

    out = judge(with_decider(services, decider), state)

    assert [(q.instructions["item"], q.instructions["origin"]) for q in decider.asked("answers")] == \
        [(CELERY_FIX.text, "passage"), (MEILI.text, "passage"), (CELERY_BEAT.text, "passage")]
    assert [(item.id, item.score) for item in out.chosen] == [("a3", 0.9)]
    assert decider.calls[0][0]["kind"] == "past_choice"  # the judge reads the kind


@pytest.mark.parametrize("kind", sorted(SEARCHING_KINDS))
def test_judge_takes_a_weaker_match_only_when_the_message_asks_about_memory_itself(services, scripted, kind):
    config = services.config
    between = (config.asked_threshold + config.answers_threshold) / 2
    decider = scripted(answers=lambda item, origin: between)
    state = sift("and the search engine?", kind=kind, candidates=(MEILI,))

    out = judge(with_decider(services, decider), state)

    asks = kind in {Kind.PAST_CHOICE, Kind.EARLIER_EXCHANGE, Kind.RESUMING_WORK}
    assert [item.id for item in out.chosen] == (["a3"] if asks else [])


def test_judge_is_skipped_when_a_note_answered(services, scripted):
    decider = scripted()
    state = sift("why Caddy?", kind=Kind.PAST_CHOICE, answered=True, chosen=(passage("n", CADDY),))

    assert judge(with_decider(services, decider), state) is state
    assert decider.calls == []


# -- take_all --------------------------------------------------------------------

def test_take_all_chooses_every_candidate(services):
    state = sift("anything", candidates=(CELERY_FIX, CELERY_BEAT))

    out = take_all(services, state)

    assert out.chosen == (CELERY_FIX, CELERY_BEAT)
    assert out.trace[-1].verdict == "2 passages"


# -- dedupe ----------------------------------------------------------------------

def test_dedupe_drops_what_the_conversation_already_says(services):
    said = Turn("assistant", "Reminder: Caddy was chosen over nginx because it renews the TLS "
                             "certificates on its own, and its config is ten lines.")
    state = sift("and the proxy?", Turn("user", "why Caddy?"), said, chosen=(passage("n1", CADDY), MEILI))

    out = dedupe(services, state)

    assert [item.id for item in out.chosen] == ["a3"]
    assert out.trace[-1].verdict == "1 new" and out.trace[-1].why.startswith("1 ")


def test_dedupe_drops_what_this_session_was_already_given(services):
    first = dedupe(services, sift("why Meilisearch?", session="s1", chosen=(evolve(MEILI, score=0.6),)))
    assert [item.id for item in first.chosen] == ["a3"]

    again = dedupe(services, sift("why Meilisearch, again?", session="s1",
                                  chosen=(evolve(MEILI, score=0.6), evolve(CELERY_FIX, score=0.6))))
    other = dedupe(services, sift("why Meilisearch?", session="s2", chosen=(evolve(MEILI, score=0.6),)))

    assert [item.id for item in again.chosen] == ["a1"]
    assert [item.id for item in other.chosen] == ["a3"]  # another session was never given it
    assert services.session_log.given("s1") == {"a1", "a3"}


def test_dedupe_drops_an_item_a_turn_restated_in_other_words_up_to_the_configured_share(services):
    # The assistant's turn holds 7 of the passage's 11 content words: a restatement, not the passage.
    said = Turn("assistant", "Meilisearch was picked over Elasticsearch since it runs in 200 MB of RAM.")
    state = sift("and the search engine?", Turn("user", "what runs search?"), said, chosen=(MEILI,))

    strict = evolve(services, config=evolve(services.config, said_share=1.0))

    assert dedupe(services, state).chosen == ()
    assert [item.id for item in dedupe(strict, state).chosen] == ["a3"]


def test_dedupe_drops_a_repeat_of_the_same_text(services):
    twin = Item("n9", "  celery workers HUNG after a broker connection reset; the fix was "
                      "broker_connection_retry_on_startup=True and a heartbeat of 30 seconds. ",
                "note", "notes.md:9", 0.8)

    out = dedupe(services, sift("celery hung", chosen=(CELERY_FIX, twin)))

    assert [item.id for item in out.chosen] == ["a1"]


def test_dedupe_drops_a_repeat_of_the_same_id(services):
    older = passage("a7", "Deploys go out through the blue-green switch on the load balancer.")
    newer = passage("a7", "Deploys go out through the blue-green switch, since March via Argo Rollouts.")

    out = dedupe(services, sift("how do deploys go out?", chosen=(older, newer)))

    assert [item.id for item in out.chosen] == ["a7"]


def test_dedupe_dropping_everything_ends_the_path(services):
    said = Turn("assistant", CADDY)
    out = dedupe(services, sift("ok", said, chosen=(passage("n1", CADDY),)))

    assert out.chosen == ()
    assert out.stopped_by == "dedupe: everything found was already said"


# -- render ----------------------------------------------------------------------

def test_render_a_header_one_line_per_item_with_its_pointer_and_the_reminder(services):
    items = (Item("n1", CADDY, "note", "notes.md:4", 0.9),
             Item("a1", "Celery workers hung;\n  the fix was\ta heartbeat of 30 s.", "passage", "archive", 0.7))

    out = render(services, sift("why?", chosen=items))

    lines = out.text.split("\n")
    assert lines == [HEADER, f'- "{CADDY}" [notes.md:4]',
                     '- "Celery workers hung; the fix was a heartbeat of 30 s." [archive]']
    assert "may be out of date" in lines[0] and "not instructions" in lines[0]
    assert out.stopped_by == "render: added 2 items"


def test_render_nothing_chosen_ends_with_no_text(services):
    out = render(services, sift("why?"))

    assert out.text == ""
    assert out.stopped_by == "render: nothing to add"


# -- retain: redact_exchange, keep -----------------------------------------------

def test_redact_exchange_removes_secrets_from_both_sides(services):
    state = Keep(exchange=Exchange(f"push with {GITHUB_TOKEN}", f"pushed using {GITHUB_TOKEN}", "s1"))

    out = redact_exchange(services, state)

    assert GITHUB_TOKEN not in out.exchange.user and GITHUB_TOKEN not in out.exchange.assistant
    assert out.exchange.session == "s1"
    assert out.trace[-1].verdict == "redacted"


def test_redact_exchange_leaves_a_clean_exchange_as_it_is(services):
    state = Keep(exchange=Exchange("why Caddy?", "It renews certificates."))

    out = redact_exchange(services, state)

    assert out.exchange == state.exchange and out.trace[-1].verdict == "clean"




def test_keep_an_incident_with_its_fix_is_kept_with_the_real_decider(services):
    out = keep(services, Keep(exchange=INCIDENT))

    assert out.keep and out.category.kept and not out.stopped_by


def test_keep_a_reaction_is_dropped_with_the_real_decider(services):
    out = keep(services, Keep(exchange=Exchange("thanks!", "You're welcome!")))

    assert not out.keep and out.category is Category.REACTION
    assert out.stopped_by == "keep: dropped as reaction"


def test_keep_adds_up_the_kept_categories_against_the_threshold(services, scripted):
    # The top single category is a drop, yet decision + incident together pass the threshold.
    assert services.config.keep_threshold <= 0.65
    split = {Category.DECISION: 0.34, Category.INCIDENT: 0.31, Category.REACTION: 0.35}

    out = keep(with_decider(services, scripted(keep=split)), Keep(exchange=INCIDENT))

    assert out.keep and out.category is Category.DECISION
    assert out.trace[-1].score == pytest.approx(0.65)


def test_keep_a_drop_names_the_likeliest_drop_category(services, scripted):
    split = {Category.DECISION: 0.2, Category.ONE_OFF: 0.5, Category.HABIT: 0.3}

    out = keep(with_decider(services, scripted(keep=split)), Keep(exchange=INCIDENT))

    assert not out.keep and out.category is Category.ONE_OFF
    assert out.stopped_by == "keep: dropped as one_off"


# -- retain: append_notes, revise, sync ------------------------------------------

def kept(exchange: Exchange, category: Category = Category.INCIDENT) -> Keep:
    return Keep(exchange=exchange, keep=True, category=category)


def test_append_notes_appends_the_distilled_line_folded_onto_one_line(services):
    write_notes(services, f"{CADDY}\n")
    line = "It loaded everything;\n\nnow it streams rows. (incident 2026-12-01 ex-0123abcd)"

    out = append_notes(services, evolve(kept(INCIDENT), line=line))

    assert out.lines == (line,) and out.trace[-1].stage == "notes"
    assert services.notebook.path.read_text(encoding="utf-8") == f"{CADDY}\n{' '.join(line.split())}\n"


def test_revise_removes_the_older_line_the_new_one_repeats_and_keeps_the_rest_byte_for_byte(services):
    old = "Node 20 only on the VPS"
    odd = "  keep me:\tspaces  and tabs  "
    write_notes(services, f"# Hosting\n{old}\n{odd}\n\n{CADDY}\nNode 20 only on the VPS host\n")

    out = revise(services, evolve(kept(INCIDENT), lines=("Node 20 only on the VPS host",)))

    assert out.edits == (Edit(2, "remove", old=old),)
    assert services.notebook.path.read_text(encoding="utf-8") == \
        f"# Hosting\n{odd}\n\n{CADDY}\nNode 20 only on the VPS host\n"


class NamingReviser:
    """A Reviser double that names the edits it is given, whatever the lines."""

    def __init__(self, edits: list[Edit]) -> None:
        self.edits = edits
        self.seen: list[tuple[list[str], list[str]]] = []

    def revise(self, lines, added):
        self.seen.append((list(lines), list(added)))
        return self.edits


def test_revise_applies_the_edits_named_and_records_only_those_applied(services):
    write_notes(services, f"{CADDY}\n{DISK}\n{HTMX}\n")
    applies = Edit(2, "replace", "Constraint: containers are ephemeral.", old=DISK)
    reviser = NamingReviser([applies, Edit(9, "remove", old=CADDY + "x"), Edit(0, "remove", old=""),
                             Edit(1, "remove", old="a line that is not there")])

    out = revise(evolve(services, reviser=reviser), evolve(kept(INCIDENT), lines=(HTMX,)))

    assert reviser.seen == [([CADDY, DISK, HTMX], [HTMX])]
    assert out.edits == (applies,)
    assert out.trace[-1].verdict == "1 edits" and out.trace[-1].why == "3 stale dropped"
    assert services.notebook.lines() == [CADDY, "Constraint: containers are ephemeral.", HTMX]


class LateReviser(NamingReviser):
    """Names its edits on the lines it read, then another retain writes before they are applied."""

    def __init__(self, edits: list[Edit], meanwhile) -> None:
        super().__init__(edits)
        self.meanwhile = meanwhile

    def revise(self, lines, added):
        edits = super().revise(lines, added)
        self.meanwhile()
        return edits


def test_revise_lands_each_edit_on_the_line_it_named_after_another_retain_moved_the_lines(services):
    write_notes(services, f"{CADDY}\n{DISK}\n{HTMX}\n")
    notebook = services.notebook
    reviser = LateReviser([Edit(2, "remove", old=DISK), Edit(1, "replace", "Caddy, TLS on", old=CADDY)],
                          meanwhile=lambda: (notebook.apply([Edit(1, "remove", old=CADDY)]),
                                             notebook.append(["a line another retain added"])))

    out = revise(evolve(services, reviser=reviser), evolve(kept(INCIDENT), lines=(HTMX,)))

    assert out.edits == (Edit(1, "remove", old=DISK),)  # moved up one; the other's line is gone
    assert notebook.lines() == [HTMX, "a line another retain added"]


STREAMED = ("The export loaded the whole orders table with fetchall(); a server-side cursor now streams "
            f"5000 rows at a time. (incident 2026-12-01 {exchange_id(INCIDENT)})")


def test_sync_adds_the_fact_line_to_the_embedded_store_once_with_its_exchange(services):
    state = evolve(kept(INCIDENT), line=STREAMED)

    sync(services, state)
    out = sync(services, state)

    found = services.store.search("export fetchall orders table", limit=5, timeout=1)
    assert len(found) == 1
    assert found[0].text == STREAMED  # the fact is what is searched, judged and shown
    assert found[0].exchange == f"{INCIDENT.user}\n\n{INCIDENT.assistant}"  # the whole, as its source
    assert found[0].id == exchange_id(INCIDENT)
    assert found[0].source == "memsift:incident"
    assert services.store.get(exchange_id(INCIDENT)) == evolve(found[0], score=0.0)
    assert out.trace[-1].stage == "sync" and out.trace[-1].verdict == "stored"


def test_an_exchange_stored_whole_is_judged_and_shown_by_its_best_sentences(services, scripted):
    story = ("So yesterday I was going through the worker logs with the team and we saw lots of noise about "
             "retries, a dashboard that was red, and a long thread in chat about what to do next. ") * 4
    whole = f"{story}\n\nWe use Postgres advisory locks instead of Redis locks, because a lock must die with " \
            "its connection. Anything else you want me to look at?"
    old = Item("ex-00aa11bb", whole, "passage", "memsift:decision")  # kept before items had fact lines
    state = sift("why not Redis for mutual exclusion?", kind=Kind.PAST_CHOICE, candidates=(old,))

    decider = scripted(answers=lambda item, origin: 0.9 if "advisory" in item else 0.1)
    out = judge(with_decider(services, decider), state)

    [judged] = [q.instructions["item"] for q in decider.asked("answers")]
    assert "advisory locks" in judged and "dashboard" not in judged and len(judged) <= 300
    assert out.chosen[0].text == judged and out.chosen[0].exchange == whole


def test_sync_without_a_store_does_nothing(services):
    out = sync(evolve(services, store=None), kept(INCIDENT))

    assert out.trace[-1].verdict == "no store" and not out.stopped_by


# -- notes: a note ends the search only when it is clearly the answer --------------

@pytest.mark.parametrize(("caddy", "htmx", "settled"), [(0.95, 0.1, True), (0.95, 0.85, False), (0.75, 0.1, False)])
def test_notes_settle_only_when_the_best_note_is_sure_and_leads_the_next_by_the_margin(
        services, scripted, caddy, htmx, settled):
    write_notes(services, f"{HTMX}\n{CADDY}\n")
    decider = scripted(answers=lambda item, origin: caddy if item == CADDY else htmx)

    out = notes(with_decider(services, decider), sift("why Caddy over the htmx frontend?", kind=Kind.PAST_CHOICE))

    assert [item.text for item in out.chosen] == [CADDY]
    assert out.answered is settled
    assert f"lead {caddy - htmx:.2f}" in out.trace[-1].why


# -- retain: distill, novel ----------------------------------------------------------

def test_distill_writes_the_likeliest_clauses_with_category_day_and_pointer(services, scripted):
    exchange = Exchange("exports crash at night, why?",
                        "Thanks for the logs, that helps a lot here. The export loaded the whole table with "
                        "fetchall(). It now streams 5000 rows at a time through a server-side cursor.")
    likely = {"The export loaded the whole table with fetchall().": 0.9,
              "It now streams 5000 rows at a time through a server-side cursor.": 0.7}
    decider = scripted(fact=lambda clause, origin: likely.get(clause, 0.1))

    out = distill(with_decider(services, decider), kept(exchange))

    fact, tail = out.line.rsplit(" (", 1)
    assert fact == " ".join(likely)
    assert re.fullmatch(rf"incident \d{{4}}-\d\d-\d\d {exchange_id(exchange)}\)", tail)
    # the user's question is never the fact: its clauses are not even asked about
    assert [q.instructions["origin"] for q in decider.asked("fact")] == ["assistant", "assistant", "assistant"]


def test_distill_never_takes_the_users_question_but_takes_what_they_state(services, scripted):
    exchange = Exchange("I'm going to send the whole price list with all 9000 rows in one request, any problem? "
                        "We run on the small plan since May.",
                        "Yes: the gateway rejects bodies over 6 MB, so the import now sends 1000 rows per request.")
    decider = scripted(fact=lambda clause, origin: 0.95 if origin == "user" else 0.6)

    out = distill(with_decider(services, decider), kept(exchange, Category.CONSTRAINT))

    asked = [q.instructions["item"] for q in decider.asked("fact")]
    assert not any("9000 rows" in clause for clause in asked)
    assert "We run on the small plan since May." in asked
    assert "the gateway rejects bodies over 6 MB" in out.line


def test_an_incidents_line_holds_its_cause_and_its_fix(services, scripted):
    exchange = Exchange("logins fail every morning",
                        "The session table filled the 10 GB disk because expired rows were never deleted. "
                        "Checked the other tables too, they are small. "
                        "A nightly job now deletes sessions older than 30 days.")
    cause = "The session table filled the 10 GB disk because expired rows were never deleted."
    decider = scripted(fact=lambda clause, origin: 0.9 if clause == cause else 0.2)  # only the cause is likely

    out = distill(with_decider(services, decider), kept(exchange, Category.INCIDENT))

    assert out.line.startswith(f"{cause} A nightly job now deletes sessions older than 30 days. (incident ")


def test_novel_drops_a_line_that_restates_the_reminder_memory_gave_this_session(services, scripted):
    reminder = ("We use Postgres advisory locks instead of Redis locks, because a lock must die with its "
                "connection. (decision 2026-11-20 ex-0a1b2c3d)")
    write_notes(services, f"{CADDY}\n{reminder}\n")
    services.session_log.record("s7", ["ex-0a1b2c3d"])  # recall gave the stored fact by its pointer
    line = ("Advisory locks in Postgres, not Redis locks: the lock must die with the connection. "
            "(decision 2026-12-01 ex-99aa88bb)")
    decider = scripted(novel=lambda note, new: "differs")  # the decider sees nothing repeated

    out = novel(with_decider(services, decider), evolve(kept(Exchange("why not redis?", "...", "s7")), line=line))

    assert not out.keep and out.stopped_by == "novel: memory gave it this session (notes.md:2)"
    other = novel(with_decider(services, decider), evolve(kept(Exchange("why not redis?", "...", "s8")), line=line))
    assert other.keep is True and not other.stopped_by  # another session was not reminded: the decider decides


def test_novel_drops_a_line_the_notes_already_hold_and_writes_nothing(services, scripted):
    write_notes(services, f"{CADDY}\n{HTMX}\n")
    line = "Caddy over nginx: it renews TLS certificates on its own. (decision 2026-12-01 ex-0123abcd)"
    decider = scripted(novel=lambda note, new: "restates" if note == CADDY else "differs")

    out = novel(with_decider(services, decider), evolve(kept(INCIDENT), line=line))

    assert not out.keep and out.stopped_by == "novel: the notes already say it (line 1)"
    assert [q.instructions["item"] for q in decider.asked("novel")] == [CADDY]  # HTMX shares no word


@pytest.mark.parametrize(("old", "line", "verdict"), [
    # the new line changes the older one's fact: it supersedes it
    ("Caddy renews TLS certificates through the HTTP challenge on port 80.",
     "Caddy renews TLS certificates through the DNS challenge now: port 80 is closed. "
     "(decision 2026-12-01 ex-0123abcd)",
     "updates"),
    # the same fact, saying more (every named thing and figure of the older one, and others): its wording stays
    ("Uploads go straight to the Go API. (incident 2026-11-02 ex-22222222)",
     "Uploads go straight to the Go API: Vercel caps function bodies at 4.5 MB. (incident 2026-12-04 ex-55555555)",
     "restates"),
])
def test_novel_a_line_that_updates_or_says_more_takes_the_older_lines_place(services, scripted, old, line, verdict):
    write_notes(services, f"{HTMX}\n{old}\n{DISK}\n")
    decider = scripted(novel=lambda note, new: verdict if note == old else "differs")
    services = with_decider(services, decider)

    out = revise(services, append_notes(services, novel(services, evolve(kept(INCIDENT), line=line))))

    assert out.keep and out.edits[0] == Edit(2, "remove", old=old)
    assert services.notebook.lines() == [HTMX, DISK, line]


def test_novel_an_exchange_applying_what_a_note_says_is_not_kept_and_the_note_is_dated_today(services, scripted):
    old = ("Online keys live 36 hours: the materialization runs daily at 04:00 UTC, so one late run still finds "
           "them. (decision 2026-11-02 ex-33333333)")
    write_notes(services, f"{old}\n{CADDY}\n")
    services.notebook.add_keys({"ex-33333333": "ttl streak keys expire ONLINE_TTL_S settings.py redis slack retried"})
    exchange = Exchange("infra asks why our online keys expire after a day and a half",
                        "The 36 hours is deliberate: the materialization runs daily at 04:00 UTC, so a key survives "
                        "until the next run with 12 hours of slack for a late or retried run (ONLINE_TTL_S).", "s1")
    line = "The 36 hours keeps 12 hours of slack for a late run. (decision 2026-12-04 ex-44444444)"
    decider = scripted(novel=lambda note, new: "differs")  # the decider sees no restatement: the words do

    out = novel(with_decider(services, decider), evolve(kept(exchange, Category.DECISION), line=line))

    assert not out.keep and out.stopped_by.startswith("novel: the answer applies what the notes say (line 1)")
    today = time.strftime("%Y-%m-%d")
    refreshed = old.replace("2026-11-02", today)
    assert services.notebook.lines() == [CADDY, refreshed]  # moved last, dated today; no second line
    assert out.lines == (refreshed,) and out.edits == (Edit(1, "remove", old=old),)


def test_novel_the_tails_tag_words_and_dates_do_not_make_two_lines_alike(services, scripted):
    write_notes(services, "The build cache is capped at 20 GB. (decision 2026-12-01 ex-66666666)\n")
    line = "Payments go through Stripe's official v2 provider. (decision 2026-12-01 ex-77777777)"
    decider = scripted(novel=lambda note, new: "restates")  # would say so of any note it were shown

    out = novel(with_decider(services, decider), evolve(kept(INCIDENT, Category.DECISION), line=line))

    assert out.keep and decider.asked("novel") == []  # nothing shares the line's words: nothing to ask
