"""What preemption searches keep from one search to the next: each node's room and victim
candidates as a preemptor sees them, and the plan each node offers a request.

A search reads every node: its room once the pods already leaving are gone, the pods on it
that may be victims (in victim order), and the fewest of them that make the request fit. Between
two searches only the nodes something happened to have changed (a pod placed or gone, room
kept or let go, a pod asked to leave), so a search keeps what it read, per *context* (the
preemptor's leaf queue, the queue its victims must come from and its priority: together they
decide which pods are candidates and how they rank) and per node, and the next search in that
context reads again only the nodes that changed: the partition's node journal
(core/objects/node_journal.py) names them, so a node that stood still is not even looked at,
and the plans are kept in rank order (a heap), so the best is at hand. Searches for the members
of one gang share their context and their request, and so every node's plan; so do gangs of one
queue and shape.

A node's candidates cost nothing to skip when its room with every candidate gone still cannot
hold the request: no plan is built there.

What holds how long:
- a node's entry, while `Node.changes` stands still (it moves whenever a pod on the node comes,
  goes, is asked to leave or stays after a refused eviction, room is kept or let go there, or the
  node's info changes); when a pod was passed over for a refused eviction, only at the same
  moment (the refusal cools down);
- a node's plan, while the node's entry does, and, when a guarantee on a victim's path was read
  to make it (`Surplus.reads`), while each queue usage it read, less what is leaving the queue,
  stays within the bounds that give every answer it got (a plan whose victims' queues
  guarantee nothing reads none);
- everything, until a queue comes or goes, a guarantee or any queue's properties change
  (`Queue.structure_generation`, `Queue.properties_generation`), or the budgets do (ranks).

A plan for a preemptor whose own application has candidates on the node (an application a
configuration change moved between queues) is made for it alone and not kept.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.objects import queue_priority
from core.objects.ask import Ask
from core.objects.constraints import NodeConstraints
from core.objects.disruption_budget import DisruptionBudget
from core.objects.node import Node
from core.objects.node_index import static_mismatch
from core.objects.node_journal import NodeJournal
from core.objects.queue import Queue
from core.preemption import queues
from core.preemption.queues import Held
from core.preemption.victims import Candidate, NodePlan, plan_node, victim_order
from core.resources import Resource

if TYPE_CHECKING:
    from core.state import CoreState

CONTEXTS = 256  # contexts kept before all are dropped (a cluster of many preemptor kinds)
SHAPES = 64  # request shapes kept per context before its plans are dropped

PlanRank = tuple[int, tuple[int, int, int, int, float], str]
UsageStamp = tuple[int, int, int]


@dataclass(slots=True)
class NodeVictims:
    """One node as a context's searches see it."""

    changes: int  # `Node.changes` when read
    at: float | None  # holds at this moment only (a pod passed over for a refused eviction)
    free: Resource  # the room once the pods leaving it are gone (reservations yield)
    candidates: tuple[Candidate, ...]  # in victim order
    room: Resource  # `free` with every candidate gone: the most preemption can make here
    apps: frozenset[str]  # the candidates' applications


@dataclass(slots=True)
class KeptPlan:
    victims: NodeVictims  # what it was made from
    plan: NodePlan | None  # None: nothing to preempt here, or nothing that would do
    rank: PlanRank | None
    # the guaranteed queues' usage its victims' law read, as (queue, resource, usage less what
    # was leaving), and the usage stamp it was last known to hold at
    reads: tuple[tuple[Queue, str, float, float], ...]
    usage: UsageStamp
    seq: int = 0  # which plan of its node's this is (`ShapePlans.ranked` names it by this)

    def holds(self, usage: UsageStamp, leaving: Held) -> bool:
        """Whether every queue usage the plan read is unchanged (with the pods leaving now
        counted out)."""
        if not self.reads or self.usage == usage:
            return True
        for queue, key, low, high in self.reads:
            if not low <= queue.allocated.get(key, 0) - leaving.get(queue.path, _NONE).get(key, 0) < high:
                return False
        self.usage = usage
        return True


