"""What happens to every tracker when a pod arrives, runs and ends.

The `Scheduler`'s inputs take its lock and call these functions; each changes the whole
picture together under that lock: the application and its state, the queue's pending and
allocated resources, the node, the user group manager and the elastic quotas. A pending pod
that cannot be queued (no queue for it, input Herder could not read) is kept "unplaced" with its
reason and tried again when the configuration or its quota changes. A pod that already runs
(recovery after a restart) counts everywhere even when no rule places it: it goes to the
recovery queue rather than being lost.
"""

from __future__ import annotations

from core.elastic.spec import DEFAULT_QUOTA
from core.events import APPLICATION, REQUEST, SchedulingEvent
from core.gang import admission as gang
from core.objects.application import Application
from core.objects.application_state import AppState
from core.objects.ask import Allocation, Ask
from core.objects.leaf_waits import unmark
from core.objects.node import Node
from core.objects.queue import Queue
from core.policies import app_order_depends_on_usage
from core.preemption.holds import release_hold
from core.reservations.reserve import end as end_reservation
from core.resources import Resource
from core.state import CoreState, Unplaced

NOT_QUEUED = "not-queued"  # no queue takes the pod (placement, namespace quota, unreadable input)
BIND_RETRY = "bind-retry"  # placed, its binding did not land: it waits out a back-off, still pending

RECOVERY_QUEUE = "root.@recovery@"
COMPLETING_TIMEOUT = 30.0  # seconds an application stays Completing before it is Completed


def queue_ask(state: CoreState, ask: Ask, now: float) -> None:
    if ask.problems:
        unplace(state, ask, "; ".join(ask.problems), now)
        return
    quota = state.quotas.resolve(ask.namespace, ask.quota)
    problem = state.quotas.pod_problem(ask.namespace, ask.quota)
    if problem:
        unplace(state, ask, problem, now)
        return
    failed = state.gangs.failed.get(ask.application_id)
    if failed is not None:
        unplace(state, ask, failed, now)
        return
    app = application_for(state, ask, now)
    if app is None:
        return
    refusal = gang.admit(state, app, ask)
    if refusal is not None:
        reject_gang(state, app, ask, refusal, now)
        return
    queue = state.partition.find_queue(app.queue_path)
    assert queue is not None
    app.add_ask(ask)
    queue.waits.joined(app, ask)
    if state.rules.get(ask.key) == NOT_QUEUED:
        del state.rules[ask.key]  # queued now: the next try says what holds it
    if app.state is AppState.NEW:
        state.transition(app, AppState.ACCEPTED, now)
    elif app.state is AppState.COMPLETING:
        state.transition(app, AppState.RUNNING, now)
    queue.add_pending(ask.resource)
    queue.pending_apps[app.app_id] = app
    queue.reorder(app)
    state.candidates_changed(app, queue)
    state.ask_app[ask.key] = app
    state.ask_quota[ask.key] = quota
    state.pending_since.setdefault(ask.key, now)
    state.quotas.add_request(ask.key, quota, ask.resource, ask.preemptible)
    if quota != DEFAULT_QUOTA and state.quota_sensitive_version == state.version:
        # A larger request can raise a quota's runtime: the pods parked on a runtime (or on
        # room in-quota preemption could make) at this counter try again. Pods parked for any
        # other reason (the cluster's size, a node rule, a queue max, a user limit) cannot run
        # because of a new request and are not tried again for it.
        state.bump()


