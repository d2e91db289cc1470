"""memsift in a harness built on the Claude Agent SDK: hook matchers for ``ClaudeAgentOptions``.

Recall on UserPromptSubmit (what memory adds reaches the model as
``additionalContext``), retain on Stop, awaited or in the background as the
harness chooses, on the services the harness opened::

    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
    from memsift import load_config, open_services
    from memsift_adapters.claude_agent_sdk import MemsiftHooks

    async with open_services(load_config(), project_root="/src/shop") as services:
        memory = MemsiftHooks(services, deadline=2.0)   # background=False keeps each exchange before the turn ends
        options = ClaudeAgentOptions(hooks=memory.matchers(), cwd="/src/shop")
        async with ClaudeSDKClient(options) as client:
            await client.query("why did we pick Stripe over Mollie?")
            async for message in client.receive_response():
                ...
        await memory.settled()                   # background retains finish before the services close

Each callback runs a path on those services, and opens nothing of its own:
``recall`` and ``retain`` are memsift's (``arecall``, ``aretain``) unless the
harness passes its own, a pipeline of its stages say
(``functools.partial(arecall, stages=notes_only)``); each is called as
``recall(message, services, deadline=...)``.

The SDK runs Claude Code, which writes the session's transcript as it
always does: the recent turns and the exchange to keep are read from it, as
the command-line hooks read them (``hook.py``), and the same instruction files
(CLAUDE.md, MEMORY.md) are never repeated. Fail open: a callback never
raises into the SDK; what went wrong reaches the user as one ``systemMessage``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, Protocol

from attrs import evolve

from memsift.pipeline import arecall, aretain

from .agent import Agent
from .claude_code import loaded_files, read_turn
from .hook import _decided, finished_exchange, hook_output, recall_message

if TYPE_CHECKING:
    from claude_agent_sdk import HookMatcher

    from memsift.services import Services
    from memsift.types import Exchange, Message, Recall, Retained

AGENT = Agent("claude-agent-sdk", read_turn, loaded_files)
Output = dict[str, Any]


class Recaller(Protocol):
    """What recalls a message: ``memsift.arecall``, or the same over stages of one's own."""

    def __call__(self, message: Message, services: Services, *, deadline: float | None = None) -> Awaitable[Recall]:
        ...


class Retainer(Protocol):
    """What retains an exchange: ``memsift.aretain``, or the same over stages of one's own."""

    def __call__(self, exchange: Exchange, services: Services, *,
                 deadline: float | None = None) -> Awaitable[Retained]: ...


class MemsiftHooks:
    """The hooks, on the services the harness opened, and the retains still running in the background.

    ``services``: what every path runs on (``open_services(config, project_root=...)``), the
    harness's to close. ``recall``, ``retain``: the paths (memsift's by default). ``background``:
    retain in a task of its own (True) or before the turn ends (False). ``deadline``: seconds each
    path may take (None: only the stages' own budgets); past it, nothing is added, and what a
    retain wrote stays written (its store item waits in the outbox).
    """

    def __init__(self, services: Services, *, recall: Recaller = arecall, retain: Retainer = aretain,
                 background: bool = True, deadline: float | None = None) -> None:
        self.services = services
        self.recall, self.retain = recall, retain
        self.background = background
        self.deadline = deadline
        self._running: set[asyncio.Task[None]] = set()
        # The prompt each session's UserPromptSubmit saw: a new session's first prompt may not be in
        # its transcript yet when Stop comes.
        self._prompts: dict[object, str] = {}

    def matchers(self) -> dict[str, list[HookMatcher]]:
        """``ClaudeAgentOptions(hooks=...)``: recall on UserPromptSubmit, retain on Stop."""
        from claude_agent_sdk import HookMatcher

        callbacks = {"UserPromptSubmit": self.on_prompt, "Stop": self.on_stop}
        return {event: [HookMatcher(hooks=[callback])] for event, callback in callbacks.items()}  # type: ignore[list-item]

    async def on_prompt(self, payload: dict[str, Any], tool_use_id: str | None, context: Any) -> Output:
        """What memory adds to the prompt, as the SDK's hook output; ``{}`` when nothing."""
        self._prompts[payload.get("session_id")] = payload.get("prompt", "")
        try:
            return await self._recalled(payload)
        except Exception as exc:  # fail open: the session goes on, the user hears why once
            return {"systemMessage": f"memsift: recall failed: {type(exc).__name__}: {exc}"}

    async def on_stop(self, payload: dict[str, Any], tool_use_id: str | None, context: Any) -> Output:
        """Keep what the exchange just finished deserves: awaited, or in a task of its own."""
        try:
            exchange = finished_exchange(AGENT, payload, self._prompts.pop(payload.get("session_id"), None))
        except Exception as exc:
            return {"systemMessage": f"memsift: nothing retained: {exc}"}
        if exchange is None:
            return {}
        work = self._retained(payload, exchange)
        if not self.background:
            try:
                await work
            except Exception as exc:
                return {"systemMessage": f"memsift: retain failed: {type(exc).__name__}: {exc}"}
            return {}
        task = asyncio.get_running_loop().create_task(work)
        self._running.add(task)  # held: a task nobody refers to may be collected before it ends
        task.add_done_callback(self._running.discard)
        return {}

    async def settled(self) -> None:
        """Wait for the retains running in the background (the harness calls this before it closes
        the services or exits)."""
        while self._running:
            await asyncio.gather(*self._running, return_exceptions=True)

    async def _recalled(self, payload: dict[str, Any]) -> Output:
        from memsift.hooks import surely_quiet

        if surely_quiet(payload["prompt"]):  # before the transcript is read, as the command-line hook does
            return {}
        result = await self.recall(recall_message(AGENT, payload), self._for(payload), deadline=self.deadline)
        _decided(AGENT, "UserPromptSubmit", payload, result)
        return hook_output("UserPromptSubmit", result.text, result.notice)

    async def _retained(self, payload: dict[str, Any], exchange: Exchange) -> None:
        _decided(AGENT, "Stop", payload, await self.retain(exchange, self.services, deadline=self.deadline))

    def _for(self, payload: dict[str, Any]) -> Services:
        """The services, with the files Claude Code loads itself for this session's folder (paths only:
        they are read if recall is about to add something)."""
        from memsift.hooks import project_root

        return evolve(self.services, loaded_files=AGENT.loaded_files(payload, project_root(payload["cwd"])))
