"""The project's notes file: memsift/notes.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from attrs import evolve
from hypothesis import given, settings
from hypothesis import strategies as st

from memsift.notes import NotesFile, apply_edits, note_id, one_line, place_edits
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


def test_a_line_appended_again_moves_to_the_end_and_is_held_once(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("Node 20 only on the VPS\n  odd\tspacing  \nCaddy in front\nNode 20 only on the VPS\n",
                    encoding="utf-8")

    NotesFile(path).append(["Node 20 only  on the VPS", "Caddy in front", "Caddy in front"])

    assert path.read_text(encoding="utf-8") == "  odd\tspacing  \nNode 20 only on the VPS\nCaddy in front\n"


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

    notes.apply([Edit(1, "remove", old="first fact")])
    after = {i.text: (i.id, i.source) for i in notes.items()}

    assert after["second fact"] == (before["second fact"][0], "notes.md:1")
    assert after["third fact"] == (before["third fact"][0], "notes.md:2")
    assert before["second fact"][0] != before["third fact"][0]


def test_apply_replaces_and_removes_the_lines_named_and_ignores_lines_out_of_range(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Infra\n  odd  spacing\tkept  \nNode 18 on the VPS\nstale fact\nlast\n", encoding="utf-8")
    edits = [Edit(3, "replace", "Node 20 on the VPS", old="Node 18 on the VPS"), Edit(4, "remove", old="stale fact")]

    applied = NotesFile(path).apply([*edits, Edit(0, "remove", old="x"), Edit(6, "remove", old="y"),
                                     Edit(-1, "replace", "x", old="z")])

    assert path.read_text(encoding="utf-8") == "# Infra\n  odd  spacing\tkept  \nNode 20 on the VPS\nlast\n"
    assert applied == edits


def test_an_edit_lands_on_the_line_it_named_after_lines_moved(tmp_path):
    path = tmp_path / "notes.md"
    notes = NotesFile(path)
    notes.append(["first fact", "Node 18 on the VPS", "stale fact"])
    edits = [Edit(2, "replace", "Node 20 on the VPS", old="Node 18 on the VPS"), Edit(3, "remove", old="stale fact")]
    path.write_text("a line put first\nfirst fact\nNode 18 on the VPS\nstale fact\n", encoding="utf-8")

    applied = notes.apply(edits)

    assert notes.lines() == ["a line put first", "first fact", "Node 20 on the VPS"]
    assert applied == [Edit(3, "replace", "Node 20 on the VPS", old="Node 18 on the VPS"),
                       Edit(4, "remove", old="stale fact")]


@pytest.mark.parametrize("now", [
    "first fact\nNode 18 on the VPS, pinned\nlast\n",  # the line named was changed
    "first fact\nlast\n",  # it was removed
    "Node 18 on the VPS\nfirst fact\nNode 18 on the VPS\nlast\n",  # moved and now twice: which one?
])
def test_an_edit_whose_line_changed_is_dropped_and_touches_no_neighbour(tmp_path, now):
    path = tmp_path / "notes.md"
    path.write_text(now, encoding="utf-8")

    applied = NotesFile(path).apply([Edit(2, "remove", old="Node 18 on the VPS")])

    assert applied == [] and path.read_text(encoding="utf-8") == now


def test_the_first_edit_to_land_on_a_line_has_it():
    edits = [Edit(2, "replace", "B1", old="b"), Edit(5, "replace", "B2", old="b"), Edit(2, "remove", old="b")]

    assert place_edits(["a", "b", "c"], edits) == {2: edits[0]}


def test_an_unknown_action_lands_nowhere():
    assert place_edits(["a", "b"], [Edit(1, "rewrite", "x", old="a")]) == {}  # type: ignore[arg-type]


def test_apply_a_replace_with_a_blank_text_removes_the_line(tmp_path):
    assert apply_edits(["a", "b", "c"], [Edit(2, "replace", "  ", old="b")]) == ["a", "c"]


def test_apply_folds_a_replacement_onto_one_line(tmp_path):
    assert apply_edits(["a", "b"], [Edit(1, "replace", "new\nfact  here", old="a")]) == ["new fact here", "b"]


def test_the_docstring_examples_hold():
    assert apply_edits(["a", "b", "c"], [Edit(2, "remove", old="b"), Edit(3, "replace", "C", old="c")]) == ["a", "C"]
    assert place_edits(["new", "a", "b"], [Edit(1, "remove", old="a"), Edit(3, "remove", old="gone")]) == \
        {2: Edit(2, "remove", old="a")}


def test_nothing_is_written_when_no_edit_lands(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("a\n", encoding="utf-8")
    os.utime(path, ns=(0, 0))

    NotesFile(path).apply([Edit(1, "remove", old="b")])

    assert path.stat().st_mtime_ns == 0


def test_a_notes_file_that_is_a_symlink_stays_one_and_its_target_is_written(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    target = repo / "NOTES.md"
    target.write_text("Node 18 on the VPS\n", encoding="utf-8")
    target.chmod(0o644)
    link = tmp_path / "home" / "notes.md"
    link.parent.mkdir()
    link.symlink_to(target)
    notes = NotesFile(link)

    notes.append(["Caddy in front"])
    notes.apply([Edit(1, "replace", "Node 20 on the VPS", old="Node 18 on the VPS")])

    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8") == "Node 20 on the VPS\nCaddy in front\n"
    assert target.stat().st_mode & 0o777 == 0o644  # the file's own mode, not the temporary file's
    assert sorted(p.name for p in repo.iterdir()) == ["NOTES.md"]  # no temporary file left beside it


def test_a_new_notes_file_is_readable_by_its_owner_only(tmp_path):
    NotesFile(tmp_path / "notes.md").append(["Caddy in front"])

    assert (tmp_path / "notes.md").stat().st_mode & 0o777 == 0o600


def test_no_temporary_file_is_left_behind(tmp_path):
    notes = NotesFile(tmp_path / "notes.md")
    notes.append(["one"])
    notes.apply([Edit(1, "replace", "two", old="one")])

    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.journal.json", "notes.md", "notes.md.lock"]


# Lines a notes file holds: any text but a newline; a few common ones, so lines repeat and
# edits name lines that moved, changed or now appear twice.
line = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=30)
common = st.sampled_from(["Node 18 on the VPS", "Node 18 on the VPS ", "", "# Infra", "stale\tfact", "\x0c"])
text = st.one_of(common, common, line)
edit = st.builds(Edit, line=st.integers(-1, 10), action=st.sampled_from(["replace", "remove"]), text=text,
                 old=text)


@settings(max_examples=400)
@given(lines=st.lists(text, max_size=10), edits=st.lists(edit, max_size=6))
def test_an_edit_lands_only_on_a_line_reading_what_it_named_and_every_other_line_stays(lines, edits):
    placed = place_edits(lines, edits)

    for number, landed in placed.items():  # never on a neighbour: only a line reading exactly ``old``
        assert lines[number - 1] == landed.old and landed.line == number
        # ... on its own line, or on the only line reading it
        assert any(evolve(e, line=number) == landed and (e.line == number or lines.count(e.old) == 1)
                   for e in edits)
    for e in edits:  # an edit dropped had nowhere sure to land, or its line was taken first
        in_place = 1 <= e.line <= len(lines) and lines[e.line - 1] == e.old
        target = e.line if in_place else (lines.index(e.old) + 1 if lines.count(e.old) == 1 else None)
        assert target is None or target in placed
    expected = []
    for number, kept in enumerate(lines, start=1):
        named = placed.get(number)
        if named is None:
            expected.append(kept)  # byte for byte
        elif named.action == "replace" and named.text.strip():
            expected.append(one_line(named.text))
    assert apply_edits(lines, edits) == expected


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(text, min_size=1, max_size=8), edits=st.lists(edit, max_size=4))
def test_the_file_after_apply_is_the_untouched_lines_byte_for_byte(tmp_path_factory, lines, edits):
    path = tmp_path_factory.mktemp("notes") / "notes.md"
    path.write_bytes("".join(text + "\n" for text in lines).encode())

    applied = NotesFile(path).apply(edits)

    assert path.read_bytes() == "".join(text + "\n" for text in apply_edits(lines, edits)).encode()
    assert applied == list(place_edits(lines, edits).values())


@settings(max_examples=200)
@given(snapshot=st.lists(text, min_size=1, max_size=8, unique=True), data=st.data())
def test_edits_named_on_a_snapshot_land_on_their_own_lines_after_others_moved(snapshot, data):
    """Lines appended or removed by another process meanwhile: each edit still finds its own line."""
    named = data.draw(st.lists(st.integers(1, len(snapshot)), unique=True, max_size=3))
    edits = [Edit(n, "replace", f"edited {n}", old=snapshot[n - 1]) for n in named]
    gone = data.draw(st.sets(st.sampled_from(range(len(snapshot)))))
    now = [t for i, t in enumerate(snapshot) if i not in gone]
    now = data.draw(st.sampled_from([[], ["a new first line"]])) + now + ["a line appended later"]

    out = apply_edits(now, edits)

    for n in named:
        old = snapshot[n - 1]
        if now.count(old) == 1:
            assert f"edited {n}" in out and old not in out
        else:  # the line went (or a copy came): nothing to edit, nothing touched
            assert f"edited {n}" not in out
    assert [t for t in out if not t.startswith("edited ")] == [t for t in now if t not in {e.old for e in edits}
                                                                or now.count(t) != 1]


@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x0c", "\x0b", "\x1c", "\x85", "\r"])
def test_only_a_newline_ends_a_line(tmp_path, odd):
    path = tmp_path / "notes.md"
    path.write_bytes(f"Deploy: blue{odd}green switch on the balancer\nstale fact\n".encode())

    notes = NotesFile(path)
    assert notes.lines() == [f"Deploy: blue{odd}green switch on the balancer", "stale fact"]
    notes.apply([Edit(2, "remove", old="stale fact")])

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
    notes.apply([Edit(1, "remove", old="Node 18 on the VPS")])

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
