"""Which nodes changed, in the order they changed: a reader keeps its place in the journal and
reads only the nodes changed since, instead of every node (preemption's kept searches,
core/preemption/kept_search.py).

A node notes itself whenever its change stamp (`Node.changes`) moves, and the partition notes a
node that comes or goes. The journal keeps the latest entries only: a reader whose place was
dropped reads every node again.
"""

from __future__ import annotations

KEEP = 1 << 16  # entries kept once the journal trims itself


class NodeJournal:
    __slots__ = ("_ids", "_start")

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._start = 0  # the place of `_ids[0]`

    def note(self, node_id: str) -> None:
        ids = self._ids
        ids.append(node_id)
        if len(ids) > 2 * KEEP:
            del ids[:KEEP]
            self._start += KEEP

    @property
    def end(self) -> int:
        """The place after the latest entry: what a reader keeps once it has read all."""
        return self._start + len(self._ids)

    def since(self, place: int) -> set[str] | None:
        """The nodes changed since `place` (None: entries from there on were dropped)."""
        if place < self._start:
            return None
        return set(self._ids[place - self._start :])
