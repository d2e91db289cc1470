"""How a path runs: deadlines, bounds on inputs, the breaker, one remote request."""
