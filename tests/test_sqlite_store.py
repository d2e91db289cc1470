"""The embedded store: memsift/stores/sqlite.py, on a real SQLite file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsift.stores.sqlite import SQLiteStore
from memsift.types import Item, Store

REPO = Path(__file__).resolve().parent.parent

PASSAGES = [
    Item("a1", "The payment service retries webhooks three times before giving up.", "passage", "archive"),
    Item("a2", "The payment service logs every request to the audit table.", "passage", "archive"),
    Item("a3", "Kafka consumer lag on the payment service was fixed by raising max.poll.records.",
         "passage", "archive"),
    Item("a4", "The search service caches results for the payment service dashboard.", "passage", "archive"),
]


@pytest.fixture
def store(tmp_path):
    store = SQLiteStore(tmp_path / "store.sqlite")
    yield store
    store.close()


def rows(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM passages").fetchone()[0]


def test_the_sqlite_store_is_a_store(store):
    assert isinstance(store, Store)


def test_add_is_idempotent_per_id(store):
    store.add(PASSAGES, timeout=1)
    store.add(PASSAGES, timeout=1)
    store.add([Item("a1", "A different text under the same id: webhooks retried.", "passage", "elsewhere")],
              timeout=1)

    found = store.search("webhooks retried", limit=10, timeout=1)

    assert [item.id for item in found] == ["a1"]
    assert found[0].text == PASSAGES[0].text and found[0].source == "archive"
    assert rows(store.path) == len(PASSAGES)


def test_search_ranks_the_passage_sharing_the_rare_word_first(store):
    store.add(PASSAGES, timeout=1)

    found = store.search("why is the kafka lag on the payment service back?", limit=10, timeout=1)

    assert found[0].id == "a3"
    assert {item.id for item in found} == {"a1", "a2", "a3", "a4"}  # all share "payment service"
    assert [item.score for item in found] == sorted((item.score for item in found), reverse=True)
    assert found[0].score > found[1].score > 0


def test_search_returns_at_most_limit_passages(store):
    store.add(PASSAGES, timeout=1)

    assert len(store.search("payment service", limit=2, timeout=1)) == 2


def test_search_meets_a_word_in_another_form(store):
    store.add(PASSAGES, timeout=1)

    assert [item.id for item in store.search("retrying webhook", limit=5, timeout=1)] == ["a1"]


def test_search_with_no_shared_word_returns_nothing(store):
    store.add(PASSAGES, timeout=1)

    assert store.search("terraform state lock", limit=5, timeout=1) == []


@pytest.mark.parametrize("query", ["", "   ", "why did we?", "ok thanks", "?!"])
def test_a_query_with_no_content_word_returns_nothing(store, query):
    store.add(PASSAGES, timeout=1)

    assert store.search(query, limit=5, timeout=1) == []


@pytest.mark.parametrize("query", [
    "payment NOT kafka",
    "payment AND OR NOT",
    "pay* service*",
    '"payment service" "unterminated',
    "text: payment",
    "passages_fts:payment id:a1",
    "NEAR(payment service, 2)",
    "payment - service + (kafka",
    "^payment {text} [x] col:*",
    "it's \"quoted\" 'single' `back`",
    "c++ node_args v2.1 max-old-space /usr/lib",
])
def test_fts5_syntax_in_a_query_is_only_text(store, query):
    store.add(PASSAGES, timeout=1)

    found = store.search(query, limit=5, timeout=1)

    assert isinstance(found, list) and all(isinstance(item, Item) for item in found)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=60))
def test_no_query_text_makes_search_raise(store, query):
    store.add(PASSAGES[:1], timeout=1)

    found = store.search(query, limit=5, timeout=1)

    assert len(found) <= 5


def test_the_passages_outlive_the_connection(tmp_path):
    first = SQLiteStore(tmp_path / "store.sqlite")
    first.add(PASSAGES, timeout=1)
    first.close()

    again = SQLiteStore(tmp_path / "store.sqlite")
    try:
        assert [item.id for item in again.search("kafka lag", limit=5, timeout=1)] == ["a3"]
    finally:
        again.close()


def test_a_store_opened_but_never_used_creates_no_file(tmp_path):
    SQLiteStore(tmp_path / "nested" / "store.sqlite").close()

    assert not (tmp_path / "nested").exists()


CLOSE_UNDER_SEARCH = """
import sys, threading, time
from pathlib import Path
from memsift.stores.sqlite import SQLiteStore
from memsift.types import Item

store = SQLiteStore(Path(sys.argv[1]))
store.add([Item(f"a{i}", f"celery broker worker heap memory invoice {i}", "passage", "x")
           for i in range(2000)], timeout=5)

def searches():  # a search abandoned past its deadline, still running in its thread
    for _ in range(100_000):
        try:
            store.search("celery broker worker heap memory", limit=5, timeout=5)
        except Exception:
            return

threading.Thread(target=searches, daemon=True).start()
time.sleep(0.2)
store.close()
time.sleep(0.2)
print("survived")
"""


def test_closing_the_store_while_an_abandoned_search_runs_does_not_crash(tmp_path):
    # Without a lock around the shared connection this crashed the interpreter (SIGSEGV) every time.
    done = subprocess.run([sys.executable, "-c", CLOSE_UNDER_SEARCH, str(tmp_path / "store.sqlite")],
                          cwd=REPO, capture_output=True, text=True, timeout=60)

    assert done.returncode == 0, done.stderr[-500:]
    assert done.stdout.strip() == "survived"


def test_a_store_written_before_passages_had_their_exchange_keeps_its_rows_and_takes_new_ones(tmp_path):
    path = tmp_path / "store.sqlite"
    old = sqlite3.connect(path)  # the schema of a store written before the exchange column
    old.executescript("""
        CREATE TABLE passages (id TEXT PRIMARY KEY, text TEXT NOT NULL, source TEXT NOT NULL);
        CREATE VIRTUAL TABLE passages_fts USING fts5(text, content='passages', content_rowid='rowid',
                                                     tokenize='porter unicode61');
        CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
            INSERT INTO passages_fts(rowid, text) VALUES (new.rowid, new.text);
        END;
        INSERT INTO passages (id, text, source) VALUES ('ex-old', 'the worker heap is capped at 1536 MB', 'memsift:x');
    """)
    old.close()
    store = SQLiteStore(path)

    store.add([Item("ex-new", "the worker queue holds 500 jobs", "passage", "memsift:y", exchange="q\n\na")],
              timeout=1)

    assert sorted((i.id, i.exchange) for i in store.search("worker", limit=5, timeout=1)) == \
        [("ex-new", "q\n\na"), ("ex-old", "")]
    assert store.get("ex-old") == Item("ex-old", "the worker heap is capped at 1536 MB", "passage", "memsift:x")
    assert store.get("ex-missing") is None
    store.close()
