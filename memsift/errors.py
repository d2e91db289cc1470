"""The exceptions memsift raises at its seams."""


class MemsiftError(Exception):
    """Base of every error memsift raises on purpose."""


class ServiceUnavailable(MemsiftError):
    """A service did not answer usefully: refused, timed out, or a server error.

    Opens the service's breaker: memory pauses and the agent is told.
    """


class DeadlineExceeded(ServiceUnavailable):
    """A call ran past its deadline; the path ends with nothing added."""


class ConfigurationError(MemsiftError):
    """The service refused us (bad key, wrong URL, forbidden): never retried."""
