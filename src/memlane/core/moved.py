"""Compatibility aliases for public names that moved to another module (PEP 562).

In the old module, ``__getattr__ = moved(__name__, {"Name": "its.new.module"})`` keeps ``from old
import Name`` working: it warns (``DeprecationWarning``) and hands out the name from its new home.
The new home is imported by name when the old path is used, so an alias is no dependency of the old
module (docs/architecture.md).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def moved(module: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module-level ``__getattr__`` of ``module`` for the names in ``homes`` (name -> where it lives)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        warnings.warn(f"{module}.{name} moved: import it from {home}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(home), name)

    return __getattr__
