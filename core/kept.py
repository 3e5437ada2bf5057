"""A dict that keeps at most `limit` entries: past that it starts again.

For answers and shared instances worked out once and read many times (a request shape's
record, a queue path's limits, a cluster's share bases): losing them only costs working them
out again, so a full table is emptied rather than tracked entry by entry.
"""

from __future__ import annotations

from typing import TypeVar

_K = TypeVar("_K")
_V = TypeVar("_V")


class KeptTable(dict[_K, _V]):
    """Read it as a dict (`get` stays the dict's own); add through `keep`."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def keep(self, key: _K, value: _V) -> _V:
        """Add `value` under `key` (emptying the table first when it is full) and return it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value

    def shared(self: KeptTable[_K, _K], value: _K) -> _K:
        """The kept value equal to `value`, kept first if there is none: one instance per
        distinct value (for tables that map values to themselves)."""
        found = self.get(value)
        return found if found is not None else self.keep(value, value)
