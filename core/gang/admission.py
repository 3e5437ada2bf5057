"""How a gang's pods join the core's picture: the definition accepted or refused, placeholders
and real pods recovered after a restart, placeholders that went away.

These functions only record; the lifecycle (core/lifecycle.py) queues, unplaces and rejects,
and `core/gang/tidy.py` makes or releases the placeholders the record says are missing or left.
"""

from __future__ import annotations

from dataclasses import replace

from core.gang.gang import RESERVED, Gang
from core.gang.rules import gang_refusal
from core.objects.application import Application
from core.objects.ask import Allocation, Ask
from core.state import CoreState

_FAILED_KEPT = 1000  # failed and rejected gangs remembered (their pods stay out)


def admit(state: CoreState, app: Application, ask: Ask) -> str | None:
    """Take a pod of `app` into its gang (starting the gang if the pod defines it); the reason
    the whole application is rejected, or None."""
    gangs = state.gangs
    gang = gangs.gangs.get(app.app_id)
    if gang is not None:
        if not ask.placeholder:
            gang.seen_real = True
            _prefer_real_template(gang, ask)
            gangs.touched.add(app.app_id)
        return None
    spec = ask.gang
    if spec is None or ask.placeholder or app.allocations:
        return None  # no gang, or the application runs already without one: the definition is late
    queue = state.partition.find_queue(app.queue_path)
    assert queue is not None
    reason = gang_refusal(state, queue, ask, spec)
    if reason is not None:
        remember_failure(state, app.app_id, reason)
        return reason
    gangs.start(queue.path, spec, ask).seen_real = True
    wake(state, app.app_id)  # pods that named a group before the definition came may go on now
    return None


def remember_failure(state: CoreState, app_id: str, reason: str) -> None:
    failed = state.gangs.failed
    failed[app_id] = reason
    while len(failed) > _FAILED_KEPT:
        del failed[next(iter(failed))]


def recovered(state: CoreState, app: Application, allocation: Allocation) -> None:
    """A gang's pod found already on a node (a restart): a placeholder is counted as placed,
    a real pod means the gang had reserved before."""
    ask = allocation.ask
    assert ask is not None
    gangs = state.gangs
    gang = gangs.gangs.get(app.app_id)
    if gang is None:
        if ask.gang is None:
            return
        gang = gangs.start(app.queue_path, ask.gang, ask)
    gangs.touched.add(app.app_id)
    node = state.partition.nodes.get(allocation.node_id)
    gang.member_placed(node.info.labels if node is not None else None)  # its topology domain, if any
    if ask.placeholder:
        progress = gang.progress(ask.task_group)
        if progress is not None:
            progress.placed.add(ask.key)
            progress.asked.discard(ask.key)
            started = allocation.allocation_time - state.epoch_offset()  # Unix time -> the core's clock
            gang.first_allocated = started if gang.first_allocated is None else min(gang.first_allocated, started)
        return
    gang.seen_real = True
    _prefer_real_template(gang, ask)
    if gang.reserving:
        gangs.leave_reserving(gang, RESERVED)
        wake(state, app.app_id)
        wake_next(state, app.queue_path)


def _prefer_real_template(gang: Gang, ask: Ask) -> None:
    """A gang rebuilt from its placeholders after a restart cuts new ones from a real pod once
    one carrying the definition is seen: the shim copies owner, priority class and pull secrets
    from that pod, which outlives any placeholder."""
    if gang.template.placeholder and ask.gang is not None:
        gang.template = ask
        gang.spec = replace(gang.spec, originator=ask.gang.originator)


def gone(state: CoreState, app_id: str, key: str) -> None:
    """A pod of a gang application left (a pending one removed, a placed one released)."""
    gang: Gang | None = state.gangs.gangs.get(app_id)
    if gang is None:
        return
    gang.forget(key)
    state.gangs.touched.add(app_id)


def wake(state: CoreState, app_id: str) -> None:
    """The application's held pods may go on (its gang reserved, resumed, or was defined)."""
    app = state.partition.applications.get(app_id)
    if app is not None and app.held:
        app.release_held()
        state.candidates_changed(app)  # its pods count again in its queues' ranks (queue priorities)


def wake_next(state: CoreState, queue_path: str) -> None:
    """A gang left the reserving ones of this leaf: the next in arrival order may reserve now."""
    for app_id, path in state.gangs.reserving.items():
        if path == queue_path:
            wake(state, app_id)
            return
