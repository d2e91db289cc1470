"""Every file memsift owns is read defensively, and memory is never off in silence (issue 11).

Through the real embedded stack: ``guarded_recall`` and ``guarded_retain`` open
the services the settings name in a private home, as the hooks do.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import stat
from pathlib import Path

import pytest
from attrs import evolve
from guarded import guarded_recall, guarded_retain

from memsift.config import load_config
from memsift._fs.files import NotRegularFile, read_regular
from memsift._runtime.health import Health, public_name
from memsift.notes import NotesFile
from memsift._keeping.outbox import Outbox
from memsift.pipeline import recall, retain
from memsift.redact import redact
from memsift.services import SessionLog, open_services
from memsift.types import Exchange, Item, Message

NOTE = ("decision: Payments: Stripe over Mollie because Mollie's webhooks dropped events under load; "
        "Stripe has an official v2 provider.")
QUESTION = "why did we pick Stripe over Mollie for payments?"
INCIDENT = Exchange("The deploy failed again with ENOSPC no space left on device on the build runner",
                    "Fixed: the Docker build cache filled /var; added docker builder prune -af to the nightly "
                    "cron and capped the cache at 20 GB.", "s1")
MEMORY = Exchange("Why did the worker run out of memory at night?",
                  "The heap was unbounded; capped it at 1.5 GB with --max-old-space-size because the container "
                  "limit is 2 GB.", "s1")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    return folder


def folder_of(project: Path) -> Path:
    return load_config().project_dir(project)


def damaged(folder: Path, name: str) -> list[Path]:
    return sorted(folder.glob(f"{name}.damaged-*"))


def passages(project: Path) -> int:
    db = sqlite3.connect(folder_of(project) / "store.sqlite")
    try:
        return db.execute("SELECT count(*) FROM passages").fetchone()[0]
    finally:
        db.close()


# -- files that are not files --------------------------------------------------------

def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    with pytest.raises(NotRegularFile):
        read_regular(fifo)  # open() would block here for ever


# -- notes ----------------------------------------------------------------------------

def test_notes_with_bytes_that_are_not_utf8_are_read_and_kept_byte_for_byte(project):
    notes = folder_of(project) / "notes.md"
    notes.parent.mkdir(parents=True)
    latin1 = "decision: the caf\xe9 menu service: Caddy over nginx for automatic TLS.\n".encode("latin-1")
    notes.write_bytes(NOTE.encode() + b"\n" + latin1)

    asked = guarded_recall(Message(QUESTION, session="s1"), project)
    kept = guarded_retain(INCIDENT, project)

    assert "Stripe over Mollie" in asked.text
    assert kept.stopped_by == "done", kept.trace
    data = notes.read_bytes()
    assert data.startswith(NOTE.encode() + b"\n" + latin1)  # the byte 0xe9 is still there, as it was
    assert "caf\ufffd menu" in NotesFile(notes).items()[1].text  # and reads as U+FFFD, never a surrogate


# -- health.json ----------------------------------------------------------------------

@pytest.mark.parametrize("junk", [
    b'{"Cognee at http://127.0.0.1:9": {"open": "yes", "since": "x", "told": []}}',
    b'{"Cognee at http://127.0.0.1:9": {"open": true, "since": 1, "told": {"s": 3}}}',
    b"[1, 2, 3]",
    b"\xff\xfe junk",
])
def test_a_health_file_with_wrong_types_is_set_aside_and_said_once(memsift_home, project, junk):
    (memsift_home / "health.json").write_bytes(junk)

    first = guarded_recall(Message("thanks!", session="s1"), project)
    second = guarded_recall(Message("thanks!", session="s1"), project)

    [aside] = damaged(memsift_home, "health.json")
    assert aside.read_bytes() == junk  # set aside, never deleted
    assert first.notice == f"memory: health.json was damaged: set aside as {aside.name} and started afresh"
    assert second.notice is None
    assert json.loads((memsift_home / "health.json").read_text())  # rewritten, valid


# -- session log ------------------------------------------------------------------------

@pytest.mark.parametrize("junk", [b"7", b'{"a": 1}', b'[1, "x"]', b"\x00\x01"])
def test_a_session_log_of_junk_is_set_aside_and_the_session_starts_afresh(tmp_path, junk):
    told: list[tuple[Path, Path]] = []
    log = SessionLog(tmp_path, on_damage=lambda path, aside: told.append((path, aside)))
    (tmp_path / "s1.json").write_bytes(junk)

    assert log.given("s1") == set()
    log.record("s1", ["note-1"])

    assert log.given("s1") == {"note-1"}
    [(path, aside)] = told
    assert path == tmp_path / "s1.json" and aside.read_bytes() == junk


# -- the embedded store ------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["truncated", "junk"])
def test_a_damaged_store_is_set_aside_recreated_and_said_once(memsift_home, project, damage):
    guarded_retain(INCIDENT, project)
    store = folder_of(project) / "store.sqlite"
    original = store.read_bytes()
    store.write_bytes(original[:3000] if damage == "truncated" else b"not a database at all" * 100)

    again = guarded_retain(MEMORY, project)
    news = guarded_recall(Message("thanks!", session="s1"), project)

    [aside] = damaged(store.parent, "store.sqlite")
    assert again.stopped_by == "done", again.trace
    assert passages(project) == 1  # the new store took the new exchange
    assert news.notice == (f"memory: projects/{store.parent.name}/store.sqlite was damaged: "
                           f"set aside as {aside.name} and started afresh")


def test_an_exchange_kept_while_the_store_was_away_reaches_it_with_the_next_retain(project):
    guarded_retain(INCIDENT, project)
    store = folder_of(project) / "store.sqlite"
    store.rename(store.with_name("elsewhere"))
    store.mkdir()  # the store cannot be opened while the next exchange is kept
    kept = guarded_retain(MEMORY, project)
    store.rmdir()
    store.with_name("elsewhere").rename(store)

    dropped = guarded_retain(Exchange("thanks, perfect", "glad it works", "s1"), project)

    assert kept.keep and kept.stopped_by == "sync: embedded store unavailable"
    assert not dropped.keep  # not kept itself, yet it sent what was waiting
    assert [step.verdict for step in dropped.trace if step.stage == "catch_up"] == ["1 sent, 0 pending"]
    assert passages(project) == 2


# -- the outbox --------------------------------------------------------------------------

class ListStore:
    """A ``Store`` in a list; ``refuse`` names item ids it fails on, as a store that cannot take them."""

    name = "list store"

    def __init__(self, refuse: frozenset[str] = frozenset()) -> None:
        self.items: list[Item] = []
        self.refuse = refuse

    def search(self, query: str, *, limit: int, timeout: float) -> list[Item]:
        return []

    def add(self, items, *, timeout: float) -> None:
        if any(item.id in self.refuse for item in items):
            raise ValueError("cannot store this one")
        self.items += items


def queued(outbox: Outbox, count: int) -> list[Item]:
    items = [Item(f"a{i}", f"text {i}", "passage", "retain") for i in range(count)]
    outbox.put(items)
    return items


def test_an_outbox_row_that_cannot_be_decoded_is_parked_and_holds_nothing_back(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite"), ListStore()
    queued(outbox, 25)
    with sqlite3.connect(tmp_path / "outbox.sqlite") as db:
        db.execute("UPDATE outbox SET item = '{not json' WHERE id = 'a3'")

    sent = outbox.drain(store, timeout=5)

    assert sent == 24 and len(store.items) == 24 and outbox.pending() == 0
    assert list(outbox.parked()) == ["a3"] and "cannot be decoded" in outbox.parked()["a3"]
    assert outbox.drain(store, timeout=5) == 0  # parked: not tried again


def test_an_item_the_store_cannot_take_is_parked_and_the_rest_of_its_batch_goes(tmp_path):
    outbox, store = Outbox(tmp_path / "outbox.sqlite"), ListStore(refuse=frozenset({"a2"}))
    queued(outbox, 5)

    assert outbox.drain(store, timeout=5) == 4

    assert [item.id for item in store.items] == ["a0", "a1", "a3", "a4"]
    assert outbox.parked() == {"a2": "ValueError: cannot store this one"}


def test_a_damaged_outbox_is_set_aside_and_started_afresh(tmp_path):
    told: list[Path] = []
    path = tmp_path / "outbox.sqlite"
    path.write_bytes(b"junk" * 1000)
    outbox = Outbox(path, on_damage=lambda _, aside: told.append(aside))

    queued(outbox, 2)

    assert outbox.pending() == 2
    assert [aside.read_bytes() for aside in told] == [b"junk" * 1000]


def test_an_outbox_made_before_rows_could_be_parked_gets_the_column(tmp_path):
    path = tmp_path / "outbox.sqlite"
    with sqlite3.connect(path) as db:  # the schema of the first release
        db.execute("CREATE TABLE outbox (id TEXT PRIMARY KEY, item TEXT NOT NULL, sent TEXT, "
                   "queued_at REAL NOT NULL, sent_at REAL, claim TEXT, claimed_until REAL NOT NULL DEFAULT 0)")
        db.execute("INSERT INTO outbox (id, item, queued_at) VALUES ('old', ?, 1)",
                   (json.dumps({"id": "old", "text": "kept before", "origin": "passage", "source": "retain"}),))
    outbox, store = Outbox(path), ListStore()

    assert outbox.drain(store, timeout=5) == 1 and store.items[0].text == "kept before"


# -- off is never silent -------------------------------------------------------------------

def test_a_typo_in_the_settings_is_said_once_per_session_and_its_fix_too(memsift_home, project):
    settings = memsift_home / "config.toml"
    settings.write_text('store = "mongo"\n')

    first = guarded_recall(Message(QUESTION, session="s1"), project)
    again = guarded_recall(Message(QUESTION, session="s1"), project)
    other = guarded_recall(Message(QUESTION, session="s2"), project)
    kept = guarded_retain(INCIDENT, project)
    settings.write_text('store = "embedded"\n')
    fixed = guarded_recall(Message("thanks!", session="s1"), project)
    later = guarded_recall(Message("thanks!", session="s1"), project)

    assert first.notice == (f"memory off: memsift's settings: {settings}: store must be 'embedded' or 'cognee', "
                            "not 'mongo'; reminders are off")
    assert first.text == "" and again.notice is None and other.notice == first.notice
    assert not kept.keep and kept.stopped_by.startswith("settings: ")
    assert fixed.notice == "memory back on: memsift's settings works again; reminders are on"
    assert later.notice is None


def test_a_stage_that_fails_is_said_and_so_is_its_recovery(project):
    services = open_services(load_config(), project)
    services.notebook.append([NOTE])
    notes = services.notebook.path
    notes.rename(notes.with_name("kept"))
    notes.mkdir()  # the notes stage cannot read them

    broken = recall(Message(QUESTION, session="s1"), services)
    notes.rmdir()
    notes.with_name("kept").rename(notes)
    back = recall(Message(QUESTION, session="s1"), services)

    assert broken.stopped_by == "notes: failed: NotRegularFile"
    assert broken.notice.startswith("memory off: the notes stage: NotRegularFile: ")
    assert broken.notice.endswith("; reminders are off") and "\n" not in broken.notice
    assert back.notice == "memory back on: the notes stage works again; reminders are on"
    assert "Stripe over Mollie" in back.text


def test_a_redactor_that_cannot_be_hashed_still_redacts(project):
    @dataclasses.dataclass
    class PlainRedactor:  # eq=True and no frozen: not hashable, as a user's first try would be
        def redact(self, text: str) -> str:
            return redact(text)

    services = evolve(open_services(load_config(), project), redactor=PlainRedactor())
    services.notebook.append([NOTE])

    result = recall(Message(QUESTION + " token ghp_4fT9kQ2mZx8LwP1vR7bN3cY6dJ0sHaUeGiKo", session="s1"), services)

    assert "Stripe over Mollie" in result.text
    assert [step.verdict for step in result.trace if step.stage == "redact"] == ["redacted"]


# -- credentials and modes -------------------------------------------------------------------

def test_url_credentials_never_reach_a_notice(memsift_home, project):
    url = "http://admin:hunter2pw@127.0.0.1:9"  # nothing listens on port 9
    env = {**os.environ, "MEMSIFT_STORE": "cognee", "MEMSIFT_COGNEE_URL": url}

    result = guarded_recall(Message(QUESTION, session="s1"), project, env)

    assert result.notice is not None and result.notice.startswith("memory paused: Cognee at http://127.0.0.1:9 ")
    assert "hunter2pw" not in (memsift_home / "health.json").read_text()
    assert public_name(f"tried {url}/api and ftp://u:p@host") == "tried http://127.0.0.1:9/api and ftp://host"


def test_every_file_memsift_makes_is_its_owners_alone(memsift_home, project):
    guarded_retain(INCIDENT, project)
    NotesFile(folder_of(project) / "notes.md").append([f"decision: option {i} for the queue" for i in range(400)])
    guarded_recall(Message(QUESTION, session="s1"), project)  # past 300 notes: the notes index is made
    Health(memsift_home).broken("the test stage", "made to fail")

    made = list(memsift_home.rglob("*"))
    modes = {path.relative_to(memsift_home).as_posix(): stat.S_IMODE(path.stat().st_mode) for path in made}

    assert "projects" in modes and any(name.endswith("store.sqlite") for name in modes)
    assert any(name.endswith("notes.index.sqlite") for name in modes)
    assert {name: mode for name, mode in modes.items()
            if mode != (0o700 if (memsift_home / name).is_dir() else 0o600)} == {}


def test_a_lone_surrogate_in_a_payload_breaks_nothing(project):
    services = open_services(load_config(), project)
    services.notebook.append([NOTE])

    asked = recall(Message(QUESTION.replace("over", "\ud800 over"), session="s1"), services)
    kept = retain(evolve(INCIDENT, assistant=INCIDENT.assistant + " \udcff"), services)

    assert "Stripe over Mollie" in asked.text
    assert kept.stopped_by == "done" and [s for s in asked.trace + kept.trace if s.verdict == "error"] == []


@pytest.mark.parametrize("junk", [b'{"at": "x"}', b'{"at": 1, "seen": 5}', b'{"seen": [1, 2]}', b"[]", b"\xff"])
def test_a_model_revision_stamp_of_junk_reads_as_none(tmp_path, junk):
    from memsift.model_reviser import _read_stamp

    (tmp_path / "revised.json").write_bytes(junk)

    assert _read_stamp(tmp_path / "revised.json") == {}
