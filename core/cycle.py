"""One scheduling decision: which pending pod goes where, or why it waits.

The walk follows the queue tree: a parent's children in fair order, a leaf's applications in
its policy's order, an application's asks by priority then age. For an ask the checks run in
DESIGN's order and stop at the first "no":

0. a gang's say (core/gang/): hold the pod while its gang reserves, or free the placeholder
   it replaces (then the pod goes to that placeholder's node), or keep a placeholder waiting
   while its gang needs more than the cluster has or no domain of its gang's required topology
   can hold the gang; a pod preemption holds room for waits for its victims, then takes the
   held room;
1. rules the shim marked as ones Herder cannot honour -> wait;
2. queue max along the whole path (room a preemptor's victims freed under a max is the
   preemptor's: core/preemption/held_room.py), and maxapplications when the application is
   not running;
3. user and group limits: the user group manager's increase either applies or denies;
4. the elastic quota: `used + request <= runtime` (and the non-preemptible rule);
5. node fit and score (`core/fit.py`): node constraints, rules between pods, resources. A pod
   a node is reserved for tries that node first; another pod takes a reserved node's room only
   where it fits beside the reserved pods, as a backfill, or by a higher priority
   (core/reservations/). A pod refused for room marks its leaf, whose front may reserve.

On success every tracker has changed together (queue, user/group, quota, node); a failure
after step 3 rolls the user/group increase back, so a denied ask leaves nothing behind. A
pod that cannot run is parked with a reason a person can read until something changes.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.elastic.manager import NodeSlot, RunningPod
from core.elastic.spec import DEFAULT_QUOTA, SYSTEM_QUOTA
from core.events import REQUEST, SchedulingEvent
from core.fit import fit_reason, pod_rule_masks, rules_refusal, select_node, volume_plan, wake_rule_waiters
from core.gang import tidy as gang_steps
from core.gang import topology as gang_topology
from core.gang.gang import step_for
from core.objects.application import Application
from core.objects.application_state import AppState
from core.objects.ask import Allocation, Ask
from core.objects.leaf_waits import mark_refused, unmark
from core.objects.node_index import static_mismatch
from core.objects.queue import Queue
from core.objects.queue_priority import children_by_priority
from core.policies import app_order_depends_on_usage, application_key, order_applications
from core.preemption.held_room import held_over_max, held_room_reason, waiting_for_victims
from core.preemption.holds import hold_room, release_hold
from core.reservations.backfill import backfilled, reserved_use
from core.reservations.reserve import end as end_reservation
from core.reservations.reserve import note_refused, reserved_node, waiting_reason, yield_node
from core.resources import Resource
from core.state import CoreState, Hold


def allocate_one(state: CoreState, now: float) -> Allocation | None:
    """Place one pending pod, or return None when no pending pod can be placed now."""
    if state.gangs.placing is not None:
        allocation = _go_on_with_gang(state, state.gangs.placing, now)
        if allocation is not None:
            return allocation
    front = state.front_leaf
    if front is not None and _still_first(state, front):
        # the walk from root would come to this leaf first: try it, then the rest in order
        allocation = _walk_leaf(state, front, now)
        if allocation is None:
            state.tried_leaf = front
            try:
                allocation = _walk(state, state.partition.root, now)
            finally:
                state.tried_leaf = None
    else:
        allocation = _walk(state, state.partition.root, now)
    while allocation is None and state.hold_let_go:
        # A preemptor let its held room go: the pods parked while it was held may take it.
        state.hold_let_go = False
        state.bump()
        allocation = _walk(state, state.partition.root, now)
    return allocation


def _go_on_with_gang(state: CoreState, app_id: str, now: float) -> Allocation | None:
    """A gang with a topology places its placeholders one after the other, before any other pod
    can take the room its domain was chosen for (each still passes every check)."""
    state.gangs.placing = None
    app = state.partition.applications.get(app_id)
    leaf = state.partition.find_queue(app.queue_path) if app is not None else None
    if app is None or leaf is None or not leaf.is_leaf:
        return None
    return _walk_app(state, leaf, app, now)


def _still_first(state: CoreState, leaf: Queue) -> bool:
    """Whether the walk from root would try `leaf` (the one that placed the last pod) first:
    at every level up to root it heads its parent's kept order, and nothing moved there since
    but itself, whose new share stays below its next sibling's. Its parents' orders are then
    repaired at the next full walk, to the same place. Not where queue priorities order
    siblings (a parked ask moves them), nor with gangs (a failed try may release a
    placeholder, so the orders after it could differ from the ones the walk read before)."""
    partition = state.partition
    if partition.queue_priorities or state.gangs.gangs or not leaf.is_leaf:
        return False
    cluster = partition.cluster_capacity
    queue = leaf
    while queue.parent is not None:
        if not queue.heads_parent_order(cluster):
            return False
        queue = queue.parent
    return queue is partition.root


def _walk(state: CoreState, queue: Queue, now: float) -> Allocation | None:
    if queue.is_leaf:
        return None if queue is state.tried_leaf else _walk_leaf(state, queue, now)
    children: Iterable[Queue]
    if state.partition.queue_priorities and queue.app_sort_priority:
        children = children_by_priority(queue, state.partition.cluster_capacity, state.version)
    else:
        children = queue.ordered_children(state.partition.cluster_capacity)
    for child in children:
        if not child.pending:
            continue
        allocation = _walk(state, child, now)
        if allocation is not None:
            return allocation
    return None


def _walk_leaf(state: CoreState, leaf: Queue, now: float) -> Allocation | None:
    if not leaf.pending_apps or (leaf.waits.all_refused and _refused_as_before(state, leaf)):
        return None
    version = state.version
    order = leaf.order
    if order is None and len(leaf.pending_apps) == 1:
        return _walk_app(state, leaf, next(iter(leaf.pending_apps.values())), now)  # nothing to order
    # An application's rank reads its best ask that may run now (first, or after the policy's
    # own key with `application.sort.priority: disabled`); asks parked at an older change
    # counter may run again, so the order is stale once the counter moved (unless every
    # pending ask has priority 0: then every priority is 0 either way).
    if order is None or (leaf.order_version != version and leaf.waits.prioritized):
        order = order_applications(leaf, version, state.partition.cluster_capacity)
        leaf.order = order
        leaf.order_version = version
    elif order.stale:
        order.refresh(leaf.pending_apps, application_key(leaf, version, state.partition.cluster_capacity))
    apps: Iterable[Application] = order
    waits = leaf.waits
    # No application with another ask means every ask was refused, and the check above said no.
    unsettled = waits.unsettled
    if waits.refused_asks and unsettled and len(unsettled) * 4 < len(order) and _refused_as_before(state, leaf):
        # the others would be parked again as they are: try those with another ask, in order
        apps = order.in_order(unsettled.values()) or order  # None: one is not in the order yet
    for app in apps:
        while True:
            # the counter as it is now: a try may move it (a preemptor's held room let go), and an
            # ask parked at the new counter must not come back as a candidate of an older one
            ask = app.next_candidate(state.version)
            if ask is None:
                break
            allocation = try_ask(state, leaf, app, ask, now)
            if allocation is not None:
                state.front_leaf = leaf
                return allocation
            order.suspect(app)  # parked: its best ask that may run now changed
    return None


def _walk_app(state: CoreState, leaf: Queue, app: Application, now: float) -> Allocation | None:
    while True:
        ask = app.next_candidate(state.version)  # as in _walk_leaf: a try may move the counter
        if ask is None:
            return None
        allocation = try_ask(state, leaf, app, ask, now)
        if allocation is not None:
            state.front_leaf = leaf
            return allocation


# The first rule that keeps a pod waiting, as `herder explain` and the pending list name it.
GANG = "gang"
UNSUPPORTED_RULES = "unsupported-rules"
QUEUE_MAX = "queue-max"
QUEUE_MAX_APPLICATIONS = "queue-max-applications"
USER_LIMIT = "user-group-limit"
QUOTA = "quota-runtime"
NO_NODE_FITS = "no-node-fits"


def _park(
    state: CoreState, app: Application, ask: Ask, reason: str, now: float, rule: str, refused_in: Queue | None = None
) -> None:
    """Park the ask with `reason`; `refused_in`: its leaf, when the cluster's size alone said no."""
    app.park(ask.key, state.version)
    state.candidates_changed(app)
    state.metrics.attempts_failed += 1
    state.rules[ask.key] = rule
    explain_wait(state, ask, reason, now)
    if refused_in is not None:
        quota = state.ask_quota.get(ask.key, DEFAULT_QUOTA)
        mark_refused(state.refusal_marks, refused_in.waits, app, ask, quota, reason)
    elif state.refusal_marks:
        unmark(state.refusal_marks, ask.key)


