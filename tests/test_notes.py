"""The project's notes file: memsift/notes.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsift.notes import NotesFile, apply_edits, note_id, one_line
from memsift.types import Edit, Notebook

REPO = Path(__file__).resolve().parent.parent


def test_a_notes_file_is_a_notebook(tmp_path):
    assert isinstance(NotesFile(tmp_path / "notes.md"), Notebook)


def test_a_missing_file_has_no_lines_and_no_items(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")

    assert notes.lines() == [] and notes.items() == []


def test_append_writes_one_line_per_fact_folded_and_skips_blanks(tmp_path):
    notes = NotesFile(tmp_path / "sub" / "notes.md")

    notes.append(["Payments: Stripe over Mollie,\n  official v2 provider.", "   ", ""])
    notes.append(["Node 20 only on the VPS"])

    assert (tmp_path / "sub" / "notes.md").read_text(encoding="utf-8") == \
        "Payments: Stripe over Mollie, official v2 provider.\nNode 20 only on the VPS\n"


def test_append_nothing_leaves_the_file_untouched(tmp_path):
    path = tmp_path / "notes.md"
    notes = NotesFile(path)

    notes.append(["", "  \n "])

    assert not path.exists()


def test_items_skip_headings_and_blanks_and_point_to_their_line(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Payments\n\nStripe over Mollie.\n   # an indented heading\n  Node 20 only.  \n\t\n",
                    encoding="utf-8")

    items = NotesFile(path).items()

    assert [(i.text, i.source, i.origin) for i in items] == [
        ("Stripe over Mollie.", "notes.md:3", "note"),
        ("Node 20 only.", "notes.md:5", "note"),
    ]
    assert [i.id for i in items] == [note_id("Stripe over Mollie."), note_id("Node 20 only.")]


def test_ids_follow_the_text_and_survive_lines_moving(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(["first fact", "second fact", "third fact"])
    before = {i.text: (i.id, i.source) for i in notes.items()}

    notes.apply([Edit(1, "remove")])
    after = {i.text: (i.id, i.source) for i in notes.items()}

    assert after["second fact"] == (before["second fact"][0], "notes.md:1")
    assert after["third fact"] == (before["third fact"][0], "notes.md:2")
    assert before["second fact"][0] != before["third fact"][0]


def test_apply_replaces_and_removes_the_lines_named_and_ignores_lines_out_of_range(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Infra\n  odd  spacing\tkept  \nNode 18 on the VPS\nstale fact\nlast\n", encoding="utf-8")

    NotesFile(path).apply([Edit(3, "replace", "Node 20 on the VPS"), Edit(4, "remove"),
                           Edit(0, "remove"), Edit(6, "remove"), Edit(-1, "replace", "x")])

    assert path.read_text(encoding="utf-8") == "# Infra\n  odd  spacing\tkept  \nNode 20 on the VPS\nlast\n"


def test_apply_a_replace_with_a_blank_text_removes_the_line(tmp_path):
    assert apply_edits(["a", "b", "c"], [Edit(2, "replace", "  ")]) == ["a", "c"]


def test_apply_folds_a_replacement_onto_one_line(tmp_path):
    assert apply_edits(["a", "b"], [Edit(1, "replace", "new\nfact  here")]) == ["new fact here", "b"]


def test_the_docstring_example_holds():
    assert apply_edits(["a", "b", "c"], [Edit(2, "remove"), Edit(3, "replace", "C")]) == ["a", "C"]


def test_no_temporary_file_is_left_behind(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(["one"])
    notes.apply([Edit(1, "replace", "two")])

    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md", "notes.md.lock"]


# Lines a notes file holds: any text but a newline.
line = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30)
edit = st.builds(Edit, line=st.integers(-2, 12), action=st.sampled_from(["replace", "remove"]), text=line)


@settings(max_examples=200)
@given(lines=st.lists(line, max_size=10), edits=st.lists(edit, max_size=6))
def test_apply_edits_keeps_every_line_it_does_not_name_byte_for_byte(lines, edits):
    out = apply_edits(lines, edits)

    named = {e.line for e in edits if 1 <= e.line <= len(lines)}
    last = {e.line: e for e in edits}  # the last edit naming a line wins
    expected = []
    for number, text in enumerate(lines, start=1):
        if number not in named:
            expected.append(text)
        elif last[number].action == "replace" and last[number].text.strip():
            expected.append(one_line(last[number].text))
    assert out == expected


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(line, min_size=1, max_size=8), edits=st.lists(edit, max_size=4))
def test_the_file_after_apply_is_the_untouched_lines_byte_for_byte(tmp_path_factory, lines, edits):
    path = tmp_path_factory.mktemp("notes") / "notes.md"
    path.write_bytes("".join(text + "\n" for text in lines).encode())

    NotesFile(path).apply(edits)

    assert path.read_bytes() == "".join(text + "\n" for text in apply_edits(lines, edits)).encode()


@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x0c", "\x0b", "\x1c", "\x85", "\r"])
def test_only_a_newline_ends_a_line(tmp_path, odd):
    path = tmp_path / "notes.md"
    path.write_bytes(f"Deploy: blue{odd}green switch on the balancer\nstale fact\n".encode())

    notes = NotesFile(path)
    assert notes.lines() == [f"Deploy: blue{odd}green switch on the balancer", "stale fact"]
    notes.apply([Edit(2, "remove")])

    assert path.read_bytes() == f"Deploy: blue{odd}green switch on the balancer\n".encode()


def test_a_last_line_without_a_newline_is_a_line(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("first\nlast", encoding="utf-8")

    assert NotesFile(path).lines() == ["first", "last"]


def test_an_empty_file_has_no_lines(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("", encoding="utf-8")

    assert NotesFile(path).lines() == []


def test_appending_after_every_line_was_removed_writes_no_blank_line(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(["Node 18 on the VPS"])
    notes.apply([Edit(1, "remove")])

    notes.append(["Node 20 on the VPS"])

    assert (tmp_path / "notes.md").read_text(encoding="utf-8") == "Node 20 on the VPS\n"


WRITER = """
import sys
from pathlib import Path
from memsift.notes import NotesFile

notes = NotesFile(Path(sys.argv[1]))
for n in range(int(sys.argv[3])):
    notes.append([f"writer {sys.argv[2]} fact {n}"])
"""


def test_concurrent_appends_from_several_processes_lose_no_line(tmp_path):
    path = tmp_path / "notes.md"
    writers, each = 4, 40
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(w), str(each)], cwd=REPO)
             for w in range(writers)]
    assert [p.wait(timeout=60) for p in procs] == [0] * writers

    lines = path.read_text(encoding="utf-8").splitlines()

    assert sorted(lines) == sorted(f"writer {w} fact {n}" for w in range(writers) for n in range(each))
    for w in range(writers):  # each writer's lines in the order it wrote them
        assert [ln for ln in lines if ln.startswith(f"writer {w} ")] == [f"writer {w} fact {n}" for n in range(each)]
