"""Issue 17's durability rows, measured through the real hook commands: what becomes of an exchange
when memsift's home cannot be written, and what the agent is told.

Needs root (a tmpfs home, a read-only remount, a hook run without the right to override
permissions); each row sets up its own home and removes it after.

    sudo .venv/bin/python benchmarks/durability_rows.py            # every row
    sudo .venv/bin/python benchmarks/durability_rows.py full ro    # some of them
    sudo .venv/bin/python benchmarks/durability_rows.py --memsift /other/venv/bin/memsift

Each row: one exchange kept while all is well, the home broken (a full tmpfs, a read-only remount,
a folder the hook may not write), a second exchange ended with the Stop hook, two prompts (what
they print), the home repaired, a third Stop, and a last prompt: whether the second exchange
reached the notes, and the lines the agent was told.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

MEMSIFT = Path(sys.executable).parent / "memsift"
# Without these capabilities root obeys file permissions, as any user does.
NO_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]

EXCHANGES = [
    ("The deploy failed again with ENOSPC no space left on device on the build runner",
     "Fixed: the Docker build cache filled /var; root cause was the cache growing without limit. "
     "Added docker builder prune -af to the nightly cron and capped the cache at 20 GB."),
    ("why did we move the queue from Redis to Postgres?",
     "We chose Postgres SKIP LOCKED over Redis for the job queue because Redis lost jobs on failover; "
     "one database also means one backup."),
    ("should the invoices use UTC or local time?",
     "Decision: invoices store UTC timestamps and render in the customer's zone, because the tax "
     "office in Berlin rejected invoices whose dates shifted at midnight."),
]
SESSION = "0b7c6f1e-4d2a-4f7e-9a51-2f3c8e6d1a90"


class Row:
    def __init__(self, memsift: Path, root: Path, home: Path, *, env: dict[str, str] | None = None) -> None:
        self.memsift, self.home = memsift, home
        self.project = root / "shop"
        self.project.mkdir(parents=True, exist_ok=True)
        self.mark = uuid.uuid4().hex
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSIFT_")}
        self.env.update(HOME=str(root / "user"), MEMSIFT_HOME=str(home), DURABILITY_ROW=self.mark, **(env or {}))
        self.prefix: list[str] = []
        self.told: list[str] = []

    def hook(self, event: str, payload: dict) -> subprocess.CompletedProcess[bytes]:
        command = [*self.prefix, sys.executable, str(self.memsift), "hook", "claude-code", event]
        done = subprocess.run(command, input=json.dumps(payload).encode(), capture_output=True,
                              cwd=self.project, env=self.env, timeout=120)
        self.wait_detached()
        return done

    def stop(self, number: int) -> None:
        user, answer = EXCHANGES[number]
        transcript = self.project.parent / f"t{number}.jsonl"
        transcript.write_text(json.dumps({"type": "user", "isSidechain": False,
                                          "message": {"role": "user", "content": user}}) + "\n")
        self.hook("Stop", {"session_id": SESSION, "cwd": str(self.project), "hook_event_name": "Stop",
                           "stop_hook_active": False, "last_assistant_message": answer,
                           "transcript_path": str(transcript)})

    def prompt(self, text: str) -> str:
        done = self.hook("UserPromptSubmit", {"session_id": SESSION, "cwd": str(self.project),
                                              "hook_event_name": "UserPromptSubmit", "prompt": text,
                                              "transcript_path": str(self.project / "none.jsonl")})
        told = json.loads(done.stdout).get("systemMessage", "") if done.stdout.strip() else ""
        line = told or (f"(stderr) {done.stderr.decode().strip()}" if done.stderr.strip() else "")
        self.told.append(line)
        return line

    def wait_detached(self, limit: float = 60.0) -> None:
        """Until no process carries this row's mark: the detached Stop and SessionEnd children are done."""
        end = time.monotonic() + limit
        while time.monotonic() < end and any(self._marked(pid) for pid in os.listdir("/proc") if pid.isdigit()):
            time.sleep(0.1)

    def _marked(self, pid: str) -> bool:
        with contextlib.suppress(OSError):
            return f"DURABILITY_ROW={self.mark}".encode() in Path(f"/proc/{pid}/environ").read_bytes()
        return False

    def notes(self) -> str:
        found = list(self.home.glob("projects/*/notes.md"))
        return found[0].read_text(errors="replace") if found else ""