def explain_wait(state: CoreState, ask: Ask, reason: str, now: float) -> None:
    """Say why the pending pod waits (once per new reason: the pod's condition and its events)."""
    if state.reasons.get(ask.key) != reason:
        state.reasons[ask.key] = reason
        if state.refusal_marks:
            unmark(state.refusal_marks, ask.key)
        state.emit(
            SchedulingEvent(
                time=now,
                type=REQUEST,
                object_id=ask.key,
                reason="Unschedulable",
                message=reason,
                reference_id=ask.application_id,
                name=ask.display_name,
            )
        )


def _rule_reason(state: CoreState, leaf: Queue, app: Application, ask: Ask) -> tuple[str | None, str | None, str]:
    """Why the ask cannot run however much room the nodes have (first); when only the cluster's
    size says no, that reason (second): room preemption may still make; the rule (third)."""
    if ask.constraints.unsupported_required:
        rules = ", ".join(ask.constraints.unsupported_required)
        return f"Herder cannot honour required rules: {rules}", None, UNSUPPORTED_RULES
    reason = cluster_full = None
    rule = QUEUE_MAX
    over = _over_max(state, leaf, ask.resource)
    if over is not None:
        queue, key = over
        if queue.parent is None:
            # Only the root (the cluster's size) says no: no node fits, which preemption may
            # still solve, so the ask goes on to the other checks.
            cluster_full = _cluster_full(state, ask.resource)
        else:
            reason = queue.max_message(key, ask.resource.get_value(key))
    if reason is None and state.holds:
        reason = held_room_reason(state, leaf, ask)
    if reason is None and not app.is_running:
        reason, rule = leaf.app_limit_violation(), QUEUE_MAX_APPLICATIONS
    return reason, cluster_full, rule


