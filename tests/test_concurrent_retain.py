"""Eight processes retaining into one project's notes at once lose nothing.

Each process runs the real retain path (redact, keep, notes append, revise,
sync) as the Stop hook does, with the embedded services of a temporary
MEMSIFT_HOME, over 50 exchanges of its own. Some exchanges restate an earlier
one of the same process, so its line is written again (moved last) while the
others append and edit around it; a few are retained by every process.
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from memsift.config import load_config
from memsift._notes.index import NotesIndex

REPO = Path(__file__).resolve().parent.parent
PROCESSES, EXCHANGES = 8, 50
RESTATED = range(5, EXCHANGES, 6)  # these exchanges restate the one three before them
SHARED_EXCHANGES = [  # every process retains these, the first at its 10th exchange, the second at its 30th
    ("Why is the nightly export sharded by tenant?",
     "One tenant's rows must stay on one node, so we chose tenant sharding over hashing."),
    ("Why do thumbnails render at the edge now?", "The origin cache thrashed; edge rendering fixed it."),
]
SHARED = {10: 0, 30: 1}

RETAINER = """
import json, os, sys, time
from pathlib import Path
from memsift.config import load_config
from memsift.pipeline import retain
from memsift.services import open_services
from memsift.types import Exchange

project, exchanges, ready, go = sys.argv[1], json.loads(Path(sys.argv[2]).read_text()), sys.argv[3], sys.argv[4]
services = open_services(load_config(), project)
Path(ready).touch()
while not os.path.exists(go):  # every process starts retaining at the same moment
    time.sleep(0.001)
for user, assistant in exchanges:
    result = retain(Exchange(user, assistant, "concurrent"), services)
    print(json.dumps({"keep": result.keep, "lines": result.lines, "stopped_by": result.stopped_by,
                      "edits": [[e.line, e.action, e.text, e.old] for e in result.edits]}), flush=True)
