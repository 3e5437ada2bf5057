"""What a leaf knows of its waiting pods without looking at each one.

When the cluster is full, every pod that ends lets every parked pod try again (the change
counter moved), and one of them takes the room. Trying the others again is only needed if their
answer could differ, so a leaf counts its pending asks, those whose priority is not 0 (the only
ones whose rank can change when the counter moves), and those whose last answer was the
cluster's size alone, grouped by request shape, quota, priority and the words of that answer,
and which applications have an ask outside those groups. While the words for each shape are
still what the cluster's size says now (see `cycle._refused_as_before`), each ask in a group
would be parked again with the reason it already shows: the walk passes the leaf by when every
ask is in a group, and otherwise tries only the applications with another ask (a pod that just
arrived, say), in the leaf's order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.objects.application import Application
from core.objects.ask import Ask
from core.resources import Resource

# (request shape, quota, priority, the reason shown)
RefusalGroup = tuple[Resource, str, int, str]
Marks = dict[str, tuple["LeafWaits", RefusalGroup, Application]]  # per pending ask: its leaf's counts


@dataclass(slots=True)
class LeafWaits:
    asks: int = 0  # pending asks of the leaf, parked and held ones included
    prioritized: int = 0  # of which with a priority other than 0
    refused: dict[RefusalGroup, int] = field(default_factory=dict)
    refused_asks: int = 0
    marked: dict[str, int] = field(default_factory=dict)  # refused asks per application
    # applications with a pending ask whose last answer was not the cluster's size alone
    unsettled: dict[str, Application] = field(default_factory=dict)

    def joined(self, app: Application, ask: Ask) -> None:
        self.asks += 1
        if ask.priority:
            self.prioritized += 1
        self.unsettled[app.app_id] = app

    def left(self, app: Application, ask: Ask) -> None:
        self.asks -= 1
        if ask.priority:
            self.prioritized -= 1
        if app.app_id in self.marked:
            self._recheck(app)
        elif not app.asks:  # with no refused ask, an application is unsettled while it has asks
            self.unsettled.pop(app.app_id, None)

    def _recheck(self, app: Application) -> None:
        if len(app.asks) > self.marked.get(app.app_id, 0):
            self.unsettled[app.app_id] = app
        else:
            self.unsettled.pop(app.app_id, None)

    def add_refused(self, group: RefusalGroup, app: Application) -> None:
        self.refused[group] = self.refused.get(group, 0) + 1
        self.refused_asks += 1
        self.marked[app.app_id] = self.marked.get(app.app_id, 0) + 1
        self._recheck(app)

    def drop_refused(self, group: RefusalGroup, app: Application) -> None:
        left = self.refused[group] - 1
        if left:
            self.refused[group] = left
        else:
            del self.refused[group]
        self.refused_asks -= 1
        marked = self.marked[app.app_id] - 1
        if marked:
            self.marked[app.app_id] = marked
        else:
            del self.marked[app.app_id]
        self._recheck(app)

    @property
    def all_refused(self) -> bool:
        """Every pending ask's last answer was the cluster's size alone."""
        return self.refused_asks == self.asks > 0


def mark_refused(marks: Marks, waits: LeafWaits, app: Application, ask: Ask, quota: str, reason: str) -> None:
    """The ask was parked because the cluster's size alone has no room for it, with `reason`."""
    unmark(marks, ask.key)
    group = (ask.resource, quota, ask.priority, reason)
    waits.add_refused(group, app)
    marks[ask.key] = (waits, group, app)


def unmark(marks: Marks, key: str) -> None:
    """The ask's last answer is no longer a refusal by the cluster's size (placed, gone, or
    another reason shown)."""
    mark = marks.pop(key, None)
    if mark is not None:
        mark[0].drop_refused(mark[1], mark[2])
