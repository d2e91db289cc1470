"""Bounded against a hostile or broken store: the real prompt hook, a real HTTP store on 127.0.0.1 that
answers a search with 100 MB, never stops answering, or trickles for ever (tests/hostile.py).

Issue 27, row 6: a 100 MB answer cost 19 s per prompt and paused nothing; an endless one grew the hook
past 600 MB in 12 s. The answer is read streamed, up to a byte cap and a deadline; past either the search
has failed: memory is paused, the session is told once, and the store is not asked again until its
breaker lets a probe through. How much memory the hook held is read from the kernel (``wait4``); how
long it took is the benchmark's to say (benchmarks/bench_hostile_store.py), not a test's.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from hostile import HostileStore, run_measured
from test_adapters import AGENT_NAMES, MEMSIFT, STRIPE_QUESTION, prompt_payload

BOUND = 200 * 1024 * 1024  # a hook's whole process, interpreter and imports included: about 60 MB here


def prompt(home, project, store: HostileStore, session: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSIFT_")}
    env.update(HOME=str(home.parent / "user"), MEMSIFT_HOME=str(home), MEMSIFT_STORE="cognee",
               MEMSIFT_COGNEE_URL=store.url, MEMSIFT_STORE_DEADLINE="3")
    payload = prompt_payload("claude", project, STRIPE_QUESTION, session=session)
    return run_measured([sys.executable, str(MEMSIFT), "hook", AGENT_NAMES["claude"], "UserPromptSubmit"],
                        json.dumps(payload).encode(), env, project)


@pytest.mark.parametrize("mode", ["huge", "endless", "trickle"])
def test_a_store_that_answers_without_end_pauses_memory_once_and_the_hook_stays_small(tmp_path, mode):
    home, project = tmp_path / "memsift-home", tmp_path / "shop"
    project.mkdir()
    with HostileStore(mode) as store:
        first = prompt(home, project, store, "s1")
        second = prompt(home, project, store, "s1")
        searches = store.searches

    assert first.returncode == second.returncode == 0, first.stderr
    told = json.loads(first.stdout)
    assert told["systemMessage"].startswith(f"memsift: memory paused: Cognee at {store.url} ")
    assert second.stdout == b""  # told once; and the store, paused, was not asked again
    assert searches == 1
    assert first.peak_rss < BOUND and second.peak_rss < BOUND, (first.peak_rss, second.peak_rss)
