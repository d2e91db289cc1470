"""The ``memsift`` command: bench, recall, brief, retain, redact, hook, install, uninstall, notes, search,
show, doctor, serve."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from ..errors import MemsiftError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any

    from ..bench import LoopScenario, Scenario, StoreFactory
    from ..config import Config
    from ..services import Services
    from ..types import Brief, Recall


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:  # ``memsift doctor | head``: the reader left, which is not an error
        _silence_stdout()
        return 0


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush does not fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _main(args: list[str]) -> int:
    if args[:1] == ["redact"]:  # its own small parser, and nothing else to import
        from ..redact import main as redact_main

        if args[1:] in ([], ["-"]):
            _reading("redact", "the text to redact")
        return redact_main(args[1:])
    if args[:1] == ["hook"]:  # every message of an agent comes here: no parser, nothing else imported
        try:
            from memsift_adapters.hook import main as hook_main
        except Exception as exc:  # a broken install must not break the agent either
            print(f"memsift: cannot run the hook: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 0
        return hook_main(args[1:])
    parser = _parser()
    if not args:
        print(_commands())
        return 0
    ns = parser.parse_args(args)
    try:
        code: int = ns.run(ns)
        return code
    except MemsiftError as exc:
        from ..screen import terminal_safe

        print(terminal_safe(f"memsift: {exc}"), file=sys.stderr)
        return 2
    except BrokenPipeError:
        raise
    except Exception as exc:  # one line, never a traceback: a damaged file must not read like a crash
        from ..screen import terminal_safe

        print(terminal_safe(f"memsift: {type(exc).__name__}: {' '.join(str(exc).split())[:300]}"), file=sys.stderr)
        return 1


DESCRIPTION = "Sort a coding agent's memory: what to add to a message, what to keep."
COMMANDS = {  # each command's line in `memsift` alone and in its --help
    "bench": "replay scenarios: what memory added, beside adding on every message",
    "recall": "what memory would add to one message (read on stdin)",
    "brief": "what a session of this project starts with: its memory, chosen to fit a budget",
    "retain": "decide whether one exchange is kept (JSON {user, assistant} on stdin)",
    "redact": "print FILE (or stdin) with credentials redacted",
    "hook": "run one hook of an agent: memsift hook claude-code|codex EVENT (payload on stdin)",
    "install": "add memsift's hooks to Claude Code's or Codex's settings",
    "uninstall": "take memsift's hooks out of Claude Code's or Codex's settings",
    "notes": "print the project's notes and where they are",
    "search": "search the project's notes and the store (for the agent itself)",
    "show": "print what a pointer names: a note line (notes.md:4), a kept fact with its exchange (ex-3f2a9c1b)",
    "doctor": "can memory work here: settings, services, hooks, last decisions",
    "serve": "the warm model server hooks reach (started by them when needed)",
}


def _commands() -> str:
    """What ``memsift`` alone prints: the commands, one line each."""
    width = max(map(len, COMMANDS))
    return "\n".join([f"memsift: {DESCRIPTION[0].lower()}{DESCRIPTION[1:]}", "", "commands:",
                      *(f"  {name:<{width}}  {does}" for name, does in COMMANDS.items()), "",
                      "memsift COMMAND --help says more; docs/agents.md sets up Claude Code and Codex."])


def _parser() -> argparse.ArgumentParser:
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="memsift", description=DESCRIPTION)
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"memsift {__version__}")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")

    bench = sub.add_parser("bench", help=COMMANDS["bench"])
    bench.add_argument("scenarios", nargs="+", type=Path, metavar="SCENARIO")
    bench.add_argument("--pipeline", choices=["memsift", "memsift-lexical", "every-message"],
                       help="one pipeline (default: all, side by side, in the same run)")
    bench.add_argument("--json", action="store_true", help="print JSON, one object per pipeline (see docs/bench.md)")
    bench.add_argument("--store", choices=["embedded", "cognee"], default="embedded")
    bench.add_argument("--cognee-url", help="the Cognee server, with --store cognee")
    bench.set_defaults(run=_bench)

    recall = sub.add_parser("recall", help=COMMANDS["recall"])
    _project_args(recall)
    recall.add_argument("--conversation", type=Path,
                        help="JSON list of {role, text} turns before the message, oldest first")
    recall.add_argument("--json", action="store_true", help="print the result and its trace as JSON")
    recall.set_defaults(run=_recall)

    brief = sub.add_parser("brief", help=COMMANDS["brief"])
    _project_args(brief)
    brief.add_argument("--budget", type=int, metavar="CHARS", help="characters (default: brief_chars, 2000)")
    brief.add_argument("--focus", metavar="WORDS",
                       help="what is in play, preferred (default: the branch checked out in the project)")
    brief.add_argument("--json", action="store_true", help="print the result and its trace as JSON")
    brief.set_defaults(run=_brief)

    retain = sub.add_parser("retain", help=COMMANDS["retain"])
    _project_args(retain)
    retain.set_defaults(run=_retain)

    sub.add_parser("redact", help=COMMANDS["redact"])
    sub.add_parser("hook", help=COMMANDS["hook"])

    for name in ("install", "uninstall"):
        command = sub.add_parser(name, help=COMMANDS[name])
        command.add_argument("agent", choices=["claude-code", "codex"])
        command.add_argument("--project", type=_folder_path, metavar="DIR",
                             help="that project's settings (default: the user's, for every project)")
        if name == "install":
            command.add_argument("--trust", action="store_true",
                                 help="codex: also trust the hooks in $CODEX_HOME/config.toml, as /hooks would")
        command.set_defaults(run=_install, action=name)

    notes = sub.add_parser("notes", help=COMMANDS["notes"])
    notes.add_argument("--project", default=".", type=_folder, help="a folder of the project (default: here)")
    fix = notes.add_mutually_exclusive_group()
    fix.add_argument("--restore", action="store_true",
                     help="append again memsift's lines another program's write removed (memsift doctor lists them)")
    fix.add_argument("--forget-missing", action="store_true",
                     help="agree those lines are gone: memsift doctor no longer lists them")
    notes.set_defaults(run=_notes)

    search = sub.add_parser("search", help=COMMANDS["search"])
    search.add_argument("query", nargs="+")
    search.add_argument("--project", default=".", type=_folder, help="a folder of the project (default: here)")
    search.add_argument("--limit", type=int, default=5, help="at most this many of each (default 5)")
    search.set_defaults(run=_search)

    show = sub.add_parser("show", help=COMMANDS["show"])
    show.add_argument("id", metavar="POINTER", help="a pointer memsift printed: notes.md:4 (a line of the notes), "
                                                    "ex-3f2a9c1b (a kept fact, with its whole exchange)")
    show.add_argument("--project", default=".", type=_folder, help="a folder of the project (default: here)")
    show.set_defaults(run=_show)

    doctor = sub.add_parser("doctor", help=COMMANDS["doctor"])
    doctor.add_argument("--project", default=".", type=_folder, help="the project root (default: here)")
    doctor.add_argument("--last", type=int, default=5, metavar="N", help="how many decisions to show")
    doctor.add_argument("--json", action="store_true", help="print the report as JSON")
    doctor.set_defaults(run=_doctor)

    serve = sub.add_parser("serve", help=COMMANDS["serve"])
    serve.add_argument("--stop", action="store_true", help="ask the running server to end, and wait for it")
    serve.set_defaults(run=_serve)
    return parser


def _project_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", default=".", type=_folder, help="the project root (default: here)")
    parser.add_argument("--session", default="", help="the agent session, so nothing is given twice")


def _folder(value: str) -> str:
    """``--project``'s value, when it names a folder: memsift makes nothing for a path that is none."""
    import argparse
    import os

    if not os.path.isdir(value):
        raise argparse.ArgumentTypeError(f"{value} is not a folder (a project's folder, or one inside it)")
    return value