def _over_max(state: CoreState, leaf: Queue, resource: Resource) -> tuple[Queue, str] | None:
    """`leaf.over_max(resource)`, kept per leaf and request shape while no queue's usage can
    have changed (`CoreState.usage_stamp`): when the cluster is full,
    every parked pod asks it again each time a pod ends."""
    stamp = state.usage_stamp()
    if state.over_max_stamp != stamp:
        # the first question since usage changed: kept only from the second on, since after a
        # placement (which changes the stamp again) nothing would read it
        state.over_max_stamp = stamp
        state.over_max.clear()
        return leaf.over_max(resource)
    key = (leaf.path, resource)
    if key not in state.over_max:
        state.over_max[key] = leaf.over_max(resource)
    return state.over_max[key]


def preemption_scope(state: CoreState, leaf: Queue, app: Application, ask: Ask) -> Queue | None:
    """Where preemption may make room for the ask: the lowest queue on its path whose max it
    would pass (counting room held for other preemptors), or the root when only room on the
    nodes keeps it waiting. None when something preemption cannot change keeps it waiting: its
    own queue's max (no pod of its own queue is a victim), maxapplications, its user's or
    group's limits (checked first, as YuniKorn does: preemption does not help a user limit),
    its elastic quota, or rules Herder cannot honour."""
    if ask.constraints.unsupported_required:
        return None
    over = _over_max(state, leaf, ask.resource)
    if state.holds:
        held = held_over_max(state, leaf, ask)
        if held is not None and (over is None or held[0].path.startswith(over[0].path + ".")):
            over = held[0], held[1]
    scope = state.partition.root if over is None else over[0]
    if scope is leaf or (not app.is_running and leaf.app_limit_violation() is not None):
        return None
    ugm = state.ugm
    if ugm.limits_apply(leaf.path) or not app.app_id:
        if not ugm.increase_tracked_resource(leaf.path, app.app_id, ask.resource, app.user):
            return None
        ugm.decrease_tracked_resource(leaf.path, app.app_id, ask.resource, app.user, not app.is_running)
    quota = state.ask_quota.get(ask.key, DEFAULT_QUOTA)
    return scope if state.quotas.check_admission(quota, ask.resource, ask.preemptible) is None else None


