"""A node as the scheduler keeps it: capacity, what Herder placed, what other schedulers use.

Herder's own allocations and foreign ones (seed 003) are kept apart: both take room on the
node (`available = capacity - allocated - occupied`), but only Herder's count in queues,
users and quotas. A node that is cordoned (`schedulable` False) or not ready keeps its pods
and takes no new ones.
"""

from __future__ import annotations

from core.objects.ask import Allocation
from core.objects.node_info import NodeInfo
from core.resources import Resource, add_into


class Node:
    __slots__ = ("allocated", "allocations", "foreign", "held", "info", "occupied")

    def __init__(self, info: NodeInfo) -> None:
        self.info = info
        self.allocated: dict[str, int] = {}
        self.occupied: dict[str, int] = {}
        self.allocations: dict[str, Allocation] = {}
        self.foreign: dict[str, Allocation] = {}
        self.held: dict[str, Resource] = {}  # preemptor's key -> the room kept for it

    @property
    def node_id(self) -> str:
        return self.info.node_id

    @property
    def capacity(self) -> Resource:
        return self.info.capacity

    @property
    def usable(self) -> bool:
        return self.info.schedulable and self.info.ready

    def available(self) -> Resource:
        out = dict(self.info.capacity)
        for key, val in self.allocated.items():
            out[key] = out.get(key, 0) - val
        for key, val in self.occupied.items():
            out[key] = out.get(key, 0) - val
        return Resource(out)

    def add(self, allocation: Allocation) -> None:
        if allocation.foreign:
            self.foreign[allocation.key] = allocation
            target = self.occupied
        else:
            self.allocations[allocation.key] = allocation
            target = self.allocated
        for key, val in allocation.resource.items():
            target[key] = target.get(key, 0) + val

    def hold(self, key: str, resource: Resource) -> None:
        self.unhold(key)
        self.held[key] = resource
        add_into(self.occupied, resource, 1)

    def unhold(self, key: str) -> bool:
        resource = self.held.pop(key, None)
        if resource is None:
            return False
        add_into(self.occupied, resource, -1)
        return True

    def remove(self, key: str) -> Allocation | None:
        allocation = self.allocations.pop(key, None)
        target = self.allocated
        if allocation is None:
            allocation = self.foreign.pop(key, None)
            target = self.occupied
        if allocation is None:
            return None
        add_into(target, allocation.resource, -1)
        return allocation
