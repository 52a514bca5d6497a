"""Copies of game states for search: cheap, and independent of the original.

A deal or a game holds ints, tuples and shared read-only tables, plus a few lists, dicts
and sets that change as it is played. :func:`clone_state` copies those containers one
level deep (their items are ints or tuples), clones any part that has a ``clone()`` of its
own (a Calabresella auction), and shares everything else.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

T = TypeVar("T")


_SLOTS: dict[type, tuple[str, ...]] = {}


def _slots(cls: type) -> tuple[str, ...]:
    found = _SLOTS.get(cls)
    if found is not None:
        return found
    names: list[str] = []
    for klass in cls.__mro__:
        slots = klass.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    _SLOTS[cls] = found = tuple(names)
    return found


def _field_names(obj: object) -> tuple[str, ...]:
    extra = getattr(obj, "__dict__", None)
    return _slots(type(obj)) + tuple(extra) if extra else _slots(type(obj))


def clone_state(obj: T) -> T:
    """A copy of ``obj`` that can be played on without changing ``obj``."""
    new = copy.copy(obj)
    for name in _field_names(obj):
        try:
            value: Any = getattr(obj, name)
        except AttributeError:
            continue  # a slot never set
        if isinstance(value, list):
            setattr(new, name, list(value))
        elif isinstance(value, dict):
            setattr(new, name, dict(value))
        elif isinstance(value, set):
            setattr(new, name, set(value))
        elif hasattr(value, "clone") and not isinstance(value, type):
            setattr(new, name, value.clone())
    return new
