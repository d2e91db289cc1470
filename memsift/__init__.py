"""memsift: sorting pipelines for a coding agent's memory.

>>> from memsift import Message, load_config, open_services, recall
>>> services = open_services(load_config(), project_root=".")
>>> recall(Message("thanks, perfect"), services).text
''

Names are imported on first use, so ``import memsift`` costs next to nothing
on a hook's hot path.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "recall": "pipeline", "retain": "pipeline", "run": "pipeline",
    "open_services": "services", "Services": "services",
    "load_config": "config", "Config": "config",
    "Message": "types", "Turn": "types", "Exchange": "types", "Item": "types", "Kind": "types",
    "Category": "types", "Recall": "types", "Retained": "types", "Step": "types", "Usage": "types", "Edit": "types",
    "Noul": "types", "Choice": "types", "Score": "types",
    "NoulAnswer": "types", "ChoiceAnswer": "types", "ScoreAnswer": "types",
    "Decider": "types", "Store": "types", "Notebook": "types", "Reviser": "types", "Redactor": "types",
    "MemsiftError": "errors", "ServiceUnavailable": "errors", "DeadlineExceeded": "errors",
    "ConfigurationError": "errors",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memsift' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
