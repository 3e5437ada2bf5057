"""Usage of one user or one group along the queue hierarchy, with the limits that bind it.

A `QueueTracker` tree starts at `root` and holds only the queues where its owner has usage or
running applications (a sparse mirror of the queue tree): levels are created by an increase
and pruned by the decrease that empties them. Each level keeps its usage, the ids of the
applications running at or below it, and the owner's limit there, set from the `LimitTable`
when the level is created and re-set on a configuration change.

A tree belongs to exactly one user or group tracker and is only touched under the manager's
lock, so it has no lock of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from functools import lru_cache

from core.config.schema import ROOT
from core.ugm.denial import Denial, applications_denial, resources_denial
from core.ugm.limits import NO_LIMIT, LimitConfig, LimitTable, TrackingKind

log = logging.getLogger(__name__)

Levels = tuple[tuple[str, str], ...]


class QueuePathError(ValueError):
    """A queue path that is not a dotted path starting at root."""


@lru_cache(maxsize=65536)  # every queue's path, kept: a tree of 10,000 leaves cycled through a smaller cache
def path_levels(queue_path: str) -> Levels:
    """(name, full path) of every level from root down to the queue: `root.a` ->
    (("root", "root"), ("a", "root.a"))."""
    names = queue_path.split(".")
    if names[0] != ROOT or not all(names):
        raise QueuePathError(f"queue path {queue_path!r} is not a dotted path starting with 'root'")
    levels = []
    path = ""
    for name in names:
        path = f"{path}.{name}" if path else name
        levels.append((name, path))
    return tuple(levels)


class QueueTracker:
    """One level of an owner's usage tree."""

    __slots__ = ("children", "limit", "name", "path", "running", "usage")

    def __init__(self, name: str, path: str, limit: LimitConfig = NO_LIMIT) -> None:
        self.name = name
        self.path = path
        self.usage: dict[str, int] = {}  # sparse: a resource back at zero is dropped
        self.running: set[str] = set()
        self.limit = limit
        self.children: dict[str, QueueTracker] = {}

    def is_empty(self) -> bool:
        return not self.usage and not self.running and not self.children

    def walk(self) -> Iterator[QueueTracker]:
        yield self
        for child in self.children.values():
            yield from child.walk()


def new_root(table: LimitTable, kind: TrackingKind, owner: str) -> QueueTracker:
    return QueueTracker(ROOT, ROOT, table.limit_for(kind, owner, ROOT))


def check_increase(
    root: QueueTracker,
    levels: Levels,
    application_id: str,
    usage: Mapping[str, int],
    table: LimitTable,
    kind: TrackingKind,
    owner: str,
    exempt: frozenset[str] = frozenset(),
) -> Denial | None:
    """The first limit, from the leaf up to root, that this increase would break; None if none.

    A level the tree does not hold yet has no usage; its limit comes from the table, as it
    would on creation. Only resources the increase asks for are checked, so a usage left above
    a lowered limit blocks more of that resource but not of others. Levels in `exempt` are
    not checked.
    """
    trackers: list[QueueTracker | None] = [root]
    node: QueueTracker | None = root
    for name, _path in levels[1:]:
        node = node.children.get(name) if node is not None else None
        trackers.append(node)
    index = len(levels)
    while index:  # from the leaf up
        index -= 1
        path = levels[index][1]
        if exempt and path in exempt:
            continue
        tracker = trackers[index]
        limit = tracker.limit if tracker is not None else table.limit_for(kind, owner, path)
        if limit is NO_LIMIT:
            continue
        used: Mapping[str, int] = tracker.usage if tracker is not None else {}
        if limit.max_applications > 0:
            running = tracker.running if tracker is not None else set()
            if application_id not in running and len(running) + 1 > limit.max_applications:
                return applications_denial(kind, owner, path, limit.max_applications)
        if not within_caps(used, limit.resource_caps, usage):
            caps = dict(limit.resource_caps)
            return resources_denial(kind, owner, path, used, usage, caps, _exceeded(caps, used, usage))
    return None


def within_caps(used: Mapping[str, int], caps: tuple[tuple[str, int], ...], usage: Mapping[str, int]) -> bool:
    """Adding `usage` to `used` passes no cap; only the resources the usage asks for are
    checked, so a usage left above a lowered cap blocks more of that resource only."""
    for key, cap in caps:
        asked = usage.get(key, 0)
        if asked > 0 and used.get(key, 0) + asked > cap:
            return False
    return True


def apply_increase(
    root: QueueTracker,
    levels: Levels,
    application_id: str,
    usage: Mapping[str, int],
    table: LimitTable,
    kind: TrackingKind,
    owner: str,
) -> None:
    """Add the usage and the running application at every level, creating missing levels."""
    node = root
    for index, (name, path) in enumerate(levels):
        if index:
            child = node.children.get(name)
            if child is None:
                child = QueueTracker(name, path, table.limit_for(kind, owner, path))
                node.children[name] = child
            node = child
        add_usage(node.usage, usage)
        node.running.add(application_id)


def apply_decrease(
    root: QueueTracker,
    levels: Levels,
    application_id: str,
    usage: Mapping[str, int],
    remove_app: bool,
    owner: str,
) -> None:
    """Remove usage (and the application, when it stops running) and prune emptied levels."""
    chain = [root]
    for name, _path in levels[1:]:
        child = chain[-1].children.get(name)
        if child is None:
            log.warning("usage of %s at %s is not tracked: decrease ignored below", owner, levels[-1][1])
            break
        chain.append(child)
    for node in chain:
        if _subtract(node.usage, usage):
            log.warning("usage of %s at %s would go below zero: kept at zero", owner, node.path)
        if remove_app:
            node.running.discard(application_id)
    for parent, child in zip(reversed(chain[:-1]), reversed(chain[1:])):
        if child.is_empty():
            del parent.children[child.name]


def apply_limits(root: QueueTracker, table: LimitTable, kind: TrackingKind, owner: str) -> None:
    """Set every level's limit from the table (a removed limit is cleared)."""
    for node in root.walk():
        limit = table.limit_for(kind, owner, node.path)
        if node.limit != limit:
            node.limit = limit


def _exceeded(caps: Mapping[str, int], used: Mapping[str, int], usage: Mapping[str, int]) -> list[str]:
    """The resources whose cap the usage would pass, in the caps' order."""
    return [key for key, cap in caps.items() if usage.get(key, 0) > 0 and used.get(key, 0) + usage[key] > cap]


def add_usage(usage: dict[str, int], delta: Mapping[str, int]) -> None:
    """Add `delta` into `usage` in place, keeping it sparse (a resource at zero is dropped)."""
    for key, value in delta.items():
        if value:
            total = usage.get(key, 0) + value
            if total:
                usage[key] = total
            else:
                del usage[key]


def _subtract(usage: dict[str, int], delta: Mapping[str, int]) -> bool:
    """Subtract in place; True when some value would have gone negative (clamped to zero)."""
    clamped = False
    for key, value in delta.items():
        if value:
            total = usage.get(key, 0) - value
            if total < 0:
                clamped = True
                total = 0
            if total:
                usage[key] = total
            else:
                usage.pop(key, None)
    return clamped
