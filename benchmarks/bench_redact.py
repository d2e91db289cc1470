"""Redaction benchmark: memsift against detect-secrets on the same corpus, in the same run.

    python benchmarks/bench_redact.py [--json] [--full]

Recall is the share of credentials fully removed: no 12-character run of the
secret (all of it, when shorter) is left in the output. Look-alikes touched
is the share of harmless texts that come back changed. The corpus's known
misses (credentials with no prefix and no telling name, listed in
docs/privacy.md) are scored apart.

detect-secrets 1.5.0 runs with its default plugins and filters, the way
`detect-secrets scan` does: each corpus entry is written to its own temporary
file and scanned with `scan_file`. It reports findings, not redacted text,
so it is scored two ways:

- removed: every line with a finding is dropped whole. This is generous: a
  finding's `secret_value` is often only part of the secret (for a GitHub
  token it is `ghp`), so removing reported values instead would score lower.
- flagged: the entry has any finding at all; an upper bound for any
  redactor built on its findings. A private key is flagged on its BEGIN line
  while its body lines carry no finding, so it is flagged but not removed.

A look-alike counts as touched by detect-secrets when it has any finding.

Throughput is measured on the corpus (credentials and look-alikes) repeated
to 5 MB; detect-secrets, more than ten times slower, on its first 1 MB
unless `--full` is given. The whole-process cost is the wall time of a fresh
`python -c "from memsift.redact import redact; redact(MESSAGE)"` minus that of
`python -c pass`, with bytecode cached as an installed package has it; the
probe also times its own steps.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from memsift.redact import redact  # noqa: E402
from redaction_corpus import CREDENTIALS, KNOWN_MISSES, LOOK_ALIKES  # noqa: E402

MESSAGE = (
    "Can you check why the checkout test fails after I renamed the user model? It worked yesterday on main; "
    "the error is a KeyError in serializers.py line 88, see the traceback above."
)
SECRET_MESSAGE = (
    "deploy fails with 401; my .env has DATABASE_URL=postgres://app:Sup3rS3cret!@db.internal:5432/shop and "
    "OPENAI_API_KEY=sk-proj-4fT9kQ2mZx8LwP1vR7bN3cY6dJ0sHaUeGiKo4fT9kQ2mZx8L, is the key wrong?"
)
MB = 1_000_000


def survives(secret: str, text: str) -> bool:
    """Whether any 12-character run of the secret (all of it, when shorter) is still in the text."""
    width = min(12, len(secret))
    return any(secret[i : i + width] in text for i in range(len(secret) - width + 1))


def mixed_text(size: int) -> str:
    unit = "\n\n".join([c.text for c in CREDENTIALS] + [a.text for a in LOOK_ALIKES]) + "\n\n"
    return (unit * (size // len(unit) + 1))[:size]


def megabytes_per_second(size: int, seconds: float) -> float:
    return size / MB / seconds


# --- memsift -----------------------------------------------------------------------------


def memsift_scores() -> dict[str, float]:
    removed = sum(not survives(c.secret, redact(c.text)) for c in CREDENTIALS)
    touched = sum(redact(a.text) != a.text for a in LOOK_ALIKES)
    limits = sum(not survives(c.secret, redact(c.text)) for c in KNOWN_MISSES)
    return {"recall": removed / len(CREDENTIALS), "touched": touched / len(LOOK_ALIKES),
            "known_misses_removed": limits}


def memsift_throughput(text: str) -> float:
    started = time.perf_counter()
    redact(text)
    return megabytes_per_second(len(text), time.perf_counter() - started)


def process_cost(runs: int = 15) -> dict[str, float]:
    """Medians over fresh interpreters that import the redactor and redact a message, then one with secrets.

    `re` and the `memsift` package are timed apart: the hook that calls the
    redactor has imported both already (`json` imports `re`).
    """
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    probe = (
        "import time; t0 = time.perf_counter(); import re; t1 = time.perf_counter(); import memsift;"
        " t2 = time.perf_counter(); from memsift.redact import redact; t3 = time.perf_counter();"
        f" redact({MESSAGE!r}); t4 = time.perf_counter(); redact({SECRET_MESSAGE!r}); t5 = time.perf_counter();"
        " print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)"
    )
    with tempfile.TemporaryDirectory() as cache:
        environment.update(PYTHONPYCACHEPREFIX=cache, PYTHONPATH=str(ROOT))

        def wall(code: str) -> tuple[float, str]:
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                                  check=True)
            return time.perf_counter() - started, done.stdout

        wall(probe)  # writes the bytecode cache
        # Interleaved, so that a change in the machine's load hits all three alike.
        rounds = [(wall("pass")[0], wall("import re")[0], wall(probe)) for _ in range(runs)]
    inside = [[float(field) for field in out.split()] for _, _, (_, out) in rounds]

    def median_ms(values: Iterable[float]) -> float:
        return 1000 * statistics.median(values)

    return {
        "bare_interpreter_ms": median_ms(bare for bare, _, _ in rounds),
        "process_ms": median_ms(probe - bare for bare, _, (probe, _) in rounds),
        "process_after_re_ms": median_ms(probe - with_re for _, with_re, (probe, _) in rounds),
        "re_import_ms": median_ms(fields[0] for fields in inside),
        "package_import_ms": median_ms(fields[1] for fields in inside),
        "import_ms": median_ms(fields[2] for fields in inside),
        "first_call_ms": median_ms(fields[3] for fields in inside),
        "first_secret_call_ms": median_ms(fields[4] for fields in inside),
    }


# --- detect-secrets ------------------------------------------------------------------------


def detect_secrets_findings(text: str, directory: str) -> list[int]:
    """Line numbers (1-based) of detect-secrets' findings in the text, scanned as a file."""
    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    path = os.path.join(directory, "pasted.txt")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    with default_settings():
        return [finding.line_number for finding in scan_file(path)]


