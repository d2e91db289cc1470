"""memsift in a harness built on the Claude Agent SDK: hook matchers for ``ClaudeAgentOptions``.

The session brief with a session's first prompt, and again with the first
after a compaction (the SDK has no SessionStart hook of its own); recall on
UserPromptSubmit (what memory adds reaches the model as
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
``brief``, ``recall`` and ``retain`` are memsift's (``abrief``, ``arecall``,
``aretain``) unless the harness passes its own, a pipeline of its stages say
(``functools.partial(arecall, stages=notes_only)``); each is called as
``recall(message, services, deadline=...)`` (``brief(services, session=...,
focus=..., deadline=...)``).

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

from memsift.pipeline import abrief, arecall, aretain

from .agent import Agent
from .claude_code import loaded_files, read_turn
from .hook import OUTPUT_ITEMS, _decided, finished_exchange, hook_output, recall_message

if TYPE_CHECKING:
    from claude_agent_sdk import HookMatcher

    from memsift.services import Services
    from memsift.types import Brief, Exchange, Message, Recall, Retained

AGENT = Agent("claude-agent-sdk", read_turn, loaded_files)
Output = dict[str, Any]


class Recaller(Protocol):
    """What recalls a message: ``memsift.arecall``, or the same over stages of one's own."""

    def __call__(self, message: Message, services: Services, *, deadline: float | None = None) -> Awaitable[Recall]:
        ...


class Briefer(Protocol):
    """What gives a session its brief: ``memsift.abrief``, or the same over stages of one's own."""

    def __call__(self, services: Services, *, session: str = "", focus: str = "",
                 deadline: float | None = None) -> Awaitable[Brief]: ...


class Retainer(Protocol):
    """What retains an exchange: ``memsift.aretain``, or the same over stages of one's own."""

    def __call__(self, exchange: Exchange, services: Services, *,
                 deadline: float | None = None) -> Awaitable[Retained]: ...


class MemsiftHooks:
    """The hooks, on the services the harness opened, and the retains still running in the background.

    ``services``: what every path runs on (``open_services(config, project_root=...)``), the
    harness's to close. ``brief``, ``recall``, ``retain``: the paths (memsift's by default). ``background``:
    retain in a task of its own (True) or before the turn ends (False). ``deadline``: seconds each
    path may take (None: only the stages' own budgets); past it, nothing is added, and what a
    retain wrote stays written (its store item waits in the outbox).
    """

    def __init__(self, services: Services, *, brief: Briefer = abrief, recall: Recaller = arecall,
                 retain: Retainer = aretain, background: bool = True, deadline: float | None = None) -> None:
        self.services = services
        self.brief, self.recall, self.retain = brief, recall, retain
        self._briefed: set[object] = set()  # the sessions given their brief since they started or were compacted
        self.background = background
        self.deadline = deadline
        self._running: set[asyncio.Task[None]] = set()
        # The prompt each session's UserPromptSubmit saw: a new session's first prompt may not be in
        # its transcript yet when Stop comes.
        self._prompts: dict[object, str] = {}

    def matchers(self) -> dict[str, list[HookMatcher]]:
        """``ClaudeAgentOptions(hooks=...)``: the brief and recall on UserPromptSubmit, retain on Stop,
        the brief again after PreCompact."""
        from claude_agent_sdk import HookMatcher

        callbacks = {"UserPromptSubmit": self.on_prompt, "Stop": self.on_stop, "PreCompact": self.on_compact}
        return {event: [HookMatcher(hooks=[callback])] for event, callback in callbacks.items()}  # type: ignore[list-item]

    async def on_prompt(self, payload: dict[str, Any], tool_use_id: str | None, context: Any) -> Output:
        """What memory adds to the prompt, as the SDK's hook output; ``{}`` when nothing."""
        self._prompts[payload.get("session_id")] = payload.get("prompt", "")
        try:
            return await self._recalled(payload)
        except Exception as exc:  # fail open: the session goes on, the user hears why once
            return {"systemMessage": f"memsift: recall failed: {type(exc).__name__}: {exc}"}

    async def on_compact(self, payload: dict[str, Any], tool_use_id: str | None, context: Any) -> Output:
        """The session's context is about to be compacted: what it was given leaves it, and its next
        prompt comes with the brief again."""
        session = payload.get("session_id")
        self._briefed.discard(session)
        if self.services.session_log is not None and isinstance(session, str):
            self.services.session_log.forget(session)
        return {}

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

        given = await self._brief(payload)  # first: what the brief shows, recall does not add again
        if surely_quiet(payload["prompt"]):  # before the transcript is read, as the command-line hook does
            return hook_output("UserPromptSubmit", given, None, most=None)
        result = await self.recall(recall_message(AGENT, payload), self._for(payload), deadline=self.deadline)
        _decided(AGENT, "UserPromptSubmit", payload, result)
        context = "\n\n".join(part for part in (given, result.text) if part)
        # A brief is bounded by its own budget, recall by max_items: the item cap is for recall alone.
        return hook_output("UserPromptSubmit", context, result.notice, most=None if given else OUTPUT_ITEMS)

    async def _brief(self, payload: dict[str, Any]) -> str:
        """The session's brief, the first time one of its prompts is seen (since it started or was
        compacted); '' after."""
        from memsift.hooks import branch, project_root

        session = payload.get("session_id")
        if session in self._briefed:
            return ""
        self._briefed.add(session)
        focus = branch(project_root(payload["cwd"]))
        result = await self.brief(self._for(payload), session=str(session or ""), focus=focus,
                                  deadline=self.deadline)
        return result.text

    async def _retained(self, payload: dict[str, Any], exchange: Exchange) -> None:
        _decided(AGENT, "Stop", payload, await self.retain(exchange, self.services, deadline=self.deadline))

    def _for(self, payload: dict[str, Any]) -> Services:
        """The services, with the files Claude Code loads itself for this session's folder (paths only:
        they are read if recall is about to add something)."""
        from memsift.hooks import project_root

        return evolve(self.services, loaded_files=AGENT.loaded_files(payload, project_root(payload["cwd"])))
