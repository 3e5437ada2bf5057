"""Small worlds for user group manager tests: a queue tree with limits, a manager, users."""

from __future__ import annotations

from core.config.schema import Limit, PartitionConfig, QueueConfig
from core.objects.ask import UserGroup
from core.resources import Resource
from core.ugm import UserGroupManager


def limit(
    users: tuple[str, ...] = (),
    groups: tuple[str, ...] = (),
    vcore: int | None = None,
    memory: int | None = None,
    apps: int = 0,
) -> Limit:
    """A limit entry; vcore in cores (held in millicores like the config does)."""
    values: dict[str, int] = {}
    if vcore is not None:
        values["vcore"] = vcore * 1000
    if memory is not None:
        values["memory"] = memory
    return Limit(users=users, groups=groups, max_resources=Resource(values) if values else None, max_applications=apps)


def queue(name: str, *children: QueueConfig, limits: tuple[Limit, ...] = ()) -> QueueConfig:
    return QueueConfig(name=name, queues=children, limits=limits)


def partition(root: QueueConfig, limits: tuple[Limit, ...] = ()) -> PartitionConfig:
    return PartitionConfig(queues=(root,), limits=limits)


def manager(root: QueueConfig, limits: tuple[Limit, ...] = ()) -> UserGroupManager:
    ugm = UserGroupManager()
    ugm.update_config(partition(root, limits))
    return ugm


def cores(vcore: float, memory: int = 0) -> Resource:
    values = {"vcore": int(vcore * 1000)}
    if memory:
        values["memory"] = memory
    return Resource(values)


def who(name: str, *groups: str) -> UserGroup:
    return UserGroup(name, groups)


def usage_at(document: dict[str, object] | None, queue_path: str) -> dict[str, int] | None:
    """resourceUsage of one queue in a user or group document (None when not tracked there)."""
    node = _node(document, queue_path)
    return None if node is None else dict(node["resourceUsage"])


def running_at(document: dict[str, object] | None, queue_path: str) -> list[str] | None:
    node = _node(document, queue_path)
    return None if node is None else list(node["runningApplications"])


def limits_at(document: dict[str, object] | None, queue_path: str) -> tuple[dict[str, int], int] | None:
    node = _node(document, queue_path)
    return None if node is None else (dict(node["maxResources"]), int(node["maxApplications"]))


def _node(document: dict[str, object] | None, queue_path: str) -> dict[str, object] | None:
    if document is None:
        return None
    node: dict[str, object] | None = document["queues"]  # type: ignore[assignment]
    while node is not None and node["queuePath"] != queue_path:
        children: list[dict[str, object]] = node["children"]  # type: ignore[assignment]
        node = next(
            (c for c in children if queue_path.startswith(f"{c['queuePath']}.") or c["queuePath"] == queue_path),
            None,
        )
    return node
