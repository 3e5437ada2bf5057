"""When a node frees enough room: the earliest start of a pod waiting for it.

A pod's `activeDeadlineSeconds` is a promise the kubelet keeps: the pod ends at the latest
that long after it started. A node's pods, taken in the order their deadlines end, give the
time by which a request fits at the latest: the deadline of the last pod that must leave for
it. Pods without a deadline may run forever, so a request that needs one of them gone has no
time that can be promised (`math.inf`). Pods Herder is already evicting count as leaving now.

Some room never leaves for a reserved pod (see the rule in `core/reservations/__init__.py`):
pods of its own application, static pods (owned by their node), the placeholders of other
gangs still reserving, and the room the node keeps for other pending pods. When the request
cannot fit even with every other pod gone, the node cannot hold it: `frees_at` says None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from core.objects.ask import FOREIGN_STATIC, Allocation
from core.objects.node import Node
from core.state import CoreState

NEVER = math.inf


def ends_at(state: CoreState, allocation: Allocation, now: float, offset: float) -> float:
    """When the pod ends at the latest, on the scheduler's clock (`offset`: Unix time minus
    the scheduler's clock); `NEVER` without a deadline."""
    if allocation.key in state.evicting:
        return now
    deadline = allocation.active_deadline
    if deadline is None:
        return NEVER
    return max(now, allocation.allocation_time - offset + deadline)


def any_timed(state: CoreState) -> bool:
    """Whether any pod's end is known: one has a deadline, or Herder is evicting one. When none
    is, every node's start for a waiting pod is now or never promised (read once per plan, a
    pass over the placed pods: a reservation is rare, a node-by-node search of pods is not)."""
    if state.evicting:
        return True
    return any(a.active_deadline is not None for a in state.allocations.values()) or any(
        a.foreign_deadline is not None for a in state.foreign.values()
    )


def stays_for(state: CoreState, allocation: Allocation, app_id: str) -> bool:
    """Whether the pod stays however long a pod of `app_id` waits for its room."""
    if allocation.foreign is not None:
        return allocation.foreign == FOREIGN_STATIC
    if allocation.application_id == app_id:
        return True
    if allocation.placeholder:
        gang = state.gangs.gangs.get(allocation.application_id)
        return gang is not None and gang.reserving
    return False


def frees_at(
    state: CoreState, node: Node, need: Mapping[str, int], app_id: str, now: float, kept_for_app: Mapping[str, int]
) -> float | None:
    """The earliest time by which `need` fits the node for a pod of `app_id` (now, a deadline,
    or `NEVER`), or None when it cannot fit however long it waits. `kept_for_app`: room the
    node already keeps for the application's reserved pods (theirs to use, not another's).
    Run for every candidate node when a pod reserves: one pass over the node's pods, sorting
    only those with a deadline."""
    keys = [key for key, amount in need.items() if amount > 0]
    capacity, allocated, occupied, kept = node.info.capacity, node.allocated, node.occupied, node.kept
    room = {
        key: capacity.get(key, 0)
        - allocated.get(key, 0)
        - occupied.get(key, 0)
        - kept.get(key, 0)
        + kept_for_app.get(key, 0)
        for key in keys
    }
    if all(room[key] >= need[key] for key in keys):
        return now
    offset = state.epoch_offset()
    timed: list[tuple[float, Mapping[str, int]]] = []
    untimed: list[Mapping[str, int]] = []  # pods without a deadline: they may run forever
    for allocation in (*node.allocations.values(), *node.foreign.values()):
        if stays_for(state, allocation, app_id):
            continue
        end = ends_at(state, allocation, now, offset)
        if end == NEVER:
            untimed.append(allocation.resource)
        else:
            timed.append((end, allocation.resource))
    if timed:
        timed.sort(key=lambda entry: entry[0])
        for end, freed in timed:
            for key in keys:
                room[key] += freed.get(key, 0)
            if all(room[key] >= need[key] for key in keys):
                return end
    for freed in untimed:
        for key in keys:
            room[key] += freed.get(key, 0)
        if all(room[key] >= need[key] for key in keys):
            return NEVER
    return None


def shortfall(node: Node, need: Mapping[str, int], kept_for_app: Mapping[str, int]) -> float:
    """How much of the node must still free for `need`, as the largest share of its capacity
    over the resources asked (0 when it fits now)."""
    capacity, allocated, occupied, kept = node.info.capacity, node.allocated, node.occupied, node.kept
    worst = 0.0
    for key, amount in need.items():
        total = capacity.get(key, 0)
        room = total - allocated.get(key, 0) - occupied.get(key, 0) - kept.get(key, 0) + kept_for_app.get(key, 0)
        if amount > room and total > 0:
            worst = max(worst, (amount - room) / total)
    return worst
