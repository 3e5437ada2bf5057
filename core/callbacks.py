"""The core's outputs: the one interface the shim (or the simulator) implements.

Callbacks are called after the core released its lock, from the thread that made the
decision (the scheduling cycle, the recycler, or an input call). They must not block: queue
the work and return. A bind that fails later is reported back with
`Scheduler.release_allocation(key)`, which rolls back every tracker.
"""

from __future__ import annotations

from typing import Protocol

from core.events import SchedulingEvent
from core.objects.ask import Allocation


class Callbacks(Protocol):
    def bind(self, allocation: Allocation) -> None:
        """Bind the pod `allocation.key` to `allocation.node_id`."""

    def evict(self, allocation: Allocation, reason: str) -> None:
        """Evict the pod (Eviction API); report a refusal with `eviction_failed`."""

    def report(self, event: SchedulingEvent) -> None:
        """A scheduling event happened (for Kubernetes Events, logs, reports)."""