_NONE: dict[str, int] = {}
_SEQ = itertools.count(1)


def plan_on(
    context: SearchContext,
    node: Node,
    victims: NodeVictims,
    ask: Ask,
    leaving: Held,
    budgets: Sequence[DisruptionBudget],
    usage: UsageStamp,
    app_id: str = "",
) -> KeptPlan:
    """The plan the node offers the ask, its application's own pods (`app_id`) not among the
    victims (None when it fits already, when its room cannot hold the ask even with every
    candidate gone, or when no set of victims would do)."""
    request = ask.resource
    plan = None
    reads: tuple[tuple[Queue, str, float, float], ...] = ()
    if (
        node.usable
        and not request.fits_in(victims.free)
        and request.fits_in(victims.room)
        and static_mismatch(node, ask.constraints) is None
    ):
        candidates = not_of(victims, app_id)
        if candidates:
            surplus = queues.Surplus(context.leaf, leaving, context.paths)
            plan = plan_node(node.node_id, victims.free, request, candidates, surplus)
            reads = tuple((queue, key, low, high) for (_, key), (queue, low, high) in surplus.reads.items())
    rank = plan.rank(budgets) if plan is not None else None
    return KeptPlan(victims, plan, rank, reads, usage, next(_SEQ))


def not_of(victims: NodeVictims, app_id: str) -> Sequence[Candidate]:
    """The node's candidates that are not the preemptor's own application's pods."""
    if app_id not in victims.apps:
        return victims.candidates
    return [c for c in victims.candidates if c.allocation.application_id != app_id]


