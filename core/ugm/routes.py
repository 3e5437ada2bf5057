"""A running application's way through its user's and its group's usage trees.

The first increase of an application on a limited path finds (or makes) its trackers, resolves
its group, walks both trees level by level and checks every limit. Its next pods take the same
way: a `Route` keeps the levels it reached and, leaf first, the resource caps that bind it, so
the next increase is a check of those caps and an add at each level.

A route stays right while its application runs: every level on it lists the application as
running, so no level of it is pruned and no tracker on it is dropped, and a running
application's limit on the number of applications is already met. The manager forgets the
route when the application stops running (`remove_app`) and forgets every route when the
limits change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.ugm.limits import NO_LIMIT, LimitTable
from core.ugm.queue_tracker import Levels, QueueTracker, add_usage, within_caps
from core.ugm.trackers import GroupTracker, UserTracker

Caps = tuple[tuple[str, int], ...]


class Route:
    __slots__ = ("checks", "group", "path", "usages")

    def __init__(
        self,
        path: str,
        group: GroupTracker | None,
        usages: list[dict[str, int]],
        checks: list[tuple[dict[str, int], Caps]],
    ) -> None:
        self.path = path
        self.group = group  # the application's group tracker, if it is tracked against one
        self.usages = usages  # every level's usage, the user's tree then the group's
        self.checks = checks  # (usage, caps) of every level with resource caps, as the full check orders them

    def fits(self, usage: Mapping[str, int]) -> bool:
        """No cap on the route would be passed by adding `usage`."""
        for used, caps in self.checks:
            if not within_caps(used, caps, usage):
                return False
        return True

    def add(self, usage: Mapping[str, int]) -> None:
        for held in self.usages:
            add_usage(held, usage)


def route_of(path: str, levels: Levels, user: UserTracker, group: GroupTracker | None, table: LimitTable) -> Route:
    """The route of an application that was just added along `levels` (so every level exists)."""
    user_nodes = _nodes(user.queues, levels)
    group_nodes = _nodes(group.queues, levels) if group is not None else []
    checks = _capped(reversed(user_nodes), frozenset())
    if group is not None:
        checks += _capped(reversed(group_nodes), table.named_user_levels(user.name, levels))
    return Route(path, group, [node.usage for node in user_nodes + group_nodes], checks)


def _nodes(root: QueueTracker, levels: Levels) -> list[QueueTracker]:
    nodes = [root]
    for name, _path in levels[1:]:
        nodes.append(nodes[-1].children[name])
    return nodes


def _capped(nodes: Iterable[QueueTracker], exempt: frozenset[str]) -> list[tuple[dict[str, int], Caps]]:
    """(usage, caps) of every level with resource caps, in the order given, but those in `exempt`."""
    return [
        (node.usage, node.limit.resource_caps)
        for node in nodes
        if node.limit is not NO_LIMIT and node.limit.resource_caps and node.path not in exempt
    ]