def application_for(state: CoreState, ask: Ask, now: float) -> Application | None:
    partition = state.partition
    app = partition.applications.get(ask.application_id)
    if app is not None and app.state not in (AppState.COMPLETED, AppState.FAILED, AppState.REJECTED):
        refusal = app.foreign_to(ask)
        if refusal is not None:
            unplace(state, ask, refusal, now)
            return None
        return app
    queue, reason = partition.place(ask)
    if queue is None:
        if not any(entry[0] == ask.application_id for entry in state.rejected_apps):
            # Once per application, not once per pod (or per retry after a config change).
            state.metrics.apps_rejected += 1
            state.rejected_apps.append((ask.application_id, ask.queue or "", reason, now))
            state.emit(SchedulingEvent(now, APPLICATION, ask.application_id, "Rejected", reason))
        unplace(state, ask, reason, now)
        return None
    queue.draining = False
    app = Application(ask.application_id, queue.path, ask.user, dict(ask.tags), now, ask.namespace)
    partition.applications[app.app_id] = app
    queue.apps[app.app_id] = app
    state.metrics.apps_submitted += 1
    state.emit(SchedulingEvent(now, APPLICATION, app.app_id, "Accepted", f"placed in queue {queue.path}"))
    return app


def reject_gang(state: CoreState, app: Application, ask: Ask, reason: str, now: float) -> None:
    """A gang that could never reserve: the application is rejected, its pods wait with the reason."""
    state.metrics.apps_rejected += 1
    state.rejected_apps.append((app.app_id, app.queue_path, reason, now))
    state.emit(SchedulingEvent(now, APPLICATION, app.app_id, "Rejected", reason))
    state.transition(app, AppState.REJECTED, now)
    for key, held in list(app.asks.items()):
        remove_ask(state, key, now)
        unplace(state, held, reason, now)
    unplace(state, ask, reason, now)
    retire(state, app, now, keep=False)


def unplace(state: CoreState, ask: Ask, reason: str, now: float) -> None:
    state.unplaced[ask.key] = Unplaced(ask, reason)
    state.rules[ask.key] = NOT_QUEUED
    if state.reasons.get(ask.key) != reason:
        state.reasons[ask.key] = reason
        state.emit(
            SchedulingEvent(now, REQUEST, ask.key, "Unschedulable", reason, ask.application_id, ask.display_name)
        )


def retry_unplaced(state: CoreState, now: float) -> None:
    waiting = list(state.unplaced.values())
    state.unplaced.clear()
    for item in waiting:
        queue_ask(state, item.ask, now)


def remove_ask(state: CoreState, key: str, now: float) -> None:
    state.bind_retries.pop(key, None)
    state.reasons.pop(key, None)
    state.rules.pop(key, None)
    state.preempting.pop(key, None)
    state.fit_failures.pop(key, None)
    state.rule_waiting.pop(key, None)
    state.pending_since.pop(key, None)
    state.preempt_tried.pop(key, None)
    release_hold(state, key)
    if state.reservations.by_ask and key in state.reservations.by_ask:
        end_reservation(state, key, now, "its pod left")
    if state.unplaced.pop(key, None) is not None:
        return
    app = state.ask_app.pop(key, None)
    if app is None:
        return
    ask = app.remove_ask(key)
    unmark(state.refusal_marks, key)
    gang.gone(state, app.app_id, key)
    queue = state.partition.find_queue(app.queue_path)
    if ask is not None and queue is not None:
        queue.add_pending(ask.resource, -1)
        queue.waits.left(app, ask)
        if not app.asks:
            queue.pending_apps.pop(app.app_id, None)
        queue.reorder(app)
        state.candidates_changed(app, queue)
    state.ask_quota.pop(key, None)
    state.quotas.remove_request(key)
    settle(state, app, now)


def add_allocation(state: CoreState, allocation: Allocation, now: float) -> None:
    key = allocation.key
    if key in state.allocations or key in state.foreign:
        return
    partition = state.partition
    node = partition.nodes.get(allocation.node_id)
    if node is None:
        state.waiting_for_node[key] = allocation
        return
    if allocation.foreign or allocation.ask is None:
        partition.put_on_node(node, allocation)
        state.record_on_node(allocation, True, now, node.occupied)
        state.foreign[key] = allocation
        foreign_changed(state, allocation, 1)
        return
    remove_ask(state, key, now)
    recover(state, allocation, node, now)


