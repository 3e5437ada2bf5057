"""One shared instance per distinct value of the immutable parts every pod carries.

Thousands of pods ask for the same few sizes and carry the same node constraints and user, yet
converting each pod builds its own equal `Resource`, `NodeConstraints` and `UserGroup`. Handing out one
instance per distinct value keeps a pending pod small (with node affinity, its constraints are
most of it) and lets the core hash a request once per shape instead of once per pod: both keep
their hash, and the node index remembers its choices by (request, constraints).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from core.kept import KeptTable

_T = TypeVar("_T", bound=Hashable)

LIMIT = 4096  # distinct values kept; past that the table starts again (values stay correct)


class Interner(Generic[_T]):
    """`intern(value)` is an equal value, the same object for every equal value seen lately."""

    def __init__(self, limit: int = LIMIT) -> None:
        self._values: KeptTable[_T, _T] = KeptTable(limit)

    def __call__(self, value: _T) -> _T:
        return self._values.shared(value)

    def __len__(self) -> int:
        return len(self._values)


_K = TypeVar("_K")
_V = TypeVar("_V")


class ByIdentity(Generic[_K, _V]):
    """`memo(obj, compute)`: compute(obj) once per object, for objects nobody changes in place
    (a namespace as listed or watched: a change arrives as a new object). The object is kept
    with its result, so its id is not reused while it is here."""

    def __init__(self, limit: int = 256) -> None:
        self._found: dict[int, tuple[_K, _V]] = {}
        self._limit = limit

    def __call__(self, obj: _K, compute: Callable[[_K], _V]) -> _V:
        known = self._found.get(id(obj))
        if known is not None and known[0] is obj:
            return known[1]
        value = compute(obj)
        if len(self._found) >= self._limit:
            self._found.clear()
        self._found[id(obj)] = (obj, value)
        return value