def try_ask(state: CoreState, leaf: Queue, app: Application, ask: Ask, now: float) -> Allocation | None:
    """Run every check for one ask; place it or park it with the first reason it cannot run."""
    replacing: str | None = None  # the node of the placeholder this pod replaces
    replaces = ""
    if state.gangs.gangs or ask.task_group:
        step = step_for(state.gangs, state.allocations, leaf.path, ask)
        if step.hold:
            _park(state, app, ask, step.hold, now, GANG)
            app.hold(ask.key)  # tried again only when its gang (or the gang ahead) moves on
            return None
        if step.replace is not None or step.release is not None:
            replacing = gang_steps.take_placeholder(state, step, ask, now)
            replaces = step.replace.key if step.replace is not None else ""
        elif ask.placeholder and (state.gangs.confined or state.gangs.too_large):
            # larger than the cluster, or no domain holds it (unless room is reserved for it there)
            waiting = "" if ask.key in state.reservations.by_ask else gang_topology.placeholder_wait(state, ask)
            if waiting:
                _park(state, app, ask, waiting, now, NO_NODE_FITS)
                if state.settings.reservation_enabled:
                    note_refused(state, leaf)  # its gang may reserve nodes in the domain it waits for
                return None
    reason, cluster_full, rule = _rule_reason(state, leaf, app, ask)
    if reason is None and cluster_full and not _preemption_may_help(state, ask):
        # the cluster is full and nothing may be taken back for this ask
        if state.reservations.by_ask and ask.key in state.reservations.by_ask:
            _park(state, app, ask, waiting_reason(state, ask), now, NO_NODE_FITS)
            return None
        _park(state, app, ask, cluster_full, now, NO_NODE_FITS, leaf)
        if state.settings.reservation_enabled:
            note_refused(state, leaf)
        return None
    if reason is not None and rule == QUEUE_MAX and ask.key in state.holds:
        reason = _held_wait(state, ask) or reason  # its victims make room in the queue
    if reason is not None:
        _park(state, app, ask, reason, now, rule)
        return None
    ugm = state.ugm
    # Where no limit applies on the path the increase cannot be refused: it is deferred to the
    # commit (and summed per application there) instead of made and rolled back.
    limited = ugm.limits_apply(leaf.path) or not app.app_id
    if limited and not ugm.increase_tracked_resource(leaf.path, app.app_id, ask.resource, app.user):
        _park(state, app, ask, ugm.denial_reason(leaf.path, app.app_id, ask.resource, app.user), now, USER_LIMIT)
        return None
    quota = state.ask_quota.get(ask.key, DEFAULT_QUOTA)
    reason = state.quotas.check_admission(quota, ask.resource, ask.preemptible)
    if reason is None and state.preempting:
        reason = _quota_room_held(state, ask, quota)
    rule = QUOTA
    if reason is not None:
        state.quota_sensitive_version = state.version
    node_id = None
    held = ask.key in state.holds
    book = state.reservations
    reserved = ask.key in book.by_ask if book.by_ask else False
    backfill: float | None = None  # the reserved pods' start, when placed as a backfill
    if reason is None:
        rule = NO_NODE_FITS
        if replacing or cluster_full:
            node_id = replacing
        else:
            node_id = (reserved_node(state, ask) if reserved else None) or select_node(state, ask)
            if node_id is None and book.by_node:
                use = reserved_use(state, leaf, app, ask, now)  # ahead of the reserved pods, or a backfill
                if use is not None:
                    node_id, backfill = use
        if node_id is None and held:
            node_id, reason = _held_node(state, ask, cluster_full is None, now)
        if node_id is None and reserved and not reason:
            reason = waiting_reason(state, ask)
        if node_id is None:
            reason = reason or cluster_full or fit_reason(state, ask)
    if node_id is None:
        if limited:
            ugm.decrease_tracked_resource(leaf.path, app.app_id, ask.resource, app.user, not app.is_running)
        if quota not in (DEFAULT_QUOTA, SYSTEM_QUOTA) and _preemption_may_help(state, ask):
            state.quota_sensitive_version = state.version
        if held and rule == QUOTA and _held_wait(state, ask) is None:
            held = False  # its victims are gone and its quota still refuses it: a new plan may follow
        if not held:
            _maybe_preempt(state, leaf, ask, quota, now)
        if ask.key in state.preempting:
            reason = f"{reason}; waiting for preempted pods of quota {quota} to end"
        _park(state, app, ask, reason or "cannot run", now, rule)
        if rule == NO_NODE_FITS and not reserved and state.settings.reservation_enabled:
            note_refused(state, leaf)
        return None
    allocation = _commit(state, leaf, app, ask, quota, node_id, now, replaces)
    if not limited:
        ugm.defer_increase(leaf.path, app.app_id, ask.resource, app.user)
    if ask.placeholder:
        gang_steps.placeholder_placed(state, ask, now)
    elif state.gangs.confined:
        gang_steps.member_placed(state, ask)  # a gang's topology domain fixed by a real pod
    if backfill is not None:
        backfilled(state, ask, node_id, backfill, now)
    return allocation


