"""Which other pods may use a reserved node while it drains.

A reservation keeps its pod's place in line, so two kinds of pods may still be placed on a
reserved node, in the node's free room (the room kept for its reservations included, a
preemptor's held room not), where their node constraints and rules between pods allow it:

- a pod that passes every pod the node is reserved for (`line.ahead`: a strictly higher
  priority); the reserved pods then wait longer, as they would without reservations;
- a *backfill* (`reservation.backfill`, Slurm's EASY backfill with `activeDeadlineSeconds` as
  the time limit): a pod whose `now + activeDeadlineSeconds` is no later than the reserved
  pods' earliest start on that node (`timing.frees_at` over the deadlines of the pods that must
  leave). It is gone before they could start, so it never delays them: their start, computed
  again with it on the node, is the same. A node whose reserved pods wait for a pod without a
  deadline has no start to promise, and takes no backfill.

Pods that fit *beside* the reserved ones need neither: the node index sees the room beyond
what is kept, as for any node. The room each reserved node offers is read once per change
(pods placed or gone), so a full cluster's parked pods pass reserved nodes by cheaply.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from core.events import REQUEST, SchedulingEvent
from core.fit import rules_refusal
from core.objects.application import Application
from core.objects.ask import Ask
from core.objects.node_index import static_mismatch
from core.objects.queue import Queue
from core.reservations.line import ahead
from core.reservations.timing import frees_at
from core.resources import Resource
from core.state import CoreState


class ReservedUse(NamedTuple):
    node_id: str
    start: float | None  # a backfill: the reserved pods' start there; None: the pod is ahead of them


def reserved_start(state: CoreState, node_id: str, now: float) -> float | None:
    """When the node's reserved pods can all start at the latest (`math.inf`: no deadline
    promises it), kept while no pod came or went; None when the node has no reservation."""
    book = state.reservations
    on_node = book.by_node.get(node_id)
    node = state.partition.nodes.get(node_id)
    if not on_node or node is None:
        return None
    stamp = state.usage_stamp()
    cached = book.starts.get(node_id)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    app_id = next(iter(on_node.values())).app_id
    kept = book.kept_on(node_id, app_id)
    start = frees_at(state, node, kept, app_id, now, kept)
    book.starts[node_id] = (stamp, start)
    return start


def _rooms(state: CoreState) -> list[tuple[str, Resource]]:
    """Each reserved node's free room (its reservations' kept room included), read again once
    pods came or went."""
    book = state.reservations
    stamp = state.usage_stamp()
    if book.rooms[0] != stamp:
        nodes = state.partition.nodes
        room_of = book.room_of
        rooms = []
        for node_id in sorted(book.by_node):
            node = nodes.get(node_id)
            if node is None:
                continue
            kept = room_of.get(node_id)
            if kept is None or kept[0] != node.changes:
                kept = room_of[node_id] = (node.changes, node.available() + book.reserved_on(node_id))
            rooms.append((node_id, kept[1]))
        if len(room_of) > 2 * len(rooms) + 64:
            book.room_of = {node_id: room_of[node_id] for node_id, _ in rooms}
        book.rooms = (stamp, rooms)
    return book.rooms[1]


def reserved_use(state: CoreState, leaf: Queue, app: Application, ask: Ask, now: float) -> ReservedUse | None:
    """A reserved node the ask may use now, ahead of its reserved pods or as a backfill."""
    book = state.reservations
    for node_id, room in _rooms(state):
        if not ask.resource.fits_in(room):
            continue
        on_node = book.by_node[node_id]
        owner = next(iter(on_node.values())).app_id
        if owner == ask.application_id:
            continue  # its own application's reserved pods: they take their own room
        node = state.partition.nodes[node_id]
        if static_mismatch(node, ask.constraints) is not None:
            continue
        use = None
        if all(_ahead_of(state, leaf, app, ask, key) for key in on_node):
            use = ReservedUse(node_id, None)
        elif ask.active_deadline is not None and state.settings.reservation_backfill:
            start = reserved_start(state, node_id, now)
            if start is not None and not math.isinf(start) and now + ask.active_deadline <= start:
                use = ReservedUse(node_id, start)
        if use is not None and rules_refusal(state, ask, node_id) is None:
            return use
    return None


def _ahead_of(state: CoreState, leaf: Queue, app: Application, ask: Ask, key: str) -> bool:
    other_app = state.ask_app.get(key)
    other = other_app.asks.get(key) if other_app is not None else None
    other_leaf = state.partition.find_queue(other_app.queue_path) if other_app is not None else None
    if other_app is None or other is None or other_leaf is None:
        return True  # a reservation left behind by a pod that is gone stops nobody
    return ahead(state, leaf, app, ask, other_leaf, other_app, other)


def backfilled(state: CoreState, ask: Ask, node_id: str, start: float, now: float) -> None:
    """The cycle placed `ask` on a reserved node as a backfill: say so."""
    state.reservations.backfills += 1
    deadline = ask.active_deadline or 0.0
    reserved = ", ".join(sorted(_name(state, key) for key in state.reservations.by_node.get(node_id, {})))
    message = (
        f"placed on node {node_id}, reserved for {reserved}, as a backfill: its activeDeadlineSeconds"
        f" ({deadline:g} s) ends it by t+{deadline:g} s, before they can start (t+{start - now:.0f} s)"
    )
    state.emit(SchedulingEvent(now, REQUEST, ask.key, "Backfilled", message, ask.application_id, ask.display_name))


def _name(state: CoreState, key: str) -> str:
    app = state.ask_app.get(key)
    ask = app.asks.get(key) if app is not None else None
    return ask.display_name if ask is not None else key
