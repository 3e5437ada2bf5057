"""What is reserved: one record per reserved pending pod, found by pod and by node.

A reservation keeps `resource` on `node_id` for the pending pod `key` of application
`app_id` (the room itself is kept on the node, `Node.hold`). The book also remembers the leaf
queues where a pod was refused for room (`front`: their front pods may reserve once they have
waited long enough), what was found when each was last looked at (`looked`), when the next
front's delay runs out (`due`), and counts for the metrics and the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.resources import Resource


@dataclass(frozen=True, slots=True)
class Reservation:
    key: str  # the pending pod the room is kept for
    app_id: str
    node_id: str
    resource: Resource
    queue_path: str  # its leaf queue
    since: float  # the scheduler's clock


class ReservationBook:
    __slots__ = (
        "backfills",
        "by_ask",
        "by_node",
        "checked",
        "due",
        "ended",
        "front",
        "looked",
        "made",
        "room_of",
        "rooms",
        "starts",
    )

    def __init__(self) -> None:
        self.by_ask: dict[str, Reservation] = {}
        self.by_node: dict[str, dict[str, Reservation]] = {}
        self.front: set[str] = set()  # leaves where a pod was refused for room
        # leaf -> (the stamp it was last looked at under, when its front's delay runs out; None:
        # it found no node to reserve)
        self.looked: dict[str, tuple[tuple[int, int, int], float | None]] = {}
        self.due: float | None = None
        # node -> ((change counter, placed pods), earliest start of its reserved pods)
        self.starts: dict[str, tuple[tuple[int, int], float | None]] = {}
        # ((change counter, placed pods), each reserved node's free room with its reservations')
        self.rooms: tuple[tuple[int, int], list[tuple[str, Resource]]] = ((-1, -1), [])
        # node -> (its change stamp, its free room with its reservations'): kept while the node
        # stands still (its reservations come and go as kept room, which moves the stamp)
        self.room_of: dict[str, tuple[int, Resource]] = {}
        self.checked: tuple[int, int, int] = (-1, -1, -1)  # (change counter, placed pods, reservations) last checked
        self.made = 0
        self.backfills = 0
        self.ended: dict[str, int] = {}  # why -> count

    def add(self, reservation: Reservation) -> None:
        self.rooms = ((-1, -1), [])
        self.by_ask[reservation.key] = reservation
        self.by_node.setdefault(reservation.node_id, {})[reservation.key] = reservation
        self.made += 1

    def remove(self, key: str, why: str) -> Reservation | None:
        reservation = self.by_ask.pop(key, None)
        if reservation is None:
            return None
        on_node = self.by_node.get(reservation.node_id)
        if on_node is not None:
            on_node.pop(key, None)
            if not on_node:
                del self.by_node[reservation.node_id]
        self.starts.pop(reservation.node_id, None)
        self.rooms = ((-1, -1), [])
        self.ended[why] = self.ended.get(why, 0) + 1
        return reservation

    def owner(self, node_id: str) -> str | None:
        """The application whose pods reserve the node, if any (a node has one at a time)."""
        on_node = self.by_node.get(node_id)
        if not on_node:
            return None
        return next(iter(on_node.values())).app_id

    def kept_on(self, node_id: str, app_id: str) -> Resource:
        """What the node keeps for the application's reserved pods."""
        total = Resource()
        for reservation in self.by_node.get(node_id, {}).values():
            if reservation.app_id == app_id:
                total = total + reservation.resource
        return total

    def reserved_on(self, node_id: str) -> Resource:
        """What the node keeps for all its reservations."""
        total = Resource()
        for reservation in self.by_node.get(node_id, {}).values():
            total = total + reservation.resource
        return total
