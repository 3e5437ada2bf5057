"""What the user group manager shows: REST/report documents and Prometheus-ready samples.

Documents use current YuniKorn's field names (`userName` + `groups` {appID: group},
`groupName` + `applications`, and `queues` as a tree of `queuePath`, `resourceUsage`,
`runningApplications`, `maxResources`, `maxApplications`, `children`); every key is always
present, resources are maps of names to integers. Builders here read a tracker's tree; the
manager calls them under its lock.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.resources import Resource
from core.ugm.queue_tracker import QueueTracker
from core.ugm.trackers import GroupTracker, Tracker, UserTracker


@dataclass(frozen=True, slots=True)
class UsageSample:
    """One user's or group's usage at one queue, with the limit there (None / 0: no limit)."""

    kind: str  # "user" | "group"
    name: str
    queue_path: str
    resource: Resource
    running_applications: int
    max_resources: Resource | None
    max_applications: int


def queue_document(node: QueueTracker) -> dict[str, Any]:
    limit = node.limit
    return {
        "queuePath": node.path,
        "resourceUsage": dict(node.usage),
        "runningApplications": sorted(node.running),
        "maxResources": limit.max_resources.to_dict() if limit.max_resources is not None else {},
        "maxApplications": limit.max_applications,
        "children": [queue_document(node.children[name]) for name in sorted(node.children)],
    }


def user_document(tracker: UserTracker) -> dict[str, Any]:
    groups = {app: group for app, group in sorted(tracker.app_groups.items()) if group is not None}
    return {"userName": tracker.name, "groups": groups, "queues": queue_document(tracker.queues)}


def group_document(tracker: GroupTracker) -> dict[str, Any]:
    return {
        "groupName": tracker.name,
        "applications": sorted(tracker.applications),
        "users": sorted(set(tracker.applications.values())),
        "queues": queue_document(tracker.queues),
    }


def usage_samples(tracker: Tracker) -> list[UsageSample]:
    return [
        UsageSample(
            kind=tracker.kind.value,
            name=tracker.name,
            queue_path=node.path,
            resource=Resource(node.usage),
            running_applications=len(node.running),
            max_resources=node.limit.max_resources,
            max_applications=node.limit.max_applications,
        )
        for node in tracker.queues.walk()
    ]
