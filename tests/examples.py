"""Example exchanges shared by the tests: written by us, not from any scenario."""

from memsift.types import Exchange

INCIDENT = Exchange(
    "the nightly export job crashed with an out of memory error, can you find out why?",
    "The export loaded the whole orders table into memory with fetchall(). I switched it to a "
    "server-side cursor that streams 5000 rows at a time; memory stays under 200 MB now.")
