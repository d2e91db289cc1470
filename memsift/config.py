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

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import evolve, fields, frozen

from .errors import ConfigurationError


@frozen
class Config:
    home: Path
    store: str = "embedded"  # "embedded" | "cognee"
    cognee_url: str = "http://127.0.0.1:8000"
    cognee_api_key: str | None = None
    cognee_user: str | None = None
    cognee_password: str | None = None
    dataset: str = "memsift"
    # Deadlines, in seconds (the article's: decider 2 s, store search 12 s).
    decider_deadline: float = 2.0
    store_deadline: float = 12.0
    connect_timeout: float = 0.5
    breaker_cooldown: float = 30.0
    # Decision thresholds on calibrated probabilities; tune per project.
    search_threshold: float = 0.5  # summed probability of the six searching kinds
    answers_threshold: float = 0.5
    settled_threshold: float = 0.8  # a note this sure ends the search: the store is not asked
    worth_threshold: float = 0.3
    keep_threshold: float = 0.5
    repeat_threshold: float = 0.85  # an item this session was given comes again only this sure
    max_items: int = 3
    search_limit: int = 5

    def project_dir(self, root: str | os.PathLike[str]) -> Path:
        """The folder holding one project's notes and embedded store."""
        resolved = Path(root).resolve()
        digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:8]
        return self.home / "projects" / f"{resolved.name or 'root'}-{digest}"


# Environment variable -> field; every field but ``home`` can be set this way.
_ENV = {f"MEMSIFT_{f.name.upper()}": f.name for f in fields(Config) if f.name != "home"}


def default_home(environ: Mapping[str, str]) -> Path:
    if environ.get("MEMSIFT_HOME"):
        return Path(environ["MEMSIFT_HOME"])
    import platformdirs  # only when no home is given: it costs an import

    return Path(platformdirs.user_data_dir("memsift", appauthor=False))


def load_config(environ: Mapping[str, str] | None = None) -> Config:
    """Defaults, then ``<home>/config.toml``, then ``MEMSIFT_*`` variables."""
    environ = os.environ if environ is None else environ
    config = Config(home=default_home(environ))
    settings: dict[str, Any] = {}
    config_file = config.home / "config.toml"
    if config_file.is_file():
        settings.update(_read_toml(config_file))
    settings.update({name: environ[var] for var, name in _ENV.items() if var in environ})
    return evolve(config, **_coerce(settings))


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"cannot read {path}: {exc}") from exc
    unknown = set(data) - set(_ENV.values())
    if unknown:
        raise ConfigurationError(f"{path}: unknown settings {sorted(unknown)}")
    return data


def _coerce(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Turn strings from the environment into each field's type."""
    types = {f.name: f.default for f in fields(Config)}
    out: dict[str, Any] = {}
    for name, value in settings.items():
        default = types[name]
        try:
            if isinstance(default, bool):
                out[name] = value if isinstance(value, bool) else str(value).lower() in {"1", "true", "yes"}
            elif isinstance(default, int | float) and not isinstance(value, bool):
                out[name] = type(default)(value)
            else:
                out[name] = None if value in ("", None) else str(value)
        except ValueError as exc:
            raise ConfigurationError(f"setting {name}={value!r}: {exc}") from exc
    if "store" in out and out["store"] not in {"embedded", "cognee"}:
        raise ConfigurationError(f"MEMSIFT_STORE must be 'embedded' or 'cognee', not {out['store']!r}")
    return out
