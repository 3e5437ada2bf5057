"""The shim's side of a bench, reduced to counting: binds succeed at once, events are dropped."""

from __future__ import annotations

from core.events import SchedulingEvent
from core.objects.ask import Allocation


class CountingCallbacks:
    """Counts binds (and of them placeholders and replacements); evictions and events do nothing."""

    def __init__(self) -> None:
        self.binds = 0
        self.placeholders = 0
        self.replacements = 0

    def bind(self, allocation: Allocation) -> None:
        self.binds += 1
        self.placeholders += allocation.placeholder
        self.replacements += bool(allocation.replaces)

    def evict(self, allocation: Allocation, reason: str) -> None:
        pass

    def report(self, event: SchedulingEvent) -> None:
        pass
