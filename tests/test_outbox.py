"""The outbox between retain and the long-term store: memsift/outbox.py."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from attrs import asdict
from hypothesis import strategies as st

from memsift.errors import ConfigurationError, DeadlineExceeded, ServiceUnavailable
from memsift._keeping.outbox import Outbox
from memsift.types import ConfirmingStore, Item, Store


def item(n: int | str, text: str | None = None) -> Item:
    return Item(id=f"i{n}", text=text or f"fact number {n}", origin="passage", source="notes.md")


class FakeStore:
    """A store in memory that follows the ``Store`` protocol, and can be made to fail."""

    name = "fake store"

    def __init__(self, fail_after: int | None = None, error: Exception | None = None) -> None:
        self.batches: list[list[Item]] = []
        self.fail_after = fail_after  # successful adds before it starts failing
        self.error = error or ServiceUnavailable("fake store is down")

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        return []

    def add(self, items: Sequence[Item], *, timeout: float) -> None:
        if self.fail_after is not None and len(self.batches) >= self.fail_after:
            raise self.error
        self.batches.append(list(items))

    @property
    def sent(self) -> list[Item]:
        return [sent for batch in self.batches for sent in batch]


def test_the_fake_follows_the_store_protocol():
    assert isinstance(FakeStore(), Store)


def test_a_drained_item_is_sent_once_and_no_longer_pending(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite"), FakeStore()
    outbox.put([item(1), item(2)])
    assert outbox.pending() == 2

    assert outbox.drain(store, timeout=5) == 2
    assert outbox.pending() == 0
    assert outbox.drain(store, timeout=5) == 0
    assert store.sent == [item(1), item(2)]


def test_putting_the_same_item_again_queues_nothing_even_after_it_was_sent(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite"), FakeStore()
    outbox.put([item(1)])
    outbox.put([item(1)])
    assert outbox.pending() == 1
    outbox.drain(store, timeout=5)

    outbox.put([item(1)])
    assert outbox.pending() == 0
    assert store.sent == [item(1)]


def test_an_item_whose_text_changed_is_sent_again_with_the_new_text(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite"), FakeStore()
    outbox.put([item(1, "old")])
    outbox.drain(store, timeout=5)

    outbox.put([item(1, "new")])
    assert outbox.pending() == 1
    outbox.drain(store, timeout=5)
    assert [sent.text for sent in store.sent] == ["old", "new"]


def test_an_item_changed_and_changed_back_before_a_drain_is_not_sent_again(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite"), FakeStore()
    outbox.put([item(1, "a")])
    outbox.drain(store, timeout=5)

    outbox.put([item(1, "b")])
    outbox.put([item(1, "a")])
    assert outbox.pending() == 0
    assert outbox.drain(store, timeout=5) == 0


def test_items_go_oldest_first_in_batches(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite", batch=2), FakeStore()
    for n in range(5):
        outbox.put([item(n)])

    assert outbox.drain(store, timeout=5) == 5
    assert [[sent.id for sent in batch] for batch in store.batches] == [
        ["i0", "i1"], ["i2", "i3"], ["i4"]]


def test_a_down_store_stops_the_drain_and_leaves_the_rest_pending(tmp_path):
    outbox = Outbox(tmp_path / "outbox.sqlite", batch=2)
    outbox.put([item(n) for n in range(5)])

    down = FakeStore(fail_after=1)
    with pytest.raises(ServiceUnavailable):  # raised, so the caller's breaker hears of it
        outbox.drain(down, timeout=5)
    assert [sent.id for sent in down.sent] == ["i0", "i1"]
    assert outbox.pending() == 3

    later = FakeStore()
    assert outbox.drain(later, timeout=5) == 3
    assert [sent.id for sent in later.sent] == ["i2", "i3", "i4"]


def test_a_store_past_its_deadline_leaves_the_items_pending(tmp_path):
    outbox = Outbox(tmp_path / "outbox.sqlite")
    outbox.put([item(1)])

    with pytest.raises(DeadlineExceeded):
        outbox.drain(FakeStore(fail_after=0, error=DeadlineExceeded("slow")), timeout=5)
    assert outbox.pending() == 1


def test_a_refusal_is_raised_and_the_items_wait_for_a_fixed_configuration(tmp_path):
    outbox = Outbox(tmp_path / "outbox.sqlite")
    outbox.put([item(1)])

    with pytest.raises(ConfigurationError):
        outbox.drain(FakeStore(fail_after=0, error=ConfigurationError("bad key")), timeout=5)
    assert outbox.pending() == 1
    assert outbox.drain(FakeStore(), timeout=5) == 1  # the claim was released


def test_the_drain_stops_when_its_time_is_up(tmp_path):
    now = [1000.0]
    outbox = Outbox(tmp_path / "outbox.sqlite", batch=1, clock=lambda: now[0])
    outbox.put([item(n) for n in range(5)])

    class SlowStore(FakeStore):
        def add(self, items, *, timeout):
            assert timeout > 0  # the store gets what is left of the drain's time
            now[0] += 4
            super().add(items, timeout=timeout)

    assert outbox.drain(SlowStore(), timeout=10) == 3
    assert outbox.pending() == 2


def test_an_item_changed_while_it_was_being_sent_is_sent_again_with_the_new_text(tmp_path):
    outbox = Outbox(tmp_path / "outbox.sqlite")
    outbox.put([item(1, "old")])

    class StoreThatSeesAnEdit(FakeStore):
        def add(self, items, *, timeout):
            super().add(items, timeout=timeout)
            if len(self.batches) == 1:  # another hook edits the item meanwhile
                Outbox(tmp_path / "outbox.sqlite").put([item(1, "new")])

    store = StoreThatSeesAnEdit()
    assert outbox.drain(store, timeout=5) == 1  # the old text's send does not count as the new one's
    assert [sent.text for sent in store.sent] == ["old", "new"]
    assert outbox.pending() == 0


def _drain_and_hang(path: Path, marker: Path) -> None:
    class HangingStore(FakeStore):
        def add(self, items, *, timeout):
            marker.touch()
            time.sleep(3600)

    Outbox(path).drain(HangingStore(), timeout=0.5)


def test_a_claim_left_by_a_killed_process_expires_with_its_lease(tmp_path):
    path, marker = tmp_path / "outbox.sqlite", tmp_path / "sending"
    Outbox(path).put([item(1)])
    doomed = multiprocessing.get_context("spawn").Process(target=_drain_and_hang,
                                                          args=(path, marker))
    doomed.start()
    while not marker.exists():
        time.sleep(0.05)
    doomed.kill()  # mid-send: it releases nothing
    doomed.join()

    other = Outbox(path)
    assert other.drain(FakeStore(), timeout=5) == 0  # still claimed by the dead drain
    give_up = time.time() + 30
    while other.drain(FakeStore(), timeout=5) == 0:
        assert time.time() < give_up, "the claim never expired"
        time.sleep(0.5)
    assert other.pending() == 0


def test_an_outbox_can_be_drained_from_another_thread(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite"), FakeStore()
    outbox.put([item(1)])  # the pipeline puts in its own thread, then drains in a worker

    worker = threading.Thread(target=lambda: outbox.drain(store, timeout=5))
    worker.start()
    worker.join()
    assert store.sent == [item(1)] and outbox.pending() == 0


def test_items_keep_every_field_on_the_way_through(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite"), FakeStore()
    original = Item(id="notes.md:7", text="Use uv — not pip", origin="note", source="notes.md:7",
                    score=0.75)
    outbox.put([original])
    outbox.drain(store, timeout=5)
    assert store.sent == [original]


def _drain_into(path: Path, log: Path, start_at: float) -> None:
    """One process's drain; the store writes each id it receives to *log*."""

    class LoggingStore(FakeStore):
        def add(self, items, *, timeout):
            time.sleep(0.02)  # long enough for the other drain to run meanwhile
            with open(log, "a") as out:
                out.writelines(f"{sent.id}\n" for sent in items)

    time.sleep(max(0.0, start_at - time.time()))  # start together
    Outbox(path, batch=3).drain(LoggingStore(), timeout=30)