def recover(state: CoreState, allocation: Allocation, node: Node, now: float) -> None:
    ask = allocation.ask
    assert ask is not None
    partition = state.partition
    ask = _own_application(state, ask)
    app = application_for(state, ask, now)
    if app is None:
        # The pod runs already: its usage must count even when no rule places it.
        state.unplaced.pop(ask.key, None)
        state.reasons.pop(ask.key, None)
        state.rules.pop(ask.key, None)
        recovery = partition.find_queue(RECOVERY_QUEUE) or partition._recreate_path(RECOVERY_QUEUE, draining=False)
        app = partition.applications.get(ask.application_id)
        if app is None or app.queue_path != recovery.path:
            app = Application(ask.application_id, recovery.path, ask.user, dict(ask.tags), now, ask.namespace)
            partition.applications[app.app_id] = app
            recovery.apps[app.app_id] = app
    queue_or_none = partition.find_queue(app.queue_path)
    assert queue_or_none is not None
    queue: Queue = queue_or_none
    allocation = allocation.recovered(app.app_id, ask, queue.path)
    first = not app.is_running
    # a running pod counts whatever the limits say now: deferred like a placement without limits
    state.ugm.defer_increase(queue.path, app.app_id, allocation.resource, app.user)
    partition.put_on_node(node, allocation)
    state.record_on_node(allocation, True, now)
    app.add_allocation(allocation)
    queue.add_allocated(allocation.resource)
    if first:
        queue.add_running_app()
    if app.state in (AppState.NEW, AppState.ACCEPTED):
        state.transition(app, AppState.STARTING, now)
        state.transition(app, AppState.RUNNING, now)
    elif app.state is AppState.COMPLETING:
        state.transition(app, AppState.RUNNING, now)
    quota = state.quotas.resolve(ask.namespace, ask.quota)
    state.ask_quota[ask.key] = quota
    state.quotas.add_request(ask.key, quota, ask.resource, ask.preemptible)
    state.quotas.allocate(ask.key, quota, ask.resource, ask.preemptible, ask.priority, allocation.allocation_time)
    state.allocations[ask.key] = allocation
    gang.recovered(state, app, allocation)


def _own_application(state: CoreState, ask: Ask) -> Ask:
    """A running pod whose application belongs to someone else counts in an application of its own.

    Pending pods wait instead (`application_for`); a pod already on a node must be counted, and
    never to the other user's application, queue or limits.
    """
    app = state.partition.applications.get(ask.application_id)
    if app is None or app.foreign_to(ask) is None:
        return ask
    return ask._replace(application_id=f"{ask.application_id}@{ask.namespace}/{ask.user.user}")


def foreign_changed(state: CoreState, allocation: Allocation, sign: int) -> None:
    """A foreign pod came (sign 1) or went (-1): the quota pool loses or regains its room."""
    used = state.foreign_used
    for key, val in allocation.resource.items():
        left = used.get(key, 0) + sign * val
        if left:
            used[key] = left
        else:
            used.pop(key, None)
    state.quotas.set_foreign_used(Resource(used))


def binding_failed(state: CoreState, key: str, retry_at: float, now: float) -> None:
    """The pod's binding did not land and the pod is still pending: its placement rolls back in
    every tracker as for a release, and its ask is pending again in its application at once,
    held until `retry_at` (the shim's back-off). Without this the application would have no
    pod, pending or placed, until the shim asked again: Completing, or even Completed."""
    allocation = state.allocations.get(key)
    ask = allocation.ask if allocation is not None else None
    if allocation is None or ask is None or allocation.placeholder:
        release(state, key, now)
        return
    release(state, key, now, settle_app=False)
    queue_ask(state, ask, now)
    app = state.ask_app.get(key)
    if app is None:  # no queue takes it now (the configuration changed): it waits unplaced
        before = state.partition.applications.get(allocation.application_id)
        if before is not None:
            settle(state, before, now)
        return
    app.hold(key)
    state.candidates_changed(app)
    state.bind_retries[key] = retry_at
    state.rules[key] = BIND_RETRY
    reason = f"its binding to node {allocation.node_id} did not land; tried again in {max(0.0, retry_at - now):g}s"
    state.reasons[key] = reason
    state.emit(SchedulingEvent(now, REQUEST, key, "Unschedulable", reason, ask.application_id, ask.display_name))


