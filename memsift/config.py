"""Where memsift keeps its files and which services it talks to.

Everything works with nothing configured: the embedded decider, the notes file
and the embedded store. Settings come from, lowest to highest priority: the
defaults below, ``<home>/config.toml``, then ``MEMSIFT_*`` environment
variables.

>>> cfg = load_config({"MEMSIFT_HOME": "/tmp/m", "MEMSIFT_STORE": "cognee"})
>>> cfg.store
'cognee'
>>> cfg.project_dir("/src/shop")   # one folder per project root
PosixPath('/tmp/m/projects/shop-<8 hex digits of the path's hash>')
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import evolve, fields, frozen

from .errors import ConfigurationError
from ._fs.home import default_home as default_home
from ._fs.home import project_folder
from ._words.kinds import SEARCH_THRESHOLD


@frozen
class Config:
    home: Path
    store: str = "embedded"  # "embedded" | "cognee"
    cognee_url: str = "http://127.0.0.1:8000"
    cognee_api_key: str | None = None
    cognee_user: str | None = None
    cognee_password: str | None = None
    dataset: str = "memsift"
    decider: str = "embedded"  # "embedded" | "systemone" | "openai" | "anthropic" (docs/deciders.md)
    decider_url: str = "https://api.typesafe.ai/v1/systemone"  # for openai/anthropic: a base URL ending in /v1
    decider_api_key: str | None = None
    decider_model: str = "jev-1.13.0"
    decider_by_task: str | None = None  # "answers=openai,keep=openai": a backend per question task
    decider_price_in: float = 0.0  # USD per million tokens sent to the decider
    decider_price_out: float = 0.0  # ... and received from it
    # "lexical" until the semantic judge's head is calibrated on memory memsift writes: measured on the
    # development scenarios it adds more for nothing than the lexical judge (docs/deciders.md). "semantic"
    # turns it on; "auto", on when the [semantic] extra is installed.
    judge: str = "lexical"  # "lexical" | "semantic" | "auto"
    embedding_model: str | None = None  # a folder with model.onnx and tokenizer.json; None: the packaged one
    serve_idle: float = 300.0  # seconds: the warm model server (memsift serve) ends after this long unused
    reviser: str = "duplicates"  # "duplicates" | "openai" | "anthropic" (a model names the edits)
    revise_interval: float = 600.0  # seconds: the model reviser runs at most this often per project
    # Deadlines, in seconds (the article's: decider 2 s, store search 12 s).
    decider_deadline: float = 2.0
    store_deadline: float = 12.0
    connect_timeout: float = 0.5
    breaker_cooldown: float = 30.0
    # Decision thresholds on calibrated probabilities; tune per project.
    search_threshold: float = SEARCH_THRESHOLD  # summed probability of the six searching kinds
    answers_threshold: float = 0.7
    # A message that asks about memory itself (an earlier choice, an earlier session, work left
    # off) can only be answered from memory: its best match is worth adding at a lower bar.
    asked_threshold: float = 0.5
    # The same two bars for a passage of the store: judged on other memory (facts kept whole with
    # their exchange, passages from elsewhere), calibrated apart (docs/training.md).
    store_answers_threshold: float = 0.7
    store_asked_threshold: float = 0.5
    settled_threshold: float = 0.8  # a note this sure ends the search: the store is not asked...
    settled_margin: float = 0.15  # ...when it leads the next note by this much
    worth_threshold: float = 0.3
    keep_threshold: float = 0.5
    fact_threshold: float = 0.5  # a second clause joins a kept line's best one this sure
    novel_threshold: float = 0.5  # a new line restates or updates a note this sure
    # An exchange whose answer's words (weighted by their rarity in the notes) one note's fact and
    # keys already hold at this share applies what that note says: not kept again.
    known_share: float = 0.35
    # The same of a note this session was given (by its brief or recall): the agent just read it.
    applied_share: float = 0.2
    repeat_threshold: float = 0.85  # an item this session was given comes again only this sure
    said_share: float = 0.6  # an item whose words one turn already holds at this share is not added
    # Characters of the session brief (its header included): the facts chosen for a session as it
    # starts, resumes or is compacted. 0 turns it off.
    brief_chars: int = 2000
    max_items: int = 1  # the best item only: on the dev scenarios a second was needed 1 time in 3
    search_limit: int = 5
    # Notes files longer than this many lines are narrowed to their best full-text matches
    # before judging (0: always), so a searching message costs about the same at any size.
    narrow_notes_above: int = 300
    narrowed_notes: int = 50  # the notes ranked once narrowed
    judged_notes: int = 3  # the notes ranked first (BM25 over each fact and its keys) that the judge weighs

    @property
    def decider_price(self) -> tuple[float, float]:
        """US dollars per million tokens sent and received."""
        return (self.decider_price_in, self.decider_price_out)

    def backend_for(self, task: str) -> str:
        """The backend that answers questions of ``task``: its ``decider_by_task`` entry, else ``decider``."""
        return task_routes(self.decider_by_task or "").get(task, self.decider)

    def project_dir(self, root: str | os.PathLike[str]) -> Path:
        """The folder holding the notes and embedded store of the project at ``root``."""
        return project_folder(self.home, root)


# Environment variable -> field; every field but ``home`` can be set this way.
_ENV = {f"MEMSIFT_{f.name.upper()}": f.name for f in fields(Config) if f.name != "home"}


def unknown_settings(environ: Mapping[str, str] | None = None) -> list[str]:
    """One line for each name that is no setting, with the closest one there is: the ``MEMSIFT_*``
    variables of ``environ`` (``os.environ`` when None), then the keys of ``config.toml`` (its
    ``[backend]`` tables' too). Each is ignored: memory works with the settings that are named
    right. [] when every name is known, or when ``config.toml`` does not read (``load_config`` says
    why).

    >>> unknown_settings({"MEMSIFT_ANSWER_THRESHOLD": "0.9"})
    ['MEMSIFT_ANSWER_THRESHOLD is not a memsift setting (did you mean MEMSIFT_ANSWERS_THRESHOLD?), ignored']
    >>> unknown_settings({"MEMSIFT_HOME": "/tmp/m"})   # config.toml: jugde = "semantic"
    ['/tmp/m/config.toml: jugde is not a memsift setting (did you mean judge?), ignored']
    """
    environ = os.environ if environ is None else environ
    lines = [_unknown(var, [*_ENV, "MEMSIFT_HOME"], "a memsift setting", cutoff=0.8)
             for var in sorted(environ) if var.startswith("MEMSIFT_") and var not in _ENV and var != "MEMSIFT_HOME"]
    config_file = default_home(environ) / "config.toml"
    try:
        settings = _read_toml(config_file) if config_file.is_file() else {}
    except ConfigurationError:
        return lines
    known = [*_ENV.values(), *BACKENDS]
    lines += [f"{config_file}: " + ("home is chosen by MEMSIFT_HOME only (this file is in the home), ignored"
                                    if key == "home" else _unknown(key, known, "a memsift setting"))
              for key in settings if key not in known]
    for backend in BACKENDS:
        table = settings.get(backend)
        if isinstance(table, dict):
            lines += [f"{config_file}: [{backend}] {_unknown(key, list(THRESHOLD_TASKS), 'a threshold')}"
                      for key in table if key not in THRESHOLD_TASKS]
    return lines


def _unknown(name: str, known: list[str], what: str, cutoff: float = 0.6) -> str:
    from difflib import get_close_matches

    close = get_close_matches(name, known, n=1, cutoff=cutoff)
    return f"{name} is not {what}{f' (did you mean {close[0]}?)' if close else ''}, ignored"


def load_config(environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then ``<home>/config.toml``, then the ``MEMSIFT_*`` variables of ``environ``
    (``os.environ`` when None).

    >>> load_config({"MEMSIFT_HOME": "/tmp/m", "MEMSIFT_DECIDER_DEADLINE": "1.5"}).decider_deadline
    1.5
    """
    environ = os.environ if environ is None else environ
    config = Config(home=default_home(environ))
    settings: dict[str, Any] = {}
    config_file = config.home / "config.toml"
    if config_file.is_file():  # a name that is no setting is left out (unknown_settings names it)
        settings.update((name, value) for name, value in _read_toml(config_file).items() if name in _ENV.values()
                        or name in BACKENDS)
    tables = {name: settings.pop(name) for name in BACKENDS if name in settings}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ConfigurationError(f"{config_file}: {name} is a table of thresholds ([{name}]), not {table!r}")
    variables = {name: environ[var] for var, name in _ENV.items() if var in environ}
    # Each value's error names where it is: the file, or the variable.
    config = evolve(config, **{**_coerce(settings, f"{config_file}: "), **_coerce(variables)})
    return evolve(config, **_backend_thresholds(config, tables, environ, f"{config_file}: "))


BACKENDS = ("embedded", "systemone", "openai", "anthropic")
# The question task each threshold is compared with, where its name does not say it (worth_threshold:
# worth). A [backend] table of config.toml sets the thresholds of the tasks that backend answers.
_TASK_OF = {"search_threshold": "kind", "asked_threshold": "answers", "settled_threshold": "answers",
            "store_answers_threshold": "answers", "store_asked_threshold": "answers",
            "settled_margin": "answers", "repeat_threshold": "answers"}
THRESHOLD_TASKS = {f.name: _TASK_OF.get(f.name, f.name.removesuffix("_threshold"))
                   for f in fields(Config) if f.name.endswith("_threshold") or f.name in _TASK_OF}


def _backend_thresholds(config: Config, tables: Mapping[str, Mapping[str, Any]],
                        environ: Mapping[str, str], where: str) -> dict[str, Any]:
    """Thresholds from the table of the backend answering each one's task (the environment still wins;
    a name that is no threshold is left out, ``unknown_settings`` names it)."""
    out: dict[str, Any] = {}
    for name, task in THRESHOLD_TASKS.items():
        table = tables.get(config.backend_for(task), {})
        if name in table and f"MEMSIFT_{name.upper()}" not in environ:
            out.update(_coerce({name: table[name]}, f"{where}[{config.backend_for(task)}] "))
    return out


def task_routes(text: str) -> dict[str, str]:
    """The ``text`` of ``decider_by_task``, ``"answers=openai, keep=openai"``, as
    ``{"answers": "openai", "keep": "openai"}``."""
    routes: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        task, sep, backend = (x.strip() for x in part.partition("="))
        if not sep or not task or backend not in BACKENDS:
            raise ConfigurationError(f"decider_by_task: {part!r} is not task=backend with a backend "
                                     f"among {', '.join(BACKENDS)}")
        routes[task] = backend
    return routes


def setting_sources(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Where each setting's value comes from: ``default``, ``config.toml``, ``config.toml [backend]``
    (a threshold from the table of the backend answering its task) or ``environment`` (``environ``,
    ``os.environ`` when None).

    >>> setting_sources({"MEMSIFT_HOME": "/tmp/m", "MEMSIFT_STORE": "cognee"})["store"]
    'environment'
    """
    environ = os.environ if environ is None else environ
    config = load_config(environ)
    config_file = config.home / "config.toml"
    in_file = _read_toml(config_file) if config_file.is_file() else {}
    sources = {"home": "environment" if environ.get("MEMSIFT_HOME") else "default"}
    for var, name in _ENV.items():
        sources[name] = "environment" if var in environ else "config.toml" if name in in_file else "default"
    for name, task in THRESHOLD_TASKS.items():
        backend = config.backend_for(task)
        if sources[name] != "environment" and name in in_file.get(backend, {}):
            sources[name] = f"config.toml [{backend}]"
    return sources


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc
    return data


def _coerce(settings: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """Turn strings from the environment into each field's type, and check the values; an error
    starts with *where* they come from (a value from the environment names its variable)."""
    defaults = {f.name: f.default for f in fields(Config)}
    out: dict[str, Any] = {}
    for name, value in settings.items():
        default = defaults[name]
        try:
            if isinstance(default, int | float):
                if isinstance(value, bool):
                    raise ValueError("a number is expected")
                number = float(value)
                if isinstance(default, int) and not number.is_integer():
                    raise ValueError("a whole number is expected")
                out[name] = type(default)(number)
            else:
                out[name] = None if value in ("", None) else str(value)
            _check(name, out[name])
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"{where or f'MEMSIFT_{name.upper()}: '}setting {name}={value!r}: {exc}") from exc
        except ConfigurationError as exc:
            raise ConfigurationError(f"{where or f'MEMSIFT_{name.upper()}: '}{exc}") from None
    return out


def _check(name: str, value: Any) -> None:
    if name == "store" and value not in {"embedded", "cognee"}:
        raise ConfigurationError(f"store must be 'embedded' or 'cognee', not {value!r}")
    if name == "decider" and value not in BACKENDS:
        raise ConfigurationError(f"decider must be one of {', '.join(BACKENDS)}, not {value!r}")
    if name == "judge" and value not in {"auto", "semantic", "lexical"}:
        raise ConfigurationError(f"judge must be auto, semantic or lexical, not {value!r}")
    if name == "decider_by_task":
        task_routes(value or "")
    if name == "reviser" and value not in {"duplicates", "openai", "anthropic"}:
        raise ConfigurationError(f"reviser must be duplicates, openai or anthropic, not {value!r}")
    if name.startswith("decider_price") and not 0 <= value < math.inf:
        raise ConfigurationError(f"{name} is US dollars per million tokens: 0 or more, not {value!r}")
    if name == "serve_idle" and not 0 < value < math.inf:
        raise ConfigurationError(f"serve_idle must be a positive number of seconds, not {value!r}")
    if name == "revise_interval" and not 0 <= value < math.inf:
        raise ConfigurationError(f"revise_interval must be 0 or more seconds, not {value!r}")
    if name.endswith(("_deadline", "_timeout", "_cooldown")) and not (0 < value < math.inf):
        raise ConfigurationError(f"{name} must be a positive number of seconds, not {value!r}")
    if name.endswith(("_threshold", "_margin")) and not 0 <= value <= 1:
        raise ConfigurationError(f"{name} is a probability: between 0 and 1, not {value!r}")
    if name.endswith("_share") and not 0 < value <= 1:
        raise ConfigurationError(f"{name} is a share: above 0 and at most 1, not {value!r}")
    if name in {"max_items", "search_limit", "narrowed_notes", "judged_notes"} and value < 1:
        raise ConfigurationError(f"{name} must be at least 1, not {value!r}")
    if name == "brief_chars" and value < 0:
        raise ConfigurationError(f"{name} is a number of characters: 0 (no brief) or more, not {value!r}")
    if name == "narrow_notes_above" and value < 0:
        raise ConfigurationError(f"{name} is a number of lines: 0 or more, not {value!r}")
