"""The warm model server (``memsift serve``), the embedder hooks reach it through, and the vector cache.

Real servers: ``python -m memsift serve`` subprocesses on the test's own
MEMSIFT_HOME socket, each stopped by the test that started it (and the suite
checks none is left: conftest.py). Waits are bounded polls, never timed assertions.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from guarded import guarded_recall

from memsift import __version__
from memsift._hooks import served as _served
from memsift._cli.doctor import diagnose
from memsift._hooks.guarded import open_guarded
from memsift._notes.lines import fact_of
from memsift.config import load_config
from memsift.pipeline import retain
from memsift.semantic import _serve
from memsift.semantic._vectors import Rows, VectorCache, row_bytes, text_key
from memsift.semantic.embedder import CachedEmbedder, InProcessEmbedder, ServerEmbedder
from memsift.semantic.judge import embedded_text
from memsift.semantic.model import installed, model_files
from memsift.services import embedder_for, open_services
from memsift.notes import NotesFile
from memsift.types import Exchange, Message

pytestmark = pytest.mark.skipif(not installed(), reason="the [semantic] extra is not installed")

TEXTS = ["We'll use Postgres advisory locks instead of Redis locks.", "why not Redis for mutual exclusion?"]
OTHER_VERSION = "import memsift; memsift.__version__ = '0.0.1'; from memsift._cli import main; main(['serve'])"
PATIENCE = 120.0  # seconds a poll waits for a server loading its model on a busy machine


@pytest.fixture(autouse=True)
def semantic_judge_on(monkeypatch):
    """The server serves the semantic judge, which is off by default: these tests turn it on."""
    monkeypatch.setenv("MEMSIFT_JUDGE", "semantic")


def until(condition, what: str, timeout: float = PATIENCE):
    """Poll ``condition`` until it returns something true; fail saying ``what`` did not happen."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"{what} within {timeout:g} s")


def start_server(home: Path, code: str | None = None, **settings: str) -> subprocess.Popen[bytes]:
    """A ``memsift serve`` process on ``home`` (``code``: a ``python -c`` that runs one), answering."""
    env = {**os.environ, "MEMSIFT_HOME": str(home), **{f"MEMSIFT_{k.upper()}": v for k, v in settings.items()}}
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "memsift", "serve"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    until(lambda: process.poll() is not None or _serve.status(home), "the server did not answer")
    assert process.poll() is None, process.stderr.read() if process.stderr else ""
    return process


@pytest.fixture
def servers(memsift_home):
    """Start servers with ``servers(...)``; all stopped at the end, and none left in the home."""
    started: list[subprocess.Popen[bytes]] = []

    def start(**kwargs) -> subprocess.Popen[bytes]:
        started.append(start_server(memsift_home, **kwargs))
        return started[-1]

    yield start
    _serve.stop(memsift_home)
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    until(lambda: not _serve.lock_held(memsift_home), "a server was left running", timeout=30)


@pytest.fixture
def spawned(memsift_home):
    """For a test whose embedder starts servers itself: whatever it started is stopped at the end."""
    yield memsift_home
    until(lambda: not _serve.lock_held(memsift_home) or _serve.stop(memsift_home), "a started server did not stop")
    assert not _serve.lock_held(memsift_home)


@pytest.fixture(scope="module")
def in_process():
    return InProcessEmbedder()


# -- the server -----------------------------------------------------------------------

def test_the_server_answers_the_vectors_the_model_gives_in_process(servers, memsift_home, in_process):
    servers()

    rows = ServerEmbedder(memsift_home).embed(TEXTS)

    assert rows is not None and rows.shape == (2, 384)
    expected = in_process.embed(TEXTS)
    assert [round(rows[i] @ expected[i], 4) for i in range(2)] == [1.0, 1.0]
    assert round(rows[0] @ rows[1], 4) == round(float(expected[0] @ expected[1]), 4)


