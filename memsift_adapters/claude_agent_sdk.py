"""memsift in a harness built on the Claude Agent SDK: hook matchers for ``ClaudeAgentOptions``.

Recall on UserPromptSubmit (what memory adds reaches the model as
``additionalContext``), retain on Stop, awaited or in the background as the
harness chooses::

    from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient
    from memsift_adapters.claude_agent_sdk import MemsiftHooks

    memory = MemsiftHooks()                      # retain="background" (the default) or "awaited"
    options = ClaudeAgentOptions(hooks=memory.matchers(), cwd="/src/shop")
    async with ClaudeSDKClient(options) as client:
        await client.query("why did we pick Stripe over Mollie?")
        async for message in client.receive_response():
            ...
    await memory.settled()                       # background retains finish before the harness exits

The SDK runs Claude Code, which writes the session's transcript as it
always does: the recent turns and the exchange to keep are read from it, as
the command-line hooks read them (``hook.py``), and the same instruction files
(CLAUDE.md, MEMORY.md) are never repeated. Fail open: a callback never
raises into the SDK; what went wrong reaches the user as one ``systemMessage``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Literal

from .agent import Agent
from .claude_code import loaded_files, read_turn
from .hook import _decided, _services, finished_exchange, hook_output, recall_message

if TYPE_CHECKING:
    from claude_agent_sdk import HookMatcher

AGENT = Agent("claude-agent-sdk", read_turn, loaded_files)
Output = dict[str, Any]


class MemsiftHooks:
    """The two hooks, and the retains still running in the background."""

    def __init__(self, *, retain: Literal["background", "awaited"] = "background") -> None:
        self.retain = retain
        self._running: set[asyncio.Task[None]] = set()
        # The prompt each session's UserPromptSubmit saw: a new session's first prompt may not be in
        # its transcript yet when Stop comes.
        self._prompts: dict[object, str] = {}

    def matchers(self) -> dict[str, list[HookMatcher]]:
        """``ClaudeAgentOptions(hooks=...)``: recall on UserPromptSubmit, retain on Stop."""
        from claude_agent_sdk import HookMatcher

        return {"UserPromptSubmit": [HookMatcher(hooks=[self.on_prompt])],  # type: ignore[list-item]
                "Stop": [HookMatcher(hooks=[self.on_stop])]}  # type: ignore[list-item]

    async def on_prompt(self, payload: dict[str, Any], tool_use_id: str | None, context: Any) -> Output:
        """What memory adds to the prompt, as the SDK's hook output; ``{}`` when nothing."""
        self._prompts[payload.get("session_id")] = payload.get("prompt", "")
        try:
            return await _recalled(payload)
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
        work = _retained(payload, exchange)
        if self.retain == "awaited":
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
        """Wait for the retains running in the background (the harness calls this before it exits)."""
        while self._running:
            await asyncio.gather(*self._running, return_exceptions=True)


async def _recalled(payload: dict[str, Any]) -> Output:
    from memsift._quiet import surely_quiet
    from memsift.pipeline import arecall

    if surely_quiet(payload["prompt"]):  # before the transcript is read, as the command-line hook does
        return {}
    message = recall_message(AGENT, payload)
    services = await asyncio.to_thread(_services, AGENT, payload, with_loaded_files=True)
    result = await arecall(message, services)
    _decided(AGENT, "UserPromptSubmit", payload, result)
    return hook_output("UserPromptSubmit", result.text, result.notice)


async def _retained(payload: dict[str, Any], exchange: Any) -> None:
    from memsift.pipeline import aretain

    services = await asyncio.to_thread(_services, AGENT, payload)
    _decided(AGENT, "Stop", payload, await aretain(exchange, services))
