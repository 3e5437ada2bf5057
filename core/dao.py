"""The documents the REST API and the simulator report show, as plain JSON-able data.

Field names and units follow YuniKorn's REST documents (`queuename`, `maxResource`,
`foreignAllocations`, ...) so its tools and its web UI carry over. Resources are maps of core
resource names to integers: `vcore` in millicores, `memory` in bytes, `pods`, and any other
resource by its Kubernetes name. Times are Unix-epoch nanoseconds (the core's clock plus
`state.epoch_offset()`); priorities are strings, as YuniKorn prints them. Every function here
reads state under the scheduler's lock (the caller holds it) and returns fresh dicts that
share nothing with the core.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from core.config import config_document
from core.gang.gang import Gang
from core.objects import queue_priority
from core.objects.application import Application
from core.objects.ask import Allocation
from core.objects.node import Node
from core.objects.queue import Queue
from core.preemption import queues as preemption_queues
from core.state import CoreState

CLUSTER_ID = "herder"  # YuniKorn's rmID / clusterId: the one cluster this scheduler serves
TAG_NAMESPACE = "kubernetes.io/meta/namespace"
TAG_POD_NAME = "kubernetes.io/meta/podName"


def resource_doc(res: Mapping[str, int] | None) -> dict[str, int]:
    return {key: int(val) for key, val in sorted(res.items())} if res else {}


def zero_filled(res: Mapping[str, int] | None, keys: Mapping[str, int]) -> dict[str, int]:
    """`res` with a 0 for every resource of `keys` it lacks (YuniKorn prints zeros, not `{}`)."""
    out = dict.fromkeys(keys, 0)
    out.update(res or {})
    return resource_doc(out)


def epoch_ns(t: float | None, offset: float = 0.0) -> int | None:
    """A time of the core's clock (`offset` 0: already Unix time) as Unix nanoseconds."""
    return None if t is None else round((t + offset) * 1e9)


def allocation_tags(name: str, tags: Mapping[str, str]) -> dict[str, str]:
    """YuniKorn's allocation tags: the pod's namespace and name (what the web UI shows) + ours."""
    namespace, _, pod = name.rpartition("/")
    out = dict(tags)
    if pod:
        out[TAG_NAMESPACE] = namespace
        out[TAG_POD_NAME] = pod
    return out


def _abs_used(queue: Queue) -> dict[str, int]:
    """Percentage of the max in use, per resource the max names."""
    if not queue.max:
        return {}
    return {key: int(queue.allocated.get(key, 0) * 100 // cap) for key, cap in sorted(queue.max.items()) if cap > 0}


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
        **_preemption_fields(state, queue),
        "children": [queue_document(state, child) for child in queue.children_by_name()],
    }


def queues_in_document_order(queue: Queue) -> Iterator[Queue]:
    """The queue and every queue below it, in the order `queue_document` nests them."""
    yield queue
    for child in queue.children_by_name():
        yield from queues_in_document_order(child)


def _preemption_fields(state: CoreState, queue: Queue) -> dict[str, Any]:
    """YuniKorn's queue fields for preemption and priority (delay as a Go duration string)."""
    return {
        "preemptionEnabled": state.partition.config.preemption_enabled and preemption_queues.may_lose_pods(queue),
        "isPreemptionFence": preemption_queues.policy(queue) == preemption_queues.FENCE,
        "preemptionDelay": go_duration(preemption_queues.delay(queue)),
        "currentPriority": queue_priority.current_priority(queue),
        "priorityOffset": queue_priority.offset(queue),
    }


def go_duration(seconds: float) -> str:
    whole = int(seconds)
    if whole != seconds or whole == 0:
        return f"{seconds:g}s"
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if hours or minutes else "")
    return f"{text}{secs}s"