def _refused_as_before(state: CoreState, leaf: Queue) -> bool:
    """Whether trying the leaf's pending asks again (each last refused by the cluster's size
    alone, `leaf.waits.all_refused`) would park each with the reason it shows: the cluster's
    size still refuses each shape in the same words, no queue below root is in the way, no
    maxapplications, gang, preemption or hold can change an answer."""
    if state.gangs.gangs or state.preempting or state.holds or leaf.app_limit_violation() is not None:
        return False
    for resource, quota, priority, reason in leaf.waits.refused:
        over = _over_max(state, leaf, resource)
        if over is None or over[0].parent is not None or _cluster_full(state, resource) != reason:
            return False
        if quota not in (DEFAULT_QUOTA, SYSTEM_QUOTA):
            floor = _lowest_preemptible_priority(state, quota)
            if floor is not None and floor < priority:
                return False
    return True


def _cluster_full(state: CoreState, resource: Resource) -> str | None:
    """Why `resource` does not fit the root queue's max (the cluster's size), or None. A full
    cluster refuses every pending pod each time a pod ends, so the answer is kept per request
    shape until the root's usage changes (a placement, or a change that moves the version)."""
    stamp = state.usage_stamp()
    if state.cluster_full_stamp != stamp:
        state.cluster_full_stamp = stamp
        state.cluster_full.clear()
    if resource not in state.cluster_full:
        state.cluster_full[resource] = state.partition.root.max_violation(resource)
    return state.cluster_full[resource]


def _held_wait(state: CoreState, ask: Ask) -> str | None:
    """Why a preemptor its queue's max or its quota still refuses waits: for its victims; once
    they are all gone and the max or quota still says no, the hold goes (a new search may
    follow) and None."""
    hold = state.holds[ask.key]
    waiting = waiting_for_victims(state, hold)
    if waiting is None:
        release_hold(state, ask.key)
        state.hold_let_go = True
    return waiting


def _held_node(state: CoreState, ask: Ask, may_place: bool, now: float) -> tuple[str | None, str | None]:
    """The node preemption holds room on for the ask, once its victims are gone; while they
    are not, None and the reason the ask waits. Reservations on the node yield to it (its
    victims were chosen as if their room were free)."""
    hold = state.holds[ask.key]
    waiting = waiting_for_victims(state, hold)
    if waiting is not None:
        return None, waiting
    release_hold(state, ask.key)
    state.hold_let_go = True  # the held room is free for everyone again unless the ask takes it now
    node = state.partition.nodes.get(hold.node_id)
    if (
        may_place
        and node is not None
        and node.usable
        and static_mismatch(node, ask.constraints) is None
        and ask.resource.fits_in(node.available() + state.reservations.reserved_on(node.node_id))
        and rules_refusal(state, ask, node.node_id) is None
    ):
        if not ask.resource.fits_in(node.available()):
            yield_node(state, node.node_id, now, f"preemption made room on node {node.node_id} for {ask.display_name}")
        return node.node_id, None
    return None, None