def retry_bindings(state: CoreState, now: float) -> None:
    """Pods whose back-off after a failed binding is over are candidates again."""
    for key, at in list(state.bind_retries.items()):
        if at > now:
            continue
        del state.bind_retries[key]
        app = state.ask_app.get(key)
        if app is not None and app.release_one(key):
            state.candidates_changed(app)


def release(state: CoreState, key: str, now: float, settle_app: bool = True) -> None:
    """The pod is gone from its node (or its binding failed): every tracker rolls back; its
    application settles (Completing when nothing is left) unless `settle_app` is False."""
    if key in state.evicting:
        state.evicting.discard(key)
        state.leaving_changes += 1  # its node's change follows when it leaves the node
    state.waiting_for_node.pop(key, None)
    partition = state.partition
    foreign = state.foreign.pop(key, None)
    if foreign is not None:
        node = partition.nodes.get(foreign.node_id)
        if node is not None:
            partition.take_off_node(node, key)
            state.record_on_node(foreign, False, now, node.occupied)
        foreign_changed(state, foreign, -1)
        return
    allocation = state.allocations.pop(key, None)
    if allocation is None:
        remove_ask(state, key, now)
        return
    node = partition.nodes.get(allocation.node_id)
    if node is not None:
        partition.take_off_node(node, key)
        state.record_on_node(allocation, False, now)
    gang.gone(state, allocation.application_id, key)
    app = partition.applications.get(allocation.application_id)
    if app is not None and app.remove_allocation(key) is not None:
        queue = partition.find_queue(app.queue_path)
        if queue is not None:
            queue.add_allocated(allocation.resource, -1)
            if not app.is_running:
                queue.add_running_app(-1)
            if app.app_id in queue.pending_apps and app_order_depends_on_usage(queue):
                queue.order = None
        state.ugm.defer_decrease(app.queue_path, app.app_id, allocation.resource, app.user, not app.is_running)
        if settle_app:
            settle(state, app, now)
    state.quotas.release(key)
    state.quotas.remove_request(key)
    state.ask_quota.pop(key, None)
    state.metrics.releases += 1


def settle(state: CoreState, app: Application, now: float) -> None:
    """An application with nothing left pending or running starts completing; one that was
    starting and has nothing left to wait for is running."""
    if app.asks:
        return
    if app.allocations:
        if app.state is AppState.STARTING:
            state.transition(app, AppState.RUNNING, now)
        return
    if app.state in (AppState.ACCEPTED, AppState.STARTING, AppState.RUNNING):
        state.transition(app, AppState.COMPLETING, now)
    elif app.state is AppState.FAILING:
        state.transition(app, AppState.FAILED, now)
        retire(state, app, now)
    elif app.state is AppState.NEW:
        retire(state, app, now)


def retire(state: CoreState, app: Application, now: float, keep: bool = True) -> None:
    partition = state.partition
    partition.applications.pop(app.app_id, None)
    queue = partition.find_queue(app.queue_path)
    if queue is not None:
        queue.apps.pop(app.app_id, None)
        queue.pending_apps.pop(app.app_id, None)
        partition.prune(queue)
    app.finished_time = now
    if keep:
        state.finished_apps.append(app)
    # Pods that waited because this application was someone else's may now form their own.
    for item in [item for item in state.unplaced.values() if item.ask.application_id == app.app_id]:
        del state.unplaced[item.ask.key]
        queue_ask(state, item.ask, now)


def expire_completing(state: CoreState, now: float) -> None:
    due = [app for app in state.completing.values() if now - app.state_time >= COMPLETING_TIMEOUT]
    for app in sorted(due, key=lambda app: app.created):
        if app.state is AppState.COMPLETING:
            state.transition(app, AppState.COMPLETED, now)
            state.emit(SchedulingEvent(now, APPLICATION, app.app_id, "Completed"))
            retire(state, app, now)
