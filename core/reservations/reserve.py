"""Making and ending reservations, and the steps the scheduling cycle takes for them.

The cycle notes the leaf queues where it refused a pod for room (`note_refused`). After each
cycle `reserve` looks at the pod at the front of each such leaf's line (`line.front`): one that
waits only for room and has waited `reservation.delay` reserves the nodes `choose.plan_nodes`
finds (a gang's placeholder: every pending placeholder of its gang, in one step). The same
pass ends the reservations whose pod now waits for something other than room, or that the
node can no longer hold. A reservation also ends when its pod is placed (`_commit` calls `end`), leaves
(`lifecycle.remove_ask`), or its node goes or changes (`node_changed`, `node_removed`).

Every change of reserved room is told: the pod gets a `Reserved` or `ReservationEnded` event
(Kubernetes Events on the pod), the node a YuniKorn NODE_RESERVATION record; ending a
reservation frees room for others, so it moves the change counter.
"""

from __future__ import annotations

from core.events import ADD, NODE, NODE_RESERVATION, REMOVE, REQUEST, SchedulingEvent
from core.fit import rules_refusal
from core.objects.application import Application
from core.objects.ask import Ask
from core.objects.node_index import static_mismatch
from core.objects.queue import Queue
from core.reservations.book import Reservation, ReservationBook
from core.reservations.choose import describe_start, nodes_text, plan_nodes
from core.reservations.line import front
from core.reservations.timing import any_timed, frees_at
from core.resources import format_resource
from core.state import CoreState

PLACED = "placed"
NO_ROOM = "no-node-fits"  # the rule name core.cycle parks a pod waiting for room with


def note_refused(state: CoreState, leaf: Queue) -> None:
    """The cycle refused a pod of `leaf` for room: the pass looks at the leaf's front."""
    state.reservations.front.add(leaf.path)


def reserve(state: CoreState, now: float) -> int:
    """The pass after each cycle: end the reservations that no longer hold, make those now
    due; the number made. Only leaves where a pod was refused for room are looked at, and in
    each only the pod at the front of its line (`line.front`)."""
    book = state.reservations
    book.due = None
    if not state.settings.reservation_enabled:
        for key in list(book.by_ask):
            end(state, key, now, "reservations were turned off (reservation.enabled)")
        book.front.clear()
        return 0
    stamp = (state.version, len(state.allocations), len(book.by_ask))
    if book.by_ask and book.checked != stamp:
        _end_stale(state, now)
        book.checked = (state.version, len(state.allocations), len(book.by_ask))
    if not book.front:
        return 0
    delay = state.settings.reservation_delay
    made = 0
    # Nothing a front depends on moves while the change counter, the placed pods and the
    # pending pods stay the same: a leaf looked at under this stamp is passed by until its
    # front's delay runs out (the operator runs a pass every 0.1 s; a leaf's front reads all
    # of its applications).
    stamp = (state.version, len(state.allocations), len(state.ask_app))
    timed: bool | None = None  # whether any pod's end is known, read once per pass when needed
    for path in sorted(book.front):
        seen = book.looked.get(path)
        if seen is not None and seen[0] == stamp and (seen[1] is None or seen[1] > now):
            if seen[1] is not None:
                book.due = seen[1] if book.due is None else min(book.due, seen[1])
            continue
        leaf = state.partition.find_queue(path)
        found = front(state, leaf) if leaf is not None and leaf.pending_apps else None
        if found is None:
            _forget(book, path)
            continue
        app, ask = found
        key = ask.key
        if _room_kept(state, key):
            _forget(book, path)  # its room is kept already
            continue
        rule = state.rules.get(key)
        if rule != NO_ROOM:
            if rule is not None:  # waits for something else: a new refusal for room notes the leaf again
                _forget(book, path)
            continue
        due = state.pending_since.get(key, now) + delay
        if due > now:
            book.due = due if book.due is None else min(book.due, due)
            book.looked[path] = (stamp, due)
            continue
        asks = _gang_asks(state, app) if ask.placeholder else [ask]
        if timed is None:
            timed = any_timed(state)
        plan = plan_nodes(state, app.app_id, asks, now, timed)
        if plan is None:
            book.looked[path] = (stamp, None)  # no node to reserve until something changes
            continue
        _forget(book, path)
        for reserved in asks:
            node_id, start = plan[reserved.key]
            _make(state, app, reserved, node_id, start, now)
            made += 1
    return made


def _forget(book: ReservationBook, path: str) -> None:
    book.front.discard(path)
    book.looked.pop(path, None)


def _room_kept(state: CoreState, key: str) -> bool:
    """Whether something keeps or makes room for the pending pod already: a reservation, room held
    by preemption, or quota preemption under way. A node keeps one room per pending pod, so a
    reservation made then would replace the held room, and the hold's end would take both."""
    return key in state.reservations.by_ask or key in state.holds or key in state.preempting


def _gang_asks(state: CoreState, app: Application) -> list[Ask]:
    """The gang's pending placeholders whose room nothing keeps yet, in the order they are tried."""
    asks = [ask for ask in app.asks.values() if ask.placeholder and not _room_kept(state, ask.key)]
    return sorted(asks, key=lambda ask: (-ask.priority, ask.created, ask.key))


