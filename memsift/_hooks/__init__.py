"""The hooks' hot path: a quiet message, once per call, the warm server, what a start remembers."""
