"""A node as the scheduler keeps it: capacity, what Herder placed, what other schedulers use.

Herder's own allocations and foreign ones (seed 003) are kept apart: both take room on the
node (`free = capacity - allocated - occupied`), but only Herder's count in queues, users and
quotas. A node that is cordoned (`schedulable` False) or not ready keeps its pods and takes no
new ones.

Room can also be *kept* for one pending pod: held for a preemptor while its victims leave
(core/preemption/holds.py), or reserved for a pod that waits for the node to drain
(core/reservations/). Kept room is one mechanism for both: no pod is placed in it but the one
it is kept for (`available = free - kept`, which may go below zero while a reserved node
drains), and it is no pod's usage, so the node's `allocated` and `occupied` never show it.
"""

from __future__ import annotations

import itertools

from core.objects.ask import Allocation
from core.objects.node_info import NodeInfo
from core.objects.node_journal import NodeJournal
from core.resources import Resource, add_into

_CHANGES = itertools.count(1)  # one sequence for every node: a node's stamp is never another's


class Node:
    __slots__ = ("allocated", "allocations", "changes", "foreign", "held", "info", "journal", "kept", "occupied")

    def __init__(self, info: NodeInfo) -> None:
        self.info = info
        # moves whenever anything a preemption search reads here changes (pods, kept room, info,
        # a pod asked to leave): what a search kept for the node holds while it stands still
        self.changes = next(_CHANGES)
        self.journal: NodeJournal | None = None  # the partition's, once the node is in it
        self.allocated: dict[str, int] = {}
        self.occupied: dict[str, int] = {}
        self.allocations: dict[str, Allocation] = {}
        self.foreign: dict[str, Allocation] = {}
        self.held: dict[str, Resource] = {}  # pending pod's key -> the room kept for it
        self.kept: dict[str, int] = {}  # the sum of `held`

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
        """What a pod may take now: the free room less the room kept for others."""
        out = dict(self.info.capacity)
        for key, val in self.allocated.items():
            out[key] = out.get(key, 0) - val
        for key, val in self.occupied.items():
            out[key] = out.get(key, 0) - val
        for key, val in self.kept.items():
            out[key] = out.get(key, 0) - val
        return Resource(out)

    def available_for(self, key: str) -> Resource:
        """What the pending pod `key` may take now: room kept for it is its own."""
        own = self.held.get(key)
        return self.available() + own if own is not None else self.available()

    def free(self) -> Resource:
        """What no pod uses: kept room counts as free (the kubelet sees it free)."""
        out = dict(self.info.capacity)
        for key, val in self.allocated.items():
            out[key] = out.get(key, 0) - val
        for key, val in self.occupied.items():
            out[key] = out.get(key, 0) - val
        return Resource(out)

    def replace_info(self, info: NodeInfo) -> None:
        """The node's capacity, labels, taints or state changed."""
        self.info = info
        self.moved()

    def touch(self) -> None:
        """Something about a pod here changed that the node's own fields do not show (it was
        asked to leave, or its eviction was refused)."""
        self.moved()

    def moved(self) -> None:
        """The node changed: its stamp moves and its partition's journal notes it."""
        self.changes = next(_CHANGES)
        if self.journal is not None:
            self.journal.note(self.info.node_id)

    def add(self, allocation: Allocation) -> None:
        self.moved()
        if allocation.foreign:
            self.foreign[allocation.key] = allocation
            target = self.occupied
        else:
            self.allocations[allocation.key] = allocation
            target = self.allocated
        for key, val in allocation.resource.items():
            target[key] = target.get(key, 0) + val

    def hold(self, key: str, resource: Resource) -> None:
        """Keep `resource` for the pending pod `key` (replacing what was kept for it)."""
        self.unhold(key)
        self.moved()
        self.held[key] = resource
        add_into(self.kept, resource, 1)

    def unhold(self, key: str) -> bool:
        resource = self.held.pop(key, None)
        if resource is None:
            return False
        self.moved()
        add_into(self.kept, resource, -1)
        return True

    def remove(self, key: str) -> Allocation | None:
        self.moved()
        allocation = self.allocations.pop(key, None)
        target = self.allocated
        if allocation is None:
            allocation = self.foreign.pop(key, None)
            target = self.occupied
        if allocation is None:
            return None
        add_into(target, allocation.resource, -1)
        return allocation
