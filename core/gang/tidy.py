"""The gang steps that change the picture: placeholders made, placed, replaced, released, and
the Soft and Hard timeouts.

`tidy` runs after every input and at the start of every cycle, for the gangs an input touched:
a reserving gang gets the placeholder asks it lacks (or loses surplus ones, when placeholders
of a previous Herder were recovered), and a gang whose real pods are all gone releases what
is left. A from-pods gang (a PodGroup API's) first chooses the pods its placeholders are cut
from, and while it has fewer pods than its minimum it holds no placeholder at all.
`expire` applies the placeholder timeout, counted from the first placeholder allocated.

A released placeholder leaves every tracker at once and the shim is told through `evict`, which
for a placeholder means deleting the pod. A replaced one leaves through the real pod's bind,
which names it in `Allocation.replaces`.
"""

from __future__ import annotations

from core import lifecycle
from core.events import APPLICATION, REQUEST, SchedulingEvent
from core.gang.admission import remember_failure, wake, wake_next
from core.gang.gang import FAILED, RESERVED, RESUMED, Gang, Step, placeholder_ask, stand_in_ask
from core.gang.rules import beyond_cluster, total_refusal
from core.gang.spec import HARD, RETRY, TIMEOUT_REASON, GangSpec, TaskGroup
from core.objects.application import Application
from core.objects.application_state import AppState
from core.objects.ask import Allocation, Ask
from core.objects.constraints import NodeConstraints
from core.resources import Resource, format_resource
from core.state import CoreState


def tidy(state: CoreState, now: float) -> None:
    gangs = state.gangs
    while gangs.touched:
        app_id = gangs.touched.pop()
        gang = gangs.gangs.get(app_id)
        if gang is None:
            continue
        app = state.partition.applications.get(app_id)
        if app is None:
            path = gangs.reserving.get(app_id)
            gangs.end(app_id)
            if path is not None:
                wake_next(state, path)
            continue
        if gang.seen_real and not _has_real_pods(app):
            release_all(state, gang, "its application has no pods left", now)
            gangs.end(app_id)
            wake_next(state, app.queue_path)
        elif gang.reserving and gang.seen_real and gang.spec.from_pods:
            _fill_from_pods(state, app, gang, now)
        elif gang.reserving and gang.seen_real:  # placeholders recovered alone make no more
            _fill(state, app, gang, now)


def _has_real_pods(app: Application) -> bool:
    return any(not ask.placeholder for ask in app.asks.values()) or any(
        not allocation.placeholder for allocation in app.allocations.values()
    )


class _Taken:
    """Every pod key the core knows, asked for one by one (a copy would cost O(pods) per gang)."""

    def __init__(self, state: CoreState) -> None:
        self._state = state

    def __contains__(self, key: object) -> bool:
        state = self._state
        return key in state.allocations or key in state.ask_app or key in state.unplaced


def _fill(state: CoreState, app: Application, gang: Gang, now: float) -> None:
    if not gang.made or gang.waiting:  # its first placeholders, or still waiting for nodes
        _too_large(state, gang, now)
    taken = _Taken(state)
    for group in gang.spec.groups:
        progress = gang.groups[group.name]
        while len(progress.asked) + len(progress.placed) < group.min_member:
            ask = placeholder_ask(gang.template, gang.spec, group, taken, gang.made)
            gang.made += 1
            progress.asked.add(ask.key)
            lifecycle.queue_ask(state, ask, now)
        while len(progress.asked) + len(progress.placed) > group.min_member and progress.asked:
            key = min(progress.asked)
            progress.asked.discard(key)
            lifecycle.remove_ask(state, key, now)
    _check_reserved(state, gang, now)


def _too_large(state: CoreState, gang: Gang, now: float, total: Resource | None = None) -> bool:
    """Whether the gang needs more than the whole cluster has (`total`: its placeholders
    together, the spec's by default): then none of its placeholders is
    placed (they could never all be, and would hold room meanwhile); they wait, as its pods do,
    saying so (cluster autoscalers see them waiting for nodes), and the gang is looked at again
    when nodes come, go or change. Its timeout runs from then, as if its reservation had begun:
    Soft, its pods are then scheduled normally; Hard, it fails."""
    waiting = beyond_cluster(state, gang.spec.total if total is None else total) or ""
    if waiting:
        state.gangs.too_large.add(gang.app_id)
        if gang.first_allocated is None:
            gang.first_allocated = now
    else:
        state.gangs.too_large.discard(gang.app_id)
    if waiting != gang.waiting:
        gang.waiting = waiting
        wake(state, gang.app_id)  # its held pods take the new words
    return bool(waiting)