class ShapePlans:
    """The plans every node offers one request shape in a context, kept in rank order; the
    partition's node journal says which nodes to read again before each search."""

    __slots__ = ("apps", "budgets", "by_node", "journal", "moments", "place", "ranked", "readers", "usage")

    def __init__(self, budgets: tuple[DisruptionBudget, ...]) -> None:
        self.budgets = budgets
        self.by_node: dict[str, KeptPlan] = {}  # every node's plan, every candidate a victim
        self.ranked: list[tuple[PlanRank, int]] = []  # (rank, seq) of plans, a heap; stale ones skipped
        self.apps: dict[str, set[str]] = {}  # application -> the nodes where it has candidates
        # per queue and resource a plan read, the bounds its usage (less what is leaving) must
        # keep to for each plan's answers to stand, and the nodes whose plans need them: once the
        # usage leaves a pair of bounds, only those nodes are read again
        self.readers: dict[tuple[str, str], tuple[Queue, dict[tuple[float, float], set[str]]]] = {}
        self.moments: set[str] = set()  # nodes whose entry holds at one moment only
        self.journal: NodeJournal | None = None
        self.place = 0  # how far into the journal the plans have read
        self.usage: UsageStamp | None = None

    def sync(
        self, state: CoreState, context: SearchContext, ask: Ask, leaving: Held, usage: UsageStamp, now: float
    ) -> None:
        """Read again the nodes that changed since the last search (every node, the first time)."""
        nodes = state.partition.nodes
        journal = state.partition.node_journal
        changed = journal.since(self.place) if self.journal is journal else None
        if changed is None:
            self.by_node.clear()
            self.ranked.clear()
            self.apps.clear()
            self.readers.clear()
            self.moments.clear()
            changed = set(nodes)
        else:
            changed.update(self.moments)  # the entry tells when it no longer holds
            if usage != self.usage:
                for (path, key), (queue, by_bounds) in self.readers.items():
                    left = queue.allocated.get(key, 0) - leaving.get(path, _NONE).get(key, 0)
                    for (low, high), node_ids in by_bounds.items():
                        if not low <= left < high:
                            changed.update(node_ids)
        self.journal, self.place, self.usage = journal, journal.end, usage
        for node_id in changed:
            node = nodes.get(node_id)
            if node is None:
                self._drop(node_id)
                continue
            victims = context.victims_on(state, node, now)
            kept = self.by_node.get(node_id)
            if kept is not None and kept.victims is victims and kept.holds(usage, leaving):
                continue
            self._drop(node_id)
            kept = plan_on(context, node, victims, ask, leaving, self.budgets, usage)
            self.by_node[node_id] = kept
            for app_id in victims.apps:
                self.apps.setdefault(app_id, set()).add(node_id)
            for queue, key, low, high in kept.reads:
                by_bounds = self.readers.setdefault((queue.path, key), (queue, {}))[1]
                by_bounds.setdefault((low, high), set()).add(node_id)
            if victims.at is not None:
                self.moments.add(node_id)
            if kept.rank is not None:
                heapq.heappush(self.ranked, (kept.rank, kept.seq))
        if len(self.ranked) > 2 * len(self.by_node) + 64:
            self.ranked = [(k.rank, k.seq) for k in self.by_node.values() if k.rank is not None]
            heapq.heapify(self.ranked)

    def _drop(self, node_id: str) -> None:
        kept = self.by_node.pop(node_id, None)
        if kept is None:
            return
        for app_id in kept.victims.apps:
            on = self.apps.get(app_id)
            if on is not None:
                on.discard(node_id)
                if not on:
                    del self.apps[app_id]
        for queue, key, low, high in kept.reads:
            found = self.readers.get((queue.path, key))
            if found is not None and (node_ids := found[1].get((low, high))) is not None:
                node_ids.discard(node_id)
                if not node_ids:
                    del found[1][(low, high)]
        self.moments.discard(node_id)

    def best(
        self, state: CoreState, context: SearchContext, ask: Ask, leaving: Held, app_id: str, usage: UsageStamp
    ) -> NodePlan | None:
        """The best plan for the preemptor's application (`sync` first): the best kept plan of
        a node where the application has no candidates, or one made for it alone where it has."""
        own = self.apps.get(app_id, ())
        ranked, by_node = self.ranked, self.by_node
        passed = []
        best: NodePlan | None = None
        best_rank: PlanRank | None = None
        while ranked:
            rank, seq = ranked[0]
            node_id = rank[2]
            kept = by_node.get(node_id)
            if kept is None or kept.seq != seq:
                heapq.heappop(ranked)  # replaced since
                continue
            if node_id in own:
                passed.append(heapq.heappop(ranked))
                continue
            best, best_rank = kept.plan, rank
            break
        for entry in passed:
            heapq.heappush(ranked, entry)
        nodes = state.partition.nodes
        budgets = self.budgets
        for node_id in own:
            kept = by_node[node_id]
            mine = plan_on(context, nodes[node_id], kept.victims, ask, leaving, budgets, usage, app_id)
            if mine.rank is not None and (best_rank is None or mine.rank < best_rank):
                best, best_rank = mine.plan, mine.rank
        return best