def test_two_processes_draining_at_once_send_each_item_once(tmp_path):
    path = tmp_path / "outbox.sqlite"
    Outbox(path).put([item(n) for n in range(60)])
    context = multiprocessing.get_context("spawn")
    start_at = time.time() + 1.0
    workers = [context.Process(target=_drain_into, args=(path, tmp_path / f"log{n}", start_at))
               for n in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0

    received = [line for n in range(2) if (tmp_path / f"log{n}").exists()
                for line in (tmp_path / f"log{n}").read_text().split()]
    assert sorted(received) == sorted(f"i{n}" for n in range(60))
    assert all((tmp_path / f"log{n}").exists() for n in range(2))  # both did take part
    assert Outbox(path).pending() == 0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(
    st.tuples(st.just("put"), st.lists(st.tuples(st.integers(0, 5), st.sampled_from("abc")),
                                       max_size=4)),
    st.tuples(st.just("drain"), st.one_of(st.none(), st.integers(0, 2))),
), max_size=25))
def test_every_latest_text_arrives_and_none_is_sent_twice(tmp_path_factory, steps):
    """Whatever the puts and however the store fails, once it answers again each
    item arrives with its latest text, and no successful send is repeated."""
    outbox = Outbox(tmp_path_factory.mktemp("home") / "outbox.sqlite", batch=2)
    latest: dict[str, str] = {}
    delivered: list[tuple[str, str]] = []
    for operation, argument in steps:
        if operation == "put":
            outbox.put([item(n, text) for n, text in argument])
            latest.update({f"i{n}": text for n, text in argument})
        else:
            store = FakeStore(fail_after=argument)
            with contextlib.suppress(ServiceUnavailable):  # the rest waits for a later drain
                outbox.drain(store, timeout=5)
            delivered += [(sent.id, sent.text) for sent in store.sent]
    final = FakeStore()
    outbox.drain(final, timeout=5)
    delivered += [(sent.id, sent.text) for sent in final.sent]

    assert outbox.pending() == 0
    assert dict(delivered) == latest  # the last send of each is its latest text
    assert _resent_only_after_a_change(delivered)