def _fill_from_pods(state: CoreState, app: Application, gang: Gang, now: float) -> None:
    """Cut a placeholder from each pod chosen as a member (a pod made again in a member's place
    inherits a placeholder of its shape); with too few pods, hold none."""
    members, short = _members(app, gang.spec)
    total = _members_total(gang.spec, members)
    if not short:
        short = _members_refusal(state, app, members, total)
    if short:
        if gang.placeholders() or gang.pending_placeholders():
            release_all(state, gang, f"{short}; its placeholders are released", now)
        gang.first_allocated = None
        gang.stand_ins.clear()
        gang.cut = ()
        state.gangs.too_large.discard(gang.app_id)
        gang.waiting = ""
        _set_short(state, gang, short)
        return
    if gang.short:
        state.gangs.to_back(gang)  # it held nothing so far: the gangs that reserve meanwhile go first
        _set_short(state, gang, "")
    gang.cut = _cut(members)
    if not gang.placeholders() or gang.waiting:  # none placed yet, or still waiting for nodes
        _too_large(state, gang, now, total)
    chosen = {ask.key for ask in members}
    for gone_member in [key for key in gang.stand_ins if key not in chosen]:
        del gang.stand_ins[gone_member]
    claimed = set(gang.stand_ins.values())
    spare = sorted(gang.placeholders() - claimed) + sorted(gang.pending_placeholders() - claimed)
    _prefer_placed(state, gang, members, spare)
    taken = _Taken(state)
    for member in members:
        if member.key in gang.stand_ins:
            continue
        match = next((key for key in spare if _fits_member(state, key, member)), None)
        if match is not None:
            spare.remove(match)
            gang.stand_ins[member.key] = match
            continue
        ask = stand_in_ask(member, gang.spec, taken, gang.made)
        gang.made += 1
        progress = gang.progress(member.task_group)
        assert progress is not None
        progress.asked.add(ask.key)
        gang.stand_ins[member.key] = ask.key
        lifecycle.queue_ask(state, ask, now)
    for key in spare:
        _release_spare(state, gang, key, now)
    _check_reserved(state, gang, now)


def _prefer_placed(state: CoreState, gang: Gang, members: list[Ask], spare: list[str]) -> None:
    """A placeholder already on a node (found after a restart) stands in for a member of its
    shape instead of one still pending, which becomes spare (and is released, never placed)."""
    placed = [key for key in spare if key in state.allocations]
    if not placed:
        return
    for member in members:
        current = gang.stand_ins.get(member.key)
        if current is None or current in state.allocations:
            continue
        match = next((key for key in placed if _fits_member(state, key, member)), None)
        if match is not None:
            placed.remove(match)
            spare.remove(match)
            spare.append(current)
            gang.stand_ins[member.key] = match


def _members(app: Application, spec: GangSpec) -> tuple[list[Ask], str]:
    """The pods a from-pods gang's placeholders are cut from, oldest first (each task's minimum
    first), or why there are too few."""
    pending = sorted((ask for ask in app.asks.values() if not ask.placeholder), key=lambda a: (a.created, a.key))
    chosen: list[Ask] = []
    for group in spec.groups:
        of_task = [ask for ask in pending if ask.task_group == group.name][: group.min_member]
        if len(of_task) < group.min_member:
            return [], (
                f"its gang ({spec.source}) needs {group.min_member} pods of task {group.name} before any is"
                f" placed: {len(of_task)} exist"
            )
        chosen.extend(of_task)
    picked = {ask.key for ask in chosen}
    rest = [ask for ask in pending if ask.key not in picked]
    missing = spec.members - len(chosen)
    if len(rest) < missing:
        return [], f"its gang ({spec.source}) needs {spec.members} pods before any is placed: {len(pending)} exist"
    return chosen + rest[:missing], ""


def _members_total(spec: GangSpec, members: list[Ask]) -> Resource:
    """What the placeholders cut from `members` take together (at least the API's minimum)."""
    total = Resource()
    for member in members:
        total = total + member.resource
    if spec.min_resources is not None:
        total = total.component_max(spec.min_resources)
    return total


def _cut(members: list[Ask]) -> tuple[TaskGroup, ...]:
    """The members as task groups of one shape each (task, request, node rules): what a
    topology packs into its domains (core/gang/topology.py)."""
    counts: dict[tuple[str, Resource, NodeConstraints], int] = {}
    for member in members:
        shape = (member.task_group, member.resource, member.constraints)
        counts[shape] = counts.get(shape, 0) + 1
    return tuple(
        TaskGroup(task or "member", count, resource, constraints)
        for (task, resource, constraints), count in counts.items()
    )


def _members_refusal(state: CoreState, app: Application, members: list[Ask], total: Resource) -> str:
    """Why the chosen pods could never all run together (above a max or a limit), or ""."""
    queue = state.partition.find_queue(app.queue_path)
    if queue is None or not members:
        return ""
    refusal = total_refusal(state, queue, members[0], total)
    return f"its gang can never run: {refusal}" if refusal else ""


