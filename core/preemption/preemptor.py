"""The preemption pass: once per scheduling cycle, asks in queues under their guarantee that
have waited `preemption.delay` look for victims in queues over theirs.

It costs nothing on the placement path, and little when nothing can trigger: with preemption
disabled for the partition, no pending pod, or no pending pod on a path with a guarantee, the
pass returns after walking the pending part of the queue tree. A preemptor whose search failed
is not searched again until a pod ended or a node or the configuration changed (the change
counter moved), and one cycle runs at most `SEARCHES_PER_CYCLE` searches, those tried longest
ago first, since each reads every running pod.

The room the victims free is held on their node for the preemptor (`Node.hold`) until it is
bound, so no other pod takes it; the hold goes when the preemptor is placed or deleted, when
an eviction is refused, or when its node goes. Evictions go out through the same path as the
elastic-quota recycler's (`cycle.request_eviction`), with the preemptor and the rule named.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal

from core.cycle import explain_wait, preemption_scope, request_eviction
from core.events import REQUEST, SchedulingEvent
from core.fit import pod_rule_masks, rules_refusal, select_node
from core.objects.application import Application
from core.objects.ask import Ask
from core.objects.node import Node
from core.objects.node_index import static_mismatch
from core.objects.pod_topology import Mask
from core.objects.queue import Queue
from core.preemption import queues
from core.preemption.held_room import waiting_for_victims
from core.preemption.holds import add_held, held_by_queue, hold_room, leaving_by_queue
from core.preemption.kept_search import SearchContext, not_of
from core.preemption.victims import Candidate, NodePlan, best_plan, cover, plan_node, victim_order
from core.resources import Resource
from core.state import CoreState, Hold

PREEMPTED = "Preempted"
SEARCHES_PER_CYCLE = 16  # victim searches one cycle runs; the others wait for the next cycle


def preempt(state: CoreState, now: float) -> int:
    """Start preemption for the asks that may trigger it now; the number of victims asked."""
    state.preempt_due = None
    partition = state.partition
    if not partition.config.preemption_enabled or not partition.root.pending:
        return 0
    held = held_by_queue(state)
    waiting: list[tuple[Queue, Application, Ask]] = []
    for leaf in _pending_leaves(partition.root):
        if not queues.is_guarded(leaf):
            continue
        wait = queues.delay(leaf)
        for app, ask in _asks(leaf):
            if state.preempt_tried.get(ask.key) == state.version or ask.key in state.holds:
                continue
            due = state.pending_since.get(ask.key, now) + wait
            if due > now:
                if queues.under_guarantee(leaf, ask.resource, held):
                    state.preempt_due = due if state.preempt_due is None else min(state.preempt_due, due)
                continue
            waiting.append((leaf, app, ask))
    # The asks tried longest ago first, a few per cycle: a search reads every running pod.
    waiting.sort(key=lambda item: state.preempt_tried.get(item[2].key, -1))
    asked = searches = 0
    for leaf, app, ask in waiting:
        if not queues.under_guarantee(leaf, ask.resource, held):
            continue
        if searches == SEARCHES_PER_CYCLE:
            state.preempt_due = now  # the rest next cycle
            break
        state.preempt_tried[ask.key] = state.version
        blocking = preemption_scope(state, leaf, app, ask)
        if blocking is None:
            continue
        searches += 1
        plan = _search(state, leaf, app, ask, blocking, held, now)
        if plan is not None:
            asked += _start(state, leaf, ask, plan, now)
            add_held(held, leaf, ask.resource)
    return asked


def _pending_leaves(queue: Queue) -> Iterator[Queue]:
    if queue.is_leaf:
        if queue.pending_apps:
            yield queue
        return
    for child in queue.children.values():
        if child.pending:
            yield from _pending_leaves(child)


def _asks(leaf: Queue) -> Iterator[tuple[Application, Ask]]:
    """The leaf's pending asks that may preempt: not a gang's pod held for its placeholders
    (the placeholders preempt for their gang; room held for the pod would count against its
    queue's guarantee and keep them from ever getting any)."""
    for app in list(leaf.pending_apps.values()):
        for ask in list(app.asks.values()):
            if ask.key not in app.held:
                yield app, ask


def _search(
    state: CoreState, leaf: Queue, app: Application, ask: Ask, blocking: Queue, held: queues.Held, now: float
) -> NodePlan | None:
    """The best plan for the ask: a node it can run on once the plan's victims are gone, the
    victims on that node that make it fit there and, when a queue's max keeps it waiting (the
    `blocking` queue below root), victims anywhere inside that queue that make room under it."""
    partition = state.partition
    top = queues.search_top(leaf, blocking)
    context = state.kept_searches.context(state, leaf, top, ask.priority)
    leaving = leaving_by_queue(state)
    need = queues.room_needed(leaf, ask.resource, held, leaving) if blocking.parent is not None else {}
    rules = pod_rule_masks(state, ask)
    if not need and rules is None:
        return _kept_search(state, context, app, ask, leaving, now)

    def candidates_on(node: Node) -> tuple[Resource, Sequence[Candidate]]:
        """The node's room once the pods already leaving it are gone, and the pods on it that
        may be victims for the ask (in victim order)."""
        found = context.victims_on(state, node, now)
        return found.free, not_of(found, app.app_id)

    # With room to make under a max, every node's pods may be victims (on cordoned nodes too):
    # their going frees room in their queues wherever they run.
    on_nodes = {node.node_id: candidates_on(node) for node in partition.nodes.values()} if need else {}
    pool = sorted((c for _, found in on_nodes.values() for c in found), key=victim_order)
    room_in = blocking.path if need else ""
    if need:
        # Room on a node is not what it lacks: it runs where it would run now, once room under
        # the max is made (the victims are the same whichever node it takes).
        node_id = select_node(state, ask)
        if node_id is not None:
            extras = cover(need, Resource(), pool, (), queues.Surplus(leaf, leaving))
            return NodePlan(node_id, extras, room_in) if extras else None
    plans: list[NodePlan | None] = []
    for node in partition.nodes.values():
        if not node.usable or static_mismatch(node, ask.constraints) is not None:
            continue
        free, candidates = on_nodes[node.node_id] if need else candidates_on(node)
        rules_ok = None
        if rules is not None:
            found_rules = _rules_check(state, ask, node.node_id, rules, candidates)
            if found_rules is False:
                continue
            rules_ok = found_rules
        surplus = queues.Surplus(leaf, leaving)
        if ask.resource.fits_in(free) and (rules_ok is None or rules_ok(())):
            if not need:
                continue  # it fits once the pods leaving it are gone: nothing to preempt here
            plan: NodePlan | None = NodePlan(node.node_id, (), room_in)
        elif candidates:
            plan = plan_node(node.node_id, free, ask.resource, candidates, surplus, rules_ok)
        else:
            continue
        if plan is not None and need:
            freed = Resource()
            for victim in plan.victims:
                freed = freed + victim.allocation.resource
            extras = cover(need, freed, pool, plan.victims, surplus)
            plan = NodePlan(plan.node_id, plan.victims + extras, room_in) if extras is not None else None
        if plan is not None and plan.victims:
            plans.append(plan)
    return best_plan(plans, list(state.budgets.values()))


def _kept_search(
    state: CoreState, context: SearchContext, app: Application, ask: Ask, leaving: queues.Held, now: float
) -> NodePlan | None:
    """`_search` for an ask that only lacks room on a node and has no rules between pods:
    every node's plan is its own, so the plans the context kept for the ask's shape are read
    again only on the nodes that changed (or, for a plan that read a guarantee, whose queues'
    usage did) since the last search (`kept_search.py`)."""
    plans = context.shape(ask.resource, ask.constraints, list(state.budgets.values()))
    usage = (state.version, state.partition.usage_changes, state.leaving_changes)
    plans.sync(state, context, ask, leaving, usage, now)
    return plans.best(state, context, ask, leaving, app.app_id, usage)


def _rules_check(
    state: CoreState, ask: Ask, node_id: str, rules: list[tuple[str, Mask]], candidates: Sequence[Candidate]
) -> Callable[[Sequence[Candidate]], bool] | Literal[False] | None:
    """How a plan on this node must weigh the ask's rules between pods: False when they refuse
    the node and no candidate's going could change that; None when no candidate's going
    changes them (they allow the node); else the check to run with the chosen victims gone."""
    topology = state.partition.topology
    pos = state.partition.node_index.position(node_id)
    allowed = pos is not None and all(mask[pos] for _, mask in rules)
    related = topology.may_break if allowed else topology.may_lift
    if not any(related(ask.pod, c.allocation.key) for c in candidates):
        return None if allowed else False

    def rules_ok(victims: Sequence[Candidate]) -> bool:
        return rules_refusal(state, ask, node_id, (v.allocation.key for v in victims)) is None

    return rules_ok


def _start(state: CoreState, leaf: Queue, ask: Ask, plan: NodePlan, now: float) -> int:
    victims = frozenset(v.allocation.key for v in plan.victims)
    hold = Hold(plan.node_id, victims, ask.resource, leaf.path)
    hold_room(state, ask, hold, now)
    waiting = waiting_for_victims(state, hold) or ""
    explain_wait(state, ask, waiting, now)
    names = ", ".join(sorted(v.allocation.display_name for v in plan.victims))
    state.emit(
        SchedulingEvent(
            now, REQUEST, ask.key, "Preempting", f"{waiting}: {names}", ask.application_id, ask.display_name
        )
    )
    for victim in plan.victims:
        alloc = victim.allocation
        rule = "asked not to be preempted, no other pod would do" if victim.opted_out else "over its guarantee"
        where = f"on node {plan.node_id}"
        if plan.room_in:
            where = f"for room under queue {plan.room_in}'s max, to run on node {plan.node_id}"
        reason = (
            f"preempted by {ask.display_name} (priority {ask.priority}) of queue {leaf.path}, under its"
            f" guarantee, {where}; queue {alloc.queue_path} {rule}"
        )
        request_eviction(state, alloc, reason, PREEMPTED, now)
        state.metrics.preempted(alloc.queue_path, "guarantee")
    return len(plan.victims)
