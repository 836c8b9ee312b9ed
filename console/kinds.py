"""Kinds: the one way the console knows the kinds of a thing (brokers, jobs, channels, rule
matches), each kind one room.

A :class:`Kinds` maps a kind's name to the dotted path of what implements it, in the order
the console lists them (menus, choices, the API's enums). Nothing is imported until a kind is
asked for, so a broker's client library or Apprise's plugins load only where they are used,
and this module needs no Django (the broker adapters run in processes without it).
``register`` adds a kind that lives elsewhere (a test's own) and ``unregister`` forgets it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from importlib import import_module
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def load(dotted: str) -> Any:
    """What ``package.module.Name`` names, imported now."""
    module_name, _, name = dotted.rpartition(".")
    return getattr(import_module(module_name), name)


class Kinds(Generic[T]):
    """The kinds of one thing: ``what`` names it in errors; ``unknown(name, known)`` makes the
    error for a name that is not one (each caller's own refusal); ``make`` turns what a dotted
    path names into the kind the registry hands out (an instance of a class, or the class itself
    when None), once per kind."""

    def __init__(self, what: str, declared: dict[str, str], *,
                 unknown: Callable[[str, list[str]], Exception] | None = None,
                 make: Callable[[Any], T] | None = None) -> None:
        self.what = what
        self._declared = dict(declared)
        self._unknown = unknown or (lambda name, known: ValueError(
            f"unknown {what} {name!r}; known: {', '.join(known)}"))
        self._make = make
        self._loaded: dict[str, T] = {}

    def names(self) -> list[str]:
        """Every kind's name, in the registry's order (none imported)."""
        return list(self._declared)

    def __contains__(self, name: object) -> bool:
        return name in self._declared

    def __iter__(self) -> Iterator[str]:
        """The names, as a dict's keys: ``for name in KINDS``, ``sorted(KINDS)``."""
        return iter(self.names())

    def dotted(self, name: str) -> str:
        """The dotted path that implements ``name``."""
        if name not in self._declared:
            raise self._unknown(name, self.names())
        return self._declared[name]

    def get(self, name: str) -> T:
        """The kind called ``name``, imported on first use; the caller's error for another name."""
        if name not in self._loaded:
            found = load(self.dotted(name))
            self._loaded[name] = self._make(found) if self._make is not None else found
        return self._loaded[name]

    def all(self) -> list[T]:
        """Every kind, in the registry's order."""
        return [self.get(name) for name in self._declared]

    def register(self, name: str, dotted: str) -> None:
        """Add (or replace) the kind ``dotted`` implements."""
        self._declared[name] = dotted
        self._loaded.pop(name, None)

    def unregister(self, name: str) -> None:
        """Forget a kind :meth:`register` added."""
        self._declared.pop(name, None)
        self._loaded.pop(name, None)


def instance(found: Any) -> Any:
    """``make`` for registries whose dotted paths name classes and which hand out one instance."""
    return found()
