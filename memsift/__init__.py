"""memsift: sorting pipelines for a coding agent's memory.

>>> from memsift import Message, load_config, open_services, recall
>>> services = open_services(load_config(), project_root=".")
>>> recall(Message("thanks, perfect"), services).text
''

Names are imported on first use, so ``import memsift`` costs next to nothing
on a hook's hot path; a type checker reads them from the imports below.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: the hooks' hot path pays for each import

if TYPE_CHECKING:
    from .config import Config, load_config
    from .errors import ConfigurationError, DeadlineExceeded, MemsiftError, ServiceUnavailable
    from .pipeline import abrief, arecall, aretain, arun, brief, recall, retain, run
    from .services import Services, open_services
    from .types import (
        Brief, Category, Choice, ChoiceAnswer, Decider, Edit, Exchange, Item, Kind, Message, Notebook, Noul, NoulAnswer,
        Recall, Redactor, Retained, Reviser, Score, ScoreAnswer, Step, Store, Turn, Usage,
    )

__version__ = "0.1.0"

__all__ = [
    "Brief", "Category", "Choice", "ChoiceAnswer", "Config", "ConfigurationError", "DeadlineExceeded", "Decider",
    "Edit", "Exchange", "Item", "Kind", "MemsiftError", "Message", "Notebook", "Noul", "NoulAnswer", "Recall",
    "Redactor", "Retained", "Reviser", "Score", "ScoreAnswer", "ServiceUnavailable", "Services", "Step", "Store",
    "Turn", "Usage", "abrief", "arecall", "aretain", "arun", "brief", "load_config", "open_services", "recall",
    "retain", "run",
]

_MODULE_OF = {
    "recall": "pipeline", "retain": "pipeline", "run": "pipeline", "brief": "pipeline", "abrief": "pipeline",
    "arecall": "pipeline", "aretain": "pipeline", "arun": "pipeline",
    "open_services": "services", "Services": "services",
    "load_config": "config", "Config": "config",
    "MemsiftError": "errors", "ServiceUnavailable": "errors", "DeadlineExceeded": "errors",
    "ConfigurationError": "errors",
}  # every other public name is in types


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module 'memsift' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{_MODULE_OF.get(name, 'types')}", __name__), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
