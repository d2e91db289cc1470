"""memsift: sorting pipelines for a coding agent's memory."""
