"""An editor stand-in: a real process that holds the notes in its buffer and saves them by rename,
as editors do, when told; and the lines memsift writes meanwhile. For tests/test_notes_edits.py
and benchmarks/bench_notes_edits.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MEMSIFTS = [f"2026-11-{n % 28 + 1:02d} decision: the worker{n} batches {n} rows [exchange {n:08x}]" for n in range(64)]
# An editor: reads the notes into its buffer, waits until told (a line on stdin), then saves its
# buffer with one line of the user's added, as editors do: a copy written beside it, renamed over.
EDITOR = """
import os, sys
path = sys.argv[1]
with open(path, "rb") as file:
    buffer = file.read()
print("read", flush=True)
sys.stdin.readline()
with open(path + ".swp", "wb") as copy:
    copy.write(buffer + sys.argv[2].encode() + b"\\n")
os.replace(path + ".swp", path)
"""


class Editor:
    """A real process holding the notes in its buffer, saving them when asked."""

    def __init__(self, path: Path, line: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), line], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline() == "read\n"

    def save(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("save\n")
        self.process.stdin.close()
        assert self.process.wait(timeout=60) == 0