"""

WORDS = sorted({
    "ledger", "invoice", "webhook", "shard", "replica", "cursor", "tenant", "quota", "bucket", "kernel",
    "socket", "daemon", "cron", "schema", "index", "vacuum", "parser", "lexer", "buffer", "mutex",
    "thread", "fiber", "queue", "broker", "topic", "offset", "snapshot", "rollup", "metric", "gauge",
    "tracer", "span", "proxy", "gateway", "router", "tunnel", "cert", "token", "cookie", "session",
    "locale", "timezone", "currency", "rounding", "decimal", "bitmap", "bloom", "hash", "checksum",
    "archive", "tarball", "wheel", "lockfile", "resolver", "mirror", "registry", "artifact", "runner",
    "matrix", "fixture", "migration", "rollback", "canary", "blue", "green", "drain", "failover", "quorum",
    "leader", "follower", "heartbeat", "lease", "backoff", "jitter", "deadline", "retry", "breaker",
    "outbox", "inbox", "saga", "ledgerline", "payout", "refund", "chargeback", "dispute", "mandate",
    "thumbnail", "encoder", "codec", "bitrate", "subtitle", "playlist", "manifest", "segment", "chunk",
})


def exchanges() -> list[list[tuple[str, str]]]:
    """Fifty exchanges for each process; no two facts share three of their five words, so only
    a restatement repeats most of an older line."""
    rng = random.Random(9)
    taken: list[set[str]] = []
    out = []
    for process in range(PROCESSES):
        facts: list[tuple[str, str]] = []
        for n in range(EXCHANGES):
            if n in SHARED:
                facts.append(SHARED_EXCHANGES[SHARED[n]])
                continue
            if n in RESTATED:  # the same fact again: its line moves last, no twin
                user, assistant = facts[n - 3]
                facts.append((user, assistant + " Rechecked."))
                continue
            picked = rng.sample(WORDS, 5)
            while any(len(taken_words & set(picked)) > 2 for taken_words in taken):
                picked = rng.sample(WORDS, 5)
            taken.append(set(picked))
            a, b, c, d, e = picked
            tag = f"p{process}x{n}"
            facts.append((f"Why does {tag} use the {a} {b} instead of the {c}?",
                          f"We picked the {a} {b} for {tag} because the {c} broke under {d} {e} load."))
        out.append(facts)
    return out


@pytest.mark.slow  # 400 retains in 8 processes: 15 s on 2 CPUs (pytest -m slow, .ci/run)
def test_eight_processes_retaining_fifty_exchanges_each_lose_no_line(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    # Every exchange is kept whatever the embedded model thinks of it: this test counts lines,
    # it does not judge the keep decision.
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("MEMSIFT_")},
           "MEMSIFT_HOME": str(home), "MEMSIFT_KEEP_THRESHOLD": "0", "HOME": str(tmp_path)}
    notes_path = load_config({"MEMSIFT_HOME": str(home)}).project_dir(project) / "notes.md"
    notes_path.parent.mkdir(parents=True)
    with NotesIndex(notes_path) as index:  # an index from the start: the writers keep it in step
        index.sync()
    go = tmp_path / "go"
    procs = []
    for p, facts in enumerate(exchanges()):
        inputs = tmp_path / f"exchanges-{p}.json"
        inputs.write_text(json.dumps(facts))
        procs.append(subprocess.Popen(
            [sys.executable, "-c", RETAINER, str(project), str(inputs), str(tmp_path / f"ready-{p}"), str(go)],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 120
    while not all((tmp_path / f"ready-{p}").exists() for p in range(PROCESSES)):
        assert time.monotonic() < deadline and all(proc.poll() is None for proc in procs), \
            [proc.stderr.read() for proc in procs if proc.poll() is not None]
        time.sleep(0.01)
    go.touch()
    outputs = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * PROCESSES, [err for _, err in outputs]
    by_process = [[json.loads(line) for line in out.splitlines()] for out, _ in outputs]
    results = [r for done in by_process for r in done]

    lines = notes_path.read_text(encoding="utf-8").splitlines()

    assert [len(done) for done in by_process] == [EXCHANGES] * PROCESSES
    # Every fact is on exactly one line: its own tag once, each shared exchange once, nothing else.
    tags = Counter(tag for line in lines for tag in re.findall(r"\bp\d+x\d+\b", line))
    facts = [f"p{p}x{n}" for p in range(PROCESSES) for n in range(EXCHANGES) if n not in (*RESTATED, *SHARED)]
    assert tags == Counter(facts)
    assert len([line for line in lines if not re.search(r"\bp\d+x\d+\b", line)]) == len(SHARED)
    # Every line appended and not removed by an edit applied is there exactly once, and nothing else.
    appended = {line for r in results for line in r["lines"]}
    removed = [edit[3] for r in results for edit in r["edits"]]
    assert Counter(lines) == Counter(appended - set(removed))
    # A fact said for the first time is always kept; a restatement is not kept again: the older line
    # is written again, moved last (dated today, which it already is), while the others appended and
    # edited around it; no edit removed a line twice.
    assert all(done[n]["lines"] for done in by_process for n in range(EXCHANGES) if n not in (*RESTATED, *SHARED))
    assert all(not done[n]["keep"] and done[n]["lines"] == done[n - 3]["lines"]
               for done in by_process for n in RESTATED)
    assert len(removed) == len(set(removed))
    assert len(lines) == PROCESSES * (EXCHANGES - len(RESTATED) - len(SHARED)) + len(SHARED)
    # The notes index followed every write (the last writer left it in step with the file),
    # and each line is found where it is.
    st = os.stat(notes_path)
    db = sqlite3.connect(NotesIndex(notes_path).path)
    assert db.execute("SELECT size, mtime_ns, inode FROM indexed").fetchone() == (st.st_size, st.st_mtime_ns,
                                                                                 st.st_ino)
    db.close()
    with NotesIndex(notes_path) as index:
        assert index.sync() == len(lines)
        found = index.search(" ".join(lines), limit=10 * len(lines))
        assert {line: number for number, line in found} == {line: n for n, line in enumerate(lines, start=1)}
