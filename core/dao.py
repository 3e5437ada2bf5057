"""The documents the REST API and the simulator report show, as plain JSON-able data.

Field names follow YuniKorn's REST documents (`queuename`, `maxResource`,
`foreignAllocations`, ...) so its tools and habits carry over. Resources are maps of core
resource names to integers: `vcore` in millicores, `memory` in bytes, `pods`, and any other
resource by its Kubernetes name. Every function here reads state under the scheduler's lock
(the caller holds it) and returns fresh dicts that share nothing with the core.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.config import config_document
from core.objects.application import Application
from core.objects.ask import Allocation
from core.objects.node import Node
from core.objects.queue import Queue
from core.state import CoreState


def resource_doc(res: Mapping[str, int] | None) -> dict[str, int]:
    return {key: int(val) for key, val in sorted(res.items())} if res else {}


def _abs_used(queue: Queue) -> dict[str, int]:
    """Percentage of the max in use, per resource the max names."""
    if not queue.max:
        return {}
    return {
        key: int(queue.allocated.get(key, 0) * 100 // cap) for key, cap in sorted(queue.max.items()) if cap > 0
    }


def queue_document(state: CoreState, queue: Queue) -> dict[str, Any]:
    return {
        "queuename": queue.path,
        "status": "Draining" if queue.draining else "Active",
        "partition": state.partition.name,
        "isLeaf": queue.is_leaf,
        "isManaged": queue.managed,
        "maxResource": resource_doc(queue.max),
        "guaranteedResource": resource_doc(queue.guaranteed),
        "allocatedResource": resource_doc(queue.allocated),
        "pendingResource": resource_doc(queue.pending),
        "absUsedCapacity": _abs_used(queue),
        "maxRunningApps": queue.max_applications,
        "runningApps": queue.running_apps,
        "properties": dict(sorted(queue.properties.items())),
        "submitACL": queue.submit_acl or "",
        "children": [
            queue_document(state, child) for child in sorted(queue.children.values(), key=lambda q: q.name)
        ],
    }


def allocation_document(allocation: Allocation) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "allocationKey": allocation.key,
        "name": allocation.display_name,
        "nodeId": allocation.node_id,
        "priority": allocation.priority,
        "resource": resource_doc(allocation.resource),
        "requestTime": allocation.request_time,
        "allocationTags": allocation.tags,
    }
    if not allocation.foreign:
        doc["applicationId"] = allocation.application_id
        doc["queueName"] = allocation.queue_path
        doc["allocationTime"] = allocation.allocation_time
    return doc


def node_document(node: Node) -> dict[str, Any]:
    info = node.info
    return {
        "nodeID": info.node_id,
        "attributes": dict(sorted(info.labels.items())),
        "capacity": resource_doc(info.capacity),
        "allocated": resource_doc(node.allocated),
        "occupied": resource_doc(node.occupied),
        "available": resource_doc(node.available()),
        "schedulable": info.schedulable,
        "ready": info.ready,
        "taints": [t.describe() for t in info.taints],
        "allocations": [allocation_document(a) for a in sorted(node.allocations.values(), key=lambda a: a.key)],
        "foreignAllocations": [
            allocation_document(a) for a in sorted(node.foreign.values(), key=lambda a: a.key)
        ],
    }


def nodes_document(state: CoreState) -> list[dict[str, Any]]:
    return [node_document(state.partition.nodes[name]) for name in sorted(state.partition.nodes)]


def node_counts(state: CoreState) -> dict[str, int]:
    """How many nodes there are and how many can take pods, without building node documents."""
    nodes = state.partition.nodes.values()
    return {
        "total": len(nodes),
        "schedulable": sum(1 for n in nodes if n.info.schedulable and n.info.ready),
        "unschedulable": sum(1 for n in nodes if not n.info.schedulable),
        "notReady": sum(1 for n in nodes if not n.info.ready),
    }


def application_document(state: CoreState, app: Application) -> dict[str, Any]:
    requests = [
        {
            "allocationKey": ask.key,
            "name": ask.display_name,
            "resource": resource_doc(ask.resource),
            "priority": ask.priority,
            "requestTime": ask.created,
            "pendingReason": state.reasons.get(ask.key, ""),
        }
        for ask in sorted(app.asks.values(), key=lambda a: (-a.priority, a.created, a.key))
    ]
    return {
        "applicationID": app.app_id,
        "queueName": app.queue_path,
        "partition": state.partition.name,
        "applicationState": app.state.value,
        "user": app.user.user,
        "groups": list(app.user.groups),
        "usedResource": resource_doc(app.used),
        "pendingResource": resource_doc(app.pending_resource),
        "submissionTime": app.submission_time,
        "finishedTime": app.finished_time,
        "lastStateChangeTime": app.state_time,
        "allocations": [allocation_document(a) for a in sorted(app.allocations.values(), key=lambda a: a.key)],
        "requests": requests,
    }


def applications_document(state: CoreState) -> list[dict[str, Any]]:
    apps = sorted(state.partition.applications.values(), key=lambda a: (a.submission_time, a.app_id))
    docs = [application_document(state, app) for app in apps]
    docs.extend(application_document(state, app) for app in state.finished_apps)
    docs.extend(_rejected_document(state, *rejected) for rejected in state.rejected_apps)
    return docs


def _rejected_document(state: CoreState, app_id: str, queue: str, reason: str, when: float) -> dict[str, Any]:
    return {
        "applicationID": app_id,
        "queueName": queue,
        "partition": state.partition.name,
        "applicationState": "Rejected",
        "rejectedMessage": reason,
        "submissionTime": when,
        "allocations": [],
        "requests": [],
    }


def find_application_document(state: CoreState, app_id: str) -> dict[str, Any] | None:
    """One application by id: the live one, else its newest finished or rejected record."""
    app = state.partition.applications.get(app_id)
    if app is not None:
        return application_document(state, app)
    for finished in reversed(state.finished_apps):
        if finished.app_id == app_id:
            return application_document(state, finished)
    for rejected in reversed(state.rejected_apps):
        if rejected[0] == app_id:
            return _rejected_document(state, *rejected)
    return None


def partition_document(state: CoreState) -> dict[str, Any]:
    partition = state.partition
    capacity = partition.cluster_capacity
    used: dict[str, int] = {}
    for node in partition.nodes.values():
        for source in (node.allocated, node.occupied):
            for key, val in source.items():
                used[key] = used.get(key, 0) + val
    by_state: dict[str, int] = {}
    for app in partition.applications.values():
        by_state[app.state.value] = by_state.get(app.state.value, 0) + 1
    policy = partition.config.node_sort_policy
    return {
        "name": partition.name,
        "state": "Active",
        "capacity": {
            "capacity": resource_doc(capacity),
            "usedCapacity": resource_doc(used),
            "utilization": {
                key: int(used.get(key, 0) * 100 // cap) for key, cap in sorted(capacity.items()) if cap > 0
            },
        },
        "totalNodes": len(partition.nodes),
        "applications": {"total": len(partition.applications), **dict(sorted(by_state.items()))},
        "totalContainers": len(state.allocations),
        "pendingRequests": len(state.ask_app) + len(state.unplaced),
        "nodeSortingPolicy": {"type": policy.type, "resourceWeights": dict(policy.resource_weights)},
    }


def config_doc(state: CoreState) -> dict[str, Any]:
    doc = config_document(state.config)
    doc["settings"] = state.settings.to_dict()
    return doc


def full_state_dump(state: CoreState) -> dict[str, Any]:
    return {
        "partitions": [partition_document(state)],
        "queues": queue_document(state, state.partition.root),
        "applications": applications_document(state),
        "nodes": nodes_document(state),
        "usage": {"users": state.ugm.users_documents(), "groups": state.ugm.groups_documents()},
        "quotas": state.quotas.documents(),
        "config": config_doc(state),
        "placementRules": [
            {"name": rule.name, "create": rule.create, "value": rule.value}
            for rule in state.partition.config.placement_rules
        ],
    }
