"""The virtual clock's agenda: what happens next, in a deterministic order.

The simulator jumps from one moment something happens to the next (a pod arrives or
finishes, a scenario event, a snapshot, a recycler tick), so an hour of cluster time with a
handful of changes is a handful of steps. Entries due at the same moment run in a fixed
order: pods that finish first (their capacity is free before anything else looks), then
scenario events, then arrivals, then snapshots; within a phase, in the order they were added.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

FINISH = 0
EVENT = 1
ARRIVAL = 2
SNAPSHOT = 3

Action = Callable[[float], None]


class Agenda:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, Action]] = []
        self._seq = itertools.count()

    def push(self, when: float, phase: int, action: Action) -> None:
        heapq.heappush(self._heap, (when, phase, next(self._seq), action))

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def pop_due(self, now: float) -> list[Action]:
        """Every entry due at `now` or earlier, in order."""
        due: list[Action] = []
        while self._heap and self._heap[0][0] <= now:
            due.append(heapq.heappop(self._heap)[3])
        return due

    def __len__(self) -> int:
        return len(self._heap)