def _make(state: CoreState, app: Application, ask: Ask, node_id: str, start: float, now: float) -> None:
    book = state.reservations
    node = state.partition.nodes[node_id]
    book.add(Reservation(ask.key, app.app_id, node_id, ask.resource, app.queue_path, now))
    node.hold(ask.key, ask.resource)
    state.partition.node_index.refresh(node)
    book.starts.pop(node_id, None)
    state.events.add_record(
        now, NODE, node_id, "Reserved", "", ask.key, ask.display_name, ADD, NODE_RESERVATION, ask.resource
    )
    message = (
        f"{nodes_text([node_id])} reserved for it ({format_resource(ask.resource)}): it frees"
        f" {describe_start(start, now)}; meanwhile only pods that fit beside it or end before"
        " then may use it"
    )
    state.emit(SchedulingEvent(now, REQUEST, ask.key, "Reserved", message, app.app_id, ask.display_name))


def end(state: CoreState, key: str, now: float, why: str = PLACED, on_node: str | None = None) -> Reservation | None:
    """The reservation of pod `key` ends (`why`: `placed`, or what a person reads;
    `on_node`: where the pod was placed)."""
    reservation = state.reservations.remove(key, PLACED if why == PLACED else "ended")
    if reservation is None:
        return None
    node = state.partition.nodes.get(reservation.node_id)
    if node is not None and node.unhold(key):
        state.partition.node_index.refresh(node)
    if on_node != reservation.node_id:
        state.bump()  # the kept room is everyone's again (placed there, the pod took it)
    name = ""
    app = state.ask_app.get(key)
    ask = app.asks.get(key) if app is not None else None
    if ask is not None:
        name = ask.display_name
    state.events.add_record(
        now, NODE, reservation.node_id, "Unreserved", why, key, name, REMOVE, NODE_RESERVATION, reservation.resource
    )
    if why != PLACED:
        message = f"the reservation of node {reservation.node_id} ended: {why}"
        state.emit(SchedulingEvent(now, REQUEST, key, "ReservationEnded", message, reservation.app_id, name))
    return reservation


def yield_node(state: CoreState, node_id: str, now: float, why: str) -> None:
    """Every reservation on the node ends: a preemptor takes the room (preemption comes first)."""
    for key in list(state.reservations.by_node.get(node_id, {})):
        end(state, key, now, why)


def node_removed(state: CoreState, node_id: str, now: float) -> None:
    for key in list(state.reservations.by_node.get(node_id, {})):
        end(state, key, now, f"node {node_id} was removed")


def node_changed(state: CoreState, node_id: str, now: float) -> None:
    """The node's labels, taints, state or capacity changed: reservations it can no longer
    hold end."""
    on_node = state.reservations.by_node.get(node_id)
    node = state.partition.nodes.get(node_id)
    if not on_node or node is None:
        return
    for key, reservation in list(on_node.items()):
        ask = _ask(state, key)
        if ask is None:
            end(state, key, now, "its pod is gone")
            continue
        mismatch = static_mismatch(node, ask.constraints)
        if mismatch is not None:
            end(state, key, now, f"node {node_id} no longer suits it ({mismatch})")
        elif not ask.resource.fits_in(node.capacity):
            end(state, key, now, f"node {node_id} is now too small for it")
        else:
            kept = state.reservations.kept_on(node_id, reservation.app_id)
            if frees_at(state, node, kept, reservation.app_id, now, kept) is None:
                end(state, key, now, f"node {node_id} can no longer free enough room for it")


def _end_stale(state: CoreState, now: float) -> None:
    """Reservations whose pod now waits for something other than room (a limit, a gang hold,
    a preemption of its own, rules between pods on its node) end."""
    for key, reservation in list(state.reservations.by_ask.items()):
        ask = _ask(state, key)
        if ask is None:
            end(state, key, now, "its pod is gone")
            continue
        rule = state.rules.get(key)
        if rule is not None and rule != NO_ROOM:
            end(state, key, now, f"it now waits for something else ({rule}): {state.reasons.get(key, '')}")
        elif key in state.holds:
            end(state, key, now, "preemption holds room for it instead")
        else:
            refusal = rules_refusal(state, ask, reservation.node_id)
            if refusal is not None:
                end(state, key, now, f"node {reservation.node_id} refuses it now ({refusal})")


def _ask(state: CoreState, key: str) -> Ask | None:
    app = state.ask_app.get(key)
    return app.asks.get(key) if app is not None else None


def reserved_node(state: CoreState, ask: Ask) -> str | None:
    """The node reserved for `ask` when it can take it now: its own kept room (and its gang's)
    plus the node's other free room hold it, and its rules allow it there."""
    reservation = state.reservations.by_ask[ask.key]
    node = state.partition.nodes.get(reservation.node_id)
    if node is None or static_mismatch(node, ask.constraints) is not None:
        return None
    room = node.available() + state.reservations.kept_on(node.node_id, reservation.app_id)
    if not ask.resource.fits_in(room) or rules_refusal(state, ask, node.node_id) is not None:
        return None
    return node.node_id


def waiting_reason(state: CoreState, ask: Ask) -> str:
    """Why a reserved pod still waits, in words that stay the same until something changes."""
    reservation = state.reservations.by_ask[ask.key]
    node = state.partition.nodes.get(reservation.node_id)
    if node is None:
        return f"node {reservation.node_id}, reserved for it, is gone"
    room = node.available() + state.reservations.kept_on(node.node_id, reservation.app_id)
    short = ask.resource.insufficient(room)
    if not short:
        return f"node {node.node_id} is reserved for it; its rules between pods refuse it there now"
    return f"node {node.node_id} is reserved for it and frees as the pods there end (short of {', '.join(short)})"
