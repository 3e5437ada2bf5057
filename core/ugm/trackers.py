"""User and group trackers: who owns which usage, and the bookkeeping that keeps them alive.

A `UserTracker` is a user's usage tree plus, per running application, the group the
application was resolved to on its first increase (or None: no group tracking); that choice
never changes while the application runs. A `GroupTracker` is a group's usage tree plus the
applications (and their users) counted against it. The `*` group has one tracker, shared by
everyone resolved to the wildcard group limit: that is what makes it cumulative.

Trackers have no lock of their own: the manager changes and reads them only under its lock.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping

from core.ugm.denial import Denial
from core.ugm.limits import LimitTable, TrackingKind
from core.ugm.queue_tracker import (
    Levels,
    QueueTracker,
    apply_decrease,
    apply_increase,
    apply_limits,
    check_increase,
    new_root,
)


class Tracker(ABC):
    """What user and group trackers share: a name and a usage tree."""

    kind: TrackingKind

    __slots__ = ("name", "queues")

    def __init__(self, name: str, table: LimitTable) -> None:
        self.name = name
        self.queues: QueueTracker = new_root(table, self.kind, name)

    def check_increase(
        self,
        levels: Levels,
        application_id: str,
        usage: Mapping[str, int],
        table: LimitTable,
        exempt: frozenset[str] = frozenset(),
    ) -> Denial | None:
        """The first of this tracker's limits the increase would break, leaf first, skipping
        the queues in `exempt`."""
        return check_increase(self.queues, levels, application_id, usage, table, self.kind, self.name, exempt)

    def increase(self, levels: Levels, application_id: str, usage: Mapping[str, int], table: LimitTable) -> None:
        apply_increase(self.queues, levels, application_id, usage, table, self.kind, self.name)

    def decrease(self, levels: Levels, application_id: str, usage: Mapping[str, int], remove_app: bool) -> None:
        apply_decrease(self.queues, levels, application_id, usage, remove_app, self.name)

    def apply_limits(self, table: LimitTable) -> None:
        """Re-read every level's limit from the table."""
        apply_limits(self.queues, table, self.kind, self.name)

    @abstractmethod
    def is_unused(self) -> bool:
        """Nothing tracked any more: the manager may drop the tracker."""


class UserTracker(Tracker):
    kind = TrackingKind.USER

    __slots__ = ("app_groups",)

    def __init__(self, name: str, table: LimitTable) -> None:
        super().__init__(name, table)
        self.app_groups: dict[str, str | None] = {}

    def is_unused(self) -> bool:
        return not self.app_groups and self.queues.is_empty()


class GroupTracker(Tracker):
    kind = TrackingKind.GROUP

    __slots__ = ("applications",)

    def __init__(self, name: str, table: LimitTable) -> None:
        super().__init__(name, table)
        self.applications: dict[str, str] = {}  # application id -> user

    def is_unused(self) -> bool:
        return not self.applications and self.queues.is_empty()