def _commit(
    state: CoreState, leaf: Queue, app: Application, ask: Ask, quota: str, node_id: str, now: float, replaces: str = ""
) -> Allocation:
    partition = state.partition
    # Unix time, like the start time of a pod recovered from the cluster, so "newest first"
    # compares the two and documents show it as it is.
    placed_at = now + state.epoch_offset()
    allocation = Allocation.for_ask(ask, node_id, placed_at, queue_path=leaf.path)
    if replaces:
        allocation = allocation._replace(replaces=replaces)
    if ask.claims:
        plan = volume_plan(state, ask, node_id)
        if plan:
            allocation = allocation._replace(volume_plan=plan)
    node = partition.nodes[node_id]
    partition.put_on_node(node, allocation)
    state.record_on_node(allocation, True, now)
    first = not app.is_running
    app.take(ask.key)
    app.add_allocation(allocation)
    leaf.start_pending(ask.resource)
    leaf.waits.left(app, ask)
    if state.refusal_marks:
        unmark(state.refusal_marks, ask.key)
    if first:
        leaf.add_running_app()
    if app_order_depends_on_usage(leaf):
        leaf.order = None
    elif leaf.order is not None and (not app.asks or app.top_priority(state.version) != ask.priority):
        leaf.reorder(app)
    if not app.asks:
        leaf.pending_apps.pop(app.app_id, None)
    _advance_state(state, app, first, now)
    state.quotas.allocate(ask.key, quota, ask.resource, ask.preemptible, ask.priority, placed_at)
    state.ask_app.pop(ask.key, None)
    state.allocations[ask.key] = allocation
    state.fit_failures.pop(ask.key, None)
    if state.rule_waiting:
        state.rule_waiting.pop(ask.key, None)
        wake_rule_waiters(state, ask)
    state.reasons.pop(ask.key, None)
    state.rules.pop(ask.key, None)
    state.preempting.pop(ask.key, None)
    state.pending_since.pop(ask.key, None)
    state.preempt_tried.pop(ask.key, None)
    if ask.key in state.holds:
        release_hold(state, ask.key)
    if state.reservations.by_ask and ask.key in state.reservations.by_ask:
        end_reservation(state, ask.key, now, on_node=node_id)
    state.metrics.allocations += 1
    state.emit(
        SchedulingEvent(
            time=now,
            type=REQUEST,
            object_id=ask.key,
            reason="Scheduled",
            message=f"placed on node {node_id} in queue {leaf.path}",
            reference_id=app.app_id,
            name=ask.display_name,
            resource=ask.resource,
        )
    )
    ignored = ask.constraints.unsupported_preferred
    if ignored:
        state.emit(
            SchedulingEvent(
                time=now,
                type=REQUEST,
                object_id=ask.key,
                reason="PreferencesIgnored",
                message=f"placed on node {node_id} without weighing rules Herder ignores: {', '.join(ignored)}",
                reference_id=app.app_id,
                name=ask.display_name,
            )
        )
    return allocation


def _advance_state(state: CoreState, app: Application, first: bool, now: float) -> None:
    if app.state in (AppState.NEW, AppState.ACCEPTED):
        state.transition(app, AppState.STARTING, now)
    if app.state is AppState.COMPLETING or (app.state is AppState.STARTING and (not first or not app.asks)):
        state.transition(app, AppState.RUNNING, now)


def _preemption_may_help(state: CoreState, ask: Ask) -> bool:
    """Whether evicting pods could make room for this ask: it already waits for victims (of
    either preemption), or its quota has preemptible running pods of a lower priority (in-quota
    preemption). Cross-queue preemption chooses its preemptors in its own pass."""
    if ask.key in state.preempting or ask.key in state.holds:
        return True
    quota = state.ask_quota.get(ask.key, DEFAULT_QUOTA)
    if quota in (DEFAULT_QUOTA, SYSTEM_QUOTA):
        return False
    floor = _lowest_preemptible_priority(state, quota)
    return floor is not None and floor < ask.priority


def _lowest_preemptible_priority(state: CoreState, quota: str) -> int | None:
    """The lowest priority among the quota's preemptible running pods, read again only once pods
    changed (a release moves the version, a placement the allocation count)."""
    stamp = state.usage_stamp()
    cached = state.preempt_floor.get(quota)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    lowest = min(
        (
            alloc.priority
            for alloc in state.allocations.values()
            if alloc.ask is not None and alloc.ask.preemptible and state.ask_quota.get(alloc.key) == quota
        ),
        default=None,
    )
    state.preempt_floor[quota] = (stamp, lowest)
    return lowest