def _folder_path(value: str) -> Path:
    from pathlib import Path

    return Path(_folder(value))


def _reading(command: str, what: str) -> None:
    """Say on a terminal that *command* waits for standard input: it is meant to be piped."""
    if sys.stdin.isatty():
        print(f"memsift {command}: reading {what} on standard input (end it with Ctrl-D)", file=sys.stderr)


def _stdin(command: str, what: str, shape: str = "") -> str | None:
    """Standard input (said on a terminal); None, and one line, when it holds nothing."""
    _reading(command, f"the {what}{shape}")
    text = sys.stdin.read()
    if not text.strip():
        print(f"memsift {command}: standard input is empty: no {what}, nothing done", file=sys.stderr)
        return None
    return text


def _bench(ns: argparse.Namespace) -> int:
    from attrs import evolve

    from ..bench import bench_pipeline, embedded_store, format_table, legend, load_scenario, semantic_on
    from ..config import load_config

    config = load_config()
    make_store: StoreFactory = embedded_store
    if ns.store == "cognee":
        if ns.cognee_url:
            config = evolve(config, cognee_url=ns.cognee_url)
        make_store = _cognee_bench_store(config)
    scenarios = [load_scenario(path) for path in ns.scenarios]
    semantic = semantic_on(config)
    pipelines = [ns.pipeline] if ns.pipeline else \
        ["memsift", *(["memsift-lexical"] if semantic else []), "every-message"]
    remote = config.decider != "embedded" or bool(config.decider_by_task)
    results = [bench_pipeline(name, scenarios, config, make_store, with_cost=remote) for name in pipelines]
    if "memsift" in pipelines and remote:
        results.insert(1, _bench_remote(config, scenarios, make_store))  # beside the embedded decider
    if ns.json:
        for result in results:
            print(json.dumps(result))
    else:
        print(format_table(results))
        print("\n" + legend([r["pipeline"] for r in results], semantic))
    return 0


