"""The user and group limits of a partition, read from its validated configuration.

A `LimitTable` answers two questions for the user group manager, per queue path:

- which limit applies to a user or a group tracked there (a named user's own limit, else the
  `*` user limit; a named group's own limit; the `*` group tracker's `*` limit), and
- which group an application is tracked against (`resolve_group`): bottom-up from the leaf,
  the first named group configured at a level that the user belongs to, else `*` when a `*`
  group limit exists at that level, else the parent level; none when nothing matches.

The table is immutable: a configuration change builds a new one and the manager swaps it in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum

from core.config.schema import ROOT, Limit, PartitionConfig, QueueConfig
from core.kept import KeptTable
from core.resources import Resource

WILDCARD = "*"


class TrackingKind(Enum):
    """Who a tracker tracks."""

    USER = "user"
    GROUP = "group"


@dataclass(frozen=True, slots=True)
class LimitConfig:
    """The limit one user or group has at one queue: resources (only the named ones are
    limited) and running applications (0: not limited)."""

    max_resources: Resource | None = None
    max_applications: int = 0
    # max_resources as sorted (name, cap) pairs: the hot path iterates these, not the mapping
    resource_caps: tuple[tuple[str, int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        caps = tuple(sorted(self.max_resources.to_dict().items())) if self.max_resources is not None else ()
        object.__setattr__(self, "resource_caps", caps)


NO_LIMIT = LimitConfig()


@dataclass(frozen=True, slots=True)
class QueueLimits:
    """Every limit configured on one queue, as the tracker lookups need them."""

    users: Mapping[str, LimitConfig] = field(default_factory=dict)
    groups: Mapping[str, LimitConfig] = field(default_factory=dict)
    user_wildcard: LimitConfig | None = None
    group_wildcard: LimitConfig | None = None
    group_order: tuple[str, ...] = ()  # named groups in configuration order, for resolution


EMPTY_QUEUE_LIMITS = QueueLimits()
_ANSWERS_KEPT = 65536  # per-path answers a table keeps


@dataclass(frozen=True, slots=True)
class LimitTable:
    """Limits by full queue path ("root", "root.team", ...)."""

    queues: Mapping[str, QueueLimits] = field(default_factory=dict)
    # Answers per queue path (and user), read on every limited placement; the table never
    # changes, so they hold for its life.
    _limited_paths: KeptTable[str, bool] = field(
        default_factory=lambda: KeptTable(_ANSWERS_KEPT), compare=False, repr=False
    )
    _named_paths: KeptTable[tuple[str, str], frozenset[str]] = field(
        default_factory=lambda: KeptTable(_ANSWERS_KEPT), compare=False, repr=False
    )

    @staticmethod
    def from_partition(partition: PartitionConfig) -> LimitTable:
        """The limits of every queue; the partition's `limits` are the root queue's when the
        root queue has none of its own (validation makes them equal when both are set)."""
        queues: dict[str, QueueLimits] = {}
        if partition.queues:
            root = partition.root
            for path, queue in _walk(root, ROOT):
                limits = queue.limits
                if path == ROOT and not limits:
                    limits = partition.limits
                if limits:
                    queues[path] = _queue_limits(limits)
        elif partition.limits:
            queues[ROOT] = _queue_limits(partition.limits)
        return LimitTable(queues)

    def at(self, queue_path: str) -> QueueLimits:
        return self.queues.get(queue_path, EMPTY_QUEUE_LIMITS)

    def limit_for(self, kind: TrackingKind, name: str, queue_path: str) -> LimitConfig:
        """The limit a tracker of this user or group has at this queue (NO_LIMIT when none)."""
        limits = self.queues.get(queue_path)
        if limits is None:
            return NO_LIMIT
        if kind is TrackingKind.USER:
            found = limits.users.get(name, limits.user_wildcard)
        elif name == WILDCARD:
            found = limits.group_wildcard
        else:
            found = limits.groups.get(name)
        return found if found is not None else NO_LIMIT

    def limits_any(self, queue_paths: Iterable[str]) -> bool:
        """Whether any of these queues has a limit of any user or group."""
        queues = self.queues
        return bool(queues) and any(path in queues for path in queue_paths)

    def limits_on(self, levels: tuple[tuple[str, str], ...]) -> bool:
        """`limits_any` over a queue path's levels ((name, path) from root down), kept per path."""
        leaf = levels[-1][1]
        found = self._limited_paths.get(leaf)
        if found is None:
            found = self._limited_paths.keep(leaf, self.limits_any(path for _, path in levels))
        return found

    def named_user_levels(self, user: str, levels: tuple[tuple[str, str], ...]) -> frozenset[str]:
        """`named_user_paths` over a queue path's levels, kept per user and path."""
        key = (user, levels[-1][1])
        found = self._named_paths.get(key)
        if found is None:
            found = self._named_paths.keep(key, self.named_user_paths(user, (path for _, path in levels)))
        return found

    def named_user_paths(self, user: str, queue_paths: Iterable[str]) -> frozenset[str]:
        """The queues among `queue_paths` where `user` has a limit of their own (not `*`): there
        the user's limit takes precedence over group limits (seed 000)."""
        return frozenset(path for path in queue_paths if path in self.queues and user in self.queues[path].users)

    def resolve_group(self, queue_path: str, groups: tuple[str, ...]) -> str | None:
        """The group an application in `queue_path` of a user in `groups` is tracked against.

        A user without groups is tracked against no group (seed 000), even under a `*` limit.
        """
        if not groups or not self.queues:
            return None
        members = set(groups)
        path = queue_path
        while path:
            limits = self.queues.get(path)
            if limits is not None:
                for group in limits.group_order:
                    if group in members:
                        return group
                if limits.group_wildcard is not None:
                    return WILDCARD
            cut = path.rfind(".")
            path = path[:cut] if cut > 0 else ""
        return None


def _walk(queue: QueueConfig, path: str) -> Iterator[tuple[str, QueueConfig]]:
    yield path, queue
    for child in queue.queues:
        yield from _walk(child, f"{path}.{child.name}")


def _queue_limits(entries: tuple[Limit, ...]) -> QueueLimits:
    users: dict[str, LimitConfig] = {}
    groups: dict[str, LimitConfig] = {}
    user_wildcard: LimitConfig | None = None
    group_wildcard: LimitConfig | None = None
    for entry in entries:
        config = LimitConfig(entry.max_resources, entry.max_applications)
        for user in entry.users:
            if user == WILDCARD:
                user_wildcard = config if user_wildcard is None else user_wildcard
            else:
                users.setdefault(user, config)
        for group in entry.groups:
            if group == WILDCARD:
                group_wildcard = config if group_wildcard is None else group_wildcard
            else:
                groups.setdefault(group, config)
    return QueueLimits(users, groups, user_wildcard, group_wildcard, tuple(groups))