@contextlib.contextmanager
def tmpfs(folder: Path, size: str = "256k") -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(folder)], check=True)
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> None:
    subprocess.run(["dd", "if=/dev/zero", f"of={folder / 'filler'}", "bs=4k"], capture_output=True)


def run_row(name: str, memsift: Path, root: Path, breaks: Callable[[Row], Callable[[], None]],
            *, home: Path | None = None) -> dict[str, object]:
    row = Row(memsift, root, home or root / "home")
    row.stop(0)
    kept_before = EXCHANGES[0][1][:20] in row.notes() or "docker builder prune" in row.notes()
    repair = breaks(row)
    row.stop(1)
    first, second = row.prompt("ok thanks"), row.prompt("why did we pick Postgres for the queue?")
    repair()
    row.prefix = []
    row.stop(2)
    row.hook("SessionEnd", {"session_id": SESSION, "cwd": str(row.project), "hook_event_name": "SessionEnd"})
    after = row.prompt("ok")
    notes = row.notes()
    return {"row": name, "first kept": kept_before, "told (quiet prompt)": first, "told (searching prompt)": second,
            "told after repair": after, "broken-time exchange in notes": "SKIP LOCKED" in notes,
            "later exchange in notes": "UTC" in notes}


def full_disk(memsift: Path, root: Path) -> dict[str, object]:
    with tmpfs(root / "mnt") as mount:
        def breaks(row: Row) -> Callable[[], None]:
            fill(mount)
            return lambda: (mount / "filler").unlink()
        return run_row("home on a full tmpfs (size=256k)", memsift, root, breaks, home=mount / "memsift")


def read_only(memsift: Path, root: Path) -> dict[str, object]:
    with tmpfs(root / "mnt") as mount:
        def breaks(row: Row) -> Callable[[], None]:
            subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
            return lambda: subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True) and None
        return run_row("home on a tmpfs remounted ro", memsift, root, breaks, home=mount / "memsift")


def home_not_writable(memsift: Path, root: Path) -> dict[str, object]:
    def breaks(row: Row) -> Callable[[], None]:
        row.prefix = NO_OVERRIDE
        row.home.chmod(0o500)
        return lambda: row.home.chmod(0o700)
    return run_row("home chmod 0500 (hook without CAP_DAC_OVERRIDE)", memsift, root, breaks)


def project_not_writable(memsift: Path, root: Path) -> dict[str, object]:
    def breaks(row: Row) -> Callable[[], None]:
        row.prefix = NO_OVERRIDE
        [folder] = row.home.glob("projects/*")
        folder.chmod(0o500)
        return lambda: folder.chmod(0o700)
    return run_row("project folder chmod 0500 (hook without CAP_DAC_OVERRIDE)", memsift, root, breaks)


def detached_failure(memsift: Path, root: Path) -> dict[str, object]:
    """The store first fails in the detached Stop child: is the session told at its next prompts?"""
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    row = Row(memsift, root, root / "home", env={"MEMSIFT_STORE": "cognee",
                                                  "MEMSIFT_COGNEE_URL": f"http://127.0.0.1:{port}"})
    row.stop(1)
    lines = [row.prompt("why did we pick Postgres for the queue?"), row.prompt("and what about Redis then?"),
             row.prompt("ok")]
    return {"row": "Cognee down, first seen by the detached Stop", "told at prompts 1, 2, 3": lines}


ROWS = {"full": full_disk, "ro": read_only, "home-perm": home_not_writable, "project-perm": project_not_writable,
        "detached": detached_failure}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", choices=[[], *ROWS], default=[])
    parser.add_argument("--memsift", type=Path, default=MEMSIFT, help="the console script to run (another checkout's)")
    ns = parser.parse_args()
    if os.geteuid() != 0:
        print("durability_rows: needs root (tmpfs mounts, setpriv)", file=sys.stderr)
        return 2
    for name in ns.rows or ROWS:
        with tempfile.TemporaryDirectory(prefix=f"durability-{name}-") as folder:
            print(json.dumps(ROWS[name](ns.memsift, Path(folder)), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