def test_its_folder_and_socket_are_the_users_only_and_it_listens_on_no_network(servers, memsift_home):
    process = servers()
    folder, path = _serve.serve_dir(memsift_home), _serve.socket_path(memsift_home)

    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_ISSOCK(path.stat().st_mode) and stat.S_IMODE(path.stat().st_mode) == 0o600
    if sys.platform.startswith("linux"):  # every socket it holds is a Unix one
        inodes = {os.readlink(f"/proc/{process.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{process.pid}/fd")}
        sockets = {link[len("socket:["):-1] for link in inodes if link.startswith("socket:[")}
        network = set()
        for table in ("tcp", "tcp6", "udp", "udp6"):
            lines = Path(f"/proc/{process.pid}/net/{table}").read_text().splitlines()[1:]
            network |= {line.split()[9] for line in lines}
        assert sockets and not sockets & network


def test_status_tells_pid_version_model_and_memory(servers, memsift_home):
    process = servers()

    told = _serve.status(memsift_home)

    assert told is not None
    assert (told["pid"], told["memsift"], told["model"]) == (process.pid, __version__, model_files()[2])
    assert told["rss_bytes"] > 0 and told["idle_seconds"] >= 0
    assert json.loads((_serve.serve_dir(memsift_home) / _serve.STATE).read_text())["pid"] == process.pid


def test_a_second_server_started_beside_a_running_one_does_not_serve(servers, memsift_home):
    first = servers()

    second = subprocess.run([sys.executable, "-m", "memsift", "serve"], capture_output=True, timeout=120,
                            env={**os.environ, "MEMSIFT_HOME": str(memsift_home)})

    assert second.returncode == 0 and b"another server is running" in second.stderr
    assert _serve.status(memsift_home)["pid"] == first.pid


def test_it_ends_itself_once_idle_and_leaves_nothing_in_the_way(memsift_home):
    process = start_server(memsift_home, serve_idle="0.5")

    assert process.wait(timeout=PATIENCE) == 0
    assert not _serve.socket_path(memsift_home).exists()
    assert not _serve.lock_held(memsift_home)


def test_a_request_that_is_not_json_does_not_end_the_server(servers, memsift_home):
    servers()

    with _serve.connected(_serve.socket_path(memsift_home), 1.0) as conn:
        conn.sendall(b"\x00\x00\x00\x05hello")
    with _serve.connected(_serve.socket_path(memsift_home), 1.0) as conn:
        conn.sendall((1 << 30).to_bytes(4, "big"))

    assert ServerEmbedder(memsift_home).embed(TEXTS) is not None


# -- the embedder hooks use -----------------------------------------------------------

def test_no_server_the_first_message_is_lexical_and_a_later_one_gets_vectors(spawned, tmp_path):
    services = open_guarded(tmp_path, "s1", served_wait=0.0).services
    assert services is not None and services.embedder is not None

    assert services.embedder.embed(TEXTS) is None  # a server is starting: this message is judged lexically
    rows = until(lambda: services.embedder.embed(TEXTS), "a started server never answered")

    assert rows.shape == (2, 384)
    assert _serve.status(spawned)["memsift"] == __version__


def test_two_hooks_starting_a_server_at_once_make_one(spawned):
    pids = [_serve.start_detached(spawned), _serve.start_detached(spawned)]

    told = until(lambda: _serve.status(spawned), "no server answered")
    others = [pid for pid in pids if pid is not None and pid != told["pid"]]
    for pid in others:  # started beside it: it found the lock held and ended
        assert os.waitpid(pid, 0)[1] == 0
    assert told["pid"] in pids


def test_a_server_of_another_version_is_replaced(servers, spawned):
    old = servers(code=OTHER_VERSION)
    assert _serve.status(spawned)["memsift"] == "0.0.1"

    assert ServerEmbedder(spawned).embed(TEXTS) is None

    assert old.wait(timeout=PATIENCE) == 0
    told = until(lambda: _serve.status(spawned), "no new server answered")
    assert told["memsift"] == __version__ and told["pid"] != old.pid


def test_a_server_of_another_model_is_replaced(servers, spawned, tmp_path):
    folder = tmp_path / "minilm-copy"
    folder.mkdir()
    model, tokenizer, _ = model_files()
    shutil.copy(model, folder / "model.onnx")
    shutil.copy(tokenizer, folder / "tokenizer.json")
    old = servers()

    embedder = ServerEmbedder(spawned, str(folder))
    assert embedder.embed(TEXTS) is None

    assert old.wait(timeout=PATIENCE) == 0
    assert until(lambda: embedder.embed(TEXTS), "the server of the other model never answered").shape == (2, 384)
    assert _serve.status(spawned)["model"] == embedder.name == f"minilm-copy@{model.stat().st_size}"