def _set_short(state: CoreState, gang: Gang, why: str) -> None:
    """The reason the gang's pods wait changed: they are tried again and say the new one."""
    if gang.short != why:
        gang.short = why
        wake(state, gang.app_id)


def _fits_member(state: CoreState, key: str, member: Ask) -> bool:
    """A placeholder left by a pod that is gone (or recovered after a restart) stands in for
    `member` when it was cut from a pod of the same shape."""
    allocation = state.allocations.get(key)
    app = state.ask_app.get(key)
    stand_in = allocation.ask if allocation is not None else app.asks.get(key) if app is not None else None
    return (
        stand_in is not None
        and stand_in.resource == member.resource
        and stand_in.constraints == member.constraints
        and stand_in.task_group == member.task_group
    )


def _release_spare(state: CoreState, gang: Gang, key: str, now: float) -> None:
    allocation = state.allocations.get(key)
    gang.forget(key)
    if allocation is not None:
        release_placeholder(state, allocation, "its gang no longer needs it", now)
    else:
        lifecycle.remove_ask(state, key, now)


def _check_reserved(state: CoreState, gang: Gang, now: float) -> None:
    if not gang.reserving or gang.short:
        return
    if gang.spec.from_pods and (gang.pending_placeholders() or len(gang.placeholders()) < gang.spec.members):
        return
    for group in gang.spec.groups:
        progress = gang.groups[group.name]
        if progress.asked or len(progress.placed) < group.min_member:
            return
    state.gangs.leave_reserving(gang, RESERVED)
    _woken(state, gang)
    message = f"all {gang.spec.members} placeholders allocated"
    state.emit(SchedulingEvent(now, APPLICATION, gang.app_id, "GangReserved", message))


def placeholder_placed(state: CoreState, ask: Ask, now: float) -> None:
    """The cycle placed a placeholder."""
    gang = state.gangs.gangs.get(ask.application_id)
    if gang is None:
        return
    progress = gang.progress(ask.task_group)
    if progress is not None:
        progress.asked.discard(ask.key)
        progress.placed.add(ask.key)
    if gang.spec.topology is not None:
        member_placed(state, ask)
    if gang.first_allocated is None:
        gang.first_allocated = now
    _check_reserved(state, gang, now)
    if gang.reserving and gang.spec.topology is not None:
        state.gangs.placing = gang.app_id  # its next placeholder goes next (core/cycle.py)


def member_placed(state: CoreState, ask: Ask) -> None:
    """The cycle placed a pod of a gang (a placeholder, or a real pod placed normally): a gang
    with a topology fixes its domain by the node's label (core/gang/topology.py)."""
    gang = state.gangs.confined.get(ask.application_id)
    if gang is None:
        return  # most pods placed while some gang has a topology are of no such gang
    placed = state.allocations.get(ask.key)
    if placed is None:
        return
    node = state.partition.nodes.get(placed.node_id)
    gang.member_placed(node.info.labels if node is not None else None)


def take_placeholder(state: CoreState, step: Step, ask: Ask, now: float) -> str | None:
    """Free the placeholder a real pod replaces (its node, returned) or is too large for."""
    placeholder = step.replace or step.release
    assert placeholder is not None
    gang = state.gangs.gangs.get(ask.application_id)
    progress = gang.progress(ask.task_group) if gang is not None else None
    if step.replace is not None:
        if progress is not None:
            progress.replaced += 1
        lifecycle.release(state, placeholder.key, now)
        state.emit(
            SchedulingEvent(
                now,
                REQUEST,
                placeholder.key,
                "Replaced",
                f"replaced by {ask.display_name} on node {placeholder.node_id}",
                ask.application_id,
                placeholder.display_name,
            )
        )
        return placeholder.node_id
    why = (
        f"{ask.display_name} asks {format_resource(ask.resource)}, more than its task group"
        f" {ask.task_group!r} reserved ({format_resource(placeholder.resource)}): placeholder"
        f" {placeholder.display_name} released, the pod is placed normally"
    )
    release_placeholder(state, placeholder, why, now)
    state.emit(SchedulingEvent(now, REQUEST, ask.key, "PlaceholderTooSmall", why, ask.application_id, ask.display_name))
    return None


def release_placeholder(state: CoreState, allocation: Allocation, reason: str, now: float) -> None:
    lifecycle.release(state, allocation.key, now)
    state.emit(
        SchedulingEvent(
            now,
            REQUEST,
            allocation.key,
            "PlaceholderReleased",
            reason,
            allocation.application_id,
            allocation.display_name,
        )
    )
    callbacks = state.callbacks
    state.outbox.append(lambda: callbacks.evict(allocation, reason))


