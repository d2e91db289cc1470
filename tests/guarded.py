"""The two paths as the hooks run them (``open_guarded``, then ``recall`` or ``retain``), for the tests
that drive the embedded stack through a home's settings."""

from __future__ import annotations

import os
from collections.abc import Mapping

from memsift._hooks.guarded import open_guarded
from memsift.pipeline import recall, retain
from memsift.types import Exchange, Message, Recall, Retained


def guarded_recall(message: Message, project_root: str | os.PathLike[str],
                   environ: Mapping[str, str] | None = None) -> Recall:
    """``recall`` with the services the settings name, or nothing added and a notice why not."""
    opened = open_guarded(project_root, message.session, environ)
    if opened.services is None:
        return Recall("", (), None, (), f"settings: {opened.why}", opened.notice)
    return recall(message, opened.services)


def guarded_retain(exchange: Exchange, project_root: str | os.PathLike[str],
                   environ: Mapping[str, str] | None = None) -> Retained:
    """``retain`` with the services the settings name, or nothing kept and a notice why not."""
    opened = open_guarded(project_root, exchange.session, environ)
    if opened.services is None:
        return Retained(False, None, (), (), (), f"settings: {opened.why}", opened.notice)
    return retain(exchange, opened.services)
