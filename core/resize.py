"""In-place pod resize: a running pod's requests change and every count follows.

Since Kubernetes 1.33 a running pod's requests may change without a restart (seed 003 lists
"pod updated (resource usage)" for Herder's and for foreign pods). The shim tells the core a
pod's new size (what the kubelet reports it holds, see shim/convert/pod_size.py); the core moves the
difference on the node and, for its own pods, on the application, every queue up to the root,
the user and group trackers and the elastic quota. The pod stays where it is: a resize is
something that happened, never refused, like recovery.
"""

from __future__ import annotations

from core.lifecycle import foreign_changed
from core.objects.ask import Allocation
from core.resources import Resource
from core.state import CoreState


def resize(state: CoreState, key: str, resource: Resource) -> bool:
    """Give the running pod `key` its new size; False when the core does not hold it or the size
    is unchanged."""
    foreign = state.foreign.get(key)
    if foreign is not None:
        if foreign.resource == resource:
            return False
        resized = foreign._replace(resource=resource)
        _move_on_node(state, foreign, resized)
        foreign_changed(state, foreign, -1)
        foreign_changed(state, resized, 1)
        state.foreign[key] = resized
        return True
    allocation = state.allocations.get(key)
    if allocation is None or allocation.resource == resource or allocation.ask is None:
        return False
    ask = allocation.ask._replace(resource=resource)
    resized = allocation._replace(resource=resource, ask=ask)
    _move_on_node(state, allocation, resized)
    app = state.partition.applications.get(allocation.application_id)
    if app is not None and app.remove_allocation(key) is not None:
        app.add_allocation(resized)
        queue = state.partition.find_queue(app.queue_path)
        if queue is not None:
            queue.add_allocated(allocation.resource, -1)
            queue.add_allocated(resource)
        state.ugm.increase_tracked_resource(app.queue_path, app.app_id, resource, app.user, force=True)
        state.ugm.decrease_tracked_resource(app.queue_path, app.app_id, allocation.resource, app.user, False)
    quota = state.ask_quota.get(key)
    if quota is not None:
        state.quotas.release(key)
        state.quotas.remove_request(key)
        state.quotas.add_request(key, quota, resource, ask.preemptible)
        state.quotas.allocate(key, quota, resource, ask.preemptible, ask.priority, allocation.allocation_time)
    state.allocations[key] = resized
    return True


def _move_on_node(state: CoreState, old: Allocation, new: Allocation) -> None:
    node = state.partition.nodes.get(old.node_id)
    if node is None:
        return
    node.remove(old.key)
    node.add(new)
    state.partition.node_index.refresh(node)