def test_a_dead_server_is_restarted(servers, spawned):
    dead = servers()
    dead.send_signal(signal.SIGKILL)
    dead.wait(timeout=30)
    assert _serve.socket_path(spawned).exists()  # a dead server's socket, and its pid in server.json

    embedder = ServerEmbedder(spawned)
    assert embedder.embed(TEXTS) is None

    assert until(lambda: embedder.embed(TEXTS), "no server was restarted").shape == (2, 384)
    assert _serve.status(spawned)["pid"] != dead.pid


def test_a_home_whose_socket_path_is_too_long_is_judged_lexically_without_error(tmp_path):
    home = tmp_path / ("h" * 120)

    assert ServerEmbedder(home).embed(TEXTS) is None
    assert not _serve.lock_held(home)


# -- who gets which embedder ----------------------------------------------------------

def test_hooks_reach_the_server_and_the_library_loads_the_model(tmp_path):
    config = load_config()

    served = embedder_for(config, served_wait=0.0, folder=tmp_path)
    in_process = embedder_for(config)

    assert isinstance(served, CachedEmbedder) and isinstance(served.embedder, ServerEmbedder)
    assert isinstance(in_process, InProcessEmbedder)
    assert embedder_for(load_config({**os.environ, "MEMSIFT_JUDGE": "lexical"}), served_wait=0.0) is None


# -- the vector cache -----------------------------------------------------------------

class Counting:
    """The real in-process model, counting the texts it is asked to embed (the cache's misses)."""

    def __init__(self, embedder, name: str | None = None) -> None:
        self.embedder, self.asked = embedder, []
        self.name = name or embedder.name

    def embed(self, texts):
        self.asked.append(list(texts))
        return self.embedder.embed(texts)


def test_a_text_is_embedded_once_then_read_from_the_cache(tmp_path, in_process):
    model = Counting(in_process)
    embedder = CachedEmbedder(model, VectorCache(tmp_path / "vectors.sqlite"))

    first = embedder.embed(TEXTS)
    again = CachedEmbedder(model, VectorCache(tmp_path / "vectors.sqlite")).embed([TEXTS[1], "new text", TEXTS[1]])

    assert model.asked == [TEXTS, ["new text"]]
    assert again is not None and again.shape == (3, 384)
    assert again[0].tobytes() == first[1].tobytes() == again[2].tobytes()


def test_another_model_misses_every_vector_and_its_own_replace_them(tmp_path, in_process):
    path = tmp_path / "vectors.sqlite"
    CachedEmbedder(Counting(in_process), VectorCache(path)).embed(TEXTS)
    other = Counting(in_process, name="another-model")

    CachedEmbedder(other, VectorCache(path)).embed(TEXTS)

    assert other.asked == [TEXTS]
    assert VectorCache(path).get(in_process.name, TEXTS) == {}  # the old model's rows went
    assert set(VectorCache(path).get("another-model", TEXTS)) == set(TEXTS)


def test_no_vectors_when_the_model_cannot_answer_and_nothing_kept(tmp_path):
    cache = VectorCache(tmp_path / "vectors.sqlite")
    unreachable = ServerEmbedder(tmp_path / ("h" * 120))  # a socket path too long: no server can be reached

    assert CachedEmbedder(unreachable, cache).embed(TEXTS) is None
    assert cache.get(unreachable.name, TEXTS) == {}


def test_a_damaged_cache_is_a_miss_set_aside_for_a_new_one(tmp_path, in_process):
    path = tmp_path / "vectors.sqlite"
    path.write_bytes(b"not a database at all" * 100)
    model = Counting(in_process)

    assert CachedEmbedder(model, VectorCache(path)).embed(TEXTS) is not None
    assert CachedEmbedder(model, VectorCache(path)).embed(TEXTS) is not None

    assert model.asked == [TEXTS]  # the read set the damaged file aside, the vectors went in a new one
    assert list(tmp_path.glob("vectors.sqlite.damaged-*"))


