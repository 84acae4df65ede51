"""Names that moved keep their old import path (core/moved.py): a DeprecationWarning naming the new
home, the very same object; any other missing name is still an AttributeError."""

import importlib

import pytest

import memlane
from memlane.core.moved import moved


def test_memlane_memory_async_memory_warns_and_is_memlane_async_memory():
    with pytest.warns(DeprecationWarning, match=r"^memlane\.memory\.AsyncMemory moved: import it from memlane$"):
        from memlane.memory import AsyncMemory
    assert AsyncMemory is memlane.AsyncMemory


def test_a_name_that_never_was_is_an_attribute_error():
    module = importlib.import_module("memlane.memory")
    with pytest.raises(AttributeError, match="module 'memlane.memory' has no attribute 'Memoryy'"):
        module.Memoryy  # noqa: B018
    assert not hasattr(module, "Memoryy")


def test_moved_hands_out_the_name_from_its_home():
    alias = moved("old.place", {"sqrt": "math"})
    with pytest.warns(DeprecationWarning, match="old.place.sqrt moved: import it from math"):
        assert alias("sqrt")(9) == 3
    with pytest.raises(AttributeError):
        alias("cbrt")
