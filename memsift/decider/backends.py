"""Which decider answers which question: one backend for all, or a backend per question task.

    >>> decider = decider_for(load_config({"MEMSIFT_DECIDER": "openai",
    ...                                    "MEMSIFT_DECIDER_MODEL": "gpt-4.1-mini",
    ...                                    "MEMSIFT_DECIDER_BY_TASK": "kind=embedded,worth=embedded"}))
    >>> decider.for_questions({"kind": Choice("kind", ...)}).name
    'embedded'

Every remote backend reads the same settings: ``decider_url`` (the System One
endpoint, or for ``openai`` and ``anthropic`` a base URL ending in ``/v1``),
``decider_model`` and ``decider_api_key``. So at most one remote backend is
configured at a time; the others a task may be routed to are the embedded model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import ConfigurationError
from ..types import Answer, Decider, Question, Usage

if TYPE_CHECKING:
    from ..config import Config

def decider_for(config: Config) -> Decider:
    """The decider the config names: one backend, or a ``RoutedDecider`` when tasks are routed."""
    backends = {config.decider, *(config.backend_for(task) for task in _routed_tasks(config))}
    remote = backends - {"embedded"}
    if len(remote) > 1:
        raise ConfigurationError(f"decider_by_task mixes remote backends {sorted(remote)}: they would share "
                                 "one MEMSIFT_DECIDER_URL, model and key; route tasks to one of them or to embedded")
    built = {name: _backend(config, name) for name in backends}
    if len(built) == 1:
        return built[config.decider]
    routes = {task: built[config.backend_for(task)] for task in _routed_tasks(config)}
    return RoutedDecider(built[config.decider], routes)


def _routed_tasks(config: Config) -> list[str]:
    from ..config import task_routes

    return list(task_routes(config.decider_by_task or ""))


def _backend(config: Config, name: str) -> Decider:
    if name == "systemone":
        from .systemone import SystemOneDecider

        return SystemOneDecider.from_config(config)
    if name == "openai":
        from .openai_compatible import OpenAICompatibleDecider

        return OpenAICompatibleDecider.from_config(config)
    if name == "anthropic":
        from .anthropic_messages import AnthropicDecider

        return AnthropicDecider.from_config(config)
    from .embedded import EmbeddedDecider

    return EmbeddedDecider.load()


class RoutedDecider:
    """Sends each question to the backend ``routes`` names for its task, the rest to ``default``.

    The pipeline asks ``for_questions`` first, so each call goes straight to its
    backend: its breaker, its name in the notice and its cost are that backend's.
    """

    def __init__(self, default: Decider, routes: Mapping[str, Decider]) -> None:
        self.default = default
        self.routes = dict(routes)
        self._backends = list({id(d): d for d in (default, *routes.values())}.values())
        self.name = " + ".join(d.name for d in self._backends)
        self.remote = any(getattr(d, "remote", True) for d in self._backends)

    def for_questions(self, questions: Mapping[str, Question]) -> Decider:
        """The one backend that answers all these questions, or this router when they are split."""
        chosen = {id(self._route(q)): self._route(q) for q in questions.values()}
        return next(iter(chosen.values())) if len(chosen) == 1 else self

    @property
    def spent(self) -> Usage:
        total = Usage()
        for backend in self._backends:
            total += getattr(backend, "spent", Usage())
        return total

    def decide(self, state: Mapping[str, Any], questions: Mapping[str, Question]) -> dict[str, Answer]:
        """The ``questions`` over ``state``, each asked of its backend, all answered."""
        groups: dict[int, tuple[Decider, dict[str, Question]]] = {}
        for qid, question in questions.items():
            backend = self._route(question)
            groups.setdefault(id(backend), (backend, {}))[1][qid] = question
        answers: dict[str, Answer] = {}
        for backend, asked in groups.values():
            answers.update(backend.decide(state, asked))
        return answers

    def close(self) -> None:
        """Close each backend that holds something open (a remote one's connections)."""
        for backend in self._backends:
            close = getattr(backend, "close", None)
            if callable(close):
                close()

    def _route(self, question: Question) -> Decider:
        return self.routes.get(question.task, self.default)
