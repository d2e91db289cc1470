"""The exceptions memsift raises at its seams."""


class MemsiftError(Exception):
    """Base of every error memsift raises on purpose."""


class ServiceUnavailable(MemsiftError):
    """A service did not answer usefully: refused, timed out, or a server error.

    Opens the service's breaker: memory pauses and the agent is told.
    """


class ServerError(ServiceUnavailable):
    """The service answered, with a failure of its own (a 500, say): it is up, and failing. The
    ``message`` says so; ``status`` is the HTTP status it answered.

    >>> ServerError("Cognee at http://127.0.0.1:8000 answered 500: Internal server error", 500).status
    500
    """

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class DeadlineExceeded(ServiceUnavailable):
    """A call ran past its deadline; the path ends with nothing added."""


class ConfigurationError(MemsiftError):
    """The service refused us (bad key, wrong URL, forbidden): never retried."""