def _bench_remote(config: Config, scenarios: Sequence[Scenario | LoopScenario],
                  make_store: StoreFactory) -> dict[str, Any]:
    """The memsift pipeline on the configured remote decider, as a column of its own."""
    from ..bench import bench_pipeline
    from ..config import THRESHOLD_TASKS
    from ..decider.backends import decider_for

    label = "+".join(sorted({config.backend_for(task) for task in set(THRESHOLD_TASKS.values())}))
    return bench_pipeline("memsift", scenarios, config, make_store, decider=decider_for(config),
                          label=f"memsift/{label}", with_cost=True)


def _cognee_bench_store(config: Config) -> StoreFactory:
    """Each scenario gets a dataset of its own on the server, named for the run."""
    import os

    from attrs import evolve

    from ..stores.cognee import CogneeStore

    def make(scenario: Scenario | LoopScenario, folder: Path) -> CogneeStore:
        name = f"memsift-bench-{scenario.id}-{os.getpid()}-{folder.name}"
        return CogneeStore.from_config(evolve(config, dataset=name), folder)

    return make


def _doctor(ns: argparse.Namespace) -> int:
    from .doctor import diagnose, format_report

    report = diagnose(ns.project, last=ns.last)
    print(report.as_json() if ns.json else format_report(report))  # JSON escapes what a terminal would act on
    return 0 if report.healthy else 1


def _serve(ns: argparse.Namespace) -> int:
    from ..config import load_config
    from ..semantic import _serve as serving

    config = load_config()
    if ns.stop:
        stopped = serving.stop(config.home)
        print("memsift serve: stopped" if stopped else "memsift serve: no server was running")
        return 0
    from .._hooks.served import answer_recall

    return serving.serve(config, recall=answer_recall)


def _services(ns: argparse.Namespace) -> Services:
    """The project's services, once its memory files are the user's own (``NotYours`` otherwise)."""
    from .._hooks.guarded import open_trusted, settings_loaded
    from .._runtime.health import Health

    services = open_trusted(ns.project)
    settings_loaded(Health(services.config.home))  # or recall would tell a hook's stale "memory off" while it works
    return services