def _quota_room_held(state: CoreState, ask: Ask, quota: str) -> str | None:
    """Why a pod may not take quota room that in-quota preemption is freeing for pods of a
    higher priority: the room their victims leave is theirs. Without this, a lower pod (a gang's
    placeholder, made again each time it goes) took it, was preempted in turn, and so on for ever."""
    if quota in (DEFAULT_QUOTA, SYSTEM_QUOTA):
        return None
    held: Resource | None = None
    names = []
    for key in sorted(state.preempting):
        if key == ask.key or state.ask_quota.get(key) != quota:
            continue
        app = state.ask_app.get(key)
        preemptor = app.asks.get(key) if app is not None else None
        if preemptor is None or preemptor.priority <= ask.priority:
            continue
        held = preemptor.resource if held is None else held + preemptor.resource
        names.append(preemptor.display_name)
    if held is None:
        return None
    refused = state.quotas.check_admission(quota, ask.resource + held, ask.preemptible)
    if refused is None:
        return None
    return f"quota {quota} keeps the room its preemption frees for {', '.join(names)} (higher priority): {refused}"


def _maybe_preempt(state: CoreState, leaf: Queue, ask: Ask, quota: str, now: float) -> None:
    """In-quota preemption: lower-priority preemptible pods of the same quota on one node."""
    if quota in (DEFAULT_QUOTA, SYSTEM_QUOTA):
        return
    asked = state.preempting.get(ask.key)
    if asked is not None:
        if any(key in state.allocations for key in asked):
            return  # still waiting for the victims to end
        del state.preempting[ask.key]  # they ended but the room went to another pod: plan again
    floor = _lowest_preemptible_priority(state, quota)
    if floor is None or floor >= ask.priority:
        return  # nobody in the quota this ask may preempt: spare the scan of every node
    partition = state.partition
    rules = pod_rule_masks(state, ask)
    slots: dict[str, NodeSlot] = {}
    for node in partition.nodes.values():
        if static_mismatch(node, ask.constraints) is not None:
            continue
        if rules is not None:
            pos = partition.node_index.position(node.node_id)
            if pos is None or not all(mask[pos] for _, mask in rules):
                continue
        candidates = [
            RunningPod(
                key=alloc.key,
                resource=alloc.resource,
                priority=alloc.priority,
                start_time=alloc.allocation_time,
                preemptible=alloc.ask.preemptible if alloc.ask else False,
                pod=alloc.ask.pod if alloc.ask else None,
            )
            for alloc in node.allocations.values()
            if alloc.priority < ask.priority
            and alloc.key not in state.evicting
            and state.ask_quota.get(alloc.key) == quota
        ]
        if candidates:
            slots[node.node_id] = NodeSlot(free=node.available_for(ask.key), candidates=candidates)
    if not slots:
        return
    budgets = list(state.budgets.values())
    plan = state.quotas.preemption_plan(quota, ask.resource, ask.priority, slots, ask.preemptible, budgets)
    if plan is None:
        return
    victims = frozenset(plan.victims)
    state.preempting[ask.key] = victims
    # The node's room its victims free is held for it, as cross-queue preemption holds it: else a
    # lower pod tried first (a gang's placeholder, made again each time it goes) took it, was
    # preempted in turn, and so on for ever.
    hold_room(state, ask, Hold(plan.node, victims, ask.resource, leaf.path), now)
    for key in sorted(victims):
        allocation = state.allocations.get(key)
        if allocation is None:
            continue
        reason = f"preempted by {ask.display_name} (priority {ask.priority}) in quota {quota}"
        request_eviction(state, allocation, reason, "Preempted", now)
        state.metrics.preempted(allocation.queue_path, "quota")


def request_eviction(state: CoreState, allocation: Allocation, reason: str, why: str, now: float) -> None:
    """Ask the shim to evict; usage changes only when the shim confirms with a release."""
    state.evicting.add(allocation.key)
    state.leaving_changed(allocation.node_id)
    state.metrics.evictions += 1
    state.emit(
        SchedulingEvent(
            time=now,
            type=REQUEST,
            object_id=allocation.key,
            reason=why,
            message=reason,
            reference_id=allocation.application_id,
            name=allocation.display_name,
            resource=allocation.resource,
        )
    )
    callbacks = state.callbacks
    state.outbox.append(lambda: callbacks.evict(allocation, reason))
