"""At the end of an agent's session, what the outbox holds goes to the store.

>>> flush(services, "s1")
'flush: 3 sent, 0 pending'
"""

from __future__ import annotations

import time

from .services import Services
from .stages import EndPath, Keep, call_service
from .types import Exchange


def flush(services: Services, session: str = "") -> str:
    """Drain the outbox to the store within the store's deadline, minding its breaker.

    Returns what happened, in the words of a trace; nothing queued is lost
    when the store is down (the next drain sends it).
    """
    outbox, store = services.outbox, services.store
    if outbox is None or store is None:
        return "flush: no outbox"
    t0 = time.perf_counter()
    deadline = services.config.store_deadline
    state = Keep(exchange=Exchange("", "", session))  # call_service ends a path: this one is empty
    try:
        sent = call_service(services, state, "flush", store, deadline, t0, outbox.drain, store,
                            timeout=deadline)
    except EndPath as end:
        return end.state.stopped_by
    return f"flush: {sent} sent, {outbox.pending()} pending"
