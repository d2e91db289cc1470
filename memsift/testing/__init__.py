"""A kit for your own implementations and your own tests, as ``structlog.testing`` is.

Contract checks: plain functions that exercise an implementation of one of
memsift's protocols the way the pipelines use it, and raise ``ContractError``
naming the promise broken. Every built-in passes them in memsift's own suite.

>>> from memsift.testing import check_store
>>> check_store(lambda: MyStore(tmp_path / "store.db"))   # returns None, or raises ContractError

In pytest, call them from a test (or wrap them in a fixture of your own):

>>> def test_my_store_keeps_memsifts_contract(tmp_path):
...     check_store(lambda: MyStore(tmp_path / "store.db"))

Fakes that follow the contracts exactly, for tests of your own harness:
``MemoryStore`` (a store in a dict, which can be told to be down) and
``ScriptedDecider`` (answers each question by its task, from a script).
"""

from .contracts import (
    ContractError, check_decider, check_notebook, check_redactor, check_reviser, check_store,
)
from .fakes import MemoryStore, ScriptedDecider

__all__ = [
    "ContractError", "MemoryStore", "ScriptedDecider", "check_decider", "check_notebook", "check_redactor",
    "check_reviser", "check_store",
]