def _recall(ns: argparse.Namespace) -> int:
    from ..pipeline import recall
    from ..types import Message, Turn

    turns: list[Turn] = []
    if ns.conversation:
        try:
            raw = json.loads(_read_conversation(ns.conversation))
            turns = [Turn(t["role"], t["text"]) for t in raw]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            print(f"memsift: cannot read the conversation from {ns.conversation}: {exc}", file=sys.stderr)
            return 2
    text = _stdin("recall", "message")
    if text is None:
        return 0
    result = recall(Message(text, tuple(turns), ns.session), _services(ns))
    return _print_result(result, as_json=ns.json)


def _brief(ns: argparse.Namespace) -> int:
    from .._fs.project import branch
    from ..pipeline import brief

    if ns.budget is not None and ns.budget < 0:
        print("memsift: --budget is a number of characters: 0 (no brief) or more", file=sys.stderr)
        return 2
    focus = branch(ns.project) if ns.focus is None else ns.focus
    result = brief(_services(ns), session=ns.session, focus=focus, budget=ns.budget)
    return _print_result(result, as_json=ns.json)


def _print_result(result: Recall | Brief, *, as_json: bool) -> int:
    """A recall's or a brief's text on stdout (its notice first), its trace on stderr, each escaped for a
    terminal; or all of it as JSON."""
    from attrs import asdict

    from ..screen import terminal_safe

    if as_json:
        print(json.dumps(asdict(result), default=str, indent=1))
        return 0
    if result.notice:
        print(terminal_safe(result.notice))
    if result.text:
        print(terminal_safe(result.text, lines=True))
    print(terminal_safe(f"\n# stopped by {result.stopped_by}", lines=True), file=sys.stderr)
    for step in result.trace:
        score = "" if step.score is None else f" p={step.score:.2f}"
        why = f" ({step.why})" if step.why else ""
        cost = "" if step.usage is None else (
            f" [{step.usage.questions} asked, {step.usage.tokens_in}/{step.usage.tokens_out} tokens, "
            f"{step.usage.usd:.6f} USD{'' if step.usage.calibrated else ', uncalibrated'}]")
        print(terminal_safe(f"#  {step.stage:<9} {step.verdict}{score}{why}{cost} {step.elapsed * 1000:.2f} ms"),
              file=sys.stderr)
    return 0


CONVERSATION_BYTES = 4 * 1024 * 1024  # as much of a transcript as the hooks read


def _read_conversation(path: Path) -> bytes:
    """The file's bytes: a regular file (a FIFO would hang, ``/dev/zero`` never end) of bounded size."""
    from .._fs.files import read_regular

    data = read_regular(path, CONVERSATION_BYTES + 1)
    if len(data) > CONVERSATION_BYTES:
        raise ValueError(f"it is larger than {CONVERSATION_BYTES >> 20} MiB")
    return data


def _retain(ns: argparse.Namespace) -> int:
    from attrs import asdict

    from ..pipeline import retain
    from ..types import Exchange

    text = _stdin("retain", "exchange", ' as JSON {"user": ..., "assistant": ...}')
    if text is None:
        return 0
    try:
        raw = json.loads(text)
        exchange = Exchange(raw["user"], raw["assistant"], ns.session)
    except (ValueError, KeyError, TypeError) as exc:
        print(f"memsift: expected JSON {{\"user\": ..., \"assistant\": ...}} on stdin: {exc}", file=sys.stderr)
        return 2
    result = retain(exchange, _services(ns))
    print(json.dumps(asdict(result), default=str, indent=1))
    return 0


def _install(ns: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from ..config import default_home
    from .install import install, uninstall

    home, memsift_home = Path.home(), default_home(os.environ)
    if ns.action == "install":
        print(install(ns.agent, home=home, memsift_home=memsift_home, project=ns.project, trust=ns.trust))
    else:
        print(uninstall(ns.agent, home=home, memsift_home=memsift_home, project=ns.project))
    return 0


def _notes(ns: argparse.Namespace) -> int:
    from .search import print_notes

    return print_notes(ns.project, restore=ns.restore, forget=ns.forget_missing)


def _search(ns: argparse.Namespace) -> int:
    from .search import print_search

    return print_search(" ".join(ns.query), ns.project, limit=ns.limit)


def _show(ns: argparse.Namespace) -> int:
    from .search import print_source

    return print_source(ns.id, ns.project)
