"""A kit for your own implementations and your own tests, as ``structlog.testing`` is.

Contract checks, one per seam, all called the same way: a factory that makes a
new implementation (a class, a lambda), options by keyword. Each uses it as
memsift's stages do and returns None, or raises ``ContractError`` naming the
promise broken (a method missing or taking other arguments, an answer of the
wrong shape, the call that raised what it should not). Every built-in passes
them in memsift's own suite.

>>> from memsift.testing import check_store
>>> check_store(lambda: MyStore(tmp_path / f"{uuid.uuid4()}.db"))   # None, or ContractError

In pytest, call them from a test:

>>> def test_my_store_keeps_memsifts_contract(tmp_path):
...     check_store(lambda: MyStore(tmp_path / f"{uuid.uuid4()}.db"))

Fakes that follow the contracts exactly, for tests of your own harness:
``ScriptedDecider`` (answers each question by its task, from a script; can be
priced), ``MemoryStore`` (a store in a dict, which can be told to be down),
``Clock`` (a time that moves when told, for breakers and leases). Each is
documented with an example in its docstring; docs/library.md runs them.
"""

from .contracts import (
    ContractError, check_decider, check_notebook, check_redactor, check_reviser, check_store,
)
from .fakes import Clock, MemoryStore, ScriptedDecider

__all__ = [
    "Clock", "ContractError", "MemoryStore", "ScriptedDecider", "check_decider", "check_notebook", "check_redactor",
    "check_reviser", "check_store",
]
