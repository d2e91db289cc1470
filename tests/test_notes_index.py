"""Notes narrowed before judging: memsift/notes_index.py and NotesFile.candidates."""

from __future__ import annotations

import os
import sqlite3
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsift._notes import index as notes_index
from memsift._notes.lines import split_lines
from memsift.notes import NotesFile
from memsift._notes.index import NotesIndex
from memsift.types import Edit

ANSWER = "Payments: Stripe over Mollie because Mollie's webhooks dropped events under load."
FILLER = [f"decision: the worker{n} queue{n} uses batch size {n} for the nightly export" for n in range(40)]


def indexed(index: NotesIndex) -> dict[str, int]:
    """What the index holds: each line and the number it gives it (its full-text part checked
    against those lines: a word missing or left over raises)."""
    db = sqlite3.connect(index.path)
    try:
        db.execute("INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', 1)")
        return dict(db.execute("SELECT line, number FROM notes"))
    finally:
        db.close()


@pytest.fixture
def open_index():
    """``open_index(path)``: a NotesIndex closed when the test ends."""
    opened: list[NotesIndex] = []

    def open_(notes_path):
        opened.append(NotesIndex(notes_path))
        return opened[-1]

    yield open_
    for index in opened:
        index.close()


def first_numbers(notes: NotesFile) -> dict[str, int]:
    """What it should hold: each distinct note line of the file and its first line number."""
    out: dict[str, int] = {}
    for number, line in enumerate(notes.lines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            out.setdefault(line, number)
    return out


def test_a_small_notes_file_is_judged_whole_and_gets_no_index(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append([*FILLER[:5], ANSWER])

    found = notes.candidates("why Stripe over Mollie?", limit=2, above=6)

    assert found == notes.items()
    assert not NotesIndex(notes.path).exists()


def test_past_the_threshold_only_the_best_matches_are_judged_in_file_order(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append([*FILLER[:20], ANSWER, *FILLER[20:], "Stripe webhooks are signed; check the signature first"])

    found = notes.candidates("why did we pick Stripe over Mollie?", limit=2, above=10)

    by_text = {item.text: item for item in notes.items()}
    assert found == [by_text[ANSWER], by_text["Stripe webhooks are signed; check the signature first"]]
    assert found[0].source == "notes.md:21"
    assert NotesIndex(notes.path).exists()


def test_a_query_without_a_shared_word_or_any_content_word_finds_nothing(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(FILLER)

    assert notes.candidates("why Stripe over Mollie?", limit=5, above=0) == []
    assert notes.candidates("ok, thanks!", limit=5, above=0) == []


@pytest.mark.parametrize("query", ['"worker1" OR', "NOT queue3*", "worker2 NEAR(", "col:umn"])
def test_fts5_syntax_in_a_message_is_only_text(tmp_path, query):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(FILLER)

    found = notes.candidates(query, limit=5, above=0)

    assert all(item.text in FILLER for item in found)


def test_the_index_follows_appends_edits_and_hand_edits(tmp_path, open_index):
    notes = NotesFile(tmp_path / "notes.md")
    index = open_index(notes.path)
    notes.append(FILLER[:10])
    assert index.sync() == 10 and indexed(index) == first_numbers(notes)

    notes.append([ANSWER])  # appended: only the tail is read
    assert index.sync() == 11 and indexed(index) == first_numbers(notes)

    notes.apply([Edit(1, "remove", old=FILLER[0]), Edit(3, "replace", "Node 20 only", old=FILLER[2])])
    assert index.sync() == 10 and indexed(index) == first_numbers(notes)
    assert index.search("why Stripe over Mollie?", limit=5) == [(10, ANSWER)]

    # By hand, in place, keeping the size: only the mtime says so.
    text = notes.path.read_text(encoding="utf-8").replace("Node 20 only", "Node 22 only")
    with open(notes.path, "r+", encoding="utf-8") as file:
        file.write(text)
    os.utime(notes.path, ns=(1, 1))
    assert index.sync() == 10 and "Node 22 only" in indexed(index)


def test_a_write_in_the_same_clock_tick_and_of_the_same_size_is_still_seen(tmp_path, open_index):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(FILLER[:3])
    index = open_index(notes.path)
    index.sync()
    before = os.stat(notes.path)

    with open(notes.path, "r+", encoding="utf-8") as file:  # in place: the same inode and size
        file.write(notes.path.read_text(encoding="utf-8").replace("worker1 ", "worker9 "))
    os.utime(notes.path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same mtime

    assert index.sync() == 3 and indexed(index) == first_numbers(notes)


def test_once_there_is_an_index_whoever_writes_the_notes_keeps_it_in_step(tmp_path, open_index):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(FILLER)
    assert not NotesIndex(notes.path).exists()  # small notes: no index is made by writing
    notes.candidates("worker1", limit=5, above=0)
    index = open_index(notes.path)

    notes.append([ANSWER])
    notes.apply([Edit(1, "remove", old=FILLER[0])])

    assert indexed(index) == first_numbers(notes)  # without a sync of its own


def test_an_index_that_cannot_follow_never_fails_a_write(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    NotesIndex(notes.path).path.mkdir()  # not a file SQLite can open, nor delete

    notes.append([ANSWER])

    assert notes.lines() == [ANSWER]


def test_a_reader_that_read_the_file_before_a_writer_synced_never_records_the_older_file(
        tmp_path, open_index, monkeypatch):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(FILLER[:3])
    index = open_index(notes.path)
    index.sync()
    read_before = notes_index._read(notes.path)  # what a reader read, just before...
    notes.append([ANSWER])  # ...a retain wrote the notes and synced the index
    reads = iter([read_before])
    real_read = notes_index._read
    monkeypatch.setattr(notes_index, "_read", lambda path: next(reads, None) or real_read(path))

    index.sync()

    assert indexed(index) == first_numbers(notes) and ANSWER in indexed(index)


def test_a_notes_file_removed_leaves_an_empty_index(tmp_path, open_index):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(FILLER)
    index = open_index(notes.path)
    index.sync()

    notes.path.unlink()

    assert index.sync() == 0 and indexed(index) == {}
    assert notes.candidates("worker1 queue1", limit=5, above=0) == []


def test_an_index_that_is_not_one_is_built_anew(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append([*FILLER, ANSWER])
    NotesIndex(notes.path).path.write_bytes(b"not a database, something else entirely" * 100)

    found = notes.candidates("why Stripe over Mollie?", limit=3, above=0)

    assert [item.text for item in found] == [ANSWER]


def test_an_index_of_another_version_is_built_anew(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append([*FILLER, ANSWER])
    notes.candidates("worker1", limit=1, above=0)
    db = sqlite3.connect(NotesIndex(notes.path).path)
    db.execute("DELETE FROM notes")  # what a future layout would hold, as far as this one can tell
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()

    found = notes.candidates("why Stripe over Mollie?", limit=3, above=0)

    assert [item.text for item in found] == [ANSWER]


def test_a_symlinked_notes_file_keeps_its_index_beside_the_link(tmp_path):
    target = tmp_path / "repo" / "NOTES.md"
    target.parent.mkdir()
    target.write_text("\n".join([*FILLER, ANSWER]) + "\n", encoding="utf-8")
    link = tmp_path / "home" / "notes.md"
    link.parent.mkdir()
    link.symlink_to(target)

    found = NotesFile(link).candidates("Stripe over Mollie", limit=3, above=0)

    assert [item.source for item in found] == ["notes.md:41"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["NOTES.md"]


# A notes file's life: appends (retain), edits (the reviser), and a person's own edits.
line = st.sampled_from([*FILLER[:6], ANSWER, "# Payments", "", "  indented note  ", "dup", "dup ", "\x0cfeed"])
op = st.one_of(
    st.tuples(st.just("append"), st.lists(line, min_size=1, max_size=3)),
    st.tuples(st.just("edit"), st.integers(1, 12), st.sampled_from(["remove", "replace"]), line),
    st.tuples(st.just("hand"), st.lists(line, max_size=8)),
)


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(op, min_size=1, max_size=8))
def test_after_any_appends_and_edits_the_index_holds_the_files_lines_and_numbers(tmp_path_factory, ops):
    folder = tmp_path_factory.mktemp("notes")
    notes = NotesFile(folder / "notes.md")
    with NotesIndex(notes.path) as index:
        for step, (kind, *args) in enumerate(ops):
            if kind == "append":
                notes.append(args[0])
            elif kind == "edit":
                number, action, text = args
                lines = notes.lines()
                old = lines[number - 1] if number <= len(lines) else ""
                notes.apply([Edit(number, action, text, old=old)])
            else:
                notes.path.write_text("".join(f"{text}\n" for text in args[0]), encoding="utf-8")
            if notes.path.exists() and step % 2:  # half the time, as old as can be: only the stamp is read
                os.utime(notes.path, ns=(step, step))

            assert index.sync() == len(notes.lines())
            assert indexed(index) == first_numbers(notes)


def test_split_lines_is_how_the_notes_file_reads_lines(tmp_path):
    path = tmp_path / "notes.md"
    path.write_bytes(b"a\x0cb\nc\r\n\nlast")

    assert NotesFile(path).lines() == split_lines("a\x0cb\nc\r\n\nlast") == ["a\x0cb", "c\r", "", "last"]


def test_an_edit_in_place_long_after_the_index_keeping_size_and_mtime_is_seen(tmp_path, open_index, monkeypatch):
    """Not racy any more (as a file indexed long after its last write): the ctime still tells."""
    monkeypatch.setattr(notes_index, "RACY_NS", 0)
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(FILLER[:3])
    index = open_index(notes.path)
    index.sync()
    before = os.stat(notes.path)

    with open(notes.path, "r+", encoding="utf-8") as file:  # the same inode and size
        file.write(notes.path.read_text(encoding="utf-8").replace("worker1 ", "worker9 "))
    os.utime(notes.path, ns=(before.st_atime_ns, before.st_mtime_ns))  # the mtime set back, as `touch -r` does

    assert (os.stat(notes.path).st_size, os.stat(notes.path).st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert index.sync() == 3 and indexed(index) == first_numbers(notes)
    assert [text for _, text in index.search("worker9", limit=5)] == [FILLER[1].replace("worker1 ", "worker9 ")]


LONG_LINE = "why Stripe over Mollie payments " * 2_000  # 64,000 characters, every word of the question


@pytest.mark.parametrize("above", [300, 0], ids=["read whole", "narrowed"])
def test_a_line_past_the_note_cap_is_never_a_note_to_judge(tmp_path, above):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append([*FILLER[:5], LONG_LINE, ANSWER])

    found = notes.candidates("why Stripe over Mollie for payments?", limit=50, above=above)

    assert ANSWER in [item.text for item in found]
    assert all(len(item.text) <= len(ANSWER) for item in found)
    assert notes.lines()[5] == LONG_LINE.strip()  # the file keeps it, byte for byte
    assert all("Mollie payments why" not in item.text for item in notes.items())


def test_a_file_too_big_for_its_few_lines_is_read_through_the_index(tmp_path, monkeypatch):
    """Five lines and one of 5 MB: the message reads the index, which holds no long line."""
    monkeypatch.setattr(notes_index, "INLINE_BYTES", 10_000_000)  # indexed here, not by a detached process
    notes = NotesFile(tmp_path / "notes.md")
    notes.append([*FILLER[:5], "x" * 5_000_000, ANSWER])

    found = notes.candidates("why Stripe over Mollie?", limit=50, above=300)

    assert [item.text for item in found] == [*FILLER[:5], ANSWER]
    assert len(indexed(NotesIndex(notes.path))) == 6


def test_a_byte_that_is_not_utf8_in_a_narrowed_file_is_indexed_as_u_fffd(tmp_path):
    """Issue 17: one such byte in notes of more than 300 lines failed every retain's novel stage."""
    path = tmp_path / "notes.md"
    path.write_bytes(b"".join(f"{line}\n".encode() for line in FILLER[:10]) + b"decision: caf\xe9 Mollie au lait\n")

    found = NotesFile(path).candidates("Mollie", limit=5, above=3)

    assert [item.text for item in found] == ["decision: caf\ufffd Mollie au lait"]
    assert path.read_bytes().endswith(b"caf\xe9 Mollie au lait\n")  # the file is not rewritten


def test_a_word_in_most_lines_does_not_crowd_out_a_rare_one(tmp_path):
    """BM25 ranks every line that matches: past ``COMMON`` lines, a common word is left out."""
    lines = [f"incident: the worker{n} went over its heap" for n in range(notes_index.COMMON + 200)]
    notes = NotesFile(tmp_path / "notes.md")
    notes.append([*lines[:600], ANSWER, *lines[600:]])

    found = notes.candidates("why did the worker go over to Mollie?", limit=5, above=0)

    assert [item.text for item in found] == [ANSWER]


def test_a_big_file_changed_by_hand_is_indexed_by_a_detached_process(tmp_path, monkeypatch):
    """The message reads the index as it was and goes on; a process of its own brings it in step."""
    monkeypatch.setattr(notes_index, "INLINE_BYTES", 1_000)
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(FILLER)
    with NotesIndex(notes.path) as index:
        index.sync()  # as retain leaves it, once it wrote
    assert notes.candidates("worker1 queue1", limit=1, above=0)[0].text == FILLER[1]
    notes.path.write_text("\n".join([*FILLER, ANSWER]) + "\n", encoding="utf-8")  # an editor's save

    found = notes.candidates("why Stripe over Mollie?", limit=3, above=0)

    assert ANSWER not in [item.text for item in found]  # not yet: the index was read as it was
    index = NotesIndex(notes.path)
    try:
        for _ in range(600):  # the detached process, on a busy machine
            if ANSWER in indexed(index):
                break
            time.sleep(0.1)
        assert indexed(index) == first_numbers(notes)
    finally:
        index.close()
    assert [item.text for item in notes.candidates("why Stripe over Mollie?", limit=3, above=0)] == [ANSWER]


RACE = """
import sys, threading
from pathlib import Path
from memsift.notes import NotesFile

failures = []

def narrow_and_write(notes, worker):
    try:
        for turn in range(5):
            notes.candidates(f"why redis lock {worker}", limit=5, above=0)
            notes.append([f"Line {worker} about redis locks and postgres {turn}. "
                          f"(decision 2026-12-04 ex-{worker:04d}{turn:04d})"])
    except BaseException as error:
        failures.append(repr(error))

for trial in range(30):
    path = Path(sys.argv[1]) / f"project{trial}" / "notes.md"
    NotesFile(path).append(["The job lock is a Postgres advisory lock. (decision 2026-12-01 ex-11111111)"])
    threads = [threading.Thread(target=narrow_and_write, args=(NotesFile(path), worker)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
print(failures or "whole")
"""


def test_threads_narrowing_and_writing_one_new_notes_file_at_once_leave_its_index_whole(tmp_path):
    """Two connections making the index at once, or one setting aside what another was making, left
    it malformed ("database disk image is malformed" in a retain), or crashed the process on a bus
    error (SQLite's shared memory of a file set aside): a process of its own, so a crash fails the test."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", RACE, str(tmp_path)], capture_output=True, text=True, timeout=300)

    assert done.returncode == 0 and done.stdout.strip() == "whole", (done.returncode, done.stdout, done.stderr)
    for trial in range(30):
        with NotesIndex(tmp_path / f"project{trial}" / "notes.md") as index:
            index.sync()
            assert len(indexed(index)) == 1 + 8 * 5