def _resent_only_after_a_change(delivered: list[tuple[str, str]]) -> bool:
    """An (id, text) may come twice only if another text for that id came in between."""
    last: dict[str, str] = {}
    for key, text in delivered:
        if last.get(key) == text:
            return False
        last[key] = text
    return True


# -- delivered means gone ---------------------------------------------------------------

def test_a_delivered_item_s_text_is_gone_from_the_outbox_files(tmp_path):
    path = tmp_path / "outbox.sqlite"
    outbox, store = Outbox(path), FakeStore()
    outbox.put([item(n, f"the exporter keeps its token in vault path secret/export-{n}") for n in range(30)])

    assert outbox.drain(store, timeout=5) == 30

    files = list(tmp_path.glob("outbox.sqlite*"))  # the database, its write-ahead log, its index
    assert files and not any(b"secret/export-" in f.read_bytes() for f in files)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM outbox WHERE item != ''").fetchone()[0] == 0
    outbox.put([item(0, "the exporter keeps its token in vault path secret/export-0")])
    assert outbox.pending() == 0  # what the store took is not queued again


def test_an_outbox_of_an_earlier_release_drops_what_was_delivered_and_keeps_what_waits(tmp_path):
    path = tmp_path / "outbox.sqlite"
    delivered, waiting = json.dumps(asdict(item(1, "sent long ago"))), json.dumps(asdict(item(2)))
    with sqlite3.connect(path) as db:  # the schema before delivered rows lost their text
        db.execute("CREATE TABLE outbox (id TEXT PRIMARY KEY, item TEXT NOT NULL, sent TEXT, "
                   "queued_at REAL NOT NULL, sent_at REAL, claim TEXT, claimed_until REAL NOT NULL DEFAULT 0, "
                   "parked TEXT)")
        db.executemany("INSERT INTO outbox (id, item, sent, queued_at) VALUES (?, ?, ?, 1)",
                       [("i1", delivered, delivered), ("i2", waiting, None)])
    outbox, store = Outbox(path), FakeStore()

    assert outbox.pending() == 1
    outbox.put([item(1, "sent long ago")])
    assert outbox.drain(store, timeout=5) == 1 and store.sent == [item(2)]
    outbox.close()
    assert b"sent long ago" not in path.read_bytes()


