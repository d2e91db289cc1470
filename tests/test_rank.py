"""Ranking memory as a search engine does (BM25 over each fact and its keys), and the keys retain
writes: the words of the exchange a fact was kept from."""

from __future__ import annotations

import json

from attrs import evolve

from memsift.notes import NotesFile, exchange_id
from memsift.stages import append_notes
from memsift.stages._rank import KEYS, holding, keys_for, ranked
from memsift.stages.path import Keep
from memsift.types import Category, Exchange, Item


def note(text: str, n: int) -> Item:
    return Item(f"note-{n}", text, "note", f"notes.md:{n}")


LOCK = note("The job lock is a Postgres advisory lock. (constraint 2026-11-02 ex-11111111)", 1)
UPLOADS = note("Uploads go from the browser straight to the Go API. (incident 2026-11-02 ex-22222222)", 2)
STRIPE = note("Payments: Stripe over Mollie, Mollie's webhooks dropped events.", 3)


def test_the_item_sharing_the_rarest_words_ranks_first_and_strangers_are_left_out():
    found = ranked("why Stripe and not Mollie for the payments?", [LOCK, UPLOADS, STRIPE], {})

    assert [item.id for item in found] == ["note-3"]
    assert found[0].score > 0


def test_a_fact_is_ranked_by_its_keys_too():
    keys = {"ex-22222222": "photo import fails 413 vercel caps function bodies 4.5 mb"}

    without = ranked("organizers want a photo per shift, phone pics are 12 mb", [LOCK, UPLOADS, STRIPE], {})
    with_keys = ranked("organizers want a photo per shift, phone pics are 12 mb", [LOCK, UPLOADS, STRIPE], keys)

    assert without == [] and [item.id for item in with_keys] == ["note-2"]


def test_a_word_the_fact_says_outweighs_the_same_word_in_another_fact_s_keys():
    """A line a person wrote has no keys: it must not lose to a line whose exchange merely said the word."""
    said = note("Nightly import takes a redlock lease. (decision 2026-11-02 ex-33333333)", 1)
    around = note("Nightly import takes a cron lease. (decision 2026-11-03 ex-44444444)", 2)  # newer, alike
    keys = {"ex-33333333": "cron", "ex-44444444": "redlock"}

    assert [item.id for item in ranked("is the redlock lease safe?", [said, around], keys)] == ["note-1", "note-2"]


def test_of_two_alike_the_newer_ranks_first():
    older, newer = note("The export uses batches of 500.", 1), note("The export uses batches of 500.", 2)

    assert [item.id for item in ranked("export batches?", [older, newer], {})] == ["note-2", "note-1"]


def test_keys_are_the_exchanges_words_the_line_does_not_hold_the_users_first():
    keys = keys_for("Uploads go straight to the API.", "photo upload fails: 413 from vercel",
                    "Vercel caps function bodies at 4.5 MB, so uploads now go to the API.")

    assert keys.split() == ["photo", "fails", "413", "vercel", "caps", "function", "bodies", "4.5", "mb"]


def test_keys_are_bounded():
    answer = " ".join(f"word{n}x" for n in range(500))

    assert len(keys_for("a line", "", answer).split()) == KEYS


def test_holding_weighs_an_answers_rare_words_held_by_one_fact():
    keys = {"ex-11111111": "redlock redis cluster failover persistence leases"}
    answer = "No: Redlock needs a Redis cluster with persistence, and ours drops leases on failover."

    held = holding(answer, [LOCK, UPLOADS, STRIPE], keys)

    (share, shared, item), *rest = held
    assert item is LOCK and shared >= 5 and share > 0.5
    assert all(other < share for other, _, _ in rest)


def test_append_notes_writes_the_facts_keys_before_its_line(services):
    exchange = Exchange("csv import fails in prod: 413",
                        "Vercel caps function bodies at 4.5 MB; uploads go to the API.")
    line = f"Uploads go to the API. (incident 2026-12-01 {exchange_id(exchange)})"

    append_notes(services, Keep(exchange=exchange, keep=True, category=Category.INCIDENT, line=line))

    notebook = services.notebook
    assert notebook.lines() == [line]
    assert notebook.keys() == {exchange_id(exchange): keys_for(line, exchange.user, exchange.assistant)}
    assert json.loads(notebook.keys_path.read_text(encoding="utf-8")) == notebook.keys()
    assert oct(notebook.keys_path.stat().st_mode & 0o777) == "0o600"


def test_a_torn_keys_line_is_skipped(tmp_path):
    notebook = NotesFile(tmp_path / "notes.md")
    notebook.add_keys({"ex-1": "one"})
    with notebook.keys_path.open("a", encoding="utf-8") as out:
        out.write('{"ex-2": "tw')  # a write cut short
    notebook.add_keys({"ex-3": "three"})

    assert notebook.keys() == {"ex-1": "one", "ex-3": "three"}


def test_a_notebook_without_keys_is_ranked_by_its_lines_alone(services, scripted):
    from memsift.stages import notes
    from memsift.stages.path import Sift
    from memsift.types import Kind, Message

    class PlainNotes:  # a notebook of one's own: the Notebook protocol and nothing more
        def __init__(self, inner: NotesFile) -> None:
            self.inner = inner

        def lines(self) -> list[str]:
            return self.inner.lines()

        def items(self) -> list[Item]:
            return self.inner.items()

        def candidates(self, query: str, *, limit: int, above: int) -> list[Item]:
            return self.inner.candidates(query, limit=limit, above=above)

        def append(self, lines) -> None:
            self.inner.append(lines)

        def apply(self, edits):
            return self.inner.apply(edits)

    services.notebook.append([LOCK.text, STRIPE.text])
    decider = scripted(answers=lambda item, origin: 0.0)
    plain = evolve(services, notebook=PlainNotes(services.notebook), decider=decider)

    notes(plain, Sift(message=Message("why Stripe over Mollie?"), kind=Kind.PAST_CHOICE))

    assert [q.instructions["item"] for q in decider.asked("answers")] == [STRIPE.text]
