"""One way to find a provider by name: embedders, LLMs, rerankers, document encoders, stores.

A ``Registry`` maps a provider name (and its aliases) to a factory. memlane's built-in providers
register themselves with ``register`` in their own packages, exactly as a third party would from
its code::

    from memlane.embeddings import EMBEDDERS

    @EMBEDDERS.register("my_model", aliases=("mine",))
    def create(spec):                      # spec: memlane.core.config.ProviderSpec
        return MyEmbedder(**spec.config)

A package can also register without being imported first, through an entry point in the group
``memlane.<kind>`` (``memlane.embedders``, ``memlane.llms``, ``memlane.rerankers``,
``memlane.encoders``, ``memlane.stores``) naming the factory; entry points are read the first time
a name is not found among the registered ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Generic, TypeVar

from memlane.core.errors import ConfigError

F = TypeVar("F", bound=Callable[..., object])


class Registry(Generic[F]):
    """Factories of one kind of provider by name. ``setting`` names the configuration key that
    chooses one (for error messages), ``hint`` adds what to do when a name is unknown."""

    def __init__(self, kind: str, setting: str, *, hint: str = ""):
        self.kind = kind
        self.setting = setting
        self.hint = hint
        self.group = f"memlane.{kind}"
        self._factories: dict[str, F] = {}
        self._names: dict[str, str] = {}  # every name and alias -> the provider's own name
        self._points: dict[str, EntryPoint] | None = None  # entry points by name, once read
        self._lock = threading.Lock()

    def register(self, name: str, factory: F | None = None, *,
                 aliases: tuple[str, ...] = ()) -> Callable[[F], F] | F:
        """Register ``factory`` under ``name`` and ``aliases``; without a factory, a decorator.
        A name already taken by another provider is a ``ConfigError`` (replacing a provider by
        accident would change what a configuration means)."""
        if factory is None:
            return lambda f: self.register(name, f, aliases=aliases)  # type: ignore[return-value]
        with self._lock:
            for key in (name, *aliases):
                owner = self._names.get(key)
                if owner is not None and self._factories[owner] is not factory:
                    raise ConfigError(f"{self.kind}: {key!r} is registered already (by provider {owner!r})")
            self._factories[name] = factory
            for key in (name, *aliases):
                self._names[key] = name
        return factory

    def __contains__(self, name: object) -> bool:
        return self._lookup(name) is not None if isinstance(name, str) else False

    def get(self, name: str) -> F:
        """The factory registered as ``name`` (or an alias), else a ``ConfigError`` listing the known names."""
        factory = self._lookup(name)
        if factory is None:
            raise ConfigError(f"{self.setting} {name!r} is unknown; known providers: {', '.join(self.known())}"
                              + (f" ({self.hint})" if self.hint else ""))
        return factory

    def canonical(self, name: str) -> str:
        """The provider's own name for ``name`` (an alias gives the name it stands for)."""
        self.get(name)
        return self._names[name]

    def known(self) -> list[str]:
        """Every name and alias, in registration order, then entry-point names (for error messages)."""
        self._read_entry_points()
        return list(dict.fromkeys([*self._names, *self._points]))

    def _lookup(self, name: str) -> F | None:
        if name not in self._names:
            self._read_entry_points()
            point = self._points.get(name)
            if point is not None:
                try:
                    factory = point.load()
                except Exception as exc:  # a broken plug-in names itself instead of failing somewhere later
                    raise ConfigError(f"{self.kind} provider {name!r} (entry point {point.value}) could not be "
                                      f"loaded: {exc}") from exc
                self.register(name, factory)
        owner = self._names.get(name)
        return self._factories[owner] if owner is not None else None

    def _read_entry_points(self) -> None:
        """Note the entry points of ``memlane.<kind>`` (once); each is loaded when its name is asked for."""
        if self._points is None:
            self._points = {p.name: p for p in entry_points(group=self.group) if p.name not in self._names}