def without_lines(text: str, line_numbers: list[int]) -> str:
    drop = set(line_numbers)
    return "\n".join(line for number, line in enumerate(text.split("\n"), start=1) if number not in drop)


def detect_secrets_scores() -> dict[str, float]:
    with tempfile.TemporaryDirectory() as directory:

        def removes(credential) -> bool:
            lines = detect_secrets_findings(credential.text, directory)
            return not survives(credential.secret, without_lines(credential.text, lines))

        flagged = sum(bool(detect_secrets_findings(c.text, directory)) for c in CREDENTIALS)
        return {
            "recall": sum(map(removes, CREDENTIALS)) / len(CREDENTIALS),
            "flagged": flagged / len(CREDENTIALS),
            "touched": sum(bool(detect_secrets_findings(a.text, directory)) for a in LOOK_ALIKES) / len(LOOK_ALIKES),
            "known_misses_removed": sum(map(removes, KNOWN_MISSES)),
        }


def detect_secrets_throughput(text: str) -> float:
    with tempfile.TemporaryDirectory() as directory:
        started = time.perf_counter()
        detect_secrets_findings(text, directory)
        return megabytes_per_second(len(text), time.perf_counter() - started)


def detect_secrets_version() -> str | None:
    try:
        from detect_secrets.__version__ import VERSION
    except ImportError:
        return None
    return VERSION


# --- report ----------------------------------------------------------------------------------


def run(full: bool) -> dict[str, object]:
    text = mixed_text(5 * MB)
    report: dict[str, object] = {
        "corpus": {
            "credentials": len(CREDENTIALS),
            "formats": len({c.format for c in CREDENTIALS}),
            "look_alikes": len(LOOK_ALIKES),
            "known_misses": len(KNOWN_MISSES),
        },
        "memsift": {**memsift_scores(), "mb_per_s": memsift_throughput(text), "measured_on_mb": len(text) / MB},
        "memsift_process": process_cost(),
    }
    version = detect_secrets_version()
    if version is not None:
        sample = text if full else text[:MB]
        report["detect_secrets"] = {
            **detect_secrets_scores(),
            "mb_per_s": detect_secrets_throughput(sample),
            "measured_on_mb": len(sample) / MB,
            "version": version,
        }
    return report


def table(report: dict[str, object]) -> str:
    corpus, ours, cost = report["corpus"], report["memsift"], report["memsift_process"]
    theirs = report.get("detect_secrets")
    rows = [
        (f"corpus: {corpus['credentials']} credentials in {corpus['formats']} formats, "
        f"{corpus['look_alikes']} look-alikes"),
        "",
        f"{'':28}{'recall':>10}{'flagged':>10}{'look-alikes':>13}{'MB/s':>9}  measured on",
        (f"{'memsift':28}{ours['recall']:>10.1%}{'':>10}{ours['touched']:>13.1%}"
        f"{ours['mb_per_s']:>9.2f}  {ours['measured_on_mb']:.0f} MB"),
    ]
    if theirs:
        rows.append(
            f"{'detect-secrets ' + theirs['version']:28}{theirs['recall']:>10.1%}{theirs['flagged']:>10.1%}"
            f"{theirs['touched']:>13.1%}{theirs['mb_per_s']:>9.3f}  {theirs['measured_on_mb']:.0f} MB"
        )
    else:
        rows.append("detect-secrets              not installed (pip install 'memsift[bench]')")
    limits = f"memsift {ours['known_misses_removed']}"
    if theirs:
        limits += f", detect-secrets {theirs['known_misses_removed']}"
    rows += [
        f"known misses removed (of {corpus['known_misses']}, scored apart): {limits}",
        "",
        f"memsift whole-process cost of import + first redact() of a {len(MESSAGE)}-character message,",
        f"  wall time over a bare interpreter ({cost['bare_interpreter_ms']:.1f} ms): {cost['process_ms']:.1f} ms;"
        f" over one that imported re: {cost['process_after_re_ms']:.1f} ms",
        f"  inside the process: import re {cost['re_import_ms']:.2f} ms, import memsift (the package)"
        f" {cost['package_import_ms']:.2f} ms, import memsift.redact {cost['import_ms']:.2f} ms,",
        f"  first redact() {cost['first_call_ms']:.2f} ms; then a {len(SECRET_MESSAGE)}-character message with two"
        f" credentials (compiles their rules) {cost['first_secret_call_ms']:.2f} ms",
    ]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--full", action="store_true", help="time detect-secrets on the whole 5 MB, not 1 MB")
    arguments = parser.parse_args(argv)
    report = run(arguments.full)
    print(json.dumps(report, indent=2) if arguments.json else table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