def release_all(state: CoreState, gang: Gang, reason: str, now: float) -> int:
    """Release every placeholder of the gang, placed or pending; how many were placed."""
    for key in sorted(gang.pending_placeholders()):
        lifecycle.remove_ask(state, key, now)
    placed = 0
    for name, progress in gang.groups.items():
        for key in sorted(progress.placed):
            allocation = state.allocations.get(key)
            progress.placed.discard(key)
            if allocation is not None:
                release_placeholder(state, allocation, reason, now)
                placed += 1
        gang.groups[name].asked.clear()
    return placed


def expire(state: CoreState, now: float) -> None:
    """Apply the placeholder timeout of every gang whose first placeholder is old enough."""
    for gang in list(state.gangs.gangs.values()):
        first = gang.first_allocated
        if first is None or first + gang.spec.timeout > now:  # as Scheduler.gang_due adds it up
            continue
        if not gang.placeholders() and not gang.pending_placeholders() and not gang.waiting:
            continue
        waited = f"placeholders not all used after {gang.spec.timeout:g}s"
        if not gang.seen_real:
            release_all(state, gang, f"{waited} and no pod of the application came", now)
            state.gangs.end(gang.app_id)
            _woken(state, gang)
        elif gang.reserving and gang.spec.style == HARD:
            _fail(state, gang, now)
        elif gang.reserving and gang.spec.style == RETRY:
            _retry(state, gang, waited, now)
        elif gang.reserving:
            release_all(state, gang, f"{TIMEOUT_REASON}: {waited} (Soft style: scheduling normally)", now)
            state.gangs.leave_reserving(gang, RESUMED)
            _woken(state, gang)
            _app_event(state, gang, f"Soft style: {waited}; placeholders released, pods scheduled normally", now)
        else:
            for progress in gang.groups.values():
                progress.timed_out += len(progress.placed)
            release_all(state, gang, f"{TIMEOUT_REASON}: {waited}", now)
            _app_event(state, gang, f"{waited}; unused placeholders released", now)


def _retry(state: CoreState, gang: Gang, waited: str, now: float) -> None:
    """A PodGroup API's gang whose placeholders timed out: they are released (room others may use
    now) and it reserves again behind the gangs of its queue; none of its pods runs alone."""
    for progress in gang.groups.values():
        progress.timed_out += len(progress.placed)
    release_all(state, gang, f"{TIMEOUT_REASON}: {waited}; the gang reserves again later", now)
    gang.first_allocated = None
    gang.stand_ins.clear()
    state.gangs.to_back(gang)
    state.gangs.touched.add(gang.app_id)
    app = state.partition.applications.get(gang.app_id)
    if app is not None:
        wake_next(state, app.queue_path)
    _app_event(state, gang, f"{waited}; placeholders released, the gang reserves again after the others waiting", now)


def _fail(state: CoreState, gang: Gang, now: float) -> None:
    """Hard style: the application fails; its pending pods are told why and stay out."""
    reason = f"{TIMEOUT_REASON}: the gang's placeholders were not all allocated within {gang.spec.timeout:g}s"
    app = state.partition.applications.get(gang.app_id)
    state.gangs.leave_reserving(gang, FAILED)
    _woken(state, gang)
    remember_failure(state, gang.app_id, f"application {gang.app_id} failed: {reason}")
    for progress in gang.groups.values():
        progress.timed_out += len(progress.placed) + len(progress.asked)
    if app is not None:
        app.reason = TIMEOUT_REASON
        state.transition(app, AppState.FAILING, now)
    release_all(state, gang, reason, now)
    if app is not None:
        for key, ask in list(app.asks.items()):
            lifecycle.remove_ask(state, key, now)
            lifecycle.unplace(state, ask, f"application {gang.app_id} failed: {reason}", now)
            # the shim marks the pod Failed (as YuniKorn's does) unless gang.failPodsOnTimeout is off
            state.emit(SchedulingEvent(now, REQUEST, key, TIMEOUT_REASON, reason, gang.app_id, ask.display_name))
        lifecycle.settle(state, app, now)
    state.emit(SchedulingEvent(now, APPLICATION, gang.app_id, "Failed", reason))
    state.gangs.end(gang.app_id)


def _woken(state: CoreState, gang: Gang) -> None:
    """The gang left reserving: its held pods, and the next gang of its leaf, go on."""
    wake(state, gang.app_id)
    app = state.partition.applications.get(gang.app_id)
    if app is not None:
        wake_next(state, app.queue_path)


def _app_event(state: CoreState, gang: Gang, message: str, now: float) -> None:
    state.emit(SchedulingEvent(now, APPLICATION, gang.app_id, TIMEOUT_REASON, message))