def test_rows_read_as_numpy_and_give_cosines_like_numpy_rows(in_process):
    import numpy

    expected = in_process.embed(TEXTS)
    rows = Rows.from_bytes(b"".join(row_bytes(r) for r in expected), count=2, dims=384)

    assert numpy.array_equal(numpy.asarray(rows), expected)
    # numpy sums in float32, a Row in float64: equal to float32's precision
    assert abs(rows[0] @ rows[1] - float(expected[0] @ expected[1])) < 1e-6
    assert abs(float(expected[0] @ numpy.asarray(rows[1])) - rows[0] @ expected[1]) < 1e-6
    assert text_key("a") != text_key("b") and len(text_key("a")) == 16


# -- vectors computed when memory is written ------------------------------------------

INCIDENT = Exchange("the nightly export worker keeps getting OOM-killed, what did you change?",
                    "The worker ran out of memory on big tenants: I capped the heap at 1536 MB and split the "
                    "export per tenant, so each run stays under the limit.", "s1")


def test_retain_computes_the_vectors_of_the_line_and_the_item_it_writes(tmp_path):
    services = open_services(load_config(), tmp_path)

    kept = retain(INCIDENT, services)

    assert kept.keep, kept.stopped_by
    cache = VectorCache(load_config().project_dir(tmp_path) / "vectors.sqlite")
    written = [embedded_text(fact_of(kept.lines[0]))]  # the store's item is the same line
    assert written[0] and set(cache.get(services.embedder.name, written)) == set(written)


def test_the_stop_hook_starts_the_server_and_caches_the_new_notes_vector(spawned, tmp_path):
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    transcript = tmp_path / "session.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": INCIDENT.user}}) + "\n")
    payload = {"session_id": "s1", "cwd": str(project), "transcript_path": str(transcript),
               "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": INCIDENT.assistant}

    done = subprocess.run([sys.executable, "-m", "memsift", "hook", "claude-code", "Stop"],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60)

    assert done.returncode == 0 and done.stdout == b""
    notes = load_config().project_dir(project) / "notes.md"
    line = until(lambda: notes.exists() and notes.read_text().strip(), "the retain kept nothing")
    cache = VectorCache(notes.with_name("vectors.sqlite"))
    fact = embedded_text(fact_of(line))  # what the semantic judge embeds of it
    until(lambda: cache.get(ServerEmbedder(spawned).name, [fact]), "the new note's vector was not cached")
    assert _serve.status(spawned) is not None  # the detached retain started it: the next message finds it warm


# -- memsift doctor -------------------------------------------------------------------

def test_doctor_shows_the_running_server(servers, memsift_home, tmp_path):
    process = servers()

    row = next(c for c in diagnose(tmp_path).checks if c.name == "model server")

    assert row.status == "ok" and f"pid {process.pid}" in row.detail and model_files()[2] in row.detail
    assert "RSS" in row.detail and "idle since" in row.detail


def test_doctor_says_a_server_of_another_version_is_replaced_next(servers, tmp_path):
    servers(code=OTHER_VERSION)

    row = next(c for c in diagnose(tmp_path).checks if c.name == "model server")

    assert row.status == "info" and "memsift 0.0.1" in row.detail and "the next hook replaces it" in row.detail


def test_doctor_says_when_no_server_runs_or_the_judge_is_lexical(tmp_path, monkeypatch):
    stopped = next(c for c in diagnose(tmp_path).checks if c.name == "model server")
    monkeypatch.setenv("MEMSIFT_JUDGE", "lexical")
    lexical = next(c for c in diagnose(tmp_path).checks if c.name == "model server")

    assert (stopped.status, lexical.status) == ("info", "info")
    assert "not running" in stopped.detail and "judge = lexical" in lexical.detail


# -- a searching message recalled in the warm server --------------------------------

NOTE = "We use Postgres advisory locks instead of Redis locks, because Redis failover lost a lock twice."
QUESTION = "why not Redis for the job locks? remind me what we decided"  # the lexical judge alone finds nothing
IN_ITS_WORDS = "why did we pick Postgres advisory locks over Redis locks?"  # the lexical judge finds the note


