"""Room held for preemptors: where it is, and letting it go.

A hold is the room on one node that preemption freed for one pending pod. The node counts it
as taken (`Node.hold`), so no other pod is placed there while the victims terminate; it is let
go once the preemptor is placed or deleted, a victim's eviction is refused, or the node goes.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.objects.ask import Ask
from core.objects.queue import Queue
from core.reservations.reserve import end as end_reservation
from core.resources import add_into
from core.state import CoreState, Hold


def held_by_queue(state: CoreState) -> dict[str, dict[str, int]]:
    """Per queue path, the resources held for preemptors in or below it."""
    held: dict[str, dict[str, int]] = {}
    for hold in state.holds.values():
        queue = state.partition.find_queue(hold.queue_path)
        if queue is None:
            continue
        add_held(held, queue, hold.resource)
    return held


def leaving_by_queue(state: CoreState) -> dict[str, dict[str, int]]:
    """Per queue path, what the pods already asked to leave (evictions under way) still use:
    the queue's usage once they are gone is what preemption may not push below its guarantee."""
    leaving: dict[str, dict[str, int]] = {}
    for key in state.evicting:
        allocation = state.allocations.get(key)
        queue = state.partition.find_queue(allocation.queue_path) if allocation is not None else None
        if allocation is not None and queue is not None:
            add_held(leaving, queue, allocation.resource)
    return leaving


def add_held(held: dict[str, dict[str, int]], queue: Queue, resource: Mapping[str, int]) -> None:
    for above in queue.ancestry():
        add_into(held.setdefault(above.path, {}), resource)


def hold_room(state: CoreState, ask: Ask, hold: Hold, now: float) -> None:
    """Keep `hold`'s room on its node for the preemptor `ask` (either preemption)."""
    node = state.partition.nodes.get(hold.node_id)
    if node is None:
        return
    end_reservation(state, ask.key, now, "preemption makes room for it instead")  # one kept room per pod
    state.holds[ask.key] = hold
    node.hold(ask.key, ask.resource)
    state.partition.node_index.refresh(node)


def release_hold(state: CoreState, key: str) -> Hold | None:
    """The preemptor no longer needs its room (placed, deleted, or a victim stayed)."""
    hold = state.holds.pop(key, None)
    if hold is None:
        return None
    node = state.partition.nodes.get(hold.node_id)
    if node is not None and node.unhold(key):
        state.partition.node_index.refresh(node)
    return hold


def drop_holds_on(state: CoreState, victim: str | None = None, node_id: str | None = None) -> None:
    """Holds that cannot be kept: a victim's eviction was refused, or the node went."""
    for key, hold in list(state.holds.items()):
        if victim in hold.victims or hold.node_id == node_id:
            release_hold(state, key)
            state.preempt_tried.pop(key, None)