def allocation_document(allocation: Allocation, partition: str) -> dict[str, Any]:
    request_ns = epoch_ns(allocation.request_time)
    doc: dict[str, Any] = {
        "allocationKey": allocation.key,
        "allocationID": allocation.key,
        "name": allocation.display_name,
        "nodeId": allocation.node_id,
        "partition": partition,
        "priority": str(allocation.priority),
        "resource": resource_doc(allocation.resource),
        "requestTime": request_ns,
        "allocationTags": allocation_tags(allocation.name, allocation.tags),
        "placeholder": False,
        "placeholderUsed": False,
    }
    if not allocation.foreign:
        allocated_ns = epoch_ns(allocation.allocation_time)
        doc["applicationId"] = allocation.application_id
        doc["queueName"] = allocation.queue_path
        doc["allocationTime"] = allocated_ns
        doc["allocationDelay"] = max(0, (allocated_ns or 0) - (request_ns or 0))
    ask = allocation.ask
    if ask is not None and (ask.task_group or ask.placeholder):
        doc["taskGroupName"] = ask.task_group
        doc["placeholder"] = ask.placeholder
        doc["placeholderUsed"] = bool(allocation.replaces)
    return doc


def node_utilized(node: Node) -> dict[str, int]:
    """Percent of each resource of the node's capacity in use by Herder's pods (YuniKorn's `utilized`)."""
    capacity = node.info.capacity
    return {key: int(node.allocated.get(key, 0) * 100 // cap) for key, cap in sorted(capacity.items()) if cap > 0}


def node_document(node: Node, partition: str, owners: Mapping[str, str] | None = None) -> dict[str, Any]:
    """YuniKorn's node document; `owners` maps the pods room is kept for to their applications
    (`reservations` lists `<application>|<pod>`, as YuniKorn keys a node's reservations)."""
    owners = owners or {}
    info = node.info
    capacity = info.capacity
    return {
        "nodeID": info.node_id,
        "hostName": info.labels.get("kubernetes.io/hostname", ""),
        "rackName": info.labels.get("topology.kubernetes.io/zone", ""),
        "partition": partition,
        "attributes": dict(sorted(info.labels.items())),
        "capacity": resource_doc(capacity),
        "allocated": zero_filled(node.allocated, capacity),
        "occupied": zero_filled(node.occupied, capacity),
        "available": zero_filled(node.free(), capacity),
        "utilized": node_utilized(node),
        "schedulable": info.schedulable,
        "ready": info.ready,
        "isReserved": bool(node.held),
        "reservations": [f"{owners.get(key, '')}|{key}" for key in sorted(node.held)],
        "reservedResource": resource_doc(node.kept),
        "taints": [t.describe() for t in info.taints],
        "allocations": [
            allocation_document(a, partition) for a in sorted(node.allocations.values(), key=lambda a: a.key)
        ],
        "foreignAllocations": [
            allocation_document(a, partition) for a in sorted(node.foreign.values(), key=lambda a: a.key)
        ],
    }


def kept_owners(state: CoreState) -> dict[str, str]:
    """The application of every pending pod room is kept for (a preemptor or a reservation)."""
    owners = {key: app.app_id for key in state.holds if (app := state.ask_app.get(key)) is not None}
    owners.update((key, r.app_id) for key, r in state.reservations.by_ask.items())
    return owners


def nodes_document(state: CoreState) -> list[dict[str, Any]]:
    partition = state.partition
    owners = kept_owners(state)
    return [node_document(partition.nodes[name], partition.name, owners) for name in sorted(partition.nodes)]


def node_counts(state: CoreState) -> dict[str, int]:
    """How many nodes there are and how many can take pods, without building node documents."""
    nodes = state.partition.nodes.values()
    return {
        "total": len(nodes),
        "schedulable": sum(1 for n in nodes if n.info.schedulable and n.info.ready),
        "unschedulable": sum(1 for n in nodes if not n.info.schedulable),
        "notReady": sum(1 for n in nodes if not n.info.ready),
    }


def application_document(state: CoreState, app: Application, offset: float) -> dict[str, Any]:
    partition = state.partition.name
    requests = [
        {
            "allocationKey": ask.key,
            "name": ask.display_name,
            "applicationId": app.app_id,
            "partition": partition,
            "resource": resource_doc(ask.resource),
            "priority": str(ask.priority),
            "requestTime": epoch_ns(ask.created),
            "allocationTags": allocation_tags(ask.name, {}),
            "pendingCount": 1,
            "placeholder": False,
            "pendingReason": state.reasons.get(ask.key, ""),
            **({"taskGroupName": ask.task_group, "placeholder": ask.placeholder} if ask.task_group else {}),
        }
        for ask in sorted(app.asks.values(), key=lambda a: (-a.priority, a.created, a.key))
    ]
    return {
        "applicationID": app.app_id,
        "queueName": app.queue_path,
        "partition": partition,
        "applicationState": app.state.value,
        "user": app.user.user,
        "groups": list(app.user.groups),
        "usedResource": resource_doc(app.used),
        "maxUsedResource": resource_doc(app.used),
        "pendingResource": resource_doc(app.pending_resource),
        "submissionTime": epoch_ns(app.submission_time, offset),
        "finishedTime": epoch_ns(app.finished_time, offset),
        "lastStateChangeTime": epoch_ns(app.state_time, offset),
        "stateLog": [
            {"time": epoch_ns(when, offset), "applicationState": target.value} for when, target in app.state_log
        ],
        "rejectedMessage": "",
        **_app_reservations(state, app),
        "allocations": [
            allocation_document(a, partition) for a in sorted(app.allocations.values(), key=lambda a: a.key)
        ],
        "requests": requests,
        **placeholder_data(state, app.app_id),
    }


def _app_reservations(state: CoreState, app: Application) -> dict[str, Any]:
    """YuniKorn's `hasReserved` and `reservations` (`<node>|<pod>` for each of its pending pods
    room is kept for: a reservation, or a preemptor's held room)."""
    kept = [f"{node_id}|{key}" for key in app.asks if (node_id := _kept_node(state, key)) is not None]
    return {"hasReserved": bool(kept), "reservations": sorted(kept)}


def _kept_node(state: CoreState, key: str) -> str | None:
    reservation = state.reservations.by_ask.get(key)
    if reservation is not None:
        return reservation.node_id
    hold = state.holds.get(key)
    return hold.node_id if hold is not None else None


def placeholder_data(state: CoreState, app_id: str) -> dict[str, Any]:
    """YuniKorn's `placeholderData` (one entry per task group) and Herder's `gangSchedulingStyle`,
    `taskGroups` and, for a gang with a topology, `gangTopology` (the label, Required or
    Preferred, the domains chosen and whether a member fixed them); nothing for an application
    without a gang."""
    gang = state.gangs.gangs.get(app_id) or state.gangs.ended.get(app_id)
    if gang is None:
        return {}
    spec = gang.spec
    topology: dict[str, Any] = {}
    if spec.topology is not None:
        topology["gangTopology"] = {
            "key": spec.topology.key,
            "mode": spec.topology.mode,
            "domains": sorted(gang.domains) if gang.domains is not None else [],
            "fixed": gang.domains_fixed,
        }
    if spec.from_pods:
        return {**topology, **_from_pods_data(gang)}
    return {
        **topology,
        "gangSchedulingStyle": spec.style,
        "placeholderTimeoutInSeconds": spec.timeout,
        "gangPhase": gang.phase,
        "taskGroups": [
            {"name": group.name, "minMember": group.min_member, "minResource": resource_doc(group.min_resource)}
            for group in spec.groups
        ],
        "placeholderData": [
            {
                "taskGroupName": group.name,
                "count": group.min_member,
                "minResource": resource_doc(group.min_resource),
                "replaced": gang.groups[group.name].replaced,
                "timedout": gang.groups[group.name].timed_out,
            }
            for group in spec.groups
        ],
    }


def _from_pods_data(gang: Gang) -> dict[str, Any]:
    """A PodGroup API's gang: its source, its minimum of pods (and of each task) and, per task,
    the placeholders cut from its pods."""
    spec = gang.spec
    return {
        "gangSource": spec.source,
        "gangSchedulingStyle": spec.style,
        "placeholderTimeoutInSeconds": spec.timeout,
        "gangPhase": gang.phase,
        "minMembers": spec.members,
        **({"minResources": resource_doc(spec.min_resources)} if spec.min_resources is not None else {}),
        "taskGroups": [{"name": group.name, "minMember": group.min_member} for group in spec.groups],
        "placeholderData": [
            {
                "taskGroupName": name,
                "count": len(progress.asked) + len(progress.placed) + progress.replaced,
                "replaced": progress.replaced,
                "timedout": progress.timed_out,
            }
            for name, progress in sorted(gang.groups.items())
        ],
    }


def applications_document(state: CoreState) -> list[dict[str, Any]]:
    offset = state.epoch_offset()
    apps = sorted(state.partition.applications.values(), key=lambda a: (a.submission_time, a.app_id))
    docs = [application_document(state, app, offset) for app in apps]
    docs.extend(application_document(state, app, offset) for app in state.finished_apps)
    docs.extend(_rejected_document(state, *rejected, offset) for rejected in state.rejected_apps)
    return docs


def _rejected_document(
    state: CoreState, app_id: str, queue: str, reason: str, when: float, offset: float
) -> dict[str, Any]:
    at = epoch_ns(when, offset)
    return {
        "applicationID": app_id,
        "queueName": queue,
        "partition": state.partition.name,
        "applicationState": "Rejected",
        "rejectedMessage": reason,
        "submissionTime": at,
        "finishedTime": at,
        "lastStateChangeTime": at,
        "stateLog": [{"time": at, "applicationState": "Rejected"}],
        "usedResource": {},
        "maxUsedResource": {},
        "pendingResource": {},
        "allocations": [],
        "requests": [],
    }


def find_application_document(state: CoreState, app_id: str) -> dict[str, Any] | None:
    """One application by id: the live one, else its newest finished or rejected record."""
    offset = state.epoch_offset()
    app = state.partition.applications.get(app_id)
    if app is not None:
        return application_document(state, app, offset)
    for finished in reversed(state.finished_apps):
        if finished.app_id == app_id:
            return application_document(state, finished, offset)
    for rejected in reversed(state.rejected_apps):
        if rejected[0] == app_id:
            return _rejected_document(state, *rejected, offset)
    return None


def partition_document(state: CoreState) -> dict[str, Any]:
    partition = state.partition
    capacity = partition.cluster_capacity
    used: dict[str, int] = {}
    for node in partition.nodes.values():
        for source in (node.allocated, node.occupied):
            for key, val in source.items():
                used[key] = used.get(key, 0) + val
    states = [app.state.value for app in partition.applications.values()]
    states.extend(app.state.value for app in state.finished_apps)
    states.extend("Rejected" for _ in state.rejected_apps)
    by_state = Counter(states)
    policy = partition.config.node_sort_policy
    return {
        "clusterId": CLUSTER_ID,
        "name": partition.name,
        "state": "Active",
        "lastStateTransitionTime": epoch_ns(state.started, state.epoch_offset()),
        "capacity": {
            "capacity": resource_doc(capacity),
            "usedCapacity": resource_doc(used),
            "utilization": {
                key: int(used.get(key, 0) * 100 // cap) for key, cap in sorted(capacity.items()) if cap > 0
            },
        },
        "totalNodes": len(partition.nodes),
        "applications": {"total": len(states), **dict(sorted(by_state.items()))},
        "totalContainers": len(state.allocations),
        "pendingRequests": len(state.ask_app) + len(state.unplaced),
        "nodeSortingPolicy": {"type": policy.type, "resourceWeights": dict(policy.resource_weights)},
        "preemptionEnabled": partition.config.preemption_enabled,
        "quotaPreemptionEnabled": False,
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


UTILIZATION_BUCKETS = 10


def node_utilizations(state: CoreState) -> dict[str, Any]:
    """YuniKorn's `/scheduler/node-utilizations` for the partition: per resource a node has, how
    many nodes (and which) fall in each tenth of use by Herder's pods (0-10%, ..., 90-100%)."""
    buckets: dict[str, list[list[str]]] = {}
    for name in sorted(state.partition.nodes):
        node = state.partition.nodes[name]
        used = node_utilized(node)
        for resource in node.info.capacity:
            percent = used.get(resource, 0)
            index = min(max(math.ceil(percent / 10) - 1, 0), UTILIZATION_BUCKETS - 1)
            rows = buckets.setdefault(resource, [[] for _ in range(UTILIZATION_BUCKETS)])
            rows[index].append(name)
    return {
        "clusterId": CLUSTER_ID,
        "partition": state.partition.name,
        "utilizations": [
            {
                "type": resource,
                "utilization": [
                    {"bucketName": f"{i * 10}-{(i + 1) * 10}%", "numOfNodes": len(names), "nodeNames": names}
                    for i, names in enumerate(buckets[resource])
                ],
            }
            for resource in sorted(buckets)
        ],
    }


def history_counts(state: CoreState) -> tuple[int, int]:
    """What YuniKorn's history samples: live applications and placed pods."""
    return len(state.partition.applications), len(state.allocations)