def searching_hook(project: Path, tmp_path: Path, prompt_id: str,
                   prompt: str = QUESTION) -> subprocess.CompletedProcess[bytes]:
    """The UserPromptSubmit hook on a searching message, a user HOME of its own (never the real one)."""
    payload = {"session_id": f"s-{prompt_id}", "cwd": str(project), "prompt_id": prompt_id,
               "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    env = {**os.environ, "HOME": str(tmp_path / "user")}
    return subprocess.run([sys.executable, "-m", "memsift", "hook", "claude-code", "UserPromptSubmit"],
                          input=json.dumps(payload).encode(), capture_output=True, timeout=60, env=env)


@pytest.fixture
def shop(tmp_path):
    project = tmp_path / "shop"
    (project / ".git").mkdir(parents=True)
    NotesFile(load_config().project_dir(project) / "notes.md").append([NOTE])
    return project


def added(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout else ""


def test_a_searching_hook_is_recalled_in_the_warm_server_as_the_library_recalls_it(servers, memsift_home, shop,
                                                                                     tmp_path):
    servers()
    in_process = guarded_recall(Message(QUESTION, session="s-library"), shop)  # the model loaded here

    done = searching_hook(shop, tmp_path, "p1")

    assert _serve.status(memsift_home)["served"] == 1  # the server recalled it, not the hook
    assert "advisory locks" in added(done) and added(done) == in_process.text
    decisions = [json.loads(line) for line in (memsift_home / "decisions.jsonl").read_text().splitlines()]
    assert [(d["event"], d["session"]) for d in decisions if d.get("session") == "s-p1"] == [
        ("UserPromptSubmit", "s-p1")]


def test_a_server_of_another_version_leaves_the_recall_to_the_hook(servers, spawned, shop, tmp_path):
    servers(code=OTHER_VERSION)

    done = searching_hook(shop, tmp_path, "p2", IN_ITS_WORDS)

    assert "advisory locks" in added(done)  # recalled in process, lexically: the old server is being replaced
    told = until(lambda: (_serve.status(spawned) or {}).get("memsift") == __version__ and _serve.status(spawned),
                 "the server of another version was not replaced")
    assert told["served"] == 0


def test_a_server_that_takes_the_recall_and_never_answers_adds_nothing_once(memsift_home, shop, tmp_path):
    _serve.serve_dir(memsift_home).mkdir(mode=0o700)
    listener = _serve.listen(_serve.socket_path(memsift_home))
    taken: list[bytes] = []

    def silent() -> None:  # reads the whole request, then keeps the line open past the hook's patience
        conn, _ = listener.accept()
        with conn:
            taken.append(_serve.receive(conn))
            time.sleep(_served.ANSWER_TIMEOUT + 2)

    thread = threading.Thread(target=silent)
    thread.start()
    try:
        done = searching_hook(shop, tmp_path, "p3")
    finally:
        thread.join()
        listener.close()

    assert json.loads(taken[0])["op"] == "recall"
    assert done.returncode == 0 and done.stdout == b""  # fail open: nothing added
    assert not (memsift_home / "decisions.jsonl").exists()  # and the message was not recalled a second time


def test_settings_that_turn_memory_off_are_said_by_the_hook_as_without_a_server(servers, memsift_home, shop,
                                                                                tmp_path):
    servers()
    (memsift_home / "config.toml").write_text('store = "mongo"\n')

    done = searching_hook(shop, tmp_path, "p4")

    assert _serve.status(memsift_home)["served"] == 1  # asked, and declined before reading anything
    notice = json.loads(done.stdout)["systemMessage"]
    assert done.returncode == 0 and "memory off" in notice and "mongo" in notice


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files through /proc")
def test_the_server_closes_what_each_recall_opened(servers, memsift_home, shop):
    servers()
    pid = _serve.status(memsift_home)["pid"]
    open_files = lambda: len(os.listdir(f"/proc/{pid}/fd"))  # noqa: E731

    def recall(n: int) -> dict:
        request = _served.request_for(os.environ, memsift_home, shop, f"s{n}", "codex", f"{QUESTION} ({n})", [], [])
        return _served.served_recall(memsift_home, request)

    assert recall(0)["ok"]
    after_one = open_files()
    assert all(recall(n)["ok"] for n in range(1, 31))
    # The store's, the outbox's and the vector cache's connections closed. The connection a reply
    # was just written to may still be closing as its files are listed: the count may lag a moment.
    deadline = time.monotonic() + 5
    while open_files() > after_one and time.monotonic() < deadline:
        time.sleep(0.05)
    assert open_files() <= after_one, [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
