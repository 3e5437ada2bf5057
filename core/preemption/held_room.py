"""The room preemption holds, as the placement path sees it: under the queues' maxes, and what
a preemptor waits for.

Victims free room on a node and, when a queue's max kept the preemptor waiting, under that max.
Both are the preemptor's until it is bound (`core/preemption/holds.py` keeps the node's room):
another pod is refused the room under a max that a preemptor's victims freed, with a reason
that says so, so a sibling queue cannot take back what preemption made for its neighbour.
"""

from __future__ import annotations

from core.objects.ask import Ask
from core.objects.queue import Queue
from core.preemption.holds import held_by_queue
from core.resources import format_amounts
from core.state import CoreState, Hold


def held_over_max(state: CoreState, leaf: Queue, ask: Ask) -> tuple[Queue, str, int] | None:
    """The first queue below root whose max the ask would pass once the room held for other
    preemptors in it is counted (that room is theirs the moment their victims are gone), the
    resource, and how much is held; None when every such max holds it."""
    stamp = (state.version, len(state.allocations), tuple(state.holds))
    if state.held_room_stamp != stamp:  # while holds last, every pod tried asks: read them once
        state.held_room_stamp = stamp
        state.held_room = held_by_queue(state)
    own = state.holds.get(ask.key)  # its own hold is in every queue of its path
    for queue in leaf.ancestry():
        extra = state.held_room.get(queue.path)
        limit = queue.max
        if not extra or limit is None or queue.parent is None:
            continue
        for key, cap in limit.items():
            amount = ask.resource.get(key, 0)
            others = extra.get(key, 0) - (own.resource.get(key, 0) if own is not None else 0)
            if amount > 0 and queue.allocated.get(key, 0) + others + amount > cap:
                return queue, key, others
    return None


def held_room_reason(state: CoreState, leaf: Queue, ask: Ask) -> str | None:
    over = held_over_max(state, leaf, ask)
    if over is None:
        return None
    queue, key, extra = over
    assert queue.max is not None
    used, held, asked, ceiling = format_amounts(
        key, queue.allocated.get(key, 0), extra, ask.resource.get_value(key), queue.max[key]
    )
    return (
        f"queue {queue.path} would exceed max {key}: {used} allocated + {held} held for preempting"
        f" pods + {asked} asked > {ceiling}"
    )


def waiting_for_victims(state: CoreState, hold: Hold) -> str | None:
    """What a preemptor waits for while its victims are still running (None once all are gone)."""
    running = [state.allocations[key] for key in hold.victims if key in state.allocations]
    if not running:
        return None
    if all(victim.node_id == hold.node_id for victim in running):
        return f"waiting for {len(running)} preempted pod(s) on node {hold.node_id} to end"
    return f"waiting for {len(running)} preempted pod(s) to end, room held on node {hold.node_id}"
