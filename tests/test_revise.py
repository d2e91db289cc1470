"""The embedded reviser: memsift/revise.py."""

from __future__ import annotations

from memsift.revise import DuplicateReviser, added_at
from memsift.types import Edit

OLD = "Node 20 only on the VPS"
OURS = "Node 20 only on the VPS host"
LATER = "Node 20 only on the VPS host, pinned by nvm"


def test_the_added_line_is_found_by_its_text_when_others_were_appended_after_it():
    lines = ["# Hosting", OLD, OURS, "Caddy in front of the API", LATER]

    edits = DuplicateReviser().revise(lines, added=[OURS])

    # The older line goes; the later one, which repeats ours, is another retain's to judge.
    assert edits == [Edit(2, "remove", old=OLD)]


def test_a_line_added_but_gone_since_names_nothing():
    assert DuplicateReviser().revise([OLD, LATER], added=[OURS]) == []


def test_headings_blanks_and_unrelated_lines_are_never_named():
    lines = ["# Node 20 only on the VPS host", "", "Caddy in front of the API", OURS]

    assert DuplicateReviser().revise(lines, added=[OURS]) == []


def test_the_added_line_is_the_last_line_reading_it_and_is_matched_folded():
    assert added_at(["a", "b", "a", "c"], ["a", "gone"]) == {3}
    assert added_at(["x", OURS], ["Node 20  only on the\nVPS host"]) == {2}