class SearchContext:
    """Candidates and plans for the preemptors of one leaf, searching below one queue, at one
    priority."""

    def __init__(self, leaf: Queue, top: Queue, priority: int) -> None:
        self.leaf = leaf
        self.top = top
        self.priority = priority
        # victim leaf path -> (its queue, the queue it shares with the preemptor, the
        # preemptor's priority as that queue sees it), None when its pods may not be victims
        self._leaves: dict[str, tuple[Queue, Queue, int] | None] = {}
        self._seen: dict[tuple[str, int], int] = {}  # (victim leaf, pod priority) -> as compared
        self.paths: dict[int, list[Queue]] = {}  # `queues.Surplus`'s paths for this preemptor leaf
        self.nodes: dict[str, NodeVictims] = {}
        self.shapes: dict[tuple[Resource, NodeConstraints], ShapePlans] = {}

    def victim_queue(self, state: CoreState, path: str) -> tuple[Queue, Queue, int] | None:
        """The victim's leaf, the queue it shares with the preemptor and the preemptor's
        priority as that queue sees it; None when the leaf's pods may not be victims."""
        if path not in self._leaves:
            queue = state.partition.find_queue(path)
            leaf, top = self.leaf, self.top
            if (
                queue is None
                or queue is leaf
                or not queues.may_lose_pods(queue)
                or (top.parent is not None and not queues.within(queue, top))
            ):
                self._leaves[path] = None
            else:
                shared = queues.shared_queue(queue, leaf)
                self._leaves[path] = (queue, shared, queue_priority.seen_from(self.priority, leaf, shared))
        return self._leaves[path]

    def victims_on(self, state: CoreState, node: Node, now: float) -> NodeVictims:
        """The node's room once the pods already leaving it are gone, and the pods on it that may
        be victims for this context's preemptors (their own application's included)."""
        kept = self.nodes.get(node.node_id)
        if kept is not None and kept.changes == node.changes and (kept.at is None or kept.at == now):
            return kept
        candidates = []
        apps = set()
        at = None
        free = node.available() + state.reservations.reserved_on(node.node_id)  # reservations yield to preemption
        room = free
        evicting = state.evicting
        for alloc in node.allocations.values():
            if alloc.key in evicting:
                free = free + alloc.resource  # on its way out: its room is as good as free
                room = room + alloc.resource
                continue
            if state.quotas.recently_refused(alloc.key, now):
                at = now
                continue
            found = self.victim_queue(state, alloc.queue_path)
            if found is None:
                continue
            queue, shared, preemptor_priority = found
            seen_key = (alloc.queue_path, alloc.priority)
            priority = self._seen.get(seen_key)
            if priority is None:
                priority = self._seen[seen_key] = queue_priority.seen_from(alloc.priority, queue, shared)
            if priority <= preemptor_priority:
                candidates.append(Candidate(alloc, queue, priority))
                apps.add(alloc.application_id)
                room = room + alloc.resource
        candidates.sort(key=victim_order)
        kept = NodeVictims(node.changes, at, free, tuple(candidates), room, frozenset(apps))
        self.nodes[node.node_id] = kept
        return kept

    def shape(self, request: Resource, constraints: NodeConstraints, budgets: Sequence[DisruptionBudget]) -> ShapePlans:
        """The kept plans for one request shape (dropped when the budgets that rank them changed)."""
        key = (request, constraints)
        plans = self.shapes.get(key)
        listed = tuple(budgets)
        if plans is None or not _same(plans.budgets, listed):
            if plans is None and len(self.shapes) >= SHAPES:
                self.shapes.clear()
            plans = self.shapes[key] = ShapePlans(listed)
        return plans


def _same(a: tuple[DisruptionBudget, ...], b: tuple[DisruptionBudget, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


class KeptSearches:
    """Every context's kept reading, dropped whole when the queue tree, a guarantee or a queue's
    properties change."""

    __slots__ = ("_contexts", "_generation")

    def __init__(self) -> None:
        self._contexts: dict[tuple[int, int, int], SearchContext] = {}
        self._generation: tuple[int, int, int] = (-1, -1, -1)

    def context(self, state: CoreState, leaf: Queue, top: Queue, priority: int) -> SearchContext:
        generation = (id(state.partition.root), Queue.structure_generation, Queue.properties_generation)
        if generation != self._generation:
            self._generation = generation
            self._contexts.clear()
        key = (id(leaf), id(top), priority)
        context = self._contexts.get(key)
        if context is None or context.leaf is not leaf or context.top is not top:
            if len(self._contexts) >= CONTEXTS:
                self._contexts.clear()
            context = self._contexts[key] = SearchContext(leaf, top, priority)
        return context

    def clear(self) -> None:
        self._contexts.clear()
