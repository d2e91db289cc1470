"""What a shared Cognee store and the outbox promise, measured through memsift's real CLI.

Starts the stand-in LLM and a real Cognee 1.6.5 server on loopback (as
``tests/cognee`` does; access control off, so one vector store holds every
dataset), or uses ``--cognee-url``, and prints one row per promise:

- two projects, one server: exchanges retained in ``client-acme`` (``memsift
  retain``), then asked about from ``client-globex`` (``memsift recall``, and
  its store searched directly): how many of acme's come back there;
- the outbox after delivery: how many delivered exchanges' text is still in
  an outbox file under memsift's home;
- an upload whose answer comes late (a proxy holds the server's answers past
  the drain's deadline, then lets them go): how many times the item went up;
- a drain abandoned at its deadline (``memsift retain`` through that proxy,
  store deadline 3 s): how long its claim outlives the process;
- a Cognee 500 (the server's data folder made unusable): the notice the next
  ``memsift recall`` prints.

    $ .venv/bin/python benchmarks/bench_store_promises.py [--cognee-url URL]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "cognee")]

from proxy import Proxy  # noqa: E402
from server import CogneeServer, StandinLLM, install  # noqa: E402

from memsift.errors import ServiceUnavailable  # noqa: E402
from memsift.notes import exchange_id  # noqa: E402
from memsift.stores.cognee import CogneeStore  # noqa: E402
from memsift.types import Exchange, Item  # noqa: E402
from memsift._keeping.outbox import Outbox  # noqa: E402

MEMSIFT = str(Path(sys.executable).parent / "memsift")
ACME = [  # decisions with a reason: the kind of exchange retain keeps
    Exchange("Which queue should the acme invoice exporter use?",
             "We moved the acme invoice exporter to the Postgres-backed queue because Redis "
             "dropped 40 invoices during the March failover."),
    Exchange("Why does the acme nightly sync run at 03:10?",
             "The acme nightly sync runs at 03:10 because the warehouse snapshot finishes at 03:00; "
             "we decided that after two partial exports."),
    Exchange("What did we decide about acme's webhook retries?",
             "We decided acme's webhook retries back off exponentially up to 6 attempts, since "
             "their endpoint rate-limits bursts of more than 10 requests."),
]
QUESTIONS = ["which queue does the invoice exporter use and why",
             "why does the nightly sync run at that time",
             "how do we retry the webhooks"]


def cli(*args: str, env: dict[str, str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MEMSIFT, *args], input=stdin, env=env, capture_output=True, text=True,
                          timeout=120)


def project(base: Path, name: str, remote: str | None) -> Path:
    folder = base / name
    folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def environment(home: Path, url: str, deadline: float = 12.0) -> dict[str, str]:
    return {**os.environ, "MEMSIFT_HOME": str(home), "HOME": str(home.parent),
            "MEMSIFT_STORE": "cognee", "MEMSIFT_COGNEE_URL": url,
            "MEMSIFT_STORE_DEADLINE": str(deadline), "MEMSIFT_BREAKER_COOLDOWN": "0.5"}


def settle_all(url: str) -> None:
    import httpx

    for dataset in httpx.get(f"{url}/api/v1/datasets", timeout=30).json():
        CogneeStore(url, dataset=dataset["name"]).settle(180)


def open_store(env: dict[str, str], folder: Path) -> CogneeStore:
    from memsift.config import load_config
    from memsift.services import open_services

    store = open_services(load_config(env), folder).store
    assert isinstance(store, CogneeStore)
    return store


def two_projects(url: str, base: Path) -> dict[str, object]:
    home = base / "home" / ".memsift"
    env = environment(home, url)
    acme = project(base, "client-acme", "git@github.com:example-co/client-acme.git")
    globex = project(base, "client-globex", "https://github.com/example-co/client-globex")
    kept = []
    for exchange in ACME:
        result = json.loads(cli("retain", "--project", str(acme), "--session", "a1", env=env,
                                stdin=json.dumps({"user": exchange.user,
                                                  "assistant": exchange.assistant})).stdout)
        kept.append(result["keep"])
    settle_all(url)
    acme_ids = {exchange_id(exchange) for exchange in ACME}
    shown_in_globex = searched_in_globex = found_in_acme = 0
    globex_store, acme_store = open_store(env, globex), open_store(env, acme)
    for n, question in enumerate(QUESTIONS):
        out = json.loads(cli("recall", "--project", str(globex), "--session", f"g{n}", "--json",
                             env=env, stdin=question).stdout)
        shown_in_globex += any(item["id"] in acme_ids for item in out["items"])
        searched_in_globex += any(item.id in acme_ids
                                  for item in globex_store.search(question, limit=5, timeout=12))
        found_in_acme += any(item.id in acme_ids
                             for item in acme_store.search(question, limit=5, timeout=12))
    texts = [exchange.assistant.encode() for exchange in ACME if exchange_id(exchange)]
    in_outbox = sum(any(text in path.read_bytes() for path in home.rglob("*outbox.sqlite*"))
                    for text in texts)
    return {"acme exchanges kept": f"{sum(kept)} of {len(ACME)}",
            "globex recalls showing an acme exchange": f"{shown_in_globex} of {len(QUESTIONS)}",
            "globex store searches returning one": f"{searched_in_globex} of {len(QUESTIONS)}",
            "acme store searches finding its own": f"{found_in_acme} of {len(QUESTIONS)}",
            "delivered exchanges whose text is still in an outbox file":
                f"{in_outbox} of {sum(kept)}"}


def late_answer(url: str, base: Path) -> dict[str, object]:
    items = [Item(f"late-{n}", f"The export job {n} writes to the cold bucket {n} at 02:{n}0 UTC.",
                  "passage", "bench") for n in range(3)]
    with Proxy(url) as proxy:
        store = CogneeStore(proxy.url, dataset=f"late-{os.getpid()}")
        store.add([Item("warm", "The warm-up item creates the dataset.", "passage", "bench")], timeout=60)
        outbox = Outbox(base / "late-outbox.sqlite")
        outbox.put(items)
        proxy.hold()
        with contextlib.suppress(ServiceUnavailable):  # the deadline passes while the answer waits
            outbox.drain(store, timeout=3)
        direct = CogneeStore(url, dataset=store.dataset)
        for _ in range(240):  # the server carries out the add whose answer waits in the proxy
            if len(direct_names(direct)) == 1 + len(items):
                break
            time.sleep(0.25)
        proxy.release()
        seen = len(proxy.requests)
        outbox.drain(store, timeout=60)
        uploads = [r for r in proxy.requests if r == "POST /api/v1/add"]
        after = proxy.requests[seen:]
    return {"add requests for a batch whose answer came late": len(uploads) - 1,  # the warm-up's
            "requests of the drain after it": ", ".join(after)}


def direct_names(store: CogneeStore) -> set[str]:
    from memsift.stores import cognee

    deadline = time.monotonic() + 30
    try:
        return set(cognee.CogneeStore._stored(store, store._ensure_dataset(deadline), deadline))
    except ServiceUnavailable:
        return set()


def abandoned_drain(url: str, base: Path) -> dict[str, object]:
    home = base / "abandon-home" / ".memsift"
    folder = project(base, "client-initech", "git@github.com:example-co/client-initech.git")
    exchange = ACME[0]
    with Proxy(url) as proxy:
        proxy.hold()
        env = environment(home, proxy.url, deadline=3.0)
        started = time.time()
        cli("retain", "--project", str(folder), env=env,
            stdin=json.dumps({"user": exchange.user, "assistant": exchange.assistant}))
        exited = time.time()
        leases = [until for path in home.rglob("*outbox.sqlite") for (until,) in
                  sqlite3.connect(path).execute("SELECT claimed_until FROM outbox")]
        proxy.release()
    held = max(leases, default=0.0)
    return {"retain process ran (s)": round(exited - started, 1),
            "claim held after the process exited (s)": round(max(0.0, held - exited), 1),
            "claim held from the start of the retain (s)": round(max(0.0, held - started), 1)}


def server_error(url: str, data: Path, base: Path) -> dict[str, object]:
    home = base / "error-home" / ".memsift"
    env = {**environment(home, url), "MEMSIFT_BREAKER_COOLDOWN": "30"}  # the recall comes while paused
    folder = project(base, "client-umbrella", "git@github.com:example-co/client-umbrella.git")
    exchange = ACME[1]
    aside = data.with_name(data.name + ".aside")
    data.rename(aside)
    data.write_text("not a folder: Cognee's add fails with a 500")
    try:
        retained = json.loads(cli("retain", "--project", str(folder), "--session", "e1", env=env, stdin=json.dumps(
            {"user": exchange.user, "assistant": exchange.assistant})).stdout)
        # asked from a project with no notes, so recall goes to the store (and finds it paused)
        elsewhere = project(base, "client-hooli", "git@github.com:example-co/client-hooli.git")
        recalled = cli("recall", "--project", str(elsewhere), "--session", "e2", env=env,
                       stdin=QUESTIONS[1])
    finally:
        data.unlink()
        aside.rename(data)
    return {"retain stopped by": retained["stopped_by"],
            "the next recall's notice": recalled.stdout.strip().splitlines()[0] if recalled.stdout.strip() else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cognee-url", help="a running server (access control off); default: start one")
    parser.add_argument("--cognee-data", type=Path, help="its DATA_ROOT_DIRECTORY, for the 500 row")
    ns = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="memsift-promises-"))
    rows: dict[str, object] = {}
    if ns.cognee_url:
        url, data = ns.cognee_url.rstrip("/"), ns.cognee_data
        run(url, data, base, rows)
    else:
        with StandinLLM() as llm, CogneeServer(install(), base / "cognee", llm_url=llm.url) as server:
            run(server.url, base / "cognee" / "data", base, rows)
    width = max(map(len, rows))
    for name, value in rows.items():
        print(f"{name:<{width}}  {value}")


def run(url: str, data: Path | None, base: Path, rows: dict[str, object]) -> None:
    rows.update(two_projects(url, base))
    rows.update(late_answer(url, base))
    rows.update(abandoned_drain(url, base))
    if data is not None:
        rows.update(server_error(url, data, base))


if __name__ == "__main__":
    main()