# -- a late answer, an abandoned drain ---------------------------------------------------

class ConfirmingFake(FakeStore):
    """A FakeStore that can say what it holds (``ConfirmingStore``), and can lose its answers:
    with ``lose_answers`` it keeps what it is sent, then raises as a timeout would."""

    def __init__(self, lose_answers: int = 0, hang: threading.Event | None = None) -> None:
        super().__init__()
        self.lose_answers = lose_answers
        self.hang = hang  # set: the answer never comes (the caller gave up on it)

    def add(self, items, *, timeout):
        super().add(items, timeout=timeout)
        if self.hang is not None:
            self.hang.wait()
        if self.lose_answers:
            self.lose_answers -= 1
            raise DeadlineExceeded("the answer came too late")

    def held(self, items, *, timeout):
        stored = {(sent.id, sent.text) for sent in self.sent}
        return {one.id for one in items if (one.id, one.text) in stored}


def test_the_confirming_fake_follows_the_protocol():
    assert isinstance(ConfirmingFake(), ConfirmingStore) and not isinstance(FakeStore(), ConfirmingStore)


def test_a_batch_whose_answer_came_late_is_not_sent_again(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite"), ConfirmingFake(lose_answers=1)
    outbox.put([item(1), item(2)])

    with pytest.raises(DeadlineExceeded):
        outbox.drain(store, timeout=5)
    assert outbox.pending() == 2  # memsift cannot know it arrived ...

    assert outbox.drain(store, timeout=5) == 2  # ... so it asks, and sends nothing twice
    assert store.sent == [item(1), item(2)] and outbox.pending() == 0


def test_what_a_late_answer_did_not_store_is_sent_again(tmp_path):
    outbox = Outbox(tmp_path / "outbox.sqlite")
    outbox.put([item(1), item(2)])
    with pytest.raises(ServiceUnavailable):
        outbox.drain(FakeStore(fail_after=0), timeout=5)  # refused: nothing arrived

    store = ConfirmingFake()
    assert outbox.drain(store, timeout=5) == 2 and store.sent == [item(1), item(2)]


def test_a_store_that_cannot_tell_is_sent_it_again_as_its_contract_allows(tmp_path):
    outbox = Outbox(tmp_path / "outbox.sqlite")
    outbox.put([item(1)])
    with pytest.raises(DeadlineExceeded):
        outbox.drain(FakeStore(fail_after=0, error=DeadlineExceeded("late")), timeout=5)

    store = FakeStore()  # no ``held``: its add is idempotent per item id
    assert outbox.drain(store, timeout=5) == 1 and store.sent == [item(1)]


def test_a_drain_abandoned_at_its_deadline_holds_its_items_no_longer(tmp_path):
    now = [1000.0]
    path = tmp_path / "outbox.sqlite"
    Outbox(path).put([item(1)])
    never = threading.Event()
    store = ConfirmingFake(hang=never)  # it stores the item, and its answer never comes
    abandoned = threading.Thread(target=Outbox(path, clock=lambda: now[0]).drain, args=(store,),
                                 kwargs={"timeout": 10}, daemon=True)
    abandoned.start()  # as a hook gives up on it at its deadline and its process exits
    while not store.sent:
        time.sleep(0.01)

    other = Outbox(path, clock=lambda: now[0])
    now[0] = 1009.9
    assert other.drain(store, timeout=5) == 0  # still its claim, before its deadline
    now[0] = 1010.01
    assert other.drain(store, timeout=5) == 1  # at its deadline: free, and found already stored
    assert store.sent == [item(1)] and other.pending() == 0
    never.set()
