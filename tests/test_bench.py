"""The bench: memsift/bench.py and ``memsift bench``, on a tiny scenario written for these tests.

The every-message pipeline is deterministic (redact -> the store's top 5 ->
add them all), so its row is counted here by hand, message by message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memsift.bench import BRIEF_COUNTS, ROW_KEYS, bench_pipeline, format_table, load_scenario
from memsift.notes import one_line
from memsift.semantic.model import installed
from memsift.stages import HEADER
from memsift.stages.recall import quoted

REPO = Path(__file__).resolve().parent.parent
SLACK_TOKEN = "xoxb-482913650271-5928371046152-Zq8RkW3mTn7YpL2vXc9BfH4d"

# Six changelog passages of one length: whichever five the store ranks first,
# the rendered text has the same length.
CHANGELOG = [f"Changelog for release 2.{n}: footer typo corrected." for n in range(1, 7)]

SCENARIO = {
    "format": 1,
    "id": "recipes-tiny",
    "project": "A recipe-sharing site in Flask with Postgres; background jobs in Celery.",
    "memory": {
        "notes": [
            {"id": "n1",
             "text": "Image uploads: resized with Pillow to 1200px before S3, because phones send 12 MB photos."},
            {"id": "n2", "text": "Search: Postgres full text search, not Elasticsearch: one less service to run."},
        ],
        "archive": [
            {"id": "a1",
             "text": "Picked Celery with Redis as broker for the thumbnail jobs; RQ lacked retries with backoff."},
            {"id": "a2",
             "text": "The nightly backup cron failed because the disk filled up; "
                     "fixed by pruning dumps older than 14 days."},
            {"id": "a3", "text": "Recipe ratings are cached for ten minutes in Redis to keep the homepage fast."},
            *({"id": f"c{n}", "text": text} for n, text in enumerate(CHANGELOG, start=1)),
        ],
    },
    "conversation": [
        # m1: shares celery, thumbnail, jobs with a1 only.
        {"role": "user", "text": "why did we choose Celery for the thumbnail jobs?", "kind": "past_choice",
         "needs": ["a1"], "secrets": []},
        {"role": "assistant", "text": "Good question: see the worker module."},
        # m2: no content word, so the query borrows the last answer, whose words no passage holds.
        {"role": "user", "text": "thanks!", "kind": "reaction", "needs": [], "secrets": []},
        {"role": "assistant", "text": "You're welcome."},
        # m3: shares backup, cron, failed, disk with a2 only; the token is redacted before the search.
        {"role": "user", "text": f"the backup cron failed again, the alert webhook token is {SLACK_TOKEN}, "
                                 "can you check the disk?",
         "kind": "recurring_problem", "needs": ["a2"], "secrets": [SLACK_TOKEN]},
        {"role": "assistant", "text": "The disk is full again; I pruned the old dumps."},
        # m4: recipe, ratings, cache(d) with a3; redis with a1 too.
        {"role": "user", "text": "add caching for the recipe comments like the ratings cache in Redis",
         "kind": "builds_on_existing", "needs": ["a3"], "secrets": []},
        {"role": "assistant", "text": "Done, comments are cached for ten minutes too."},
        # m5: changelog, footer, release: six passages match, five are added, none needed.
        {"role": "user", "text": "what did we write in the changelog for the footer release?",
         "kind": "earlier_exchange", "needs": [], "secrets": []},
        {"role": "assistant", "text": "A line about the footer typo."},
        # m6: the answer is a note; the every-message pipeline searches only the store, which has nothing.
        {"role": "user", "text": "why Postgres full text search rather than Elasticsearch for our search box?",
         "kind": "past_choice", "needs": ["n2"], "secrets": []},
        {"role": "assistant", "text": "One less service to run."},
    ],
    "retain": [
        {"id": "r1", "user": "should uploads go through Pillow first?",
         "assistant": "Yes: resize to 1200px before S3, phones send 12 MB photos.", "keep": True,
         "category": "decision"},
        {"id": "r2", "user": "the backup cron failed, why?",
         "assistant": "The disk filled up; I now prune dumps older than 14 days.", "keep": True,
         "category": "incident"},
        {"id": "r3", "user": "thanks, great work", "assistant": "Glad it helped!", "keep": False,
         "category": "reaction"},
    ],
}
TEXT = {m["id"]: m["text"] for m in SCENARIO["memory"]["archive"]}


def rendered_length(texts: list[str], source: str = "archive") -> int:
    """Length of the text render() makes of these items: the header, then one line per item."""
    return len("\n".join([HEADER, *(f"- {quoted(one_line(t))} [{source}]" for t in texts)]))


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "recipes-tiny.json"
    path.write_text(json.dumps(SCENARIO), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def every_message(tmp_path_factory):
    path = tmp_path_factory.mktemp("bench") / "recipes-tiny.json"
    path.write_text(json.dumps(SCENARIO), encoding="utf-8")
    return bench_pipeline("every-message", [load_scenario(path)])


def test_load_scenario_reads_messages_memory_and_retain(scenario_file):
    scenario = load_scenario(scenario_file)

    assert scenario.id == "recipes-tiny"
    assert [n.id for n in scenario.notes] == ["n1", "n2"] and all(n.origin == "note" for n in scenario.notes)
    assert [a.id for a in scenario.archive][:3] == ["a1", "a2", "a3"] and len(scenario.archive) == 9
    assert len(scenario.messages) == 6
    assert scenario.messages[0].before == ()
    assert [t.role for t in scenario.messages[2].before] == ["user", "assistant", "user", "assistant"]
    assert scenario.messages[2].secrets == (SLACK_TOKEN,)
    assert scenario.secrets == {SLACK_TOKEN}
    assert [keep for _, keep in scenario.retain] == [True, True, False]


def test_load_scenario_refuses_another_format(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**SCENARIO, "format": 2}), encoding="utf-8")

    with pytest.raises(ValueError, match="format 1"):
        load_scenario(path)


def test_every_message_row_counted_by_hand(every_message):
    row = every_message["scenarios"][0]
    added = {
        "m1": ["a1"],
        "m3": ["a2"],
        "m4": ["a3", "a1"],
        "m5": CHANGELOG[:5],  # any five: they are the same length
    }
    chars = sum(rendered_length([TEXT.get(i, i) for i in items]) for items in added.values())

    assert row["id"] == "recipes-tiny"
    assert row["messages"] == 6
    assert row["added"] == 4                 # m1, m3, m4, m5
    assert row["added_chars"] == chars
    assert row["added_for_nothing"] == 1     # m5
    assert row["no_need"] == 2               # m2, m5
    assert row["reminders_expected"] == 4    # m1, m3, m4, m6
    assert row["reminders_found"] == 3       # m1, m3, m4 (m6's note is not in the store)
    assert row["items_added"] == 1 + 1 + 2 + 5
    assert row["items_needed_added"] == 3    # a1 for m1, a2 for m3, a3 for m4
    assert row["kind_accuracy"] == 0.0       # it never classifies
    assert row["secrets_leaked"] == 0        # the redactor runs before the search
    assert row["retain_precision"] == pytest.approx(2 / 3)  # it keeps everything: the keep share
    assert row["retain_recall"] == 1.0
    assert 0.0 < row["wait_mean_s"] <= row["wait_p95_s"]


def test_every_message_total_of_one_scenario_is_its_row(every_message):
    row, total = every_message["scenarios"][0], every_message["total"]

    assert total["id"] == "total"
    assert {k: v for k, v in total.items() if k not in ("id", "wait_mean_s", "wait_p95_s")} == \
        {k: v for k, v in row.items() if k not in ("id", "wait_mean_s", "wait_p95_s")}


def test_the_secret_would_have_leaked_without_the_redactor(scenario_file, monkeypatch):
    class KeepsEverything:
        def redact(self, text: str) -> str:
            return text

    monkeypatch.setattr("memsift.redact.PatternRedactor", KeepsEverything)  # imported when the bench runs

    result = bench_pipeline("every-message", [load_scenario(scenario_file)])

    assert result["scenarios"][0]["secrets_leaked"] == 1


def check_row(row: dict) -> None:
    # FORMAT.md's keys, in its order; then what the session brief gave (docs/bench.md).
    assert list(row) == [*ROW_KEYS, *BRIEF_COUNTS]
    assert max(row["found_brief"], row["reminders_found"]) <= row["found_together"] <= row["reminders_expected"]
    assert set(ROW_KEYS) == {
        "id", "messages", "added", "added_chars", "added_for_nothing", "no_need", "reminders_found",
        "reminders_expected", "items_added", "items_needed_added", "kind_accuracy", "wait_mean_s",
        "wait_p95_s", "secrets_leaked", "retain_precision", "retain_recall"}
    counts = ("messages", "added", "added_chars", "added_for_nothing", "no_need", "reminders_found",
              "reminders_expected", "items_added", "items_needed_added", "secrets_leaked")
    ratios = ("kind_accuracy", "wait_mean_s", "wait_p95_s", "retain_precision", "retain_recall")
    assert isinstance(row["id"], str)
    for key in counts:
        assert type(row[key]) is int and row[key] >= 0, key
    for key in ratios:
        assert type(row[key]) is float and row[key] >= 0.0, key
    for key in ("kind_accuracy", "retain_precision", "retain_recall"):
        assert row[key] <= 1.0
    assert row["added"] <= row["messages"] and row["added_for_nothing"] <= min(row["added"], row["no_need"])
    assert row["reminders_found"] <= row["reminders_expected"]
    assert row["items_needed_added"] <= row["items_added"]
    assert row["no_need"] + row["reminders_expected"] == row["messages"]


@pytest.fixture(scope="module")
def memsift_two_scenarios(tmp_path_factory):
    folder = tmp_path_factory.mktemp("bench2")
    first, second = folder / "a.json", folder / "b.json"
    first.write_text(json.dumps(SCENARIO), encoding="utf-8")
    shorter = {**SCENARIO, "id": "recipes-shorter", "conversation": SCENARIO["conversation"][:6],
               "retain": SCENARIO["retain"][1:]}
    second.write_text(json.dumps(shorter), encoding="utf-8")
    return bench_pipeline("memsift", [load_scenario(first), load_scenario(second)])


def test_memsift_result_has_the_format_of_format_md(memsift_two_scenarios):
    result = memsift_two_scenarios

    assert list(result) == ["pipeline", "scenarios", "total"]
    assert result["pipeline"] == "memsift"
    assert [row["id"] for row in result["scenarios"]] == ["recipes-tiny", "recipes-shorter"]
    for row in (*result["scenarios"], result["total"]):
        check_row(row)
    json.loads(json.dumps(result))  # plain JSON all the way down


def test_memsift_rows_count_what_the_scenario_holds(memsift_two_scenarios):
    tiny, shorter = memsift_two_scenarios["scenarios"]

    assert (tiny["messages"], tiny["no_need"], tiny["reminders_expected"]) == (6, 2, 4)
    assert (shorter["messages"], shorter["no_need"], shorter["reminders_expected"]) == (3, 1, 2)
    assert tiny["secrets_leaked"] == 0 and shorter["secrets_leaked"] == 0


def test_memsift_total_sums_the_counts_and_recomputes_the_ratios(memsift_two_scenarios):
    rows, total = memsift_two_scenarios["scenarios"], memsift_two_scenarios["total"]

    for key in ("messages", "added", "added_chars", "added_for_nothing", "no_need", "reminders_found",
                "reminders_expected", "items_added", "items_needed_added", "secrets_leaked"):
        assert total[key] == sum(row[key] for row in rows), key
    weighted = sum(row["kind_accuracy"] * row["messages"] for row in rows) / total["messages"]
    assert total["kind_accuracy"] == pytest.approx(weighted)
    assert min(row["wait_p95_s"] for row in rows) <= total["wait_p95_s"] <= max(row["wait_p95_s"] for row in rows)
    # retention over the pooled exchanges: 2 kept of 3 in the first, 1 of 2 in the second
    hits = [round(row["retain_recall"] * expected) for row, expected in zip(rows, (2, 1), strict=True)]
    assert total["retain_recall"] == pytest.approx(sum(hits) / 3)


def test_format_table_has_a_column_per_pipeline_and_a_block_per_scenario_and_the_total(memsift_two_scenarios):
    table = format_table([memsift_two_scenarios])

    table, legend = table.split("\n\nwhat the lines count (docs/bench.md)\n")
    assert table.splitlines()[0] == "recipes-tiny"
    assert table.count("added for nothing") == 3  # two scenarios and the total
    # A legend under the table: one line for each line the blocks show.
    labels = [line[2:24].rstrip() for line in table.split("\n\n")[0].splitlines()[2:]]
    assert [line[2:24].rstrip() for line in legend.splitlines()] == labels
    assert "recipes-shorter" in table and "\ntotal\n" in table and "memsift" in table


# -- the command -----------------------------------------------------------------

def run_bench(*args: str, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMSIFT_HOME": str(home), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "memsift", "bench", *args], cwd=home, env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("judge", ["lexical", "semantic"])
def test_bench_json_prints_one_object_per_pipeline(scenario_file, memsift_home, monkeypatch, judge):
    monkeypatch.setenv("MEMSIFT_JUDGE", judge)
    done = run_bench(str(scenario_file), "--json", home=memsift_home)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # With the semantic judge on (and its extra installed), the lexical judge runs beside it.
    lexical = ["memsift-lexical"] if judge == "semantic" and installed() else []
    assert [json.loads(line)["pipeline"] for line in lines] == ["memsift", *lexical, "every-message"]
    for line in lines:
        result = json.loads(line)
        assert [row["id"] for row in result["scenarios"]] == ["recipes-tiny"]
        check_row(result["total"])


def test_bench_one_pipeline_json_prints_exactly_one_object(scenario_file, memsift_home):
    done = run_bench(str(scenario_file), "--pipeline", "every-message", "--json", home=memsift_home)

    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    result = json.loads(line)
    assert result["pipeline"] == "every-message"
    assert result["total"]["items_added"] == 9 and result["total"]["secrets_leaked"] == 0


def test_bench_without_json_prints_the_table(scenario_file, memsift_home):
    done = run_bench(str(scenario_file), home=memsift_home)

    assert done.returncode == 0, done.stderr
    assert "reminders found" in done.stdout and "every-message" in done.stdout
    legend = done.stdout.rsplit("\n\n", 1)[1].splitlines()  # under the table: what each column is
    assert [line.split(":")[0].strip() for line in legend] == ["memsift", "every-message"]  # lexical by default


def test_bench_judges_lexically_by_default(scenario_file, memsift_home):
    done = run_bench(str(scenario_file), "--json", home=memsift_home)

    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["pipeline"] for line in done.stdout.splitlines()] == ["memsift", "every-message"]


# -- loop scenarios: memory memsift keeps itself, read back in later sessions ----------

LOOP = {
    "format": "memsift-loop/1",
    "id": "backups-loop",
    "project": "A Django shop on one VPS; nightly Postgres dumps; a developer who writes short messages.",
    "sessions": [
        {"id": "s1", "turns": [
            {"role": "user", "text": "the nightly backup failed, disk full"},
            {"role": "assistant", "text": "Pruned dumps older than 14 days; the cron now prunes before it dumps."},
            {"role": "user", "text": "thanks"},
            {"role": "assistant", "text": "You're welcome."},
        ]},
        {"id": "s2", "turns": [
            # Shares nightly, backup, failed with s1's first exchange only: every-message finds it.
            {"role": "user", "text": "the nightly backup failed again?", "needs": ["f-prune"], "need_kind": "direct"},
            {"role": "assistant", "text": "Checking."},
            # Terse: the query borrows the last answer ("Checking."), which the store holds, so the
            # exchange just kept comes back, for nothing.
            {"role": "user", "text": "ok", "needs": []},
            {"role": "assistant", "text": "Sure."},
            # No word of it is in the store: nothing, although it needs the fact.
            {"role": "user", "text": "could offsite storage work?", "needs": ["f-prune"],
             "need_kind": "inference"},
            {"role": "assistant", "text": "Yes, to object storage."},
        ]},
    ],
    "facts": {"f-prune": {"session": "s1", "exchange": 0, "what": "dumps older than 14 days are pruned first",
                          "evidence": ["14 days"]}},
    "keep": {"s1": [0], "s2": []},
}


@pytest.fixture
def loop_file(tmp_path):
    path = tmp_path / "backups-loop.json"
    path.write_text(json.dumps(LOOP), encoding="utf-8")
    return path


def test_load_scenario_reads_a_loop_scenario(loop_file):
    scenario = load_scenario(loop_file)

    assert scenario.id == "backups-loop"
    assert [s.id for s in scenario.sessions] == ["s1", "s2"]
    assert [turn.needs for turn, _ in scenario.sessions[1].exchanges] == [("f-prune",), (), ("f-prune",)]
    assert scenario.evidence == {"f-prune": ("14 days",)} and scenario.keep == {("s1", 0)}


def test_every_message_on_a_loop_keeps_every_exchange_and_is_counted_by_hand(loop_file):
    row = bench_pipeline("every-message", [load_scenario(loop_file)])["scenarios"][0]

    # Only the second session is recalled: three messages, two of them with a need.
    assert (row["messages"], row["reminders_expected"], row["no_need"]) == (3, 2, 1)
    assert (row["expected_direct"], row["expected_inference"]) == (1, 1)
    assert (row["added"], row["added_for_nothing"]) == (2, 1)
    assert (row["reminders_found"], row["found_direct"], row["found_inference"]) == (1, 1, 0)
    # Five exchanges, all kept, one deserved it.
    assert (row["retain_precision"], row["retain_recall"]) == (0.2, 1.0)
    assert row["loop"] is True and (row["notes_lines"], row["notes_chars"]) == (0, 0)
    assert row["kind_accuracy"] is None  # loop messages carry no kind


def test_memsift_on_a_loop_reports_the_notes_it_wrote(loop_file):
    result = bench_pipeline("memsift", [load_scenario(loop_file)])
    row = result["scenarios"][0]

    assert set(ROW_KEYS) | {"loop", "notes_lines", "notes_chars", "found_direct", "found_inference"} <= set(row)
    assert 0 <= row["notes_lines"] <= 5 and row["notes_line_max"] <= 400
    assert row["notes_chars"] >= row["notes_lines"] * 20  # a line of notes states a fact, not a word
    assert result["total"]["notes_lines"] == row["notes_lines"]


def test_bench_table_shows_the_loop_lines(loop_file, memsift_home):
    done = run_bench(str(loop_file), home=memsift_home)

    assert done.returncode == 0, done.stderr
    for label in ("found direct", "found inference", "notes lines / chars", "note median / max"):
        assert label in done.stdout
    (kinds,) = [line for line in done.stdout.splitlines() if line.strip().startswith("kind accuracy")][:1]
    assert set(kinds.split()[2:]) == {"n/a"}  # a loop message carries no kind, in any column
