"""The breaker shared by hook processes: memsift/health.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memsift._runtime.health import FAILING, FILE_NAME, REFUSED, Health

SERVICE = "Cognee at http://127.0.0.1:8011"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_service_never_seen_is_allowed_and_says_nothing(tmp_path):
    health = Health(tmp_path)

    assert health.allows(SERVICE)
    assert health.notice(SERVICE, "s1") is None
    assert not (tmp_path / FILE_NAME).exists()  # reading writes nothing


def test_a_failure_pauses_the_service_until_the_cooldown_then_lets_one_probe_through(tmp_path):
    clock = Clock()
    health = Health(tmp_path, cooldown=30, clock=clock)

    health.failed(SERVICE, "connection refused")
    assert not health.allows(SERVICE)
    clock.now += 29
    assert not health.allows(SERVICE)
    clock.now += 2
    assert health.allows(SERVICE)  # the probe
    assert not health.allows(SERVICE)  # everyone else waits for its verdict


def test_a_failed_probe_starts_a_new_cooldown_and_a_success_closes(tmp_path):
    clock = Clock()
    health = Health(tmp_path, cooldown=30, clock=clock)
    health.failed(SERVICE, "connection refused")
    clock.now += 31
    assert health.allows(SERVICE)

    health.failed(SERVICE, "still refused")
    clock.now += 10
    assert not health.allows(SERVICE)
    clock.now += 21
    assert health.allows(SERVICE)
    health.succeeded(SERVICE)
    assert health.allows(SERVICE)
    assert health.allows(SERVICE)


def test_a_refusal_is_told_as_one_not_as_an_outage(tmp_path):
    clock = Clock(time.mktime((2026, 3, 4, 9, 30, 0, 0, 0, -1)))
    health = Health(tmp_path, clock=clock)
    health.failed(SERVICE, f"{REFUSED}: 401 invalid API key")

    assert health.notice(SERVICE, "s1") == (
        f"memory paused: {SERVICE} refuses memsift's settings (check its key and URL) since 09:30; "
        "reminders are off")


def test_a_server_error_is_told_with_its_status_not_as_an_outage(tmp_path):
    clock = Clock(time.mktime((2026, 3, 4, 9, 30, 0, 0, 0, -1)))
    health = Health(tmp_path, clock=clock)
    health.failed(SERVICE, f"{FAILING} 500: Cognee answered 500: Internal server error")

    assert health.notice(SERVICE, "s1") == (
        f"memory paused: {SERVICE} answers with a server error (500) since 09:30; reminders are off")


def test_the_notice_says_since_when_once_per_session(tmp_path):
    clock = Clock(time.mktime((2026, 3, 4, 14, 2, 30, 0, 0, -1)))
    health = Health(tmp_path, clock=clock)
    health.failed(SERVICE, "connection refused")

    expected = f"memory paused: {SERVICE} unreachable since 14:02; reminders are off"
    assert health.notice(SERVICE, "s1") == expected
    assert health.notice(SERVICE, "s1") is None
    assert health.notice(SERVICE, "s2") == expected  # another session hears it too
    clock.now += 600
    health.failed(SERVICE, "refused again")  # still the same pause: nothing new to say
    assert health.notice(SERVICE, "s1") is None


def test_a_recovery_is_told_once_to_the_sessions_that_heard_of_the_pause(tmp_path):
    clock = Clock()
    health = Health(tmp_path, clock=clock)
    health.failed(SERVICE, "connection refused")
    assert health.notice(SERVICE, "told") is not None

    clock.now += 60
    health.succeeded(SERVICE)
    assert health.notice(SERVICE, "told") == (
        f"memory resumed: {SERVICE} answers again; reminders are on")
    assert health.notice(SERVICE, "told") is None
    assert health.notice(SERVICE, "never told") is None

    clock.now += 60
    health.failed(SERVICE, "down again")
    assert health.notice(SERVICE, "told").startswith("memory paused:")
    assert health.notice(SERVICE, "never told").startswith("memory paused:")


def test_services_have_separate_breakers(tmp_path):
    health = Health(tmp_path)
    health.failed(SERVICE, "connection refused")

    assert health.allows("decider at http://127.0.0.1:9000")
    assert health.notice("decider at http://127.0.0.1:9000", "s1") is None


def test_another_process_sees_the_breaker_open(tmp_path):
    script = (f"from memsift._runtime.health import Health; "
              f"Health({str(tmp_path)!r}).failed({SERVICE!r}, 'refused')")
    subprocess.run([sys.executable, "-c", script], check=True,
                   env={"PYTHONPATH": str(Path(__file__).resolve().parents[1])})

    health = Health(tmp_path)
    assert not health.allows(SERVICE)
    assert health.notice(SERVICE, "s1").startswith("memory paused:")


def test_a_torn_or_foreign_file_counts_as_healthy_and_is_replaced(tmp_path):
    (tmp_path / FILE_NAME).write_text("{not json")
    health = Health(tmp_path)

    assert health.allows(SERVICE)
    health.failed(SERVICE, "refused")
    assert not health.allows(SERVICE)
    assert json.loads((tmp_path / FILE_NAME).read_text())[SERVICE]["open"] is True


def test_writes_leave_no_temporary_files_behind(tmp_path):
    health = Health(tmp_path)
    health.failed(SERVICE, "refused")
    health.notice(SERVICE, "s1")
    health.succeeded(SERVICE)

    assert sorted(path.name for path in tmp_path.iterdir()) == [FILE_NAME, f"{FILE_NAME}.lock"]  # the turns' lock


# A model of what the agent should hear: a line when the state a session last
# heard about is not the current one, except that a recovery is news only to
# a session whose last notice was a pause.
operations = st.lists(st.one_of(
    st.tuples(st.just("failed"), st.none()),
    st.tuples(st.just("succeeded"), st.none()),
    st.tuples(st.just("notice"), st.sampled_from(["s1", "s2", "s3"])),
), max_size=40)


@settings(max_examples=60, deadline=None)
@given(operations)
def test_the_agent_hears_each_change_exactly_once(tmp_path_factory, steps):
    clock = Clock()
    health = Health(tmp_path_factory.mktemp("home"), clock=clock)
    is_open, version, heard = False, 0, {}  # heard: session -> (version, was it open)
    for operation, session in steps:
        clock.now += 1
        if operation == "failed":
            version += not is_open
            is_open = True
            health.failed(SERVICE, "refused")
        elif operation == "succeeded":
            version += is_open
            is_open = False
            health.succeeded(SERVICE)
        else:
            said = health.notice(SERVICE, session)
            last = heard.get(session)
            should_say = (last is None or last[0] != version) and (is_open or bool(last and last[1]))
            assert (said is not None) == should_say
            if said is not None:
                heard[session] = (version, is_open)
                assert said.startswith("memory paused" if is_open else "memory resumed")
