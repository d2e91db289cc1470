"""memsift in Claude Code's and Codex's hooks: translation only.

An adapter turns an agent's hook payload into memsift's types and memsift's
result into the agent's output contract; the library never imports it. The
agents run it as ``memsift hook claude-code|codex EVENT`` with the payload on
stdin (see ``memsift_adapters.hook``).
"""
